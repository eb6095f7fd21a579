/* test_open_regular.c — util/open_regular.h: a regular file opens (blocking
 * reads, its size in st); a FIFO without a writer, a directory, a socket and a
 * character device are refused at once with a message saying what they are; a
 * missing file says why. Each case runs under alarm(60), a hang guard: open()
 * of a FIFO without O_NONBLOCK would wait forever for a writer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/open_regular.h"

static char dir[64];   /* short: a socket path must fit sun_path */

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/nx_open_regular_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    alarm(60);
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    alarm(0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void in_dir(char *path, size_t cap, const char *name)
{
    assert_true((size_t)snprintf(path, cap, "%.63s/%.15s", dir, name) < cap);
}

/* Expects nx_open_regular(path) to refuse with a message containing want. */
static void expect_refused(const char *path, const char *want)
{
    nx_error msg = {0};
    struct stat st;
    assert_int_equal(nx_open_regular(path, &st, &msg), -1);
    if (!strstr(msg.msg, want))
        fail_msg("%s: message \"%s\" lacks \"%s\"", path, msg.msg, want);
}

static void regular_file_opens_blocking(void **state)
{
    (void)state;
    char path[300];
    in_dir(path, sizeof path, "trace.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[]\n", f);
    fclose(f);
    nx_error msg = {0};
    struct stat st;
    int fd = nx_open_regular(path, &st, &msg);
    assert_true(fd >= 0);
    assert_int_equal(st.st_size, 3);
    int fl = fcntl(fd, F_GETFL);
    assert_int_equal(fl & O_NONBLOCK, 0);
    assert_int_equal(fl & O_ACCMODE, O_RDONLY);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    char buf[8];
    assert_int_equal(read(fd, buf, sizeof buf), 3);
    close(fd);
    fd = nx_open_regular(path, NULL, &msg);   /* st may be NULL */
    assert_true(fd >= 0);
    close(fd);
}

static void fifo_is_refused_without_blocking(void **state)
{
    (void)state;
    char path[300];
    in_dir(path, sizeof path, "fifo.json");
    assert_int_equal(mkfifo(path, 0600), 0);
    expect_refused(path, "not a regular file (a FIFO)");
}

static void directory_is_refused(void **state)
{
    (void)state;
    char path[300];
    in_dir(path, sizeof path, "dir.json");
    assert_int_equal(mkdir(path, 0700), 0);
    expect_refused(path, "not a regular file (a directory)");
}

static void socket_is_refused(void **state)
{
    (void)state;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    in_dir(a.sun_path, sizeof a.sun_path, "sock.json");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    expect_refused(a.sun_path, "not a regular file (a socket)");
    close(s);
}

static void character_device_is_refused(void **state)
{
    (void)state;
    expect_refused("/dev/zero", "not a regular file (a character device)");
}

static void missing_file_says_why(void **state)
{
    (void)state;
    char path[300];
    in_dir(path, sizeof path, "absent.json");
    expect_refused(path, "cannot open: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(regular_file_opens_blocking, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(fifo_is_refused_without_blocking, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(directory_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(socket_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(character_device_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(missing_file_says_why, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
