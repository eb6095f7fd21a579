/*
 * breakdown_kernels.c — the breakdown's top kernels (breakdown.h): per kernel
 * name its count, total, mean, min and max over the rows in scope, and the
 * spread of each rank's total across the ranks with device activity.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query/breakdown_internal.h"
#include "query/device_activity.h"

typedef struct key {
    int64_t name, rank, dur;
    int cls;
} key;

static int cmp_key(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static size_t count_ranks(const bd_acc *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_rows; i++)   /* rows are in rank order */
        n += i == 0 || a->rows[i].rank != a->rows[i - 1].rank;
    return n;
}

/* Folds the keys of one name k[0..n) (in rank order) into one kernel. */
static bool fold(const key *k, size_t n, size_t n_ranks, nx_bd_kernel *out)
{
    *out = (nx_bd_kernel){.cls = k[0].cls, .min_ns = INT64_MAX, .rank_min_ns = INT64_MAX};
    size_t ranks = 0;
    for (size_t i = 0; i < n;) {
        int64_t rank_total = 0;
        size_t j = i;
        for (; j < n && k[j].rank == k[i].rank; j++) {
            if (__builtin_add_overflow(rank_total, k[j].dur, &rank_total))
                return false;
            out->min_ns = k[j].dur < out->min_ns ? k[j].dur : out->min_ns;
            out->max_ns = k[j].dur > out->max_ns ? k[j].dur : out->max_ns;
        }
        if (__builtin_add_overflow(out->total_ns, rank_total, &out->total_ns))
            return false;
        out->rank_min_ns = rank_total < out->rank_min_ns ? rank_total : out->rank_min_ns;
        out->rank_max_ns = rank_total > out->rank_max_ns ? rank_total : out->rank_max_ns;
        ranks++;
        i = j;
    }
    if (ranks < n_ranks)
        out->rank_min_ns = 0;   /* a rank that never ran it */
    out->count = (int64_t)n;
    out->mean_ns = (double)out->total_ns / (double)n;
    out->rank_mean_ns = (double)out->total_ns / (double)n_ranks;
    return true;
}

static int cmp_kernel(const void *pa, const void *pb)
{
    const nx_bd_kernel *a = pa, *b = pb;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int fold_all(const bd_acc *a, const key *k, size_t n, nx_bd_kernel *ks, size_t *nk, nx_error *err)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && k[j].name == k[i].name)
            j++;
        if (!fold(k + i, j - i, a->n_rows ? count_ranks(a) : 1, &ks[*nk]))
            return nx_error_set(err, "breakdown: kernel %s: its total exceeds int64 ns", a->names.v[k[i].name]);
        ks[(*nk)++].name = a->names.v[k[i].name];   /* borrowed until the top are copied */
        i = j;
    }
    return 0;
}

int bd_answer_kernels(const bd_acc *a, size_t top, nx_breakdown *out, nx_error *err)
{
    out->n_ranks = count_ranks(a);
    key *k = malloc((a->n_rows ? a->n_rows : 1) * sizeof *k);
    nx_bd_kernel *ks = malloc((a->n_rows ? a->n_rows : 1) * sizeof *ks);
    size_t n = 0, nk = 0;
    int rc = k && ks ? 0 : nx_error_set(err, "breakdown: out of memory");
    for (size_t i = 0; rc == 0 && i < a->n_rows; i++)
        if (a->rows[i].kind == NX_ACT_KERNEL)
            k[n++] = (key){a->rows[i].name, a->rows[i].rank, a->rows[i].end - a->rows[i].start, a->rows[i].cls};
    if (rc == 0) {
        qsort(k, n, sizeof *k, cmp_key);
        rc = fold_all(a, k, n, ks, &nk, err);
    }
    if (rc == 0) {
        qsort(ks, nk, sizeof *ks, cmp_kernel);
        out->n_kernels = nk < top ? nk : top;
        for (size_t i = 0; rc == 0 && i < out->n_kernels; i++)
            if (!(ks[i].name = strdup(ks[i].name))) {
                out->n_kernels = i;   /* free releases only the copies */
                rc = nx_error_set(err, "breakdown: out of memory");
            }
        out->kernels = ks;
        ks = NULL;
    }
    free(ks);
    free(k);
    return rc;
}
