/* test_framework_source.c — the registry of framework-event sources
 * (capture/framework_source.h): which source a file name goes to, the
 * patterns messages quote, and that a registered source reads a trace. */
#define _DEFAULT_SOURCE   /* mkstemps */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/framework_source.h"

static void test_names_choose_the_source(void **state)
{
    (void)state;
    const nx_framework_source *json = nx_framework_source_for("trace.json");
    assert_non_null(json);
    assert_string_equal(json->name, "Chrome JSON");
    assert_ptr_equal(nx_framework_source_for("/a/b/rank0.pt.trace.json.gz"), json);
    assert_ptr_equal(nx_framework_source_for("perfetto_trace.json.gz"), json);
    assert_null(nx_framework_source_for("trace.json.bak"));
    assert_null(nx_framework_source_for("trace.jsonx"));
    assert_null(nx_framework_source_for("runtime_events.tsv"));
    assert_null(nx_framework_source_for(""));
}

static void test_patterns_list_every_suffix(void **state)
{
    (void)state;
    char buf[128];
    nx_framework_source_patterns(buf, sizeof buf);
    for (size_t i = 0; i < nx_framework_source_count; i++)
        for (const char *const *s = nx_framework_sources[i]->suffixes; *s; s++) {
            char want[32];
            snprintf(want, sizeof want, "*%s", *s);
            assert_non_null(strstr(buf, want));
        }
    char tiny[8];
    nx_framework_source_patterns(tiny, sizeof tiny);   /* cut, never overrun */
    assert_true(strlen(tiny) < sizeof tiny);
}

static int count_event(void *ctx, const nx_chrome_event *ev)
{
    (void)ev;
    (*(int *)ctx)++;
    return 0;
}

static void test_the_source_reads_a_trace(void **state)
{
    (void)state;
    char path[] = "/tmp/nx_fwsrc_XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    const char *text = "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2},{\"ph\":\"i\",\"ts\":3}]}";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int n = 0;
    nx_chrome_handlers h = {.event = count_event, .toplevel = NULL, .ctx = &n, .skipped = NULL};
    nx_error err;
    assert_int_equal(nx_framework_source_for(path)->read(path, &h, &err), 0);
    assert_int_equal(n, 2);
    unlink(path);
    assert_int_equal(nx_framework_source_for(path)->read(path, &h, &err), -1);   /* gone: named */
    assert_non_null(strstr(err.msg, path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_choose_the_source),
        cmocka_unit_test(test_patterns_list_every_suffix),
        cmocka_unit_test(test_the_source_reads_a_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
