/*
 * api_breakdown.c — GET /api/profiles/<name>/breakdown?rank=&step=&top= (docs/api.md):
 * query/breakdown.h's answer as nx_breakdown_json writes it (integers beyond
 * 2^53 as strings). rank and step: 0 or more, absent for all; top: 1..1000,
 * default 10. A device profile (no SystemProfileEvents) answers
 * query/engine_breakdown.h's JSON (rank or step given: 400); a profile with
 * neither table is a 404 saying so.
 */
#include <stdlib.h>

#include "profile/profile_table.h"
#include "query/breakdown.h"
#include "query/engine_breakdown.h"
#include "server/api_internal.h"

/* A device profile's engines (engine_breakdown.h). */
static enum MHD_Result engines(nx_api_req *r, const char *name, const char *dir)
{
    nx_engine_breakdown eb;
    nx_error err = {0};
    int rc = nx_engine_breakdown_read(dir, &eb, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "breakdown: %s has neither SystemProfileEvents nor Instruction",
                            name);
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_engine_breakdown_json(&eb, true, &b);
    nx_engine_breakdown_free(&eb);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

enum MHD_Result nx_api_breakdown(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    int64_t rank, step, top;
    if (nx_api_int_param(r, "rank", false, -1, 0, INT64_MAX, &rank, &res) < 0 ||
        nx_api_int_param(r, "step", false, -1, 0, INT64_MAX, &step, &res) < 0 ||
        nx_api_int_param(r, "top", false, 10, 1, 1000, &top, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_breakdown bd;
    nx_error err = {0};
    int rc = nx_breakdown_read(dir, rank, step, (size_t)top, &bd, &err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        res = rank >= 0 || step >= 0
                  ? nx_api_error(r, MHD_HTTP_BAD_REQUEST, "rank, step: %s is not a system profile", name)
                  : engines(r, name, dir);
        free(dir);
        return res;
    }
    free(dir);
    if (rc != 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_breakdown_json(&bd, true, &b);
    nx_breakdown_free(&bd);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
