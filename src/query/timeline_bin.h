/*
 * timeline_bin.h — the timeline answer (timeline.h) as columnar little-endian
 * arrays, for clients that read it into typed arrays instead of parsing
 * numbers out of JSON (the viewer: docs/api.md "Binary timeline").
 *
 * Layout (every multi-byte value little-endian):
 *   0   4 bytes  "NXTB"
 *   4   u32      H, the header's length in bytes
 *   8   H bytes  the header: UTF-8 JSON given by the caller (it describes the
 *                tables, their tracks and event counts, and the strings)
 *       zero bytes up to the next multiple of 8
 *   then, per table of the answer without an error, in order, n = its
 *   n_events arrays of n elements, each starting at a multiple of 8 (zero
 *   bytes after a 4-byte array whose length is odd):
 *       f64 start - window start (ns), f64 end - start (ns), f64 ordinal,
 *       u32 depth (nested tables only),
 *       per label in order: a string label i32 (string id, -1 null), an
 *       integer label f64 (NaN null).
 * Doubles because the client computes in doubles anyway: the values are the
 * ones JSON.parse would give for the JSON answer's numbers (exact up to 2^53).
 */
#ifndef NX_QUERY_TIMELINE_BIN_H
#define NX_QUERY_TIMELINE_BIN_H

#include <stddef.h>

#include "query/timeline.h"
#include "util/strbuf.h"

/* Appends tl with header[0..header_len) in the layout above to b (b's failed
 * state says when out of memory, or when the header is 4 GiB or more). */
void nx_timeline_bin(nx_strbuf *b, const nx_timeline *tl, const char *header, size_t header_len);

#endif
