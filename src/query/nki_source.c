/* nki_source.c — time per NKI source line, Instruction joined to KernelInstructions (rules in nki_source.h). */
#include "query/nki_source.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/nki_index.h"
#include "util/strbuf.h"

#define NO_KINST UINT32_MAX

/* Per-dictionary lookup: the KernelInstructions row of each entry of the last dictionary seen. */
typedef struct dict_map {
    uint64_t id;
    uint32_t *kinst;   /* dict_n + 1 entries (the last: null) */
    size_t n;
} dict_map;

/* The kinst index of each entry of c's dictionary (cached by dict_id). -1 when out of memory. */
static int map_dict(const nx_nki_index *x, const nxpq_column_data *c, dict_map *m)
{
    if (m->kinst && m->id == c->dict_id)
        return 0;
    uint32_t *k = realloc(m->kinst, (c->dict_n + 1) * sizeof *k);
    if (!k)
        return -1;
    m->kinst = k;
    m->id = c->dict_id;
    m->n = c->dict_n;
    for (size_t d = 0; d < c->dict_n; d++) {
        const nx_nki_kinst *ki = nx_nki_find_kinst(x, c->dict_strs[d].ptr, c->dict_strs[d].len);
        k[d] = ki ? (uint32_t)(ki - x->kinst) : NO_KINST;
    }
    k[c->dict_n] = NO_KINST;
    return 0;
}

/* The kinst index of row r of a plain STRING column. */
static uint32_t row_kinst(const nx_nki_index *x, const nxpq_column_data *c, size_t r)
{
    if (c->valid && !c->valid[r])
        return NO_KINST;
    const nx_nki_kinst *ki =
        nx_nki_find_kinst(x, c->data + c->offsets[r], (size_t)(c->offsets[r + 1] - c->offsets[r]));
    return ki ? (uint32_t)(ki - x->kinst) : NO_KINST;
}

/* duration_ns of row r, plain or in dictionary form; 0 when null. */
static int64_t duration(const nxpq_column_data *c, size_t r)
{
    if (c->valid && !c->valid[r])
        return 0;
    return c->dict_index ? c->dict_values.i64[c->dict_index[r]] : c->values.i64[r];
}

/* Adds every Instruction row's count and duration to its kinst's counters (n, ns). */
static int scan_instructions(const char *dir, const nx_nki_index *x, int64_t *n, int64_t *ns, nx_nki_source *s,
                             nxpq_error *err)
{
    nx_profile_table *t;
    int rc = nx_profile_table_open(dir, "Instruction", &t, err);
    if (rc != 0)
        return rc;
    static const char *const COLS[] = {"kernel_instruction_name", "duration_ns"};
    for (size_t i = 0; i < 2; i++) {
        int c = nx_profile_table_find_column(t, COLS[i]);
        nxpq_type want = i ? NXPQ_INT64 : NXPQ_STRING;
        if (c < 0 || nx_profile_table_column(t, (size_t)c)->type != want) {
            nxpq_error_set(err, "%s: column %s missing or not %s", nx_profile_table_file_path(t, 0), COLS[i],
                           nxpq_type_name(want));
            nx_profile_table_close(t);
            return -1;
        }
    }
    nx_profile_scan_options o = {.columns = COLS, .n_columns = 2, .threads = 2, .dictionary = true};
    nx_profile_scan *sc = nx_profile_scan_open(t, &o, err);
    dict_map m = {0};
    const nxpq_batch *b;
    rc = sc ? 0 : -1;
    while (rc == 0 && (rc = nx_profile_scan_next(sc, &b, err)) == 1) {
        rc = 0;
        const nxpq_column_data *name = &b->columns[0], *dur = &b->columns[1];
        if (name->dict_index && map_dict(x, name, &m) < 0) {
            rc = nxpq_error_set(err, "%s: out of memory", nx_profile_table_file_path(t, 0));
            break;
        }
        for (size_t r = 0; r < b->n_rows; r++) {
            int64_t d = duration(dur, r);
            uint32_t k = name->dict_index ? m.kinst[name->dict_index[r]] : row_kinst(x, name, r);
            s->instructions++;
            s->instruction_ns += d;
            if (k == NO_KINST)
                continue;
            n[k]++;
            ns[k] += d;
            s->attributed++;
            s->attributed_ns += d;
        }
    }
    free(m.kinst);
    nx_profile_scan_close(sc);
    nx_profile_table_close(t);
    return rc < 0 ? -1 : 0;
}

/* Contributions to the groups: one row per (kinst, line), columns for group_by. */
typedef struct contrib {
    nx_strbuf files;
    uint64_t *offsets;
    uint8_t *file_valid, *line_valid;
    int64_t *line, *total, *self, *count;
    size_t n, cap;
} contrib;

static int contrib_add(contrib *c, const char *file, bool has_line, int64_t line, int64_t total, int64_t self,
                       int64_t count)
{
    if (c->n + 1 >= c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        void *p[7] = {realloc(c->offsets, (cap + 1) * sizeof *c->offsets)};
        if (p[0])
            c->offsets = p[0];
        p[1] = realloc(c->file_valid, cap);
        if (p[1])
            c->file_valid = p[1];
        p[2] = realloc(c->line_valid, cap);
        if (p[2])
            c->line_valid = p[2];
        int64_t **a[4] = {&c->line, &c->total, &c->self, &c->count};
        for (size_t i = 0; i < 4; i++)
            if ((p[3 + i] = realloc(*a[i], cap * sizeof **a[i])))
                *a[i] = p[3 + i];
        for (size_t i = 0; i < 7; i++)
            if (!p[i])
                return -1;
        c->cap = cap;
    }
    if (c->n == 0)
        c->offsets[0] = 0;
    c->file_valid[c->n] = file != NULL;
    if (file)
        nx_strbuf_puts(&c->files, file);
    c->offsets[c->n + 1] = c->files.len;
    c->line_valid[c->n] = has_line;
    c->line[c->n] = has_line ? line : 0;
    c->total[c->n] = total;
    c->self[c->n] = self;
    c->count[c->n] = count;
    c->n++;
    return nx_strbuf_failed(&c->files) ? -1 : 0;
}

