/*
 * sql_cache.h — the SQL engines (sql/sql.h) the query API keeps open, one per
 * profile directory, shared by the server's threads.
 *
 * Opening an engine on a profile reads every table's footer and registers its
 * relations; a script asks one profile many questions in a row, so an engine is
 * kept for the next request. It is keyed, as the response cache is
 * (response_cache.h), on the directory's path and the fingerprint of every file in
 * it taken when the request arrived: a profile whose files changed (re-processed,
 * a table rewritten) gets a new engine, and the old one is closed once the last
 * request using it returns it. At most SQL_CACHE_ENTRIES engines stay open; the
 * least recently used is closed first (after its last user returns it).
 */
#ifndef NX_SERVER_SQL_CACHE_H
#define NX_SERVER_SQL_CACHE_H

#include "parquet/parquet.h"
#include "sql/sql.h"

typedef struct nx_sql_lease nx_sql_lease;

/* An engine on profile directory dir, opened now or kept from before: the lease (give
 * it back with nx_sql_cache_return) with *db set, or NULL with err saying why. */
nx_sql_lease *nx_sql_cache_take(const char *dir, nx_sql **db, nx_error *err);
void nx_sql_cache_return(nx_sql_lease *lease);
/* Closes every engine no request holds (the server's shutdown, tests). */
void nx_sql_cache_clear(void);

#endif
