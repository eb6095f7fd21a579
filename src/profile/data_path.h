/*
 * data_path.h — where paths really lead: the rules that keep a run from
 * writing over its own input and a reader inside its data path.
 *
 * Paths are compared by their real paths (symbolic links, "." and ".." resolved).
 * A path that does not exist yet (an output directory before its first run) is
 * compared by the real path of its nearest existing ancestor with the missing
 * components appended.
 */
#ifndef NX_DATA_PATH_H
#define NX_DATA_PATH_H

#include <stdbool.h>

#include "parquet/parquet.h"

/* The real path of `path`, or, when it does not exist, of its nearest existing
 * ancestor followed by the rest of `path` ("." components dropped); malloc'd.
 * NULL with errno when no ancestor resolves or memory runs out. */
char *nx_path_real_planned(const char *path);

/* True when the real path `inner` is `outer` or lies below it (both real). */
bool nx_path_within(const char *inner, const char *outer);

/* 0 when the capture directory and the output directory final_dir are apart;
 * -1 naming both when either lies inside the other (a run would replace its own
 * input, or write its output into the capture), or when one does not resolve. */
int nx_output_apart_from_capture(const char *capture_dir, const char *final_dir, nx_error *err);

/* The real path of `path`, malloc'd, when it is a directory whose real path lies
 * strictly inside the real path of `root` (the data path's profiles/global, or the
 * folder a system profile's device profiles may sit in): a profile may be reached
 * through symbolic links only when they stay inside. NULL otherwise, with errno
 * ENOMEM when memory ran out and ENOENT when it is missing, outside or not a
 * directory (the same answer, so nothing about the outside is revealed). */
char *nx_dir_real_inside(const char *path, const char *root);

#endif
