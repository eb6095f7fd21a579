/*
 * analysis.h — the contract of an analysis: a question asked of one profile
 * whose answer the CLI prints (`nxprof <name> PROFILE_DIR ...`) and the HTTP
 * API serves (`GET /api/profiles/<profile>/<name>?...`), both from this one
 * descriptor, so that adding an analysis is one file in src/query/ plus one
 * line in the registry (analyses.c).
 *
 * Who does what
 *   - The analysis (its query module) reads the profile and renders its answer,
 *     as text or as JSON; it never prints, never exits and knows neither HTTP
 *     nor argv.
 *   - The registry (analyses.c) lists the analyses, finds one by name, reads a
 *     parameter's value (one rule for both surfaces) and runs an analysis.
 *   - The surfaces, src/cli/cmd_analysis.c and src/server/api_analysis.c, turn
 *     argv or a request into an nx_analysis_call, run it and deliver the
 *     answer or the error; nothing in them is particular to one analysis.
 *
 * Names
 *   `name` is at once the CLI command and the API path segment: lowercase
 *   letters, digits and '_', unique in the registry, kept in name order there
 *   (`nxprof --help` merges the analyses into its command list by name). A name
 *   must not be one of the CLI's other commands or the API's other routes of a
 *   profile: those are looked up first, and would hide the analysis.
 *
 * Parameters
 *   An analysis declares at most NX_ANALYSIS_MAX_PARAMS parameters, each an
 *   integer. The API reads parameter `p` from the query string (`?p=V`), the CLI
 *   from its option `--p V`; both read V with nx_analysis_param_parse, so one
 *   value means the same on both: util/text.h nx_text_i64's decimal form ("007",
 *   "+1", "-0" refused), within [min, max]. A parameter not given takes the value
 *   `absent`, which may lie outside [min, max] to mean "not given" (the
 *   breakdown's rank -1: every rank). The answer finds the values in
 *   nx_analysis_call.args, in the order the descriptor declares them.
 *
 * Answers
 *   answer() reads the profile `call->dir` and appends to `out` either the text
 *   a person reads (NX_ANALYSIS_TEXT: whole lines, each ending in '\n'; the CLI
 *   prints it as is) or one JSON value (NX_ANALYSIS_JSON, no newline after it:
 *   the API sends it as the body, the CLI prints it followed by '\n'). In JSON,
 *   call->safe_ints asks for integers beyond +-2^53 as decimal strings (the API,
 *   whose clients read numbers as doubles) rather than numbers (the CLI). One
 *   function gives both forms because reading the profile is the cost and the
 *   form only a choice made after it; an analysis whose answer has no such
 *   integers ignores the flag. A failed append need not be checked: the runner
 *   checks the buffer once (util/strbuf.h).
 *   It returns one of the codes below, with `err` saying why whenever it is not
 *   NX_ANALYSIS_OK. A message the analysis writes itself names the profile as
 *   call->name does (the API's profile name, or PROFILE_DIR as given on the
 *   CLI), never as call->dir (a real path the API must not reveal); a reader's
 *   message is passed on as it is (the API shortens the paths in it,
 *   server/api_internal.h nx_api_error). The surfaces map the codes:
 *
 *     code                        API    CLI exit   meaning
 *     NX_ANALYSIS_OK              200    0          *out holds the answer
 *     NX_ANALYSIS_BAD_PARAM       400    2          a parameter is malformed, out
 *                                                   of range, or cannot apply to
 *                                                   this profile
 *     NX_ANALYSIS_NOT_APPLICABLE  404    1          the profile lacks what the
 *                                                   analysis reads (a device
 *                                                   profile asked for ranks)
 *     NX_ANALYSIS_ERROR           500    1          the profile cannot be read, or
 *                                                   out of memory
 *
 *   The API's body is then {"error": err.msg}; the CLI prints "nxprof <name>:
 *   <err.msg>" on stderr (with the usage hint after a bad parameter). `out` may
 *   hold part of an answer after a failure; the caller frees it either way.
 */
#ifndef NX_QUERY_ANALYSIS_H
#define NX_QUERY_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

#define NX_ANALYSIS_MAX_PARAMS 4

enum {
    NX_ANALYSIS_OK = 0,
    NX_ANALYSIS_ERROR = -1,          /* == what nx_error_set returns, so `return nx_error_set(...)` reads */
    NX_ANALYSIS_BAD_PARAM = -2,
    NX_ANALYSIS_NOT_APPLICABLE = -3,
};

typedef enum nx_analysis_format { NX_ANALYSIS_TEXT, NX_ANALYSIS_JSON } nx_analysis_format;

/* One declared parameter (rules above). */
typedef struct nx_analysis_param {
    const char *name;                /* ?name=V, --name V */
    const char *arg;                 /* what V is, as the CLI's help shows it: "N", "K" */
    const char *help;                /* one line for the CLI's help, lowercase, no period */
    int64_t absent;                  /* the value when not given */
    int64_t min, max;                /* the values accepted */
} nx_analysis_param;

/* One run of an analysis: what to read, how to answer, the parameters' values. */
typedef struct nx_analysis_call {
    const char *dir;                 /* the profile directory read */
    const char *name;                /* the profile as messages name it */
    nx_analysis_format format;
    bool safe_ints;                  /* JSON: integers beyond +-2^53 as strings */
    int64_t args[NX_ANALYSIS_MAX_PARAMS]; /* per declared parameter, in order */
} nx_analysis_call;

typedef struct nx_analysis {
    const char *name;                /* the command and the API path segment */
    const char *summary;             /* one line for `nxprof --help`, lowercase, no period */
    /* The body of `nxprof <name> --help`, between the usage line and the
     * options (which the CLI writes from `params`): what the answer holds, what
     * profiles it applies to, and what is refused; lines of text, each
     * ending '\n'. */
    const char *help;
    const nx_analysis_param *params;
    size_t n_params;                 /* <= NX_ANALYSIS_MAX_PARAMS */
    int (*answer)(const nx_analysis_call *call, nx_strbuf *out, nx_error *err);
} nx_analysis;

/* The registry, in name order: its size, its i-th analysis (i < count), and
 * the analysis called `name` (NULL: none). */
size_t nx_analysis_count(void);
const nx_analysis *nx_analysis_at(size_t i);
const nx_analysis *nx_analysis_find(const char *name);

/* A call of `a` with every parameter at its `absent` value; dir and name
 * still to be set. */
nx_analysis_call nx_analysis_call_new(const nx_analysis *a, nx_analysis_format format, bool safe_ints);

/* Reads `text` as a value of parameter p (rules above) into *out: NX_ANALYSIS_OK,
 * or NX_ANALYSIS_BAD_PARAM with err saying "<name> '<text>' is not a whole
 * number" or "<name> '<text>' is not in <min>..<max>" (each surface puts its
 * own spelling of a parameter before it: "--" on the CLI, "parameter " in the
 * API). */
int nx_analysis_param_parse(const nx_analysis_param *p, const char *text, int64_t *out, nx_error *err);

/* Runs a->answer (contract above) and makes a failed append to `out` the
 * NX_ANALYSIS_ERROR "out of memory", so no surface has to look. */
int nx_analysis_run(const nx_analysis *a, const nx_analysis_call *call, nx_strbuf *out, nx_error *err);

#endif
