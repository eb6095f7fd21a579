/*
 * reader.c — opening a Parquet file for reading: the footer (magic, length,
 * FileMetaData), the mapping of the schema to top-level columns, the checks
 * that tie row groups to the schema, and the reader's accessors (parquet.h).
 * Scanning is in scan.c, page decoding in chunk.c.
 *
 * Files are mmap'ed (read() when mapping is not possible); every offset taken
 * from the footer is checked against the file before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parquet/reader_internal.h"

/* ------------------------------------------------------------------ errors */

void pq_set_error(nx_error *err, const nxpq_reader *r, const pq_column *col, int64_t rg, int64_t page,
                  const char *fmt, ...)
{
    if (!err)
        return;
    char ctx[200] = "";
    size_t n = 0;
    if (col)
        n += (size_t)snprintf(ctx + n, sizeof ctx - n, "column '%s'", col->info.name);
    if (rg >= 0 && n < sizeof ctx)
        n += (size_t)snprintf(ctx + n, sizeof ctx - n, "%srow group %lld", n ? ", " : "", (long long)rg);
    if (page >= 0 && n < sizeof ctx)
        snprintf(ctx + n, sizeof ctx - n, "%spage at offset %lld", n ? ", " : "", (long long)page);
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int n_all = snprintf(err->msg, sizeof err->msg, "%s: %s%s%s", r->name, ctx, ctx[0] ? ": " : "", msg);
    if (n_all >= (int)sizeof err->msg) /* mark the cut */
        memcpy(err->msg + sizeof err->msg - 4, "...", 4);
    snprintf(err->file, sizeof err->file, "%s", r->name);
    snprintf(err->field, sizeof err->field, "%s", col ? col->info.name : "");
    err->where = page >= 0 ? (uint64_t)page : NX_ERROR_NOWHERE;
}

/* ------------------------------------------------------------ schema mapping */

/* One past the last element of the subtree rooted at i (a valid tree). */
static uint32_t subtree_end(const pq_schema_element *s, uint32_t i)
{
    uint64_t pending = 1;
    while (pending)
        pending = pending - 1 + (uint64_t)s[i++].num_children;
    return i;
}

static const char *physical_name(int32_t t)
{
    static const char *const names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                        "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t <= PQ_FIXED_LEN_BYTE_ARRAY ? names[t] : "an unknown type";
}

