/*
 * test_timeline_query.c — the viewer's timeline answer (query/timeline.h) against
 * a brute-force reading of its rules over rows the test wrote itself.
 *
 * A SystemProfileEvents table (written through process/row.h, so with the
 * timeline index `process` writes) holds call stacks on four framework threads
 * and two NeuronCores: random trees up to depth 6, siblings that touch, equal
 * intervals (which nest in row order), zero durations, top-level events that
 * overlap without nesting, rare events long enough to reach far into later
 * windows; about 4,000 events per track, so every depth has many blocks of the
 * index. An Instruction table on three engines holds flat events. For windows
 * inside, across, before and after the data and widths from 1 to more buckets
 * than events, the answer is compared with the expectation computed here: each
 * event's depth by counting its enclosers (O(n^2) per track), the track names by
 * the track rule, the in-window rows, per (track, depth, bucket) for
 * SystemProfileEvents and per (track, bucket) for Instruction the winner
 * (longest, earliest start, earliest row), tracks in order of first appearance,
 * events in ordinal order, labels resolved through the answer's strings
 * (interned once, ids in order of first use). Both from the timeline index and
 * with NXPROF_NO_TIMELINE_INDEX=1, whole and split into files of 2,500 rows.
 * Tables of over 500,000 events (sampled from the index on several threads)
 * answer as the scan does. A track's place is its first row in the window at
 * any depth. A damaged table,
 * or a nested one whose rows are not in start order per track, gets its error
 * while the others answer; an absent one has no tracks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile_output.h"
#include "profile/timeline_index.h"
#include "query/engine/budget.h"
#include "query/engine/sampled_pass.h"
#include "query/timeline.h"
#include "system_fixture.h"
#include "test_rand.h"

#define N_MAX 80000
#define N_INS 3000

/* ------------------------------------------------------------ the rows -- */

typedef struct row {
    sys_event e;
    uint32_t track;                  /* index into track_names */
    uint32_t depth;                  /* brute force */
    size_t seq;                      /* emission order (ties of the sort by start) */
    char name[16];
} row;

static row rows[N_MAX];
static size_t n_rows;
static const char *const track_names[] = {"i-1/7/7", "i-1/7/8", "i-1/7/9", "i-2/8/8", "nc0", "nc1"};
#define N_TRACKS 6

static void emit(uint32_t track, int64_t s, int64_t e, uint32_t depth)
{
    assert_true(n_rows < N_MAX);
    row *r = &rows[n_rows++];
    memset(r, 0, sizeof *r);
    bool rt = track >= 4;
    r->e = (sys_event){.start = s, .end = e, .source = rt ? "neuron_rt" : "framework",
                       .nc = rt ? (int64_t)(track - 4) : (next_rand() % 3 ? NX_ABSENT : 5),
                       .instance = track == 3 ? "i-2" : "i-1", .pid = track == 3 ? 8 : 7,
                       .tid = track == 3 ? 8 : 7 + (int64_t)(track < 3 ? track : 0), .name = r->name};
    if (rt)
        r->e.tid = 99;   /* a runtime event's track is its core, whatever the thread */
    r->track = track;
    r->seq = n_rows;
    snprintf(r->name, sizeof r->name, "op%u.%u", depth, (unsigned)(next_rand() % 3));
}

/* Children of [lo, hi] at `depth`, recursively. */
static void tree(uint32_t track, int64_t lo, int64_t hi, uint32_t depth)
{
    if (depth > 6 || hi - lo < 4)
        return;
    int64_t t = lo + (next_rand() % 3 ? 0 : (int64_t)(next_rand() % (uint64_t)((hi - lo) / 4 + 1)));
    for (int k = (int)(next_rand() % 4); k >= 0 && t < hi; k--) {
        int64_t d = next_rand() % 9 == 0 ? 0 : (int64_t)(next_rand() % (uint64_t)(hi - t + 1));
        emit(track, t, t + d, depth);
        if (next_rand() % 11 == 0)
            emit(track, t, t + d, depth);   /* an equal interval: nests in row order */
        tree(track, t, t + d, depth + 1);
        t += d + (next_rand() % 2 ? 0 : (int64_t)(next_rand() % 50));   /* siblings touch or leave a gap */
    }
}

