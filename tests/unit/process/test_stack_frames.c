/* test_stack_frames.c — the stack-frame index (process/device/stack_frames.h): names,
 * locations and frames are deduplicated across programs in first-appearance
 * order, and each frame's path lists ids from the outermost caller inward. The
 * expected ids below are worked out by hand from the rules in the header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "process/device/stack_frames.h"

static void dedupes_across_programs(void **state)
{
    (void)state;
    /* Program A: main(train.py:1) -> fwd(model.py:10) -> mm(model.py:20); a second
     * child of fwd at the same location as mm (a duplicate chain). */
    nx_prog_frame fa[] = {
        {-1, "train.py", "main", 1},
        {0, "model.py", "fwd", 10},
        {1, "model.py", "mm", 20},
        {1, "model.py", "mm", 20},
    };
    /* Program B: the same root and fwd, then a new function in train.py. */
    nx_prog_frame fb[] = {
        {-1, "train.py", "main", 1},
        {0, "model.py", "fwd", 10},
        {1, "train.py", "act", 30},
        {-1, "model.py", "fwd", 10},   /* same location as A's frame 1, but a root: a new frame */
    };
    nx_program a = {.frames = fa, .n_frames = 4}, b = {.frames = fb, .n_frames = 4};
    nx_program *progs[] = {&a, &b};
    nx_frame_index x;
    nx_error err = {0};
    assert_int_equal(nx_frame_index_build(progs, 2, &x, "test", &err), 0);

    assert_int_equal(x.n_file_names, 2);
    assert_string_equal(x.file_names[0], "train.py");
    assert_string_equal(x.file_names[1], "model.py");
    assert_int_equal(x.n_function_names, 4);   /* main, fwd, mm, act */
    assert_string_equal(x.function_names[3], "act");
    assert_int_equal(x.n_locations, 4);        /* (0,0,1) (1,1,10) (1,2,20) (0,3,30) */
    assert_int_equal(x.locations[3].file_name, 0);
    assert_int_equal(x.locations[3].function_name, 3);
    assert_int_equal(x.locations[3].line, 30);
    assert_int_equal(x.n_frames, 5);           /* root, fwd, mm, act, fwd-as-root */
    assert_int_equal(x.frames[0].parent, -1);
    assert_int_equal(x.frames[2].parent, 1);
    assert_int_equal(x.frames[4].parent, -1);
    assert_int_equal(x.frames[4].location, 1);

    int64_t want_a[] = {0, 1, 2, 2}, want_b[] = {0, 1, 3, 4};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(x.frame_id[0][i], want_a[i]);
        assert_int_equal(x.frame_id[1][i], want_b[i]);
    }
    assert_string_equal(x.path[0][0], "[0]");
    assert_string_equal(x.path[0][3], "[0, 1, 2]");
    assert_string_equal(x.path[1][2], "[0, 1, 3]");
    assert_string_equal(x.path[1][3], "[4]");
    nx_frame_index_free(&x);
}

static void deep_chain_and_empty(void **state)
{
    (void)state;
    enum { N = 300 };
    nx_prog_frame *f = calloc(N, sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < N; i++)
        f[i] = (nx_prog_frame){i - 1, "f.py", "g", (uint32_t)i};
    nx_program p = {.frames = f, .n_frames = N}, empty = {0};
    nx_program *progs[] = {&empty, &p};
    nx_frame_index x;
    nx_error err = {0};
    assert_int_equal(nx_frame_index_build(progs, 2, &x, "test", &err), 0);
    assert_int_equal(x.n_frames, N);
    assert_int_equal(x.prog_frames[0], 0);
    /* "[0, 1, ..., 299]" */
    char want[N * 6];
    size_t at = 0;
    at += (size_t)snprintf(want + at, sizeof want - at, "[");
    for (int i = 0; i < N; i++)
        at += (size_t)snprintf(want + at, sizeof want - at, i ? ", %d" : "%d", i);
    snprintf(want + at, sizeof want - at, "]");
    assert_string_equal(x.path[1][N - 1], want);
    nx_frame_index_free(&x);
    free(f);

    assert_int_equal(nx_frame_index_build(progs, 1, &x, "test", &err), 0);
    assert_int_equal(x.n_frames, 0);
    nx_frame_index_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dedupes_across_programs),
        cmocka_unit_test(deep_chain_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
