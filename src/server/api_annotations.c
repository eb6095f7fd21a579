/*
 * api_annotations.c — a profile's saved annotations (profile/annotations.h,
 * docs/api.md "Annotations"):
 *   GET /api/profiles/<name>/annotations -> the document ({"version":1,"markers":[],
 *       "regions":[]} when none were saved); 500 naming the file when it is damaged;
 *   PUT the same path with the document as the body -> validated (400 with the
 *       member at fault), saved atomically, answered with the saved document.
 * The guard (request_guard.c) has already refused a PUT from another site and one
 * that is not application/json.
 */
#include <stdlib.h>

#include "profile/annotations.h"
#include "server/api_internal.h"

/* Answers the document *a as saved or loaded. */
static enum MHD_Result answer(nx_api_req *r, const nx_annotations *a)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_annotations_json(a, &b);
    if (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    return nx_api_json(r, MHD_HTTP_OK, &b);
}

enum MHD_Result nx_api_annotations_get(nx_api_req *r, const char *name)
{
    char *dir = NULL;
    enum MHD_Result result;
    if (nx_api_profile_dir(r, name, &dir, &result) != 0)
        return result;
    nx_annotations a;
    nx_error err = {0};
    if (nx_annotations_load(dir, &a, &err) < 0)
        result = nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    else
        result = answer(r, &a);
    nx_annotations_free(&a);
    free(dir);
    return result;
}

enum MHD_Result nx_api_annotations_put(nx_api_req *r, const char *name)
{
    char *dir = NULL;
    enum MHD_Result result;
    if (nx_api_profile_dir(r, name, &dir, &result) != 0)
        return result;
    nx_annotations a;
    nx_error err = {0};
    if (nx_annotations_parse(r->content, r->content_len, "the request body", &a, &err) < 0)
        result = nx_api_error(r, MHD_HTTP_BAD_REQUEST, "%s", err.msg);
    else if (nx_annotations_save(dir, &a, &err) < 0)
        result = nx_api_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", err.msg);
    else
        result = answer(r, &a);
    nx_annotations_free(&a);
    free(dir);
    return result;
}
