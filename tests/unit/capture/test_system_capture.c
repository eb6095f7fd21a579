/* test_capture_system.c — the system capture TSV files: writer -> reader round
 * trip, attributes as JSON, and each bad line rejected with the file and line.
 * device_mem.tsv: its columns against the catalogue's SystemProfileHbmUsage
 * fields, a hand-written file read back (total = the sum of the categories),
 * a writer round trip, and each bad line (version, header, negative, fraction,
 * unsorted, int64 overflow of the sum, truncated line) rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "capture/system_capture.h"
#include "capture_fixture.h"
#include "schema/schema.h"

typedef struct fixture {
    char *dir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = fix_tmpdir();
    *state = f;
    return f->dir ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fix_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    char *rt = fix_path(f->dir, "runtime_events.tsv"), *cpu = fix_path(f->dir, "cpu_usage.tsv"),
         *mem = fix_path(f->dir, "host_mem.tsv");
    nx_sys_writer *w;
    nx_error err;
    const nx_sys_runtime_event ev[2] = {
        {100, 250, "neuron_rt", "nrt_execute", 42, 43, 1, NX_SYS_NULL, "7,8", "execution_index=0;neff=a.neff"},
        {100, 100, "neuron_hw", "device_execution", 42, 44, NX_SYS_NULL, 3, "", ""},
    };
    assert_int_equal(nx_sys_writer_open(rt, NX_SYS_RUNTIME_EVENTS, &w, &err), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(nx_sys_write_runtime(w, &ev[i], &err), 0);
    assert_int_equal(nx_sys_writer_close(w, &err), 0);
    assert_int_equal(nx_sys_writer_open(cpu, NX_SYS_CPU_USAGE, &w, &err), 0);
    nx_sys_cpu_sample c[2] = {{5, 0, 12.5}, {5, NX_SYS_CPU_AVERAGE, 100}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(nx_sys_write_cpu(w, &c[i], &err), 0);
    assert_int_equal(nx_sys_writer_close(w, &err), 0);
    assert_int_equal(nx_sys_writer_open(mem, NX_SYS_HOST_MEM, &w, &err), 0);
    nx_sys_mem_sample m = {9, 1 << 30, 4ll << 30};
    assert_int_equal(nx_sys_write_mem(w, &m, &err), 0);
    assert_int_equal(nx_sys_writer_close(w, &err), 0);

    nx_sys_reader *r;
    nx_sys_record rec;
    assert_int_equal(nx_sys_reader_open(rt, NX_SYS_RUNTIME_EVENTS, &r, &err), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
        assert_int_equal(rec.line, 3 + i);
        const nx_sys_runtime_event *e = &rec.u.runtime;
        assert_int_equal(e->start_ns, ev[i].start_ns);
        assert_int_equal(e->end_ns, ev[i].end_ns);
        assert_string_equal(e->source, ev[i].source);
        assert_string_equal(e->name, ev[i].name);
        assert_int_equal(e->tid, ev[i].tid);
        assert_int_equal(e->nc_idx, ev[i].nc_idx);
        assert_int_equal(e->worker_gid, ev[i].worker_gid);
        assert_string_equal(e->flow_ids, ev[i].flow_ids);
        assert_string_equal(e->attributes, ev[i].attributes);
    }
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 0);
    nx_sys_reader_close(r);
    assert_int_equal(nx_sys_reader_open(cpu, NX_SYS_CPU_USAGE, &r, &err), 0);
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
    assert_true(rec.u.cpu.cpu == 0 && rec.u.cpu.util_percent == 12.5);
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
    assert_true(rec.u.cpu.cpu == NX_SYS_CPU_AVERAGE && rec.u.cpu.util_percent == 100);
    nx_sys_reader_close(r);
    assert_int_equal(nx_sys_reader_open(mem, NX_SYS_HOST_MEM, &r, &err), 0);
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.u.mem.total_bytes, 4ll << 30);
    nx_sys_reader_close(r);
    free(rt);
    free(cpu);
    free(mem);
}

static void test_attributes_json(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_sys_attributes_to_json("a=1;name=x \"y\";empty=", &b);
    assert_string_equal(b.data, "{\"a\":\"1\",\"name\":\"x \\\"y\\\"\",\"empty\":\"\"}");
    nx_strbuf_free(&b);
    nx_sys_attributes_to_json("", &b);
    assert_string_equal(b.data, "{}");
    nx_strbuf_free(&b);
}

/* Writes `text` as a file of `kind` and expects reading to fail at `line`. */
static void expect_bad(const fixture *f, nx_sys_kind kind, const char *text, int line, const char *needle)
{
    char *path = fix_path(f->dir, nx_sys_file_name(kind));
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    nx_sys_reader *r;
    nx_error err = {0};
    int rc = nx_sys_reader_open(path, kind, &r, &err);
    if (rc == 0) {
        nx_sys_record rec;
        while ((rc = nx_sys_reader_next(r, &rec, &err)) == 1)
            ;
        nx_sys_reader_close(r);
    }
    assert_int_equal(rc, -1);
    char at[32];
    snprintf(at, sizeof at, "line %d:", line);
    if (!strstr(err.msg, path) || !strstr(err.msg, at) || !strstr(err.msg, needle))
        fail_msg("message '%s' lacks the path, '%s' or '%s'", err.msg, at, needle);
    free(path);
}

