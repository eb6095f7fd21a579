/*
 * test_profile_output.c — the output side of `nxprof process`: atomic publish
 * over a previous @latest, abort leaving the old profile alone with no
 * temporary directory, the schema-driven table writer's file splitting (read back with nxpq_reader), and
 * SchemaFields.parquet holding the whole catalogue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parquet/parquet.h"
#include "profile/profile_layout.h"
#include "profile/profile_manifest.h"
#include "profile/profile_output.h"
#include "profile/table_writer.h"
#include "schema/schema.h"

/* A fresh scratch directory per test, removed afterwards. */
static int setup(void **state)
{
    char *dir = strdup("/tmp/nxprof-test-output-XXXXXX");
    if (!dir || !mkdtemp(dir))
        return -1;
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    nx_remove_tree(*state);
    free(*state);
    return 0;
}

static char *join(const char *a, const char *b)
{
    static char buf[4][1024];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", a, b);
    return p;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

/* Number of entries in `dir` other than . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void test_publish_replaces_and_abort_keeps(void **state)
{
    const char *root = *state;
    nx_error err;
    char *final;
    assert_int_equal(nx_profile_dir_resolve(root, "run", NULL, &final, &err), 0);
    char *global = strdup(join(root, "profiles/global"));
    assert_non_null(global);

    /* First run: nothing to replace; parents are created. */
    nx_profile_output o;
    assert_int_equal(nx_profile_output_begin(&o, final, &err), 0);
    assert_true(exists(o.tmp_dir));
    assert_false(exists(final));
    assert_int_equal(strncmp(o.tmp_dir, global, strlen(global)), 0);
    touch(join(o.tmp_dir, "A.parquet"));
    assert_int_equal(nx_profile_output_publish(&o, 1, &err), 0);
    assert_null(o.tmp_dir);
    assert_true(exists(join(final, "A.parquet")));
    assert_int_equal(count_entries(global), 1);

    /* Second run replaces the profile whole: A is gone, B is there, no leftovers. */
    assert_int_equal(nx_profile_output_begin(&o, final, &err), 0);
    touch(join(o.tmp_dir, "B.parquet"));
    assert_true(exists(join(final, "A.parquet")));   /* untouched while building */
    assert_int_equal(nx_profile_output_publish(&o, 1, &err), 0);
    assert_true(exists(join(final, "B.parquet")));
    assert_false(exists(join(final, "A.parquet")));
    assert_int_equal(count_entries(global), 1);

    /* A failed run: abort leaves the previous profile and no temporary directory. */
    assert_int_equal(nx_profile_output_begin(&o, final, &err), 0);
    char *tmp = strdup(o.tmp_dir);
    assert_non_null(tmp);
    touch(join(o.tmp_dir, "C.parquet"));
    nx_profile_output_abort(&o);
    assert_false(exists(tmp));
    assert_true(exists(join(final, "B.parquet")));
    assert_false(exists(join(final, "C.parquet")));
    assert_int_equal(count_entries(global), 1);
    assert_int_equal(count_entries(final), 2); /* B.parquet and the marker */
    assert_true(exists(join(final, NX_PROFILE_MARKER)));

    /* A file standing where the profile should go is refused, and cleaned up after. */
    char *blocked = strdup(join(global, "blocked@latest"));
    assert_non_null(blocked);
    touch(blocked);
    assert_int_equal(nx_profile_output_begin(&o, blocked, &err), -1);
    assert_non_null(strstr(err.msg, "not a directory"));
    assert_null(o.tmp_dir);
    assert_int_equal(count_entries(global), 2);

    /* --output-file with a trailing slash publishes to the same directory. */
    char *outdir = strdup(join(root, "out/"));
    assert_non_null(outdir);
    assert_int_equal(nx_profile_output_begin(&o, outdir, &err), 0);
    touch(join(o.tmp_dir, "D.parquet"));
    assert_int_equal(nx_profile_output_publish(&o, 1, &err), 0);
    assert_true(exists(join(root, "out/D.parquet")));

    free(outdir);
    free(blocked);
    free(tmp);
    free(global);
    free(final);
}

/* A set of profiles publishes together: all replaced, or (one target refused at
 * publish time) none, with every temporary directory removed. */
