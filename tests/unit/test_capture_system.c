/* test_capture_system.c — the system capture TSV files: writer -> reader round
 * trip, attributes as JSON, and each bad line rejected with the file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "capture/system_capture.h"
#include "capture_fixture.h"

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
    nx_cap_error err;
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
    nx_cap_error err = {{0}};
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
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "5\t0\t1\r\n", 3, "got '1\r'");
    expect_bad(f, NX_SYS_CPU_USAGE, CPU_HEAD "9\t0\t1\n8\t0\t1\n", 4, "must be sorted");
    expect_bad(f, NX_SYS_HOST_MEM, MEM_HEAD "1\t10\t5\n", 3, "used_bytes 10 and total_bytes 5");
    expect_bad(f, NX_SYS_HOST_MEM, MEM_HEAD "-1\t1\t5\n", 3, "column 'timestamp_ns'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t4\tneuron_rt\tx\t1\t1\t\t\t\t\n", 3, "before start_ns");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tkernel\tx\t1\t1\t\t\t\t\n", 3, "column 'source'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\t\t1\t1\t\t\t\t\n", 3, "column 'name': empty");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\tone\t\t\t\n", 3, "column 'nc_idx'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\t\t\t1,,2\t\n", 3, "column 'flow_ids'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\t\t\t\t=v\n", 3, "column 'attributes'");
    expect_bad(f, NX_SYS_RUNTIME_EVENTS, RT_HEAD "5\t6\tneuron_rt\tx\t1\t1\t\t\t\ta=1;\n", 3, "ends with ';'");
}

static void test_writer_refuses_bad_values(void **state)
{
    fixture *f = *state;
    char *path = fix_path(f->dir, "runtime_events.tsv");
    nx_sys_writer *w;
    nx_cap_error err;
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
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_round_trip), T(test_attributes_json), T(test_bad_lines), T(test_writer_refuses_bad_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
