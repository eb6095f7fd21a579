/* nki_index.c — the NKI lookup tables read into memory, and their lookups (rules in nki_index.h). */
#include "query/nki_index.h"
#include "query/nki_index_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"

/* ------------------------------------------------------------ strings -- */
/* The pool offset of s[0..len), added once. -1 when out of memory. */
static int intern(nx_nki_index *x, const char *s, size_t len, size_t *off)
{
    uint64_t v;
    if (nx_strmap_get(&x->pool_map, s, len, &v)) {
        *off = (size_t)v;
        return 0;
    }
    if (x->pool_len + len + 1 > x->pool_cap) {
        size_t cap = x->pool_cap ? x->pool_cap : 4096;
        while (cap < x->pool_len + len + 1)
            cap *= 2;
        char *p = realloc(x->pool, cap);
        if (!p)
            return -1;
        x->pool = p;
        x->pool_cap = cap;
    }
    memcpy(x->pool + x->pool_len, s, len);
    x->pool[x->pool_len + len] = '\0';
    if (nx_strmap_put(&x->pool_map, s, len, x->pool_len) < 0)
        return -1;
    *off = x->pool_len;
    x->pool_len += len + 1;
    return 0;
}

const char *nx_nki_str(const nx_nki_index *idx, size_t off)
{
    return off == NX_NKI_NO_STR ? NULL : idx->pool + off;
}

/* ---------------------------------------------------------------- cells -- */
static bool cell_null(const nxpq_column_data *c, size_t r)
{
    return c->valid && !c->valid[r];
}

/* Integer cell r of c (INT32 or INT64) into *v: false when null. */
static bool cell_int(const nxpq_column_data *c, size_t r, int64_t *v)
{
    if (cell_null(c, r))
        return false;
    *v = c->type == NXPQ_INT32 ? c->values.i32[r] : c->values.i64[r];
    return true;
}

/* String cell r of c interned into *off (NX_NKI_NO_STR when null). -1 when out of memory. */
static int cell_str(nx_nki_index *x, const nxpq_column_data *c, size_t r, size_t *off)
{
    *off = NX_NKI_NO_STR;
    if (cell_null(c, r))
        return 0;
    return intern(x, c->data + c->offsets[r], (size_t)(c->offsets[r + 1] - c->offsets[r]), off);
}

/* --------------------------------------------------------------- tables -- */
typedef int (*row_fn)(nx_nki_index *x, const nxpq_column_data *cols, size_t r, nx_error *err);

/* Checks that column i of the scan has the type the index reads. */
static int check_types(nx_profile_table *t, const char *const *names, const nxpq_type *types, size_t n,
                       nx_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int c = nx_profile_table_find_column(t, names[i]);
        nxpq_type have = c < 0 ? NXPQ_STRING : nx_profile_table_column(t, (size_t)c)->type;
        bool ok = c >= 0 && (have == types[i] || (types[i] == NXPQ_INT64 && have == NXPQ_INT32));
        if (!ok) {
            nx_error_set(err, "%s: column %s missing or not %s", nx_profile_table_file_path(t, 0), names[i],
                           nxpq_type_name(types[i]));
            return -1;
        }
    }
    return 0;
}

/* Calls fn on every row of `table` (columns names[0..n) of the given types):
 * 0, 1 when the profile lacks the table, -1 with err. */
