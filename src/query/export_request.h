/*
 * export_request.h — one export request, parsed and checked once for every
 * output format and every front end: `nxprof export-csv`, `nxprof
 * export-perfetto` and the server's /export/<Table>.csv build an
 * nx_export_request with these functions, so their defaults, limits, default
 * tables and time forms are the same (docs/query.md "Export requests").
 *
 * Rules:
 *   - Window [start, end], inclusive ns. A time is a whole number of ns or a
 *     decimal number with a unit ns, us, ms or s ("1500", "1.5us", "2ms",
 *     "0.25s") whose value is a whole number of ns within int64; a leading '+'
 *     counts from the profile's first timestamp (Metadata, profile_table.h
 *     nx_profile_span), resolved by nx_export_request_resolve. end < start is
 *     an error (checked again once +T times are resolved).
 *   - Sampling: width 1..NX_EXPORT_MAX_WIDTH (2^20) pixels (default
 *     NX_EXPORT_DEFAULT_WIDTH; the sampler's buckets are taken from the query
 *     memory budget, query/engine/budget.h, so a wide one is refused, not a risk),
 *     or none (every row); a width given together
 *     with "no sampling" is an error, and a window of the whole int64 range
 *     cannot be sampled.
 *   - max_rows 1..INT64_MAX per table (default NX_EXPORT_DEFAULT_MAX_ROWS);
 *     past it an export is truncated and says so.
 *   - Tables: a comma-separated list of timeline tables (timeline_rules.h),
 *     none twice, at most NX_TIMELINE_TABLES; without one, the default tables
 *     (Instruction, DmaPacketAggregated, DmaPacket, CcInstruction,
 *     SemaphoreUpdate, SystemProfileEvents: those a profile has).
 * Errors: -1 with `msg` (NX_EXPORT_MSG bytes) naming the option as the front
 * end spells it (nx_export_names: "--width" on the command line, "width" in a
 * URL) and its value; the front end adds its own prefix (a usage error, an
 * HTTP 400).
 */
#ifndef NX_QUERY_EXPORT_REQUEST_H
#define NX_QUERY_EXPORT_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/timeline_rules.h"

#define NX_EXPORT_DEFAULT_WIDTH 1920
#define NX_EXPORT_MAX_WIDTH 1048576
#define NX_EXPORT_DEFAULT_MAX_ROWS 1000000
#define NX_EXPORT_MSG 256

/* How a front end names the request's options in messages. */
typedef struct nx_export_names {
    const char *start, *end, *width, *no_sample, *max_rows;
} nx_export_names;
extern const nx_export_names nx_export_cli_names;   /* --start, --end, --width, --no-sample, --max-rows */

typedef struct nx_export_request {
    const nx_export_names *names;
    int64_t start, end;
    bool have_start, have_end;
    bool start_rel, end_rel;         /* +T: from the profile's first timestamp */
    uint32_t width;                  /* 0: every row */
    bool width_given, no_sample;
    uint64_t max_rows;
    const char *tables[NX_TIMELINE_TABLES];
    size_t n_tables;
    bool named;                      /* the tables were named (else the defaults) */
    char tables_buf[512];
} nx_export_request;

/* The defaults (names: how messages spell the options): no window yet, width NX_EXPORT_DEFAULT_WIDTH, max_rows
 * NX_EXPORT_DEFAULT_MAX_ROWS, the default tables. */
void nx_export_request_init(nx_export_request *r, const nx_export_names *names);
/* "123", "1.5us", "+2ms" -> ns and whether relative. 0 or -1 (malformed, not a
 * whole number of ns, out of range). */
int nx_export_parse_time(const char *s, int64_t *out, bool *relative);
/* --start / --end as text (the forms above). 0 or -1 with msg. */
int nx_export_request_set_time(nx_export_request *r, bool end, const char *text, char *msg);
/* A whole-ns start or end. */
void nx_export_request_set_ns(nx_export_request *r, bool end, int64_t ns);
/* The sampling width 1..NX_EXPORT_MAX_WIDTH. 0 or -1. */
int nx_export_request_set_width(nx_export_request *r, int64_t width, char *msg);
/* Every row, no sampling. */
void nx_export_request_set_no_sample(nx_export_request *r);
/* max_rows >= 1. 0 or -1. */
int nx_export_request_set_max_rows(nx_export_request *r, int64_t max_rows, char *msg);
/* The comma-separated table list. 0 or -1. */
int nx_export_request_set_tables(nx_export_request *r, const char *list, char *msg);
/* After the options: both ends given, end >= start (when both are of one
 * kind), width and no sampling not both, the window samplable. 0 or -1. */
int nx_export_request_check(nx_export_request *r, char *msg);
/* Resolves +T times against profile_dir's first timestamp and checks the
 * window again. 0, -1 with msg (the profile has no span to count from), or -2
 * with msg (a time out of range, end before start: the request's fault). */
int nx_export_request_resolve(nx_export_request *r, const char *profile_dir, char *msg);

#endif
