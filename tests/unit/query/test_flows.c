/*
 * test_flows.c — query/flows.h: the predecessors and successors of an event.
 *   - Device: random Instruction (two files) and DmaPacketAggregated rows and a
 *     random Flow table (edges between both tables, edges naming another
 *     table or an id no row has, null dependency_type and gap_time), in small
 *     pages; each instruction's and DMA block's flows checked against the
 *     edges read by brute force.
 *   - SystemProfileEvents: random flow_id lists (null, empty, one or two
 *     values); the events sharing a value, split by (start, ordinal), with the
 *     first shared value of the event's own list.
 *   - Chrome flow rows as the storage contract writes them: zero-duration "s"
 *     and "f" rows sharing "fwdbwd:617", an X whose list holds its correlation
 *     and its bind_id ("fwdbwd:617") and a kernel sharing the correlation.
 *   - A row that does not exist, a table the profile lacks, a table without
 *     flows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parquet/parquet.h"
#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/flows.h"
#include "test_rand.h"

#define N_INS 240
#define N_DMA 80
#define N_FLOW 400
#define N_SYS 160

typedef struct row {
    int64_t id, start, end, ordinal;
    char track[16];
    int n_flows;               /* SystemProfileEvents: -1 null list */
    char flows[2][4];
} row;

typedef struct flow {
    int in_t, out_t;           /* 0 instruction, 1 dma_block, 2 another table */
    int64_t in_id, out_id;
    const char *dep;
    bool has_gap;
    int64_t gap;
} flow;

static row INS[N_INS], DMA[N_DMA], SYS[N_SYS];
static flow FLOWS[N_FLOW];
static char dir[64];
static const char *const FLOW_TABLES[] = {"instruction", "dma_block", "semaphore"};

static nxpq_writer *open_table(const char *name, const nxpq_column_spec *cols, size_t n)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    nxpq_writer_options wo;
    nxpq_writer_options_init(&wo);
    wo.row_group_rows = 32;
    wo.page_rows = 8;
    nx_error err = {0};
    nxpq_writer *w = nxpq_writer_open(path, cols, n, &wo, &err);
    assert_non_null(w);
    return w;
}

static void close_table(nxpq_writer *w)
{
    nx_error err = {0};
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

static void put_str(nxpq_writer *w, size_t c, const char *s) { assert_int_equal(nxpq_put_string(w, c, s, strlen(s)), 0); }

/* rows in start order with ids base, base + step, ... written to name_0/_1 (split)
 * or name (split 0): columns start_ts, end_ts, id, and `track_col` holding the track. */
static void write_timed(const char *table, row *r, size_t n, size_t split, int64_t base, const char *track_col,
                        const char *prefix)
{
    int64_t t = 1000;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)(next_rand() % 5);
        r[i] = (row){.id = base + 2 * (int64_t)i, .start = t, .end = t + (int64_t)(next_rand() % 20)};
        snprintf(r[i].track, sizeof r[i].track, "%s%d", prefix, (int)(next_rand() % 3));
    }
    nxpq_column_spec cols[] = {{.name = "start_ts", .type = NXPQ_INT64}, {.name = "end_ts", .type = NXPQ_INT64},
                               {.name = "id", .type = NXPQ_INT64}, {.name = track_col, .type = NXPQ_STRING}};
    for (size_t f = 0; f < (split ? 2u : 1u); f++) {
        char name[64];
        if (split)
            snprintf(name, sizeof name, "%s_%zu.parquet", table, f);
        else
            snprintf(name, sizeof name, "%s.parquet", table);
        nxpq_writer *w = open_table(name, cols, 4);
        size_t lo = split && f ? split : 0, hi = split && !f ? split : n;
        for (size_t i = lo; i < hi; i++) {
            assert_int_equal(nxpq_put_int64(w, 0, r[i].start), 0);
            assert_int_equal(nxpq_put_int64(w, 1, r[i].end), 0);
            assert_int_equal(nxpq_put_int64(w, 2, r[i].id), 0);
            put_str(w, 3, r[i].track);
            assert_int_equal(nxpq_end_row(w), 0);
            r[i].ordinal = nx_row_ordinal(f, (int64_t)(i - lo));
        }
        close_table(w);
    }
}

static int64_t random_id(int t)
{
    if (t == 0)
        return next_rand() % 20 == 0 ? 99999 : INS[next_rand() % N_INS].id;
    return DMA[next_rand() % N_DMA].id;
}

