/*
 * test_nki_context.c — query/nki_context.h and nki_index.h on the profile of
 * nki_fixture.h: an instruction's source location, call stack (outermost
 * first), loop iteration (outer first) and assembly line; an instruction
 * without a name, with an unknown name, without a pc; a cyclic call chain that
 * ends; a name's row of the instruction's core winning; of a pc's assembly
 * rows, the one of the instruction's opcode, else the lowest id; the index
 * cached and rebuilt when a table is rewritten; a profile without KernelInstructions; KernelInstructions and
 * KernelStackFrames with a wrongly typed column (an error naming the file and
 * column); a row past the end; six profiles' indexes taken and released by
 * four threads at once (more than the cache keeps: evicted ones stay whole for
 * their holders).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>

#include "nki_fixture.h"
#include "profile/profile_table.h"
#include "query/event.h"
#include "query/nki_context.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxnki-XXXXXX");
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

static void read_ctx(int64_t row, nx_nki_context *c)
{
    nx_error err = {0};
    assert_int_equal(nx_nki_context_read(dir, row, NULL, c, &err), 0);
}

/* Row 0: inst.1:0, pc 7, MATMUL -> attn.py:42 in kern.flash_fwd, i=0 / j=3, MATMUL (id 3, its opcode). */
static void full_context(void **state)
{
    (void)state;
    nx_nki_context c;
    read_ctx(0, &c);
    assert_string_equal(c.kernel_instruction_name, "inst.1:0");
    assert_true(c.has_source && c.has_line);
    assert_string_equal(c.file, "attn.py");
    assert_int_equal(c.line, 42); /* not pcore 1's 99 */
    assert_string_equal(c.function, "kern.flash_fwd");
    assert_int_equal(c.n_frames, 1);
    assert_int_equal(c.frames[0]->id, 1);
    assert_int_equal(c.frames[0]->line, 10);
    assert_int_equal(c.n_iters, 2);
    assert_string_equal(nx_nki_str(c.idx, c.iters[0]->name), "i");
    assert_int_equal(c.iters[0]->value, 0);
    assert_string_equal(nx_nki_str(c.idx, c.iters[1]->name), "j");
    assert_int_equal(c.iters[1]->value, 3);
    assert_int_equal(c.iters[1]->line, 22);
    assert_non_null(c.assembly);
    assert_int_equal(c.assembly->id, 3);
    assert_string_equal(nx_nki_str(c.idx, c.assembly->opcode), "MATMUL");
    assert_string_equal(nx_nki_str(c.idx, c.assembly->operands), "a=1");
    nx_nki_context_free(&c);
}

/* Row 1: inst.1:1, pc 8 -> attn.py:60 in kern.softmax called from kern.flash_fwd, i=0, ACTIVATE. */
static void nested_stack(void **state)
{
    (void)state;
    nx_nki_context c;
    read_ctx(1, &c);
    assert_int_equal(c.line, 60);
    assert_string_equal(c.function, "kern.softmax");
    assert_int_equal(c.n_frames, 2);
    assert_string_equal(nx_nki_str(c.idx, c.frames[0]->function), "kern.flash_fwd");
    assert_string_equal(nx_nki_str(c.idx, c.frames[1]->function), "kern.softmax");
    assert_int_equal(c.frames[1]->line, 40);
    assert_int_equal(c.n_iters, 1);
    assert_int_equal(c.iters[0]->id, 100);
    assert_string_equal(nx_nki_str(c.idx, c.assembly->opcode), "ACTIVATE");
    nx_nki_context_free(&c);
}

/* Row 2: inst.1:2 without a pc or a loop; row 3 unknown name; row 4 no name; row 5 a cycle. */
static void partial_contexts(void **state)
{
    (void)state;
    nx_nki_context c;
    read_ctx(2, &c);
    assert_true(c.has_source);
    assert_int_equal(c.n_iters, 0);
    assert_null(c.assembly);
    nx_nki_context_free(&c);
    read_ctx(3, &c);
    assert_string_equal(c.kernel_instruction_name, "inst.9:9");
    assert_false(c.has_source);
    assert_non_null(c.assembly); /* pc 7 (3 % 3 == 0) without an opcode: the lowest id */
    assert_int_equal(c.assembly->id, 2);
    assert_string_equal(nx_nki_str(c.idx, c.assembly->operands), "a=2 b=1");
    assert_int_equal(c.n_frames, 0);
    nx_nki_context_free(&c);
    read_ctx(4, &c);
    assert_null(c.kernel_instruction_name);
    assert_false(c.has_source);
    nx_nki_context_free(&c);
    read_ctx(5, &c);
    assert_true(c.has_source);
    assert_int_equal(c.n_frames, 5); /* 3 -> 4 -> 3 -> 4 -> 3: stopped after as many steps as the table has rows */
    nx_nki_context_free(&c);
}

