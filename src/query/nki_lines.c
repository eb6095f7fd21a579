/* nki_lines.c — time per NKI source line: top's groups of Instruction joined to KernelInstructions
 * (rules in nki_lines.h). */
#include "query/nki_lines.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/nki_index.h"
#include "query/top.h"
#include "util/strbuf.h"

/* Contributions to the groups: one row per (kinst, line), columns for group_by. */
typedef struct contrib {
    nx_strbuf files;
    uint64_t *offsets;
    uint8_t *file_valid, *line_valid;
    int64_t *line, *total, *self, *count;
    size_t n, cap;
} contrib;

/* Reallocates *p to n bytes: 0, or -1 with *p unchanged. */
static int grow(void **p, size_t n)
{
    void *q = realloc(*p, n);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

static int contrib_add(contrib *c, const char *file, bool has_line, int64_t line, int64_t total, int64_t self,
                       int64_t count)
{
    if (c->n + 1 >= c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        if (grow((void **)&c->offsets, (cap + 1) * sizeof *c->offsets) < 0 ||
            grow((void **)&c->file_valid, cap) < 0 || grow((void **)&c->line_valid, cap) < 0 ||
            grow((void **)&c->line, cap * sizeof *c->line) < 0 ||
            grow((void **)&c->total, cap * sizeof *c->total) < 0 ||
            grow((void **)&c->self, cap * sizeof *c->self) < 0 ||
            grow((void **)&c->count, cap * sizeof *c->count) < 0)
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

/* A kernel instruction's own line (self and total) and its stack's call sites (total only). */
static int contribute(contrib *c, const nx_nki_index *x, int64_t pcore, const nx_nki_line *k, int64_t n,
                      int64_t ns)
{
    size_t from = c->n;
    if (contrib_add(c, k->file, k->has_line, k->line, ns, ns, n) < 0)
        return -1;
    const nx_nki_frame *f = k->has_frame ? nx_nki_find_frame(x, pcore, k->frame) : NULL;
    for (size_t steps = 0; f && steps < x->n_frames; steps++) {
        const char *file = nx_nki_str(x, f->file);
        if (!seen_since(c, from, file, f->has_line, f->line) &&
            contrib_add(c, file, f->has_line, f->line, ns, 0, 0) < 0)
            return -1;
        f = f->has_parent ? nx_nki_find_frame(x, pcore, f->parent) : NULL;
    }
    return 0;
}

/* Each of top's (kernel_instruction_name, pcore_idx) groups joined to its
 * KernelInstructions row, into the contributions and the totals. */
static int join_groups(contrib *c, const nx_nki_index *x, const nx_top *t, nx_nki_lines *s)
{
    nx_group_stats all = nx_group_by_totals(t->g);
    s->instructions = all.count;
    s->instruction_ns = all.sum[0];
    for (size_t i = 0; i < nx_group_by_count(t->g); i++) {
        nx_group_key name, core;
        nx_group_by_key(t->g, i, 0, &name);
        nx_group_by_key(t->g, i, 1, &core);
        const nx_nki_line *k =
            name.null ? NULL : nx_nki_source_find(x->kinst, !core.null, core.i, name.s, name.len);
        if (!k)
            continue;
        const nx_group_stats *st = nx_group_by_stats(t->g, i);
        s->attributed += st->count;
        s->attributed_ns += st->sum[0];
        if (contribute(c, x, core.i, k, st->count, st->sum[0]) < 0)
            return -1;
    }
    return 0;
}

static int group(nx_nki_lines *s, const nx_nki_index *x, const nx_top *t, nx_error *err)
{
    contrib c = {.files = NX_STRBUF_INIT};
    int rc = join_groups(&c, x, t, s);
    if (rc < 0) {
        contrib_free(&c);
        return nx_error_set(err, "KernelInstructions: out of memory");
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

int nx_nki_lines_run(const char *profile_dir, nx_nki_lines *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    const nx_nki_index *x;
    int rc = nx_nki_index_get(profile_dir, &x, err);
    if (rc != 0)
        return rc;
    static const char *const BY[] = {"kernel_instruction_name", "pcore_idx"};
    nx_top_options o = {.table = "Instruction", .by = BY, .n_by = 2};
    nx_top t;
    rc = nx_top_run(profile_dir, &o, &t, err);
    if (rc == NX_TOP_BAD_KEY)
        rc = -1; /* Instruction lacks a join column: err names it */
    if (rc == 0 && t.value != NX_TOP_DURATION)
        rc = nx_error_set(err, "%s: Instruction has no INT64 duration_ns", profile_dir);
    if (rc == 0)
        rc = group(out, x, &t, err);
    nx_top_free(&t);
    nx_nki_index_release(x);
    if (rc != 0)
        nx_nki_lines_free(out);
    return rc;
}

size_t nx_nki_lines_count(const nx_nki_lines *s)
{
    return s->g ? nx_group_by_count(s->g) : 0;
}

void nx_nki_lines_at(const nx_nki_lines *s, size_t i, nx_nki_line_time *out)
{
    nx_group_key f, l;
    nx_group_by_key(s->g, i, 0, &f);
    nx_group_by_key(s->g, i, 1, &l);
    const nx_group_stats *st = nx_group_by_stats(s->g, i);
    *out = (nx_nki_line_time){.file = f.null ? NULL : f.s, .file_len = f.null ? 0 : f.len, .line = l.i,
                                .has_line = !l.null, .total_ns = st->sum[0], .self_ns = st->sum[1],
                                .count = st->sum[2]};
}

double nx_nki_lines_share(const nx_nki_lines *s, int64_t ns)
{
    return s->instruction_ns ? 100.0 * (double)ns / (double)s->instruction_ns : 0.0;
}

void nx_nki_lines_free(nx_nki_lines *s)
{
    nx_group_by_free(s->g);
    memset(s, 0, sizeof *s);
}
