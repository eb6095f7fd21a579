/*
 * test_schema.c — the generated catalogue against the reference schema.
 *
 * Reads tests/data/reference/profile-schema-7.4.0.tsv (and the enums file) and
 * checks, field by field, that the catalogue holds exactly the same tables,
 * fields, types, formats, units, required flags, enums and examples, in the same
 * order, and that every table and field carries a description of our own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"

static char *test_data_path(const char *rel)
{
    const char *root = getenv("NXPROF_TEST_DATA");
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", root ? root : "tests/data", rel);
    return path;
}

/* Splits a line in place on tabs; returns the number of columns. */
static int split(char *line, char **cols, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < max) {
        cols[n++] = line;
        char *tab = strchr(line, '\t');
        if (!tab)
            break;
        *tab = '\0';
        line = tab + 1;
    }
    return n;
}

static void test_catalogue_equals_reference(void **state)
{
    (void)state;
    FILE *f = fopen(test_data_path("reference/profile-schema-7.4.0.tsv"), "r");
    if (!f)
        fail_msg("cannot open the reference schema at %s", test_data_path("reference/profile-schema-7.4.0.tsv"));
    char line[8192];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    size_t table_i = 0, field_i = 0, rows = 0;
    const nx_schema_table *t = nx_schema_table_at(0);
    while (fgets(line, sizeof line, f)) {
        char *c[9] = {0};
        int n = split(line, c, 9);
        assert_int_equal(n, 8);
        if (field_i == t->n_fields) {
            t = nx_schema_table_at(++table_i);
            field_i = 0;
            if (!t)
                fail_msg("reference has table %s beyond the catalogue's last table", c[0]);
        }
        if (strcmp(t->name, c[0]) != 0)
            fail_msg("row %zu: reference table %s, catalogue table %s", rows + 1, c[0], t->name);
        const nx_schema_field *fd = &t->fields[field_i++];
        assert_string_equal(fd->name, c[1]);
        assert_string_equal(fd->type, c[2]);
        assert_string_equal(fd->format, c[3]);
        assert_string_equal(fd->unit, c[4]);
        assert_int_equal(fd->required, strcmp(c[5], "Yes") == 0);
        assert_true(strcmp(c[5], "Yes") == 0 || strcmp(c[5], "No") == 0);
        assert_string_equal(fd->enum_name, c[6]);
        assert_string_equal(fd->example, c[7]);
        rows++;
    }
    fclose(f);
    assert_int_equal(field_i, t->n_fields);
    assert_int_equal(table_i + 1, nx_schema_table_count());
    assert_int_equal(rows, 656);
    assert_int_equal(nx_schema_field_total(), 656);
    assert_int_equal(nx_schema_table_count(), 52);
    assert_string_equal(NX_SCHEMA_VERSION, "7.4.0");
}

static void test_enums_equal_reference(void **state)
{
    (void)state;
    FILE *f = fopen(test_data_path("reference/profile-schema-7.4.0-enums.tsv"), "r");
    assert_non_null(f);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, f));
    size_t n_values = 0;
    while (fgets(line, sizeof line, f)) {
        char *c[3] = {0};
        assert_int_equal(split(line, c, 3), 2);
        const nx_schema_enum *e = nx_schema_enum_find(c[0]);
        if (!e)
            fail_msg("enum %s missing from the catalogue", c[0]);
        int found = 0;
        for (size_t i = 0; i < e->n_values; i++)
            found |= strcmp(e->values[i], c[1]) == 0;
        if (!found)
            fail_msg("enum %s lacks value %s", c[0], c[1]);
        n_values++;
    }
    fclose(f);
    size_t total = 0;
    for (size_t i = 0; i < nx_schema_enum_count(); i++)
        total += nx_schema_enum_at(i)->n_values;
    assert_int_equal(total, n_values);
}

