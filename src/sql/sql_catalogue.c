/*
 * sql_catalogue.c — the relations a query sees (sql.h, docs/sql.md), as views over
 * the profiles' Parquet files.
 *
 *   - A profile directory (or one profile of a data path, picked by name): each
 *     catalogue table the directory holds (profile/profile_table.h finds it as one file
 *     or as its split series) is a view "<Table>" over read_parquet([its files]).
 *   - A data path (a folder holding profiles/global): each profile is a schema named
 *     after its display name, holding its tables as above; each table name is also an
 *     unqualified view, the UNION ALL BY NAME of that table over every profile that
 *     has it, each row with the column profile_name (first) saying whose it is (a
 *     table with a profile_name column of its own, Metadata, has it replaced). A
 *     profile named like one of the engine's own schemas (main, temp,
 *     information_schema, pg_catalog) has no schema of its own and is left out of the
 *     unions (they read the schemas' views): it is reached by --profile.
 * Paths are the directories' real paths, so the engine's allowed_directories (the
 * lock-down, sql_guard.c) match what the views read.
 */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/profile_layout.h"
#include "profile/profile_table.h"
#include "schema/schema.h"
#include "sql/sql_internal.h"

/* One profile of the catalogue: its name ("" for a lone profile directory) and real path. */
typedef struct sql_profile {
    char *name;
    char *dir;
} sql_profile;

static void put_ident(nx_strbuf *b, const char *s)
{
    nx_strbuf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            nx_strbuf_putc(b, '"');
        nx_strbuf_putc(b, *s);
    }
    nx_strbuf_putc(b, '"');
}

static void put_literal(nx_strbuf *b, const char *s)
{
    nx_strbuf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            nx_strbuf_putc(b, '\'');
        nx_strbuf_putc(b, *s);
    }
    nx_strbuf_putc(b, '\'');
}

static bool engine_schema(const char *name)
{
    static const char *const own[] = {"main", "temp", "information_schema", "pg_catalog"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(name, own[i]) == 0)
            return true;
    return false;
}

/* The profile has the table (TABLE_HAS), and it has its own profile_name column
 * (Metadata's), which the union replaces with the display name. */
enum { TABLE_ABSENT = 0, TABLE_HAS = 1, TABLE_HAS_PROFILE_NAME = 2 };

/* `CREATE VIEW [schema.]"T" AS SELECT * FROM read_parquet([...]);` for table t of
 * p, when p has it: TABLE_HAS or TABLE_HAS_PROFILE_NAME when written, TABLE_ABSENT
 * when p has no such table, -1 with err. */
static int table_view(nx_strbuf *ddl, const sql_profile *p, const char *schema, const char *table, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(p->dir, table, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return TABLE_ABSENT;
    if (rc != 0)
        return -1;
    nx_strbuf_puts(ddl, "CREATE VIEW ");
    if (schema) {
        put_ident(ddl, schema);
        nx_strbuf_putc(ddl, '.');
    }
    put_ident(ddl, table);
    nx_strbuf_puts(ddl, " AS SELECT * FROM read_parquet([");
    for (size_t i = 0; i < nx_profile_table_file_count(t); i++) {
        if (i)
            nx_strbuf_putc(ddl, ',');
        put_literal(ddl, nx_profile_table_file_path(t, i));
    }
    nx_strbuf_puts(ddl, "]);\n");
    rc = nx_profile_table_find_column(t, "profile_name") >= 0 ? TABLE_HAS_PROFILE_NAME : TABLE_HAS;
    nx_profile_table_close(t);
    return rc;
}

/* The views of every catalogue table of p (in schema `schema`, NULL for the default);
 * has[i] is table_view's answer for catalogue table i (has may be NULL). 0 or -1. */
static int profile_views(nx_strbuf *ddl, const sql_profile *p, const char *schema, unsigned char *has,
                         nx_error *err)
{
    for (size_t i = 0; i < nx_schema_table_count(); i++) {
        const nx_schema_table *st = nx_schema_table_at(i);
        if (st->transient)
            continue;
        int rc = table_view(ddl, p, schema, st->name, err);
        if (rc < 0)
            return -1;
        if (has)
            has[i] = (unsigned char)rc;
    }
    return 0;
}

/* The unqualified union views of a data path's profiles (a table's rows of every
 * profile that has it, with profile_name). */
static void union_views(nx_strbuf *ddl, const sql_profile *ps, size_t n, const unsigned char *has)
{
    size_t nt = nx_schema_table_count();
    for (size_t i = 0; i < nt; i++) {
        const char *table = nx_schema_table_at(i)->name;
        bool first = true;
        for (size_t k = 0; k < n; k++) {
            if (!has[k * nt + i] || engine_schema(ps[k].name))
                continue;
            if (first) {
                nx_strbuf_puts(ddl, "CREATE VIEW main.");
                put_ident(ddl, table);
                nx_strbuf_puts(ddl, " AS ");
            } else {
                nx_strbuf_puts(ddl, " UNION ALL BY NAME ");
            }
            first = false;
            nx_strbuf_puts(ddl, "SELECT ");
            put_literal(ddl, ps[k].name);
            nx_strbuf_puts(ddl, has[k * nt + i] == TABLE_HAS_PROFILE_NAME ? " AS profile_name, * EXCLUDE (profile_name) FROM "
                                                                           : " AS profile_name, * FROM ");
            put_ident(ddl, ps[k].name);
            nx_strbuf_putc(ddl, '.');
            put_ident(ddl, table);
        }
        if (!first)
            nx_strbuf_puts(ddl, ";\n");
    }
}

static void profiles_free(sql_profile *ps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ps[i].name);
        free(ps[i].dir);
    }
    free(ps);
}

