/* test_response_cache.c — the server's response cache: hits only for the same
 * directory identity and key, a new directory at the same path misses, the least
 * recently used entry goes first, clear empties it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/response_cache.h"

static struct stat identity(ino_t ino, long mtime_ns)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_dev = 1;
    st.st_ino = ino;
    st.st_mtim.tv_sec = 100;
    st.st_mtim.tv_nsec = mtime_ns;
    return st;
}

static bool get(const char *dir, const struct stat *st, const char *key, const char *want)
{
    nx_strbuf b = NX_STRBUF_INIT;
    bool hit = nx_response_cache_get(dir, st, key, &b);
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
    struct stat a = identity(7, 1), republished = identity(8, 2);
    nx_response_cache_put("/p/x@latest", &a, "tracks", "{\"t\":1}", 7);
    assert_true(get("/p/x@latest", &a, "tracks", "{\"t\":1}"));
    assert_false(get("/p/x@latest", &a, "timeline|Instruction|0|9|10", NULL));
    assert_false(get("/p/y@latest", &a, "tracks", NULL));
    assert_false(get("/p/x@latest", &republished, "tracks", NULL));   /* same path, new directory */
    nx_response_cache_put("/p/x@latest", &a, "tracks", "{\"t\":2}", 7);   /* replaces */
    assert_true(get("/p/x@latest", &a, "tracks", "{\"t\":2}"));
    nx_response_cache_clear();
    assert_false(get("/p/x@latest", &a, "tracks", NULL));
}

static void least_recently_used_goes_first(void **state)
{
    (void)state;
    nx_response_cache_clear();
    struct stat a = identity(7, 1);
    char key[32];
    for (int i = 0; i < 64; i++) {
        snprintf(key, sizeof key, "k%d", i);
        nx_response_cache_put("/p", &a, key, key, strlen(key));
    }
    assert_true(get("/p", &a, "k0", "k0"));          /* k0 is now the most recent */
    nx_response_cache_put("/p", &a, "k64", "k64", 3);   /* evicts k1, the least recent */
    assert_true(get("/p", &a, "k0", "k0"));
    assert_false(get("/p", &a, "k1", NULL));
    assert_true(get("/p", &a, "k2", "k2"));
    assert_true(get("/p", &a, "k64", "k64"));
    nx_response_cache_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hits_and_misses),
        cmocka_unit_test(least_recently_used_goes_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
