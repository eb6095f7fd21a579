/*
 * api_diff.c — GET /api/diff?a=<profile>&b=<profile>[&by=KEY][&limit=N][&all=1]: the
 * diff of two profiles of one kind (query/diff.h) as query/diff_json.c writes it, the
 * object of `nxprof diff --format json` (docs/api.md). This file only parses and
 * answers: a and b are profile names (resolved as every handler resolves one: 400
 * invalid, 404 absent); limit 0..10^9, default 100, 0 for every group; all 0 or 1
 * (1 keeps the profiler's own rows); normalize step, wall or none. A key the table
 * lacks, two profiles of different kinds, or a normalisation without its divisor is a
 * 400; a profile without the table compared, a 404.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/diff.h"
#include "query/top.h"
#include "server/api_internal.h"

#define DIFF_DEFAULT_LIMIT 100
#define DIFF_MAX_LIMIT 1000000000

static unsigned diff_status(int rc)
{
    if (rc == NX_DIFF_KINDS || rc == NX_DIFF_NO_DIVISOR || rc == NX_TOP_BAD_KEY)
        return MHD_HTTP_BAD_REQUEST;
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return MHD_HTTP_NOT_FOUND;
    return MHD_HTTP_INTERNAL_SERVER_ERROR;
}

/* The diff of the resolved directories, answered. */
static enum MHD_Result answer(nx_api_req *r, const char *a, const char *a_dir, const char *b, const char *b_dir,
                              const nx_diff_options *o, int64_t limit)
{
    nx_diff d;
    nx_error err = {0};
    int rc = nx_diff_run(a_dir, b_dir, o, &d, &err);
    if (rc != 0)
        return nx_api_error(r, diff_status(rc), "%s", err.msg);
    nx_strbuf body = NX_STRBUF_INIT;
    nx_diff_json(&body, &d, a, b, (uint64_t)limit);
    nx_diff_free(&d);
    if (nx_strbuf_failed(&body)) {
        nx_strbuf_free(&body);
        return nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    return nx_api_json(r, MHD_HTTP_OK, &body);
}

enum MHD_Result nx_api_diff(nx_api_req *r)
{
    enum MHD_Result res;
    const char *a = nx_api_param(r, "a"), *b = nx_api_param(r, "b");
    if (!a || !b)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameters 'a' and 'b' (the two profiles) are required");
    int64_t limit, all;
    if (nx_api_int_param(r, "limit", false, DIFF_DEFAULT_LIMIT, 0, DIFF_MAX_LIMIT, &limit, &res) < 0 ||
        nx_api_int_param(r, "all", false, 0, 0, 1, &all, &res) < 0)
        return res;
    nx_diff_options o = {.by = nx_api_param(r, "by"), .include_profiler = all == 1};
    if (o.by && !*o.by)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'by' must not be empty");
    const char *norm = nx_api_param(r, "normalize");
    if (norm && nx_diff_normalize_parse(norm, &o.normalize) != 0)
        return nx_api_error(r, MHD_HTTP_BAD_REQUEST, "parameter 'normalize' must be step, wall or none");
    char *a_dir = NULL, *b_dir = NULL;
    if (nx_api_profile_dir(r, a, &a_dir, &res) < 0)
        return res;
    if (nx_api_profile_dir(r, b, &b_dir, &res) < 0) {
        free(a_dir);
        return res;
    }
    res = answer(r, a, a_dir, b, b_dir, &o, limit);
    free(a_dir);
    free(b_dir);
    return res;
}
