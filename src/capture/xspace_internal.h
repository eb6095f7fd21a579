/*
 * xspace_internal.h — what the two halves of the XSpace reader share: the
 * reader's state and error path (xspace.c walks planes, lines and events),
 * a plane's metadata maps and the rendering of stats into args
 * (xspace_meta.c). Not for use outside src/capture/xspace*.c.
 */
#ifndef NX_XSPACE_INTERNAL_H
#define NX_XSPACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/xspace.h"
#include "util/arena.h"
#include "util/pb_wire.h"
#include "util/strbuf.h"

/* One step of the message path an error names: "planes[2]", "name" (index -1). */
typedef struct xs_frame {
    const char *field;
    int64_t index;
} xs_frame;

#define XS_MAX_DEPTH 6

/* The start of both metadata records: the map key, and the index of its
 * entry in the plane (of two entries with one key the later one wins, as in a
 * protobuf map). */
typedef struct xs_meta_key {
    int64_t id;
    uint64_t entry;
} xs_meta_key;

typedef struct xs_event_meta {
    xs_meta_key key;
    const char *name;        /* NUL-terminated copies (arena) */
    size_t name_len;
    const char *display;
    size_t display_len;
    size_t start, len;       /* the XEventMetadata message, for its stats */
} xs_event_meta;

typedef struct xs_stat_meta {
    xs_meta_key key;
    const char *name;
    size_t name_len;
} xs_stat_meta;

/* One args key/value before sorting: value in xs.values at [off, off + len). */
typedef struct xs_pair {
    const char *key;
    size_t key_len;
    size_t off, len;
    size_t seq;
} xs_pair;

typedef struct xs {
    const char *file;
    const uint8_t *data;
    size_t size;
    const nx_chrome_handlers *h;
    size_t max_args;
    nx_xspace_counts *counts;
    nx_error *err;
    xs_frame path[XS_MAX_DEPTH];
    int depth;
    uint64_t delivered;      /* events handed to the callback, M included */
    /* the current plane */
    nx_arena arena;
    xs_event_meta *em;
    size_t n_em, cap_em;
    xs_stat_meta *sm;
    size_t n_sm, cap_sm;
    /* the current event's args */
    xs_pair *pairs;
    size_t n_pairs, cap_pairs;
    size_t stats_seen;       /* stats walked for this event */
    bool args_too_large;     /* past max_args: the rest was not read */
    nx_strbuf values, args;
} xs;

/* Fills x->err ("file: byte N: XSpace.path: what") and returns -1. */
int xs_fail(xs *x, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void xs_push(xs *x, const char *field, int64_t index);
void xs_pop(xs *x);
/* -1 (error filled) unless f has the wire type `wire`. */
int xs_want(xs *x, const nx_pb_field *f, int wire, const char *field);
/* A LEN field as a UTF-8 string: -1 (error filled) when it is not UTF-8. */
int xs_string(xs *x, const nx_pb_field *f, const char *field, const char **s, size_t *len);
/* The next field of c; 1, 0 at the end, -1 with the error filled. */
int xs_next(xs *x, nx_pb_cursor *c, nx_pb_field *f);

/* Adds an event_metadata (f: map entry, field 4) or stat_metadata (field 5)
 * entry of the current plane; sorts the maps once the plane is read. */
int xs_meta_add(xs *x, const nx_pb_field *f, uint64_t entry);
int xs_meta_finish(xs *x);
const xs_event_meta *xs_event_meta_find(const xs *x, int64_t id);
void xs_meta_reset(xs *x);

/* The args of one event: begin, add the metadata's and the event's stats
 * (c: an XEvent or XEventMetadata message, its field `field` the stats), then
 * finish: x->args holds the JSON object, unless x->args_too_large. Once the
 * args cannot fit max_args (each stat adds at least 6 bytes of JSON, unless
 * internal) the remaining stats are not read, so an event's work is bounded by
 * the cap, not by how many stats its metadata repeats. */
int xs_args_begin(xs *x, const xs_event_meta *m);
int xs_args_stats(xs *x, nx_pb_cursor c, uint32_t field);
int xs_args_finish(xs *x);

#endif
