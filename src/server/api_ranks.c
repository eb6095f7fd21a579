/*
 * api_ranks.c — GET /api/profiles/<name>/ranks (docs/api.md): the rank answer
 * of a system profile (query/rank_stats.h), the object `nxprof ranks --format
 * json` prints, integers beyond 2^53 as strings.
 */
#include <stdlib.h>

#include "query/rank_stats.h"
#include "server/api_internal.h"

enum MHD_Result nx_api_ranks(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_rank_stats s;
    nx_error err = {0};
    int rc = nx_rank_stats_read(dir, &s, &err);
    free(dir);
    if (rc > 0)
        return nx_api_error(r, MHD_HTTP_NOT_FOUND, "%s has no SystemProfileEvents table", name);
    if (rc < 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_rank_stats_json(&s, true, &b);
    nx_rank_stats_free(&s);
    if (nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
