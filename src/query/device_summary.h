/*
 * device_summary.h — what `nxprof summary` and GET /api/profiles/<n>/summary say
 * about a device profile: the first row of its Summary table and the rows of
 * its OpcodeSummary with the most instruction time. (A system profile's
 * summary is system_summary.h.)
 *
 * Summary (nx_device_summary.summary): the table's first row (row0.h: every
 * scalar column in the table's order; the schema describes one row).
 * OpcodeSummary (opcodes): per row, one cell per field of the catalogue's
 * OpcodeSummary in schema order (engine, opcode, instruction_count,
 * instruction_time_ns, active_time_ns, active_time_percent: NX_OP_*); a
 * field the file lacks or holds as a non-scalar is a null cell of type
 * NXPQ_UNSUPPORTED; the cells carry no names. Rows are ordered by
 * instruction_time_ns descending (an integer; a null or non-integer time after
 * every time), then engine, then opcode (bytewise; a null or non-string cell as
 * ""), then file order; the first `top` rows are kept. opcode_rows: the
 * table's row count.
 * NKI coverage (nki): the share of Instruction's time that joins
 * KernelInstructions (nki_source.h).
 * Memory: every OpcodeSummary row while sorting (one per engine and opcode).
 */
#ifndef NX_QUERY_DEVICE_SUMMARY_H
#define NX_QUERY_DEVICE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/nki_source.h"
#include "query/row0.h"

/* OpcodeSummary's fields, in catalogue order (an opcode row's cell indices). */
enum {
    NX_OP_ENGINE,
    NX_OP_OPCODE,
    NX_OP_COUNT,         /* instruction_count */
    NX_OP_TIME,          /* instruction_time_ns */
    NX_OP_ACTIVE,        /* active_time_ns */
    NX_OP_ACTIVE_PCT,    /* active_time_percent */
    NX_OPCODE_FIELDS
};

typedef struct nx_device_summary {
    nx_row0 summary;                     /* Summary's first row (row0.h) */
    bool have_opcodes;                   /* the profile has an OpcodeSummary table */
    int64_t opcode_rows;
    nx_cell (*opcodes)[NX_OPCODE_FIELDS]; /* the first `top` rows in order */
    size_t n_opcodes;
    nx_nki_coverage nki;                 /* NKI coverage (nki_source.h); nki.present false without KernelInstructions */
} nx_device_summary;

/* Reads the summary of device profile `dir`, keeping `top` OpcodeSummary rows.
 * 0 (*out filled, a missing table flagged by summary.present / have_opcodes;
 * nx_device_summary_free it) or -1 with err naming the table or file. */
int nx_device_summary_read(const char *dir, size_t top, nx_device_summary *out, nx_error *err);
void nx_device_summary_free(nx_device_summary *s);

#endif
