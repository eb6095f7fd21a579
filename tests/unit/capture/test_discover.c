/* test_capture_discover.c — capture directory discovery: sessions, pairing of
 * traces with programs by hash, framework-only captures, and what is fatal or a
 * warning. Discovery goes by names only, so the files here are empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "capture/capture.h"
#include "capture_fixture.h"

#define HASH "00000000deadbeef"

static void touch(const char *dir, const char *name)
{
    char *p = fix_path(dir, name);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fclose(fp);
    free(p);
}

static char *mkdirs(const char *root, const char *rel)
{
    char *p = fix_path(root, rel);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    assert_int_equal(system(cmd), 0);
    return p;
}

static void test_session_and_pairing(void **state)
{
    (void)state;
    char *root = fix_tmpdir();
    char *s = mkdirs(root, "i-0abc_pid_42/1766072156592459482");
    touch(s, "program_" HASH ".nxprog");
    touch(s, "trace_" HASH "_nd0_nc1.nxtrace");
    touch(s, "trace_" HASH "_nd0_nc0.nxtrace");
    touch(s, "trace_" HASH "_nd1_nc0.nxtrace");
    touch(s, "runtime_events.tsv");
    touch(s, "cpu_usage.tsv");
    touch(s, "device_mem.tsv");
    touch(s, "trace.json");
    touch(s, "notes.txt");
    nx_capture cap;
    nx_error err;
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    if (nx_capture_discover(root, &cap, &warner, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(cap.n_sessions, 1);
    const nx_cap_session *ss = &cap.sessions[0];
    assert_string_equal(ss->instance_id, "i-0abc");
    assert_int_equal(ss->pid, 42);
    assert_string_equal(ss->timestamp, "1766072156592459482");
    assert_int_equal(ss->n_programs, 1);
    assert_true(ss->programs[0].hash == 0xdeadbeefull);
    assert_int_equal(ss->programs[0].n_traces, 3);
    assert_int_equal(ss->programs[0].traces[0].core, 0);
    assert_int_equal(ss->programs[0].traces[1].core, 1);
    assert_int_equal(ss->programs[0].traces[2].device, 1);
    assert_non_null(ss->runtime_events_path);
    assert_non_null(ss->cpu_usage_path);
    assert_null(ss->host_mem_path);
    assert_non_null(ss->device_mem_path);
    assert_non_null(strstr(ss->device_mem_path, "/device_mem.tsv"));
    assert_int_equal(ss->n_chrome_traces, 1);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "notes.txt"));
    nx_capture_free(&cap);
    fix_rmtree(root);
    free(s);
    free(root);
}

static void expect_fatal(const char *root, const char *needle)
{
    nx_capture cap;
    nx_error err = {0};
    assert_int_equal(nx_capture_discover(root, &cap, NULL, &err), -1);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_int_equal(cap.n_sessions, 0);
}

static void test_fatal_layouts(void **state)
{
    (void)state;
    char *root = fix_tmpdir();
    expect_fatal(root, "not a capture");
    char *s = mkdirs(root, "i-0abc_pid_42/100");
    touch(s, "trace_" HASH "_nd0_nc0.nxtrace");
    expect_fatal(root, "trace_" HASH "_nd0_nc0.nxtrace: no program_" HASH ".nxprog");
    touch(s, "program_" HASH ".nxprog");
    touch(s, "trace_XYZ.nxtrace");
    expect_fatal(root, "trace_XYZ.nxtrace: a trace file name must be");
    char *bad = fix_path(s, "trace_XYZ.nxtrace");
    remove(bad);
    touch(s, "program_" HASH "0.nxprog");
    expect_fatal(root, "a program file name must be");
    expect_fatal("/nonexistent/capture", "cannot read directory");
    fix_rmtree(root);
    free(bad);
    free(s);
    free(root);
}

static void test_framework_only_and_warnings(void **state)
{
    (void)state;
    char *root = fix_tmpdir();
    touch(root, "rank-0.pt.trace.json.gz");
    nx_capture cap;
    nx_error err;
    assert_int_equal(nx_capture_discover(root, &cap, NULL, &err), 0);
    assert_int_equal(cap.n_sessions, 1);
    assert_int_equal(cap.sessions[0].pid, -1);
    assert_string_equal(cap.sessions[0].instance_id, "");
    assert_int_equal(cap.sessions[0].n_chrome_traces, 1);
    nx_capture_free(&cap);
    /* With a session beside it the loose trace is ignored, and a program
     * without traces is a warning. */
    char *s = mkdirs(root, "i-0abc_pid_7/5");
    touch(s, "program_" HASH ".nxprog");
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    assert_int_equal(nx_capture_discover(root, &cap, &warner, &err), 0);
    assert_int_equal(cap.n_sessions, 1);
    assert_int_equal(cap.sessions[0].n_chrome_traces, 0);
    assert_int_equal(w.count, 2);
    nx_capture_free(&cap);
    fix_rmtree(root);
    free(s);
    free(root);
}

static void test_names(void **state)
{
    (void)state;
    char name[NX_CAP_NAME_MAX];
    uint64_t h;
    uint32_t d, c;
    nx_cap_trace_name(0xfe4043b08800d829ull, 3, 12, name);
    assert_string_equal(name, "trace_fe4043b08800d829_nd3_nc12.nxtrace");
    assert_true(nx_cap_parse_trace_name(name, &h, &d, &c));
    assert_true(h == 0xfe4043b08800d829ull && d == 3 && c == 12);
    assert_false(nx_cap_parse_trace_name("trace_fe4043b08800d829_nd03_nc12.nxtrace", &h, &d, &c));
    assert_false(nx_cap_parse_trace_name("trace_FE4043B08800D829_nd3_nc12.nxtrace", &h, &d, &c));
    nx_cap_program_name(1, name);
    assert_string_equal(name, "program_0000000000000001.nxprog");
    assert_true(nx_cap_session_dir_name("i-0abc", 42, name));
    assert_string_equal(name, "i-0abc_pid_42");
    assert_false(nx_cap_session_dir_name("i_0abc", 42, name));
    assert_false(nx_cap_session_dir_name("", 42, name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_and_pairing),
        cmocka_unit_test(test_fatal_layouts),
        cmocka_unit_test(test_framework_only_and_warnings),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
