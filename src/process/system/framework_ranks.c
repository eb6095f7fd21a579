/*
 * framework_ranks.c — the rank of each framework trace (system_internal.h,
 * nx_fw_ranks), which becomes SystemProfileEvents.worker_gid of its rows and
 * scopes its flow ids, so that several ranks' traces in one capture never
 * share a track or a flow arrow.
 *
 * A file's rank, first rule that gives one:
 *   1. its top-level "distributedInfo" object's "rank" (Kineto writes it),
 *      a non-negative integer; any other value is an "Invalid Data" Warning
 *      and is ignored;
 *   2. its base name: "rank" then an optional '-' or '_' then decimal digits,
 *      not preceded by a letter ("rank-3.json", "trace_rank_3.json.gz",
 *      "worker0.rank1.pt.trace.json"); the first such run counts;
 *   3. when no file of its session has a rank by 1 or 2 and the session's
 *      files name two or more hosts (a top-level "hostname" string, which
 *      the XSpace source gives from XSpace.hostnames): the index of its host
 *      among the session's hosts in byte order;
 *   else none (worker_gid null). When 1 and 2 disagree, a "Conflicting Rank"
 *   Warning names the file and both values, and distributedInfo wins.
 * Top-level members arrive while a file is read, in whatever order the file
 * has them (Kineto writes distributedInfo before traceEvents, other writers
 * may not), so ranks are resolved after the last file, before rows are
 * written, as baseTimeNanoseconds is applied.
 */
#include "process/system/system_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

typedef struct fw_rank_file {
    int64_t info_rank;           /* distributedInfo.rank; -1: none */
    char *host;                  /* top-level "hostname" (JSON text of the string), or NULL */
    int64_t rank;                /* resolved; -1: none */
} fw_rank_file;

struct nx_fw_ranks {
    fw_rank_file *v;
    size_t n;
};

nx_fw_ranks *nx_fw_ranks_new(void)
{
    return calloc(1, sizeof(nx_fw_ranks));
}

void nx_fw_ranks_free(nx_fw_ranks *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].host);
    free(r->v);
    free(r);
}

/* File `file`'s entry, the table grown to hold it; NULL when out of memory. */
static fw_rank_file *file_entry(nx_fw_ranks *r, uint32_t file)
{
    if (file >= r->n) {
        size_t n = (size_t)file + 1;
        fw_rank_file *v = realloc(r->v, n * sizeof *v);
        if (!v)
            return NULL;
        for (size_t i = r->n; i < n; i++)
            v[i] = (fw_rank_file){.info_rank = -1, .host = NULL, .rank = -1};
        r->v = v;
        r->n = n;
    }
    return &r->v[file];
}

/* A non-negative decimal integer s[0..len) of at most 18 digits, else -1. */
static int64_t parse_rank(const char *s, size_t len)
{
    if (len == 0 || len > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int nx_fw_ranks_toplevel(nx_fw_ranks *r, uint32_t file, const nx_chrome_toplevel *tl, const char *path,
                         const nx_cap_warner *warn)
{
    if (!tl->key.s || !tl->json.s)
        return 0;
    bool info = strcmp(tl->key.s, "distributedInfo") == 0, host = strcmp(tl->key.s, "hostname") == 0;
    if (!info && !host)
        return 0;
    fw_rank_file *f = file_entry(r, file);
    if (!f)
        return -1;
    if (host) {
        if (tl->json.s[0] != '"' || f->host)
            return 0;
        return (f->host = strdup(tl->json.s)) ? 0 : -1;
    }
    const char *v;
    size_t vl;
    if (!nx_json_member(tl->json.s, tl->json.len, "rank", &v, &vl))
        return 0;
    f->info_rank = parse_rank(v, vl);
    if (f->info_rank < 0)
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Invalid Data",
                    "distributedInfo.rank is %.*s, not a non-negative integer; ignored", (int)(vl > 64 ? 64 : vl), v);
    return 0;
}

int64_t nx_fw_rank_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char *p = base; (p = strstr(p, "rank")) != NULL; p += 4) {
        bool letter_before = p > base && ((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));
        const char *d = p + 4;
        d += *d == '-' || *d == '_';
        size_t n = strspn(d, "0123456789");
        int64_t v = letter_before ? -1 : parse_rank(d, n);
        if (v >= 0)
            return v;
    }
    return -1;
}

/* Files [first, end) of one session: ranks by distributedInfo, then by name;
 * true when any file got one. */
static bool rank_by_info_or_name(nx_fw_ranks *r, const nx_cap_session *s, size_t first, const nx_cap_warner *warn)
{
    bool any = false;
    for (size_t k = 0; k < s->n_chrome_traces; k++) {
        fw_rank_file *f = &r->v[first + k];
        int64_t named = nx_fw_rank_from_name(s->chrome_traces[k]);
        if (f->info_rank >= 0 && named >= 0 && named != f->info_rank)
            nx_cap_warn(warn, s->chrome_traces[k], NX_CAP_NOWHERE, "Conflicting Rank",
                        "the file name gives rank %" PRId64 " but distributedInfo.rank is %" PRId64
                        "; rank %" PRId64 " (distributedInfo) is used",
                        named, f->info_rank, f->info_rank);
        f->rank = f->info_rank >= 0 ? f->info_rank : named;
        any = any || f->rank >= 0;
    }
    return any;
}

static int cmp_host(const void *a, const void *b)
{
    return strcmp((*(fw_rank_file *const *)a)->host, (*(fw_rank_file *const *)b)->host);
}

/* Files [first, first + n) of one session that name a host: the index of
 * their host among the session's distinct hosts in byte order, when there are
 * two or more. -1 when out of memory. */
static int rank_by_host(nx_fw_ranks *r, size_t first, size_t n)
{
    fw_rank_file **by = malloc((n ? n : 1) * sizeof *by);
    if (!by)
        return -1;
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (r->v[first + k].host)
            by[m++] = &r->v[first + k];
    qsort(by, m, sizeof *by, cmp_host);
    bool several = m > 1 && strcmp(by[0]->host, by[m - 1]->host) != 0;
    int64_t host = 0;
    for (size_t i = 0; several && i < m; i++) {
        host += i > 0 && strcmp(by[i - 1]->host, by[i]->host) != 0;
        by[i]->rank = host;
    }
    free(by);
    return 0;
}

int nx_fw_ranks_resolve(nx_fw_ranks *r, const nx_capture *cap, const nx_cap_warner *warn)
{
    size_t total = 0;
    for (size_t s = 0; s < cap->n_sessions; s++)
        total += cap->sessions[s].n_chrome_traces;
    if (total > 0 && !file_entry(r, (uint32_t)(total - 1)))
        return -1;
    size_t first = 0;
    for (size_t s = 0; s < cap->n_sessions; s++) {
        const nx_cap_session *ss = &cap->sessions[s];
        if (!rank_by_info_or_name(r, ss, first, warn) && rank_by_host(r, first, ss->n_chrome_traces) != 0)
            return -1;
        first += ss->n_chrome_traces;
    }
    return 0;
}

int64_t nx_fw_rank_of(const nx_fw_ranks *r, uint32_t file)
{
    return file < r->n ? r->v[file].rank : -1;
}
