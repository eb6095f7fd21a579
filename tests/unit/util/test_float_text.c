/* test_float_text.c — unit tests of util/float_text: the shortest text that
 * reads back as the same double or float. Expected texts are those Python's
 * repr and numpy's float32 repr (shortest round trip) give, in %g notation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/float_text.h"

static void expect_f64(double v, const char *want)
{
    char buf[NX_FLOAT_TEXT_MAX];
    size_t n = nx_f64_text(buf, v);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void expect_f32(float v, const char *want)
{
    char buf[NX_FLOAT_TEXT_MAX];
    size_t n = nx_f32_text(buf, v);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_f64_shortest(void **state)
{
    (void)state;
    expect_f64(0.1, "0.1");
    expect_f64(0.8, "0.8");
    expect_f64(1.0 / 3, "0.3333333333333333");
    expect_f64(1e300, "1e+300");
    expect_f64(9007199254740992.0, "9007199254740992");
    expect_f64(-0.0, "-0");
    expect_f64(-1.5, "-1.5");
    /* 17 digits where 16 do not read back. */
    expect_f64(0.1 + 0.2, "0.30000000000000004");
}

static void test_f32_shortest(void **state)
{
    (void)state;
    expect_f32(0.1f, "0.1");
    expect_f32(1.0f / 3, "0.33333334");
    expect_f32(3.4028235e38f, "3.4028235e+38");
    expect_f32(16777216.0f, "16777216");
}

static void test_nonfinite(void **state)
{
    (void)state;
    expect_f64(NAN, "nan");
    expect_f64(INFINITY, "inf");
    expect_f64(-INFINITY, "-inf");
    expect_f32(NAN, "nan");
    expect_f32(-INFINITY, "-inf");
}

/* Every text reads back as the value it was made from, over a spread of magnitudes. */
static void test_round_trip(void **state)
{
    (void)state;
    char buf[NX_FLOAT_TEXT_MAX];
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d))
            continue;
        nx_f64_text(buf, d);
        assert_true(strtod(buf, NULL) == d);
        float f = (float)d;
        if (!isfinite(f))
            continue;
        nx_f32_text(buf, f);
        assert_true(strtof(buf, NULL) == f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f64_shortest),
        cmocka_unit_test(test_f32_shortest),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