/* By start, ties in emission order: the table's row order, as `process` sorts. */
static int cmp_start(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->e.start != y->e.start)
        return x->e.start < y->e.start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Depth by the rule, read literally (profile/nesting.h): per track, the
 * events enclosing each one (of equal intervals, the earlier rows). */
static void brute_depths(void)
{
    size_t *of = malloc(n_rows * sizeof *of);
    assert_non_null(of);
    for (uint32_t tr = 0; tr < N_TRACKS; tr++) {
        size_t m = 0;
        for (size_t i = 0; i < n_rows; i++)
            if (rows[i].track == tr)
                of[m++] = i;
        for (size_t b = 0; b < m; b++) {
            const sys_event *y = &rows[of[b]].e;
            uint32_t d = 0;
            for (size_t a = 0; a < m; a++) {
                const sys_event *x = &rows[of[a]].e;
                bool equal = x->start == y->start && x->end == y->end;
                d += a != b && x->start <= y->start && y->end <= x->end && (!equal || a < b);
            }
            rows[of[b]].depth = d;
        }
    }
    free(of);
}

static void generate(void)
{
    for (uint32_t tr = 0; tr < N_TRACKS; tr++) {
        int64_t t = 1000000;
        size_t first = n_rows;
        while (n_rows - first < 4000) {
            t += (int64_t)(next_rand() % 2000);
            int64_t d = 200 + (int64_t)(next_rand() % 20000);
            if (next_rand() % 400 == 0)
                d = 3000000;   /* reaches far past the next windows */
            emit(tr, t, t + d, 0);
            tree(tr, t, t + d, 1);
            if (next_rand() % 7 == 0)   /* overlaps the last one without nesting */
                emit(tr, t + d / 2, t + d + 100, 0);
            t += next_rand() % 2 ? d : d / 3;
        }
    }
    qsort(rows, n_rows, sizeof *rows, cmp_start);
    /* Equal starts in either row order: an enclosing event may come after the
     * events it encloses (the track's first row in a window is then deeper). */
    for (size_t i = 0; i + 1 < n_rows; i++)
        if (rows[i].e.start == rows[i + 1].e.start && next_rand() % 2) {
            row t = rows[i];
            rows[i] = rows[i + 1];
            rows[i + 1] = t;
        }
    for (size_t i = 0; i < n_rows; i++)
        rows[i].e.name = rows[i].name;   /* moved with its row */
    brute_depths();
    uint32_t deepest = 0;
    for (size_t i = 0; i < n_rows; i++)
        deepest = rows[i].depth > deepest ? rows[i].depth : deepest;
    assert_true(n_rows >= N_TRACKS * 4000 && deepest >= 5);
}

/* Instruction: flat events on three engines. */
typedef struct ins {
    int64_t start, end, fw;
    const char *engine, *opcode;
} ins;
static ins ins_rows[N_INS];
static const char *const engines[] = {"pe", "act", "pool"};

static void generate_ins(void)
{
    static const char *const ops[] = {"MATMUL", "ACTIVATE", "IOTA"};
    static const int64_t durs[] = {0, 5, 5, 100, 2500};
    int64_t t = 1000000;
    for (int i = 0; i < N_INS; i++) {
        if (next_rand() % 4)
            t += (int64_t)(next_rand() % 3000);
        ins_rows[i] = (ins){t, t + durs[next_rand() % 5], next_rand() % 4 ? (int64_t)(next_rand() % 5) : NX_ABSENT,
                            engines[next_rand() % 3], ops[next_rand() % 3]};
    }
}

static void write_ins(const char *dir, uint64_t max_rows)
{
    nx_table_dest dest = {.dir = dir, .max_rows = max_rows};
    nx_row r;
    nx_error err = {0};
    unsigned tables = 0;
    assert_int_equal(nx_row_open(&r, &dest, "Instruction", &err), 0);
    size_t c_start = nx_row_col(&r, "start_ts"), c_end = nx_row_col(&r, "end_ts"), c_dur = nx_row_col(&r, "duration_ns"),
           c_eng = nx_row_col(&r, "engine"), c_op = nx_row_col(&r, "opcode"), c_ops = nx_row_col(&r, "operands"),
           c_id = nx_row_col(&r, "id"), c_pc = nx_row_col(&r, "pc"), c_bir = nx_row_col(&r, "bir_id"),
           c_fw = nx_row_col(&r, "raw_framework_id");
    for (int i = 0; i < N_INS; i++) {
        const ins *g = &ins_rows[i];
        assert_int_equal(nx_row_begin(&r, &err), 0);
        nx_row_i64(&r, c_start, g->start);
        nx_row_i64(&r, c_end, g->end);
        nx_row_i64(&r, c_dur, g->end - g->start);
        nx_row_str(&r, c_eng, g->engine);
        nx_row_str(&r, c_op, g->opcode);
        nx_row_str(&r, c_ops, "");
        nx_row_i64(&r, c_id, i);
        nx_row_i64(&r, c_pc, i % 50);
        nx_row_str(&r, c_bir, "sg:1");
        nx_row_opt_i64(&r, c_fw, g->fw);
        assert_int_equal(nx_row_end(&r, &err), 0);
    }
    assert_int_equal(nx_row_close(&r, true, &tables, &err), 0);
}

