/* test_gzip_input.c — util/gzip_input: plain and gzip files read whole in any
 * read size, several members as one stream, and every damaged form an error
 * naming its compressed offset (expectations from zlib's own compress calls). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "util/gzip_input.h"

static char dir[] = "/tmp/nx_gzip_input_XXXXXX";

static const char *path_of(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void put_file(const char *path, const void *data, size_t n, const char *mode)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* One gzip member of data (zlib's deflate with a gzip wrapper), appended to path. */
static size_t append_member(const char *path, const void *data, size_t n)
{
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, (uLong)n);
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    zs.next_in = (unsigned char *)(uintptr_t)data;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t len = cap - zs.avail_out;
    deflateEnd(&zs);
    put_file(path, out, len, "ab");
    free(out);
    return len;
}

/* Reads path whole in reads of `step` bytes: 0 and the bytes, or -1 and msg. */
static int read_whole(const char *path, size_t step, unsigned char **data, size_t *n, nx_error *msg)
{
    nx_gzip_input *in = nx_gzip_input_open(path, msg);
    assert_non_null(in);
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    int rc = 0;
    for (;;) {
        if (cap - len < step) {
            cap = cap * 2 + step;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        long got = nx_gzip_input_read(in, buf + len, step, msg);
        if (got < 0) {
            rc = -1;
            /* a failed input keeps failing */
            nx_error again = {0};
            assert_int_equal(nx_gzip_input_read(in, buf, step, &again), -1);
            assert_string_equal(again.msg, msg->msg);
            break;
        }
        if (got == 0)
            break;
        assert_true((size_t)got <= step);
        len += (size_t)got;
    }
    nx_gzip_input_close(in);
    *data = buf;
    *n = len;
    return rc;
}

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)("abcdefgh{}[],:\"0123456789"[(x >> 16) % 25]);
    }
    return p;
}

static void test_plain_files(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 131071, 131072, 400001};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        unsigned char *want = pattern(sizes[k], (unsigned)k);
        unlink(path_of("p"));
        put_file(path_of("p"), want, sizes[k], "wb");
        static const size_t steps[] = {1, 7, 65536, 1 << 20};
        for (size_t s = 0; s < 4; s++) {
            if (steps[s] == 1 && sizes[k] > 200000)
                continue;
            unsigned char *got;
            size_t n;
            nx_error msg = {0};
            assert_int_equal(read_whole(path_of("p"), steps[s], &got, &n, &msg), 0);
            assert_int_equal(n, sizes[k]);
            if (n)
                assert_memory_equal(got, want, n);
            free(got);
        }
        nx_gzip_input *in = nx_gzip_input_open(path_of("p"), NULL);
        assert_non_null(in);
        unsigned char b[4];
        assert_true(nx_gzip_input_read(in, b, sizeof b, NULL) >= 0);
        assert_false(nx_gzip_input_is_gzip(in));
        nx_gzip_input_close(in);
        free(want);
    }
}

static void test_members(void **state)
{
    (void)state;
    unsigned char *a = pattern(300000, 1), *b = pattern(5, 2), *c = pattern(0, 3);
    unlink(path_of("g"));
    size_t la = append_member(path_of("g"), a, 300000);
    size_t lb = append_member(path_of("g"), b, 5);
    size_t lc = append_member(path_of("g"), c, 0);
    static const size_t steps[] = {3, 4096, 1 << 20};
    for (size_t s = 0; s < 3; s++) {
        unsigned char *got;
        size_t n;
        nx_error msg = {0};
        assert_int_equal(read_whole(path_of("g"), steps[s], &got, &n, &msg), 0);
        assert_int_equal(n, 300005);
        assert_memory_equal(got, a, 300000);
        assert_memory_equal(got + 300000, b, 5);
        free(got);
    }
    nx_gzip_input *in = nx_gzip_input_open(path_of("g"), NULL);
    assert_non_null(in);
    unsigned char *buf = malloc(400000);
    assert_non_null(buf);
    nx_error msg = {0};
    while (nx_gzip_input_read(in, buf, 400000, &msg) > 0)
        ;
    assert_true(nx_gzip_input_is_gzip(in));
    assert_int_equal(nx_gzip_input_offset(in), la + lb + lc);
    nx_gzip_input_close(in);
    free(buf);
    free(a);
    free(b);
    free(c);
}

/* Reading path fails with words at offset, after exactly `before` bytes (SIZE_MAX: any). */
static void expect_error(const char *path, const char *words, uint64_t offset, size_t before)
{
    unsigned char *got;
    size_t n;
    char at[64];
    nx_error msg = {0};
    assert_int_equal(read_whole(path, 4096, &got, &n, &msg), -1);
    free(got);
    if (before != SIZE_MAX)
        assert_int_equal(n, before);
    snprintf(at, sizeof at, "compressed byte %llu:", (unsigned long long)offset);
    if (!strstr(msg.msg, words) || !strstr(msg.msg, at))
        fail_msg("'%s' lacks '%s' or '%s'", msg.msg, words, at);
}

static void test_damaged(void **state)
{
    (void)state;
    unsigned char *a = pattern(200000, 4);
    unlink(path_of("d"));
    size_t la = append_member(path_of("d"), a, 200000);
    /* junk after the member, however short */
    put_file(path_of("d"), "x", 1, "ab");
    expect_error(path_of("d"), "what follows a gzip member is not another member", la, 200000);
    assert_int_equal(truncate(path_of("d"), (off_t)la), 0);
    put_file(path_of("d"), "\x1f\x8b\x08", 3, "ab");   /* a member's start, then nothing */
    expect_error(path_of("d"), "unexpected end of file", la + 3, 200000);
    /* zeros after the member (a padded file) */
    assert_int_equal(truncate(path_of("d"), (off_t)la), 0);
    assert_int_equal(truncate(path_of("d"), (off_t)la + 512), 0);
    expect_error(path_of("d"), "what follows a gzip member is not another member", la, 200000);
    /* cut inside the member */
    assert_int_equal(truncate(path_of("d"), (off_t)la / 2), 0);
    expect_error(path_of("d"), "unexpected end of file", la / 2, SIZE_MAX);
    /* a damaged deflate block: its header bits made invalid */
    unlink(path_of("d"));
    append_member(path_of("d"), a, 200000);
    FILE *f = fopen(path_of("d"), "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 10, SEEK_SET), 0);
    assert_int_equal(fputc(0xff, f), 0xff);
    assert_int_equal(fclose(f), 0);
    unsigned char *got;
    size_t n;
    nx_error msg = {0};
    assert_int_equal(read_whole(path_of("d"), 4096, &got, &n, &msg), -1);
    free(got);
    assert_non_null(strstr(msg.msg, "gzip: "));
    free(a);

    assert_null(nx_gzip_input_open(path_of("missing"), &msg));
    assert_string_equal(msg.msg, "cannot open: No such file or directory");
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = {"p", "g", "d"};
    for (size_t i = 0; i < 3; i++)
        unlink(path_of(names[i]));
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_files),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
