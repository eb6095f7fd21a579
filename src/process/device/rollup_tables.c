/*
 * rollup_tables.c — the IR hierarchy roll-ups: FrameworkInstruction,
 * HloInstruction, PenguinInstruction, BirInstruction and FrameworkNode.
 *
 * Rules (docs/processing.md, "Activity, summaries and roll-ups"):
 *
 * - Membership. An executed instruction (a trace record, joined with its
 *   program instruction) belongs to the FrameworkInstruction row of its
 *   program's raw_framework_id, the HloInstruction row of its raw_hlo_id, the
 *   PenguinInstruction row of its raw_penguin_id and the BirInstruction row of
 *   (raw_bir_id, pcore_idx). Ids are per program: rows of different programs
 *   never merge. An instruction whose id at a level is absent (-1) is in no row
 *   of that level. Traces of the same program share rows.
 * - FrameworkNode: framework_name split on '/' gives a path of nodes; the
 *   instruction belongs to every prefix ("A", "A/B", "A/B/aten.add"). A node's
 *   node_name is that full prefix (unique); parent_name is the prefix one level
 *   up ("" at the top); children_names lists the child prefixes that ran, as
 *   "[A/B, A/C]" (no quotes, ", " between names); children_ids lists their row
 *   numbers in this table as "[3, 7]". Nodes merge across programs by name.
 *   Rows are sorted by node_name (byte order); a node's id is its row number
 *   (0-based).
 * - Representative. The raw ids and names of an IR row come from the member
 *   program instruction with the lowest index (first in the program's order);
 *   absent raw ids are written as -1 because the columns are required.
 *   bir_name is its bir_instruction_name, or "<subgraph>:<raw_bir_id>" when
 *   empty; hlo_name / penguin_name / framework_name are the instruction's.
 *   BirInstruction.modular_flow_invocation_idx is 0 (format 1.0 records no
 *   modular flow; the column is required); the other levels leave it null.
 * - Time. start_ts = min member start, end_ts = max member end.
 *   time_intervals = the union of the members' [start, end] intervals (merge on
 *   overlap or touch), written "[[s1, e1], [s2, e2]]" in ns, start order.
 *   Cap: a row keeps at most 64 intervals; when one more is needed, adjacent
 *   pairs are merged (each pair becomes [first start, second end], the gap
 *   between them included, values summed), halving the list. Memory is then at
 *   most rows x 64 intervals.
 * - Per-interval values, summed over the members that fell into the interval:
 *   element_count_per_interval = tensor_elements, transpose_element_count_
 *   per_interval = tensor_elements_transpose, hbm_transfer_size_per_interval =
 *   hbm_read_bytes + hbm_write_bytes (absent = 0). IR levels write them as
 *   int64 lists, FrameworkNode as text "[1, 2]". FrameworkNode also keeps
 *   total_time_<engine> per interval (sum of that engine's member durations).
 * - Totals: hbm/sbuf read/write bytes = sums of members' values;
 *   load_weight_bytes = sum of weight_queue_bytes (the bytes the Tensor engine
 *   pulled through its weight queue, i.e. LDWEIGHTS); <engine>_engine_
 *   instruction_count = members on that engine; total_channels_scalar/vector =
 *   sum of `channels` of Scalar/Vector members.
 * - FrameworkNode utilisation, with peak = 2 x tensor_rows x tensor_cols x
 *   tensor_clock_hz and hbm_bw = hbm_ddr_bandwidth of the first trace's
 *   program, active = sum of interval lengths:
 *   mfu = 100 x sum raw_flops / (peak x active_s); hfu the same with raw_flops
 *   + flops_transpose; *_per_interval the same per interval, and
 *   mbu_per_interval = 100 x hbm transfer bytes / (hbm_bw x interval_s);
 *   0 for an interval of zero length; mfu/hfu null when active is 0.
 * - IR rows are ordered by start_ts (ties: program, then raw id, then pcore);
 *   id = row number. Only rows with at least one executed member are written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"
#include "process/device/sum_guard.h"
#include "util/decimal.h"
#include "util/strbuf.h"

#define MAX_INTERVALS 64
#define NONE UINT32_MAX

enum { LV_FRAMEWORK, LV_HLO, LV_PENGUIN, LV_BIR, LV_IR_COUNT };
/* Per-interval values: IR levels use the first 3, nodes all. */
enum { V_ELEM, V_TELEM, V_HBM, V_MFLOPS, V_HFLOPS, V_ETIME0, V_COUNT = V_ETIME0 + NX_ENGINE_COUNT };
#define IR_VALUES 3

typedef struct rrow {
    int64_t start, end;
    bool seen;
    uint32_t prog, pcore;
    int64_t key;                     /* raw id (IR levels) */
    const nx_prog_instr *rep;        /* representative instruction (IR levels) */
    int64_t hbm_r, hbm_w, sbuf_r, sbuf_w, load_w, ch_scalar, ch_vector, mflops, hflops;
    int64_t eng_count[NX_ENGINE_COUNT];
    int64_t *iv;                     /* n x (2 + width): start, end, values */
    uint32_t n, cap;
} rrow;

typedef struct node {
    char *path;
    uint32_t parent;                 /* NONE at the top */
    uint64_t hash;
    rrow r;
} node;

/* What a member adds to a row, worked out once per instruction record (absent
 * and negative values count as 0), not once per row it joins. */
typedef struct member_vals {
    int64_t elem, telem, hbm, mf, hf;            /* per interval */
    int64_t hbm_r, hbm_w, sbuf_r, sbuf_w, load_w; /* totals */
    int64_t ch_scalar, ch_vector;
} member_vals;

