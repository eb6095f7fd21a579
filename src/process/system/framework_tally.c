/*
 * framework_tally.c — what became of every element of one framework trace, so
 * that none is dropped silently (system_internal.h, nx_fw_tally): each element
 * is kept (a SystemProfileEvents row, by kind), kept as a name (M events naming
 * processes and threads, framework_names.c), not stored (an M event that gives
 * no name: one Warning per file with the count), or warned about (a Warning of
 * its own or in a per-file count). At the end of the file the tally says so in
 * one line on stderr, and adds the notices about the file's times: relative to
 * the trace start, or a displayTimeUnit other than "ms".
 */
#include "process/system/system_internal.h"

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

/* "nxprof process: <path>: kept N events (X: a, ...), warned W" on stderr. */
static void print_line(const char *path, const nx_fw_kept *k, uint64_t unnamed, uint64_t warned)
{
    uint64_t total = k->x + 2 * k->pairs + k->instants + k->counters + 2 * k->async_pairs + k->async_n +
                     k->flows + k->other + k->names;
    char later[64] = "";
    if (unnamed)
        snprintf(later, sizeof later, ", not stored yet %" PRIu64 " (M: %" PRIu64 ")", unnamed, unnamed);
    fprintf(stderr,
            "nxprof process: %s: kept %" PRIu64 " events (X: %" PRIu64 ", B/E: %" PRIu64 ", i: %" PRIu64
            ", C: %" PRIu64 ", b/e: %" PRIu64 ", n: %" PRIu64 ", s/t/f: %" PRIu64 ", other: %" PRIu64
            ", M names: %" PRIu64 ")%s, warned %" PRIu64 "\n",
            path, total, k->x, 2 * k->pairs, k->instants, k->counters, 2 * k->async_pairs, k->async_n, k->flows,
            k->other, k->names, later, warned);
}

void nx_fw_tally_finish(const nx_fw_tally *t, const nx_cap_warner *warn, const char *path, const nx_fw_kept *kept,
                        uint64_t warned, bool relative_ts, nx_system_result *res)
{
    if (t->skipped > SKIPPED_WARNINGS_MAX) {
        bool invalid = strcmp(t->later_category, "Invalid Data") == 0;
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, t->later_category,
                    invalid ? "%" PRIu64 " more elements of traceEvents could not be used as events; skipped"
                            : "%" PRIu64 " more events the source leaves out, like the ones above; skipped",
                    t->skipped - SKIPPED_WARNINGS_MAX);
    }
    if (t->unnamed)
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Not Stored",
                    "%" PRIu64 " metadata events (ph M) are not stored: they give no process or thread name, "
                    "labels or sort index",
                    t->unnamed);
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
    print_line(path, kept, t->unnamed, warned + t->skipped);
}

bool nx_fw_tally_relative(bool has_base, uint64_t stored, int64_t max_ns)
{
    return !has_base && stored > 0 && max_ns < RELATIVE_TS_LIMIT_NS;
}
