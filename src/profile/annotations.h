/*
 * annotations.h — a profile's saved annotations: time markers and named regions the
 * user sets in the viewer (or imports), kept in one small JSON file beside the tables.
 *
 * The file: NX_ANNOTATIONS_FILE at the top of the profile directory (hidden, so
 * Parquet readers listing the directory skip it). nxprof owns it: the ownership rule
 * (profile_manifest.h) takes it as nxprof's even when the manifest does not list it
 * (it is written after the profile was published), and `nxprof process` carries it
 * into the new profile of the same name before the switch (profile_set.h,
 * profile_output.h), so annotations survive re-processing.
 *
 * The document (docs/processing.md "Annotations"), one JSON object:
 *   {"version": 1,
 *    "markers": [{"time_ns": T, "label": "...", "colour": "#rrggbb", "track": "..."}],
 *    "regions": [{"start_ns": S, "end_ns": E, "name": "...", "colour": "#rgb", "note": "..."}]}
 * version is required and must be NX_ANNOTATIONS_VERSION; markers and regions may be
 * left out (none). A marker needs time_ns and label (which may be empty); a region
 * start_ns <= end_ns and a non-empty name; colour ("#" and 3 or 6 hex digits), track
 * and note are optional. Times are absolute ns (the tables' timestamps) as JSON
 * integers or decimal strings (the HTTP API writes integers beyond 2^53 as strings;
 * both are read). Strings are UTF-8 without NUL. Members not named here are refused,
 * naming them, so a typo never silently loses what it meant to say. Limits:
 * NX_ANNOTATIONS_MAX_ITEMS markers and as many regions, labels, names and tracks of at
 * most NX_ANNOTATIONS_MAX_TEXT bytes, notes of NX_ANNOTATIONS_MAX_NOTE, the whole text
 * at most NX_ANNOTATIONS_MAX_BYTES. The same rules apply on read and on write.
 *
 * Writing is atomic: a temporary file beside it (NX_ANNOTATIONS_FILE ".tmp-*"),
 * fsync'd, renamed over the file, the directory fsync'd; a reader sees the previous
 * document or the new one, never a part.
 *
 * Errors: -1 with an nx_error naming the file (or the source given) and the member
 * at fault, e.g. "x/.nxprof-annotations.json: markers[2].time_ns: not an integer".
 */
#ifndef NX_ANNOTATIONS_H
#define NX_ANNOTATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

#define NX_ANNOTATIONS_FILE ".nxprof-annotations.json"
#define NX_ANNOTATIONS_VERSION 1
#define NX_ANNOTATIONS_MAX_ITEMS 10000
#define NX_ANNOTATIONS_MAX_TEXT 256
#define NX_ANNOTATIONS_MAX_NOTE 4096
#define NX_ANNOTATIONS_MAX_BYTES (1024 * 1024)

typedef struct nx_marker {
    int64_t time_ns;
    char *label;    /* may be "" */
    char *colour;   /* NULL: none */
    char *track;    /* NULL: none */
} nx_marker;

typedef struct nx_region {
    int64_t start_ns, end_ns;
    char *name;
    char *colour;   /* NULL: none */
    char *note;     /* NULL: none */
} nx_region;

typedef struct nx_annotations {
    nx_marker *markers;
    size_t n_markers;
    nx_region *regions;
    size_t n_regions;
} nx_annotations;

/* Parses and validates the document text[0..len) into *a (zeroed first; freed on
 * failure). `source` names the text in messages (a path, "the request body"). */
int nx_annotations_parse(const char *text, size_t len, const char *source, nx_annotations *a, nx_error *err);

/* Checks *a against the rules above (what nx_annotations_save enforces), naming
 * `source` and the member at fault. */
int nx_annotations_check(const nx_annotations *a, const char *source, nx_error *err);

/* Appends *a as its document (members in the order above, absent optional members
 * left out, times by nx_json_put_i64's safe rule). */
void nx_annotations_json(const nx_annotations *a, nx_strbuf *out);

/* Loads the annotations of the profile at `dir`: none (a zeroed *a) when it has no
 * file; -1 when the file is not a regular file, cannot be read or is invalid. */
int nx_annotations_load(const char *dir, nx_annotations *a, nx_error *err);

/* Checks *a and writes it atomically as the annotations of the profile at `dir`. */
int nx_annotations_save(const char *dir, const nx_annotations *a, nx_error *err);

/* Appends copies of every marker and region of *from to *into (an import that keeps
 * what is there); -1 when out of memory (*into unchanged) or past the count limits. */
int nx_annotations_append(nx_annotations *into, const nx_annotations *from, nx_error *err);

/* Copies the annotations file of the profile at `from` (if it has one), byte for
 * byte, into the profile being built at `to`, and so for each sub-profile `to` holds
 * (<folder>/<name>, such as devices/<name>) from the same place in `from`:
 * re-processing keeps what the user wrote, even a file this version would refuse.
 * A file that is not a regular file, or larger than NX_ANNOTATIONS_MAX_BYTES, is an
 * error naming it. */
int nx_annotations_carry(const char *from, const char *to, nx_error *err);

/* True when `name`, an entry at the top of a profile, is the annotations file or a
 * temporary file of its atomic write (which a killed writer may leave): nxprof's. */
bool nx_annotations_entry(const char *name);

void nx_annotations_free(nx_annotations *a);

#endif