/* Members waiting to be added to one row: consecutive members of a row whose
 * intervals touch or overlap (each starts by the latest end so far) would all
 * land in the same interval, so they are summed here and added at once, which
 * gives the row exactly what adding them one by one gives. Instructions of one
 * framework op or HLO run back to back, and every instruction joins the root
 * nodes of its FrameworkNode path: most members are summed here and the rows,
 * scattered in memory, are touched once per run instead of once per member. */
typedef struct pending {
    rrow *r;                         /* NULL: none */
    int64_t a, b;                    /* first member's start, latest end */
    member_vals v;                   /* sums */
    int64_t count[NX_ENGINE_COUNT];  /* members per engine */
    int64_t etime[NX_ENGINE_COUNT];  /* their durations per engine */
} pending;

/* Chain depths with a pending member of their own; deeper nodes are added directly. */
#define PENDING_DEPTH 16

/* A BirInstruction member, waiting to be added. Bir rows are one per program
 * instruction (and pcore), so consecutive records almost never share one, and
 * each row's turn comes round once per program iteration, long after its memory
 * left the cache: added as they arrive, nearly every member cost a cache miss on
 * its row and another on the row's latest interval. So members are collected
 * (BIR_BATCH at a time: two fixed arrays of 1.5 MiB; larger batches made
 * longer bursts that stalled the pipeline), grouped by row with a counting sort
 * that keeps each row's members in arrival order, and added row after row. A
 * row's result depends only on the order of its own members, so it is the same. */
typedef struct bir_member {
    uint32_t row;                    /* into rows[LV_BIR] */
    uint32_t ix;                     /* the member's instruction, in the row's program */
    int64_t a, b;
} bir_member;
#define BIR_BATCH ((size_t)1 << 16)

typedef struct rollup_sink {
    rrow *rows[LV_IR_COUNT];
    size_t n_rows[LV_IR_COUNT];
    uint32_t **map[LV_IR_COUNT];     /* [level][program][instruction] -> row (Bir: first pcore's) */
    uint32_t *npc;                   /* per program: pcores per Bir id */
    node *nodes;
    size_t n_nodes, cap_nodes;
    uint32_t *node_slots;            /* open-addressing hash of node paths */
    size_t n_slots;
    uint32_t **chain_off;            /* per program: instruction -> offset into chain (n+1 entries) */
    uint32_t **chain;                /* per program: node indices, leaf last */
    size_t n_progs;
    pending pend[LV_IR_COUNT];       /* per IR level */
    pending pend_node[PENDING_DEPTH];   /* per FrameworkNode depth */
    nx_program *const *progs;
    bir_member *bir, *bir_sorted;    /* BIR_BATCH each: arrival order, by row */
    size_t n_bir;
    uint32_t *bir_first;             /* n_rows[LV_BIR] + 1: counting sort offsets */
    nx_sum_guard sums;
} rollup_sink;

static int oom(nx_error *err)
{
    snprintf(err->msg, sizeof err->msg, "IR roll-up tables: out of memory");
    return -1;
}

static void rollup_free(rollup_sink *s)
{
    if (!s)
        return;
    for (int l = 0; l < LV_IR_COUNT; l++) {
        for (size_t i = 0; i < s->n_rows[l]; i++)
            free(s->rows[l][i].iv);
        free(s->rows[l]);
        if (s->map[l])
            for (size_t p = 0; p < s->n_progs; p++)
                free(s->map[l][p]);
        free(s->map[l]);
    }
    for (size_t i = 0; i < s->n_nodes; i++) {
        free(s->nodes[i].path);
        free(s->nodes[i].r.iv);
    }
    free(s->nodes);
    free(s->node_slots);
    if (s->chain_off)
        for (size_t p = 0; p < s->n_progs; p++)
            free(s->chain_off[p]);
    if (s->chain)
        for (size_t p = 0; p < s->n_progs; p++)
            free(s->chain[p]);
    free(s->chain_off);
    free(s->chain);
    free(s->npc);
    free(s->bir);
    free(s->bir_sorted);
    free(s->bir_first);
    free(s);
}

static int64_t raw_id(const nx_prog_instr *in, int level)
{
    switch (level) {
    case LV_FRAMEWORK: return in->raw_framework_id;
    case LV_HLO: return in->raw_hlo_id;
    case LV_PENGUIN: return in->raw_penguin_id;
    default: return in->raw_bir_id;
    }
}

typedef struct id_ix {
    int64_t id;
    uint32_t ix;
} id_ix;

static int cmp_id_ix(const void *pa, const void *pb)
{
    const id_ix *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->ix < b->ix ? -1 : a->ix > b->ix;
}

/* Rows of one level for program p: one per distinct raw id (x pcores for Bir). */
static int build_level(rollup_sink *s, const nx_program *pr, uint32_t p, int level, id_ix *tmp)
{
    size_t n = 0;
    for (size_t i = 0; i < pr->n_instrs; i++) {
        s->map[level][p][i] = NONE;
        int64_t id = raw_id(&pr->instrs[i], level);
        if (id != NX_ABSENT)
            tmp[n++] = (id_ix){id, (uint32_t)i};
    }
    qsort(tmp, n, sizeof *tmp, cmp_id_ix);
    uint32_t per = level == LV_BIR ? s->npc[p] : 1;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && tmp[j].id == tmp[i].id)
            j++;
        rrow *v = realloc(s->rows[level], (s->n_rows[level] + per) * sizeof *v);
        if (!v)
            return -1;
        s->rows[level] = v;
        uint32_t base = (uint32_t)s->n_rows[level];
        for (uint32_t k = 0; k < per; k++)
            v[base + k] = (rrow){.prog = p, .pcore = k, .key = tmp[i].id, .rep = &pr->instrs[tmp[i].ix]};
        s->n_rows[level] += per;
        for (size_t k = i; k < j; k++)
            s->map[level][p][tmp[k].ix] = base;
        i = j;
    }
    return 0;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* Index of the node for path[0..n), added (with `parent`) when new; NONE: out of memory. */
