/*
 * gen_catalogue.c — build-time generator: src/schema/catalogue.tsv -> C arrays.
 *
 * The catalogue is the single definition of the profile schema. This tool checks
 * it strictly (column counts, known types and kinds, every description present,
 * fields grouped under their table) and writes the constant tables that
 * catalogue_data.h declares. Any problem stops the build with file:line and
 * what was expected, so a bad edit never reaches the binary.
 *
 * Line forms (tab-separated; '#' starts a comment line; blank lines ignored):
 *   version  <schema version>
 *   enum     <EnumName> <value>
 *   table    <Table> <kind> <transient:yes|no> <description>
 *   field    <Table> <field> <type> <format> <unit> <required:Yes|No> <enum> <example> <description>
 * Columns 2..9 of a field line are exactly the reference TSV's columns.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 10

static const char *g_path;
static int g_line;

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: ", g_path, g_line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "gen_catalogue: out of memory\n");
        exit(1);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

typedef struct {
    char *col[MAX_COLS];  /* field line columns 1..9 */
} field_line;

typedef struct {
    char *name, *kind, *transient, *description;
    field_line *fields;
    size_t n_fields;
} table_def;

typedef struct {
    char *name;
    char **values;
    size_t n_values;
} enum_def;

static table_def *tables;
static size_t n_tables;
static enum_def *enums;
static size_t n_enums;
static char *version;

static size_t split_tabs(char *s, char **cols, size_t max)
{
    size_t n = 0;
    for (;;) {
        if (n == max)
            return max + 1;
        cols[n++] = s;
        char *tab = strchr(s, '\t');
        if (!tab)
            return n;
        *tab = '\0';
        s = tab + 1;
    }
}

