/*
 * timeline.h — the viewer's timeline: for a profile, a list of timeline tables,
 * a window [start, end] (inclusive ns) and a width in pixels, per table the
 * events to draw, grouped by track, with their labels. The server's
 * /api/profiles/<name>/timeline is this answer in JSON (docs/api.md).
 *
 * Per table:
 *   - the kept events are sampled_pass.h's: per (track, pixel bucket) the
 *     longest, ties by earliest start, then earliest row; for a table whose
 *     events nest (timeline_rules.h nx_timeline_info.nested: SystemProfileEvents)
 *     per (track, depth, bucket), depth by profile/nesting.h's rule, and each
 *     event carries its depth. The timeline index answers when it matches the
 *     table, else the scan, with the same result (NXPROF_NO_TIMELINE_INDEX=1
 *     forces the scan);
 *   - rows_in_window: the events of the window (window.h's rule), kept or not;
 *   - the label fields are nx_timeline_labels(table), each a string or an
 *     integer by the catalogue (framework_name, derived: a string). Values come
 *     from the timeline index when it answered and holds every label, else from
 *     a second pass over the window reading the kept rows' label columns; a
 *     column the table's files lack, or hold in another kind (not a string for a
 *     string label, not an integer for an integer one), reads as null.
 *     Instruction's framework_name is the framework_name of the first
 *     FrameworkInstruction row (file order) whose raw_framework_id equals the
 *     instruction's (null when there is none, or that table is absent or
 *     unreadable);
 *   - tracks in order of first appearance in the window in file order (for a
 *     nested table a track is a thread's or core's whole call stack, every depth
 *     together); a track's events in ordinal (start-time) order.
 * String label values are ids into the answer's one string table: each distinct
 * string once, ids dense from 0 in order of first use, reading the answer in
 * order (tables as asked, tracks, events, labels).
 *
 * A table that cannot be read (a damaged file, a nested table whose rows are
 * not in start order per track, out of memory) does not fail the others: its
 * entry carries the error message and nothing else. A table the profile lacks
 * has no tracks (present false).
 *
 * Memory: per table the sampler's slots (width per track, or per track and
 * sampling level: at most NX_NESTING_LEVELS per track) within the query
 * memory budget, and the kept events, never O(events in the window).
 */
#ifndef NX_QUERY_TIMELINE_H
#define NX_QUERY_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/timeline_rules.h"

typedef struct nx_timeline_track {
    char *name;                      /* the track name (window.h), NUL-terminated */
    size_t name_len;
    size_t first, n;                 /* its events: [first, first + n) of the table's event arrays */
} nx_timeline_track;

typedef struct nx_timeline_table {
    const char *table;               /* the name asked for (the caller's string) */
    char *error;                     /* NULL, or why the table could not be read (it then has no
                                        events and no tracks, rows_in_window 0, present false) */
    bool present;                    /* false: the profile has no such table, or it failed (no events) */
    bool nested;                     /* its events nest: depth is set */
    uint64_t rows_in_window;
    size_t n_labels;
    const char *const *label_names;  /* nx_timeline_labels(table), n_labels of them */
    bool label_is_string[NX_TLX_MAX_LABELS];
    size_t n_events;                 /* the kept events, grouped by track */
    int64_t *start, *end, *ordinal;  /* ns; end == start for point events; ordinal: timeline_rules.h nx_row_ordinal */
    uint32_t *depth;                 /* nested tables, else NULL */
    int64_t *label;                  /* n_events x n_labels, by event: an integer label's value, or a
                                        string label's id into the answer's strings */
    uint8_t *label_set;              /* n_events x n_labels: 1 when the value is not null */
    size_t n_tracks;
    nx_timeline_track *tracks;
} nx_timeline_table;

typedef struct nx_timeline {
    int64_t start, end;
    uint32_t width;
    size_t n_tables;
    nx_timeline_table *tables;       /* in the order asked */
    size_t n_strings;
    const char **strings;            /* string ids' bytes (not NUL-terminated) */
    size_t *string_len;
    char *string_data;
} nx_timeline;

/* The answer for tables[0..n_tables) (timeline tables, each once) of
 * profile_dir over [start, end] at `width` (start <= end, width >= 1). 0 and
 * *out (release with nx_timeline_free) even when some tables failed (their
 * error says why); NX_QUERY_OVER_BUDGET (query/engine/budget.h) with err naming the
 * table when sampling one would exceed the query memory budget (tables are
 * sampled one after another, each within the budget); -1 with err on bad
 * arguments or out of memory building the answer's string table. */
int nx_timeline_query(const char *profile_dir, const char *const *tables, size_t n_tables, int64_t start, int64_t end,
                      uint32_t width, nx_timeline *out, nx_error *err);
void nx_timeline_free(nx_timeline *t);

#endif