static uint32_t intern_node(rollup_sink *s, const char *path, size_t n, uint32_t parent)
{
    if (2 * (s->n_nodes + 1) > s->n_slots) {
        size_t ns = s->n_slots ? 2 * s->n_slots : 256;
        uint32_t *sl = malloc(ns * sizeof *sl);
        if (!sl)
            return NONE;
        for (size_t i = 0; i < ns; i++)
            sl[i] = NONE;
        for (size_t i = 0; i < s->n_nodes; i++) {
            size_t h = (size_t)(s->nodes[i].hash & (ns - 1));
            while (sl[h] != NONE)
                h = (h + 1) & (ns - 1);
            sl[h] = (uint32_t)i;
        }
        free(s->node_slots);
        s->node_slots = sl;
        s->n_slots = ns;
    }
    uint64_t hv = hash_bytes(path, n);
    size_t h = (size_t)(hv & (s->n_slots - 1));
    while (s->node_slots[h] != NONE) {
        const node *nd = &s->nodes[s->node_slots[h]];
        if (nd->hash == hv && strlen(nd->path) == n && memcmp(nd->path, path, n) == 0)
            return s->node_slots[h];
        h = (h + 1) & (s->n_slots - 1);
    }
    if (s->n_nodes == s->cap_nodes) {
        size_t cap = s->cap_nodes ? 2 * s->cap_nodes : 64;
        node *v = realloc(s->nodes, cap * sizeof *v);
        if (!v)
            return NONE;
        s->nodes = v;
        s->cap_nodes = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return NONE;
    memcpy(copy, path, n);
    copy[n] = '\0';
    s->nodes[s->n_nodes] = (node){.path = copy, .parent = parent, .hash = hv};
    s->node_slots[h] = (uint32_t)s->n_nodes;
    return (uint32_t)s->n_nodes++;
}

static int build_chains(rollup_sink *s, const nx_program *pr, uint32_t p)
{
    size_t total = 0, cap = 0;
    uint32_t *chain = NULL;
    uint32_t *off = malloc((pr->n_instrs + 1) * sizeof *off);
    if (!off)
        return -1;
    s->chain_off[p] = off;
    for (size_t i = 0; i < pr->n_instrs; i++) {
        off[i] = (uint32_t)total;
        const char *fw = pr->instrs[i].framework_name;
        if (!fw[0])
            continue;
        uint32_t parent = NONE;
        size_t len = strlen(fw);
        for (size_t k = 0; k <= len; k++) {
            if (k < len && fw[k] != '/')
                continue;
            if (k == 0 || fw[k - 1] == '/')   /* empty segment: not a node */
                continue;
            uint32_t nd = intern_node(s, fw, k, parent);
            if (nd == NONE)
                return -1;
            if (total == cap) {
                cap = cap ? 2 * cap : 1024;
                uint32_t *v = realloc(chain, cap * sizeof *v);
                if (!v) {
                    free(chain);
                    return -1;
                }
                chain = v;
            }
            chain[total++] = nd;
            parent = nd;
        }
    }
    off[pr->n_instrs] = (uint32_t)total;
    s->chain[p] = chain;
    return 0;
}

static int rollup_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    *state = NULL;
    if (ctx->n_traces == 0)
        return 0;
    rollup_sink *s = calloc(1, sizeof *s);
    if (!s)
        return oom(err);
    s->n_progs = ctx->n_progs;
    size_t np = ctx->n_progs + 1;
    s->npc = calloc(np, sizeof *s->npc);
    s->chain_off = calloc(np, sizeof *s->chain_off);
    s->chain = calloc(np, sizeof *s->chain);
    if (!s->npc || !s->chain_off || !s->chain)
        goto nomem;
    for (int l = 0; l < LV_IR_COUNT; l++)
        if (!(s->map[l] = calloc(np, sizeof *s->map[l])))
            goto nomem;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *pr = ctx->progs[p];
        s->npc[p] = ctx->prog_pcores[p] ? ctx->prog_pcores[p] : 1;
        id_ix *tmp = malloc((pr->n_instrs + 1) * sizeof *tmp);
        if (!tmp)
            goto nomem;
        for (int l = 0; l < LV_IR_COUNT; l++) {
            s->map[l][p] = malloc((pr->n_instrs + 1) * sizeof *s->map[l][p]);
            if (!s->map[l][p] || build_level(s, pr, (uint32_t)p, l, tmp) != 0) {
                free(tmp);
                goto nomem;
            }
        }
        free(tmp);
        if (build_chains(s, pr, (uint32_t)p) != 0)
            goto nomem;
    }
    s->progs = ctx->progs;
    if (!(s->bir = malloc(BIR_BATCH * sizeof *s->bir)) || !(s->bir_sorted = malloc(BIR_BATCH * sizeof *s->bir)) ||
        !(s->bir_first = malloc((s->n_rows[LV_BIR] + 1) * sizeof *s->bir_first)))
        goto nomem;
    *state = s;
    return 0;
