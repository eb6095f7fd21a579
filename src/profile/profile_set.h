/*
 * profile_set.h — a run's set of profiles in a data path, published as a whole.
 *
 * Layout under R = <data-path>/profiles/global, for a run named N:
 *   R/.N.nxprof-set/g-<pid>-XXXXXX/<name>@latest/   one generation: every profile of a run
 *   R/.N.nxprof-set/current -> g-<pid>-XXXXXX       the published generation
 *   R/<name>@latest -> .N.nxprof-set/current/<name>@latest   one stable link per profile
 * Readers open R/<name>@latest as before (pandas' glob R/ *@latest/T.parquet follows the
 * links); a device profile's sibling lookup from its system profile (../<name>@latest)
 * lands in the same generation.
 *
 * Publishing (nx_profile_set_publish): each profile's previous annotations are carried
 * into its new directory (annotations.h), the manifests are written into the generation,
 * the public links that are missing are created (they dangle until the switch, so no new
 * name is visible early), then `current` is switched with one rename(2) of a fresh link:
 * at every instant the set's names show either the whole previous generation or the
 * whole new one. Then the previous generation is removed (by its manifests) and the
 * links of names the new set lacks (they dangle now) are unlinked.
 *
 * Migration: a name that is still a real directory (a profile of the one-directory-per-
 * name layout) is replaced after the switch by exchanging it with its link
 * (renameat2 RENAME_EXCHANGE), one name at a time, and removed by its manifest. A kill
 * during that first migration leaves some names at their previous profiles and the
 * others at the new ones, each profile complete; the next run finishes it.
 *
 * A run killed before the switch leaves its generation (and perhaps dangling links of
 * new names); the next run of the same set sweeps generations whose process is gone.
 *
 * Test hook: nx_publish_step(name) at each step (profile_output.h).
 */
#ifndef NX_PROFILE_SET_H
#define NX_PROFILE_SET_H

#include <stddef.h>

#include "parquet/parquet.h"

typedef struct nx_profile_set {
    char *root;       /* <data-path>/profiles/global */
    char *set_dir;    /* <root>/.<N>.nxprof-set */
    char *gen;        /* <set_dir>/g-<pid>-XXXXXX, being built */
    char **names;     /* "<name>@latest" of every profile added */
    size_t n;
} nx_profile_set;

/* Starts a set named set_name (a valid display name) in root (created as needed):
 * sweeps what dead runs of the set left and creates a fresh generation. On success
 * the caller ends with exactly one of nx_profile_set_publish() or _abort(). */
int nx_profile_set_begin(nx_profile_set *s, const char *root, const char *set_name, nx_error *err);

/* Adds profile `name` (a valid display name): refuses, before anything is built, when
 * <root>/<name>@latest is something nxprof may not replace (a link it did not make, a
 * directory that is not a profile it wrote: profile_manifest.h); else creates its
 * directory in the generation and puts it (malloc'd) in *build_dir. */
int nx_profile_set_add(nx_profile_set *s, const char *name, char **build_dir, nx_error *err);

/* Publishes the generation as described above; frees s. -1 with nothing visible
 * changed when a check fails before the switch (the generation is removed); after the
 * switch, -1 only when the previous profiles could not all be removed (they are
 * named; the new set is published). */
int nx_profile_set_publish(nx_profile_set *s, nx_error *err);

/* Removes the generation being built; the published set is untouched. Frees s; safe
 * on a zeroed struct. */
void nx_profile_set_abort(nx_profile_set *s);

#endif