static const char *list_of_name(int32_t t)
{
    static const char *const names[] = {"a list of BOOLEAN", "a list of INT32", "a list of INT64",
                                        "a list of INT96", "a list of FLOAT", "a list of DOUBLE",
                                        "a list of BYTE_ARRAY", "a list of FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t <= PQ_FIXED_LEN_BYTE_ARRAY ? names[t] : "a list of an unknown type";
}

static nxpq_type scalar_type(int32_t t)
{
    switch (t) {
    case PQ_BOOLEAN: return NXPQ_BOOLEAN;
    case PQ_INT32: return NXPQ_INT32;
    case PQ_INT64: return NXPQ_INT64;
    case PQ_FLOAT: return NXPQ_FLOAT;
    case PQ_DOUBLE: return NXPQ_DOUBLE;
    case PQ_BYTE_ARRAY: return NXPQ_STRING;
    default: return NXPQ_UNSUPPORTED;
    }
}

/* Integer min/max statistics are in signed order unless the column holds
 * unsigned integers (UINT_* converted types or INTEGER(signed=false)). */
static bool signed_int(const pq_schema_element *e)
{
    if (e->type != PQ_INT32 && e->type != PQ_INT64)
        return false;
    if (e->has_converted_type && e->converted_type >= 11 && e->converted_type <= 14)
        return false;
    return !(e->logical_type == PQ_LOGICAL_INTEGER && !e->int_signed);
}

/* Annotations that give a value another meaning than the plain number nxprof would read:
 * such a column is listed but refused, by name, rather than read wrong. TIMESTAMP in
 * nanoseconds is the profile's own time base (Unix ns), so it reads as INT64. */
static const char *refused_annotation(const pq_schema_element *x)
{
    switch (x->logical_type) {
    case PQ_LOGICAL_TIMESTAMP:
        return x->time_unit == PQ_UNIT_NANOS ? NULL
             : x->time_unit == PQ_UNIT_MICROS ? "TIMESTAMP(MICROS)" : "TIMESTAMP(MILLIS)";
    case PQ_LOGICAL_TIME: return "TIME";
    case PQ_LOGICAL_DATE: return "DATE";
    case PQ_LOGICAL_DECIMAL: return "DECIMAL";
    case PQ_LOGICAL_FLOAT16: return "FLOAT16";
    default: break;
    }
    if (!x->has_converted_type || x->logical_type != PQ_LOGICAL_NONE)
        return NULL;
    switch (x->converted_type) { /* legacy ConvertedType values */
    case 5: return "DECIMAL";
    case 6: return "DATE";
    case 7: case 8: return "TIME";
    case 9: return "TIMESTAMP_MILLIS";
    case 10: return "TIMESTAMP_MICROS";
    case 21: return "INTERVAL";
    default: return NULL;
    }
}

static void set_list(pq_column *c, const pq_schema_element *elem, uint8_t def_list, bool elem_nullable)
{
    c->leaf_type = elem->type;
    c->info.physical_type = elem->type;
    c->info.type = elem->type == PQ_INT64 ? NXPQ_LIST_INT64
                 : elem->type == PQ_BYTE_ARRAY ? NXPQ_LIST_STRING : NXPQ_UNSUPPORTED;
    c->unsupported = c->info.type == NXPQ_UNSUPPORTED ? list_of_name(elem->type) : refused_annotation(elem);
    if (c->unsupported)
        c->info.type = NXPQ_UNSUPPORTED;
    c->def_list = def_list;
    c->max_def = (uint8_t)(def_list + 1 + elem_nullable);
    c->max_rep = 1;
}

static void classify_leaf(pq_column *c, const pq_schema_element *x)
{
    c->leaf_type = x->type;
    c->info.physical_type = x->type;
    if (x->repetition == PQ_REPEATED) {
        /* A bare repeated field is a required list of required elements. */
        set_list(c, x, 0, false);
        return;
    }
    if (x->repetition != PQ_REQUIRED && x->repetition != PQ_OPTIONAL) {
        c->unsupported = "a field of unknown repetition";
        return;
    }
    c->info.type = scalar_type(x->type);
    c->unsupported = c->info.type == NXPQ_UNSUPPORTED ? physical_name(x->type) : refused_annotation(x);
    if (c->unsupported)
        c->info.type = NXPQ_UNSUPPORTED;
    c->max_def = x->repetition == PQ_OPTIONAL;
    c->stats_signed = signed_int(x);
}

/* A LIST-annotated group X with one repeated child R. Following the
 * backward-compatibility rules of LogicalTypes.md: a primitive R is the
 * element (2-level lists); a group R with one child, not named "array" or
 * "X_tuple", holds the element (the standard 3-level form, whatever the
 * names: list/element, list/item, bag/array_element); any other R is a
 * struct element, which this reader does not decode. */
static void classify_list(pq_column *c, const pq_schema_element *s, uint32_t i)
{
    const pq_schema_element *x = &s[i], *r = &s[i + 1];
    uint8_t def_list = x->repetition == PQ_OPTIONAL;
    c->unsupported = "a list of structs or of lists";
    if (x->repetition == PQ_REPEATED || x->num_children != 1 || r->repetition != PQ_REPEATED) {
        c->unsupported = "a LIST group of an unknown layout";
        return;
    }
    if (r->num_children == 0) {
        set_list(c, r, def_list, false);
        return;
    }
    size_t xl = strlen(x->name);
    bool tuple = strncmp(r->name, x->name, xl) == 0 && strcmp(r->name + xl, "_tuple") == 0;
    if (r->num_children != 1 || strcmp(r->name, "array") == 0 || tuple)
        return;
    const pq_schema_element *el = &s[i + 2];
    if (el->num_children == 0 && el->repetition != PQ_REPEATED)
        set_list(c, el, def_list, el->repetition == PQ_OPTIONAL);
}

static bool annotated(const pq_schema_element *e, int converted, int logical)
{
    return (e->has_converted_type && e->converted_type == converted) || e->logical_type == logical;
}

static void classify(pq_column *c, const pq_schema_element *s, uint32_t i)
{
    const pq_schema_element *x = &s[i];
    c->info.name = x->name;
    c->info.nullable = x->repetition == PQ_OPTIONAL;
    c->info.type = NXPQ_UNSUPPORTED;
    c->info.physical_type = -1;
    if (x->num_children == 0)
        classify_leaf(c, x);
    else if (annotated(x, PQ_CONVERTED_LIST, PQ_LOGICAL_LIST))
        classify_list(c, s, i);
    else
        c->unsupported = annotated(x, 1, 2) || annotated(x, 2, 2) ? "a map" : "a struct";
    c->info.unsupported = c->unsupported;
}

static int map_columns(nxpq_reader *r, nx_error *err)
{
    const pq_schema_element *s = r->meta.schema;
    size_t nf = (size_t)s[0].num_children;
    r->cols = nx_arena_calloc(&r->arena, nf ? nf : 1, sizeof *r->cols);
    if (!r->cols) {
        pq_set_error(err, r, NULL, -1, -1, "out of memory");
        return -1;
    }
    uint32_t i = 1, leaf = 0;
    for (size_t f = 0; f < nf; f++) {
        uint32_t end = subtree_end(s, i);
        pq_column *c = &r->cols[f];
        classify(c, s, i);
        c->leaf = leaf;
        for (uint32_t j = i; j < end; j++)
            c->n_leaves += s[j].num_children == 0;
        leaf += c->n_leaves;
        i = end;
    }
    r->n_cols = nf;
    r->n_leaves = leaf;
    return 0;
}

/* ---------------------------------------------------------- row group checks */

static bool path_matches(const pq_column_meta *m, const pq_schema_element *s, const uint32_t *stack,
                         uint32_t depth, uint32_t leaf_el)
{
    if (m->n_path != depth || m->type != s[leaf_el].type)
        return false;
    for (uint32_t k = 1; k < depth; k++)
        if (strcmp(m->path_in_schema[k - 1], s[stack[k]].name) != 0)
            return false;
    return strcmp(m->path_in_schema[depth - 1], s[leaf_el].name) == 0;
}

/* Every row group's column chunks must be the schema's leaves, in order, with
 * their physical types: later code trusts the schema for both. */
static int check_leaf_paths(nxpq_reader *r, nx_error *err)
{
    const pq_schema_element *s = r->meta.schema;
    uint32_t n = r->meta.n_schema, depth = 1, leaf = 0;
    uint32_t *stack = malloc(n * sizeof *stack);
    int64_t *left = malloc(n * sizeof *left);
    int rc = 0;
    if (!stack || !left) {
        free(stack);
        free(left);
        pq_set_error(err, r, NULL, -1, -1, "out of memory");
        return -1;
    }
    stack[0] = 0;
    left[0] = s[0].num_children;
    for (uint32_t i = 1; i < n && rc == 0; i++) {
        while (left[depth - 1] == 0)
            depth--;
        left[depth - 1]--;
        if (s[i].num_children > 0) {
            stack[depth] = i;
            left[depth++] = s[i].num_children;
            continue;
        }
        for (uint32_t g = 0; g < r->meta.n_row_groups && rc == 0; g++) {
            if (!path_matches(&r->meta.row_groups[g].columns[leaf].meta, s, stack, depth, i)) {
                pq_set_error(err, r, NULL, g, -1, "column chunk %u does not match schema field '%s'", leaf,
                             s[i].name);
                rc = -1;
            }
        }
        leaf++;
    }
    free(stack);
    free(left);
    return rc;
}

static int check_row_groups(nxpq_reader *r, nx_error *err)
{
    const pq_file_meta *m = &r->meta;
    r->rg_first_row = nx_arena_calloc(&r->arena, (size_t)m->n_row_groups + 1, sizeof *r->rg_first_row);
    if (!r->rg_first_row) {
        pq_set_error(err, r, NULL, -1, -1, "out of memory");
        return -1;
    }
    int64_t total = 0;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        if (rg->n_columns != r->n_leaves) {
            pq_set_error(err, r, NULL, g, -1, "%u column chunks, but the schema has %u leaf columns",
                         rg->n_columns, r->n_leaves);
            return -1;
        }
        if (rg->num_rows > INT64_MAX - total) {
            pq_set_error(err, r, NULL, g, -1, "row count overflows");
            return -1;
        }
        r->rg_first_row[g] = total;
        total += rg->num_rows;
    }
    if (total != m->num_rows) {
        pq_set_error(err, r, NULL, -1, -1, "row groups hold %lld rows, the footer says %lld", (long long)total,
                     (long long)m->num_rows);
        return -1;
    }
    return check_leaf_paths(r, err);
}