static void test_publish_set_all_or_nothing(void **state)
{
    const char *root = *state;
    nx_error err;
    char *dirs[3];
    const char *names[3] = {"s", "s-nd0-nc0", "s-nd0-nc1"};
    nx_profile_output o[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(nx_profile_dir_resolve(root, names[i], NULL, &dirs[i], &err), 0);
        assert_int_equal(nx_profile_output_begin(&o[i], dirs[i], &err), 0);
        touch(join(o[i].tmp_dir, "old.parquet"));
    }
    assert_int_equal(nx_profile_output_publish(o, 3, &err), 0);
    char *global = strdup(join(root, "profiles/global"));
    assert_non_null(global);
    assert_int_equal(count_entries(global), 3);

    /* Second run: the last target is taken by a user's folder before publishing. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(nx_profile_output_begin(&o[i], dirs[i], &err), 0);
        touch(join(o[i].tmp_dir, "new.parquet"));
    }
    nx_remove_tree(dirs[2]);
    assert_int_equal(mkdir(dirs[2], 0777), 0);
    touch(join(dirs[2], "notes.txt"));
    assert_int_equal(nx_profile_output_publish(o, 3, &err), -1);
    assert_non_null(strstr(err.msg, "notes.txt"));
    for (int i = 0; i < 2; i++) {
        assert_true(exists(join(dirs[i], "old.parquet")));
        assert_false(exists(join(dirs[i], "new.parquet")));
        assert_null(o[i].tmp_dir);
    }
    assert_true(exists(join(dirs[2], "notes.txt")));
    assert_int_equal(count_entries(global), 3);   /* no temporary directory left */

    /* Third run with the folder gone: every profile is the new one. */
    nx_remove_tree(dirs[2]);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(nx_profile_output_begin(&o[i], dirs[i], &err), 0);
        touch(join(o[i].tmp_dir, "new.parquet"));
    }
    assert_int_equal(nx_profile_output_publish(o, 3, &err), 0);
    for (int i = 0; i < 3; i++) {
        assert_true(exists(join(dirs[i], "new.parquet")));
        assert_false(exists(join(dirs[i], "old.parquet")));
        free(dirs[i]);
    }
    assert_int_equal(count_entries(global), 3);
    free(global);
}

/* A Parquet file written with the given created_by (NULL: the writer's, "nxprof ..."). */
static void write_parquet(const char *path, const char *created_by)
{
    nxpq_column_spec col = {"x", NXPQ_INT64, false, NXPQ_ENCODE_AUTO};
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.threads = 1;
    if (created_by)
        o.created_by = created_by;
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, &col, 1, &o, &err);
    if (!w)
        fail_msg("%s", err.msg);
    assert_int_equal(nxpq_put_int64(w, 0, 1), 0);
    assert_int_equal(nxpq_end_row(w), 0);
    if (nxpq_writer_close(w, &err) != 0)
        fail_msg("%s", err.msg);
}

/* Publishes an empty profile to `dir`: 0, or -1 with the message in err. */
static int publish_to(const char *dir, nx_error *err)
{
    nx_profile_output o;
    if (nx_profile_output_begin(&o, dir, err) != 0)
        return -1;
    return nx_profile_output_publish(&o, 1, err);
}

