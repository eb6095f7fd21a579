/* test_capture_trace.c — device trace: every record kind through writer and
 * reader unchanged, tick conversion, and each fatal and non-fatal check with a
 * crafted file (the message names the file and the byte offset). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>

#include "capture_fixture.h"
#include "schema/schema.h"

typedef struct fixture {
    char *dir;
    nx_program *prog;
    nx_trace_header h;
    uint32_t ref_advance, ref_tensor_done, ref_overflow, ref_oob;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    nx_program src;
    fix_program(&src);
    nx_error err;
    char *path;
    uint64_t hash;
    f->dir = fix_tmpdir();
    if (!f->dir || nx_program_write(f->dir, &src, &hash, &path, &err) != 0 ||
        nx_program_open(path, &f->prog, NULL, &err) != 0)
        return -1;
    free(path);
    nx_program_find_string(f->prog, "DMA_ADVANCE", &f->ref_advance);
    nx_program_find_string(f->prog, "Tensor Completion", &f->ref_tensor_done);
    nx_program_find_string(f->prog, "sem 5 overflow", &f->ref_overflow);
    nx_program_find_string(f->prog, "DMA2D OOB", &f->ref_oob);
    f->h = (nx_trace_header){.pcore_count = 1, .program_hash = hash, .ticks_per_ns_num = 7,
                             .ticks_per_ns_den = 5, .epoch_ns = 1766072156592459482, .pid = 4242,
                             .flags = NX_TRACE_FLAG_SIMULATION, .session_id = NX_ABSENT, .model_id = 1,
                             .instance_id = "i-0123456789abcdef0", .instance_type = "trn1.32xlarge",
                             .runtime_version = "2.19.1", .driver_version = "2.15.9",
                             .collectives_version = "2.20.22"};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    nx_program_close(f->prog);
    fix_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Writes records under the trace name the header implies; returns the path. */
