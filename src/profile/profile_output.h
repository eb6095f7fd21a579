/*
 * profile_output.h — where a processed profile goes, and how it gets there atomically.
 *
 * A profile is a directory of Parquet files. It is never built in place: the
 * processor writes into a temporary sibling of the final directory (same parent,
 * so the final step is a rename within one file system) and publishes it only
 * when every table is complete. Publishing moves any previous profile aside,
 * swaps the new one in with one renameat2(RENAME_EXCHANGE) and then deletes the
 * old one, so at every instant the final name holds either the old complete
 * profile or the new complete one — never a partial one. (Where the file system
 * cannot exchange, the old profile is renamed aside first, leaving the name empty
 * for the instant between two renames.) A run killed outright leaves its hidden
 * temporary sibling behind; the next run into the same parent removes those whose
 * process is gone.
 *
 * This is the publish of `--output-file DIR` (device profiles nested inside DIR,
 * so one exchange publishes the set); a data path's set of sibling profiles is
 * published by profile_set.h.
 *
 * Ownership: nxprof replaces and deletes only what it wrote (profile_manifest.h):
 * the marker NX_PROFILE_MARKER (hidden, so Parquet readers listing the directory
 * skip it) is the manifest of the profile's files, and a directory holding
 * anything else is refused before any work is done.
 *
 * Where a profile goes: profile_layout.h.
 *
 * Errors: functions return -1 and fill an nx_error (the same message buffer the
 * table writer uses, so a caller handles one error type). Nothing here prints.
 */
#ifndef NX_PROFILE_OUTPUT_H
#define NX_PROFILE_OUTPUT_H

#include <stddef.h>

#include "parquet/parquet.h"

typedef struct nx_profile_output {
    char *final_dir;   /* where the profile will be published */
    char *tmp_dir;     /* where it is being built; write tables here */
} nx_profile_output;

/* Creates the parent directories of final_dir as needed and a fresh, uniquely named
 * temporary sibling ".<basename>.tmp-<pid>-XXXXXX" holding the marker. Refuses (-1,
 * final_dir untouched) when final_dir exists and is not a directory nxprof may replace.
 * On success the caller must end with exactly one of nx_profile_output_publish() or
 * nx_profile_output_abort(). */
int nx_profile_output_begin(nx_profile_output *o, const char *final_dir, nx_error *err);

/* Publishes the n profiles being built in o[0..n-1] together: the annotations of
 * the previous profile at each final_dir are carried in (annotations.h), each one's
 * manifest is written, every target is checked again (only one nxprof may replace), then
 * each temporary directory is swapped into place in turn and, once all are in, the
 * previous profiles are removed by their manifests. If any step fails, those already swapped are put back, so the previous
 * profiles all stay (or return) under their names; every temporary directory is
 * removed and o's strings are freed either way. A kill between two swaps (a
 * window of a few renames) leaves some new and some previous profiles, each
 * complete. */
int nx_profile_output_publish(nx_profile_output *o, size_t n, nx_error *err);

/* Creates `dir` (its parent must exist) holding the marker: a profile built
 * inside another one's temporary directory (docs/architecture.md, "Output
 * layout"), published with it. */
int nx_profile_dir_create(const char *dir, nx_error *err);

/* Removes the temporary directory and everything in it and frees o's strings; the
 * previous profile, if any, is untouched. Safe on a zeroed struct. */
void nx_profile_output_abort(nx_profile_output *o);

/* mkdir -p: creates every missing component of `path` (modified and restored in
 * place). 0, or -1 naming the component that could not be made. */
int nx_make_dirs(char *path, nx_error *err);

/* mkdtemp(dir) (dir ends in XXXXXX and is taken over: returned, or freed on
 * failure), then given the usual permissions (0777 less the umask). */
char *nx_make_temp_dir(char *dir, nx_error *err);

/* renameat2(RENAME_EXCHANGE): a and b swap names in one step. 0, or -1 with errno
 * (ENOSYS, EINVAL where the kernel or file system cannot). */
int nx_rename_exchange(const char *a, const char *b);

/* Removes the hidden siblings ".<base>.tmp-<pid>-*" and ".<base>.old-<pid>-*" in
 * parent whose process is gone: a build removed whole, a previous profile moved
 * aside removed by its manifest, a link unlinked. */
void nx_profile_sweep_stale(const char *parent, const char *base);

/* Test hook: raises SIGKILL when the environment variable NXPROF_TEST_KILL_AT
 * equals `step`, so tests can kill a run at each step of a publish
 * deterministically (docs/testing.md). The steps, in order: --output-file
 * "built" (manifests written), "swapped" (every profile exchanged), "pruned"
 * (previous profiles removed); --data-path (profile_set.h) "built", "linked",
 * "switched", "migrated", "pruned", "unlinked". */
void nx_publish_step(const char *step);

/* Removes a directory tree (files, subdirectories; symlinks are unlinked, not
 * followed). Returns 0, or -1 with errno set; a missing path is success. */
int nx_remove_tree(const char *path);

#endif