nomem:
    rollup_free(s);
    return oom(err);
}

/* Merges adjacent pairs of intervals, halving the list (the cap rule). */
static void halve(nx_sum_guard *g, rrow *r, unsigned width)
{
    unsigned w = 2 + width;
    uint32_t m = 0;
    for (uint32_t i = 0; i < r->n; i += 2, m++) {
        int64_t *dst = &r->iv[(size_t)m * w], *a = &r->iv[(size_t)i * w];
        if (dst != a)
            memcpy(dst, a, w * sizeof *dst);
        if (i + 1 < r->n) {
            const int64_t *b = &r->iv[(size_t)(i + 1) * w];
            if (b[1] > dst[1])
                dst[1] = b[1];
            for (unsigned k = 0; k < width; k++)
                nx_sum_add(g, &dst[2 + k], b[2 + k], "an interval's values");
        }
    }
    r->n = m;
}

static int64_t pos(int64_t v)
{
    return v > 0 ? v : 0;
}

static void member_vals_of(nx_sum_guard *g, member_vals *m, const nx_prog_instr *in, unsigned engine)
{
    m->elem = pos(in->tensor_elements);
    m->telem = pos(in->tensor_elements_transpose);
    m->hbm_r = pos(in->hbm_read_bytes);
    m->hbm_w = pos(in->hbm_write_bytes);
    m->hbm = m->hbm_r;
    nx_sum_add(g, &m->hbm, m->hbm_w, "HBM bytes");
    m->mf = pos(in->raw_flops);
    m->hf = m->mf;
    nx_sum_add(g, &m->hf, pos(in->flops_transpose), "hardware FLOPs");
    m->sbuf_r = pos(in->sbuf_read_bytes);
    m->sbuf_w = pos(in->sbuf_write_bytes);
    m->load_w = pos(in->weight_queue_bytes);
    int64_t ch = pos(in->channels);
    m->ch_scalar = engine == NX_ENGINE_SCALAR ? ch : 0;
    m->ch_vector = engine == NX_ENGINE_VECTOR ? ch : 0;
}

/* Adds the members summed in p to their row (the rule of the header: a new
 * interval when they start after the row's last one ends, else that one grows). */
static int add_pending(nx_sum_guard *g, const pending *p, unsigned width)
{
    rrow *r = p->r;
    unsigned w = 2 + width;
    int64_t a = p->a, b = p->b;
    if (!r->seen) {
        r->seen = true;
        r->start = a;
        r->end = b;
    } else {
        if (a < r->start)
            r->start = a;
        if (b > r->end)
            r->end = b;
    }
    int64_t *last = r->n ? &r->iv[(size_t)(r->n - 1) * w] : NULL;
    if (!last || a > last[1]) {
        if (r->n == MAX_INTERVALS)
            halve(g, r, width);
        if (r->n == r->cap) {
            uint32_t cap = r->cap + r->cap / 2 + 2;   /* 1.5x: most rows stay small */
            if (cap > MAX_INTERVALS)
                cap = MAX_INTERVALS;
            int64_t *v = realloc(r->iv, (size_t)cap * w * sizeof *v);
            if (!v)
                return -1;
            r->iv = v;
            r->cap = cap;
        }
        last = &r->iv[(size_t)r->n++ * w];
        memset(last, 0, w * sizeof *last);
        last[0] = a;
        last[1] = b;
    } else if (b > last[1]) {
        last[1] = b;
    }
    const member_vals *m = &p->v;
    nx_sum_add(g, &last[2 + V_ELEM], m->elem, "tensor elements");
    nx_sum_add(g, &last[2 + V_TELEM], m->telem, "transposed tensor elements");
    nx_sum_add(g, &last[2 + V_HBM], m->hbm, "HBM bytes");
    if (width > IR_VALUES) {
        nx_sum_add(g, &last[2 + V_MFLOPS], m->mf, "model FLOPs");
        nx_sum_add(g, &last[2 + V_HFLOPS], m->hf, "hardware FLOPs");
        for (unsigned e = 0; e < NX_ENGINE_COUNT; e++)
            nx_sum_add(g, &last[2 + V_ETIME0 + e], p->etime[e], "engine time");
    }
    nx_sum_add(g, &r->hbm_r, m->hbm_r, "HBM read bytes");
    nx_sum_add(g, &r->hbm_w, m->hbm_w, "HBM write bytes");
    nx_sum_add(g, &r->sbuf_r, m->sbuf_r, "SBUF read bytes");
    nx_sum_add(g, &r->sbuf_w, m->sbuf_w, "SBUF write bytes");
    nx_sum_add(g, &r->load_w, m->load_w, "weight load bytes");
    nx_sum_add(g, &r->mflops, m->mf, "model FLOPs");
    nx_sum_add(g, &r->hflops, m->hf, "hardware FLOPs");
    for (unsigned e = 0; e < NX_ENGINE_COUNT; e++)
        r->eng_count[e] += p->count[e];
    nx_sum_add(g, &r->ch_scalar, m->ch_scalar, "scalar channels");
    nx_sum_add(g, &r->ch_vector, m->ch_vector, "vector channels");
    return 0;
}

/* One member [a, b] of row r: summed into p when it continues p's members,
 * else p's are added to their row and p starts over with this one. */
