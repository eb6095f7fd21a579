/*
 * test_profile_plan.c — the profiles one `nxprof process` run writes
 * (profile_plan.h): a system profile plus a device profile per trace, one trace
 * without system data as a lone device profile, names N-nd<D>-nc<C> (with the
 * program hash when two programs share a core), N-s<k> per session, the
 * --output-file layout (DIR, DIR/devices/<name>) and its refusal of several
 * sessions, the ignore switches, and names that are too long.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_layout.h"
#include "process/profile_plan.h"

/* A capture built in memory: sessions of programs of traces (no files needed). */
typedef struct fake {
    nx_cap_trace_file traces[4][8];
    nx_cap_program_file progs[4][4];
    nx_cap_session ses[4];
    nx_capture cap;
} fake;

static char root[] = "/cap";
static char rt_path[] = "/cap/s/runtime_events.tsv";
static char ses_dir[4][32];

/* Session k: n_progs programs, each with the cores listed in cores[] (device 0). */
static void add_session(fake *f, size_t n_progs, const uint32_t *cores, size_t n_cores, bool system)
{
    size_t k = f->cap.n_sessions++;
    nx_cap_session *s = &f->ses[k];
    memset(s, 0, sizeof *s);
    snprintf(ses_dir[k], sizeof ses_dir[k], "/cap/i-1_pid_%zu/100", k);
    s->dir = ses_dir[k];
    s->instance_id = (char *)"i-1";
    s->programs = f->progs[k];
    s->n_programs = n_progs;
    for (size_t j = 0; j < n_progs; j++) {
        nx_cap_program_file *p = &f->progs[k][j];
        memset(p, 0, sizeof *p);
        p->hash = 0x1122334455667788ull + j;
        p->traces = &f->traces[k][j * 4];
        p->n_traces = n_cores;
        for (size_t c = 0; c < n_cores; c++)
            p->traces[c] = (nx_cap_trace_file){.path = (char *)"t", .device = 0, .core = cores[c]};
    }
    s->runtime_events_path = system ? rt_path : NULL;
    f->cap.root = root;
    f->cap.sessions = f->ses;
}

static nx_process_options opts(const char *data_path, const char *name, const char *out)
{
    return (nx_process_options){.capture_dir = "/cap", .data_path = data_path, .display_name = name, .output_file = out};
}

static void test_system_and_device_profiles(void **state)
{
    (void)state;
    fake f = {0};
    const uint32_t cores[] = {0, 1};
    add_session(&f, 1, cores, 2, true);
    nx_process_options o = opts("/d", "run", NULL);
    nx_profile_plan plan;
    nx_error err = {0};
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 3);
    assert_int_equal(plan.p[0].kind, NX_PROFILE_SYSTEM);
    assert_string_equal(plan.p[0].name, "run");
    assert_string_equal(plan.p[0].dir, "/d/profiles/global/run@latest");
    assert_true(plan.p[0].system_data);
    assert_int_equal(plan.p[0].n_devices, 2);
    for (size_t i = 1; i < 3; i++) {
        char want[64];
        assert_int_equal(plan.p[i].kind, NX_PROFILE_DEVICE);
        assert_int_equal(plan.p[i].system, 0);
        assert_false(plan.p[i].nested);
        assert_int_equal(plan.p[i].trace->core, i - 1);
        snprintf(want, sizeof want, "run-nd0-nc%zu", i - 1);
        assert_string_equal(plan.p[i].name, want);
        snprintf(want, sizeof want, "/d/profiles/global/run-nd0-nc%zu@latest", i - 1);
        assert_string_equal(plan.p[i].dir, want);
    }
    nx_profile_plan_free(&plan);

    /* --output-file: DIR and DIR/devices/<name>, N from DIR's name. */
    o = opts(NULL, NULL, "/out/prof/");
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 3);
    assert_string_equal(plan.p[0].dir, "/out/prof/");
    assert_string_equal(plan.p[1].name, "prof-nd0-nc0");
    assert_string_equal(plan.p[1].dir, "/out/prof//devices/prof-nd0-nc0");
    assert_true(plan.p[1].nested);
    nx_profile_plan_free(&plan);
}

