/*
 * profile_manifest.h — what nxprof may delete: the exact record of the files a
 * profile holds because nxprof wrote them.
 *
 * A published profile's marker (NX_PROFILE_MARKER) is its manifest: a first
 * line NX_MANIFEST_HEADER, then one line per entry nxprof wrote, its path
 * relative to the profile, after a kind letter:
 *   "f <path>"  a file (a table, a timeline index);
 *   "d <path>"  a folder that groups sub-profiles (devices/);
 *   "p <path>"  a sub-profile (devices/<name>/), which has its own manifest.
 * The marker itself is not listed. A profile still being built holds the marker
 * with the one line NX_MANIFEST_BUILDING; nx_manifest_write() replaces it.
 *
 * Ownership rule (nx_profile_owned): a directory may be replaced or removed when
 * every entry in it is one its manifest lists, with the kind it lists, or a
 * timeline index (.T.nxtl) at its top, which `nxprof index` may add later, or the
 * annotations file (and a temporary file of its atomic write: annotations.h),
 * which the viewer and `nxprof annotations` save after publishing. A marker
 * that is not a manifest (an older nxprof's, possibly empty), or no marker,
 * falls back to the legacy rule: nothing but Parquet files whose footer says
 * nxprof wrote them, timeline indexes (.T.nxtl), the marker, the annotations file, and a devices/
 * folder of sub-profiles judged by the same rules. Anything else — a user's
 * NOTES.md, a notebooks/ folder, a capture moved into the profile — makes the
 * directory not nxprof's to delete, and the error names that entry.
 *
 * Errors: -1 with an nx_error naming the directory and the entry at fault.
 */
#ifndef NX_PROFILE_MANIFEST_H
#define NX_PROFILE_MANIFEST_H

#include "parquet/parquet.h"

/* The file that marks a directory as a profile nxprof wrote: its manifest. Hidden,
 * so Parquet readers listing the directory skip it. */
#define NX_PROFILE_MARKER ".nxprof-profile"

#define NX_MANIFEST_HEADER "nxprof-profile manifest 1"
#define NX_MANIFEST_BUILDING "nxprof-profile building"

/* Writes the manifest of the profile built in `dir` (every sub-profile's first),
 * listing everything in it; a symbolic link or other non-file there is an error,
 * since nxprof writes none. The marker is replaced by one rename. */
int nx_manifest_write(const char *dir, nx_error *err);

/* 0 when `dir` is absent or every entry in it is nxprof's by the ownership rule
 * above; -1 with a message naming dir and the first entry that is not. */
int nx_profile_owned(const char *dir, nx_error *err);

/* nx_profile_owned(dir), naming the profile `shown` in messages (the name the user
 * knows it by, such as the link it is reached through). */
int nx_profile_owned_as(const char *dir, const char *shown, nx_error *err);

/* Removes the profile at `dir`: first checks it as nx_profile_owned() does and, if
 * anything in it is not nxprof's, removes nothing and returns -1 naming it; else
 * deletes exactly the entries the rule accepts, the marker last, and dir itself.
 * A missing dir is success. */
int nx_profile_remove(const char *dir, nx_error *err);

/* 1 when dir's marker says the profile is still being built (a temporary
 * directory of a run), 0 when not, -1 when dir has no readable marker. */
int nx_profile_building(const char *dir);

#endif
