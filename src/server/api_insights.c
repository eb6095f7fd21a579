/*
 * api_insights.c — GET /api/profiles/<name>/insights (docs/api.md): the
 * findings of query/insights.h for a system or device profile, the object
 * `nxprof insights --format json` prints.
 */
#include <stdlib.h>

#include "query/insights.h"
#include "server/api_internal.h"

enum MHD_Result nx_api_insights(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_insights s;
    nx_error err = {0};
    int rc = nx_insights_read(dir, &s, &err);
    free(dir);
    if (rc < 0)
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_insights_json(&s, &b);
    nx_insights_free(&s);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
