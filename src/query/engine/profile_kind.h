/*
 * profile_kind.h — which kind a profile directory is, from the tables it holds.
 * Its own file because the answers of both kinds ask it (top.h's defaults, the
 * system summary, diff, insights) and none of them should include another's.
 */
#ifndef NX_QUERY_PROFILE_KIND_H
#define NX_QUERY_PROFILE_KIND_H

#include <stdbool.h>

/* Whether dir is a system profile: it holds SystemProfileEvents and no
 * Instruction (as T.parquet or T_0.parquet). */
bool nx_profile_is_system(const char *dir);

#endif