static void test_one_trace_without_system_data(void **state)
{
    (void)state;
    fake f = {0};
    const uint32_t cores[] = {3};
    add_session(&f, 1, cores, 1, false);
    nx_process_options o = opts(NULL, NULL, "/out/one");
    nx_profile_plan plan;
    nx_error err = {0};
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.p[0].kind, NX_PROFILE_DEVICE);
    assert_string_equal(plan.p[0].name, "one");
    assert_string_equal(plan.p[0].dir, "/out/one");
    assert_int_equal(plan.p[0].trace->core, 3);
    assert_int_equal(plan.p[0].system, SIZE_MAX);
    nx_profile_plan_free(&plan);
    /* With system data, the one trace gets a system profile beside it. */
    f.ses[0].runtime_events_path = rt_path;
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 2);
    assert_string_equal(plan.p[1].name, "one-nd0-nc3");
    nx_profile_plan_free(&plan);
    /* ... unless the system half is switched off. */
    o.ignore_system_profile = true;
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.p[0].kind, NX_PROFILE_DEVICE);
    nx_profile_plan_free(&plan);
    /* Both switched off: nothing to process, said so. */
    o.ignore_device_profile = true;
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), -1);
    assert_non_null(strstr(err.msg, "nothing to process"));
}

static void test_programs_sharing_a_core(void **state)
{
    (void)state;
    fake f = {0};
    const uint32_t cores[] = {0};
    add_session(&f, 2, cores, 1, true);
    nx_process_options o = opts("/d", "m", NULL);
    nx_profile_plan plan;
    nx_error err = {0};
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 3);
    /* Hashes that agree in all but the last digit still give distinct names. */
    assert_string_equal(plan.p[1].name, "m-nd0-nc0-1122334455667788");
    assert_string_equal(plan.p[2].name, "m-nd0-nc0-1122334455667789");
    nx_profile_plan_free(&plan);
}

static void test_sessions(void **state)
{
    (void)state;
    fake f = {0};
    const uint32_t cores[] = {0, 1};
    add_session(&f, 1, cores, 2, true);
    add_session(&f, 1, cores, 1, false);
    nx_process_options o = opts("/d", "run", NULL);
    nx_profile_plan plan;
    nx_error err = {0};
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), 0);
    assert_int_equal(plan.n, 4);
    assert_string_equal(plan.p[0].name, "run-s1");
    assert_string_equal(plan.p[1].name, "run-s1-nd0-nc0");
    assert_string_equal(plan.p[2].name, "run-s1-nd0-nc1");
    assert_string_equal(plan.p[3].name, "run-s2");   /* one trace, no system data */
    assert_int_equal(plan.p[3].kind, NX_PROFILE_DEVICE);
    assert_int_equal(plan.p[3].session, 1);
    nx_profile_plan_free(&plan);
    o = opts(NULL, NULL, "/out/x");
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), -1);
    assert_non_null(strstr(err.msg, "2 capture sessions"));
    assert_non_null(strstr(err.msg, "--data-path"));
}

static void test_names_checked(void **state)
{
    (void)state;
    fake f = {0};
    const uint32_t cores[] = {0, 1};
    add_session(&f, 1, cores, 2, true);
    char name[NX_DISPLAY_NAME_MAX + 1];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';   /* valid as a display name, too long with "-nd0-nc0" */
    nx_process_options o = opts("/d", name, NULL);
    nx_profile_plan plan;
    nx_error err = {0};
    assert_int_equal(nx_profile_plan_make(&o, &f.cap, &plan, &err), -1);
    assert_non_null(strstr(err.msg, "-nd0-nc0"));
    assert_non_null(strstr(err.msg, "limit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_system_and_device_profiles),
        cmocka_unit_test(test_one_trace_without_system_data),
        cmocka_unit_test(test_programs_sharing_a_core),
        cmocka_unit_test(test_sessions),
        cmocka_unit_test(test_names_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