static void write_profile(const char *dir, uint64_t max_rows)
{
    nx_remove_tree(dir);
    sys_event *ev = malloc(n_rows * sizeof *ev);
    assert_non_null(ev);
    for (size_t i = 0; i < n_rows; i++)
        ev[i] = rows[i].e;
    write_events(dir, ev, n_rows, max_rows);
    free(ev);
    write_ins(dir, max_rows);
    char path[1200];
    snprintf(path, sizeof path, "%s/DmaPacket.parquet", dir);   /* damaged: not Parquet */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("PAR1 this is not a Parquet file PAR1", f);
    fclose(f);
}

/* -------------------------------------------------------- expectations -- */

/* One expected kept event: its row and (Instruction) table. */
typedef struct want {
    size_t row;
    int64_t start, end, bucket;
    uint32_t track, depth, level;    /* level: the sampling level of the depth */
} want;

/* docs/query.md "Sampling": depths 0..62 are a level each, deeper ones share level 63. */
static uint32_t level_of(uint32_t depth)
{
    return depth < 63 ? depth : 63;
}

static int64_t ordinal_of(size_t i, uint64_t max_rows)
{
    return max_rows ? nx_row_ordinal(i / max_rows, (int64_t)(i % max_rows)) : (int64_t)i;
}

static int64_t bucket_of(int64_t s, int64_t start, int64_t end, uint32_t width)
{
    if (s < start)
        s = start;
    __int128 len = (__int128)end - start + 1;
    return (int64_t)(((__int128)s - start) * width / len);
}

/* Whether a beats b by the sampling rule (longest, earliest start, earliest row). */
static bool better(const want *a, const want *b)
{
    if (a->end - a->start != b->end - b->start)
        return a->end - a->start > b->end - b->start;
    if (a->start != b->start)
        return a->start < b->start;
    return a->row < b->row;
}

/* By key (track, level, bucket), then the best first. */
static int cmp_key(const void *pa, const void *pb)
{
    const want *a = pa, *b = pb;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    if (a->level != b->level)
        return a->level < b->level ? -1 : 1;
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* The winners of the n events in row order (per key: track, level, bucket) into
 * out, and the order tracks first appear in (order[k]: the k-th track seen);
 * ev is reordered. */
static size_t winners(want *ev, size_t n, want *out, uint32_t *order, size_t *n_order)
{
    *n_order = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < *n_order && !seen; k++)
            seen = order[k] == ev[i].track;
        if (!seen)
            order[(*n_order)++] = ev[i].track;
    }
    qsort(ev, n, sizeof *ev, cmp_key);
    size_t n_out = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || ev[i - 1].track != ev[i].track || ev[i - 1].level != ev[i].level ||
            ev[i - 1].bucket != ev[i].bucket)
            out[n_out++] = ev[i];
    return n_out;
}

