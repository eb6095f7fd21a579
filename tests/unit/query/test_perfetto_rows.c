/* test_perfetto_rows.c — the Perfetto row writer (query/perfetto_rows.c, through
 * query/export.h nx_export_profile and the format list of row_writer.h), on an
 * Instruction table written here whose events on engine "e0" overlap without
 * nesting, decoded with the strict wire reader (util/pb_wire.h):
 *   - the format list: csv, json (one file per table) and perfetto (one per
 *     profile) found by name, nothing else;
 *   - the first packet clears the sequence's incremental state, every event
 *     packet needs it, all on sequence 1;
 *   - one BEGIN per row and one END per BEGIN; per track, BEGIN/END in file
 *     order nest (each END closes the innermost open slice, at its end time);
 *     the event that overlaps without fitting goes on a second lane: a child
 *     track of "e0" with the same name; the engine track's description is the
 *     raw track name and its parent is "Compute engines";
 *   - names interned once each: as many event_names entries as distinct
 *     opcodes, every event referring to one; the "id" arg carried as an int;
 *   - flows: a Flow row from instruction 7 to instruction 8 puts one flow id in
 *     7's flow_ids and the same in 8's terminating_flow_ids; a Flow row naming
 *     another table is not drawn and the writer's note counts it.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "query/export.h"
#include "query/engine/row_writer.h"
#include "util/pb_wire.h"

static const struct { int64_t s, e; const char *op; } EVENTS[] = {
    {0, 100, "A"}, {10, 20, "B"}, {50, 150, "C"}, {100, 100, "A"}, {150, 160, "B"}, {200, 200, "A"}, {200, 210, "C"},
};
#define N_EVENTS (sizeof EVENTS / sizeof EVENTS[0])

static void write_profile(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/Instruction.parquet", dir);
    nxpq_column_spec cols[] = {{.name = "start_ts", .type = NXPQ_INT64},
                               {.name = "end_ts", .type = NXPQ_INT64},
                               {.name = "engine", .type = NXPQ_STRING},
                               {.name = "opcode", .type = NXPQ_STRING},
                               {.name = "id", .type = NXPQ_INT64}};
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, 5, &o, &err);
    assert_non_null(w);
    for (size_t i = 0; i < N_EVENTS; i++) {
        assert_int_equal(nxpq_put_int64(w, 0, EVENTS[i].s), 0);
        assert_int_equal(nxpq_put_int64(w, 1, EVENTS[i].e), 0);
        assert_int_equal(nxpq_put_string(w, 2, "e0", 2), 0);
        assert_int_equal(nxpq_put_string(w, 3, EVENTS[i].op, 1), 0);
        assert_int_equal(nxpq_put_int64(w, 4, (int64_t)i + 7), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
    snprintf(path, sizeof path, "%s/Flow.parquet", dir);
    nxpq_column_spec fcols[] = {{.name = "in_id", .type = NXPQ_INT64},
                                {.name = "out_id", .type = NXPQ_INT64},
                                {.name = "in_table", .type = NXPQ_STRING},
                                {.name = "out_table", .type = NXPQ_STRING}};
    w = nxpq_writer_open(path, fcols, 4, &o, &err);
    assert_non_null(w);
    static const struct { int64_t in, out; const char *tin, *tout; } FLOWS[] = {
        {7, 8, "instruction", "instruction"}, {1, 9, "kernel", "instruction"}};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(nxpq_put_int64(w, 0, FLOWS[i].in), 0);
        assert_int_equal(nxpq_put_int64(w, 1, FLOWS[i].out), 0);
        assert_int_equal(nxpq_put_string(w, 2, FLOWS[i].tin, strlen(FLOWS[i].tin)), 0);
        assert_int_equal(nxpq_put_string(w, 3, FLOWS[i].tout, strlen(FLOWS[i].tout)), 0);
        assert_int_equal(nxpq_end_row(w), 0);
    }
    assert_int_equal(nxpq_writer_close(w, &err), 0);
}

typedef struct ev { uint64_t track, type, ts, name_iid, flow, terminating; int64_t id; } ev;
typedef struct td { uint64_t uuid, parent; char name[64], desc[64]; } td;

static nx_pb_field next(nx_pb_cursor *c, int *rc)
{
    nx_pb_field f;
    const char *why;
    size_t at;
    *rc = nx_pb_next(c, &f, &why, &at);
    assert_true(*rc >= 0);
    return f;
}

static void copy(char *out, const uint8_t *base, const nx_pb_field *f)
{
    memcpy(out, base + f->start, f->len < 63 ? f->len : 63);
    out[f->len < 63 ? f->len : 63] = '\0';
}

/* A debug annotation's int value (DebugAnnotation.int_value), or -1. */
static int64_t int_arg(nx_pb_cursor a)
{
    int rc;
    int64_t v = -1;
    for (nx_pb_field f = next(&a, &rc); rc > 0; f = next(&a, &rc))
        if (f.number == 4)
            v = (int64_t)f.u;
    return v;
}

