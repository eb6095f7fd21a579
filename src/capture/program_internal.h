/*
 * program_internal.h — what the program file's reader and writer share: the
 * byte offsets inside each record kind and the semantic validation both run
 * (the writer so that it never produces a file the reader rejects).
 */
#ifndef NX_PROGRAM_INTERNAL_H
#define NX_PROGRAM_INTERNAL_H

#include "capture/program_file.h"
#include "util/error.h"

/* Offsets of the blocks inside records (see docs/capture-format.md). */
enum {
    PROG_HDR_STRINGS = 0, PROG_HDR_UUID = 24, PROG_HDR_INTS = 40,
    PROG_HW_U64S = 0, PROG_HW_U32S = 80,
    PROG_INSTR_STRINGS = 16, PROG_INSTR_INTS = 88,
    PROG_DESC_STRINGS = 32
};

/* Where a section lies in the file, for error messages; the writer passes NULL
 * locations and messages then name the record by its index. */
typedef struct prog_loc {
    uint64_t offset[NX_SEC_LAST + 1];
    uint32_t record_size[NX_SEC_LAST + 1];
} prog_loc;

/* "offset O: SECTION record I: <msg>" (reader, loc given) or "SECTION record I:
 * <msg>" (writer, loc NULL); returns -1. */
int nx_prog_fail_rec(nx_error *err, const char *path, const prog_loc *loc, int sec, size_t index,
                     unsigned field_off, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* The instruction (engine, pc) of a program whose instructions are sorted, or
 * NULL; a binary search (engine_first may not be filled yet). */
const nx_prog_instr *nx_prog_lookup_instr(const nx_program *p, unsigned engine, uint32_t pc);

/* The rules of the NKI sections and ASSEMBLY (program_validate_nki.c). */
int nx_prog_validate_nki(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err);

/* Checks every rule that does not depend on the byte encoding: ranges, sort
 * order, cross references. */
int nx_prog_validate(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err);

/* Fills engine_first/engine_count and instr_pcs from the sorted instruction
 * array; -1 when out of memory. */
int nx_prog_index_engines(nx_program *p);

#endif