static char *write_trace(const fixture *f, const nx_trace_header *h, const nx_trace_record *recs, size_t n)
{
    char name[NX_CAP_NAME_MAX];
    nx_cap_trace_name(h->program_hash, h->neuron_device_idx, h->neuroncore_idx, name);
    char *path = fix_path(f->dir, name);
    nx_trace_writer *w;
    nx_error err;
    assert_int_equal(nx_trace_writer_open(path, h, &w, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(nx_trace_writer_put(w, &recs[i], &err), 0);
    assert_int_equal(nx_trace_writer_close(w, &err), 0);
    return path;
}

static nx_trace_record instr(uint64_t start, uint64_t end, uint8_t engine, uint32_t pc)
{
    return (nx_trace_record){.kind = NX_REC_INSTRUCTION, .ts = start, .end = end,
                             .u.instr = {.engine = engine, .pc = pc}};
}
static nx_trace_record block(uint64_t ts, uint16_t q, uint32_t id, uint32_t desc)
{
    return (nx_trace_record){.kind = NX_REC_DMA_BLOCK, .ts = ts,
                             .u.block = {.queue = q, .block_id = id, .descriptor = desc,
                                         .trigger_pc = 0, .trigger_engine = NX_ENGINE_SYNC}};
}
static nx_trace_record packet(uint64_t s, uint64_t e, uint16_t q, uint32_t id, uint16_t idx)
{
    return (nx_trace_record){.kind = NX_REC_DMA_PACKET, .ts = s, .end = e,
                             .u.packet = {.queue = q, .block_id = id, .packet_idx = idx, .read_bytes = 4096,
                                          .write_bytes = 4096, .crc = 0xdeadbeef}};
}

/* One valid record of every kind, in time order. */
static size_t all_kinds(const fixture *f, nx_trace_record *r)
{
    size_t n = 0;
    r[n++] = (nx_trace_record){.kind = NX_REC_EXECUTION, .ts = 100, .end = 10000, .u.execution.index = 3};
    r[n++] = instr(100, 200, NX_ENGINE_TENSOR, 0);
    r[n++] = block(150, 0, 0, 0);
    r[n++] = packet(160, 300, 0, 0, 0);
    r[n++] = packet(170, 320, 0, 0, 1);
    r[n] = instr(200, 400, NX_ENGINE_TENSOR, 1);
    r[n].u.instr.flags = NX_INSTR_FLAG_CRC, r[n].u.instr.crc_in = 1, r[n].u.instr.crc_out = 0xffffffff;
    r[n++].u.instr.evt_wait_ticks = 30;
    r[n++] = (nx_trace_record){.kind = NX_REC_SEMAPHORE, .ts = 320,
                               .u.sem = {.semaphore = 0, .value = 1, .source_kind = NX_SEM_SRC_QUEUE, .source = 0,
                                         .op = NX_SEM_INC, .timing = NX_SEM_TIMING_COMPLETE,
                                         .flags = NX_SEM_FLAG_DOUBLE, .update_mode = -2}};
    r[n++] = (nx_trace_record){.kind = NX_REC_CC_OP, .ts = 400, .end = 900, .u.cc_op = {0, 390}};
    r[n++] = (nx_trace_record){.kind = NX_REC_CC_INSTR, .ts = 410, .end = 500,
                               .u.cc_instr = {.cc_core = 8, .trigger_engine = NX_ENGINE_GPSIMD,
                                              .description = f->ref_advance, .collective = 0, .trigger_ts = 400}};
    r[n++] = (nx_trace_record){.kind = NX_REC_THROTTLE, .ts = 500, .end = 600, .u.throttle = {1, 3, 4}};
    r[n++] = (nx_trace_record){.kind = NX_REC_ERROR, .ts = 650,
                               .u.error = {.type = NX_ERR_WARNINGS, .error_type_id = 7, .payload = 0x1292,
                                           .description = f->ref_oob, .metadata = f->ref_overflow}};
    r[n++] = (nx_trace_record){.kind = NX_REC_ERROR, .ts = 700,
                               .u.error = {.type = NX_ERR_CUSTOM_NOTIFICATION, .description = f->ref_tensor_done}};
    return n;
}

static void test_round_trip_every_kind(void **state)
{
    fixture *f = *state;
    nx_trace_record recs[16];
    size_t n = all_kinds(f, recs);
    char *path = write_trace(f, &f->h, recs, n);
    nx_trace_reader *r;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    assert_int_equal(nx_trace_reader_open(path, f->prog, &warner, &r, &err), 0);
    const nx_trace_header *h = nx_trace_reader_header(r);
    assert_string_equal(h->instance_id, "i-0123456789abcdef0");
    assert_string_equal(h->collectives_version, "2.20.22");
    assert_int_equal(h->epoch_ns, f->h.epoch_ns);
    assert_int_equal(h->header_size, NX_TRACE_HEADER_SIZE);
    assert_int_equal(nx_trace_reader_record_count(r), n);
    bool seen[NX_REC_KIND_MAX + 1] = {false};
    nx_trace_record got;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(nx_trace_reader_next(r, &got, &err), 1);
        assert_memory_equal(&got, &recs[i], sizeof got);
        assert_int_equal(nx_trace_reader_offset(r), NX_TRACE_HEADER_SIZE + i * NX_TRACE_RECORD_SIZE);
        seen[got.kind] = true;
    }
    assert_int_equal(nx_trace_reader_next(r, &got, &err), 0);
    assert_int_equal(nx_trace_reader_next(r, &got, &err), 0);
    for (int k = 1; k <= NX_REC_KIND_MAX; k++)
        assert_true(seen[k]);
    assert_int_equal(w.count, 0);
    nx_trace_reader_close(r);
    nx_trace_header only;
    assert_int_equal(nx_trace_read_header(path, &only, &err), 0);
    assert_string_equal(only.instance_type, "trn1.32xlarge");
    assert_true(only.program_hash == f->h.program_hash);
    free(path);
}

static void test_ticks(void **state)
{
    fixture *f = *state;
    assert_int_equal(nx_trace_ticks_to_ns(&f->h, 7), 5);
    assert_int_equal(nx_trace_ticks_to_ns(&f->h, 13), 9);    /* floor(13 * 5 / 7) */
    assert_int_equal(nx_trace_ns_to_ticks(&f->h, 5), 7);
    uint64_t big = UINT64_MAX / 2;
    assert_true(nx_trace_ticks_to_ns(&f->h, big) == big / 7 * 5 + big % 7 * 5 / 7);
    /* The prepared clock gives the same nanoseconds as the divisions, for any
     * rate: random tick counts and rates, and the extremes. */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < 200000; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        nx_trace_header h = f->h;
        uint32_t rates[][2] = {{7, 5}, {1, 1}, {1, 1000}, {UINT32_MAX, 1}, {UINT32_MAX, UINT32_MAX},
                               {3, UINT32_MAX}, {(uint32_t)(x >> 40) | 1, (uint32_t)x | 1}};
        h.ticks_per_ns_num = rates[k % 7][0];
        h.ticks_per_ns_den = rates[k % 7][1];
        nx_trace_clock c;
        nx_trace_clock_init(&c, &h);
        uint64_t ticks = k % 11 == 0 ? UINT64_MAX - (uint64_t)k : k % 13 == 0 ? (uint64_t)k : x >> (k % 64);
        assert_true(nx_trace_clock_ns(&c, ticks) == nx_trace_ticks_to_ns(&h, ticks));
    }
}