static const char *const KINDS[] = {"timeline", "samples", "edges", "rollup", "summary",
                                    "lookup", "metadata", "diagnostics", "api", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static enum_def *find_enum(const char *name)
{
    for (size_t i = 0; i < n_enums; i++)
        if (strcmp(enums[i].name, name) == 0)
            return &enums[i];
    return NULL;
}

static table_def *find_table(const char *name)
{
    for (size_t i = 0; i < n_tables; i++)
        if (strcmp(tables[i].name, name) == 0)
            return &tables[i];
    return NULL;
}

/* Maps (type, format) to the nx_column_type enumerator name. */
static const char *column_type_of(const char *type, const char *format)
{
    if (strcmp(type, "integer") == 0 && strcmp(format, "int64") == 0) return "NX_COL_INT64";
    if (strcmp(type, "integer") == 0 && strcmp(format, "int32") == 0) return "NX_COL_INT32";
    if (strcmp(type, "number") == 0 && strcmp(format, "float") == 0) return "NX_COL_FLOAT";
    if (strcmp(type, "number") == 0 && strcmp(format, "double") == 0) return "NX_COL_DOUBLE";
    if (strcmp(type, "string") == 0 && format[0] == '\0') return "NX_COL_STRING";
    if (strcmp(type, "boolean") == 0 && format[0] == '\0') return "NX_COL_BOOLEAN";
    if (strcmp(type, "array of integer") == 0 && strcmp(format, "int64") == 0) return "NX_COL_LIST_INT64";
    if (strcmp(type, "array of string") == 0 && format[0] == '\0') return "NX_COL_LIST_STRING";
    if (strncmp(type, "array of ", 9) == 0 && format[0] == '\0') return "NX_COL_OBJECT_LIST";
    if (find_enum(type) && format[0] == '\0') return "NX_COL_STRING";
    return NULL;
}

static void parse_line(char *line)
{
    char *c[MAX_COLS + 1];
    size_t n = split_tabs(line, c, MAX_COLS);
    const char *what = c[0];
    if (strcmp(what, "version") == 0) {
        if (n != 2 || !c[1][0]) die("version line needs exactly one value");
        if (version) die("second version line");
        version = xstrdup(c[1]);
    } else if (strcmp(what, "enum") == 0) {
        if (n != 3 || !c[1][0] || !c[2][0]) die("enum line needs: enum <Name> <value>");
        enum_def *e = find_enum(c[1]);
        if (!e) {
            enums = xrealloc(enums, (n_enums + 1) * sizeof *enums);
            e = &enums[n_enums++];
            e->name = xstrdup(c[1]);
            e->values = NULL;
            e->n_values = 0;
        }
        e->values = xrealloc(e->values, (e->n_values + 1) * sizeof *e->values);
        e->values[e->n_values++] = xstrdup(c[2]);
    } else if (strcmp(what, "table") == 0) {
        if (n != 5) die("table line needs 5 tab-separated columns, found %zu", n);
        if (find_table(c[1])) die("table %s defined twice", c[1]);
        if (!in_list(c[2], KINDS)) die("table %s: unknown kind '%s'", c[1], c[2]);
        if (strcmp(c[3], "yes") != 0 && strcmp(c[3], "no") != 0)
            die("table %s: transient must be yes or no, found '%s'", c[1], c[3]);
        if (strlen(c[4]) < 12) die("table %s: description missing or too short", c[1]);
        tables = xrealloc(tables, (n_tables + 1) * sizeof *tables);
        table_def *t = &tables[n_tables++];
        t->name = xstrdup(c[1]);
        t->kind = xstrdup(c[2]);
        t->transient = xstrdup(c[3]);
        t->description = xstrdup(c[4]);
        t->fields = NULL;
        t->n_fields = 0;
    } else if (strcmp(what, "field") == 0) {
        if (n != 10) die("field line needs 10 tab-separated columns, found %zu", n);
        if (n_tables == 0 || strcmp(tables[n_tables - 1].name, c[1]) != 0)
            die("field %s.%s does not follow its table line", c[1], c[2]);
        table_def *t = &tables[n_tables - 1];
        for (size_t i = 0; i < t->n_fields; i++)
            if (strcmp(t->fields[i].col[2], c[2]) == 0) die("field %s.%s defined twice", c[1], c[2]);
        if (!column_type_of(c[3], c[4]))
            die("field %s.%s: unknown type/format '%s'/'%s'", c[1], c[2], c[3], c[4]);
        if (strcmp(c[6], "Yes") != 0 && strcmp(c[6], "No") != 0)
            die("field %s.%s: required must be Yes or No, found '%s'", c[1], c[2], c[6]);
        if (strlen(c[9]) < 12) die("field %s.%s: description missing or too short", c[1], c[2]);
        t->fields = xrealloc(t->fields, (t->n_fields + 1) * sizeof *t->fields);
        field_line *f = &t->fields[t->n_fields++];
        for (size_t i = 0; i < 10; i++)
            f->col[i] = xstrdup(c[i]);
    } else {
        die("unknown line kind '%s' (expected version, enum, table or field)", what);
    }
}

static void emit_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\%03o", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void emit(FILE *out)
{
    fprintf(out, "/* Generated by gen_catalogue from src/schema/catalogue.tsv. Do not edit. */\n");
    fprintf(out, "#include \"schema/catalogue_data.h\"\n");
    fprintf(out, "#include \"schema/schema.h\"   /* NX_SCHEMA_VERSION */\n\n");
    fprintf(out, "const char NX_SCHEMA_VERSION[] = ");
    emit_string(out, version);
    fprintf(out, ";\n\n");
    for (size_t i = 0; i < n_enums; i++) {
        fprintf(out, "static const char *const enum_%zu[] = {", i);
        for (size_t j = 0; j < enums[i].n_values; j++) {
            emit_string(out, enums[i].values[j]);
            fputs(j + 1 < enums[i].n_values ? ", " : "", out);
        }
        fprintf(out, "};\n");
    }
    fprintf(out, "\nconst nx_schema_enum nx_catalogue_enums[] = {\n");
    for (size_t i = 0; i < n_enums; i++) {
        fprintf(out, "    {");
        emit_string(out, enums[i].name);
        fprintf(out, ", enum_%zu, %zu},\n", i, enums[i].n_values);
    }
    fprintf(out, "};\nconst size_t nx_catalogue_n_enums = %zu;\n\n", n_enums);
    for (size_t i = 0; i < n_tables; i++) {
        fprintf(out, "static const nx_schema_field fields_%zu[] = {\n", i);
        for (size_t j = 0; j < tables[i].n_fields; j++) {
            char **c = tables[i].fields[j].col;
            fprintf(out, "    {");
            emit_string(out, c[2]); fputs(", ", out);
            emit_string(out, c[3]); fputs(", ", out);
            emit_string(out, c[4]); fputs(", ", out);
            emit_string(out, c[5]); fputs(", ", out);
            fputs(strcmp(c[6], "Yes") == 0 ? "true, " : "false, ", out);
            emit_string(out, c[7]); fputs(", ", out);
            emit_string(out, c[8]); fputs(", ", out);
            emit_string(out, c[9]);
            fprintf(out, ", %s},\n", column_type_of(c[3], c[4]));
        }
        fprintf(out, "};\n");
    }
    fprintf(out, "\nconst nx_schema_table nx_catalogue_tables[] = {\n");
    for (size_t i = 0; i < n_tables; i++) {
        fprintf(out, "    {");
        emit_string(out, tables[i].name); fputs(", ", out);
        emit_string(out, tables[i].kind); fputs(", ", out);
        fputs(strcmp(tables[i].transient, "yes") == 0 ? "true, " : "false, ", out);
        emit_string(out, tables[i].description);
        fprintf(out, ", fields_%zu, %zu},\n", i, tables[i].n_fields);
    }
    fprintf(out, "};\nconst size_t nx_catalogue_n_tables = %zu;\n", n_tables);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_catalogue CATALOGUE.tsv OUTPUT.c\n");
        return 2;
    }
    g_path = argv[1];
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        fprintf(stderr, "gen_catalogue: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    char buf[8192];
    while (fgets(buf, sizeof buf, in)) {
        g_line++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') die("line longer than %zu bytes", sizeof buf - 2);
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            buf[--len] = '\0';
        if (len == 0 || buf[0] == '#')
            continue;
        parse_line(buf);
    }
    fclose(in);
    g_line = 0;
    if (!version) die("no version line");
    if (n_tables == 0) die("no tables");
    for (size_t i = 0; i < n_tables; i++)
        if (tables[i].n_fields == 0) die("table %s has no fields", tables[i].name);
    for (size_t i = 0; i < n_tables; i++)
        for (size_t j = 0; j < tables[i].n_fields; j++) {
            const char *e = tables[i].fields[j].col[7];
            if (e[0] && !find_enum(e) && !find_table(e))
                die("field %s.%s names enum '%s', which is neither an enum nor a table",
                    tables[i].name, tables[i].fields[j].col[2], e);
        }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fprintf(stderr, "gen_catalogue: cannot write %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    emit(out);
    if (fclose(out) != 0 || rename(tmp, argv[2]) != 0) {
        fprintf(stderr, "gen_catalogue: cannot write %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    return 0;
}
