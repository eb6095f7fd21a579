/* test_handoff.c — util/handoff.h: items are worked in the order given, never two
 * at once; the first failure is reported to the owner and later items are
 * discarded, not worked; stop joins after the item in hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/handoff.h"

typedef struct log {
    int worked[64], n_worked;
    int discarded[64], n_discarded;
    int fail_at;                     /* item value that fails, or -1 */
} log_t;

static int work(void *ctx, void *item, char *err, size_t errlen)
{
    log_t *l = ctx;
    int v = *(int *)item;
    if (v == l->fail_at) {
        snprintf(err, errlen, "item %d failed", v);
        return -1;
    }
    l->worked[l->n_worked++] = v;
    return 0;
}

static void discard(void *ctx, void *item)
{
    log_t *l = ctx;
    l->discarded[l->n_discarded++] = *(int *)item;
}

static void in_order(void **state)
{
    (void)state;
    log_t l = {.fail_at = -1};
    nx_handoff h;
    assert_int_equal(nx_handoff_start(&h, work, discard, &l), 0);
    int items[2];   /* double buffering: the owner reuses an item once the worker is idle */
    char err[NX_HANDOFF_ERR];
    for (int i = 0; i < 40; i++) {
        items[i % 2] = i;
        assert_int_equal(nx_handoff_give(&h, &items[i % 2], err, sizeof err), 0);
        assert_int_equal(nx_handoff_wait(&h, err, sizeof err), 0);
    }
    nx_handoff_stop(&h);
    assert_int_equal(l.n_worked, 40);
    for (int i = 0; i < 40; i++)
        assert_int_equal(l.worked[i], i);
    assert_int_equal(l.n_discarded, 0);
}

static void first_failure_reported(void **state)
{
    (void)state;
    log_t l = {.fail_at = 3};
    nx_handoff h;
    assert_int_equal(nx_handoff_start(&h, work, discard, &l), 0);
    int items[8];
    char err[NX_HANDOFF_ERR] = "";
    int given = 0, rc = 0;
    for (int i = 0; i < 8 && rc == 0; i++) {
        items[i] = i;
        rc = nx_handoff_give(&h, &items[i], err, sizeof err);
        given += rc == 0;
    }
    assert_int_equal(rc, -1);
    assert_string_equal(err, "item 3 failed");
    assert_int_equal(nx_handoff_wait(&h, err, sizeof err), -1);
    nx_handoff_stop(&h);
    assert_int_equal(l.n_worked, 3);            /* 0, 1, 2 */
    assert_int_equal(given, 4);                 /* 4 was refused: the failure was known by then */
    assert_int_equal(l.n_discarded, 1);         /* the failed item itself */
    assert_int_equal(l.discarded[0], 3);
}

static void stop_without_items(void **state)
{
    (void)state;
    log_t l = {.fail_at = -1};
    nx_handoff h;
    assert_int_equal(nx_handoff_start(&h, work, NULL, &l), 0);
    nx_handoff_stop(&h);
    nx_handoff_stop(&h);   /* a second stop is harmless */
    assert_int_equal(l.n_worked, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_order),
        cmocka_unit_test(first_failure_reported),
        cmocka_unit_test(stop_without_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
