/*
 * nki_source.h — the NKI source line of a device profile's instructions: the
 * profile's KernelInstructions read into a map from (pcore_idx,
 * kernel_instruction_name) to the row's file_path and line_number, the join
 * docs/processing.md ("NKI source attribution and assembly") defines between
 * Instruction and KernelInstructions. `top`'s joined keys file_path and
 * line_number on Instruction, and the summary's NKI coverage, look rows up
 * here rather than copying the data into Instruction.
 *
 * Memory: the KernelInstructions rows (one per kernel instruction and core; the
 * program's size, not the trace's).
 */
#ifndef NX_QUERY_NKI_SOURCE_H
#define NX_QUERY_NKI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

typedef struct nx_nki_source nx_nki_source;

/* One KernelInstructions row: file NULL and has_line false where null. frame
 * and iteration: its stack_frame_id and iteration_variables_id (the NKI
 * context's chains, nki_context.h), has_* false where null or where the file
 * lacks the column (they are optional to the join). row: its index among the
 * rows read (0 .. nx_nki_source_count - 1), for per-row tallies. */
typedef struct nx_nki_line {
    const char *file;                /* NUL-terminated */
    size_t file_len;
    int64_t line, frame, iteration;
    bool has_line, has_frame, has_iteration;
    size_t row;
} nx_nki_line;

/* Reads profile_dir's KernelInstructions. 0 with *out, which is an empty map
 * when the profile has no such table (no instruction came from an NKI kernel);
 * -1 with err (the file is damaged, or lacks a column the join needs, or two
 * rows share a core and name). */
int nx_nki_source_open(const char *profile_dir, nx_nki_source **out, nx_error *err);
/* The row of (pcore, name[0..len)), or NULL: the instruction came from no
 * kernel (or its core or name is null: pass has_pcore false / name NULL). */
const nx_nki_line *nx_nki_source_find(const nx_nki_source *s, bool has_pcore, int64_t pcore, const char *name,
                                      size_t len);
/* Rows read. */
size_t nx_nki_source_count(const nx_nki_source *s);
void nx_nki_source_close(nx_nki_source *s);

/* NKI coverage of a device profile: the share of instruction time that came
 * from NKI kernels, i.e. of Instruction's duration_ns summed over every row,
 * the part whose row joins a KernelInstructions row. present: the profile has
 * KernelInstructions (else nothing is attributed and the share is unknown, not
 * 0); instructions: Instruction's rows with a duration; kernel_instructions
 * those that join. */
typedef struct nx_nki_coverage {
    bool present;
    int64_t instructions, kernel_instructions;
    int64_t total_ns, kernel_ns;
} nx_nki_coverage;

/* 0 with *out (zeros and present false without KernelInstructions, or
 * without Instruction), -1 with err naming the table or file. */
int nx_nki_coverage_read(const char *profile_dir, nx_nki_coverage *out, nx_error *err);
/* 100 * kernel_ns / total_ns; 0 when total_ns is 0. */
double nx_nki_coverage_percent(const nx_nki_coverage *c);

#endif