/* -------------------------------------------------------------------- open */

static uint32_t le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Layout: "PAR1" <column data, page index> <footer> <footer length: 4 bytes LE> "PAR1". */
static int read_footer(nxpq_reader *r, nx_error *err)
{
    const uint8_t *d = r->data;
    if (r->size < 12) {
        pq_set_error(err, r, NULL, -1, -1, "not a Parquet file (%zu bytes is too small)", r->size);
        return -1;
    }
    if (memcmp(d, "PAR1", 4) != 0) {
        pq_set_error(err, r, NULL, -1, -1, "not a Parquet file (no PAR1 magic at the start)");
        return -1;
    }
    if (memcmp(d + r->size - 4, "PAR1", 4) != 0) {
        bool enc = memcmp(d + r->size - 4, "PARE", 4) == 0;
        pq_set_error(err, r, NULL, -1, -1, "%s", enc ? "encrypted Parquet files are not supported"
                                                     : "no PAR1 magic at the end (truncated file?)");
        return -1;
    }
    uint32_t flen = le32(d + r->size - 8);
    if (flen == 0 || flen > r->size - 12) {
        pq_set_error(err, r, NULL, -1, -1, "footer length %u does not fit the file's %zu bytes", flen, r->size);
        return -1;
    }
    r->footer_start = r->size - 8 - flen;
    nxth_reader tr;
    nxth_reader_init(&tr, d + r->footer_start, flen, r->footer_start);
    pq_read_file_meta(&tr, &r->arena, &r->meta);
    if (tr.failed) {
        pq_set_error(err, r, NULL, -1, -1, "corrupt footer: %s", tr.error);
        return -1;
    }
    return 0;
}

