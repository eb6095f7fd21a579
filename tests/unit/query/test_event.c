/*
 * test_event.c — query/event.h: one row of a split Instruction table by its ordinal
 * (every schema field in order, the values the test wrote, null for the columns the
 * files lack), its track, the start hint (right, wrong, absent), rows and files out of
 * range, a missing table, a table that is not a timeline (no track), and a timeline
 * table without its track columns (the row still answered, no track).
 *
 * Instruction_0.parquet holds rows 0..2, Instruction_1.parquet rows 0..4999 (more than
 * one read batch); row r of file f starts at 1000 * f + r and ends 5 later, with
 * timeline_track "q<r % 3>" and opcode "OP<r>".
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

#include "profile/profile_table.h"
#include "profile/timeline_rules.h"
#include "query/event.h"
#include "system_fixture.h"
#include "table_fixture.h"

#define ROWS1 5000

static char dir[64];
static const fx_col COLS[] = {{"start_ts", NXPQ_INT64}, {"end_ts", NXPQ_INT64}, {"engine", NXPQ_STRING},
                              {"timeline_track", NXPQ_STRING}, {"opcode", NXPQ_STRING}};

static void write_instr(const char *d, const char *file, int f, size_t rows, const fx_col *cols, size_t n_cols)
{
    char **cells = calloc(rows * 5, sizeof *cells);
    assert_non_null(cells);
    for (size_t r = 0; r < rows; r++) {
        char b[5][32];
        snprintf(b[0], 32, "%zu", 1000 * (size_t)f + r);
        snprintf(b[1], 32, "%zu", 1000 * (size_t)f + r + 5);
        snprintf(b[2], 32, "tensor");
        snprintf(b[3], 32, "q%zu", r % 3);
        snprintf(b[4], 32, "OP%zu", r);
        for (size_t c = 0; c < n_cols; c++)
            assert_non_null(cells[r * n_cols + c] = strdup(b[c]));
    }
    fx_write(d, file, cols, n_cols, (const char *const *)cells, rows);
    for (size_t i = 0; i < rows * n_cols; i++)
        free(cells[i]);
    free(cells);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/nxevent-XXXXXX");
    assert_non_null(mkdtemp(dir));
    write_instr(dir, "Instruction_0.parquet", 0, 3, COLS, 5);
    write_instr(dir, "Instruction_1.parquet", 1, ROWS1, COLS, 5);
    static const char *const meta[] = {"num_physical_cores"};
    write_row0(dir, "Metadata", meta, 1, 1, (double[]){4}, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(dir);
    return 0;
}

/* The event is row `row` of file `file` as the test wrote it. */
static void check_row(const nx_event *ev, int file, int64_t row)
{
    const nx_schema_table *st = nx_schema_table_find("Instruction");
    assert_ptr_equal(ev->schema, st);
    char want[32];
    for (size_t f = 0; f < st->n_fields; f++) {
        const char *name = st->fields[f].name;
        const nxpq_column_data *c = nx_event_field(ev, f);
        size_t k = 0;
        while (k < 5 && strcmp(COLS[k].name, name) != 0)
            k++;
        if (k == 5) {
            assert_null(c);
            continue;
        }
        assert_non_null(c);
        assert_true(!c->valid || c->valid[ev->row]);
        if (k < 2) {
            assert_int_equal(c->values.i64[ev->row], 1000 * file + row + (k == 1 ? 5 : 0));
            continue;
        }
        const char *s = c->data + c->offsets[ev->row];
        size_t len = (size_t)(c->offsets[ev->row + 1] - c->offsets[ev->row]);
        snprintf(want, sizeof want, k == 2 ? "tensor" : k == 3 ? "q%d" : "OP%d", (int)(k == 3 ? row % 3 : row));
        assert_int_equal(len, strlen(want));
        assert_memory_equal(s, want, len);
    }
    snprintf(want, sizeof want, "q%d", (int)(row % 3));
    assert_true(ev->has_track);
    assert_string_equal(ev->track, want);
    assert_int_equal(ev->track_len, strlen(want));
}

static void rows_across_files_and_hints(void **state)
{
    (void)state;
    static const struct {
        int file;
        int64_t row;
    } cases[] = {{0, 0}, {0, 2}, {1, 0}, {1, 4500}, {1, ROWS1 - 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ord = nx_row_ordinal((size_t)cases[i].file, cases[i].row);
        int64_t right = 1000 * cases[i].file + cases[i].row, wrong = -77;
        const int64_t *hints[] = {NULL, &right, &wrong};
        for (size_t h = 0; h < 3; h++) {
            nx_event ev;
            nx_error err = {0};
            assert_int_equal(nx_event_read(dir, "Instruction", ord, hints[h], &ev, &err), 0);
            check_row(&ev, cases[i].file, cases[i].row);
            nx_event_free(&ev);
        }
    }
}

static void missing_rows_and_tables(void **state)
{
    (void)state;
    nx_event ev;
    nx_error err = {0};
    assert_int_equal(nx_event_read(dir, "Instruction", 3, NULL, &ev, &err), NX_EVENT_NONE);
    assert_int_equal(nx_event_read(dir, "Instruction", nx_row_ordinal(1, ROWS1), NULL, &ev, &err), NX_EVENT_NONE);
    assert_int_equal(nx_event_read(dir, "Instruction", nx_row_ordinal(2, 0), NULL, &ev, &err), NX_EVENT_NONE);
    assert_int_equal(nx_event_read(dir, "Instruction", -1, NULL, &ev, &err), NX_EVENT_NONE);
    assert_int_equal(nx_event_read(dir, "CcOp", 0, NULL, &ev, &err), NX_PROFILE_TABLE_ABSENT);
    assert_int_equal(nx_event_read(dir, "NoSuchTable", 0, NULL, &ev, &err), -1);
    assert_non_null(strstr(err.msg, "NoSuchTable"));
}

static void other_tables(void **state)
{
    (void)state;
    nx_event ev;
    nx_error err = {0};
    /* Not a timeline table: the row, no track. */
    assert_int_equal(nx_event_read(dir, "Metadata", 0, NULL, &ev, &err), 0);
    assert_false(ev.has_track);
    int f = nx_schema_field_index(ev.schema, "num_physical_cores");
    assert_true(f >= 0);
    assert_int_equal(nx_event_field(&ev, (size_t)f)->values.i64[ev.row], 4);
    nx_event_free(&ev);
    /* A timeline table without the column its track needs: the row without a track. */
    char d2[200];
    snprintf(d2, sizeof d2, "%s/notrack", dir);
    assert_int_equal(mkdir(d2, 0755), 0);
    write_instr(d2, "Instruction.parquet", 0, 4, COLS, 2);
    assert_int_equal(nx_event_read(d2, "Instruction", 2, NULL, &ev, &err), 0);
    assert_false(ev.has_track);
    assert_int_equal(nx_event_field(&ev, 0)->values.i64[ev.row], 2);
    nx_event_free(&ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_across_files_and_hints),
        cmocka_unit_test(missing_rows_and_tables),
        cmocka_unit_test(other_tables),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