static void contrib_free(contrib *c)
{
    nx_strbuf_free(&c->files);
    free(c->offsets);
    free(c->file_valid);
    free(c->line_valid);
    free(c->line);
    free(c->total);
    free(c->self);
    free(c->count);
}

/* Whether (file, line) is already among the contributions since `from`. */
static bool seen_since(const contrib *c, size_t from, const char *file, bool has_line, int64_t line)
{
    for (size_t i = from; i < c->n; i++) {
        size_t len = (size_t)(c->offsets[i + 1] - c->offsets[i]);
        bool same_file = file ? c->file_valid[i] && strlen(file) == len &&
                                    memcmp(c->files.data + c->offsets[i], file, len) == 0
                              : !c->file_valid[i];
        if (same_file && c->line_valid[i] == has_line && (!has_line || c->line[i] == line))
            return true;
    }
    return false;
}

/* kinst k's own line (self and total) and its stack's call sites (total only). */
static int contribute(contrib *c, const nx_nki_index *x, size_t k, int64_t n, int64_t ns)
{
    const nx_nki_kinst *ki = &x->kinst[k];
    size_t from = c->n;
    if (contrib_add(c, nx_nki_str(x, ki->file), ki->has_line, ki->line, ns, ns, n) < 0)
        return -1;
    const nx_nki_frame *f = ki->has_frame ? nx_nki_find_frame(x, ki->frame) : NULL;
    for (size_t steps = 0; f && steps < x->n_frames; steps++) {
        const char *file = nx_nki_str(x, f->file);
        if (!seen_since(c, from, file, f->has_line, f->line) &&
            contrib_add(c, file, f->has_line, f->line, ns, 0, 0) < 0)
            return -1;
        f = f->has_parent ? nx_nki_find_frame(x, f->parent) : NULL;
    }
    return 0;
}

static int group(nx_nki_source *s, const nx_nki_index *x, const int64_t *n, const int64_t *ns, nxpq_error *err)
{
    contrib c = {.files = NX_STRBUF_INIT};
    int rc = 0;
    for (size_t k = 0; k < x->n_kinst && rc == 0; k++)
        if (n[k])
            rc = contribute(&c, x, k, n[k], ns[k]);
    if (rc < 0) {
        contrib_free(&c);
        return nxpq_error_set(err, "KernelInstructions: out of memory");
    }
    static const nxpq_type KEYS[] = {NXPQ_STRING, NXPQ_INT64};
    if (!(s->g = nx_group_by_new(KEYS, 2, err))) {
        contrib_free(&c);
        return -1;
    }
    nxpq_column_data file = {.type = NXPQ_STRING, .valid = c.file_valid, .offsets = c.offsets,
                             .data = c.files.data ? c.files.data : ""};
    nxpq_column_data line = {.type = NXPQ_INT64, .valid = c.line_valid, .values.i64 = c.line};
    const nxpq_column_data *keys[] = {&file, &line};
    nx_group_values v[3] = {{c.total, NULL}, {c.self, NULL}, {c.count, NULL}};
    rc = c.n ? nx_group_by_add(s->g, keys, v, 3, c.n, err) : 0;
    if (rc == 0)
        rc = nx_group_by_sort(s->g, 1, err);
    contrib_free(&c);
    return rc;
}

int nx_nki_source_run(const char *profile_dir, nx_nki_source *out, nxpq_error *err)
{
    memset(out, 0, sizeof *out);
    const nx_nki_index *x;
    int rc = nx_nki_index_get(profile_dir, &x, err);
    if (rc != 0)
        return rc;
    int64_t *n = calloc(x->n_kinst + 1, sizeof *n), *ns = calloc(x->n_kinst + 1, sizeof *ns);
    if (!n || !ns)
        rc = nxpq_error_set(err, "%s: out of memory", profile_dir);
    if (rc == 0)
        rc = scan_instructions(profile_dir, x, n, ns, out, err);
    if (rc == 0)
        rc = group(out, x, n, ns, err);
    free(n);
    free(ns);
    nx_nki_index_release(x);
    if (rc != 0)
        nx_nki_source_free(out);
    return rc;
}

size_t nx_nki_source_count(const nx_nki_source *s)
{
    return s->g ? nx_group_by_count(s->g) : 0;
}

void nx_nki_source_line_at(const nx_nki_source *s, size_t i, nx_nki_source_line *out)
{
    nx_group_key f, l;
    nx_group_by_key(s->g, i, 0, &f);
    nx_group_by_key(s->g, i, 1, &l);
    const nx_group_stats *st = nx_group_by_stats(s->g, i);
    *out = (nx_nki_source_line){.file = f.null ? NULL : f.s, .file_len = f.null ? 0 : f.len, .line = l.i,
                                .has_line = !l.null, .total_ns = st->sum[0], .self_ns = st->sum[1],
                                .count = st->sum[2]};
}

double nx_nki_source_share(const nx_nki_source *s, int64_t ns)
{
    return s->instruction_ns ? 100.0 * (double)ns / (double)s->instruction_ns : 0.0;
}

void nx_nki_source_free(nx_nki_source *s)
{
    nx_group_by_free(s->g);
    memset(s, 0, sizeof *s);
}