/* The same index is handed out twice; rewriting a table builds a new one. */
static void cached_and_rebuilt(void **state)
{
    (void)state;
    nx_error err = {0};
    const nx_nki_index *a, *b;
    assert_int_equal(nx_nki_index_get(dir, &a, &err), 0);
    assert_int_equal(nx_nki_index_get(dir, &b, &err), 0);
    assert_ptr_equal(a, b);
    assert_int_equal(nx_nki_source_count(a->kinst), 5);
    assert_int_equal(a->n_frames, 5); /* pcore 1's frame 1 apart from pcore 0's */
    assert_string_equal(nx_nki_str(a, nx_nki_find_frame(a, 1, 1)->function), "kern.other");
    nx_nki_index_release(b);
    static const char *const KI[] = {"kernel_instruction_name", "file_path", "line_number", "pcore_idx"};
    static const char *const KIV[] = {"inst.1:0", "other.py", "5", "0", "inst.1:1", "other.py", "6", "0",
                                      "inst.1:2", "other.py", "7", "0"};
    char sub[128];
    snprintf(sub, sizeof sub, "%s/KernelInstructions.parquet", dir);
    assert_int_equal(remove(sub), 0);
    nki_write(dir, "KernelInstructions", KI, 4, KIV, 3);
    assert_int_equal(nx_nki_index_get(dir, &b, &err), 0);
    assert_int_equal(nx_nki_source_count(b->kinst), 3);
    assert_int_equal(nx_nki_source_count(a->kinst), 5); /* still held: not freed under its holder */
    nx_nki_index_release(a);
    nx_nki_context c;
    read_ctx(0, &c);
    assert_string_equal(c.file, "other.py");
    assert_int_equal(c.n_frames, 0);
    nx_nki_context_free(&c);
    nx_nki_index_release(b);
    /* put the fixture back for the other tests */
    assert_int_equal(remove(sub), 0);
    fixture_rmrf(dir);
    setup(NULL);
}

/* Four threads take and release the indexes of six profiles (more than the
 * cache keeps): each index they hold stays whole while others are evicted. */
#define N_DIRS 6
static char dirs[N_DIRS][64];

static void *hammer(void *arg)
{
    size_t t = (size_t)(uintptr_t)arg;
    for (size_t i = 0; i < 60; i++) {
        const nx_nki_index *x;
        nx_error err = {0};
        if (nx_nki_index_get(dirs[(i + t) % N_DIRS], &x, &err) != 0)
            return (void *)1;
        const nx_nki_frame *f = nx_nki_find_frame(x, 0, 2);
        bool ok = nx_nki_source_count(x->kinst) == 5 && f && strcmp(nx_nki_str(x, f->function), "kern.softmax") == 0;
        nx_nki_index_release(x);
        if (!ok)
            return (void *)1;
    }
    return NULL;
}

static void shared_across_threads(void **state)
{
    (void)state;
    for (size_t d = 0; d < N_DIRS; d++) {
        snprintf(dirs[d], sizeof dirs[d], "/tmp/nxnkimt-XXXXXX");
        assert_non_null(mkdtemp(dirs[d]));
        nki_write_tables(dirs[d]);
    }
    pthread_t th[4];
    for (size_t t = 0; t < 4; t++)
        assert_int_equal(pthread_create(&th[t], NULL, hammer, (void *)(uintptr_t)t), 0);
    for (size_t t = 0; t < 4; t++) {
        void *rc;
        assert_int_equal(pthread_join(th[t], &rc), 0);
        assert_null(rc);
    }
    for (size_t d = 0; d < N_DIRS; d++)
        fixture_rmrf(dirs[d]);
}

static void absent_and_errors(void **state)
{
    (void)state;
    char d2[64];
    snprintf(d2, sizeof d2, "/tmp/nxnki2-XXXXXX");
    assert_non_null(mkdtemp(d2));
    nki_write_instructions(d2);
    nx_nki_context c;
    nx_error err = {0};
    assert_int_equal(nx_nki_context_read(d2, 0, NULL, &c, &err), NX_PROFILE_TABLE_ABSENT);
    /* line_number stored as a string: refused, naming the file and the column */
    static const fx_col BAD[] = {{"kernel_instruction_name", NXPQ_STRING}, {"line_number", NXPQ_STRING}};
    static const char *const CELLS[] = {"inst.1:0", "x"};
    fx_write(d2, "KernelInstructions.parquet", BAD, 2, CELLS, 1);
    assert_int_equal(nx_nki_context_read(d2, 0, NULL, &c, &err), -1);
    assert_non_null(strstr(err.msg, "KernelInstructions.parquet"));
    assert_non_null(strstr(err.msg, "pcore_idx"));
    fixture_rmrf(d2);
    /* a stack frame table whose ids are text: refused, naming its file and the column */
    snprintf(d2, sizeof d2, "/tmp/nxnki3-XXXXXX");
    assert_non_null(mkdtemp(d2));
    nki_write_tables(d2);
    nki_write_instructions(d2);
    char sf[128];
    snprintf(sf, sizeof sf, "%s/KernelStackFrames.parquet", d2);
    assert_int_equal(remove(sf), 0);
    static const fx_col BAD_SF[] = {{"stack_frame_id", NXPQ_STRING}};
    fx_write(d2, "KernelStackFrames.parquet", BAD_SF, 1, (const char *const[]){"one"}, 1);
    assert_int_equal(nx_nki_context_read(d2, 0, NULL, &c, &err), -1);
    assert_non_null(strstr(err.msg, "KernelStackFrames.parquet"));
    assert_non_null(strstr(err.msg, "stack_frame_id"));
    fixture_rmrf(d2);
    assert_int_equal(nx_nki_context_read(dir, NKI_ROWS, NULL, &c, &err), NX_EVENT_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_context),    cmocka_unit_test(nested_stack),
        cmocka_unit_test(partial_contexts), cmocka_unit_test(cached_and_rebuilt),
        cmocka_unit_test(shared_across_threads), cmocka_unit_test(absent_and_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
