/*
 * nki_source.h — the "source" table of a device profile: where the
 * instruction time goes per NKI kernel source line (file_path, line_number),
 * the answer to "which kernel lines take the time".
 *
 * Computed from Instruction joined to KernelInstructions on
 * kernel_instruction_name (nki_index.h), grouped with group_by.h:
 *   count     the Instruction rows whose KernelInstructions row names this line;
 *   self_ns   their summed duration_ns (exclusive time: instructions the line
 *             itself generated);
 *   total_ns  self_ns plus the duration_ns of the instructions generated inside
 *             functions called from this line (the line is the file_path,
 *             line_number of a KernelStackFrames row on the instruction's
 *             stack: a frame's call site); a line counts once per instruction
 *             even when it appears on its stack twice (recursion);
 *   share     100 * self_ns / instruction_ns (nx_nki_source_share).
 * In SQL, self and count are
 *   SELECT k.file_path, k.line_number, count(*), sum(i.duration_ns)
 *   FROM Instruction i JOIN KernelInstructions k USING (kernel_instruction_name)
 *   GROUP BY 1, 2
 * (KernelInstructions' first row of a name, nki_index.h). A null file or line
 * is its own group value. Order: self_ns descending, ties by file then line
 * ascending, nulls last (group_by.h's order).
 * Totals: instructions and instruction_ns over every Instruction row (null
 * durations add nothing), attributed and attributed_ns over the joined ones.
 * Cost: one scan of two Instruction columns (kernel_instruction_name in
 * dictionary form, looked up once per dictionary entry), memory the groups and
 * one counter pair per KernelInstructions row.
 */
#ifndef NX_QUERY_NKI_SOURCE_H
#define NX_QUERY_NKI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/group_by.h"

typedef struct nx_nki_source {
    nx_group_by *g;    /* keys file_path, line_number; sums total_ns, self_ns, count */
    int64_t instructions, instruction_ns, attributed, attributed_ns;
} nx_nki_source;

typedef struct nx_nki_source_line {
    const char *file;  /* NULL when null; not NUL-terminated: file_len bytes */
    size_t file_len;
    int64_t line;
    bool has_line;
    int64_t count, self_ns, total_ns;
} nx_nki_source_line;

/* The source table of profile_dir: 0 (*out filled; nx_nki_source_free it),
 * NX_PROFILE_TABLE_ABSENT (no Instruction or no KernelInstructions), or -1
 * with err naming the table or file. */
int nx_nki_source_run(const char *profile_dir, nx_nki_source *out, nxpq_error *err);
size_t nx_nki_source_count(const nx_nki_source *s);
/* Line i (0 .. count-1) in the order above. */
void nx_nki_source_line_at(const nx_nki_source *s, size_t i, nx_nki_source_line *out);
/* 100 * ns / instruction_ns, 0 when there is no instruction time. */
double nx_nki_source_share(const nx_nki_source *s, int64_t ns);
void nx_nki_source_free(nx_nki_source *s);

#endif
