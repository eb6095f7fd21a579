/*
 * nki_index.h — a device profile's NKI debug tables held in memory for lookups:
 * KernelInstructions by (pcore_idx, kernel_instruction_name) through
 * nki_source.h (the one join of Instruction with it), KernelStackFrames by
 * (pcore_idx, stack_frame_id), KernelIterationVariables by (pcore_idx,
 * iteration_variable_id) and AssemblyInstruction by compiler_pc. Built once
 * per profile (a read of the four lookup tables, which hold one row per
 * compiled instruction, frame, loop binding, never one per executed
 * instruction) and shared: looking an executed instruction up is then a hash
 * probe and binary searches, whatever the size of the Instruction table
 * (docs/benchmarks.md "nki").
 *
 * Rules:
 *   - a table the profile lacks is empty (the profile has no NKI data of that
 *     kind), not an error; KernelInstructions absent: nx_nki_index_get answers
 *     NX_PROFILE_TABLE_ABSENT;
 *   - KernelInstructions: nki_source.h's rules (a name twice on one core is
 *     an error; no rows is NX_PROFILE_TABLE_ABSENT too); a frame or binding id given twice on one core keeps its
 *     first row; a frame or binding row without an id or a pcore_idx joins
 *     nothing and is skipped;
 *   - AssemblyInstruction is joined on compiler_pc (unique in a program; in a
 *     profile of several programs a pc can repeat): of the rows of a pc, the
 *     one whose compiler_opcode is the Instruction's wins, else the lowest
 *     instruction_id;
 *   - null cells stay null (has_* false, or string NX_NKI_NO_STR);
 *   - chains (a frame's callers, a binding's enclosing loops) are followed at
 *     most as many steps as the table has rows, so a cycle in the data ends.
 * Cache: nx_nki_index_get keeps the last NX_NKI_CACHE indexes, keyed by the
 * profile directory and the identity (device, inode, size, mtime) of each of
 * the four tables' first file, so a re-processed profile is read again. Thread
 * safe; each index returned is held until nx_nki_index_release.
 */
#ifndef NX_QUERY_NKI_INDEX_H
#define NX_QUERY_NKI_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/nki_source.h"
#include "util/strmap.h"

#define NX_NKI_NO_STR SIZE_MAX
#define NX_NKI_CACHE 4

/* One KernelStackFrames row. Strings are offsets into the index's pool. */
typedef struct nx_nki_frame {
    int64_t id, pcore, parent, line;
    size_t function, file;
    size_t row;                   /* its row in the table: of two rows of one id, the first wins */
    bool has_parent, has_line;
} nx_nki_frame;

/* One KernelIterationVariables row. */
typedef struct nx_nki_iter {
    int64_t id, pcore, parent, value, line;
    size_t name, file;
    size_t row;                   /* as nx_nki_frame's */
    bool has_parent, has_value, has_line;
} nx_nki_iter;

/* One AssemblyInstruction row. */
typedef struct nx_nki_asm {
    int64_t pc, id;
    size_t opcode, operands;
} nx_nki_asm;

typedef struct nx_nki_index {
    nx_nki_source *kinst;         /* KernelInstructions (nki_source.h) */
    nx_nki_frame *frames;         /* sorted by pcore, id */
    size_t n_frames;
    nx_nki_iter *iters;           /* sorted by pcore, id */
    size_t n_iters;
    nx_nki_asm *assembly;         /* sorted by pc, then id (all rows) */
    size_t n_asm;
    char *pool;                   /* NUL-terminated strings */
    size_t pool_len, pool_cap;
    nx_strmap pool_map;           /* string -> offset, so repeated paths and names are kept once */
    size_t cap_frames, cap_iters, cap_asm; /* private: the arrays' capacities */
} nx_nki_index;

/* The index of profile_dir, from the cache or built: 0 (*out held; release it),
 * NX_PROFILE_TABLE_ABSENT (no KernelInstructions), or -1 with err naming the
 * table or file at fault. */
int nx_nki_index_get(const char *profile_dir, const nx_nki_index **out, nx_error *err);
void nx_nki_index_release(const nx_nki_index *idx);

/* The string at pool offset off, NULL for NX_NKI_NO_STR. */
const char *nx_nki_str(const nx_nki_index *idx, size_t off);
/* Lookups: NULL when absent. */
const nx_nki_frame *nx_nki_find_frame(const nx_nki_index *idx, int64_t pcore, int64_t id);
const nx_nki_iter *nx_nki_find_iter(const nx_nki_index *idx, int64_t pcore, int64_t id);
/* The assembly row of pc (rule above; opcode NULL: the lowest instruction_id). */
const nx_nki_asm *nx_nki_find_asm(const nx_nki_index *idx, int64_t pc, const char *opcode, size_t len);

#endif
