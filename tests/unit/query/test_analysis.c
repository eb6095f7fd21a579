/*
 * test_analysis.c — the registry of analyses (analysis.h, analyses.c): every
 * descriptor well formed (names unique and in name order, parameters within
 * the bound with unique names), nx_analysis_find, a call's defaults, the one
 * parameter rule both surfaces use (values, bounds, refusals and their
 * messages), and the runner: on a two-rank profile whose times lie beyond
 * 2^53, running "ranks" gives what rank_stats.h's own functions give, as text
 * and as JSON with and without safe integers; what the codes say when the
 * analysis does not apply, when a parameter cannot apply, and when the
 * profile cannot be read, with the profile named as the call names it.
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
#include <unistd.h>

#include "query/analysis.h"
#include "query/rank_stats.h"
#include "system_fixture.h"

#define HOST "{\"cat\":\"user_annotation\"}"
#define CPU "{\"cat\":\"cpu_op\"}"
/* 2^60: every start is beyond 2^53, so safe integers change the JSON. */
#define T0 INT64_C(1152921504606846976)

/* Two ranks, two steps each, one collective per step, rank 1 later in step 2. */
static const sys_event EVENTS[] = {
    {T0, T0 + 1000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {T0 + 5, T0 + 1100, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#1", HOST},
    {T0 + 100, T0 + 120, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {T0 + 130, T0 + 150, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {T0 + 2000, T0 + 3000, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {T0 + 2000, T0 + 3500, "framework", NX_ABSENT, "i-1", 9, 9, "ProfilerStep#2", HOST},
    {T0 + 2100, T0 + 2120, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
    {T0 + 2600, T0 + 2620, "framework", NX_ABSENT, "i-1", 9, 9, "c10d::allreduce_", CPU},
};
static const int64_t RANK[] = {0, 1, 0, 1, 0, 1, 0, 1};

static char base[64], sys[96], bare[96];

static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/nx_analysis_%d", (int)getpid());
    mkdir(base, 0755);
    snprintf(sys, sizeof sys, "%s/sys", base);
    snprintf(bare, sizeof bare, "%s/bare", base);   /* no table at all */
    write_ranked_events(sys, EVENTS, RANK, sizeof EVENTS / sizeof EVENTS[0], 0);
    mkdir(bare, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(base);
    return 0;
}

static void test_registry(void **state)
{
    (void)state;
    size_t n = nx_analysis_count();
    assert_true(n >= 3);
    for (size_t i = 0; i < n; i++) {
        const nx_analysis *a = nx_analysis_at(i);
        assert_non_null(a);
        assert_true(a->name[0] && strspn(a->name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(a->name));
        assert_true(a->summary[0] && a->help[0] && a->help[strlen(a->help) - 1] == '\n');
        assert_non_null(a->answer);
        if (i)                       /* unique and in name order: `nxprof --help` merges by name */
            assert_true(strcmp(nx_analysis_at(i - 1)->name, a->name) < 0);
        assert_true(a->n_params <= NX_ANALYSIS_MAX_PARAMS);
        for (size_t p = 0; p < a->n_params; p++) {
            const nx_analysis_param *x = &a->params[p];
            assert_true(x->name[0] && x->arg[0] && x->help[0] && x->min <= x->max);
            for (size_t q = 0; q < p; q++)
                assert_string_not_equal(x->name, a->params[q].name);
        }
        assert_ptr_equal(nx_analysis_find(a->name), a);
    }
    assert_null(nx_analysis_at(n));
    assert_null(nx_analysis_find("nope"));
    assert_null(nx_analysis_find(""));
    assert_null(nx_analysis_find("Ranks"));
    for (const char *const *s = (const char *const[]){"breakdown", "insights", "ranks", NULL}; *s; s++)
        assert_non_null(nx_analysis_find(*s));
}

/* The call's defaults, then each value through the one rule: breakdown's top
 * (1..1000, default 10) and rank (0 or more, absent -1). */
static void test_params(void **state)
{
    (void)state;
    const nx_analysis *a = nx_analysis_find("breakdown");
    assert_int_equal(a->n_params, 3);
    const nx_analysis_param *rank = &a->params[0], *top = &a->params[2];
    assert_string_equal(rank->name, "rank");
    assert_string_equal(top->name, "top");
    nx_analysis_call c = nx_analysis_call_new(a, NX_ANALYSIS_JSON, true);
    assert_int_equal(c.format, NX_ANALYSIS_JSON);
    assert_true(c.safe_ints);
    assert_true(c.args[0] == -1 && c.args[1] == -1 && c.args[2] == 10);

    nx_error err = {0};
    int64_t v = 42;
    assert_int_equal(nx_analysis_param_parse(top, "1", &v, &err), NX_ANALYSIS_OK);
    assert_true(v == 1);
    assert_int_equal(nx_analysis_param_parse(top, "1000", &v, &err), NX_ANALYSIS_OK);
    assert_true(v == 1000);
    assert_int_equal(nx_analysis_param_parse(rank, "9223372036854775807", &v, &err), NX_ANALYSIS_OK);
    assert_true(v == INT64_MAX);

    static const struct {
        int which;                   /* 0: rank, 2: top */
        const char *text, *msg;
    } bad[] = {
        {2, "0", "top '0' is not in 1..1000"},
        {2, "1001", "top '1001' is not in 1..1000"},
        {2, "-1", "top '-1' is not in 1..1000"},
        {0, "-1", "rank '-1' is not in 0..9223372036854775807"},
        {2, "x", "top 'x' is not a whole number"},
        {2, "", "top '' is not a whole number"},
        {0, "007", "rank '007' is not a whole number"},
        {0, "+1", "rank '+1' is not a whole number"},
        {0, "1 ", "rank '1 ' is not a whole number"},
        {0, "9223372036854775808", "rank '9223372036854775808' is not a whole number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        assert_int_equal(nx_analysis_param_parse(&a->params[bad[i].which], bad[i].text, &v, &err),
                         NX_ANALYSIS_BAD_PARAM);
        assert_string_equal(err.msg, bad[i].msg);
        assert_true(v == 42);        /* the value is left as it was */
    }
}

/* One run of `name` on dir (called `label`); the code, the answer in *out. */
static int run(const char *name, const char *dir, const char *label, nx_analysis_format f, bool safe, nx_strbuf *out,
               nx_error *err)
{
    const nx_analysis *a = nx_analysis_find(name);
    assert_non_null(a);
    nx_analysis_call c = nx_analysis_call_new(a, f, safe);
    c.dir = dir;
    c.name = label;
    return nx_analysis_run(a, &c, out, err);
}

static void test_runner_equals_the_module(void **state)
{
    (void)state;
    nx_rank_stats s;
    nx_error err = {0};
    assert_int_equal(nx_rank_stats_read(sys, &s, &err), 0);
    assert_int_equal(s.n_ranks, 2);
    assert_int_equal(s.n_stragglers, 2);
    nx_strbuf own[3] = {NX_STRBUF_INIT, NX_STRBUF_INIT, NX_STRBUF_INIT};
    nx_rank_stats_json(&s, false, &own[0]);
    nx_rank_stats_json(&s, true, &own[1]);
    nx_rank_stats_text(&s, &own[2]);
    nx_rank_stats_free(&s);
    assert_string_not_equal(own[0].data, own[1].data);   /* the fixture's times are beyond 2^53 */
    assert_non_null(strstr(own[1].data, "\"1152921504606846981\""));

    static const struct {
        nx_analysis_format f;
        bool safe;
    } forms[] = {{NX_ANALYSIS_JSON, false}, {NX_ANALYSIS_JSON, true}, {NX_ANALYSIS_TEXT, false}};
    for (size_t i = 0; i < 3; i++) {
        nx_strbuf b = NX_STRBUF_INIT;
        assert_int_equal(run("ranks", sys, "sys", forms[i].f, forms[i].safe, &b, &err), NX_ANALYSIS_OK);
        assert_int_equal(b.len, own[i].len);
        assert_memory_equal(b.data, own[i].data, b.len);
        nx_strbuf_free(&b);
        nx_strbuf_free(&own[i]);
    }
}

static void test_runner_codes(void **state)
{
    (void)state;
    nx_error err = {0};
    nx_strbuf b = NX_STRBUF_INIT;
    /* Not applicable: the message names the profile as the call does, not its directory. */
    assert_int_equal(run("ranks", bare, "dev-1", NX_ANALYSIS_JSON, true, &b, &err), NX_ANALYSIS_NOT_APPLICABLE);
    assert_string_equal(err.msg, "dev-1 has no SystemProfileEvents table");
    assert_int_equal(run("breakdown", bare, "dev-1", NX_ANALYSIS_TEXT, false, &b, &err), NX_ANALYSIS_NOT_APPLICABLE);
    assert_string_equal(err.msg, "dev-1 has neither SystemProfileEvents nor Instruction");

    /* A parameter that cannot apply to the profile: breakdown's rank on no system profile. */
    const nx_analysis *bd = nx_analysis_find("breakdown");
    nx_analysis_call c = nx_analysis_call_new(bd, NX_ANALYSIS_JSON, true);
    c.dir = bare;
    c.name = "dev-1";
    c.args[0] = 0;
    assert_int_equal(nx_analysis_run(bd, &c, &b, &err), NX_ANALYSIS_BAD_PARAM);
    assert_string_equal(err.msg, "rank, step: dev-1 is not a system profile");

    /* A profile that cannot be read. */
    char gone[128];
    snprintf(gone, sizeof gone, "%s/gone", base);
    assert_int_equal(run("insights", gone, "gone", NX_ANALYSIS_JSON, true, &b, &err), NX_ANALYSIS_ERROR);
    assert_true(err.msg[0] != '\0');

    /* Insights apply to every profile: a bare one answers, with no finding. */
    assert_int_equal(run("insights", bare, "bare", NX_ANALYSIS_TEXT, false, &b, &err), NX_ANALYSIS_OK);
    assert_string_equal(b.data, "Insights: no rule fired (device rules checked)\n");
    nx_strbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_runner_equals_the_module),
        cmocka_unit_test(test_runner_codes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
