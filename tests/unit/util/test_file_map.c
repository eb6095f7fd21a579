/* test_file_map.c — util/file_map.h: a mapped file truncated in place reads as
 * zeros past its new end and the mapping says it is damaged, while the pages
 * still inside the file keep their bytes; a mapping nobody touched past the end
 * stays clean; a SIGBUS on memory that is not a registered mapping still ends
 * the process; when every slot is taken, opening fails with EMFILE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/file_map.h"

#define PAGES 4

/* A temporary file of PAGES pages of 0xAB, open read-write; its path in path. */
static int patterned_file(char *path, size_t cap, size_t *size)
{
    snprintf(path, cap, "%s/nx_file_map_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    *size = (size_t)sysconf(_SC_PAGESIZE) * PAGES;
    unsigned char *buf = malloc(*size);
    assert_non_null(buf);
    memset(buf, 0xAB, *size);
    assert_int_equal(write(fd, buf, *size), (ssize_t)*size);
    free(buf);
    return fd;
}

static void truncated_pages_read_as_zeros(void **state)
{
    (void)state;
    char path[256];
    size_t size, page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = patterned_file(path, sizeof path, &size);
    nx_file_map *m = nx_file_map_open(fd, size);
    assert_non_null(m);
    assert_int_equal(nx_file_map_size(m), size);
    const volatile unsigned char *p = nx_file_map_data(m);
    assert_int_equal(p[0], 0xAB);
    assert_false(nx_file_map_damaged(m));
    assert_int_equal(ftruncate(fd, (off_t)page), 0);   /* in place, while mapped */
    assert_int_equal(p[page - 1], 0xAB);               /* still inside the file */
    assert_false(nx_file_map_damaged(m));
    assert_int_equal(p[3 * page + 17], 0);             /* past the new end: a zero page */
    assert_true(nx_file_map_damaged(m));
    assert_int_equal(p[3 * page], 0);
    assert_int_equal(p[page - 1], 0xAB);
    nx_file_map_close(m);
    nx_file_map *again = nx_file_map_open(fd, page);   /* the file as it is now */
    assert_non_null(again);
    assert_int_equal(((const unsigned char *)nx_file_map_data(again))[page - 1], 0xAB);
    assert_false(nx_file_map_damaged(again));
    nx_file_map_close(again);
    close(fd);
    unlink(path);
}

static void reads_inside_the_file_stay_clean(void **state)
{
    (void)state;
    char path[256];
    size_t size;
    int fd = patterned_file(path, sizeof path, &size);
    nx_file_map *m = nx_file_map_open(fd, size);
    assert_non_null(m);
    const unsigned char *p = nx_file_map_data(m);
    unsigned sum = 0;
    for (size_t i = 0; i < size; i++)
        sum += p[i];
    assert_int_equal(sum, 0xABu * size);
    assert_false(nx_file_map_damaged(m));
    nx_file_map_close(m);
    close(fd);
    unlink(path);
}

static void other_sigbus_still_ends_the_process(void **state)
{
    (void)state;
    char path[256];
    size_t size, page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = patterned_file(path, sizeof path, &size);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The test runner's own SIGBUS handler out of the way, then a mapping of
         * the child's own, not registered: its SIGBUS is not ours to hide. */
        signal(SIGBUS, SIG_DFL);
        nx_file_map_close(nx_file_map_open(fd, size));
        volatile unsigned char *raw = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (raw == MAP_FAILED || ftruncate(fd, (off_t)page) != 0)
            _exit(3);
        unsigned char v = raw[3 * page];
        _exit(v == 0 ? 0 : 4);   /* survived the read: the handler swallowed a foreign fault */
    }
    int st;
    assert_int_equal(waitpid(child, &st, 0), child);
    if (WIFSIGNALED(st))
        assert_int_equal(WTERMSIG(st), SIGBUS);
    else   /* a sanitizer's handler reports the fault and exits non-zero */
        assert_true(WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3 && WEXITSTATUS(st) != 4);
    close(fd);
    unlink(path);
}

static void slots_run_out_with_emfile(void **state)
{
    (void)state;
    char path[256];
    size_t size;
    int fd = patterned_file(path, sizeof path, &size);
    nx_file_map **all = calloc(NX_FILE_MAP_SLOTS, sizeof *all);
    assert_non_null(all);
    for (size_t i = 0; i < NX_FILE_MAP_SLOTS; i++)
        assert_non_null(all[i] = nx_file_map_open(fd, size));
    errno = 0;
    assert_null(nx_file_map_open(fd, size));
    assert_int_equal(errno, EMFILE);
    nx_file_map_close(all[7]);
    assert_non_null(all[7] = nx_file_map_open(fd, size));   /* a freed slot is reused */
    for (size_t i = 0; i < NX_FILE_MAP_SLOTS; i++)
        nx_file_map_close(all[i]);
    free(all);
    close(fd);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(truncated_pages_read_as_zeros),
        cmocka_unit_test(reads_inside_the_file_stay_clean),
        cmocka_unit_test(other_sigbus_still_ends_the_process),
        cmocka_unit_test(slots_run_out_with_emfile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