static void test_every_description_is_ours_and_present(void **state)
{
    (void)state;
    for (size_t i = 0; i < nx_schema_table_count(); i++) {
        const nx_schema_table *t = nx_schema_table_at(i);
        if (strlen(t->description) < 20)
            fail_msg("table %s: description too short", t->name);
        for (size_t j = 0; j < t->n_fields; j++) {
            const nx_schema_field *f = &t->fields[j];
            /* A full phrase: several words, not the bare field name. */
            int words = 1;
            for (const char *p = f->description; *p; p++)
                words += *p == ' ';
            if (words < 4 || strcmp(f->description, f->name) == 0)
                fail_msg("%s.%s: description '%s' is not a full phrase", t->name, f->name, f->description);
        }
    }
}

static void test_column_types_and_kinds(void **state)
{
    (void)state;
    const nx_schema_table *ins = nx_schema_table_find("Instruction");
    assert_non_null(ins);
    assert_string_equal(ins->kind, "timeline");
    assert_false(ins->transient);
    assert_int_equal(nx_schema_field_find(ins, "start_ts")->column_type, NX_COL_INT64);
    assert_null(nx_schema_field_find(ins, "no_such_field"));
    assert_null(nx_schema_table_find("NoSuchTable"));
    const nx_schema_table *mbs = nx_schema_table_find("MemoryBandwidthSeries");
    assert_true(mbs->transient);
    assert_int_equal(nx_schema_field_find(mbs, "direction")->column_type, NX_COL_STRING);
    assert_int_equal(nx_schema_field_find(mbs, "points")->column_type, NX_COL_OBJECT_LIST);
    const nx_schema_table *bir = nx_schema_table_find("BirInstruction");
    assert_int_equal(nx_schema_field_find(bir, "element_count_per_interval")->column_type, NX_COL_LIST_INT64);
    const nx_schema_table *spe = nx_schema_table_find("SystemProfileEvents");
    assert_int_equal(nx_schema_field_find(spe, "flow_id")->column_type, NX_COL_LIST_STRING);
    /* Only the MemoryBandwidth* API tables are transient. */
    for (size_t i = 0; i < nx_schema_table_count(); i++) {
        const nx_schema_table *t = nx_schema_table_at(i);
        assert_int_equal(t->transient, strncmp(t->name, "MemoryBandwidth", 15) == 0);
    }
}

static void test_schema_fields_rows(void **state)
{
    (void)state;
    assert_int_equal(nx_schema_fields_row_count(), 656);
    nx_schema_fields_row r;
    assert_int_equal(nx_schema_fields_row_build(0, &r), 0);
    assert_string_equal(r.table_name, "ActiveTime");
    assert_string_equal(r.field_name, "start_ts");
    assert_string_equal(r.field_type, "integer");
    assert_string_equal(r.field_format, "int64");
    assert_string_equal(r.field_unit, "nanoseconds");
    assert_true(r.field_required);
    assert_true(isnan(r.field_minimum) && isnan(r.field_maximum));
    assert_null(r.field_enum_values);
    assert_int_equal(nx_schema_fields_row_build(656, &r), -1);

    size_t enums = 0;
    for (size_t i = 0; i < nx_schema_fields_row_count(); i++) {
        assert_int_equal(nx_schema_fields_row_build(i, &r), 0);
        if (strcmp(r.table_name, "DmaPacket") == 0 && strcmp(r.field_name, "queue_type") == 0) {
            assert_string_equal(r.field_enum_values,
                                "[\"instruction\",\"input\",\"output\",\"data\",\"software_dynamic\","
                                "\"hardware_dynamic\",\"unknown\"]");
        }
        if (r.field_enum_values)
            enums++;
        free(r.field_enum_values);
    }
    assert_int_equal(enums, 5); /* 4 enum-valued fields + MemoryBandwidthSeries.direction */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue_equals_reference),
        cmocka_unit_test(test_enums_equal_reference),
        cmocka_unit_test(test_every_description_is_ours_and_present),
        cmocka_unit_test(test_column_types_and_kinds),
        cmocka_unit_test(test_schema_fields_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