/* Reading must stop with a message naming the path, "offset <off>:" and needle. */
static void expect_fatal(const fixture *f, const char *path, long off, const char *needle)
{
    nx_trace_reader *r;
    nx_error err = {0};
    int rc = nx_trace_reader_open(path, f->prog, NULL, &r, &err);
    if (rc == 0) {
        nx_trace_record rec;
        while ((rc = nx_trace_reader_next(r, &rec, &err)) == 1)
            ;
        nx_trace_reader_close(r);
    }
    assert_int_equal(rc, -1);
    if (!strstr(err.msg, path) || !strstr(err.msg, needle))
        fail_msg("message '%s' lacks the path or '%s'", err.msg, needle);
    char at[48];
    snprintf(at, sizeof at, "offset %ld:", off);
    if (off >= 0 && !strstr(err.msg, at))
        fail_msg("message '%s' lacks '%s'", err.msg, at);
}

/* Writes `recs` and expects record `bad` (0-based) to be rejected. */
static void expect_bad_record(const fixture *f, const nx_trace_record *recs, size_t n, size_t bad,
                              const char *needle)
{
    char *path = write_trace(f, &f->h, recs, n);
    expect_fatal(f, path, NX_TRACE_HEADER_SIZE + (long)bad * NX_TRACE_RECORD_SIZE, needle);
    remove(path);
    free(path);
}

static void test_bad_records(void **state)
{
    fixture *f = *state;
    nx_trace_record r[3];
    r[0] = instr(10, 20, NX_ENGINE_TENSOR, 0);
    r[0].kind = 42;
    expect_bad_record(f, r, 1, 0, "unknown record kind 42");
    r[0] = instr(10, 20, NX_ENGINE_TENSOR, 0);
    r[0].pcore = 1;
    expect_bad_record(f, r, 1, 0, "pcore 1 out of range");
    r[0] = instr(10, 20, 9, 0);
    expect_bad_record(f, r, 1, 0, "engine 9 out of range");
    r[0] = instr(10, 20, NX_ENGINE_TENSOR, 5);
    expect_bad_record(f, r, 1, 0, "pc 5 is not an instruction of engine tensor");
    r[0] = instr(30, 20, NX_ENGINE_TENSOR, 0);
    expect_bad_record(f, r, 1, 0, "before it starts");
    r[0] = packet(10, 20, 5, 0, 0);
    expect_bad_record(f, r, 1, 0, "queue 5 out of range");
    r[0] = block(10, 0, 0, 1);
    expect_bad_record(f, r, 1, 0, "descriptor 1 belongs to another queue");
    r[0] = packet(10, 20, 0, 0, 0);
    expect_bad_record(f, r, 1, 0, "already announced");
    r[0] = block(10, 0, 0, 0), r[1] = block(11, 0, 2, 0);
    expect_bad_record(f, r, 2, 1, "block id 2 on queue 0; expected 1");
    r[1] = packet(12, 20, 0, 0, 0), r[2] = packet(13, 20, 0, 0, 2);
    expect_bad_record(f, r, 3, 2, "packet_idx 2 in block 0 of queue 0; expected 1");
    r[0] = (nx_trace_record){.kind = NX_REC_SEMAPHORE, .ts = 5, .u.sem = {.semaphore = 2}};
    expect_bad_record(f, r, 1, 0, "semaphore 2 out of range");
    r[0] = (nx_trace_record){.kind = NX_REC_CC_INSTR, .ts = 5, .end = 6,
                             .u.cc_instr = {.cc_core = 16, .description = f->ref_advance,
                                            .collective = NX_NO_REF, .trigger_ts = NX_NO_TICKS}};
    expect_bad_record(f, r, 1, 0, "CC core 16 out of range");
    r[0].u.cc_instr.cc_core = 8, r[0].u.cc_instr.description = f->ref_advance + 1;
    expect_bad_record(f, r, 1, 0, "description string reference");
    r[0] = (nx_trace_record){.kind = NX_REC_CC_OP, .ts = 5, .end = 6, .u.cc_op = {0, 9}};
    expect_bad_record(f, r, 1, 0, "trigger at tick 9 is after the start");
    r[0] = (nx_trace_record){.kind = NX_REC_THROTTLE, .ts = 5, .end = 6, .u.throttle = {0, 5, 4}};
    expect_bad_record(f, r, 1, 0, "throttle 5/4");
    r[0] = (nx_trace_record){.kind = NX_REC_ERROR, .ts = 5, .u.error = {.type = 3, .description = f->ref_oob}};
    expect_bad_record(f, r, 1, 0, "error type 3 out of range");
}