static void test_replaces_only_what_nxprof_wrote(void **state)
{
    const char *root = *state;
    nx_error err;

    /* A user's folder: refused before any work, every file left as it was. */
    char *mine = strdup(join(root, "mydocs"));
    assert_non_null(mine);
    assert_int_equal(mkdir(mine, 0755), 0);
    touch(join(mine, "notes.txt"));
    assert_int_equal(publish_to(mine, &err), -1);
    assert_non_null(strstr(err.msg, "refusing to replace"));
    assert_non_null(strstr(err.msg, "notes.txt"));
    assert_true(exists(join(mine, "notes.txt")));
    assert_int_equal(count_entries(mine), 1);
    assert_int_equal(count_entries(root), 1); /* no temporary sibling left behind */

    /* Another tool's profile (Parquet not written by nxprof), or a profile with a
     * folder inside, or an empty file named like a table: refused too. */
    const char *const foreign[] = {"other", "withdir", "fake"};
    write_parquet(join(root, "T.parquet"), "parquet-go version 0.1");
    for (size_t i = 0; i < 3; i++) {
        char *d = strdup(join(root, foreign[i]));
        assert_non_null(d);
        assert_int_equal(mkdir(d, 0755), 0);
        if (i == 0)
            write_parquet(join(d, "Instruction.parquet"), "parquet-go version 0.1");
        if (i == 1) {
            write_parquet(join(d, "Instruction.parquet"), NULL);
            assert_int_equal(mkdir(join(d, "sub"), 0755), 0);
        }
        if (i == 2)
            touch(join(d, "Instruction.parquet"));
        assert_int_equal(publish_to(d, &err), -1);
        assert_non_null(strstr(err.msg, "not a profile nxprof wrote"));
        assert_true(exists(join(d, i == 1 ? "sub" : "Instruction.parquet")));
        free(d);
    }

    /* Empty directory; a profile without the marker whose files nxprof wrote (Parquet
     * and a timeline index): replaced, and then marked. */
    char *empty = strdup(join(root, "empty"));
    char *old = strdup(join(root, "old"));
    assert_non_null(empty), assert_non_null(old);
    assert_int_equal(mkdir(empty, 0755), 0);
    assert_int_equal(publish_to(empty, &err), 0);
    assert_true(exists(join(empty, NX_PROFILE_MARKER)));
    assert_int_equal(mkdir(old, 0755), 0);
    write_parquet(join(old, "Instruction.parquet"), NULL);
    touch(join(old, ".Instruction.nxtl"));
    if (publish_to(old, &err) != 0)
        fail_msg("%s", err.msg);
    assert_false(exists(join(old, "Instruction.parquet")));
    assert_true(exists(join(old, NX_PROFILE_MARKER)));
    free(empty);
    free(old);
    free(mine);
}

/* nx_profile_remove deletes exactly what the manifest lists: a profile with a file
 * it does not list is left whole (and named); without it, nothing is left. */
static void test_remove_deletes_only_the_manifest(void **state)
{
    const char *root = *state;
    nx_error err;
    char *prof = strdup(join(root, "prof"));
    assert_non_null(prof);
    nx_profile_output o;
    assert_int_equal(nx_profile_output_begin(&o, prof, &err), 0);
    touch(join(o.tmp_dir, "A.parquet"));
    assert_int_equal(mkdir(join(o.tmp_dir, "devices"), 0777), 0);
    assert_int_equal(nx_profile_dir_create(join(o.tmp_dir, "devices/d0"), &err), 0);
    touch(join(o.tmp_dir, "devices/d0/B.parquet"));
    assert_int_equal(nx_profile_output_publish(&o, 1, &err), 0);

    touch(join(prof, "devices/d0/NOTES.md"));
    assert_int_equal(nx_profile_remove(prof, &err), -1);
    assert_non_null(strstr(err.msg, "devices/d0/NOTES.md"));
    assert_true(exists(join(prof, "A.parquet")));
    assert_true(exists(join(prof, "devices/d0/B.parquet")));
    assert_true(exists(join(prof, NX_PROFILE_MARKER)));

    assert_int_equal(unlink(join(prof, "devices/d0/NOTES.md")), 0);
    unlink(join(prof, "A.parquet"));   /* a listed file already gone is fine */
    if (nx_profile_remove(prof, &err) != 0)
        fail_msg("%s", err.msg);
    assert_false(exists(prof));
    assert_int_equal(count_entries(root), 0);
    free(prof);
}

/* One value per column, by type, derived from the row number so a reader can check
 * which rows went to which file. */
