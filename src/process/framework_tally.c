/*
 * framework_tally.c — what became of every element of one framework trace, so
 * that none is dropped silently (system_internal.h, nx_fw_tally): each element
 * is kept (a SystemProfileEvents row), not stored yet (a phase no table holds
 * yet: one Warning per kind per file with the count), or warned about (a
 * Warning of its own or in a per-file count); M events naming processes and
 * threads are kept too, as names (framework_names.c). At the end of the file the tally
 * says so in one line on stderr, and adds the notices about the file's times:
 * relative to the trace start, or a displayTimeUnit other than "ms".
 */
#include "process/system_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Skipped elements given a Warning each, per file; the rest are counted in one. */
#define SKIPPED_WARNINGS_MAX 20

/* A ts below this many ns (10^12 µs, 11.6 days after the epoch) is taken as
 * counted from the trace start, when the file gives no base time: no profiler
 * ran in January 1970, and JAX's Perfetto JSON counts from its start. */
#define RELATIVE_TS_LIMIT_NS INT64_C(1000000000000000)

void nx_fw_tally_skipped(nx_fw_tally *t, const nx_cap_warner *warn, const char *path, uint64_t index,
                         uint64_t offset, const char *category, const char *reason)
{
    const char *cat = category ? category : "Invalid Data";
    if (t->skipped++ < SKIPPED_WARNINGS_MAX)
        nx_cap_warn(warn, path, offset, cat, "event #%" PRIu64 ": %s; skipped", index, reason);
    else   /* the count of the rest is Invalid Data as soon as one of them is */
        t->later_category = t->later_category && strcmp(t->later_category, cat) != 0 ? "Invalid Data" : cat;
}

void nx_fw_tally_unit(nx_fw_tally *t, const char *json)
{
    snprintf(t->unit, sizeof t->unit, "%s", json);
}

/* The kinds no table holds yet, with the phases that make them. */
static const struct {
    const char *phases, *what;
} not_stored[] = {
    {"iI", "instant"},
    {"C", "counter"},
    {"bneSTpF", "async"},
    {"stf", "flow"},
    {"M", "metadata"},
    {"PONDc(),vRV", "sample, object, mark, memory-dump or context"},
};

/* The kind of phase ph among not_stored (its index), or the last kind + 1 for any other. */
static size_t kind_of(char ph)
{
    size_t n = sizeof not_stored / sizeof not_stored[0];
    for (size_t k = 0; k < n; k++)
        if (ph && strchr(not_stored[k].phases, ph))
            return k;
    return n;
}

/* One Warning per kind of phase not stored, and the "(i: 5, s: 2)" list of them into line. */
static uint64_t warn_not_stored(const nx_fw_tally *t, const nx_cap_warner *warn, const char *path, char *line,
                                size_t cap)
{
    size_t n = sizeof not_stored / sizeof not_stored[0], used = 0;
    uint64_t total = 0;
    line[0] = '\0';
    for (size_t k = 0; k <= n; k++) {
        uint64_t count = 0;
        char phases[64] = "";
        for (unsigned ph = 1; ph < 256; ph++) {
            if (ph == 'X' || ph == 'B' || ph == 'E' || !t->seen[ph] || kind_of((char)ph) != k)
                continue;
            count += t->seen[ph];
            size_t pl = strlen(phases);
            snprintf(phases + pl, sizeof phases - pl, "%s%c", pl ? "/" : "", (char)ph);
            int w = snprintf(line + used, cap - used, "%s%c: %" PRIu64, used ? ", " : "", (char)ph, t->seen[ph]);
            used = w > 0 && (size_t)w < cap - used ? used + (size_t)w : used;
        }
        if (count == 0)
            continue;
        total += count;
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Not Stored",
                    "%" PRIu64 " %s events (ph %s) are not stored yet: no table holds them", count,
                    k < n ? not_stored[k].what : "unknown-phase", phases);
    }
    return total;
}

void nx_fw_tally_finish(const nx_fw_tally *t, const nx_cap_warner *warn, const char *path, uint64_t kept_x,
                        uint64_t pairs, uint64_t names, uint64_t warned, bool relative_ts, nx_system_result *res)
{
    if (t->skipped > SKIPPED_WARNINGS_MAX) {
        bool invalid = strcmp(t->later_category, "Invalid Data") == 0;
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, t->later_category,
                    invalid ? "%" PRIu64 " more elements of traceEvents could not be used as events; skipped"
                            : "%" PRIu64 " more events the source leaves out, like the ones above; skipped",
                    t->skipped - SKIPPED_WARNINGS_MAX);
    }
    char others[512];
    uint64_t later = warn_not_stored(t, warn, path, others, sizeof others);
    if (relative_ts) {
        res->relative_time = true;
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Relative Time",
                    "the file gives no absolute time (no baseTimeNanoseconds, every ts below 10^12 us): its events' "
                    "start_ts/end_ts count nanoseconds from the trace start, not from the Unix epoch");
    }
    if (t->unit[0] && strcmp(t->unit, "\"ms\"") != 0)
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Trace Format",
                    "displayTimeUnit is %s: it sets only how trace viewers label the axis; ts and dur are "
                    "microseconds, as the format defines, and are read as such",
                    t->unit);
    fprintf(stderr,
            "nxprof process: %s: kept %" PRIu64 " events (X: %" PRIu64 ", B/E: %" PRIu64 ", M names: %" PRIu64
            "), not stored yet %" PRIu64 "%s%s%s, warned %" PRIu64 "\n",
            path, kept_x + 2 * pairs + names, kept_x, 2 * pairs, names, later, later ? " (" : "", others,
            later ? ")" : "", warned + t->skipped);
}

bool nx_fw_tally_relative(bool has_base, uint64_t stored, int64_t max_ns)
{
    return !has_base && stored > 0 && max_ns < RELATIVE_TS_LIMIT_NS;
}