static void test_reorder_window(void **state)
{
    fixture *f = *state;
    nx_trace_record r[2] = {instr(1000, 1100, NX_ENGINE_TENSOR, 0), instr(10, 20, NX_ENGINE_VECTOR, 0)};
    expect_bad_record(f, r, 2, 1, "990 ticks behind");
    /* Inside the window: accepted; stepping back within one stream is a warning. */
    nx_trace_header h = f->h;
    h.reorder_window_ticks = 2000;
    r[1] = instr(10, 20, NX_ENGINE_TENSOR, 0);
    char *path = write_trace(f, &h, r, 2);
    nx_trace_reader *rd;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    assert_int_equal(nx_trace_reader_open(path, f->prog, &warner, &rd, &err), 0);
    nx_trace_record got;
    assert_int_equal(nx_trace_reader_next(rd, &got, &err), 1);
    assert_int_equal(nx_trace_reader_next(rd, &got, &err), 1);
    assert_int_equal(nx_trace_reader_next(rd, &got, &err), 0);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "steps back 990 ticks within its stream"));
    nx_trace_reader_close(rd);
    remove(path);
    free(path);
}

static void test_blocks_without_packets_warn(void **state)
{
    fixture *f = *state;
    nx_trace_record r[4] = {block(10, 0, 5, 0), block(11, 0, 6, 0), block(12, 0, 7, 0), packet(13, 20, 0, 7, 0)};
    char *path = write_trace(f, &f->h, r, 4);
    nx_trace_reader *rd;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    assert_int_equal(nx_trace_reader_open(path, f->prog, &warner, &rd, &err), 0);
    nx_trace_record got;
    while (nx_trace_reader_next(rd, &got, &err) == 1)
        ;
    assert_int_equal(w.count, 1);   /* block 7's packet comes first: 5 and 6 had none */
    assert_non_null(strstr(w.last, "blocks 5..6 of queue 0 (pcore 0) have no packets"));
    nx_trace_reader_close(rd);
    remove(path);
    free(path);
    r[3] = packet(13, 20, 0, 5, 0);  /* block 5 has its packet; 6 and 7 never do */
    path = write_trace(f, &f->h, r, 4);
    assert_int_equal(nx_trace_reader_open(path, f->prog, &warner, &rd, &err), 0);
    while (nx_trace_reader_next(rd, &got, &err) == 1)
        ;
    assert_int_equal(w.count, 2);
    assert_non_null(strstr(w.last, "blocks 6..7 of queue 0 (pcore 0) have no packets"));
    nx_trace_reader_close(rd);
    free(path);
}

static void test_empty_trace_warns(void **state)
{
    fixture *f = *state;
    char *path = write_trace(f, &f->h, NULL, 0);
    nx_trace_reader *r;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    assert_int_equal(nx_trace_reader_open(path, f->prog, &warner, &r, &err), 0);
    nx_trace_record got;
    assert_int_equal(nx_trace_reader_next(r, &got, &err), 0);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "holds no records"));
    nx_trace_reader_close(r);
    free(path);
}