static int add_member(nx_sum_guard *g, pending *p, rrow *r, unsigned width, const member_vals *m, unsigned engine,
                      int64_t a, int64_t b)
{
    if (p->r == r && a <= p->b) {
        if (b > p->b)
            p->b = b;
        member_vals *v = &p->v;
        nx_sum_add(g, &v->elem, m->elem, "tensor elements");
        nx_sum_add(g, &v->telem, m->telem, "transposed tensor elements");
        nx_sum_add(g, &v->hbm, m->hbm, "HBM bytes");
        nx_sum_add(g, &v->mf, m->mf, "model FLOPs");
        nx_sum_add(g, &v->hf, m->hf, "hardware FLOPs");
        nx_sum_add(g, &v->hbm_r, m->hbm_r, "HBM read bytes");
        nx_sum_add(g, &v->hbm_w, m->hbm_w, "HBM write bytes");
        nx_sum_add(g, &v->sbuf_r, m->sbuf_r, "SBUF read bytes");
        nx_sum_add(g, &v->sbuf_w, m->sbuf_w, "SBUF write bytes");
        nx_sum_add(g, &v->load_w, m->load_w, "weight load bytes");
        nx_sum_add(g, &v->ch_scalar, m->ch_scalar, "scalar channels");
        nx_sum_add(g, &v->ch_vector, m->ch_vector, "vector channels");
    } else {
        if (p->r && add_pending(g, p, width) != 0)
            return -1;
        *p = (pending){.r = r, .a = a, .b = b, .v = *m};
    }
    p->count[engine]++;
    nx_sum_add(g, &p->etime[engine], b - a, "engine time");
    return 0;
}

/* A member of a node deeper than PENDING_DEPTH, added at once. (Not inline in
 * rollup_event(): zeroing a pending for every node of every chain showed as a
 * third of that function's time.) */
static int add_deep_member(nx_sum_guard *g, rrow *r, const member_vals *m, unsigned engine, int64_t a, int64_t b)
{
    pending one = {0};
    return add_member(g, &one, r, V_COUNT, m, engine, a, b) != 0 || add_pending(g, &one, V_COUNT) != 0 ? -1 : 0;
}

/* Adds the collected Bir members to their rows, grouped by row (see bir_member). */
static int bir_apply(rollup_sink *s)
{
    size_t nr = s->n_rows[LV_BIR], n = s->n_bir;
    uint32_t *first = s->bir_first;
    memset(first, 0, (nr + 1) * sizeof *first);
    for (size_t k = 0; k < n; k++)
        first[s->bir[k].row + 1]++;
    for (size_t r = 0; r < nr; r++)
        first[r + 1] += first[r];
    for (size_t k = 0; k < n; k++)
        s->bir_sorted[first[s->bir[k].row]++] = s->bir[k];
    const nx_prog_instr *prev = NULL;
    member_vals m;
    for (size_t k = 0; k < n; k++) {
        const bir_member *b = &s->bir_sorted[k];
        rrow *r = &s->rows[LV_BIR][b->row];
        const nx_prog_instr *in = &s->progs[r->prog]->instrs[b->ix];
        if (in != prev)   /* a row's members are mostly one instruction, now side by side */
            member_vals_of(&s->sums, &m, in, in->engine);
        prev = in;
        if (add_member(&s->sums, &s->pend[LV_BIR], r, IR_VALUES, &m, in->engine, b->a, b->b) != 0)
            return -1;
    }
    s->n_bir = 0;
    return 0;
}

/* Adds every pending member to its row (before the rows are read). */
static int flush_pending(rollup_sink *s)
{
    if (bir_apply(s) != 0)
        return -1;
    for (int l = 0; l < LV_IR_COUNT; l++)
        if (s->pend[l].r && add_pending(&s->sums, &s->pend[l], IR_VALUES) != 0)
            return -1;
    for (int d = 0; d < PENDING_DEPTH; d++)
        if (s->pend_node[d].r && add_pending(&s->sums, &s->pend_node[d], V_COUNT) != 0)
            return -1;
    memset(s->pend, 0, sizeof s->pend);
    memset(s->pend_node, 0, sizeof s->pend_node);
    return 0;
}

static int rollup_event(void *state, const nx_device_event *ev, nx_error *err)
{
    rollup_sink *s = state;
    const nx_trace_record *rec = ev->rec;
    const nx_program *pr = ev->trace->prog;
    const nx_prog_instr *in = ev->instr;
    size_t p = ev->trace->prog_index, i = (size_t)(in - pr->instrs);
    unsigned e = rec->u.instr.engine;
    s->sums.at = ev;
    member_vals m;
    member_vals_of(&s->sums, &m, in, e);
    for (int l = 0; l < LV_IR_COUNT; l++) {
        uint32_t row = s->map[l][p][i];
        if (row == NONE)
            continue;
        if (l == LV_BIR) {
            row += rec->pcore < s->npc[p] ? rec->pcore : 0;
            s->bir[s->n_bir++] = (bir_member){row, (uint32_t)i, ev->start_ns, ev->end_ns};
            if (s->n_bir == BIR_BATCH && bir_apply(s) != 0)
                return oom(err);
            continue;
        }
        if (add_member(&s->sums, &s->pend[l], &s->rows[l][row], IR_VALUES, &m, e, ev->start_ns, ev->end_ns) != 0)
            return oom(err);
    }
    for (uint32_t k = s->chain_off[p][i], d = 0; k < s->chain_off[p][i + 1]; k++, d++) {
        rrow *r = &s->nodes[s->chain[p][k]].r;
        if (d < PENDING_DEPTH) {
            if (add_member(&s->sums, &s->pend_node[d], r, V_COUNT, &m, e, ev->start_ns, ev->end_ns) != 0)
                return oom(err);
        } else if (add_deep_member(&s->sums, r, &m, e, ev->start_ns, ev->end_ns) != 0) {
            return oom(err);
        }
    }
    return nx_sum_error(&s->sums, "IR roll-up tables", NULL, err);
}