static int cmp_row(const void *a, const void *b)
{
    size_t x = ((const want *)a)->row, y = ((const want *)b)->row;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------- checking -- */

static const char *string_of(const nx_timeline *tl, int64_t id, size_t *len)
{
    assert_true(id >= 0 && (size_t)id < tl->n_strings);
    *len = tl->string_len[id];
    return tl->strings[id];
}

static void assert_label_str(const nx_timeline *tl, const nx_timeline_table *t, size_t j, size_t l, const char *expect)
{
    size_t at = j * t->n_labels + l, len;
    assert_true(t->label_is_string[l]);
    if (!expect) {
        assert_false(t->label_set[at]);
        return;
    }
    assert_true(t->label_set[at]);
    const char *s = string_of(tl, t->label[at], &len);
    assert_int_equal(len, strlen(expect));
    assert_memory_equal(s, expect, len);
}

/* The answer's table against the winners w[0..n) (sorted by row) and the
 * tracks' order; names[k]: track k's name. */
static void check_table(const nx_timeline *tl, const nx_timeline_table *t, const want *w, size_t n, const uint32_t *order,
                        size_t n_order, const char *const *names, uint64_t max_rows, bool nested)
{
    assert_null(t->error);
    assert_true(t->present);
    assert_int_equal(t->nested, nested);
    assert_int_equal(t->depth != NULL, nested);
    assert_int_equal(t->n_events, n);
    assert_int_equal(t->n_tracks, n_order);
    size_t j = 0;
    for (size_t k = 0; k < n_order; k++) {
        const nx_timeline_track *tr = &t->tracks[k];
        assert_string_equal(tr->name, names[order[k]]);
        assert_int_equal(tr->first, j);
        for (size_t i = 0; i < n; i++) {
            if (w[i].track != order[k])
                continue;
            assert_int_equal(t->start[j], w[i].start);
            assert_int_equal(t->end[j], w[i].end);
            assert_int_equal(t->ordinal[j], ordinal_of(w[i].row, max_rows));
            if (nested) {
                assert_int_equal(t->depth[j], w[i].depth);
                assert_label_str(tl, t, j, 0, rows[w[i].row].name);
                assert_label_str(tl, t, j, 1, rows[w[i].row].e.source);
            } else {
                const ins *g = &ins_rows[w[i].row];
                assert_label_str(tl, t, j, 0, g->opcode);
                assert_label_str(tl, t, j, 1, NULL);   /* hlo_name: not written */
                assert_false(t->label_is_string[2]);
                assert_int_equal(t->label_set[j * t->n_labels + 2], g->fw != NX_ABSENT);
                if (g->fw != NX_ABSENT)
                    assert_int_equal(t->label[j * t->n_labels + 2], g->fw);
                assert_label_str(tl, t, j, 3, NULL);   /* framework_name: no FrameworkInstruction */
            }
            j++;
        }
        assert_int_equal(tr->n, j - tr->first);
    }
}

/* Strings: each once, ids in order of first use reading the answer in order. */
static void check_strings(const nx_timeline *tl)
{
    for (size_t a = 0; a < tl->n_strings; a++)
        for (size_t b = a + 1; b < tl->n_strings; b++)
            assert_false(tl->string_len[a] == tl->string_len[b] &&
                         memcmp(tl->strings[a], tl->strings[b], tl->string_len[a]) == 0);
    int64_t next = 0;
    for (size_t i = 0; i < tl->n_tables; i++) {
        const nx_timeline_table *t = &tl->tables[i];
        for (size_t k = 0; k < t->n_tracks; k++)
            for (size_t j = t->tracks[k].first; j < t->tracks[k].first + t->tracks[k].n; j++)
                for (size_t l = 0; l < t->n_labels; l++) {
                    size_t at = j * t->n_labels + l;
                    if (!t->label_is_string[l] || !t->label_set[at])
                        continue;
                    assert_true(t->label[at] <= next);
                    if (t->label[at] == next)
                        next++;
                }
    }
    assert_int_equal((size_t)next, tl->n_strings);
}

static void check_window(const char *dir, int64_t start, int64_t end, uint32_t width, uint64_t max_rows)
{
    static want ev[N_MAX], w[N_MAX];
    uint32_t order[N_TRACKS + 3];
    size_t n_order;
    static const char *const tables[] = {"SystemProfileEvents", "DmaPacket", "Instruction", "CcOp"};
    nx_timeline tl;
    nx_error err = {0};
    assert_int_equal(nx_timeline_query(dir, tables, 4, start, end, width, &tl, &err), 0);
    assert_int_equal(tl.n_tables, 4);
    /* SystemProfileEvents: per (track, level, bucket), each kept event with its depth. */
    size_t n = 0;
    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].e.end >= start && rows[i].e.start <= end)
            ev[n++] = (want){i, rows[i].e.start, rows[i].e.end, bucket_of(rows[i].e.start, start, end, width),
                             rows[i].track, rows[i].depth, level_of(rows[i].depth)};
    assert_int_equal(tl.tables[0].rows_in_window, n);
    size_t nw = winners(ev, n, w, order, &n_order);
    qsort(w, nw, sizeof *w, cmp_row);
    check_table(&tl, &tl.tables[0], w, nw, order, n_order, track_names, max_rows, true);
    /* The damaged table: its error, nothing else. */
    assert_non_null(tl.tables[1].error);
    assert_non_null(strstr(tl.tables[1].error, "DmaPacket.parquet"));
    assert_int_equal(tl.tables[1].n_tracks, 0);
    assert_false(tl.tables[1].present);
    /* Instruction: per (track, bucket), no depth. */
    n = 0;
    for (size_t i = 0; i < N_INS; i++) {
        const ins *g = &ins_rows[i];
        uint32_t tr = g->engine == engines[0] ? 0 : g->engine == engines[1] ? 1 : 2;
        if (g->end >= start && g->start <= end)
            ev[n++] = (want){i, g->start, g->end, bucket_of(g->start, start, end, width), tr, 0, 0};
    }
    assert_int_equal(tl.tables[2].rows_in_window, n);
    nw = winners(ev, n, w, order, &n_order);
    qsort(w, nw, sizeof *w, cmp_row);
    check_table(&tl, &tl.tables[2], w, nw, order, n_order, engines, max_rows, false);
    /* Absent: no tracks, no error. */
    assert_null(tl.tables[3].error);
    assert_false(tl.tables[3].present);
    assert_int_equal(tl.tables[3].n_tracks, 0);
    check_strings(&tl);
    nx_timeline_free(&tl);
}