static void put_row(nxpq_writer *w, const nx_schema_table *s, int64_t r)
{
    for (size_t c = 0; c < s->n_fields; c++) {
        switch (s->fields[c].column_type) {
        case NX_COL_INT64: assert_int_equal(nxpq_put_int64(w, c, r), 0); break;
        case NX_COL_INT32: assert_int_equal(nxpq_put_int32(w, c, (int32_t)r), 0); break;
        case NX_COL_FLOAT: assert_int_equal(nxpq_put_float(w, c, (float)r), 0); break;
        case NX_COL_DOUBLE: assert_int_equal(nxpq_put_double(w, c, (double)r), 0); break;
        case NX_COL_STRING: assert_int_equal(nxpq_put_string(w, c, "v", 1), 0); break;
        case NX_COL_BOOLEAN: assert_int_equal(nxpq_put_bool(w, c, r % 2), 0); break;
        case NX_COL_LIST_INT64: assert_int_equal(nxpq_put_list_int64(w, c, &r, 1), 0); break;
        case NX_COL_LIST_STRING: {
            nxpq_str item = {"x", 1};
            assert_int_equal(nxpq_put_list_string(w, c, &item, 1), 0);
            break;
        }
        case NX_COL_OBJECT_LIST: fail_msg("object list in a written table"); break;
        }
    }
}

/* Writes `rows` rows of Instruction with the given per-file limit into `dir`. */
static void write_instructions(const char *dir, uint64_t rows, uint64_t limit)
{
    nx_error err;
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.threads = 1;
    nx_table_writer *t = nx_table_writer_open(dir, "Instruction", limit, &o, &err);
    if (!t)
        fail_msg("%s", err.msg);
    for (uint64_t r = 0; r < rows; r++) {
        nxpq_writer *w = nx_table_begin_row(t, &err);
        if (!w)
            fail_msg("%s", err.msg);
        put_row(w, nx_table_writer_schema(t), (int64_t)r);
        if (nx_table_end_row(t, &err) < 0)
            fail_msg("%s", err.msg);
    }
    assert_int_equal(nx_table_writer_rows(t), rows);
    if (nx_table_writer_close(t, &err) < 0)
        fail_msg("%s", err.msg);
}

/* Opens `path`, checks its row count, schema and metadata, and that start_ts runs
 * first_row, first_row + 1, ... */
static void check_file(const char *path, int64_t rows, int64_t first_row)
{
    nx_error err;
    nxpq_reader *r = nxpq_reader_open(path, &err);
    if (!r)
        fail_msg("%s", err.msg);
    assert_int_equal(nxpq_reader_num_rows(r), rows);
    const nx_schema_table *s = nx_schema_table_find("Instruction");
    assert_int_equal(nxpq_reader_num_columns(r), s->n_fields);
    for (size_t c = 0; c < s->n_fields; c++) {
        assert_string_equal(nxpq_reader_column(r, c)->name, s->fields[c].name);
        assert_int_equal(nxpq_reader_column(r, c)->nullable, !s->fields[c].required);
    }
    assert_string_equal(nxpq_reader_metadata(r, "profile_schema_version"), NX_SCHEMA_VERSION);
    assert_non_null(nxpq_reader_metadata(r, "nxprof_version"));
    size_t ts = (size_t)nxpq_reader_find_column(r, "start_ts");
    nxpq_scan_options so = {.columns = &ts, .n_columns = 1};
    nxpq_scan *scan = nxpq_scan_open(r, &so, &err);
    assert_non_null(scan);
    const nxpq_batch *b;
    int64_t next = first_row;
    int rc;
    while ((rc = nxpq_scan_next(scan, &b, &err)) == 1)
        for (size_t i = 0; i < b->n_rows; i++)
            assert_int_equal(b->columns[0].values.i64[i], next++);
    assert_int_equal(rc, 0);
    assert_int_equal(next, first_row + rows);
    nxpq_scan_close(scan);
    nxpq_reader_close(r);
}

static void test_split_naming(void **state)
{
    const char *root = *state;
    /* 25 rows, 10 per file: _0 (10), _1 (10), _2 (5), and no unsplit file. */
    write_instructions(root, 25, 10);
    check_file(join(root, "Instruction_0.parquet"), 10, 0);
    check_file(join(root, "Instruction_1.parquet"), 10, 10);
    check_file(join(root, "Instruction_2.parquet"), 5, 20);
    assert_false(exists(join(root, "Instruction_3.parquet")));
    assert_false(exists(join(root, "Instruction.parquet")));
    assert_int_equal(count_entries(root), 3);
}

static void test_no_split_at_the_limit(void **state)
{
    const char *root = *state;
    /* Exactly the limit does not exceed it: one unsplit file. */
    write_instructions(root, 10, 10);
    check_file(join(root, "Instruction.parquet"), 10, 0);
    assert_int_equal(count_entries(root), 1);
}