#define RT_HEAD "#nxprof runtime-events 1\nstart_ns\tend_ns\tsource\tname\tpid\ttid\tnc_idx\tworker_gid\tflow_ids\tattributes\n"
#define CPU_HEAD "#nxprof cpu-usage 1\ntimestamp_ns\tcpu\tutil_percent\n"
#define MEM_HEAD "#nxprof host-memory 1\ntimestamp_ns\tused_bytes\ttotal_bytes\n"

/* The device-memory header, spelled out here (not from the code under test). */
#define DEV_COLS                                                                                              \
    "timestamp_ns\tdevice_idx\thbm_idx\tgeneric_bytes\ttensor_instructions_bytes\tscalar_instructions_bytes\t"  \
    "gpsimd_instructions_bytes\tio_bytes\tdram_spill_bytes\tweights_bytes\tprofiler_buffers_bytes\t"            \
    "scalar_table_bytes\tvector_instructions_bytes\tsync_instructions_bytes\tshared_scratchpad_bytes\t"          \
    "tensors_bytes\tucode_lib_bytes\tgpsimd_stdio_bytes\tcollectives_bytes\tscratchpad_bytes\t"                 \
    "dma_rings_runtime_bytes\tdma_rings_spill_bytes\tdma_rings_io_bytes\tdma_rings_collectives_bytes\t"          \
    "unknown_bytes"
#define DEV_HEAD "#nxprof device-memory 1\n" DEV_COLS "\n"
/* 22 categories: 1, 2, ..., 22 after timestamp 7, device 0, hbm 1 (sum 253). */
#define DEV_CATS "1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\t20\t21\t22"

static void test_bad_lines(void **state)
{
    fixture *f = *state;
    expect_bad(f, NX_SYS_CPU_USAGE, "", 1, "expected the version line");
    expect_bad(f, NX_SYS_CPU_USAGE, "#nxprof cpu-usage 1\n", 2, "expected the header line");
    expect_bad(f, NX_SYS_CPU_USAGE, "#nxprof host-memory 1\n", 1, "expected the version line '#nxprof cpu-usage 1'");
    expect_bad(f, NX_SYS_CPU_USAGE, "#nxprof cpu-usage 2\n", 1, "unsupported version '2'");
    expect_bad(f, NX_SYS_CPU_USAGE, "#nxprof cpu-usage 1\ntimestamp_ns cpu util_percent\n", 2,
               "expected the header line");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "5\t0\n", 3, "2 fields; expected 3");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "5\t0\t10\n\n", 4, "empty line");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "5\t0\t100.5\n", 3, "from 0 to 100");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "5\tall\t1\n", 3, "'average'");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "5\t0\t1\r\n", 3, "got '1\\x0d'");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "9\t0\t1\n8\t0\t1\n", 4, "must be sorted");
    expect_bad(f, NX_SYS_HOST_MEM, MEM_HEAD "1\t10\t5\n", 3, "used_bytes 10 and total_bytes 5");
    expect_bad(f, NX_SYS_HOST_MEM, MEM_HEAD "-1\t1\t5\n", 3, "column 'timestamp_ns'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t4\tneuron_rt\tx\t1\t1\t\t\t\t\n", 3, "before start_ns");
    /* Times past 2^62 - 1 ns (the bound of device records): their spans could pass int64. */
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "0\t4611686018427387904\tneuron_rt\tx\t1\t1\t\t\t\t\n", 3,
               "column 'end_ns': 4611686018427387904 is not a Unix ns time");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "9223372036854775807\t0\t1\n", 3, "column 'timestamp_ns'");
    expect_bad(f, NX_SYS_HOST_MEM, MEM_HEAD "4611686018427387904\t1\t5\n", 3, "not a Unix ns time");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tkernel\tx\t1\t1\t\t\t\t\n", 3, "column 'source'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\t\t1\t1\t\t\t\t\n", 3, "column 'name': empty");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\tone\t\t\t\n", 3, "column 'nc_idx'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\t\t\t1,,2\t\n", 3, "column 'flow_ids'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\t\t\t\t=v\n", 3, "column 'attributes'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\t\t\t\ta=1;\n", 3, "ends with ';'");
}