/* The timeline index answers both tables (so the comparisons below see both paths). */
static void assert_indexed(const char *dir, int64_t lo, int64_t hi)
{
    static const char *const tables[] = {"SystemProfileEvents", "Instruction"};
    for (int i = 0; i < 2; i++) {
        nx_sampled sp;
        nx_error err = {0};
        assert_int_equal(nx_sampled_pass(dir, tables[i], lo, hi, 640, &sp, &err), 0);
        assert_non_null(sp.index);
        assert_int_equal(sp.depth != NULL, i == 0);
        nx_sampled_free(&sp);
    }
}

static void run_windows(const char *dir, uint64_t max_rows)
{
    int64_t lo = rows[0].e.start, hi = lo;
    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].e.end > hi)
            hi = rows[i].e.end;
    assert_indexed(dir, lo, hi);
    static const uint32_t widths[] = {1, 2, 7, 100, 1920, 20000};
    const int64_t fixed[][2] = {{lo, hi}, {lo - 100, hi + 100}, {lo - 1000, lo - 1}, {hi + 1, hi + 50},
                                {rows[n_rows / 2].e.start, rows[n_rows / 2].e.start}};
    for (int scan = 0; scan < 2; scan++) {
        if (scan)
            setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
        size_t k = 0;
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            check_window(dir, fixed[i][0], fixed[i][1], widths[k++ % 6], max_rows);
        for (int i = 0; i < 6; i++)
            check_window(dir, lo, hi, widths[i], max_rows);
        for (int i = 0; i < 14; i++) {
            int64_t a = lo + (int64_t)(next_rand() % (uint64_t)(hi - lo)), b = lo + (int64_t)(next_rand() % (uint64_t)(hi - lo));
            check_window(dir, a < b ? a : b, a < b ? b : a, widths[k++ % 6], max_rows);
        }
        unsetenv("NXPROF_NO_TIMELINE_INDEX");
    }
}

static void test_answer_whole(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_profile(dir, 0);
    run_windows(dir, 0);
    nx_remove_tree(dir);
}

static void test_answer_split(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_profile(dir, 2500);
    run_windows(dir, 2500);
    nx_remove_tree(dir);
}

/* A track's first appearance is its first row in the window at any depth: here
 * an enclosed event (row 0) before its encloser of the same start (row 2), with
 * another track's event between them. */
