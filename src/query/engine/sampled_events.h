/*
 * sampled_events.h — what a sampled pass keeps of a window (sampled_pass.h):
 * the kept events with their tracks' names and depths, the count in the
 * window, and the timeline index when it answered; and its release.
 *
 * Its own module because the pass (sampled_pass.c) answers from the timeline
 * index through index_sample.h, which fills the same result: the index's side
 * needs the result, not the pass that calls it.
 */
#ifndef NX_QUERY_SAMPLED_EVENTS_H
#define NX_QUERY_SAMPLED_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "query/engine/window.h"

typedef struct nx_sampled {
    nx_sample *samples;              /* kept events by ordinal; .track indexes names */
    uint32_t *depth;                 /* per kept event: its depth on its track (nested tables), else NULL */
    size_t n;
    char **names;                    /* track names, NUL-terminated */
    size_t *name_len;
    size_t n_tracks;
    uint64_t in_window;              /* events in the window, kept or not */
    nxpq_scan_stats stats;           /* pages and row groups, read and total, summed over the halves */
    struct nx_tlx *index;            /* set when the timeline index answered (timeline_index.h):
                                        samples' tags are its label tuples; closed by nx_sampled_free */
} nx_sampled;

/* Frees what s holds (releasing its index) and zeroes it; safe on a zeroed s. */
void nx_sampled_free(nx_sampled *s);

#endif
