/*
 * test_nki_lines.c — query/nki_lines.h on the profile of nki_fixture.h: count,
 * self and total time per attn.py line, computed here row by row from the
 * fixture's definition (each name's own line and the call sites on its stack),
 * the order (self descending, then line), the totals and shares, a line seen
 * twice on one stack counted once, and a profile without KernelInstructions.
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

#include "nki_fixture.h"
#include "profile/profile_table.h"
#include "query/nki_lines.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxnkilines-XXXXXX");
    assert_non_null(mkdtemp(dir));
    nki_write_tables(dir);
    nki_write_instructions(dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

/* The fixture's lines: own line per name index (NKI_NAMES), -1 unattributed; call sites. */
static const int OWN[6] = {42, 60, 42, -1, -1, 71};
static const int SITES[6][2] = {{10, 0}, {40, 10}, {10, 0}, {0, 0}, {0, 0}, {70, 0}};
static const int LINES[] = {10, 40, 42, 60, 70, 71};

typedef struct want {
    int64_t count, self, total;
} want;

static void expected(want *w, int64_t *all_ns, int64_t *attr_ns)
{
    memset(w, 0, 6 * sizeof *w);
    *all_ns = *attr_ns = 0;
    for (size_t r = 0; r < NKI_ROWS; r++) {
        size_t k = r % 6;
        int64_t d = nki_dur(r);
        *all_ns += d;
        if (OWN[k] < 0)
            continue;
        *attr_ns += d;
        for (size_t l = 0; l < 6; l++) {
            if (LINES[l] == OWN[k]) {
                w[l].count++;
                w[l].self += d;
                w[l].total += d;
            }
            if (LINES[l] == SITES[k][0] || LINES[l] == SITES[k][1])
                w[l].total += d;
        }
    }
}

static void lines_and_order(void **state)
{
    (void)state;
    want w[6];
    int64_t all_ns, attr_ns;
    expected(w, &all_ns, &attr_ns);
    nx_nki_lines s;
    nx_error err = {0};
    assert_int_equal(nx_nki_lines_run(dir, &s, &err), 0);
    assert_int_equal(s.instructions, NKI_ROWS);
    assert_int_equal(s.instruction_ns, all_ns);
    assert_int_equal(s.attributed_ns, attr_ns);
    assert_int_equal(nx_nki_lines_count(&s), 6);
    int64_t prev_self = INT64_MAX, prev_line = -1;
    for (size_t i = 0; i < nx_nki_lines_count(&s); i++) {
        nx_nki_line_time l;
        nx_nki_lines_at(&s, i, &l);
        assert_true(l.file && l.file_len == 7 && memcmp(l.file, "attn.py", 7) == 0);
        assert_true(l.has_line);
        size_t at = 6;
        for (size_t j = 0; j < 6; j++)
            if (LINES[j] == l.line)
                at = j;
        assert_true(at < 6);
        assert_int_equal(l.count, w[at].count);
        assert_int_equal(l.self_ns, w[at].self);
        assert_int_equal(l.total_ns, w[at].total);
        assert_true(l.self_ns < prev_self || (l.self_ns == prev_self && l.line > prev_line));
        prev_self = l.self_ns;
        prev_line = l.line;
    }
    nx_nki_line_time top;
    nx_nki_lines_at(&s, 0, &top);
    assert_int_equal(top.line, 42);
    assert_true(nx_nki_lines_share(&s, top.self_ns) > 0.0);
    assert_true(nx_nki_lines_share(&s, all_ns) > 99.999 && nx_nki_lines_share(&s, all_ns) < 100.001);
    nx_nki_lines_free(&s);
}

static void absent(void **state)
{
    (void)state;
    char d2[64];
    snprintf(d2, sizeof d2, "/tmp/nxnkilines2-XXXXXX");
    assert_non_null(mkdtemp(d2));
    nki_write_instructions(d2);
    nx_nki_lines s;
    nx_error err = {0};
    assert_int_equal(nx_nki_lines_run(d2, &s, &err), NX_PROFILE_TABLE_ABSENT);
    fixture_rmrf(d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(lines_and_order), cmocka_unit_test(absent)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
