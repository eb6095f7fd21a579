/*
 * nki_context.h — an executed instruction's NKI context: where in the kernel
 * source it came from, through which calls, in which loop iteration, and the
 * compiler's assembly line for it.
 *
 * Joins (the index of nki_index.h, so a lookup costs the one Instruction row
 * plus a hash probe and binary searches):
 *   (pcore_idx, kernel_instruction_name) of Instruction and KernelInstructions
 *       (nki_source.h, docs/processing.md) -> file_path, line_number (the
 *       source location); every join below is on that pcore_idx as well;
 *   KernelInstructions.stack_frame_id = KernelStackFrames.stack_frame_id, then
 *       parent_stack_frame_id upwards -> the call stack, given outermost first
 *       (frames[n_frames - 1] is the innermost, whose function is the
 *       location's function);
 *   KernelInstructions.iteration_variables_id =
 *       KernelIterationVariables.iteration_variable_id, then
 *       parent_iteration_variable_id upwards -> the loop iteration, outer loop
 *       first;
 *   Instruction.compiler_pc = AssemblyInstruction.compiler_pc -> the assembly
 *       line: of the rows of that pc (unique in a program, it can repeat across
 *       programs), the one whose compiler_opcode is the Instruction's, else
 *       the lowest instruction_id.
 * A chain stops at an id the table lacks, or after as many steps as the table
 * has rows (a cycle). An instruction without a kernel_instruction_name or a
 * pcore_idx, or whose pair KernelInstructions lacks, has no source
 * (has_source false); its assembly line is still looked up.
 */
#ifndef NX_QUERY_NKI_CONTEXT_H
#define NX_QUERY_NKI_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/event.h"
#include "query/nki_index.h"

typedef struct nx_nki_context {
    const nx_nki_index *idx;           /* held; strings below point into it */
    char *kernel_instruction_name;     /* malloc'd, NULL when the instruction has none */
    bool has_source;
    const nx_nki_line *kinst;          /* the KernelInstructions row (has_source) */
    int64_t pcore;                     /* the instruction's pcore_idx (has_source) */
    const char *file, *function;       /* NULL when null */
    int64_t line;
    bool has_line;
    const nx_nki_frame **frames;       /* outermost first */
    size_t n_frames;
    const nx_nki_iter **iters;         /* outer loop first */
    size_t n_iters;
    const nx_nki_asm *assembly;        /* NULL when none */
} nx_nki_context;

/* The context of Instruction row `ordinal` (event.h's ordinal; start_hint as
 * there) of profile_dir: 0 (*out filled; nx_nki_context_free it),
 * NX_PROFILE_TABLE_ABSENT (no Instruction or no KernelInstructions table),
 * NX_EVENT_NONE (no such row), or -1 with err naming the table or file. */
int nx_nki_context_read(const char *profile_dir, int64_t ordinal, const int64_t *start_hint, nx_nki_context *out,
                        nx_error *err);
/* The context of an Instruction row already read (event.h, with at least the
 * fields kernel_instruction_name, compiler_pc, compiler_opcode and pcore_idx;
 * /event reads every field): the same answers, without reading the row again. */
int nx_nki_context_of(const char *profile_dir, const nx_event *ev, nx_nki_context *out, nx_error *err);
void nx_nki_context_free(nx_nki_context *c);

#endif
