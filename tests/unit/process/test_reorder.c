/* test_reorder.c — the reorder heap pops by (key, push order) and respects the watermark. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "process/device/reorder.h"

typedef struct item {
    int64_t key;
    int order;
    char pad[13];                    /* an odd size, to exercise slot alignment */
} item;

static void pops_sorted_and_stable(void **state)
{
    (void)state;
    nx_reorder q;
    nx_reorder_init(&q, sizeof(item));
    srand(7);
    enum { N = 5000 };
    for (int i = 0; i < N; i++) {
        item it = {.key = rand() % 100, .order = i};
        assert_int_equal(nx_reorder_push(&q, it.key, &it), 0);
    }
    assert_int_equal(nx_reorder_size(&q), N);
    assert_false(nx_reorder_ready(&q, -1));
    item prev = {.key = -1, .order = -1};
    for (int i = 0; i < N; i++) {
        assert_true(nx_reorder_ready(&q, INT64_MAX));
        const item *t = nx_reorder_top(&q);
        assert_int_equal(nx_reorder_top_key(&q), t->key);
        assert_true(t->key > prev.key || (t->key == prev.key && t->order > prev.order));
        prev = *t;
        nx_reorder_pop(&q);
    }
    assert_null(nx_reorder_top(&q));
    assert_int_equal(nx_reorder_top_key(&q), INT64_MAX);
    assert_false(nx_reorder_ready(&q, INT64_MAX));
    nx_reorder_free(&q);
}

static void watermark_holds_back_later_items(void **state)
{
    (void)state;
    nx_reorder q;
    nx_reorder_init(&q, sizeof(int));
    int v[] = {30, 10, 20};
    for (int i = 0; i < 3; i++)
        nx_reorder_push(&q, v[i], &v[i]);
    int got = 0;
    while (nx_reorder_ready(&q, 20)) {
        got++;
        nx_reorder_pop(&q);
    }
    assert_int_equal(got, 2);
    assert_int_equal(*(const int *)nx_reorder_top(&q), 30);
    nx_reorder_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pops_sorted_and_stable),
        cmocka_unit_test(watermark_holds_back_later_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