/* Every profile of the data path's root (profile/profile_layout.h nx_layout_list),
 * sorted by name, each at its real path: the session reads one generation of each
 * profile even when a run publishes a new one behind its name meanwhile. A profile
 * that vanishes between the listing and its real path is left out. 0, or -1 when out
 * of memory. */
static int list_profiles(const char *root, sql_profile **out, size_t *count)
{
    nx_layout_profile *lp;
    size_t n;
    *out = NULL;
    *count = 0;
    if (nx_layout_list(root, &lp, &n) != 0)
        return -1;
    sql_profile *ps = calloc(n ? n : 1, sizeof *ps);
    size_t k = 0;
    int rc = ps ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *real = realpath(lp[i].dir, NULL);
        if (!real && errno == ENOMEM)
            rc = -1;
        else if (real)
            ps[k++] = (sql_profile){.name = lp[i].name, .dir = real};
        if (real)
            lp[i].name = NULL; /* moved into ps */
    }
    nx_layout_list_free(lp, n);
    if (rc != 0) {
        profiles_free(ps, k);
        return -1;
    }
    *out = ps;
    *count = k;
    return 0;
}

static int add_dir(nx_sql_catalogue *c, const char *dir)
{
    char **g = realloc(c->dirs, (c->n_dirs + 1) * sizeof *g);
    if (!g)
        return -1;
    c->dirs = g;
    if (!(c->dirs[c->n_dirs] = strdup(dir)))
        return -1;
    c->n_dirs++;
    return 0;
}

/* A lone profile: its tables under their own names. */
static int single_profile(nx_sql_catalogue *c, const sql_profile *p, const char *path, nx_error *err)
{
    if (profile_views(&c->ddl, p, NULL, NULL, err) != 0)
        return -1;
    if (c->ddl.len == 0)
        return nx_error_set(err, "%s: not a profile (no table of the schema catalogue there) nor a data path "
                              "(no profiles/global)", path);
    return add_dir(c, p->dir) == 0 ? 0 : nx_error_set(err, "SQL catalogue: out of memory");
}

static int data_path(nx_sql_catalogue *c, const char *root, const char *profile, const char *path, nx_error *err)
{
    sql_profile *ps;
    size_t n;
    if (list_profiles(root, &ps, &n) != 0)
        return nx_error_set(err, "SQL catalogue: out of memory listing %s", root);
    int rc = 0;
    if (profile) {
        size_t k = 0;
        while (k < n && strcmp(ps[k].name, profile) != 0)
            k++;
        rc = k < n ? single_profile(c, &ps[k], path, err)
                   : nx_error_set(err, "%s: the data path has no profile named '%s' (%zu profiles there)", path,
                                    profile, n);
        profiles_free(ps, n);
        return rc;
    }
    if (n == 0) {
        profiles_free(ps, n);
        return nx_error_set(err, "%s: the data path holds no profile yet (%s is empty)", path, root);
    }
    size_t nt = nx_schema_table_count();
    unsigned char *has = calloc(n * nt, sizeof *has);
    if (!has)
        rc = nx_error_set(err, "SQL catalogue: out of memory");
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (engine_schema(ps[k].name))
            continue;
        nx_strbuf_puts(&c->ddl, "CREATE SCHEMA ");
        put_ident(&c->ddl, ps[k].name);
        nx_strbuf_puts(&c->ddl, ";\n");
        if (profile_views(&c->ddl, &ps[k], ps[k].name, has + k * nt, err) != 0 || add_dir(c, ps[k].dir) != 0)
            rc = -1;
    }
    if (rc == 0)
        union_views(&c->ddl, ps, n, has);
    free(has);
    profiles_free(ps, n);
    return rc;
}

int nx_sql_catalogue_build(const char *path, const char *profile, nx_sql_catalogue *c, nx_error *err)
{
    memset(c, 0, sizeof *c);
    char *root = NULL;
    struct stat st;
    int rc;
    if (nx_data_path_root(path, &root, err) != 0) {
        rc = -1;
    } else if (stat(root, &st) == 0 && S_ISDIR(st.st_mode)) {
        char *real_root = realpath(root, NULL);
        rc = real_root ? data_path(c, real_root, profile, path, err)
                       : nx_error_set(err, "%s: %s", root, strerror(errno));
        free(real_root);
    } else if (profile) {
        rc = nx_error_set(err, "%s: --profile picks a profile of a data path, and this is no data path "
                            "(no profiles/global)", path);
    } else {
        sql_profile p = {.name = NULL, .dir = realpath(path, NULL)};
        if (!p.dir)
            rc = nx_error_set(err, "%s: %s", path, strerror(errno));
        else if (stat(p.dir, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = nx_error_set(err, "%s: not a directory (a profile directory or a data path)", path);
        else
            rc = single_profile(c, &p, path, err);
        free(p.dir);
    }
    free(root);
    if (rc == 0 && nx_strbuf_failed(&c->ddl))
        rc = nx_error_set(err, "SQL catalogue: out of memory");
    else if (rc == 0 && c->ddl.len == 0) /* only profiles named like the engine's schemas, and no tables */
        rc = nx_error_set(err, "%s: no table of any profile there", path);
    if (rc != 0)
        nx_sql_catalogue_free(c);
    return rc;
}

void nx_sql_catalogue_free(nx_sql_catalogue *c)
{
    nx_strbuf_free(&c->ddl);
    for (size_t i = 0; i < c->n_dirs; i++)
        free(c->dirs[i]);
    free(c->dirs);
    memset(c, 0, sizeof *c);
}
