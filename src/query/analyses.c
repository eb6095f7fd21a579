/*
 * analyses.c — the registry of analyses (analysis.h): the list, one line per
 * analysis, and what the CLI and the API share to run one.
 *
 * The list is an X-macro so that one line both declares an analysis's
 * descriptor (nx_analysis_<id>, defined in its query module) and puts it in
 * the table: adding an analysis is its file plus one line here.
 */
#include "query/analysis.h"

#include <inttypes.h>
#include <string.h>

#include "util/text.h"

/* X(id): the analysis nx_analysis_<id>, in name order (analysis.h). */
#define ANALYSES(X)                                                                                                    \
    X(breakdown) /* breakdown_analysis.c */                                                                           \
    X(insights)  /* insights.c */                                                                                      \
    X(ranks)     /* rank_stats.c */

#define DECLARE(id) extern const nx_analysis nx_analysis_##id;
ANALYSES(DECLARE)
#undef DECLARE

#define ENTRY(id) &nx_analysis_##id,
static const nx_analysis *const LIST[] = {ANALYSES(ENTRY)};
#undef ENTRY

#define N_LIST (sizeof LIST / sizeof LIST[0])

size_t nx_analysis_count(void) { return N_LIST; }

const nx_analysis *nx_analysis_at(size_t i) { return i < N_LIST ? LIST[i] : NULL; }

const nx_analysis *nx_analysis_find(const char *name)
{
    for (size_t i = 0; i < N_LIST; i++)
        if (strcmp(LIST[i]->name, name) == 0)
            return LIST[i];
    return NULL;
}

nx_analysis_call nx_analysis_call_new(const nx_analysis *a, nx_analysis_format format, bool safe_ints)
{
    nx_analysis_call c = {.format = format, .safe_ints = safe_ints};
    for (size_t i = 0; i < a->n_params; i++)
        c.args[i] = a->params[i].absent;
    return c;
}

int nx_analysis_param_parse(const nx_analysis_param *p, const char *text, int64_t *out, nx_error *err)
{
    int64_t v;
    if (nx_text_i64(text, &v) != 0) {
        nx_error_set(err, "%s '%s' is not a whole number", p->name, text);
        return NX_ANALYSIS_BAD_PARAM;
    }
    if (v < p->min || v > p->max) {
        nx_error_set(err, "%s '%s' is not in %" PRId64 "..%" PRId64, p->name, text, p->min, p->max);
        return NX_ANALYSIS_BAD_PARAM;
    }
    *out = v;
    return NX_ANALYSIS_OK;
}

int nx_analysis_run(const nx_analysis *a, const nx_analysis_call *call, nx_strbuf *out, nx_error *err)
{
    int rc = a->answer(call, out, err);
    if (rc == NX_ANALYSIS_OK && nx_strbuf_failed(out))
        return nx_error_set(err, "out of memory");
    return rc;
}