static void test_track_order_by_any_depth(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const sys_event ev[] = {{.start = 10, .end = 12, .nc = NX_ABSENT, .pid = 1, .tid = 1},
                            {.start = 11, .end = 11, .nc = NX_ABSENT, .pid = 1, .tid = 2},
                            {.start = 10, .end = 20, .nc = NX_ABSENT, .pid = 1, .tid = 1}};
    write_events(dir, ev, 3, 0);
    static const char *const tables[] = {"SystemProfileEvents"};
    for (int scan = 0; scan < 2; scan++) {
        if (scan)
            setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
        nx_timeline tl;
        nx_error err = {0};
        assert_int_equal(nx_timeline_query(dir, tables, 1, 0, 100, 1, &tl, &err), 0);
        const nx_timeline_table *t = &tl.tables[0];
        assert_int_equal(t->n_tracks, 2);
        assert_string_equal(t->tracks[0].name, "i-1/1/1");
        assert_string_equal(t->tracks[1].name, "i-1/1/2");
        assert_int_equal(t->tracks[0].n, 2);   /* one bucket, two depths */
        assert_int_equal(t->ordinal[0], 0);
        assert_int_equal(t->depth[0], 1);
        assert_int_equal(t->ordinal[1], 2);
        assert_int_equal(t->depth[1], 0);
        nx_timeline_free(&tl);
        unsetenv("NXPROF_NO_TIMELINE_INDEX");
    }
    nx_remove_tree(dir);
}

/* SystemProfileEvents whose rows are not in start order on a track have no
 * depths: the table's entry is an error naming it (no index was written, the
 * scan finds the order), and the other tables still answer. */
static void test_unsorted_nested_table(void **state)
{
    (void)state;
    char dir[] = "/tmp/nxprof-test-tlq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const sys_event ev[] = {{.start = 50, .end = 60, .nc = NX_ABSENT, .pid = 1, .tid = 1},
                            {.start = 10, .end = 20, .nc = NX_ABSENT, .pid = 1, .tid = 1}};
    write_events(dir, ev, 2, 0);
    write_ins(dir, 0);
    static const char *const tables[] = {"SystemProfileEvents", "Instruction"};
    nx_timeline tl;
    nx_error err = {0};
    assert_int_equal(nx_timeline_query(dir, tables, 2, 0, INT64_C(1) << 40, 100, &tl, &err), 0);
    assert_non_null(tl.tables[0].error);
    assert_non_null(strstr(tl.tables[0].error, "SystemProfileEvents"));
    assert_null(tl.tables[1].error);
    assert_int_equal(tl.tables[1].rows_in_window, N_INS);
    nx_timeline_free(&tl);
    nx_remove_tree(dir);
}

/* Two answers are the same, event for event and string for string. */
static void assert_same_answer(const nx_timeline *a, const nx_timeline *b)
{
    assert_int_equal(a->n_strings, b->n_strings);
    for (size_t i = 0; i < a->n_strings; i++) {
        assert_int_equal(a->string_len[i], b->string_len[i]);
        assert_memory_equal(a->strings[i], b->strings[i], a->string_len[i]);
    }
    assert_int_equal(a->n_tables, b->n_tables);
    for (size_t k = 0; k < a->n_tables; k++) {
        const nx_timeline_table *x = &a->tables[k], *y = &b->tables[k];
        assert_null(x->error);
        assert_null(y->error);
        assert_int_equal(x->rows_in_window, y->rows_in_window);
        assert_int_equal(x->n_events, y->n_events);
        assert_int_equal(x->n_tracks, y->n_tracks);
        for (size_t t = 0; t < x->n_tracks; t++) {
            assert_string_equal(x->tracks[t].name, y->tracks[t].name);
            assert_int_equal(x->tracks[t].n, y->tracks[t].n);
        }
        assert_memory_equal(x->start, y->start, x->n_events * sizeof *x->start);
        assert_memory_equal(x->end, y->end, x->n_events * sizeof *x->end);
        assert_memory_equal(x->ordinal, y->ordinal, x->n_events * sizeof *x->ordinal);
        assert_int_equal(x->depth != NULL, y->depth != NULL);
        if (x->depth)
            assert_memory_equal(x->depth, y->depth, x->n_events * sizeof *x->depth);
        assert_memory_equal(x->label_set, y->label_set, x->n_events * x->n_labels);
        for (size_t i = 0; i < x->n_events * x->n_labels; i++)
            if (x->label_set[i])
                assert_int_equal(x->label[i], y->label[i]);
    }
}

/* Tables large enough for the index to sample their tracks on several threads
 * (more than 500,000 events): the generated rows repeated 25 times one after
 * another in time (SystemProfileEvents, 600,000+ events) and Instruction's 200
 * times; the index's answer equals the scan's. */
