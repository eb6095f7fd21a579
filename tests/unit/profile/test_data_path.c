/*
 * test_data_path.c — real-path rules of profile/data_path.h on a scratch tree with
 * symbolic links: the planned real path of an output that does not exist yet, a
 * capture and its output kept apart (either inside the other, through a link too),
 * and a directory reached through links only while it stays inside a root.
 */
#define _DEFAULT_SOURCE /* realpath, symlink */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/data_path.h"
#include "profile/profile_output.h"

static char root[PATH_MAX];   /* the real path of the scratch directory */

static char *at(const char *rel)
{
    static char buf[4][PATH_MAX + 64];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", root, rel);
    return p;
}

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/nxprof-test-datapath-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, root))
        return -1;
    /* cap/ (a capture), dp/profiles/global/{p@latest/, .store/q/}, out/ (outside),
     * links: global/q@latest -> .store/q, global/evil@latest -> ../../../out,
     *        alias -> cap (a link to the capture) */
    const char *dirs[] = {"cap", "dp", "dp/profiles", "dp/profiles/global", "dp/profiles/global/p@latest",
                          "dp/profiles/global/.store", "dp/profiles/global/.store/q", "out"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (mkdir(at(dirs[i]), 0777) != 0)
            return -1;
    if (symlink(".store/q", at("dp/profiles/global/q@latest")) != 0 ||
        symlink("../../../out", at("dp/profiles/global/evil@latest")) != 0 || symlink("cap", at("alias")) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return nx_remove_tree(root);
}

static void test_real_planned(void **state)
{
    (void)state;
    char *p = nx_path_real_planned(at("alias"));
    assert_string_equal(p, at("cap"));
    free(p);
    p = nx_path_real_planned(at("alias/new/deeper/"));   /* missing: the ancestor's real path + the rest */
    assert_string_equal(p, at("cap/new/deeper"));
    free(p);
    p = nx_path_real_planned(at("out/missing/.."));
    assert_string_equal(p, at("out"));
    free(p);
}

static void test_apart(void **state)
{
    (void)state;
    nx_error err = {0};
    assert_int_equal(nx_output_apart_from_capture(at("cap"), at("out/prof"), &err), 0);
    /* The output inside the capture, named through a link and not existing yet. */
    assert_int_equal(nx_output_apart_from_capture(at("cap"), at("alias/prof"), &err), -1);
    assert_non_null(strstr(err.msg, at("cap")));
    assert_non_null(strstr(err.msg, at("alias/prof")));
    assert_non_null(strstr(err.msg, "inside the capture"));
    /* The capture inside the output (reached through the link). */
    assert_int_equal(nx_output_apart_from_capture(at("alias"), root, &err), -1);
    assert_non_null(strstr(err.msg, at("alias")));
    assert_non_null(strstr(err.msg, "lies inside it"));
    /* The same directory is both. */
    assert_int_equal(nx_output_apart_from_capture(at("cap"), at("alias"), &err), -1);
    /* "cap2" is not inside "cap": components, not string prefixes. */
    assert_int_equal(mkdir(at("cap2"), 0777), 0);
    assert_int_equal(nx_output_apart_from_capture(at("cap"), at("cap2/prof"), &err), 0);
}

static void test_dir_real_inside(void **state)
{
    (void)state;
    const char *g = at("dp/profiles/global");
    char *p = nx_dir_real_inside(at("dp/profiles/global/q@latest"), g);
    assert_string_equal(p, at("dp/profiles/global/.store/q"));
    free(p);
    p = nx_dir_real_inside(at("dp/profiles/global/p@latest"), at("dp/profiles/../profiles/global"));
    assert_string_equal(p, at("dp/profiles/global/p@latest"));
    free(p);
    errno = 0;
    assert_null(nx_dir_real_inside(at("dp/profiles/global/evil@latest"), g));   /* leads out */
    assert_int_equal(errno, ENOENT);
    assert_null(nx_dir_real_inside(at("dp/profiles/global/none@latest"), g));   /* missing */
    assert_null(nx_dir_real_inside(g, g));                                       /* the root itself */
    FILE *f = fopen(at("dp/profiles/global/file@latest"), "w");
    assert_non_null(f);
    fclose(f);
    assert_null(nx_dir_real_inside(at("dp/profiles/global/file@latest"), g));   /* not a directory */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_real_planned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_real_inside, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