static void test_bad_headers(void **state)
{
    fixture *f = *state;
    nx_trace_record r = instr(10, 20, NX_ENGINE_TENSOR, 0);
    char *path = write_trace(f, &f->h, &r, 1);
    assert_int_equal(fix_patch(path, 0, "NXTRACX", 7), 0);
    expect_fatal(f, path, 0, "wrong magic");
    assert_int_equal(fix_patch(path, 0, "NXTRACE", 7), 0);
    uint16_t v = 3;
    assert_int_equal(fix_patch(path, 8, &v, 2), 0);
    expect_fatal(f, path, 8, "unsupported version 3.0");
    v = 1;
    assert_int_equal(fix_patch(path, 8, &v, 2), 0);
    assert_int_equal(fix_patch(path, 90, "\x01", 1), 0);
    expect_fatal(f, path, 90, "instance_id: byte 0x01");
    assert_int_equal(fix_patch(path, 90, "0", 1), 0);
    uint32_t zero = 0;
    assert_int_equal(fix_patch(path, 36, &zero, 4), 0);
    expect_fatal(f, path, 36, "ticks per ns 7/0");
    uint32_t den = 5;
    assert_int_equal(fix_patch(path, 36, &den, 4), 0);
    assert_int_equal(fix_truncate(path, NX_TRACE_HEADER_SIZE + NX_TRACE_RECORD_SIZE - 7), 0);
    expect_fatal(f, path, NX_TRACE_HEADER_SIZE, "truncated record: 33 of 40 bytes");
    assert_int_equal(fix_truncate(path, 100), 0);
    expect_fatal(f, path, 100, "truncated header");
    free(path);
}

static void test_pairing(void **state)
{
    fixture *f = *state;
    nx_trace_header h = f->h;
    h.program_hash ^= 1;
    char *path = write_trace(f, &h, NULL, 0);
    expect_fatal(f, path, 24, "does not match the program");
    free(path);
    h = f->h;
    h.neuroncore_idx = 1;
    path = write_trace(f, &h, NULL, 0);
    char name[NX_CAP_NAME_MAX];
    nx_cap_trace_name(h.program_hash, 0, 0, name);
    char *renamed = fix_path(f->dir, name);
    assert_int_equal(rename(path, renamed), 0);
    expect_fatal(f, renamed, -1, "the file name says hash");
    free(path);
    free(renamed);
}

/* The numbers stored for enum columns index the schema's enum values. */
static void test_vocabularies_match_schema(void **state)
{
    (void)state;
    const nx_schema_enum *q = nx_schema_enum_find("DmaQueueType");
    const nx_schema_enum *e = nx_schema_enum_find("ErrorType");
    const nx_schema_enum *m = nx_schema_enum_find("PerformanceMode");
    assert_non_null(q);
    assert_int_equal(q->n_values, NX_DMAQ_COUNT);
    for (unsigned i = 0; i < NX_DMAQ_COUNT; i++)
        assert_string_equal(nx_dma_queue_type_name(i), q->values[i]);
    assert_int_equal(e->n_values, NX_ERR_TYPE_COUNT);
    for (unsigned i = 0; i < NX_ERR_TYPE_COUNT; i++)
        assert_string_equal(nx_error_type_name(i), e->values[i]);
    for (unsigned i = 0; i < m->n_values; i++)
        assert_string_equal(nx_performance_mode_name(i + 1), m->values[i]);
    assert_null(nx_performance_mode_name(0));
    assert_string_equal(nx_engine_name(NX_ENGINE_GPSIMD), "gpsimd");
    assert_string_equal(nx_engine_display_name(NX_ENGINE_GPSIMD), "GpSimd");
    assert_string_equal(nx_engine_hw_name(NX_ENGINE_GPSIMD), "Pool");
    assert_null(nx_engine_name(NX_ENGINE_COUNT));
    assert_string_equal(nx_sem_op_name(NX_SEM_INC), "sem_inc");
    assert_null(nx_sem_op_name(3));
    assert_string_equal(nx_sem_timing_name(NX_SEM_TIMING_COMPLETE), "complete");
    assert_null(nx_sem_timing_name(NX_SEM_TIMING_NONE));
    assert_null(nx_rec_kind_name(0));
    assert_string_equal(nx_rec_kind_name(NX_REC_KIND_MAX), "execution");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_round_trip_every_kind), T(test_ticks), T(test_bad_records), T(test_reorder_window),
        T(test_blocks_without_packets_warn), T(test_empty_trace_warns), T(test_bad_headers), T(test_pairing), T(test_vocabularies_match_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
