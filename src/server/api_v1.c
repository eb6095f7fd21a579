/*
 * api_v1.c — the reference tool's query API on its own paths (docs/api.md
 * "Reference-compatible query API"), so a script written for the reference's server runs
 * unchanged against nxprof:
 *   GET  /api/v1/health            -> {"status":"healthy"}
 *   POST /api/v1/db/<name>/_search -> by the body's "type":
 *     "databaseExplorerQuery" (+ "query")     the query's answer from the profile's SQL
 *                                             engine (sql/sql.h, kept open by
 *                                             sql_cache.h) under the server's time and
 *                                             row limits;
 *     "tableSchema"  (+ "tableName")          the table's fields from the catalogue;
 *     "listDbFiles"                           the profile's tables and their files
 *                                             (query/db_files.h).
 * <name> is a profile name as the rest of the API resolves it (api_internal.h).
 * The body is a JSON object; members other than those named are ignored, as the
 * reference ignores them. Status: 400 for a body that is not an object, a missing or
 * unknown type, a missing tableName or query, a query refused (not one read-only
 * SELECT) or failed; 408 for a query past the time limit; 404 for an unknown profile
 * or a table the catalogue does not have; 500 when the engine could not open the
 * profile or run out of memory.
 */
#include <stdlib.h>
#include <string.h>

#include "query/db_files.h"
#include "schema/schema.h"
#include "server/api_internal.h"
#include "server/sql_cache.h"
#include "sql/sql.h"

/* Longest "type" or "tableName" value taken (the catalogue's names are far shorter). */
#define MAX_WORD 128

enum MHD_Result nx_api_v1_health(nx_api_req *r)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"status\":\"healthy\"}");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* The body's string member `key` into out (cap bytes): true, or false when it is
 * absent, not a string or longer than cap - 1 bytes. */
static bool body_word(nx_api_req *r, const char *key, char *out, size_t cap)
{
    size_t n = 0;
    if (!nx_json_string_member(r->content, r->content_len, key, out, cap - 1, &n))
        return false;
    out[n] = '\0';
    return true;
}

/* {"type":"tableSchema","tableName":T}: T's fields as the catalogue states them. */
static enum MHD_Result table_schema(nx_api_req *r)
{
    char name[MAX_WORD];
    if (!body_word(r, "tableName", name, sizeof name))
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "tableSchema needs \"tableName\", a string");
    const nx_schema_table *t = nx_schema_table_find(name);
    if (!t || t->transient)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "no table '%s' in the profile schema %s", name, NX_SCHEMA_VERSION);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"tableName\":");
    nx_json_put_cstr(&b, t->name);
    nx_strbuf_puts(&b, ",\"description\":");
    nx_json_put_cstr(&b, t->description);
    nx_strbuf_puts(&b, ",\"schemaVersion\":");
    nx_json_put_cstr(&b, NX_SCHEMA_VERSION);
    nx_strbuf_puts(&b, ",\"fields\":[");
    for (size_t i = 0; i < t->n_fields; i++) {
        const nx_schema_field *f = &t->fields[i];
        nx_strbuf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        nx_json_put_cstr(&b, f->name);
        nx_strbuf_puts(&b, ",\"type\":");
        nx_json_put_cstr(&b, f->type);
        nx_strbuf_puts(&b, ",\"format\":");
        nx_json_put_cstr(&b, f->format);
        nx_strbuf_puts(&b, ",\"unit\":");
        nx_json_put_cstr(&b, f->unit);
        nx_strbuf_printf(&b, ",\"required\":%s,\"description\":", f->required ? "true" : "false");
        nx_json_put_cstr(&b, f->description);
        nx_strbuf_putc(&b, '}');
    }
    nx_strbuf_puts(&b, "]}");
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

/* {"type":"databaseExplorerQuery","query":Q}: Q run by the profile's SQL engine
 * (sql_cache.h) under the server's limits; tableName, which the reference sends, is
 * not needed (the query names its tables) and not read. */
