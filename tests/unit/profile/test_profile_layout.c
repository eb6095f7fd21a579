/*
 * test_profile_layout.c — the data path's layout (profile/profile_layout.h):
 * display-name validation, the default data path and its root, a profile's
 * directory, the "@latest" entries, finding a profile by name (nested device
 * profiles, invalid names, links leading out of the root) and listing a root,
 * on a scratch tree with symbolic links; the name a device profile is served
 * under. nx_device_profile_dir is tested with the system profile it belongs to
 * (test_system_summary.c).
 */
#define _DEFAULT_SOURCE /* realpath, symlink */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile_layout.h"
#include "profile/profile_output.h"

static char base[PATH_MAX];   /* the real path of the scratch directory */

static char *at(const char *rel)
{
    static char buf[4][PATH_MAX + 64];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", base, rel);
    return p;
}

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/nxprof-test-layout-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, base))
        return -1;
    /* dp/profiles/global -> ../../r, which holds: b@latest/ and Z@latest/ (profiles), a@latest ->
     * .store/a (a link inside), evil@latest -> ../../../out (a link out), file@latest
     * (a plain file), bad..@latest/ (an invalid display name), @latest/ (no name),
     * plain/ (no suffix); b@latest/devices/{d1/, esc -> ../../../out}. */
    static const char *const dirs[] = {"dp", "dp/profiles", "r", "out", "r/b@latest", "r/Z@latest", "r/.store",
                                       "r/.store/a", "r/bad..@latest", "r/@latest", "r/plain",
                                       "r/b@latest/devices", "r/b@latest/devices/d1"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (mkdir(at(dirs[i]), 0777) != 0)
            return -1;
    FILE *f = fopen(at("r/file@latest"), "w");
    if (!f || fclose(f) != 0)
        return -1;
    if (symlink("../../r", at("dp/profiles/global")) != 0 || symlink(".store/a", at("r/a@latest")) != 0 ||
        symlink("../out", at("r/evil@latest")) != 0 || symlink("../../../out", at("r/b@latest/devices/esc")) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return nx_remove_tree(base);
}

static void with_home(const char *home)
{
    if (home)
        assert_int_equal(setenv("HOME", home, 1), 0);
    else
        assert_int_equal(unsetenv("HOME"), 0);
}

static void test_data_path_and_dirs(void **state)
{
    (void)state;
    nx_error err;
    char *dir;
    assert_int_equal(nx_profile_dir_resolve("/data", "run", NULL, &dir, &err), 0);
    assert_string_equal(dir, "/data/profiles/global/run@latest");
    free(dir);
    assert_int_equal(nx_profile_dir_resolve("/data", "run", "/out/x", &dir, &err), 0);
    assert_string_equal(dir, "/out/x");
    free(dir);
    assert_int_equal(nx_profile_dir_resolve("/data", "a/../b", NULL, &dir, &err), -1);
    assert_null(dir);
    assert_non_null(strstr(err.msg, "display name"));
    assert_int_equal(nx_data_path_root("", &dir, &err), -1);
    assert_non_null(strstr(err.msg, "empty"));

    const char *home = getenv("HOME");
    char *saved = home ? strdup(home) : NULL;
    with_home("/home/someone");
    assert_int_equal(nx_data_path_default(&dir, &err), 0);
    assert_string_equal(dir, "/home/someone/.nxprof");
    free(dir);
    assert_int_equal(nx_data_path_root(NULL, &dir, &err), 0);
    assert_string_equal(dir, "/home/someone/.nxprof/profiles/global");
    free(dir);
    assert_int_equal(nx_profile_dir_resolve(NULL, "run", NULL, &dir, &err), 0);
    assert_string_equal(dir, "/home/someone/.nxprof/profiles/global/run@latest");
    free(dir);
    for (int empty = 0; empty < 2; empty++) {
        with_home(empty ? "" : NULL);
        assert_int_equal(nx_data_path_default(&dir, &err), -1);
        assert_null(dir);
        assert_non_null(strstr(err.msg, "HOME"));
        assert_int_equal(nx_profile_dir_resolve(NULL, "run", NULL, &dir, &err), -1);
        assert_non_null(strstr(err.msg, "HOME"));
    }
    with_home(saved);
    free(saved);
}

static void test_entries(void **state)
{
    (void)state;
    char *e = nx_layout_entry("run");
    assert_string_equal(e, "run@latest");
    free(e);
    static const struct {
        const char *entry;
        size_t len;
        const char *name;   /* where the name starts */
    } cases[] = {
        {"run@latest", 3, "run@latest"},       {"/d/p/run@latest//", 3, "run@latest//"},
        {"a@b@latest", 3, "a@b@latest"},        {"@latest", 0, "@latest"},
        {"/d/@latest", 0, "@latest"},           {"run", 0, "run"},
        {"run@latest/x", 0, "x"},               {"run@latestx", 0, "run@latestx"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *name = NULL;
        assert_int_equal(nx_layout_entry_name(cases[i].entry, &name), cases[i].len);
        assert_string_equal(name, cases[i].name);
        assert_int_equal(nx_layout_entry_name(cases[i].entry, NULL), cases[i].len);
    }
}

static void test_find(void **state)
{
    (void)state;
    const char *root = at("dp/profiles/global");   /* a link: answers go through its real path */
    static const struct {
        const char *name;
        int rc;
        const char *rel;   /* the answer under base when rc is 0 */
    } cases[] = {
        {"b", 0, "r/b@latest"},
        {"a", 0, "r/a@latest"},
        {"Z", 0, "r/Z@latest"},
        {"b/devices/d1", 0, "r/b@latest/devices/d1"},
        {"b/devices/esc", NX_LAYOUT_MISSING, NULL},   /* leads out of the root */
        {"b/devices/none", NX_LAYOUT_MISSING, NULL},
        {"evil", NX_LAYOUT_MISSING, NULL},            /* leads out of the root */
        {"file", NX_LAYOUT_MISSING, NULL},            /* not a directory */
        {"none", NX_LAYOUT_MISSING, NULL},
        {"", NX_LAYOUT_INVALID, NULL},
        {"bad..", NX_LAYOUT_INVALID, NULL},
        {"x/../b", NX_LAYOUT_INVALID, NULL},
        {"b/devices/", NX_LAYOUT_INVALID, NULL},
        {"b/devices/d1/..", NX_LAYOUT_INVALID, NULL},
        {"b\x01", NX_LAYOUT_INVALID, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        nx_error err = {0};
        char *dir = (char *)"unset";
        int rc = nx_layout_find(root, cases[i].name, &dir, &err);
        assert_int_equal(rc, cases[i].rc);
        if (rc == 0) {
            assert_string_equal(dir, at(cases[i].rel));
            free(dir);
        } else {
            assert_null(dir);
            assert_true(err.msg[0] != '\0');
        }
    }
    char *dir;
    nx_error err;
    assert_int_equal(nx_layout_find(at("missing/profiles/global"), "b", &dir, &err), NX_LAYOUT_MISSING);
    assert_null(dir);
}

static void test_list(void **state)
{
    (void)state;
    nx_layout_profile *ps;
    size_t n;
    assert_int_equal(nx_layout_list(at("dp/profiles/global"), &ps, &n), 0);
    /* strcmp order; not listed: the link out, the plain file, the invalid and empty
     * names, the folder without the suffix and the hidden store. */
    static const char *const want[][2] = {{"Z", "r/Z@latest"}, {"a", "r/a@latest"}, {"b", "r/b@latest"}};
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ps[i].name, want[i][0]);
        assert_string_equal(ps[i].dir, at(want[i][1]));
    }
    nx_layout_list_free(ps, n);
    assert_int_equal(nx_layout_list(at("missing"), &ps, &n), 0);
    assert_int_equal(n, 0);
    assert_null(ps);
    nx_layout_list_free(ps, n);
}

static void test_device_name(void **state)
{
    (void)state;
    static const struct {
        const char *sys_dir, *dev_dir, *want;
    } cases[] = {
        {"/r/s@latest", "/r/s@latest/devices/d", "s/devices/d"},
        {"/r/s@latest", "/r/d@latest", "d"},
        {"/r/s@latest", "/r/s@latestx/devices/d", "d"},   /* a sibling sharing the prefix */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *name = nx_layout_device_name("s", cases[i].sys_dir, "d", cases[i].dev_dir);
        assert_string_equal(name, cases[i].want);
        free(name);
    }
}

static void expect_system_dir(const char *device_dir, const char *want)
{
    char *got = nx_layout_system_dir(device_dir);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* A device profile's system profile: nested (devices/ above it) or its sibling by the
 * name `process` gives it; names of neither form have none. */
static void test_system_dir(void **state)
{
    (void)state;
    expect_system_dir("out/prof/devices/prof-nd0-nc1", "out/prof");
    expect_system_dir("out/prof/devices/prof-nd0-nc1/", "out/prof");
    expect_system_dir("/d/profiles/global/run-nd0-nc12@latest", "/d/profiles/global/run@latest");
    expect_system_dir("/d/profiles/global/a-nd1-b-nd3-nc0@latest/", "/d/profiles/global/a-nd1-b@latest");
    expect_system_dir("run-nd2-nc0@latest", "run@latest");
    expect_system_dir("/d/profiles/global/run@latest", NULL);        /* a system profile */
    expect_system_dir("/d/profiles/global/run-nd-nc0@latest", NULL); /* no digits */
    expect_system_dir("/d/profiles/global/-nd0-nc0@latest", NULL);   /* no system name */
    expect_system_dir("/d/profiles/global/run-nd0-nc0", NULL);       /* not an entry */
    expect_system_dir("/devices/x", NULL);                           /* nothing above devices/ */
}

static void test_display_names(void **state)
{
    (void)state;
    nx_error err;
    const char *good[] = {"my-run", "run.2", "llama layer", "r\xc3\xa9sum\xc3\xa9", ".hidden-ok", "a.b.c"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(nx_display_name_validate(good[i], &err), 0);
    const char *bad[] = {"", "a/b", "/abs", "..", "a..b", "x\ty", "new\nline", "del\x7f"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = '\0';
        assert_int_equal(nx_display_name_validate(bad[i], &err), -1);
        assert_true(strlen(err.msg) > 10);
    }
    assert_int_equal(nx_display_name_validate(NULL, &err), -1);
    char longname[NX_DISPLAY_NAME_MAX + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[NX_DISPLAY_NAME_MAX] = '\0';
    assert_int_equal(nx_display_name_validate(longname, &err), 0);
    longname[NX_DISPLAY_NAME_MAX] = 'n';
    longname[NX_DISPLAY_NAME_MAX + 1] = '\0';
    assert_int_equal(nx_display_name_validate(longname, &err), -1);
    assert_non_null(strstr(err.msg, "limit"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_display_names),
        cmocka_unit_test(test_data_path_and_dirs),
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_device_name),
        cmocka_unit_test(test_system_dir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
