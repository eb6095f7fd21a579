/* test_response_cache.c — the server's response cache: hits only for the same
 * directory, file fingerprint and key, the least recently used entry goes first,
 * clear empties it; the fingerprint changes when a file is rewritten in place. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/response_cache.h"

/* Fingerprints as nx_response_cache_fingerprint writes them; the cache compares them
 * as text. */
#define FP_A "Instruction.parquet/1/7/100/100.000000001/100.000000001\n\n"
#define FP_REWRITTEN "Instruction.parquet/1/7/40/100.000000002/100.000000002\n\n"

static bool get(const char *dir, const char *fp, const char *key, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    bool hit = nx_response_cache_get(dir, fp, key, &b);
    if (hit && want) {
        assert_int_equal(b.len, strlen(want));
        assert_memory_equal(b.data, want, b.len);
    }
    nx_strbuf_free(&b);
    return hit;
}

static void hits_and_misses(void **state)
{
    (void)state;
    nx_response_cache_clear();
    nx_response_cache_put("/p/x@latest", FP_A, "tracks", "{\"t\":1}", 7);
    assert_true(get("/p/x@latest", FP_A, "tracks", "{\"t\":1}"));
    assert_false(get("/p/x@latest", FP_A, "timeline|Instruction|0|9|10", NULL));
    assert_false(get("/p/y@latest", FP_A, "tracks", NULL));
    assert_false(get("/p/x@latest", FP_REWRITTEN, "tracks", NULL));   /* a file rewritten in place */
    nx_response_cache_put("/p/x@latest", FP_A, "tracks", "{\"t\":2}", 7);   /* replaces */
    assert_true(get("/p/x@latest", FP_A, "tracks", "{\"t\":2}"));
    nx_response_cache_clear();
    assert_false(get("/p/x@latest", FP_A, "tracks", NULL));
}

static void least_recently_used_goes_first(void **state)
{
    (void)state;
    nx_response_cache_clear();
    char key[32];
    for (int i = 0; i < 64; i++) {
        snprintf(key, sizeof key, "k%d", i);
        nx_response_cache_put("/p", FP_A, key, key, strlen(key));
    }
    assert_true(get("/p", FP_A, "k0", "k0"));          /* k0 is now the most recent */
    nx_response_cache_put("/p", FP_A, "k64", "k64", 3);   /* evicts k1, the least recent */
    assert_true(get("/p", FP_A, "k0", "k0"));
    assert_false(get("/p", FP_A, "k1", NULL));
    assert_true(get("/p", FP_A, "k2", "k2"));
    assert_true(get("/p", FP_A, "k64", "k64"));
    nx_response_cache_clear();
}

static void write_file(const char *path, const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The fingerprint names every file with its inode and size: a file rewritten in
 * place (same inode, other size) changes it, a file added changes it, a
 * subdirectory does not count, and an unchanged directory gives the same text. */
static void fingerprint_follows_files_in_place(void **state)
{
    (void)state;
    char dir[] = "/tmp/nx_fp_XXXXXX", path[64], sub[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/Instruction.parquet", dir);
    snprintf(sub, sizeof sub, "%s/devices", dir);
    write_file(path, "485 rows worth of bytes", "w");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    char *before = nx_response_cache_fingerprint(dir), *again = nx_response_cache_fingerprint(dir);
    assert_non_null(before);
    assert_string_equal(before, again);
    char want[64];
    snprintf(want, sizeof want, "Instruction.parquet/%ju/%ju/23/", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
    assert_memory_equal(before, want, strlen(want));
    assert_int_equal(mkdir(sub, 0700), 0);
    char *with_sub = nx_response_cache_fingerprint(dir);
    assert_string_equal(before, with_sub);
    write_file(path, "100 rows", "r+");   /* same inode: not truncated, then truncated below */
    assert_int_equal(truncate(path, 8), 0);
    struct stat st2;
    assert_int_equal(stat(path, &st2), 0);
    assert_int_equal(st2.st_ino, st.st_ino);
    char *rewritten = nx_response_cache_fingerprint(dir);
    assert_string_not_equal(before, rewritten);
    snprintf(want, sizeof want, "Instruction.parquet/%ju/%ju/8/", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
    assert_memory_equal(rewritten, want, strlen(want));
    assert_null(nx_response_cache_fingerprint("/nonexistent/nx_fp"));
    free(before);
    free(again);
    free(with_sub);
    free(rewritten);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(sub), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hits_and_misses),
        cmocka_unit_test(least_recently_used_goes_first),
        cmocka_unit_test(fingerprint_follows_files_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
