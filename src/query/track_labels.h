/*
 * track_labels.h — the labels and order of SystemProfileEvents' framework
 * thread tracks from the names their traces gave (profile/thread_label.h):
 * for each such track (has_parts, pid and tid known, no nc) its first event
 * (the one starting at the track's first_ts) is read, with its
 * extra_attributes_json, through a window pruned to that start, so the cost is
 * a page or so per track, not a scan of the table. When that event is a
 * runtime event (a thread track may hold both kinds), the track's first
 * framework event is looked for over its extent instead. A track whose trace
 * named nothing keeps no labels.
 */
#ifndef NX_QUERY_TRACK_LABELS_H
#define NX_QUERY_TRACK_LABELS_H

#include <stddef.h>

#include "parquet/parquet.h"
#include "query/track_entry.h"

/* Labels the framework thread tracks among e[0..n) (all of SystemProfileEvents
 * of profile_dir). 0, or -1 with err (out of memory, or the table unreadable). */
int nx_track_labels_read(const char *profile_dir, nx_track_entry *e, size_t n, nx_error *err);

#endif
