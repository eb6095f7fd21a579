/*
 * tracks.h — the tracks of a profile: every track of every timeline table it
 * has (window.h's track rule), grouped and ordered as the viewer lists them,
 * with per track its event count and extent.
 *
 * Per track (nx_track_entry, track_entry.h):
 *   - count: the table's rows on that track; first_ts: their smallest start;
 *     last_ts: their largest end (point tables: the timestamp); rows with a
 *     null timing column belong to no track (window.h);
 *   - max_depth: for a table whose events nest (SystemProfileEvents), the
 *     deepest depth (profile/nesting.h, read by query/engine/nesting_values.h) of the
 *     track's events; 0 for other tables and for a track none of whose events
 *     has a depth;
 *   - SystemProfileEvents only (has_parts): the parts of the track's name
 *     (timeline_rules.h's rule, read back): a NeuronCore track "nc<N>" has nc;
 *     a thread track "<instance>/<pid>/<tid>" has instance, pid and tid (each
 *     null when its text is empty, or for pid/tid not a decimal integer), and
 *     a ranked one "rank<W>/<instance>/<pid>/<tid>" also worker (W, the
 *     worker_gid: its framework trace's rank); the other parts are null.
 *   - SystemProfileEvents framework threads whose trace named the process or
 *     thread (labelled): process_label and thread_label, the two parts of
 *     profile/thread_label.h's label, and the sort keys (track_labels.h).
 * Order: by group (profile/timeline_rules.h nx_timeline_group_at), then by
 * table in the order of nx_timeline_view_at; in SystemProfileEvents tracks
 * without a rank first, then by rank (worker), and within each labelled
 * tracks come first, by instance (natural order), process_sort, pid,
 * thread_sort, tid, as Perfetto orders threads by their sort indexes; then by
 * track name in natural
 * order (runs of ASCII digits compare by value, leading zeros ignored, the rest
 * bytewise: "q2" before "q10"; names equal so are ordered by length, then
 * bytewise, so the order is total).
 * Span: the smallest first_ts and the largest last_ts over the tracks with events
 * (have_span false when there are none).
 * Reading: from the table's timeline index (timeline_index.h: every track's
 * count and extent, and for a table whose events nest its depth tracks' deepest
 * depth) when it has a usable one, else by one window scan of its timing and
 * track columns (depths from nesting_values, computed from the table).
 * A table that cannot be read (a damaged file, out of memory while reading it)
 * does not fail the others: it has no tracks and is listed in `errors` with the
 * message naming its file, so a client can show the error in its place.
 * Memory: the tracks, plus SystemProfileEvents' nesting values when they are
 * computed (nesting_values.h).
 */
#ifndef NX_QUERY_TRACKS_H
#define NX_QUERY_TRACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "profile/timeline_rules.h"
#include "query/track_entry.h"

typedef struct nx_track_error {
    const char *table;                   /* the timeline table (static text) */
    char *error;                         /* malloc'd: why it could not be read */
} nx_track_error;

typedef struct nx_tracks {
    nx_track_entry *tracks;              /* in order (rules above) */
    size_t n;
    size_t group_first[NX_TIMELINE_GROUPS + 1]; /* group g: tracks [group_first[g], group_first[g + 1]) */
    bool have_span;
    int64_t first_ts, last_ts;
    nx_track_error errors[NX_TIMELINE_TABLES]; /* unreadable tables, in table order */
    size_t n_errors;
} nx_tracks;

/* The tracks of profile_dir. 0 (*out filled, unreadable tables in out->errors;
 * nx_tracks_free it) or -1 with err when out of memory recording an error or
 * ordering the tracks. Tables the profile lacks have no tracks. */
int nx_tracks_read(const char *profile_dir, nx_tracks *out, nx_error *err);
void nx_tracks_free(nx_tracks *t);

#endif