/* The file's category columns are the catalogue's SystemProfileHbmUsage
 * *_bytes fields but total_bytes, in catalogue order. */
static void test_device_mem_columns_follow_catalogue(void **state)
{
    (void)state;
    const nx_schema_table *t = nx_schema_table_find("SystemProfileHbmUsage");
    assert_non_null(t);
    unsigned k = 0;
    for (size_t i = 0; i < t->n_fields; i++) {
        const char *n = t->fields[i].name;
        size_t len = strlen(n);
        if (len < 6 || strcmp(n + len - 6, "_bytes") != 0 || strcmp(n, "total_bytes") == 0)
            continue;
        assert_true(k < NX_HBM_CATEGORY_COUNT);
        assert_non_null(nx_sys_hbm_column(k));
        assert_string_equal(nx_sys_hbm_column(k), n);
        k++;
    }
    assert_int_equal(k, NX_HBM_CATEGORY_COUNT);
    assert_int_equal(NX_HBM_CATEGORY_COUNT, 22);
    assert_null(nx_sys_hbm_column(NX_HBM_CATEGORY_COUNT));
    assert_string_equal(nx_sys_file_name(NX_SYS_DEVICE_MEM), "device_mem.tsv");
    assert_string_equal(nx_sys_kind_tag(NX_SYS_DEVICE_MEM), "device-memory");
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_device_mem_read(void **state)
{
    fixture *f = *state;
    char *path = fix_path(f->dir, "device_mem.tsv");
    /* two lines of one moment, then a later one; the last line has no LF */
    write_text(path, DEV_HEAD "7\t0\t1\t" DEV_CATS "\n7\t0\t0\t" DEV_CATS "\n"
                     "9\t3\t2\t0\t0\t0\t0\t0\t0\t9223372036854775806\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t1");
    nx_sys_reader *r;
    nx_sys_record rec;
    nx_error err;
    if (nx_sys_reader_open(path, NX_SYS_DEVICE_MEM, &r, &err) != 0)
        fail_msg("%s", err.msg);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
        const nx_sys_hbm_sample *s = &rec.u.hbm;
        assert_int_equal(rec.line, 3 + i);
        assert_int_equal(s->timestamp_ns, 7);
        assert_int_equal(s->device_idx, 0);
        assert_int_equal(s->hbm_idx, 1 - i);
        for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++)
            assert_int_equal(s->bytes[k], k + 1);
        assert_int_equal(s->total_bytes, 253);
    }
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.u.hbm.device_idx, 3);
    assert_int_equal(rec.u.hbm.bytes[NX_HBM_weights], INT64_MAX - 1);
    assert_int_equal(rec.u.hbm.bytes[NX_HBM_unknown], 1);
    assert_int_equal(rec.u.hbm.total_bytes, INT64_MAX);   /* exactly at the limit is fine */
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 0);
    nx_sys_reader_close(r);

    /* writer -> reader */
    nx_sys_writer *w;
    assert_int_equal(nx_sys_writer_open(path, NX_SYS_DEVICE_MEM, &w, &err), 0);
    nx_sys_hbm_sample in = {.timestamp_ns = 1766074687850566604, .device_idx = 1, .hbm_idx = 0};
    for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++)
        in.bytes[k] = (int64_t)k << 33;
    in.total_bytes = 5;   /* ignored by the writer */
    assert_int_equal(nx_sys_write_hbm(w, &in, &err), 0);
    assert_int_equal(nx_sys_writer_close(w, &err), 0);
    FILE *fp = fopen(path, "r");
    char line[4096];
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "#nxprof device-memory 1\n");
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, DEV_COLS "\n");
    fclose(fp);
    assert_int_equal(nx_sys_reader_open(path, NX_SYS_DEVICE_MEM, &r, &err), 0);
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.u.hbm.timestamp_ns, in.timestamp_ns);
    assert_int_equal(rec.u.hbm.device_idx, 1);
    int64_t sum = 0;
    for (unsigned k = 0; k < NX_HBM_CATEGORY_COUNT; k++) {
        assert_int_equal(rec.u.hbm.bytes[k], in.bytes[k]);
        sum += in.bytes[k];
    }
    assert_int_equal(rec.u.hbm.total_bytes, sum);
    assert_int_equal(nx_sys_reader_next(r, &rec, &err), 0);
    nx_sys_reader_close(r);
    free(path);
}