static void test_refuses_transient_and_unknown(void **state)
{
    const char *root = *state;
    nx_error err;
    assert_null(nx_table_writer_open(root, "MemoryBandwidthSeries", 0, NULL, &err));
    assert_non_null(strstr(err.msg, "transient"));
    assert_null(nx_table_writer_open(root, "NoSuchTable", 0, NULL, &err));
    assert_non_null(strstr(err.msg, "NoSuchTable"));
    assert_int_equal(count_entries(root), 0);
}

static void test_required_null_names_table_and_file(void **state)
{
    const char *root = *state;
    nx_error err;
    nx_table_writer *t = nx_table_writer_open(root, "ActiveTime", 0, NULL, &err);
    assert_non_null(t);
    nxpq_writer *w = nx_table_begin_row(t, &err);
    assert_non_null(w);
    nxpq_put_null(w, 0);   /* start_ts is required */
    for (size_t c = 1; c < nx_table_writer_schema(t)->n_fields; c++)
        nxpq_put_null(w, c);
    int rc = nx_table_end_row(t, &err);
    if (rc == 0)
        rc = nx_table_writer_close(t, &err);
    else
        nx_table_writer_abort(t);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.msg, "ActiveTime"));
    assert_non_null(strstr(err.msg, "ActiveTime.parquet"));
    assert_false(exists(join(root, "ActiveTime.parquet")));
}

static void test_schema_fields(void **state)
{
    const char *root = *state;
    nx_error err;
    if (nx_write_schema_fields(root, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    nxpq_reader *r = nxpq_reader_open(join(root, "SchemaFields.parquet"), &err);
    if (!r)
        fail_msg("%s", err.msg);
    assert_int_equal(nxpq_reader_num_rows(r), 656);
    assert_int_equal(nx_schema_fields_row_count(), 656);
    const nx_schema_table *s = nx_schema_table_find("SchemaFields");
    assert_int_equal(nxpq_reader_num_columns(r), s->n_fields);
    for (size_t c = 0; c < s->n_fields; c++)
        assert_string_equal(nxpq_reader_column(r, c)->name, s->fields[c].name);

    /* Every (table, field) pair in catalogue order; bounds null; unit null exactly
     * where the catalogue gives none. */
    size_t cols[] = {(size_t)nxpq_reader_find_column(r, "table_name"),
                     (size_t)nxpq_reader_find_column(r, "field_name"),
                     (size_t)nxpq_reader_find_column(r, "field_minimum"),
                     (size_t)nxpq_reader_find_column(r, "field_unit")};
    nxpq_scan_options so = {.columns = cols, .n_columns = 4};
    nxpq_scan *scan = nxpq_scan_open(r, &so, &err);
    assert_non_null(scan);
    size_t ti = 0, fi = 0, rows = 0;
    const nxpq_batch *b;
    int rc;
    while ((rc = nxpq_scan_next(scan, &b, &err)) == 1) {
        for (size_t i = 0; i < b->n_rows; i++, rows++) {
            while (fi == nx_schema_table_at(ti)->n_fields) {
                ti++;
                fi = 0;
            }
            const nx_schema_table *t = nx_schema_table_at(ti);
            const nx_schema_field *f = &t->fields[fi++];
            const nxpq_column_data *tn = &b->columns[0], *fn = &b->columns[1];
            assert_int_equal(tn->offsets[i + 1] - tn->offsets[i], strlen(t->name));
            assert_memory_equal(tn->data + tn->offsets[i], t->name, strlen(t->name));
            assert_int_equal(fn->offsets[i + 1] - fn->offsets[i], strlen(f->name));
            assert_memory_equal(fn->data + fn->offsets[i], f->name, strlen(f->name));
            assert_true(b->columns[2].valid && !b->columns[2].valid[i]);
            bool unit_present = !b->columns[3].valid || b->columns[3].valid[i];
            assert_int_equal(unit_present, *f->unit != '\0');
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 656);
    nxpq_scan_close(scan);
    nxpq_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_publish_replaces_and_abort_keeps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaces_only_what_nxprof_wrote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_publish_set_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_deletes_only_the_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_naming, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_split_at_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_transient_and_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_required_null_names_table_and_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_fields, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
