/* nki_index_internal.h — between nki_index.c (reading the tables) and
 * nki_index_cache.c (keeping the indexes): not for other modules. */
#ifndef NX_QUERY_NKI_INDEX_INTERNAL_H
#define NX_QUERY_NKI_INDEX_INTERNAL_H

#include "query/nki_index.h"
#include "util/error.h"

/* Reads profile dir's NKI tables into a new index: 0 (*out), NX_PROFILE_TABLE_ABSENT
 * (no KernelInstructions rows), or -1 with err naming the table or file. */
int nx_nki_index_build(const char *dir, nx_nki_index **out, nx_error *err);
void nx_nki_index_destroy(nx_nki_index *x);

#endif