static void test_large_tables_on_threads(void **state)
{
    (void)state;
    enum { COPIES = 25, INS_COPIES = 200 };
    int64_t span = 0;
    for (size_t i = 0; i < n_rows; i++)
        span = rows[i].e.end - rows[0].e.start > span ? rows[i].e.end - rows[0].e.start : span;
    span += 1000;
    sys_event *ev = malloc(COPIES * n_rows * sizeof *ev);
    assert_non_null(ev);
    for (size_t c = 0; c < COPIES; c++)
        for (size_t i = 0; i < n_rows; i++) {
            ev[c * n_rows + i] = rows[i].e;
            ev[c * n_rows + i].start += (int64_t)c * span;
            ev[c * n_rows + i].end += (int64_t)c * span;
        }
    char dir[] = "/tmp/nxprof-test-tlq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_events(dir, ev, COPIES * n_rows, 0);
    free(ev);
    static ins saved[N_INS];
    memcpy(saved, ins_rows, sizeof saved);
    int64_t ins_span = ins_rows[N_INS - 1].end - ins_rows[0].start + 3000;
    nx_table_dest dest = {.dir = dir};
    nx_row r;
    nx_error err = {0};
    unsigned tables_written = 0;
    assert_int_equal(nx_row_open(&r, &dest, "Instruction", &err), 0);
    size_t c_start = nx_row_col(&r, "start_ts"), c_end = nx_row_col(&r, "end_ts"), c_eng = nx_row_col(&r, "engine"),
           c_op = nx_row_col(&r, "opcode"), c_ops = nx_row_col(&r, "operands"), c_id = nx_row_col(&r, "id"),
           c_pc = nx_row_col(&r, "pc"), c_bir = nx_row_col(&r, "bir_id"), c_dur = nx_row_col(&r, "duration_ns");
    for (int c = 0; c < INS_COPIES; c++)
        for (int i = 0; i < N_INS; i++) {
            const ins *g = &saved[i];
            assert_int_equal(nx_row_begin(&r, &err), 0);
            nx_row_i64(&r, c_start, g->start + c * ins_span);
            nx_row_i64(&r, c_end, g->end + c * ins_span);
            nx_row_i64(&r, c_dur, g->end - g->start);
            nx_row_str(&r, c_eng, g->engine);
            nx_row_str(&r, c_op, g->opcode);
            nx_row_str(&r, c_ops, "");
            nx_row_i64(&r, c_id, i);
            nx_row_i64(&r, c_pc, 0);
            nx_row_str(&r, c_bir, "sg:1");
            assert_int_equal(nx_row_end(&r, &err), 0);
        }
    assert_int_equal(nx_row_close(&r, true, &tables_written, &err), 0);
    static const char *const tables[] = {"SystemProfileEvents", "Instruction"};
    int64_t lo = rows[0].e.start, hi = lo + COPIES * span;
    const int64_t windows[][3] = {{lo, hi, 1920}, {lo, hi, 7}, {lo + span / 3, lo + 5 * span, 640}};
    for (size_t w = 0; w < 3; w++) {
        nx_timeline a, b;
        assert_int_equal(nx_timeline_query(dir, tables, 2, windows[w][0], windows[w][1], (uint32_t)windows[w][2], &a, &err), 0);
        setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
        assert_int_equal(nx_timeline_query(dir, tables, 2, windows[w][0], windows[w][1], (uint32_t)windows[w][2], &b, &err), 0);
        unsetenv("NXPROF_NO_TIMELINE_INDEX");
        assert_int_equal(a.tables[0].rows_in_window, w < 2 ? COPIES * n_rows : a.tables[0].rows_in_window);
        assert_same_answer(&a, &b);
        nx_timeline_free(&a);
        nx_timeline_free(&b);
    }
    nx_remove_tree(dir);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    nx_timeline tl;
    nx_error err = {0};
    static const char *const ok[] = {"Instruction"}, *const bad[] = {"Summary"};
    assert_int_equal(nx_timeline_query("/nonexistent", ok, 1, 10, 5, 10, &tl, &err), -1);
    assert_int_equal(nx_timeline_query("/nonexistent", ok, 1, 0, 5, 0, &tl, &err), -1);
    assert_int_equal(nx_timeline_query("/nonexistent", bad, 1, 0, 5, 10, &tl, &err), -1);
    assert_non_null(strstr(err.msg, "Summary"));
}

