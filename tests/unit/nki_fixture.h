/* nki_fixture.h — a small device profile with NKI debug tables, for the nki_* unit tests.
 *
 * The four NKI tables are written with the catalogue-driven table writer
 * (profile/table_writer.h), cell by cell from text (NULL: null), every row on
 * pcore_idx 0 unless said otherwise:
 *   KernelStackFrames: 1 kern.flash_fwd called at attn.py:10 (outermost);
 *     2 kern.softmax called at attn.py:40, parent 1; 3 and 4 call each other
 *     (a cycle) at attn.py:70;
 *   KernelIterationVariables: 100 i=0 (attn.py:20), 101 j=3 inside 100 (attn.py:22);
 *   KernelInstructions: inst.1:0 attn.py:42 frame 1 iter 101; inst.1:1 attn.py:60
 *     frame 2 iter 100; inst.1:2 attn.py:42 frame 1; inst.cyc attn.py:71 frame 3;
 *     inst.1:0 on pcore 1 (attn.py:99: joins only pcore 1's instructions, none);
 *   AssemblyInstruction: pc 7 ids 3 (MATMUL) and 2 (MATMUL_T), pc 8 id 5.
 * Instruction (only the columns the answers read, plus times), all on pcore 0: NKI_ROWS rows,
 * row r named NKI_NAMES[r % 6] (an unknown name and a null among them),
 * duration r % 7 + 1, compiler_pc 7, 8 or null by r % 3, compiler_opcode MATMUL when
 * r % 4 == 0, else null. */
#ifndef NX_TEST_NKI_FIXTURE_H
#define NX_TEST_NKI_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/table_writer.h"
#include "system_fixture.h"
#include "table_fixture.h"

#define NKI_ROWS 5000
static const char *const NKI_NAMES[6] = {"inst.1:0", "inst.1:1", "inst.1:2", "inst.9:9", NULL, "inst.cyc"};

/* Writes catalogue table `table` into dir: cells[rows][n] for the named fields. */
static inline void nki_write(const char *dir, const char *table, const char *const *fields, size_t n,
                             const char *const *cells, size_t rows)
{
    nx_error err = {0};
    nx_table_writer *t = nx_table_writer_open(dir, table, 0, NULL, &err);
    assert_non_null(t);
    const nx_schema_table *st = nx_table_writer_schema(t);
    for (size_t r = 0; r < rows; r++) {
        nxpq_writer *w = nx_table_begin_row(t, &err);
        assert_non_null(w);
        for (size_t f = 0; f < st->n_fields; f++) {
            const char *v = NULL;
            for (size_t i = 0; i < n; i++)
                if (strcmp(fields[i], st->fields[f].name) == 0)
                    v = cells[r * n + i];
            int rc;
            if (!v)
                rc = nxpq_put_null(w, f);
            else if (strcmp(st->fields[f].type, "string") == 0)
                rc = nxpq_put_string(w, f, v, strlen(v));
            else
                rc = nxpq_put_int64(w, f, strtoll(v, NULL, 10));
            assert_int_equal(rc, 0);
        }
        assert_int_equal(nx_table_end_row(t, &err), 0);
    }
    assert_int_equal(nx_table_writer_close(t, &err), 0);
}

static inline void nki_write_tables(const char *dir)
{
    static const char *const SF[] = {"stack_frame_id", "fully_qualified_function_name", "parent_stack_frame_id",
                                     "file_path", "line_number", "pcore_idx"};
    static const char *const SFV[] = {"1", "kern.flash_fwd", NULL, "attn.py", "10", "0",
                                      "2", "kern.softmax",   "1",  "attn.py", "40", "0",
                                      "3", "kern.rec_a",     "4",  "attn.py", "70", "0",
                                      "4", "kern.rec_b",     "3",  "attn.py", "70", "0",
                                      "1", "kern.other",     NULL, "other.py", "1", "1"};
    nki_write(dir, "KernelStackFrames", SF, 6, SFV, 5);
    static const char *const IV[] = {"iteration_variable_id", "variable_name", "variable_value",
                                     "parent_iteration_variable_id", "file_path", "line_number", "pcore_idx"};
    static const char *const IVV[] = {"100", "i", "0", NULL, "attn.py", "20", "0",
                                      "101", "j", "3", "100", "attn.py", "22", "0"};
    nki_write(dir, "KernelIterationVariables", IV, 7, IVV, 2);
    static const char *const KI[] = {"kernel_instruction_name", "file_path", "line_number", "stack_frame_id",
                                     "stack_frame_depth", "iteration_variables_id", "iteration_variable_depth",
                                     "pcore_idx"};
    static const char *const KIV[] = {"inst.1:0", "attn.py", "42", "1", "1", "101", "2", "0",
                                      "inst.1:1", "attn.py", "60", "2", "2", "100", "1", "0",
                                      "inst.1:2", "attn.py", "42", "1", "1", NULL,  NULL, "0",
                                      "inst.cyc", "attn.py", "71", "3", "1", NULL,  NULL, "0",
                                      "inst.1:0", "attn.py", "99", "1", "1", NULL,  NULL, "1"};
    nki_write(dir, "KernelInstructions", KI, 8, KIV, 5);
    static const char *const AI[] = {"instruction_id", "compiler_opcode", "compiler_operands", "compiler_pc"};
    static const char *const AIV[] = {"3", "MATMUL", "a=1", "7", "2", "MATMUL_T", "a=2 b=1", "7",
                                      "5", "ACTIVATE", "fn=exp", "8"};
    nki_write(dir, "AssemblyInstruction", AI, 4, AIV, 3);
}

static inline int64_t nki_dur(size_t r)
{
    return (int64_t)(r % 7 + 1);
}

static inline void nki_write_instructions(const char *dir)
{
    static const fx_col COLS[] = {{"start_ts", NXPQ_INT64},  {"end_ts", NXPQ_INT64},
                                  {"duration_ns", NXPQ_INT64}, {"engine", NXPQ_STRING},
                                  {"kernel_instruction_name", NXPQ_STRING}, {"compiler_pc", NXPQ_INT64},
                                  {"compiler_opcode", NXPQ_STRING}, {"pcore_idx", NXPQ_INT64}};
    char **cells = calloc(NKI_ROWS * 8, sizeof *cells);
    assert_non_null(cells);
    for (size_t r = 0; r < NKI_ROWS; r++) {
        char b[32];
        snprintf(b, sizeof b, "%zu", 10 * r);
        cells[r * 8] = strdup(b);
        snprintf(b, sizeof b, "%lld", (long long)(10 * (int64_t)r + nki_dur(r)));
        cells[r * 8 + 1] = strdup(b);
        snprintf(b, sizeof b, "%lld", (long long)nki_dur(r));
        cells[r * 8 + 2] = strdup(b);
        cells[r * 8 + 3] = strdup("pe");
        cells[r * 8 + 4] = NKI_NAMES[r % 6] ? strdup(NKI_NAMES[r % 6]) : NULL;
        cells[r * 8 + 5] = r % 3 == 2 ? NULL : strdup(r % 3 ? "8" : "7");
        cells[r * 8 + 6] = r % 4 ? NULL : strdup("MATMUL");
        cells[r * 8 + 7] = strdup("0");
    }
    fx_write(dir, "Instruction.parquet", COLS, 8, (const char *const *)cells, NKI_ROWS);
    for (size_t i = 0; i < NKI_ROWS * 8; i++)
        free(cells[i]);
    free(cells);
}

#endif