static void write_flows(void)
{
    nxpq_column_spec cols[] = {{.name = "in_id", .type = NXPQ_INT64},          {.name = "out_id", .type = NXPQ_INT64},
                               {.name = "in_table", .type = NXPQ_STRING},      {.name = "out_table", .type = NXPQ_STRING},
                               {.name = "dependency_type", .type = NXPQ_STRING, .nullable = true},
                               {.name = "gap_time", .type = NXPQ_INT64, .nullable = true}};
    nxpq_writer *w = open_table("Flow.parquet", cols, 6);
    static const char *const deps[] = {"FLOW_DEPENDENCE", "DMA_TRIGGER", NULL};
    for (size_t i = 0; i < N_FLOW; i++) {
        flow *f = &FLOWS[i];
        f->in_t = next_rand() % 12 == 0 ? 2 : (int)(next_rand() % 2);
        f->out_t = (int)(next_rand() % 2);
        f->in_id = f->in_t == 2 ? 5 : random_id(f->in_t);
        f->out_id = random_id(f->out_t);
        f->dep = deps[next_rand() % 3];
        f->has_gap = next_rand() % 4 != 0;
        f->gap = (int64_t)(next_rand() % 100);
        assert_int_equal(nxpq_put_int64(w, 0, f->in_id), 0);
        assert_int_equal(nxpq_put_int64(w, 1, f->out_id), 0);
        put_str(w, 2, FLOW_TABLES[f->in_t]);
        put_str(w, 3, FLOW_TABLES[f->out_t]);
        assert_int_equal(f->dep ? nxpq_put_string(w, 4, f->dep, strlen(f->dep)) : nxpq_put_null(w, 4), 0);
        assert_int_equal(f->has_gap ? nxpq_put_int64(w, 5, f->gap) : nxpq_put_null(w, 5), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    close_table(w);
}

static void write_system(void)
{
    nxpq_column_spec cols[] = {{.name = "start_ts", .type = NXPQ_INT64},
                               {.name = "end_ts", .type = NXPQ_INT64},
                               {.name = "trace_event_source", .type = NXPQ_STRING},
                               {.name = "instance_id", .type = NXPQ_STRING},
                               {.name = "process_id", .type = NXPQ_INT64},
                               {.name = "thread_id", .type = NXPQ_INT64},
                               {.name = "flow_id", .type = NXPQ_LIST_STRING, .nullable = true}};
    nxpq_writer *w = open_table("SystemProfileEvents.parquet", cols, 7);
    int64_t t = 0;
    for (size_t i = 0; i < N_SYS; i++) {
        row *r = &SYS[i];
        t += (int64_t)(next_rand() % 3);
        *r = (row){.start = t, .end = t + 5, .ordinal = (int64_t)i, .n_flows = (int)(next_rand() % 4) - 1};
        int tid = (int)(next_rand() % 2);
        snprintf(r->track, sizeof r->track, "i-1/7/%d", tid);
        nxpq_str items[2];
        for (int k = 0; k < r->n_flows && k < 2; k++) {
            snprintf(r->flows[k], sizeof r->flows[k], "%d", (int)(next_rand() % 25));
            items[k] = (nxpq_str){r->flows[k], strlen(r->flows[k])};
        }
        if (r->n_flows > 2)
            r->n_flows = 0; /* an empty list */
        assert_int_equal(nxpq_put_int64(w, 0, r->start), 0);
        assert_int_equal(nxpq_put_int64(w, 1, r->end), 0);
        put_str(w, 2, "framework");
        put_str(w, 3, "i-1");
        assert_int_equal(nxpq_put_int64(w, 4, 7), 0);
        assert_int_equal(nxpq_put_int64(w, 5, tid), 0);
        assert_int_equal(r->n_flows < 0 ? nxpq_put_null(w, 6) : nxpq_put_list_string(w, 6, items, (size_t)r->n_flows), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    close_table(w);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxflows-XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_timed("Instruction", INS, N_INS, 100, 10, "engine", "pe");
    write_timed("DmaPacketAggregated", DMA, N_DMA, 0, 7, "queue_name", "q");
    write_flows();
    write_system();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* The row of table t (0 instruction, 1 dma_block) with that id, or NULL. */
static const row *by_id(int t, int64_t id)
{
    const row *r = t == 0 ? INS : DMA;
    size_t n = t == 0 ? N_INS : N_DMA;
    for (size_t i = 0; i < n; i++)
        if (t < 2 && r[i].id == id)
            return &r[i];
    return NULL;
}

typedef struct want {
    const row *r;
    int t;
    const flow *f;               /* in Flow row order */
} want;

/* flows.h's order: (start, ordinal, table name), then Flow row order. */
static int cmp_want(const void *a, const void *b)
{
    const want *p = a, *q = b;
    const row *x = p->r, *y = q->r;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->ordinal != y->ordinal)
        return x->ordinal < y->ordinal ? -1 : 1;
    if (p->t != q->t)
        return p->t == 1 ? -1 : 1; /* "DmaPacketAggregated" < "Instruction" */
    return (p->f > q->f) - (p->f < q->f);
}

static void check_refs(const nx_flow_ref *got, size_t n, want *w, size_t nw)
{
    qsort(w, nw, sizeof *w, cmp_want);
    assert_int_equal(n, nw);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(got[i].table, w[i].t == 0 ? "Instruction" : "DmaPacketAggregated");
        assert_int_equal(got[i].ordinal, w[i].r->ordinal);
        assert_int_equal(got[i].start, w[i].r->start);
        assert_int_equal(got[i].end, w[i].r->end);
        assert_string_equal(got[i].track, w[i].r->track);
        if (w[i].f->dep)
            assert_string_equal(got[i].dependency_type, w[i].f->dep);
        else
            assert_null(got[i].dependency_type);
        assert_int_equal(got[i].has_gap, w[i].f->has_gap);
        if (w[i].f->has_gap)
            assert_int_equal(got[i].gap_time, w[i].f->gap);
    }
}

static void check_device(int t, const row *x)
{
    nx_flows f;
    nx_error err = {0};
    const char *table = t == 0 ? "Instruction" : "DmaPacketAggregated";
    int64_t hint = x->start;
    assert_int_equal(nx_flows_run(dir, table, x->ordinal, next_rand() % 2 ? &hint : NULL, &f, &err), 0);
    assert_true(f.device);
    want pred[N_FLOW], succ[N_FLOW];
    size_t np = 0, ns = 0;
    uint64_t unresolved = 0;
    for (size_t i = 0; i < N_FLOW; i++) {
        const flow *e = &FLOWS[i];
        if (e->out_t == t && e->out_id == x->id) {
            const row *o = e->in_t < 2 ? by_id(e->in_t, e->in_id) : NULL;
            if (o)
                pred[np++] = (want){o, e->in_t, e};
            else
                unresolved++;
        }
        if (e->in_t == t && e->in_id == x->id) {
            const row *o = by_id(e->out_t, e->out_id);
            if (o)
                succ[ns++] = (want){o, e->out_t, e};
            else
                unresolved++;
        }
    }
    check_refs(f.pred, f.n_pred, pred, np);
    check_refs(f.succ, f.n_succ, succ, ns);
    assert_int_equal(f.unresolved, unresolved);
    assert_false(f.truncated);
    nx_flows_free(&f);
}

static void device_flows(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_INS; i++)
        check_device(0, &INS[i]);
    for (size_t i = 0; i < N_DMA; i++)
        check_device(1, &DMA[i]);
}

static void system_flows(void **state)
{
    (void)state;
    size_t linked = 0;
    for (size_t i = 0; i < N_SYS; i++) {
        const row *x = &SYS[i];
        nx_flows f;
        nx_error err = {0};
        assert_int_equal(nx_flows_run(dir, "SystemProfileEvents", x->ordinal, NULL, &f, &err), 0);
        assert_false(f.device);
        size_t np = 0, ns = 0;
        for (size_t j = 0; j < N_SYS; j++) {
            const row *y = &SYS[j];
            int shared = -1;
            for (int a = 0; a < x->n_flows && shared < 0; a++)
                for (int b = 0; b < y->n_flows; b++)
                    if (strcmp(x->flows[a], y->flows[b]) == 0)
                        shared = a;
            if (j == i || shared < 0)
                continue;
            bool pred = y->start < x->start || (y->start == x->start && j < i);
            const nx_flow_ref *r = pred ? &f.pred[np++] : &f.succ[ns++];
            assert_true(pred ? np <= f.n_pred : ns <= f.n_succ);
            assert_int_equal(r->ordinal, y->ordinal);
            assert_int_equal(r->start, y->start);
            assert_int_equal(r->end, y->end);
            assert_string_equal(r->track, y->track);
            assert_string_equal(r->flow_id, x->flows[shared]);
            assert_string_equal(r->table, "SystemProfileEvents");
        }
        assert_int_equal(f.n_pred, np);
        assert_int_equal(f.n_succ, ns);
        linked += np + ns;
        nx_flows_free(&f);
    }
    assert_true(linked > N_SYS);
}

/* The framework flow rows of one backward step: ordinals 0..3 in start order. */
static void chrome_flow_rows(void **state)
{
    (void)state;
    char sub[96];
    snprintf(sub, sizeof sub, "%s/chrome", dir);
    mkdir(sub, 0755);
    char path[200];
    snprintf(path, sizeof path, "%s/SystemProfileEvents.parquet", sub);
    nxpq_column_spec cols[] = {{.name = "start_ts", .type = NXPQ_INT64},
                               {.name = "end_ts", .type = NXPQ_INT64},
                               {.name = "trace_event_source", .type = NXPQ_STRING},
                               {.name = "instance_id", .type = NXPQ_STRING},
                               {.name = "process_id", .type = NXPQ_INT64},
                               {.name = "thread_id", .type = NXPQ_INT64},
                               {.name = "flow_id", .type = NXPQ_LIST_STRING, .nullable = true}};
    nx_error err = {0};
    nxpq_writer *w = nxpq_writer_open(path, cols, 7, NULL, &err);
    assert_non_null(w);
    /* X with correlation 12 and bind_id 617; its flow start "s"; the kernel of 12; the flow end "f". */
    const struct { int64_t s, e, tid; const char *f0, *f1; } R[] = {
        {100, 200, 520, "12", "fwdbwd:617"}, {150, 150, 520, "fwdbwd:617", NULL},
        {300, 350, 7, "12", NULL},           {400, 400, 521, "fwdbwd:617", NULL}};
    for (size_t i = 0; i < 4; i++) {
        nxpq_str items[2] = {{R[i].f0, strlen(R[i].f0)}, {R[i].f1, R[i].f1 ? strlen(R[i].f1) : 0}};
        assert_int_equal(nxpq_put_int64(w, 0, R[i].s), 0);
        assert_int_equal(nxpq_put_int64(w, 1, R[i].e), 0);
        put_str(w, 2, "framework");
        put_str(w, 3, "i-1");
        assert_int_equal(nxpq_put_int64(w, 4, 469), 0);
        assert_int_equal(nxpq_put_int64(w, 5, R[i].tid), 0);
        assert_int_equal(nxpq_put_list_string(w, 6, items, R[i].f1 ? 2 : 1), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
    nx_flows f;
    /* The flow start: its X before it, the flow end after it. */
    assert_int_equal(nx_flows_run(sub, "SystemProfileEvents", 1, NULL, &f, &err), 0);
    assert_int_equal(f.n_pred, 1);
    assert_int_equal(f.pred[0].ordinal, 0);
    assert_string_equal(f.pred[0].flow_id, "fwdbwd:617");
    assert_int_equal(f.n_succ, 1);
    assert_int_equal(f.succ[0].ordinal, 3);
    assert_int_equal(f.succ[0].start, 400);
    assert_int_equal(f.succ[0].end, 400);
    assert_string_equal(f.succ[0].track, "i-1/469/521");
    nx_flows_free(&f);
    /* The X: the flow rows through its bind_id, the kernel through its correlation. */
    assert_int_equal(nx_flows_run(sub, "SystemProfileEvents", 0, NULL, &f, &err), 0);
    assert_int_equal(f.n_pred, 0);
    assert_int_equal(f.n_succ, 3);
    const char *via[] = {"fwdbwd:617", "12", "fwdbwd:617"};
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(f.succ[k].ordinal, (int64_t)k + 1);
        assert_string_equal(f.succ[k].flow_id, via[k]);
    }
    nx_flows_free(&f);
}

static void missing_rows_and_tables(void **state)
{
    (void)state;
    nx_flows f;
    nx_error err = {0};
    assert_int_equal(nx_flows_run(dir, "Instruction", nx_row_ordinal(1, 5000), NULL, &f, &err), NX_FLOWS_NO_EVENT);
    assert_int_equal(nx_flows_run(dir, "Instruction", nx_row_ordinal(7, 0), NULL, &f, &err), NX_FLOWS_NO_EVENT);
    assert_int_equal(nx_flows_run(dir, "CcOp", 0, NULL, &f, &err), NX_PROFILE_TABLE_ABSENT);
    /* A table without flows: empty lists. */
    nxpq_column_spec cols[] = {{.name = "timestamp", .type = NXPQ_INT64}, {.name = "id", .type = NXPQ_STRING}};
    nxpq_writer *w = open_table("SemaphoreUpdate.parquet", cols, 2);
    assert_int_equal(nxpq_put_int64(w, 0, 5), 0);
    put_str(w, 1, "S[0]");
    assert_int_equal(nxpq_end_row(w), 0);
    close_table(w);
    assert_int_equal(nx_flows_run(dir, "SemaphoreUpdate", 0, NULL, &f, &err), 0);
    assert_int_equal(f.n_pred + f.n_succ, 0);
    nx_flows_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_flows),
        cmocka_unit_test(system_flows),
        cmocka_unit_test(chrome_flow_rows),
        cmocka_unit_test(missing_rows_and_tables),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
