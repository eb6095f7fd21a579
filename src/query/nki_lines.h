/*
 * nki_lines.h — the "source" table of a device profile: where the instruction
 * time goes per NKI kernel source line (file_path, line_number), the answer to
 * "which kernel lines take the time".
 *
 * Built on `top` (top.h) and the join of nki_source.h: top groups Instruction
 * by (kernel_instruction_name, pcore_idx) with its count and summed
 * duration_ns, each group is joined to its KernelInstructions row, and the
 * lines are grouped again with group_by.h:
 *   count     the Instruction rows whose KernelInstructions row names this line;
 *   self_ns   their summed duration_ns (exclusive time: instructions the line
 *             itself generated);
 *   total_ns  self_ns plus the duration_ns of the instructions generated inside
 *             functions called from this line (the line is the file_path,
 *             line_number of a KernelStackFrames row on the instruction's stack:
 *             a frame's call site; nki_index.h's chains); a line counts once per
 *             instruction even when it appears on its stack twice (recursion);
 *   share     100 * ns / instruction_ns (nx_nki_lines_share).
 * In SQL, count and self are docs/processing.md's join:
 *   SELECT k.file_path, k.line_number, count(*), sum(i.duration_ns)
 *   FROM Instruction i JOIN KernelInstructions k
 *     ON i.kernel_instruction_name = k.kernel_instruction_name AND i.pcore_idx = k.pcore_idx
 *   GROUP BY 1, 2
 * A null file or line is its own group value. Order: self_ns descending, ties
 * by file then line ascending, nulls last (group_by.h's order).
 * Totals: instructions and instruction_ns over every Instruction row (null
 * durations add nothing), attributed and attributed_ns over the joined ones.
 * Memory: top's groups (one per kernel instruction and core, plus one per
 * other name) and the lines.
 */
#ifndef NX_QUERY_NKI_LINES_H
#define NX_QUERY_NKI_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/engine/group_by.h"

typedef struct nx_nki_lines {
    nx_group_by *g;    /* keys file_path, line_number; sums total_ns, self_ns, count */
    int64_t instructions, instruction_ns, attributed, attributed_ns;
} nx_nki_lines;

typedef struct nx_nki_line_time {
    const char *file;  /* NULL when null; not NUL-terminated: file_len bytes */
    size_t file_len;
    int64_t line;
    bool has_line;
    int64_t count, self_ns, total_ns;
} nx_nki_line_time;

/* The source table of profile_dir: 0 (*out filled; nx_nki_lines_free it),
 * NX_PROFILE_TABLE_ABSENT (no Instruction, or no KernelInstructions rows), or
 * -1 with err naming the table or file. */
int nx_nki_lines_run(const char *profile_dir, nx_nki_lines *out, nx_error *err);
size_t nx_nki_lines_count(const nx_nki_lines *s);
/* Line i (0 .. count-1) in the order above. */
void nx_nki_lines_at(const nx_nki_lines *s, size_t i, nx_nki_line_time *out);
/* 100 * ns / instruction_ns, 0 when there is no instruction time. */
double nx_nki_lines_share(const nx_nki_lines *s, int64_t ns);
void nx_nki_lines_free(nx_nki_lines *s);

#endif