/* --------------------------------------------------------------- text -- */

static void sb_i64(nx_strbuf *b, int64_t v)
{
    char tmp[NX_I64_TEXT_MAX];
    nx_strbuf_append(b, tmp, nx_i64_text(tmp, v));
}

/* "[[s, e], [s, e], ...]": room for every interval is reserved once and the
 * numbers are written in place. */
static const char *sb_intervals(nx_strbuf *b, const rrow *r, unsigned width)
{
    b->len = 0;
    char *o0 = nx_strbuf_reserve(b, 2 + (size_t)r->n * 48);   /* ", [" + 2 x 20 + ", " + "]" <= 48 */
    if (!o0)
        return NULL;
    char *o = o0;
    *o++ = '[';
    for (uint32_t i = 0; i < r->n; i++) {
        const int64_t *v = &r->iv[(size_t)i * (2 + width)];
        if (i) {
            memcpy(o, ", ", 2);
            o += 2;
        }
        *o++ = '[';
        for (int k = 0; k < 2; k++) {
            o += nx_i64_text(o, v[k]);
            if (k == 0) {
                memcpy(o, ", ", 2);
                o += 2;
            }
        }
        *o++ = ']';
    }
    *o++ = ']';
    nx_strbuf_commit(b, (size_t)(o - o0));
    return b->data;
}

static const char *sb_values(nx_strbuf *b, const rrow *r, unsigned width, unsigned k)
{
    b->len = 0;
    nx_strbuf_putc(b, '[');
    for (uint32_t i = 0; i < r->n; i++) {
        if (i)
            nx_strbuf_append(b, ", ", 2);
        sb_i64(b, r->iv[(size_t)i * (2 + width) + 2 + k]);
    }
    nx_strbuf_putc(b, ']');
    return b->failed ? NULL : b->data;
}

/* 100 x value_k / (rate x interval seconds), per interval, as "%.6g". */
static const char *sb_util(nx_strbuf *b, const rrow *r, unsigned width, unsigned k, double rate)
{
    b->len = 0;
    nx_strbuf_putc(b, '[');
    for (uint32_t i = 0; i < r->n; i++) {
        const int64_t *v = &r->iv[(size_t)i * (2 + width)];
        double secs = ((double)v[1] - (double)v[0]) / 1e9;   /* in double: no wrap across traces */
        double u = secs > 0 && rate > 0 ? 100.0 * (double)v[2 + k] / (rate * secs) : 0.0;
        char num[32];
        int len = snprintf(num, sizeof num, "%s%.6g", i ? ", " : "", u);
        nx_strbuf_append(b, num, len > 0 ? (size_t)len : 0);
    }
    nx_strbuf_putc(b, ']');
    return b->failed ? NULL : b->data;
}

/* ------------------------------------------------------------ writing -- */

/* Sort keys, copied out of the rows so qsort needs no context. */
typedef struct row_key {
    int64_t start, key;
    uint32_t prog, pcore, ix;
} row_key;

static int cmp_row_key(const void *pa, const void *pb)
{
    const row_key *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->prog != b->prog)
        return a->prog < b->prog ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->pcore < b->pcore ? -1 : a->pcore > b->pcore;
}

static const char *const LEVEL_TABLE[LV_IR_COUNT] = {"FrameworkInstruction", "HloInstruction",
                                                     "PenguinInstruction", "BirInstruction"};

