/* test_web_assets.c — the embedded viewer files (src/server/web_assets.h) are exactly the
 * files under web/ and its sub-folders: every file is found at "/" + its path below web/ with its bytes unchanged and the
 * content type of its extension; "/" is index.html; nothing else is found (other case,
 * traversal, query strings, empty, NULL); the table is sorted by path. web/ is located from
 * this file's own path (tests/unit/server/ -> ../../../web). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "server/web_assets.h"

static void web_dir(char *out, size_t n)
{
    const char *f = __FILE__;
    const char *slash = strrchr(f, '/');
    size_t len = slash ? (size_t)(slash - f) : 0;
    snprintf(out, n, "%.*s/../../../web", (int)len, f);
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(fp);
    *len = n;
    return buf;
}

static const char *type_for(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return "application/octet-stream";
    if (!strcmp(dot, ".html"))
        return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js"))
        return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css"))
        return "text/css; charset=utf-8";
    if (!strcmp(dot, ".png"))
        return "image/png";
    return NULL; /* not checked */
}

/* Checks every file under dir (URL prefix rel, "" at web/ itself), descending into
 * sub-directories; returns how many files. */
static size_t check_tree(const char *dir, const char *rel)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192], url[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(url, sizeof url, "%s/%s", rel, e->d_name);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            files += check_tree(path, url);
            continue;
        }
        size_t len = 0;
        unsigned char *bytes = read_all(path, &len);
        assert_non_null(bytes);
        const nx_web_asset *a = nx_web_asset_find(url);
        if (!a)
            fail_msg("%s is not embedded", url);
        assert_string_equal(a->path, url);
        assert_int_equal(a->length, len);
        assert_memory_equal(a->data, bytes, len);
        assert_int_equal(a->data[len], 0);
        const char *want = type_for(e->d_name);
        if (want)
            assert_string_equal(a->content_type, want);
        free(bytes);
        files++;
    }
    closedir(d);
    return files;
}

static void every_web_file_is_embedded(void **state)
{
    (void)state;
    char dir[4096];
    web_dir(dir, sizeof dir);
    size_t files = check_tree(dir, "");
    assert_true(files >= 3); /* index.html, app.js, style.css */
    size_t count = 0;
    const nx_web_asset *all = nx_web_assets_all(&count);
    assert_int_equal(count, files);
    for (size_t i = 1; i < count; i++)
        assert_true(strcmp(all[i - 1].path, all[i].path) < 0);
}

static void root_is_index_and_nothing_else_matches(void **state)
{
    (void)state;
    const nx_web_asset *root = nx_web_asset_find("/");
    assert_non_null(root);
    assert_ptr_equal(root, nx_web_asset_find("/index.html"));
    assert_non_null(strstr((const char *)root->data, "app.js"));
    const char *bad[] = {"", "index.html", "/INDEX.HTML", "/index.html?x=1", "/../web/index.html",
                         "/./index.html", "//index.html", "/index.html/", "/app.js%00",
                         "/nonexistent.js", "/static/app.js"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(nx_web_asset_find(bad[i]));
    assert_null(nx_web_asset_find(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_web_file_is_embedded),
        cmocka_unit_test(root_is_index_and_nothing_else_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
