/*
 * api_analysis.c — GET /api/profiles/<name>/<analysis> for every analysis of
 * the registry (query/analysis.h; docs/api.md): the declared parameters from
 * the query string, the answer as JSON with integers beyond 2^53 as strings
 * (the API's rule), the analysis's codes as statuses. Nothing here is
 * particular to one analysis; the router (server.c) comes here for a path
 * segment that none of its own routes takes.
 */
#include <stdlib.h>

#include "server/api_internal.h"

/* The status of an analysis's failure (the table in analysis.h). */
static unsigned status_of(int rc)
{
    switch (rc) {
    case NX_ANALYSIS_BAD_PARAM:
        return MHD_HTTP_BAD_REQUEST;
    case NX_ANALYSIS_NOT_APPLICABLE:
        return MHD_HTTP_NOT_FOUND;
    default:
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

enum MHD_Result nx_api_analysis(nx_api_req *r, const nx_analysis *a, const char *name)
{
    nx_analysis_call call = nx_analysis_call_new(a, NX_ANALYSIS_JSON, true);
    nx_error err = {0};
    /* Parameters before the profile: a malformed request is a 400 whatever it names. */
    for (size_t i = 0; i < a->n_params; i++) {
        const char *v = nx_api_param(r, a->params[i].name);
        if (v && nx_analysis_param_parse(&a->params[i], v, &call.args[i], &err) != NX_ANALYSIS_OK)
            return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter %s", err.msg);
    }
    enum MHD_Result res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    call.dir = dir;
    call.name = name;
    nx_strbuf b = NX_STRBUF_INIT;
    int rc = nx_analysis_run(a, &call, &b, &err);
    free(dir);
    if (rc != NX_ANALYSIS_OK) {
        nx_strbuf_free(&b);
        return nx_api_error(r, status_of(rc), "%s", err.msg);
    }
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
