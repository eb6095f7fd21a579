/*
 * perfetto_flows.c — the flow ids of an exported event (perfetto_internal.h).
 *
 * Device profiles: each Flow row links its `in` event (the producer) to its
 * `out` event (docs/processing.md "Flow"; in_table/out_table "instruction" for
 * Instruction.id, "dma_block" for DmaPacketAggregated.id, as query/flows.h
 * reads them). Its flow id, the row's ordinal + 1, goes into the producer's
 * flow_ids and the consumer's terminating_flow_ids, so Perfetto draws one arrow
 * per Flow row. The ends are held sorted by (table, id), 24 bytes each.
 * SystemProfileEvents: the flow_id list column; every event holding a value
 * carries that value's id in flow_ids, which Perfetto links in time order.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/perfetto_internal.h"
#include "util/pb_write.h"

int nx_pf_flow_code(const char *table)
{
    return strcmp(table, "Instruction") == 0           ? NX_PF_FLOW_INSTRUCTION
           : strcmp(table, "DmaPacketAggregated") == 0 ? NX_PF_FLOW_DMA_BLOCK
                                                       : NX_PF_FLOW_NONE;
}

static int code_of(const nxpq_column_data *c, size_t i)
{
    const char *s;
    size_t len;
    if (!nx_column_str(c, i, &s, &len))
        return NX_PF_FLOW_NONE;
    if (len == 11 && memcmp(s, "instruction", 11) == 0)
        return NX_PF_FLOW_INSTRUCTION;
    if (len == 9 && memcmp(s, "dma_block", 9) == 0)
        return NX_PF_FLOW_DMA_BLOCK;
    return NX_PF_FLOW_NONE;
}

typedef struct read_ctx {
    nx_pf_flows *out;
    size_t cap;
    uint64_t row;
} read_ctx;

static int push(read_ctx *c, int code, int64_t id, uint64_t flow, bool terminating)
{
    nx_pf_flows *f = c->out;
    if (f->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        nx_pf_flow_end *g = realloc(f->ends, cap * sizeof *g);
        if (!g)
            return -1;
        f->ends = g;
        c->cap = cap;
    }
    f->ends[f->n++] = (nx_pf_flow_end){.code = code, .id = id, .flow = flow, .terminating = terminating};
    return 0;
}

/* Batch columns: in_table, in_id, out_table, out_id. */
static int take_batch(void *ctx, const nxpq_batch *b, size_t file, nx_error *err)
{
    (void)file;
    read_ctx *c = ctx;
    const nxpq_column_data *col = b->columns;
    for (size_t i = 0; i < b->n_rows; i++) {
        uint64_t flow = ++c->row;
        int in = code_of(&col[0], i), out = code_of(&col[2], i);
        int64_t in_id, out_id;
        if (in == NX_PF_FLOW_NONE || out == NX_PF_FLOW_NONE || !nx_column_int(&col[1], i, &in_id) ||
            !nx_column_int(&col[3], i, &out_id)) {
            c->out->unresolved++;
            continue;
        }
        if (push(c, in, in_id, flow, false) < 0 || push(c, out, out_id, flow, true) < 0) {
            snprintf(err->msg, sizeof err->msg, "Flow: out of memory holding the flow ends");
            return -1;
        }
    }
    return 0;
}

static int end_cmp(const void *a, const void *b)
{
    const nx_pf_flow_end *x = a, *y = b;
    if (x->code != y->code)
        return x->code < y->code ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->flow < y->flow ? -1 : x->flow > y->flow;
}

int nx_pf_flows_read(const char *profile_dir, nx_pf_flows *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, "Flow", &t, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    static const char *const cols[] = {"in_table", "in_id", "out_table", "out_id"};
    for (size_t k = 0; k < 4; k++) {
        int c = nx_profile_table_find_column(t, cols[k]);
        nxpq_type want = k % 2 ? NXPQ_INT64 : NXPQ_STRING;
        if (c < 0 || nx_profile_table_column(t, (size_t)c)->type != want) {
            snprintf(err->msg, sizeof err->msg, "Flow: no %s column of type %s", cols[k], k % 2 ? "INT64" : "STRING");
            nx_profile_table_close(t);
            return -1;
        }
    }
    read_ctx c = {.out = out};
    nx_profile_scan_options o = {.columns = cols, .n_columns = 4, .dictionary = true};
    rc = nx_profile_scan_each(t, &o, take_batch, &c, err);
    nx_profile_table_close(t);
    if (rc != 0) {
        nx_pf_flows_free(out);
        return -1;
    }
    qsort(out->ends, out->n, sizeof *out->ends, end_cmp);
    return 0;
}

void nx_pf_flows_free(nx_pf_flows *f)
{
    free(f->ends);
    memset(f, 0, sizeof *f);
}

void nx_pf_flows_put(const nx_pf_flows *f, int code, int64_t id, nx_pftrace *t)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {   /* the first end at or after (code, id) */
        size_t mid = lo + (hi - lo) / 2;
        const nx_pf_flow_end *e = &f->ends[mid];
        if (e->code < code || (e->code == code && e->id < id))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < f->n && f->ends[lo].code == code && f->ends[lo].id == id; lo++)
        nx_pbw_fixed64(&t->buf, f->ends[lo].terminating ? NX_PF_TE_TERMINATING_FLOW_IDS : NX_PF_TE_FLOW_IDS,
                       f->ends[lo].flow);
}

void nx_pf_list_flows_put(const nxpq_column_data *col, size_t i, nx_pftrace *t)
{
    if (col->type != NXPQ_LIST_STRING || (col->valid && !col->valid[i]))
        return;
    for (uint64_t j = col->list_offsets[i]; j < col->list_offsets[i + 1]; j++) {
        if (col->element_valid && !col->element_valid[j])
            continue;
        uint64_t h = XXH3_64bits(col->data + col->offsets[j], (size_t)(col->offsets[j + 1] - col->offsets[j]));
        nx_pbw_fixed64(&t->buf, NX_PF_TE_FLOW_IDS, h | (uint64_t)1 << 63);
    }
}