static int load_table(const char *dir, const char *table, const char *const *names, const nxpq_type *types,
                      size_t n, nx_nki_index *x, row_fn fn, nx_error *err)
{
    nx_profile_table *t;
    int rc = nx_profile_table_open(dir, table, &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 1;
    if (rc != 0)
        return -1;
    if (check_types(t, names, types, n, err) < 0) {
        nx_profile_table_close(t);
        return -1;
    }
    nx_profile_scan_options o = {.columns = names, .n_columns = n};
    nx_profile_scan *s = nx_profile_scan_open(t, &o, err);
    const nxpq_batch *b;
    rc = s ? 0 : -1;
    while (rc == 0 && (rc = nx_profile_scan_next(s, &b, err)) == 1) {
        rc = 0;
        for (size_t r = 0; r < b->n_rows && rc == 0; r++)
            rc = fn(x, b->columns, r, err);
    }
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    return rc < 0 ? -1 : 0;
}

/* Grows *arr (elements of size sz) to hold n + 1. -1 when out of memory. */
static int reserve(void **arr, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 256;
    void *p = realloc(*arr, c * sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

static int oom(nx_error *err, const char *table)
{
    nx_error_set(err, "%s: out of memory", table);
    return -1;
}

static const char *const SF_COLS[] = {"stack_frame_id", "parent_stack_frame_id", "fully_qualified_function_name",
                                      "file_path", "line_number", "pcore_idx"};
static const nxpq_type SF_TYPES[] = {NXPQ_INT64, NXPQ_INT64, NXPQ_STRING, NXPQ_STRING, NXPQ_INT64, NXPQ_INT64};

static int frame_row(nx_nki_index *x, const nxpq_column_data *c, size_t r, nx_error *err)
{
    if (reserve((void **)&x->frames, &x->cap_frames, x->n_frames, sizeof *x->frames) < 0)
        return oom(err, "KernelStackFrames");
    nx_nki_frame *f = &x->frames[x->n_frames];
    *f = (nx_nki_frame){0};
    if (!cell_int(&c[0], r, &f->id) || !cell_int(&c[5], r, &f->pcore))
        return 0;
    f->row = x->n_frames;
    f->has_parent = cell_int(&c[1], r, &f->parent);
    f->has_line = cell_int(&c[4], r, &f->line);
    if (cell_str(x, &c[2], r, &f->function) < 0 || cell_str(x, &c[3], r, &f->file) < 0)
        return oom(err, "KernelStackFrames");
    x->n_frames++;
    return 0;
}

static const char *const IV_COLS[] = {"iteration_variable_id", "parent_iteration_variable_id", "variable_name",
                                      "variable_value", "file_path", "line_number", "pcore_idx"};
static const nxpq_type IV_TYPES[] = {NXPQ_INT64, NXPQ_INT64, NXPQ_STRING, NXPQ_INT64, NXPQ_STRING, NXPQ_INT64,
                                     NXPQ_INT64};

static int iter_row(nx_nki_index *x, const nxpq_column_data *c, size_t r, nx_error *err)
{
    if (reserve((void **)&x->iters, &x->cap_iters, x->n_iters, sizeof *x->iters) < 0)
        return oom(err, "KernelIterationVariables");
    nx_nki_iter *v = &x->iters[x->n_iters];
    *v = (nx_nki_iter){0};
    if (!cell_int(&c[0], r, &v->id) || !cell_int(&c[6], r, &v->pcore))
        return 0;
    v->row = x->n_iters;
    v->has_parent = cell_int(&c[1], r, &v->parent);
    v->has_value = cell_int(&c[3], r, &v->value);
    v->has_line = cell_int(&c[5], r, &v->line);
    if (cell_str(x, &c[2], r, &v->name) < 0 || cell_str(x, &c[4], r, &v->file) < 0)
        return oom(err, "KernelIterationVariables");
    x->n_iters++;
    return 0;
}

static const char *const AI_COLS[] = {"compiler_pc", "instruction_id", "compiler_opcode", "compiler_operands"};
static const nxpq_type AI_TYPES[] = {NXPQ_INT64, NXPQ_INT64, NXPQ_STRING, NXPQ_STRING};

static int asm_row(nx_nki_index *x, const nxpq_column_data *c, size_t r, nx_error *err)
{
    if (reserve((void **)&x->assembly, &x->cap_asm, x->n_asm, sizeof *x->assembly) < 0)
        return oom(err, "AssemblyInstruction");
    nx_nki_asm *a = &x->assembly[x->n_asm];
    if (!cell_int(&c[0], r, &a->pc) || !cell_int(&c[1], r, &a->id))
        return 0;
    if (cell_str(x, &c[2], r, &a->opcode) < 0 || cell_str(x, &c[3], r, &a->operands) < 0)
        return oom(err, "AssemblyInstruction");
    x->n_asm++;
    return 0;
}

/* ---------------------------------------------------------- sort, find -- */
static int cmp_frame(const void *a, const void *b)
{
    const nx_nki_frame *x = a, *y = b;
    if (x->pcore != y->pcore)
        return x->pcore < y->pcore ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_iter(const void *a, const void *b)
{
    const nx_nki_iter *x = a, *y = b;
    if (x->pcore != y->pcore)
        return x->pcore < y->pcore ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_asm(const void *a, const void *b)
{
    const nx_nki_asm *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The first element of a sorted array whose int64 key (at offset koff) is >= k. */
static size_t lower_bound(const void *arr, size_t n, size_t sz, size_t koff, int64_t k)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v;
        memcpy(&v, (const char *)arr + mid * sz + koff, sizeof v);
        if (v < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const nx_nki_frame *nx_nki_find_frame(const nx_nki_index *idx, int64_t pcore, int64_t id)
{
    nx_nki_frame key = {.pcore = pcore, .id = id, .row = 0};
    size_t lo = 0, hi = idx->n_frames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_frame(&idx->frames[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < idx->n_frames && idx->frames[lo].pcore == pcore && idx->frames[lo].id == id ? &idx->frames[lo] : NULL;
}

const nx_nki_iter *nx_nki_find_iter(const nx_nki_index *idx, int64_t pcore, int64_t id)
{
    nx_nki_iter key = {.pcore = pcore, .id = id, .row = 0};
    size_t lo = 0, hi = idx->n_iters;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_iter(&idx->iters[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < idx->n_iters && idx->iters[lo].pcore == pcore && idx->iters[lo].id == id ? &idx->iters[lo] : NULL;
}

const nx_nki_asm *nx_nki_find_asm(const nx_nki_index *idx, int64_t pc, const char *opcode, size_t len)
{
    size_t i = lower_bound(idx->assembly, idx->n_asm, sizeof *idx->assembly, offsetof(nx_nki_asm, pc), pc);
    if (i >= idx->n_asm || idx->assembly[i].pc != pc)
        return NULL;
    for (size_t j = i; opcode && j < idx->n_asm && idx->assembly[j].pc == pc; j++) {
        const char *op = nx_nki_str(idx, idx->assembly[j].opcode);
        if (op && strlen(op) == len && memcmp(op, opcode, len) == 0)
            return &idx->assembly[j];
    }
    return &idx->assembly[i];
}

/* ---------------------------------------------------------------- build -- */
void nx_nki_index_destroy(nx_nki_index *x)
{
    if (!x)
        return;
    nx_nki_source_close(x->kinst);
    free(x->frames);
    free(x->iters);
    free(x->assembly);
    free(x->pool);
    nx_strmap_free(&x->pool_map);
    free(x);
}

/* Keeps the first element of each (id, pcore) of an array sorted by pcore,
 * id, then row (the two int64 keys lead the element). */
static size_t unique_ids(void *arr, size_t n, size_t sz)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && memcmp((char *)arr + i * sz, (char *)arr + (w - 1) * sz, 2 * sizeof(int64_t)) == 0)
            continue;
        memmove((char *)arr + w * sz, (char *)arr + i * sz, sz);
        w++;
    }
    return w;
}

int nx_nki_index_build(const char *dir, nx_nki_index **out, nx_error *err)
{
    nx_nki_index *x = calloc(1, sizeof *x);
    if (!x)
        return oom(err, "KernelInstructions");
    int rc = nx_nki_source_open(dir, &x->kinst, err);
    if (rc == 0 && nx_nki_source_count(x->kinst) == 0) {
        nx_nki_index_destroy(x);
        nx_error_set(err, "%s: the profile has no KernelInstructions rows", dir);
        return NX_PROFILE_TABLE_ABSENT;
    }
    if (rc == 0)
        rc = load_table(dir, "KernelStackFrames", SF_COLS, SF_TYPES, 6, x, frame_row, err);
    if (rc >= 0)
        rc = load_table(dir, "KernelIterationVariables", IV_COLS, IV_TYPES, 7, x, iter_row, err);
    if (rc >= 0)
        rc = load_table(dir, "AssemblyInstruction", AI_COLS, AI_TYPES, 4, x, asm_row, err);
    if (rc < 0) {
        nx_nki_index_destroy(x);
        return -1;
    }
    qsort(x->frames, x->n_frames, sizeof *x->frames, cmp_frame);
    qsort(x->iters, x->n_iters, sizeof *x->iters, cmp_iter);
    qsort(x->assembly, x->n_asm, sizeof *x->assembly, cmp_asm);
    x->n_frames = unique_ids(x->frames, x->n_frames, sizeof *x->frames);
    x->n_iters = unique_ids(x->iters, x->n_iters, sizeof *x->iters);
    *out = x;
    return 0;
}
