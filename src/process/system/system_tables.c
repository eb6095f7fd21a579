/*
 * system_tables.c — the entry of the system half of `process` (interface:
 * system_tables.h): SystemProfileEvents, CpuUsage, HostMemUsage,
 * SystemProfileHbmUsage and SystemProfileMetadata from a capture's system
 * profile, each written by its own file (system_internal.h lists them), and
 * what they share: the runtime TSV sources, instance ids and the time span.
 *
 * Sources, per session (capture.h): runtime_events.tsv, cpu_usage.tsv,
 * host_mem.tsv, device_mem.tsv (system_capture.h) and the framework traces
 * (capture/framework_source.h).
 * instance_id of every row is the session directory's `<instance-id>`; a
 * framework-only capture (framework traces directly in the capture root) has
 * none and uses "unknown".
 */
#include "process/system/system_tables.h"
#include "process/system/system_internal.h"

#include <stdio.h>
#include <string.h>

const char *nx_sys_instance_of(const nx_cap_session *s)
{
    return s->instance_id && s->instance_id[0] ? s->instance_id : "unknown";
}

bool nx_system_capture_present(const nx_capture *cap)
{
    for (size_t i = 0; i < cap->n_sessions; i++) {
        const nx_cap_session *s = &cap->sessions[i];
        if (s->runtime_events_path || s->cpu_usage_path || s->host_mem_path || s->device_mem_path ||
            s->n_chrome_traces)
            return true;
    }
    return false;
}

void nx_sys_span_add(nx_system_result *res, int64_t first, int64_t last)
{
    if (!res->any || first < res->first_ns)
        res->first_ns = first;
    if (!res->any || last > res->last_ns)
        res->last_ns = last;
    res->any = true;
}

int nx_sys_open_sources(const nx_capture *cap, nx_sys_kind kind, rt_source *src, size_t *n, nx_error *err)
{
    nx_error cerr = {0};
    for (size_t s = 0; s < cap->n_sessions; s++) {
        const nx_cap_session *ses = &cap->sessions[s];
        const char *path = kind == NX_SYS_RUNTIME_EVENTS ? ses->runtime_events_path
                           : kind == NX_SYS_CPU_USAGE    ? ses->cpu_usage_path
                           : kind == NX_SYS_HOST_MEM     ? ses->host_mem_path
                                                         : ses->device_mem_path;
        if (!path)
            continue;
        rt_source *x = &src[*n];
        x->session = s;
        x->path = path;
        if (nx_sys_reader_open(path, kind, &x->r, &cerr) != 0) {
            nx_error_set(err, "%s", cerr.msg);
            return -1;
        }
        (*n)++;
        int got = nx_sys_reader_next(x->r, &x->rec, &cerr);
        if (got < 0) {
            nx_error_set(err, "%s", cerr.msg);
            return -1;
        }
        x->has = got == 1;
    }
    return 0;
}

/* -------------------------------------------------------------------- entry -- */

int nx_system_tables_write(const nx_capture *cap, const nx_process_ctx *ctx, const nx_cap_warner *warn,
                           unsigned *tables, nx_system_result *res, nx_error *err)
{
    memset(res, 0, sizeof *res);
    nx_cap_warner none = {.fn = NULL, .ctx = NULL};
    if (!warn)
        warn = &none;
    if (nx_system_write_events(cap, ctx, warn, tables, res, err) != 0 ||
        nx_system_write_samples(cap, ctx, NX_SYS_CPU_USAGE, tables, res, err) != 0 ||
        nx_system_write_samples(cap, ctx, NX_SYS_HOST_MEM, tables, res, err) != 0 ||
        nx_system_write_samples(cap, ctx, NX_SYS_DEVICE_MEM, tables, res, err) != 0)
        return -1;
    nx_error perr = {0};
    if (nx_system_write_metadata(ctx, res, tables, &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        return -1;
    }
    return 0;
}