static nxpq_reader *reader_new(const char *name, nx_error *err)
{
    nxpq_reader *r = calloc(1, sizeof *r);
    if (r)
        r->name = strdup(name ? name : "(memory)");
    if (!r || !r->name) {
        free(r);
        if (err)
            snprintf(err->msg, sizeof err->msg, "%s: out of memory", name ? name : "(memory)");
        return NULL;
    }
    return r;
}

static nxpq_reader *reader_finish(nxpq_reader *r, nx_error *err)
{
    int rc = read_footer(r, err) < 0 || map_columns(r, err) < 0 || check_row_groups(r, err) < 0 ? -1 : 0;
    if (pq_reader_changed(r)) {
        pq_set_error(err, r, NULL, -1, -1, NX_FILE_MAP_CHANGED);
        rc = -1;
    }
    if (rc < 0) {
        nxpq_reader_close(r);
        return NULL;
    }
    return r;
}

nxpq_reader *nxpq_reader_open_memory(const void *data, size_t len, const char *name, nx_error *err)
{
    nxpq_reader *r = reader_new(name, err);
    if (!r)
        return NULL;
    r->data = data;
    r->size = len;
    return reader_finish(r, err);
}

/* Whole-file read for what cannot be mapped (pipes, special files). */
static int read_all(int fd, nxpq_reader *r)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return -1;
        if (len == cap) {
            uint8_t *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            return -1;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    r->owned = buf;
    r->data = buf;
    r->size = len;
    return 0;
}

static nxpq_reader *reader_open_file(const char *path, bool regular_only, nx_error *err)
{
    nxpq_reader *r = reader_new(path, err);
    if (!r)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NOFOLLOW | O_NONBLOCK : 0));
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (regular_only && errno == ELOOP)
            pq_set_error(err, r, NULL, -1, -1, "cannot open: a symbolic link (not followed)");
        else
            pq_set_error(err, r, NULL, -1, -1, "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        nxpq_reader_close(r);
        return NULL;
    }
    if (regular_only && !S_ISREG(st.st_mode)) {
        pq_set_error(err, r, NULL, -1, -1, "cannot open: not a regular file");
        close(fd);
        nxpq_reader_close(r);
        return NULL;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        if ((r->map = nx_file_map_open(fd, (size_t)st.st_size))) {
            r->data = nx_file_map_data(r->map);
            r->size = (size_t)st.st_size;
        }
    }
    if (!r->map && read_all(fd, r) < 0) {
        pq_set_error(err, r, NULL, -1, -1, "cannot read: %s", strerror(errno));
        close(fd);
        nxpq_reader_close(r);
        return NULL;
    }
    close(fd);
    return reader_finish(r, err);
}

nxpq_reader *nxpq_reader_open(const char *path, nx_error *err) { return reader_open_file(path, false, err); }

nxpq_reader *nxpq_reader_open_regular(const char *path, nx_error *err) { return reader_open_file(path, true, err); }

void nxpq_reader_close(nxpq_reader *r)
{
    if (!r)
        return;
    nx_file_map_close(r->map);
    free(r->owned);
    nx_arena_free(&r->arena);
    free(r->name);
    free(r);
}

/* ------------------------------------------------------------- page index */

