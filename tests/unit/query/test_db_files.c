/*
 * test_db_files.c — query/db_files.h on a hand-made profile directory: a split table
 * listed as one with its files in numeric order (not name order: _10 after _2), an
 * unsplit table, rows from the files as written here and sizes from stat, a table
 * whose numbering has a gap and one whose only file is not Parquet each kept with an
 * error naming it while the others are listed, files that are no table left out, and
 * a directory that does not exist.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
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

#include "query/db_files.h"
#include "table_fixture.h"

static char dir[64];
static const fx_col one[] = {{"v", NXPQ_INT64}};

static uint64_t file_size(const char *name)
{
    char path[300];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void write_text(const char *name, const char *text)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* dir/<name> with `rows` rows. */
static void write_rows(const char *name, size_t rows)
{
    const char *cells[16];
    for (size_t i = 0; i < rows; i++)
        cells[i] = "7";
    fx_write(dir, name, one, 1, cells, rows);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxdbfiles-XXXXXX");
    assert_non_null(mkdtemp(dir));
    /* Instruction in 12 files (0..11, rows i % 3 + 1), so name order would put _10 before _2. */
    for (size_t i = 0; i < 12; i++) {
        char name[64];
        snprintf(name, sizeof name, "Instruction_%zu.parquet", i);
        write_rows(name, i % 3 + 1);
    }
    write_rows("Summary.parquet", 1);
    write_rows("DmaPacket_0.parquet", 2); /* a gap: _1 missing */
    write_rows("DmaPacket_2.parquet", 2);
    write_text("Flow.parquet", "not parquet at all");
    write_text("notes.txt", "not a table");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const nx_db_table *table(const nx_db_files *f, const char *name)
{
    for (size_t i = 0; i < f->n_tables; i++)
        if (strcmp(f->tables[i].name, name) == 0)
            return &f->tables[i];
    return NULL;
}

static void lists_tables_and_files(void **state)
{
    (void)state;
    nx_db_files f;
    nx_error err = {0};
    assert_int_equal(nx_db_files_read(dir, &f, &err), 0);
    assert_int_equal(f.n_tables, 4); /* DmaPacket, Flow, Instruction, Summary */
    for (size_t i = 1; i < f.n_tables; i++)
        assert_true(strcmp(f.tables[i - 1].name, f.tables[i].name) < 0);
    const nx_db_table *ins = table(&f, "Instruction");
    assert_non_null(ins);
    assert_null(ins->error);
    assert_int_equal(ins->n_files, 12);
    int64_t rows = 0;
    uint64_t size = 0;
    for (size_t i = 0; i < 12; i++) {
        char name[64];
        snprintf(name, sizeof name, "Instruction_%zu.parquet", i);
        assert_string_equal(ins->files[i].name, name);
        assert_int_equal(ins->files[i].rows, (int64_t)(i % 3 + 1));
        assert_int_equal(ins->files[i].size, file_size(name));
        rows += (int64_t)(i % 3 + 1);
        size += file_size(name);
    }
    assert_int_equal(ins->rows, rows);
    assert_int_equal(ins->size, size);
    const nx_db_table *sum = table(&f, "Summary");
    assert_int_equal(sum->n_files, 1);
    assert_string_equal(sum->files[0].name, "Summary.parquet");
    assert_int_equal(sum->rows, 1);
    assert_int_equal(sum->size, file_size("Summary.parquet"));
    /* The broken tables: kept, with no files and an error naming what is wrong. */
    const nx_db_table *gap = table(&f, "DmaPacket");
    assert_int_equal(gap->n_files, 0);
    assert_non_null(gap->error);
    assert_non_null(strstr(gap->error, "DmaPacket_1.parquet"));
    const nx_db_table *junk = table(&f, "Flow");
    assert_int_equal(junk->n_files, 0);
    assert_non_null(junk->error);
    assert_non_null(strstr(junk->error, "Flow.parquet"));
    nx_db_files_free(&f);
}

static void missing_directory(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/nope", dir);
    nx_db_files f;
    nx_error err = {0};
    assert_int_equal(nx_db_files_read(path, &f, &err), -1);
    assert_non_null(strstr(err.msg, "nope"));
    assert_int_equal(f.n_tables, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_tables_and_files),
        cmocka_unit_test(missing_directory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
