/*
 * nki_source.c — KernelInstructions as a map from (pcore_idx,
 * kernel_instruction_name) to its source line; see nki_source.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/nki_source.h"
#include "util/strmap.h"

/* The rows of one name (one per core) are chained: the map gives the first. */
typedef struct chain {
    int64_t pcore;
    size_t next;                     /* index of the name's next row, or SIZE_MAX */
} chain;

struct nx_nki_source {
    nx_strmap map;                   /* kernel_instruction_name -> its first row */
    nx_nki_line *lines;
    chain *chains;                   /* parallel to lines */
    size_t n, cap;
};

static bool int_cell(const nxpq_column_data *c, size_t r, int64_t *v)
{
    if (!c || (c->valid && !c->valid[r]))
        return false;
    *v = c->values.i64[r];
    return true;
}

/* Adds row r (columns name, pcore, file, line, then frame and iteration when
 * the file has them: n_cols 6). */
static int add_line(nx_nki_source *s, const nxpq_column_data *cols, size_t n_cols, size_t r)
{
    const nxpq_column_data *file = &cols[2], *line = &cols[3];
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        nx_nki_line *l = realloc(s->lines, cap * sizeof *l);
        if (l)
            s->lines = l;
        chain *c = realloc(s->chains, cap * sizeof *c);
        if (c)
            s->chains = c;
        if (!l || !c)
            return -1;
        s->cap = cap;
    }
    nx_nki_line *l = &s->lines[s->n];
    memset(l, 0, sizeof *l);
    if (!file->valid || file->valid[r]) {
        l->file_len = (size_t)(file->offsets[r + 1] - file->offsets[r]);
        char *f = malloc(l->file_len + 1);
        if (!f)
            return -1;
        memcpy(f, file->data + file->offsets[r], l->file_len);
        f[l->file_len] = '\0';
        l->file = f;
    }
    l->has_line = !line->valid || line->valid[r];
    l->line = l->has_line ? line->values.i64[r] : 0;
    l->has_frame = int_cell(n_cols > 4 ? &cols[4] : NULL, r, &l->frame);
    l->has_iteration = int_cell(n_cols > 5 ? &cols[5] : NULL, r, &l->iteration);
    l->row = s->n;
    s->n++;
    return 0;
}

/* Adds the rows of one batch (columns: name, pcore, file, line[, frame, iteration]). */
static int add_batch(nx_nki_source *s, const nxpq_batch *b, const char *path, nx_error *err)
{
    const nxpq_column_data *name = &b->columns[0], *pcore = &b->columns[1];
    for (size_t r = 0; r < b->n_rows; r++) {
        if ((name->valid && !name->valid[r]) || (pcore->valid && !pcore->valid[r]))
            continue;   /* a row no instruction can join */
        const char *nm = name->data + name->offsets[r];
        size_t len = (size_t)(name->offsets[r + 1] - name->offsets[r]);
        int64_t core = pcore->values.i64[r];
        if (nx_nki_source_find(s, true, core, nm, len))
            return nx_error_set(err, "%s: two rows for kernel_instruction_name '%.*s' on pcore_idx %" PRId64
                                       "; the join with Instruction needs one", path, (int)len, nm, core);
        uint64_t first;
        bool known = nx_strmap_get(&s->map, nm, len, &first);
        if (add_line(s, b->columns, b->n_columns, r) != 0 ||
            (!known && nx_strmap_put(&s->map, nm, len, s->n - 1) != 0))
            return nx_error_set(err, "%s: out of memory", path);
        s->chains[s->n - 1] = (chain){core, SIZE_MAX};
        if (known) {   /* append to the name's chain */
            size_t at = (size_t)first;
            while (s->chains[at].next != SIZE_MAX)
                at = s->chains[at].next;
            s->chains[at].next = s->n - 1;
        }
    }
    return 0;
}

static int check_columns(nx_profile_table *t, const char *const *cols, const char *path, nx_error *err)
{
    const nxpq_type want[4] = {NXPQ_STRING, NXPQ_INT64, NXPQ_STRING, NXPQ_INT64};
    for (size_t c = 0; c < 4; c++) {
        int at = nx_profile_table_find_column(t, cols[c]);
        if (at < 0 || nx_profile_table_column(t, (size_t)at)->type != want[c])
            return nx_error_set(err, "%s: column '%s' is missing or not %s (a profile written by another tool, "
                                       "or damaged)", path, cols[c], nxpq_type_name(want[c]));
    }
    return 0;
}

/* 2 when the file has both optional INT64 columns (the frame and iteration ids), else 0. */
static size_t optional_columns(nx_profile_table *t, const char *const *cols)
{
    for (size_t c = 0; c < 2; c++) {
        int at = nx_profile_table_find_column(t, cols[c]);
        if (at < 0 || nx_profile_table_column(t, (size_t)at)->type != NXPQ_INT64)
            return 0;
    }
    return 2;
}