static int write_level(rollup_sink *s, const nx_process_ctx *ctx, int l, unsigned *tables, nx_error *err)
{
    size_t n = 0;
    row_key *order = malloc((s->n_rows[l] + 1) * sizeof *order);
    if (!order)
        return oom(err);
    for (size_t i = 0; i < s->n_rows[l]; i++) {
        const rrow *w = &s->rows[l][i];
        if (w->seen)
            order[n++] = (row_key){.start = w->start, .key = w->key, .prog = w->prog, .pcore = w->pcore,
                                   .ix = (uint32_t)i};
    }
    qsort(order, n, sizeof *order, cmp_row_key);

    nx_row r;
    nx_strbuf b = NX_STRBUF_INIT;
    int64_t *tmp = malloc((MAX_INTERVALS + 1) * sizeof *tmp);
    if (!tmp || nx_row_open(&r, &ctx->dest, LEVEL_TABLE[l], err) != 0) {
        free(order);
        free(tmp);
        return tmp ? -1 : oom(err);
    }
    size_t c_id = nx_row_col(&r, "id"), c_bir = nx_row_col(&r, "raw_bir_id"),
           c_pen = nx_row_col(&r, "raw_penguin_id"), c_hlo = nx_row_col(&r, "raw_hlo_id"),
           c_fw = nx_row_col(&r, "raw_framework_id"), c_mf = nx_row_col(&r, "modular_flow_invocation_idx"),
           c_start = nx_row_col(&r, "start_ts"), c_end = nx_row_col(&r, "end_ts"),
           c_iv = nx_row_col(&r, "time_intervals"), c_elem = nx_row_col(&r, "element_count_per_interval"),
           c_telem = nx_row_col(&r, "transpose_element_count_per_interval"),
           c_hbm = nx_row_col(&r, "hbm_transfer_size_per_interval"), c_hr = nx_row_col(&r, "hbm_read_bytes"),
           c_hw = nx_row_col(&r, "hbm_write_bytes"), c_sr = nx_row_col(&r, "sbuf_read_bytes"),
           c_sw = nx_row_col(&r, "sbuf_write_bytes"), c_lw = nx_row_col(&r, "load_weight_bytes");
    size_t c_name = nx_row_col(&r, l == LV_FRAMEWORK ? "framework_name" : l == LV_HLO ? "hlo_name"
                                   : l == LV_PENGUIN ? "penguin_name" : "bir_name");
    size_t c_pcore = l == LV_BIR ? nx_row_col(&r, "pcore_idx") : 0;
    size_t c_cnt[NX_ENGINE_COUNT] = {0};
    if (l == LV_FRAMEWORK)
        for (unsigned e = 0; e < NX_ENGINE_COUNT; e++) {
            char col[64];
            snprintf(col, sizeof col, "%s_engine_instruction_count", nx_engine_name(e));
            c_cnt[e] = nx_row_col(&r, col);
        }
    char namebuf[256];
    for (size_t k = 0; k < n; k++) {
        const rrow *w = &s->rows[l][order[k].ix];
        const nx_prog_instr *in = w->rep;
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_i64(&r, c_id, (int64_t)k);
        nx_row_i64(&r, c_bir, in->raw_bir_id);
        nx_row_i64(&r, c_pen, in->raw_penguin_id);
        nx_row_i64(&r, c_hlo, in->raw_hlo_id);
        nx_row_i64(&r, c_fw, in->raw_framework_id);
        switch (l) {
        case LV_FRAMEWORK: nx_row_opt_str(&r, c_name, in->framework_name); break;
        case LV_HLO: nx_row_str(&r, c_name, in->hlo_name); break;
        case LV_PENGUIN: nx_row_str(&r, c_name, in->penguin_name); break;
        default:
            if (in->bir_instruction_name[0])
                nx_row_str(&r, c_name, in->bir_instruction_name);
            else {
                snprintf(namebuf, sizeof namebuf, "%s:%" PRId64, in->subgraph, in->raw_bir_id);
                nx_row_str(&r, c_name, namebuf);
            }
            nx_row_i64(&r, c_mf, 0);
            nx_row_i64(&r, c_pcore, w->pcore);
            break;
        }
        nx_row_i64(&r, c_start, w->start);
        nx_row_i64(&r, c_end, w->end);
        const char *txt = sb_intervals(&b, w, IR_VALUES);
        if (!txt)
            goto nomem;
        nx_row_str(&r, c_iv, txt);
        size_t cols[3] = {c_elem, c_telem, c_hbm};
        for (unsigned v = 0; v < 3; v++) {
            for (uint32_t i = 0; i < w->n; i++)
                tmp[i] = w->iv[(size_t)i * (2 + IR_VALUES) + 2 + v];
            nx_row_list_i64(&r, cols[v], tmp, w->n);
        }
        nx_row_i64(&r, c_hr, w->hbm_r);
        nx_row_i64(&r, c_hw, w->hbm_w);
        nx_row_i64(&r, c_sr, w->sbuf_r);
        nx_row_i64(&r, c_sw, w->sbuf_w);
        nx_row_i64(&r, c_lw, w->load_w);
        if (l == LV_FRAMEWORK)
            for (unsigned e = 0; e < NX_ENGINE_COUNT; e++)
                nx_row_i64(&r, c_cnt[e], w->eng_count[e]);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    free(order);
    free(tmp);
    nx_strbuf_free(&b);
    return nx_row_close(&r, true, tables, err);
nomem:
    oom(err);
fail:
    nx_row_discard(&r);
    free(order);
    free(tmp);
    nx_strbuf_free(&b);
    return -1;
}

typedef struct node_key {
    const char *path;
    uint32_t ix;
} node_key;

static int cmp_node_key(const void *pa, const void *pb)
{
    return strcmp(((const node_key *)pa)->path, ((const node_key *)pb)->path);
}

static int write_nodes(rollup_sink *s, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    size_t n = 0;
    node_key *order = malloc((s->n_nodes + 1) * sizeof *order);
    if (!order)
        return oom(err);
    for (size_t i = 0; i < s->n_nodes; i++)
        if (s->nodes[i].r.seen)
            order[n++] = (node_key){s->nodes[i].path, (uint32_t)i};
    qsort(order, n, sizeof *order, cmp_node_key);
    const nx_prog_hardware *hw = &ctx->traces[0].prog->hw;
    double peak = 2.0 * hw->tensor_rows * hw->tensor_cols * (double)hw->tensor_clock_hz;
    double hbm_bw = (double)hw->hbm_ddr_bandwidth;

    nx_row r;
    nx_strbuf b = NX_STRBUF_INIT, b2 = NX_STRBUF_INIT;
    if (nx_row_open(&r, &ctx->dest, "FrameworkNode", err) != 0) {
        free(order);
        return -1;
    }
#define C(name) size_t c_##name = nx_row_col(&r, #name);
    C(node_name) C(children_names) C(parent_name) C(children_ids) C(start_ts) C(end_ts) C(time_intervals)
    C(element_count_per_interval) C(transpose_element_count_per_interval) C(hbm_transfer_size_per_interval)
    C(hfu) C(mfu) C(hfu_per_interval) C(mfu_per_interval) C(mbu_per_interval) C(hbm_read_bytes)
    C(hbm_write_bytes) C(sbuf_read_bytes) C(sbuf_write_bytes) C(load_weight_bytes) C(total_channels_scalar)
    C(total_channels_vector)
#undef C
    size_t c_cnt[NX_ENGINE_COUNT], c_time[NX_ENGINE_COUNT];
    for (unsigned e = 0; e < NX_ENGINE_COUNT; e++) {
        char col[64];
        snprintf(col, sizeof col, "%s_engine_instruction_count", nx_engine_name(e));
        c_cnt[e] = nx_row_col(&r, col);
        snprintf(col, sizeof col, "total_time_%s", nx_engine_name(e));
        c_time[e] = nx_row_col(&r, col);
    }
    for (size_t k = 0; k < n; k++) {
        const node *nd = &s->nodes[order[k].ix];
        const rrow *w = &nd->r;
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_node_name, nd->path);
        nx_row_str(&r, c_parent_name, nd->parent == NONE ? "" : s->nodes[nd->parent].path);
        /* Children: the rows whose parent is this node, in row order. */
        b.len = b2.len = 0;
        nx_strbuf_putc(&b, '[');
        nx_strbuf_putc(&b2, '[');
        bool first = true;
        for (size_t j = 0; j < n; j++)
            if (s->nodes[order[j].ix].parent == order[k].ix) {
                nx_strbuf_puts(&b, first ? "" : ", ");
                nx_strbuf_puts(&b, order[j].path);
                nx_strbuf_puts(&b2, first ? "" : ", ");
                sb_i64(&b2, (int64_t)j);
                first = false;
            }
        nx_strbuf_putc(&b, ']');
        nx_strbuf_putc(&b2, ']');
        if (b.failed || b2.failed)
            goto nomem;
        nx_row_str(&r, c_children_names, b.data);
        nx_row_str(&r, c_children_ids, b2.data);
        nx_row_i64(&r, c_start_ts, w->start);
        nx_row_i64(&r, c_end_ts, w->end);
        const char *t;
#define PUT(col, expr) if (!(t = (expr))) goto nomem; nx_row_str(&r, col, t);
        PUT(c_time_intervals, sb_intervals(&b, w, V_COUNT))
        PUT(c_element_count_per_interval, sb_values(&b, w, V_COUNT, V_ELEM))
        PUT(c_transpose_element_count_per_interval, sb_values(&b, w, V_COUNT, V_TELEM))
        PUT(c_hbm_transfer_size_per_interval, sb_values(&b, w, V_COUNT, V_HBM))
        PUT(c_hfu_per_interval, sb_util(&b, w, V_COUNT, V_HFLOPS, peak))
        PUT(c_mfu_per_interval, sb_util(&b, w, V_COUNT, V_MFLOPS, peak))
        PUT(c_mbu_per_interval, sb_util(&b, w, V_COUNT, V_HBM, hbm_bw))
        for (unsigned e = 0; e < NX_ENGINE_COUNT; e++) {
            PUT(c_time[e], sb_values(&b, w, V_COUNT, V_ETIME0 + e))
            nx_row_i64(&r, c_cnt[e], w->eng_count[e]);
        }
#undef PUT
        double active = 0;   /* ns, in double: only a ratio's denominator */
        for (uint32_t i = 0; i < w->n; i++)
            active += (double)w->iv[(size_t)i * (2 + V_COUNT) + 1] - (double)w->iv[(size_t)i * (2 + V_COUNT)];
        if (active > 0 && peak > 0) {
            nx_row_num(&r, c_hfu, 100.0 * (double)w->hflops / (peak * active / 1e9));
            nx_row_num(&r, c_mfu, 100.0 * (double)w->mflops / (peak * active / 1e9));
        }
        nx_row_i64(&r, c_hbm_read_bytes, w->hbm_r);
        nx_row_i64(&r, c_hbm_write_bytes, w->hbm_w);
        nx_row_i64(&r, c_sbuf_read_bytes, w->sbuf_r);
        nx_row_i64(&r, c_sbuf_write_bytes, w->sbuf_w);
        nx_row_i64(&r, c_load_weight_bytes, w->load_w);
        nx_row_i64(&r, c_total_channels_scalar, w->ch_scalar);
        nx_row_i64(&r, c_total_channels_vector, w->ch_vector);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    free(order);
    nx_strbuf_free(&b);
    nx_strbuf_free(&b2);
    return nx_row_close(&r, true, tables, err);
nomem:
    oom(err);
fail:
    nx_row_discard(&r);
    free(order);
    nx_strbuf_free(&b);
    nx_strbuf_free(&b2);
    return -1;
}

static int rollup_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    rollup_sink *s = state;
    if (!s)
        return 0;
    s->sums.at = NULL;
    int rc = flush_pending(s) != 0 ? oom(err) : 0;
    if (rc == 0)
        rc = nx_sum_error(&s->sums, "IR roll-up tables", ctx->n_traces == 1 ? ctx->traces[0].path : ctx->o->capture_dir,
                          err);
    for (int l = 0; l < LV_IR_COUNT && rc == 0; l++)
        rc = write_level(s, ctx, l, tables, err);
    if (rc == 0)
        rc = write_nodes(s, ctx, tables, err);
    rollup_free(s);
    return rc;
}

static void rollup_abort(void *state)
{
    rollup_free(state);
}

const nx_device_sink nx_sink_rollups = {
    .name = "IR roll-ups",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION),
    .open = rollup_open,
    .event = rollup_event,
    .finish = rollup_finish,
    .abort = rollup_abort,
};