static void test_trace(void **state)
{
    (void)state;
    assert_non_null(nx_row_format_find("csv"));
    assert_true(nx_row_format_find("json")->per_table);
    assert_false(nx_row_format_find("perfetto")->per_table);
    assert_string_equal(nx_row_format_find("perfetto")->extension, ".pftrace");
    assert_null(nx_row_format_find("xml"));
    assert_null(nx_row_format_at(3));

    char dir[] = "/tmp/nxprof-test-perfetto-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_profile(dir);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    const char *tables[] = {"Instruction"};
    nx_error err = {0};
    char note[NX_ROW_NOTE];
    assert_int_equal(
        nx_export_profile(dir, nx_row_format_find("perfetto"), f, INT64_MIN, INT64_MAX, tables, 1, note, &err), 0);
    assert_non_null(strstr(note, "1 Flow rows name a table other than"));
    assert_int_equal(fclose(f), 0);

    ev evs[64];
    td tds[16];
    size_t n_ev = 0, n_td = 0, n_names = 0, packets = 0;
    const uint8_t *base = (const uint8_t *)buf;
    nx_pb_cursor trace = nx_pb_cursor_init(buf, size);
    int rc;
    for (nx_pb_field pk = next(&trace, &rc); rc > 0; pk = next(&trace, &rc)) {
        assert_int_equal(pk.number, 1);
        nx_pb_cursor p = nx_pb_sub(&trace, &pk);
        uint64_t flags = 0, seq = 0, ts = 0;
        bool event = false;
        ev e = {.id = -1};
        for (nx_pb_field x = next(&p, &rc); rc > 0; x = next(&p, &rc)) {
            if (x.number == 13) flags = x.u;
            if (x.number == 10) seq = x.u;
            if (x.number == 8) ts = x.u;
            if (x.number == 12) {   /* InternedData: event_names (2) */
                nx_pb_cursor in = nx_pb_sub(&p, &x);
                for (nx_pb_field y = next(&in, &rc); rc > 0; y = next(&in, &rc))
                    n_names += y.number == 2;
            }
            if (x.number == 60) {
                nx_pb_cursor d = nx_pb_sub(&p, &x);
                td *t = &tds[n_td++];
                memset(t, 0, sizeof *t);
                for (nx_pb_field y = next(&d, &rc); rc > 0; y = next(&d, &rc)) {
                    if (y.number == 1) t->uuid = y.u;
                    if (y.number == 5) t->parent = y.u;
                    if (y.number == 2) copy(t->name, base, &y);
                    if (y.number == 14) copy(t->desc, base, &y);
                }
            }
            if (x.number == 11) {
                event = true;
                nx_pb_cursor te = nx_pb_sub(&p, &x);
                for (nx_pb_field y = next(&te, &rc); rc > 0; y = next(&te, &rc)) {
                    if (y.number == 9) e.type = y.u;
                    if (y.number == 11) e.track = y.u;
                    if (y.number == 10) e.name_iid = y.u;
                    if (y.number == 47) e.flow = y.u;
                    if (y.number == 48) e.terminating = y.u;
                    if (y.number == 4)   /* args in schema order: id is this table's last integer */
                        e.id = int_arg(nx_pb_sub(&te, &y));
                }
            }
        }
        assert_int_equal(seq, 1);
        if (packets++ == 0)
            assert_int_equal(flags, 1);   /* SEQ_INCREMENTAL_STATE_CLEARED */
        if (event) {
            assert_int_equal(flags, 2);   /* SEQ_NEEDS_INCREMENTAL_STATE */
            e.ts = ts;
            evs[n_ev++] = e;
        }
    }
    assert_int_equal(n_names, 3);   /* A, B, C */
    /* Tracks: "Compute engines", "e0" under it, a lane of "e0" under that (and "Counters"). */
    const td *group = NULL, *engine = NULL, *lane = NULL;
    for (size_t i = 0; i < n_td; i++) {
        if (strcmp(tds[i].name, "Compute engines") == 0) group = &tds[i];
        if (strcmp(tds[i].name, "e0") == 0 && tds[i].desc[0]) engine = &tds[i];
        if (strcmp(tds[i].name, "e0") == 0 && !tds[i].desc[0]) lane = &tds[i];
    }
    assert_non_null(group);
    assert_non_null(engine);
    assert_non_null(lane);
    assert_int_equal(engine->parent, group->uuid);
    assert_int_equal(lane->parent, engine->uuid);
    assert_string_equal(engine->desc, "e0");
    /* Per track, BEGIN/END nest, each END at the end of the slice it closes. */
    size_t begins = 0, ends = 0;
    bool seen_id[N_EVENTS] = {0};
    for (size_t t = 0; t < 2; t++) {
        uint64_t uuid = t ? lane->uuid : engine->uuid;
        int64_t stack[16];
        size_t depth = 0;
        for (size_t i = 0; i < n_ev; i++) {
            if (evs[i].track != uuid)
                continue;
            if (evs[i].type == 1) {
                assert_true(evs[i].id >= 7 && evs[i].id < 7 + (int64_t)N_EVENTS);
                size_t row = (size_t)(evs[i].id - 7);
                assert_false(seen_id[row]);
                seen_id[row] = true;
                assert_int_equal(evs[i].ts, EVENTS[row].s);
                assert_true(evs[i].name_iid >= 1 && evs[i].name_iid <= 3);
                if (depth)
                    assert_true(EVENTS[row].e <= stack[depth - 1]);
                stack[depth++] = EVENTS[row].e;
                begins++;
            } else {
                assert_int_equal(evs[i].type, 2);
                assert_true(depth > 0);
                assert_int_equal(evs[i].ts, stack[--depth]);
                ends++;
            }
        }
        assert_int_equal(depth, 0);
    }
    assert_int_equal(begins, N_EVENTS);
    uint64_t from = 0, to = 0;
    size_t n_flows = 0;
    for (size_t i = 0; i < n_ev; i++) {
        n_flows += (evs[i].flow != 0) + (evs[i].terminating != 0);
        if (evs[i].id == 7) from = evs[i].flow;
        if (evs[i].id == 8) to = evs[i].terminating;
    }
    assert_int_equal(n_flows, 2);
    assert_true(from != 0 && from == to);
    assert_int_equal(ends, N_EVENTS);
    free(buf);
    char path[256];
    snprintf(path, sizeof path, "%s/Instruction.parquet", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/Flow.parquet", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_trace)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
