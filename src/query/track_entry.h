/*
 * track_entry.h — one track of a profile as tracks.h lists it: its table, name,
 * count and extent, depth, the parts of its name and its labels (the rules
 * are tracks.h's).
 *
 * Its own header because the list (tracks.c) hands its entries to
 * track_labels.h to be labelled: the labelling needs the entry, not the list.
 */
#ifndef NX_QUERY_TRACK_ENTRY_H
#define NX_QUERY_TRACK_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/timeline_rules.h"

/* A part of a track's name that may be null. */
typedef struct nx_track_part {
    bool ok;                     /* false: null (differs between events, or null) */
    int64_t i;                   /* integer parts */
    char *s;                     /* text parts: malloc'd, NUL-terminated (s[len]) */
    size_t len;
} nx_track_part;

typedef struct nx_track_entry {
    const nx_timeline_view *view;        /* its table (view->table) and group */
    char *name;                          /* malloc'd, NUL-terminated (name[name_len]) */
    size_t name_len;
    int64_t count, first_ts, last_ts;
    uint32_t max_depth;
    bool has_parts;                      /* SystemProfileEvents: the parts below */
    nx_track_part instance, pid, tid, nc, worker;   /* worker: the rank (worker_gid) */
    bool labelled;                       /* a framework thread its trace named (track_labels.h): */
    char *process_label, *thread_label;  /*   "python3 (469)", "thread 520 (pt_autograd_0)" */
    int64_t process_sort, thread_sort;   /*   process/thread_sort_index, else pid/tid */
} nx_track_entry;

#endif
