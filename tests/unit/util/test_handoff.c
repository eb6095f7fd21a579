/* test_handoff.c — util/handoff.h: items are worked in the order given, never two
 * at once; the first failure is reported to the owner and later items are
 * discarded, not worked; stop joins after the items given; with a queue of depth
 * d, an owner cycling through d + 1 buffers never refills one the worker has not
 * finished. */
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

static int work(void *ctx, void *item, nx_error *err)
{
    log_t *l = ctx;
    int v = *(int *)item;
    if (v == l->fail_at) {
        nx_error_set(err, "item %d failed", v);
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
    assert_int_equal(nx_handoff_start(&h, 1, work, discard, &l), 0);
    int items[2];   /* double buffering: the owner reuses an item once the worker is idle */
    nx_error err = {0};
    for (int i = 0; i < 40; i++) {
        items[i % 2] = i;
        assert_int_equal(nx_handoff_give(&h, &items[i % 2], &err), 0);
        assert_int_equal(nx_handoff_wait(&h, &err), 0);
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
    assert_int_equal(nx_handoff_start(&h, 1, work, discard, &l), 0);
    int items[8];
    nx_error err = {0};
    int given = 0, rc = 0;
    for (int i = 0; i < 8 && rc == 0; i++) {
        items[i] = i;
        rc = nx_handoff_give(&h, &items[i], &err);
        given += rc == 0;
    }
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, "item 3 failed");
    assert_int_equal(nx_handoff_wait(&h, &err), -1);
    nx_handoff_stop(&h);
    assert_int_equal(l.n_worked, 3);            /* 0, 1, 2 */
    assert_int_equal(given, 4);                 /* 4 was refused: the failure was known by then */
    assert_int_equal(l.n_discarded, 1);         /* the failed item itself */
    assert_int_equal(l.discarded[0], 3);
}

/* Depth 3, four buffers: when give() returns, the buffer the owner fills next
 * has been worked (its value is the one given four items earlier). The worker
 * is slowed down so the queue fills. */
typedef struct slow_log {
    log_t l;
} slow_log;

static int slow_work(void *ctx, void *item, nx_error *err)
{
    slow_log *s = ctx;
    for (volatile int spin = 0; spin < 20000; spin++)
        ;
    return work(&s->l, item, err);
}

static void queue_keeps_buffers(void **state)
{
    (void)state;
    enum { DEPTH = 3, N = 60 };
    int buffers[DEPTH + 1];
    slow_log s = {.l = {.fail_at = -1}};
    nx_handoff h;
    assert_int_equal(nx_handoff_start(&h, 0, slow_work, discard, &s), -1);
    assert_int_equal(nx_handoff_start(&h, NX_HANDOFF_MAX_DEPTH + 1, slow_work, discard, &s), -1);
    assert_int_equal(nx_handoff_start(&h, DEPTH, slow_work, discard, &s), 0);
    nx_error err = {0};
    for (int i = 0; i < N; i++) {
        int *b = &buffers[i % (DEPTH + 1)];
        if (i >= DEPTH + 1) {
            /* the item this buffer held must have been worked already (its
             * entry in worked[] was written before the worker finished it) */
            assert_int_equal(s.l.worked[i - DEPTH - 1], *b);
        }
        *b = i;
        assert_int_equal(nx_handoff_give(&h, b, &err), 0);
    }
    assert_int_equal(nx_handoff_wait(&h, &err), 0);
    assert_int_equal(s.l.n_worked, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(s.l.worked[i], i);
    nx_handoff_stop(&h);
}

/* A failure with items queued behind it: those are discarded, never worked,
 * and wait() returns only once every item is released. */
static void failure_with_queue(void **state)
{
    (void)state;
    log_t l = {.fail_at = 2};
    nx_handoff h;
    assert_int_equal(nx_handoff_start(&h, 4, work, discard, &l), 0);
    int items[5] = {0, 1, 2, 3, 4};
    nx_error err = {0};
    int given = 0;
    for (int i = 0; i < 5 && nx_handoff_give(&h, &items[i], &err) == 0; i++)
        given++;
    assert_int_equal(nx_handoff_wait(&h, &err), -1);
    assert_string_equal(err.msg, "item 2 failed");
    assert_int_equal(l.n_worked, 2);
    assert_int_equal(l.n_worked + l.n_discarded, given);   /* every given item released */
    for (int i = 0; i < l.n_discarded; i++)
        assert_true(l.discarded[i] >= 2);
    nx_handoff_stop(&h);
}

static void stop_without_items(void **state)
{
    (void)state;
    log_t l = {.fail_at = -1};
    nx_handoff h;
    assert_int_equal(nx_handoff_start(&h, 1, work, NULL, &l), 0);
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
        cmocka_unit_test(queue_keeps_buffers),
        cmocka_unit_test(failure_with_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