static enum MHD_Result database_query(nx_api_req *r, const char *dir)
{
    char *query = malloc(r->content_len + 1); /* decoding never lengthens a string */
    size_t n = 0;
    if (!query)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    if (!nx_json_string_member(r->content, r->content_len, "query", query, r->content_len, &n)) {
        free(query);
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "databaseExplorerQuery needs \"query\", a string");
    }
    if (memchr(query, '\0', n)) { /* \u0000 would end the engine's text early */
        free(query);
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "the query holds a NUL character (\\u0000)");
    }
    query[n] = '\0';
    nx_sql_limits limits = {
        .timeout_s = r->srv->query_timeout_s > 0 ? r->srv->query_timeout_s : NX_SQL_DEFAULT_TIMEOUT_S,
        .max_rows = r->srv->max_rows > 0 ? r->srv->max_rows : NX_SQL_DEFAULT_MAX_ROWS,
    };
    nx_error err = {0};
    nx_sql *db = NULL;
    nx_sql_lease *lease = nx_sql_cache_take(dir, &db, &err);
    nx_sql_status st = NX_SQL_INTERNAL;
    nx_strbuf b = NX_STRBUF_INIT;
    if (lease)
        st = nx_sql_run(db, query, &limits, NX_SQL_JSON, &b, &err);
    nx_sql_cache_return(lease);
    free(query);
    if (st == NX_SQL_OK)
        return nx_api_json(r, MHD_HTTP_OK, &b);
    nx_strbuf_free(&b);
    unsigned status = st == NX_SQL_REFUSED || st == NX_SQL_FAILED ? MHD_HTTP_BAD_REQUEST
                      : st == NX_SQL_TIMEOUT                      ? MHD_HTTP_REQUEST_TIMEOUT
                                                                  : MHD_HTTP_INTERNAL_SERVER_ERROR;
    return nx_api_error(r, status, "%s", err.msg[0] ? err.msg : "the query failed");
}

/* {"type":"listDbFiles"}: the tables of the profile in dir and their files. */
static enum MHD_Result list_db_files(nx_api_req *r, const char *dir)
{
    nx_db_files f;
    nx_error err = {0};
    if (nx_db_files_read(dir, &f, &err) != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_puts(&b, "{\"tables\":[");
    for (size_t i = 0; i < f.n_tables; i++) {
        const nx_db_table *t = &f.tables[i];
        nx_strbuf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        nx_json_put_cstr(&b, t->name);
        nx_json_put_i64_member(&b, "rows", t->rows, true);
        nx_json_put_i64_member(&b, "size", (int64_t)t->size, true);
        if (t->error) {
            nx_strbuf_puts(&b, ",\"error\":");
            nx_api_json_message(r->srv, &b, t->error);
        }
        nx_strbuf_puts(&b, ",\"files\":[");
        for (size_t j = 0; j < t->n_files; j++) {
            nx_strbuf_puts(&b, j ? ",{\"name\":" : "{\"name\":");
            nx_json_put_cstr(&b, t->files[j].name);
            nx_json_put_i64_member(&b, "rows", t->files[j].rows, true);
            nx_json_put_i64_member(&b, "size", (int64_t)t->files[j].size, true);
            nx_strbuf_putc(&b, '}');
        }
        nx_strbuf_puts(&b, "]}");
    }
    nx_strbuf_puts(&b, "]}");
    nx_db_files_free(&f);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

enum MHD_Result nx_api_v1_search(nx_api_req *r, const char *name)
{
    char *dir = NULL;
    enum MHD_Result result;
    if (nx_api_profile_dir(r, name, &dir, &result) != 0)
        return result;
    nx_json_iter it;
    char type[MAX_WORD];
    if (!nx_json_members_begin(&it, r->content, r->content_len))
        result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "the request body must be a JSON object");
    else if (!body_word(r, "type", type, sizeof type))
        result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "the request body needs \"type\", a string");
    else if (strcmp(type, "databaseExplorerQuery") == 0)
        result = database_query(r, dir);
    else if (strcmp(type, "tableSchema") == 0)
        result = table_schema(r);
    else if (strcmp(type, "listDbFiles") == 0)
        result = list_db_files(r, dir);
    else
        result = nx_api_error(r, MHD_HTTP_BAD_REQUEST,
                              "unknown type '%s' (databaseExplorerQuery, tableSchema or listDbFiles)", type);
    free(dir);
    return result;
}
