/*
 * test_profile_info.c — query/profile_info.h on hand-made directories: the size of the
 * regular files only (not a symlink, not devices/), table names from split and unsplit
 * files (a "_<digits>" suffix kept when the rest is no catalogue table), sorted and
 * unique, the device flag, the Metadata span, a system profile's DeviceProfileList (null
 * names skipped, a null nc_id, a refused name without a directory, a nested and a
 * sibling device profile), relative_time from SystemProfileMetadata.first_ts, and the
 * errors of a damaged DeviceProfileList and of a
 * directory that does not exist.
 *
 * Expected sizes are the sums of the files' st_size taken here with stat.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/profile_info.h"
#include "system_fixture.h"
#include "table_fixture.h"

static char root[64], dev_dir[128], sys_dir[128];

static uint64_t file_size(const char *dir, const char *name)
{
    char path[300];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/nxpinfo-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(dev_dir, sizeof dev_dir, "%s/run-nd0-nc0@latest", root);
    snprintf(sys_dir, sizeof sys_dir, "%s/run@latest", root);
    assert_int_equal(mkdir(dev_dir, 0755), 0);
    static const fx_col one[] = {{"v", NXPQ_INT64}};
    fx_write(dev_dir, "Instruction_0.parquet", one, 1, (const char *const[]){"1"}, 1);
    fx_write(dev_dir, "Instruction_1.parquet", one, 1, (const char *const[]){"2"}, 1);
    fx_write(dev_dir, "Foo_1.parquet", one, 1, (const char *const[]){"3"}, 1);
    fx_write(dev_dir, "Metadata.parquet",
             (fx_col[]){{"first_hw_timestamp", NXPQ_INT64}, {"last_hw_timestamp", NXPQ_INT64}}, 2,
             (const char *const[]){"50", "900", "40", "800"}, 2);
    write_text(dev_dir, "notes.txt", "not a table");
    char link[300];
    snprintf(link, sizeof link, "%s/Link.parquet", dev_dir);
    assert_int_equal(symlink("Metadata.parquet", link), 0);
    assert_int_equal(mkdir(sys_dir, 0755), 0);
    fx_write(sys_dir, "DeviceProfileList.parquet", (fx_col[]){{"device_profile_name", NXPQ_STRING}, {"nc_id", NXPQ_INT64}},
             2, (const char *const[]){"run-nd0-nc0", "0", NULL, "1", "nested", NULL, "..", "3"}, 4);
    char d[300];
    snprintf(d, sizeof d, "%s/devices", sys_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(d, sizeof d, "%s/devices/nested", sys_dir);
    assert_int_equal(mkdir(d, 0755), 0);
    fx_write(d, "Instruction.parquet", one, 1, (const char *const[]){"1"}, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(root);
    return 0;
}

static void device_profile(void **state)
{
    (void)state;
    nx_profile_info p;
    assert_int_equal(nx_profile_info_read(dev_dir, &p), 0);
    assert_true(p.readable && p.device);
    uint64_t size = file_size(dev_dir, "Instruction_0.parquet") + file_size(dev_dir, "Instruction_1.parquet") +
                    file_size(dev_dir, "Foo_1.parquet") + file_size(dev_dir, "Metadata.parquet") +
                    file_size(dev_dir, "notes.txt");
    assert_int_equal(p.size, size);
    static const char *const tables[] = {"Foo_1", "Instruction", "Metadata"};
    assert_int_equal(p.n_tables, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(p.tables[i], tables[i]);
    assert_true(p.has_span);
    assert_int_equal(p.first_ts, 40);
    assert_int_equal(p.last_ts, 900);
    assert_int_equal(p.n_devices, 0);
    assert_null(p.error);
    nx_profile_info_free(&p);
}

static void system_profile(void **state)
{
    (void)state;
    nx_profile_info p;
    assert_int_equal(nx_profile_info_read(sys_dir, &p), 0);
    assert_true(p.readable);
    assert_false(p.device);
    assert_int_equal(p.size, file_size(sys_dir, "DeviceProfileList.parquet")); /* devices/ not counted */
    assert_false(p.has_span);
    assert_null(p.error);
    assert_int_equal(p.n_devices, 3); /* the null name is skipped */
    assert_string_equal(p.devices[0].name, "run-nd0-nc0");
    assert_true(p.devices[0].has_nc);
    assert_int_equal(p.devices[0].nc_id, 0);
    char want[300];
    snprintf(want, sizeof want, "%s/run-nd0-nc0@latest", root); /* the sibling */
    assert_string_equal(p.devices[0].dir, want);
    assert_string_equal(p.devices[1].name, "nested");
    assert_false(p.devices[1].has_nc);
    snprintf(want, sizeof want, "%s/devices/nested", sys_dir);
    assert_string_equal(p.devices[1].dir, want);
    assert_string_equal(p.devices[2].name, "..");
    assert_null(p.devices[2].dir); /* refused */
    nx_profile_info_free(&p);
}

/* relative_time: SystemProfileMetadata.first_ts ends with the relative-time suffix. */
static void relative_time(void **state)
{
    (void)state;
    static const fx_col cols[] = {{"first_ts", NXPQ_STRING}, {"last_ts", NXPQ_STRING}};
    static const char *const cases[][3] = {
        {"rel@latest", "50234 ns after the trace start (relative time)", "1"},
        {"abs@latest", "2023-11-14 22:13:20 +0000 UTC", "0"},
        {"odd@latest", "(relative time) 5", "0"},
    };
    for (size_t i = 0; i < 3; i++) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/%s", root, cases[i][0]);
        assert_int_equal(mkdir(dir, 0755), 0);
        fx_write(dir, "SystemProfileMetadata.parquet", cols, 2, (const char *const[]){cases[i][1], cases[i][1]}, 1);
        nx_profile_info p;
        assert_int_equal(nx_profile_info_read(dir, &p), 0);
        assert_null(p.error);
        assert_int_equal(p.relative_time, cases[i][2][0] == '1');
        nx_profile_info_free(&p);
    }
}

static void errors(void **state)
{
    (void)state;
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad@latest", root);
    assert_int_equal(mkdir(bad, 0755), 0);
    write_text(bad, "DeviceProfileList.parquet", "PAR1 not a parquet file");
    nx_profile_info p;
    assert_int_equal(nx_profile_info_read(bad, &p), 0);
    assert_true(p.readable);
    assert_int_equal(p.n_tables, 1);
    assert_non_null(p.error);
    assert_non_null(strstr(p.error, "DeviceProfileList.parquet"));
    nx_profile_info_free(&p);
    snprintf(bad, sizeof bad, "%s/missing@latest", root);
    assert_int_equal(nx_profile_info_read(bad, &p), 0);
    assert_false(p.readable);
    assert_non_null(strstr(p.error, bad));
    assert_int_equal(p.n_tables + p.size, 0);
    nx_profile_info_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_profile),
        cmocka_unit_test(system_profile),
        cmocka_unit_test(relative_time),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