/* Track `name`'s depth tracks in the index x: their count and the deepest depth. */
static void index_levels(const nx_tlx *x, const char *name, uint64_t *n, uint32_t *deepest)
{
    for (size_t t = 0; t < nx_tlx_track_count(x); t++) {
        const char *s;
        size_t len;
        uint64_t events;
        int64_t first, last;
        nx_tlx_track_info(x, t, &s, &len, &events, &first, &last);
        if (len == strlen(name) && memcmp(s, name, len) == 0) {
            *n = x->depth_first[t + 1] - x->depth_first[t];
            assert_true(nx_tlx_track_max_depth(x, t, deepest));
            return;
        }
    }
    fail_msg("no track %s in the index", name);
}

/* Call stacks deeper than the sampling levels: on one thread 300 events each
 * inside the previous, on another 200 starting together (some in equal pairs),
 * on a core shallow ones. Every window's answer, from the index and from the
 * scan, keeps one event per (track, level, bucket), each with its own depth
 * (check_window's expectation folds the depths past 62 into level 63); the
 * index holds at most 64 depth tracks per track, the last one giving the
 * deepest depth; a width whose buckets exceed the query memory budget fails
 * the request with NX_QUERY_OVER_BUDGET naming the table, from both paths.
 * Replaces the generated rows, so it runs last. */
static void test_deep_stacks_fold(void **state)
{
    (void)state;
    n_rows = 0;
    for (int64_t i = 0; i < 300; i++)
        emit(0, 1000 + i, 2000 - i, 0);
    for (int64_t i = 0; i < 200; i++) {
        emit(1, 3000, 3400 - i, 0);
        if (i % 50 == 0)
            emit(1, 3000, 3400 - i, 0);   /* an equal interval: nests in row order */
    }
    for (int64_t i = 0; i < 100; i++)
        emit(4, 1000 + 20 * i, 1010 + 20 * i, 0);
    qsort(rows, n_rows, sizeof *rows, cmp_start);
    for (size_t i = 0; i < n_rows; i++)
        rows[i].e.name = rows[i].name;
    brute_depths();
    char dir[] = "/tmp/nxprof-test-tlq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_profile(dir, 0);
    nx_tlx *x;
    assert_int_equal(nx_tlx_open(dir, "SystemProfileEvents", &x, NULL), 0);
    uint64_t n;
    uint32_t deepest;
    index_levels(x, "i-1/7/7", &n, &deepest);
    assert_int_equal(n, 64);
    assert_int_equal(deepest, 299);
    index_levels(x, "i-1/7/8", &n, &deepest);
    assert_int_equal(n, 64);
    assert_int_equal(deepest, 203);
    index_levels(x, "nc0", &n, &deepest);
    assert_int_equal(n, 1);
    assert_int_equal(deepest, 0);
    nx_tlx_close(x);
    run_windows(dir, 0);
    static const char *const tables[] = {"Instruction", "SystemProfileEvents"};
    setenv("NXPROF_QUERY_MEMORY_MIB", "1", 1);   /* 20,000 buckets of 32 bytes: two levels are over */
    for (int scan = 0; scan < 2; scan++) {
        if (scan)
            setenv("NXPROF_NO_TIMELINE_INDEX", "1", 1);
        nx_timeline tl;
        nx_error err = {0};
        assert_int_equal(nx_timeline_query(dir, tables, 2, 0, 5000, 20000, &tl, &err), NX_QUERY_OVER_BUDGET);
        assert_non_null(strstr(err.msg, "SystemProfileEvents: sampling needs more than the query memory budget of 1 MiB"));
        assert_int_equal(nx_timeline_query(dir, tables, 2, 0, 5000, 100, &tl, &err), 0);   /* 132 levels and engines x 100 buckets fit */
        assert_null(tl.tables[1].error);
        nx_timeline_free(&tl);
        unsetenv("NXPROF_NO_TIMELINE_INDEX");
    }
    unsetenv("NXPROF_QUERY_MEMORY_MIB");
    nx_remove_tree(dir);
}

int main(void)
{
    generate();
    generate_ins();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answer_whole),
        cmocka_unit_test(test_answer_split),
        cmocka_unit_test(test_track_order_by_any_depth),
        cmocka_unit_test(test_unsorted_nested_table),
        cmocka_unit_test(test_large_tables_on_threads),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_deep_stacks_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