static void test_device_mem_bad_lines(void **state)
{
    fixture *f = *state;
    const nx_sys_kind K = NX_SYS_DEVICE_MEM;
    expect_bad(f, K, "", 1, "expected the version line '#nxprof device-memory 1'");
    expect_bad(f, K, "#nxprof host-memory 1\n" DEV_COLS "\n", 1, "expected the version line");
    expect_bad(f, K, "#nxprof device-memory 2\n" DEV_COLS "\n", 1, "unsupported version '2'");
    expect_bad(f, K, "#nxprof device-memory 1\n", 2, "expected the header line");
    /* total_bytes is not a column */
    expect_bad(f, K, "#nxprof device-memory 1\ntimestamp_ns\tdevice_idx\thbm_idx\ttotal_bytes\n", 2,
               "column 4 is 'total_bytes', expected 'generic_bytes'");
    expect_bad(f, K, "#nxprof device-memory 1\n" DEV_COLS "\textra\n", 2,
               "column 26 is 'extra', expected no more columns");
    expect_bad(f, K, "#nxprof device-memory 1\ntimestamp_ns\tdevice_idx\n", 2, "column 3 is missing");
    expect_bad(f, K, DEV_HEAD "7\t0\t0\t" DEV_CATS "\n8\t0\t0\t-1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\t20\t21\t22\n",
               4, "column 'generic_bytes': expected a non-negative decimal integer, got '-1'");
    expect_bad(f, K, DEV_HEAD "7\t0\t0\t1.5\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\t20\t21\t22\n",
               3, "column 'generic_bytes': expected a non-negative decimal integer, got '1.5'");
    expect_bad(f, K, DEV_HEAD "7\t-1\t0\t" DEV_CATS "\n", 3, "column 'device_idx'");
    expect_bad(f, K, DEV_HEAD "9\t0\t0\t" DEV_CATS "\n8\t0\t0\t" DEV_CATS "\n", 4, "must be sorted");
    expect_bad(f, K, DEV_HEAD "7\t0\t0\t0\t0\t0\t0\t0\t0\t9223372036854775807\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t1\n", 3,
               "total_bytes would overflow");
    expect_bad(f, K, DEV_HEAD "7\t0\t0\t9223372036854775808\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n", 3,
               "column 'generic_bytes'");
    expect_bad(f, K, DEV_HEAD "7\t0\t0\t" DEV_CATS "\n8\t0\t0\t1\t2\t3", 4, "6 fields; expected 25");
}

static void test_writer_refuses_bad_values(void **state)
{
    fixture *f = *state;
    char *path = fix_path(f->dir, "runtime_events.tsv");
    nx_sys_writer *w;
    nx_error err;
    assert_int_equal(nx_sys_writer_open(path, NX_SYS_RUNTIME_EVENTS, &w, &err), 0);
    nx_sys_runtime_event e = {1, 2, "neuron_rt", "a\tb", 1, 1, NX_SYS_NULL, NX_SYS_NULL, "", ""};
    assert_int_equal(nx_sys_write_runtime(w, &e, &err), -1);
    e.name = "ok";
    e.start_ns = 3;
    assert_int_equal(nx_sys_write_runtime(w, &e, &err), -1);   /* end before start */
    e.start_ns = 1;
    assert_int_equal(nx_sys_write_runtime(w, &e, &err), 0);
    e.start_ns = 0;
    e.end_ns = 0;
    assert_int_equal(nx_sys_write_runtime(w, &e, &err), -1);   /* out of order */
    assert_non_null(strstr(err.msg, "before the previous"));
    assert_int_equal(nx_sys_writer_close(w, &err), 0);
    free(path);

    path = fix_path(f->dir, "device_mem.tsv");
    assert_int_equal(nx_sys_writer_open(path, NX_SYS_DEVICE_MEM, &w, &err), 0);
    nx_sys_hbm_sample h = {.timestamp_ns = 10};
    h.bytes[NX_HBM_io] = -1;
    assert_int_equal(nx_sys_write_hbm(w, &h, &err), -1);   /* negative */
    h.bytes[NX_HBM_io] = INT64_MAX;
    h.bytes[NX_HBM_tensors] = 1;
    assert_int_equal(nx_sys_write_hbm(w, &h, &err), -1);   /* the sum overflows */
    h.bytes[NX_HBM_tensors] = 0;
    assert_int_equal(nx_sys_write_hbm(w, &h, &err), 0);
    h.timestamp_ns = 9;
    assert_int_equal(nx_sys_write_hbm(w, &h, &err), -1);   /* out of order */
    assert_int_equal(nx_sys_writer_close(w, &err), 0);
    free(path);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_round_trip), T(test_attributes_json), T(test_bad_lines), T(test_writer_refuses_bad_values),
        T(test_device_mem_columns_follow_catalogue), T(test_device_mem_read), T(test_device_mem_bad_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
