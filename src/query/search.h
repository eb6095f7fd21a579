/*
 * search.h — find the next or previous event whose field matches a text, over
 * every event of some timeline tables of a profile (not only the drawn ones),
 * with the number of matches and the rank of the one found among them.
 *
 * Events: the rows window.h keeps for the window [INT64_MIN, INT64_MAX] (a
 * row with a null timing column is no event), each with its track.
 *
 * Match, per table, on o->field:
 *   "track"                 the event's track name (window.h's rule; no table
 *                           has a column named so);
 *   a STRING column         contains: q is a substring of the value, ASCII
 *                           letters compared without case, every other byte
 *                           exactly (an empty q matches every value); exact:
 *                           the value equals q byte for byte;
 *   an INT32/INT64 column   the value equals q read as a decimal int64
 *                           (optional '-', digits; contains and exact alike);
 *                           a q that is no such number matches nothing;
 *   null values never match. A table the profile lacks, or whose first file
 *   has no column o->field or holds it in another type (float, boolean,
 *   list), is skipped: nothing of it matches, and it is listed in
 *   nx_search_result.skipped.
 *
 * Order: the matches of all listed tables in (start, table, ordinal) order:
 * start time, then the table's position in o->tables, then its ordinal
 * (timeline_rules.h nx_row_ordinal). The position P is (from, from_table,
 * from_ord) when o->have_from_ord, else (from, before every table). Then
 *   NX_SEARCH_NEXT  the first match after P (without from_ord: the first
 *                   match starting at or after `from`);
 *   NX_SEARCH_PREV  the last match before P (without from_ord: the last
 *                   match starting before `from`);
 * none when there is no such match (no wrap around). position = 1 + the
 * number of matches before the one found, total = every match.
 *
 * Cost: one pass over each table's timing, track and field columns, in
 * dictionary form where the file has it: a string or integer value is
 * compared once per dictionary entry, and a batch whose dictionary has no
 * matching entry is passed over without looking at its rows; an integer
 * field is read only in the pages whose statistics admit q (the others hold
 * no match, so the total stays exact). The event found
 * is read again (its value, for `label`) through a one-instant window at its
 * start, so only the pages that can hold it are read. Memory: one batch per
 * table and a flag per dictionary entry or track; nothing per match.
 *
 * Threads: each table's rows are shared out in consecutive spans
 * (query/engine/row_split.h), one thread per span, each with its own table handle,
 * batch and flags. A span's counts (matches, before P, at P) add up and its
 * nearest match competes with the others' in the order above, so the answer
 * is the same whatever the number of threads.
 */
#ifndef NX_QUERY_SEARCH_H
#define NX_QUERY_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/timeline_rules.h"

typedef enum nx_search_match { NX_SEARCH_CONTAINS, NX_SEARCH_EXACT } nx_search_match;
typedef enum nx_search_dir { NX_SEARCH_NEXT, NX_SEARCH_PREV } nx_search_dir;

typedef struct nx_search_options {
    const char *const *tables;   /* timeline tables, no repeats, at most NX_TIMELINE_TABLES */
    size_t n_tables;
    const char *field;           /* a column name, or "track" */
    const char *q;               /* q_len bytes */
    size_t q_len;
    nx_search_match match;
    nx_search_dir dir;
    int64_t from;
    bool have_from_ord;          /* the position is (from, from_table, from_ord) */
    size_t from_table;           /* index into tables */
    int64_t from_ord;
    int threads;                 /* threads sharing each table (query/engine/row_split.h); 0: min(cores, row groups) */
} nx_search_options;

/* A value of a field (or a track name): null, an integer or text. */
typedef struct nx_search_value {
    bool null, is_int;
    int64_t i;
    char *s;                     /* malloc'd, NUL-terminated, len bytes */
    size_t len;
} nx_search_value;

typedef struct nx_search_result {
    uint64_t total;              /* matches in all listed tables */
    bool found;                  /* the fields below describe the event found */
    size_t table;                /* its index into o->tables */
    int64_t ordinal, start, end; /* end == start for point events */
    char *track;                 /* malloc'd, NUL-terminated */
    size_t track_len;
    nx_search_value label;       /* its value of the field */
    uint64_t position;           /* 1-based rank among all matches */
    size_t skipped[NX_TIMELINE_TABLES];   /* indices into o->tables of skipped tables, in order */
    size_t n_skipped;
} nx_search_result;

/* Runs the search over profile_dir. 0 (*out filled; nx_search_free it), or -1
 * with err naming the table or file (unreadable, not a timeline table, out of
 * memory). */
int nx_search_run(const char *profile_dir, const nx_search_options *o, nx_search_result *out, nx_error *err);
void nx_search_free(nx_search_result *r);

/* Whether hay[0..len) contains needle[0..nlen) with ASCII letters compared
 * without case (the contains rule above). Exposed for its tests. */
bool nx_search_contains(const char *hay, size_t len, const char *needle, size_t nlen);

#endif