int nx_nki_source_open(const char *profile_dir, nx_nki_source **out, nx_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return nx_error_set(err, "KernelInstructions: out of memory");
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, "KernelInstructions", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    static const char *const cols[] = {"kernel_instruction_name", "pcore_idx", "file_path", "line_number",
                                       "stack_frame_id", "iteration_variables_id"};
    const char *path = rc == 0 ? nx_profile_table_file_path(t, 0) : "KernelInstructions";
    if (rc == 0)
        rc = check_columns(t, cols, path, err);
    nx_profile_scan *s = NULL;
    if (rc == 0) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = 4 + optional_columns(t, cols + 4)};
        rc = (s = nx_profile_scan_open(t, &so, err)) ? 0 : -1;
    }
    const nxpq_batch *b;
    int more = 0;
    while (rc == 0 && (more = nx_profile_scan_next(s, &b, err)) > 0)
        rc = add_batch(*out, b, path, err);
    if (rc == 0 && more < 0)
        rc = -1;
    if (s)
        nx_profile_scan_close(s);
    if (t)
        nx_profile_table_close(t);
    if (rc != 0) {
        nx_nki_source_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

const nx_nki_line *nx_nki_source_find(const nx_nki_source *s, bool has_pcore, int64_t pcore, const char *name,
                                      size_t len)
{
    uint64_t first;
    if (!has_pcore || !name || !nx_strmap_get(&s->map, name, len, &first))
        return NULL;
    for (size_t at = (size_t)first; at != SIZE_MAX; at = s->chains[at].next)
        if (s->chains[at].pcore == pcore)
            return &s->lines[at];
    return NULL;
}

size_t nx_nki_source_count(const nx_nki_source *s) { return s->n; }

void nx_nki_source_close(nx_nki_source *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free((char *)s->lines[i].file);
    free(s->lines);
    free(s->chains);
    nx_strmap_free(&s->map);
    free(s);
}

/* Adds one Instruction batch (duration_ns, kernel_instruction_name, pcore_idx). */
static int cover_batch(const nx_nki_source *src, const nxpq_batch *b, nx_nki_coverage *c, const char *path,
                       nx_error *err)
{
    const nxpq_column_data *dur = &b->columns[0], *name = &b->columns[1], *core = &b->columns[2];
    for (size_t r = 0; r < b->n_rows; r++) {
        if (dur->valid && !dur->valid[r])
            continue;
        int64_t d = dur->values.i64[r];
        bool has_name = !name->valid || name->valid[r], has_core = !core->valid || core->valid[r];
        bool kernel = has_name && nx_nki_source_find(src, has_core, has_core ? core->values.i64[r] : 0,
                                                      name->data + name->offsets[r],
                                                      (size_t)(name->offsets[r + 1] - name->offsets[r]));
        if (d < 0 || __builtin_add_overflow(c->total_ns, d, &c->total_ns) ||
            (kernel && __builtin_add_overflow(c->kernel_ns, d, &c->kernel_ns)))
            return nx_error_set(err, "%s: duration_ns %" PRId64 " is negative or the sum exceeds int64", path, d);
        c->instructions++;
        c->kernel_instructions += kernel;
    }
    return 0;
}

int nx_nki_coverage_read(const char *profile_dir, nx_nki_coverage *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    nx_nki_source *src = NULL;
    if (nx_nki_source_open(profile_dir, &src, err) != 0)
        return -1;
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, "Instruction", &t, err);
    bool have_kernels = nx_nki_source_count(src) > 0;
    if (rc == NX_PROFILE_TABLE_ABSENT || (rc == 0 && !have_kernels)) {
        if (t)
            nx_profile_table_close(t);
        nx_nki_source_close(src);
        return 0;
    }
    static const char *const cols[] = {"duration_ns", "kernel_instruction_name", "pcore_idx"};
    static const nxpq_type types[] = {NXPQ_INT64, NXPQ_STRING, NXPQ_INT64};
    const char *path = rc == 0 ? nx_profile_table_file_path(t, 0) : "Instruction";
    for (size_t k = 0; rc == 0 && k < 3; k++) {
        int at = nx_profile_table_find_column(t, cols[k]);
        if (at < 0 || nx_profile_table_column(t, (size_t)at)->type != types[k])
            rc = nx_error_set(err, "%s: column '%s' is missing or not %s (a profile written by another tool, "
                                     "or damaged)", path, cols[k], nxpq_type_name(types[k]));
    }
    nx_profile_scan *s = NULL;
    if (rc == 0) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = 3};
        rc = (s = nx_profile_scan_open(t, &so, err)) ? 0 : -1;
    }
    const nxpq_batch *b;
    int more = 0;
    while (rc == 0 && (more = nx_profile_scan_next(s, &b, err)) > 0)
        rc = cover_batch(src, b, out, path, err);
    if (rc == 0 && more < 0)
        rc = -1;
    if (s)
        nx_profile_scan_close(s);
    if (t)
        nx_profile_table_close(t);
    nx_nki_source_close(src);
    out->present = rc == 0;
    return rc == 0 ? 0 : -1;
}

double nx_nki_coverage_percent(const nx_nki_coverage *c)
{
    return c->total_ns ? 100.0 * (double)c->kernel_ns / (double)c->total_ns : 0.0;
}