int pq_chunk_range(const nxpq_reader *r, const pq_column_chunk *cc, size_t *start, size_t *end, nx_error *msg)
{
    const pq_column_meta *m = &cc->meta;
    int64_t s = m->data_page_offset;
    /* Some writers put 0 for "no dictionary"; the dictionary precedes the data. */
    if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 && m->dictionary_page_offset < s)
        s = m->dictionary_page_offset;
    if (s < 4 || (uint64_t)s > r->footer_start || (uint64_t)m->total_compressed_size > r->footer_start - (uint64_t)s) {
        nx_error_set(msg, "column chunk at offset %lld (%lld bytes) lies outside the file's data",
                 (long long)s, (long long)m->total_compressed_size);
        return -1;
    }
    *start = (size_t)s;
    *end = (size_t)s + (size_t)m->total_compressed_size;
    return 0;
}

/* The index bytes must lie between the magic and the footer. */
static int index_reader(const nxpq_reader *r, int64_t off, int32_t len, nxth_reader *tr, const char *what,
                        nx_error *msg)
{
    if (off < 4 || (uint64_t)off > r->footer_start || (uint64_t)len > r->footer_start - (uint64_t)off) {
        nx_error_set(msg, "%s at offset %lld (%d bytes) lies outside the file's data", what, (long long)off,
                 len);
        return -1;
    }
    nxth_reader_init(tr, r->data + off, (size_t)len, (uint64_t)off);
    return 0;
}

int pq_load_offset_index(const nxpq_reader *r, uint32_t rg, const pq_column *col, nx_arena *a, pq_offset_index *oi,
                         nx_error *msg)
{
    const pq_row_group *g = &r->meta.row_groups[rg];
    const pq_column_chunk *cc = &g->columns[col->leaf];
    nxth_reader tr;
    size_t start, end;
    if (!cc->has_offset_index)
        return 0;
    if (index_reader(r, cc->offset_index_offset, cc->offset_index_length, &tr, "offset index", msg) < 0 ||
        pq_chunk_range(r, cc, &start, &end, msg) < 0)
        return -1;
    pq_read_offset_index(&tr, a, oi);
    if (tr.failed) {
        nx_error_set(msg, "offset index: %s", tr.error);
        return -1;
    }
    if (oi->n_pages == 0 && g->num_rows > 0) {
        nx_error_set(msg, "offset index lists no pages");
        return -1;
    }
    for (uint32_t i = 0; i < oi->n_pages; i++) {
        const pq_page_location *p = &oi->pages[i];
        if ((uint64_t)p->offset < start || (uint64_t)p->offset > end ||
            (uint64_t)p->compressed_page_size > end - (uint64_t)p->offset || p->first_row_index >= g->num_rows) {
            nx_error_set(msg, "offset index page %u (offset %lld, row %lld) lies outside the column chunk", i,
                     (long long)p->offset, (long long)p->first_row_index);
            return -1;
        }
    }
    return 1;
}

int pq_load_column_index(const nxpq_reader *r, uint32_t rg, const pq_column *col, nx_arena *a, pq_column_index *ci,
                         nx_error *msg)
{
    const pq_column_chunk *cc = &r->meta.row_groups[rg].columns[col->leaf];
    nxth_reader tr;
    if (!cc->has_column_index)
        return 0;
    if (index_reader(r, cc->column_index_offset, cc->column_index_length, &tr, "column index", msg) < 0)
        return -1;
    pq_read_column_index(&tr, a, ci);
    if (tr.failed) {
        nx_error_set(msg, "column index: %s", tr.error);
        return -1;
    }
    return 1;
}

/* ---------------------------------------------------------------- accessors */

int64_t nxpq_reader_num_rows(const nxpq_reader *r)
{
    return r->meta.num_rows;
}

size_t nxpq_reader_num_row_groups(const nxpq_reader *r)
{
    return r->meta.n_row_groups;
}

size_t nxpq_reader_num_columns(const nxpq_reader *r)
{
    return r->n_cols;
}

const nxpq_column_info *nxpq_reader_column(const nxpq_reader *r, size_t i)
{
    return i < r->n_cols ? &r->cols[i].info : NULL;
}

int nxpq_reader_find_column(const nxpq_reader *r, const char *name)
{
    for (size_t i = 0; i < r->n_cols; i++)
        if (strcmp(r->cols[i].info.name, name) == 0)
            return (int)i;
    return -1;
}

const char *nxpq_reader_metadata(const nxpq_reader *r, const char *key)
{
    for (uint32_t i = 0; i < r->meta.n_kv; i++)
        if (strcmp(r->meta.kv[i].key, key) == 0)
            return r->meta.kv[i].value;
    return NULL;
}

const char *nxpq_reader_created_by(const nxpq_reader *r)
{
    return r->meta.created_by;
}
