/*
 * system_events.c — SystemProfileEvents: the runtime events of every session
 * (runtime_events.tsv) and the framework events (framework_events.c) merged
 * into one table in start order.
 *
 * SystemProfileEvents — one row per
 *   - runtime event (a line of runtime_events.tsv): name, start_ts/end_ts as
 *     written, duration_ns = end - start, trace_event_source = its source
 *     (neuron_rt / neuron_hw), process_id/thread_id = pid/tid, nc_idx and
 *     worker_gid (null when empty), flow_id = the flow ids as decimal strings
 *     (null when none), extra_attributes_json = the attributes as a JSON object
 *     of strings ("{}" when none), pcore_idx and framework_stream_id null;
 *   - framework event: every event of a framework trace that has a time, with
 *     trace_event_source "framework" (M events give names, framework_names.c, not
 *     rows; an M event that gives no name is counted in one "Not Stored"
 *     Warning per file). Slices — complete events (ph "X") and matched B/E
 *     pairs — run from start_ts = ts to end_ts = ts + dur (X; a missing dur is
 *     0) or the E's ts; every other kind is one row too, its kind said by the
 *     "ph" member that starts its extra_attributes_json (slices have none):
 *       i/I instants, C counters, s/t/f flows, n async instants and any other
 *       phase (R, N, O, D, P, c, ...): start_ts = end_ts = ts, duration 0;
 *       b/e async pairs: one row from the b's ts to the e's (below).
 *     Times are Unix ns: the reader converts µs to ns exactly, and when the
 *     file's top level has "baseTimeNanoseconds" that value is added to every
 *     time of the file (docs/capture-format.md); otherwise ts is taken as Unix µs.
 *     name = the event's name ("" when absent; for a pair, the B's or b's; a
 *     counter with an "id" gets " <id>" appended, as Chrome names its series).
 *     process_id/thread_id: a numeric pid/tid as is; a string holding a decimal
 *     int64 ("1234", "-5") as that number; any other string s as
 *     -1 - (XXH3_64bits(s) >> 1), a negative number no OS id can collide with,
 *     the same for the same string; absent: 0. The original string is kept in
 *     extra_attributes_json ("pid"/"tid"). An async row's thread_id is its
 *     track instead: -1 - (XXH3_64bits("async\x1f" cat "\x1f" name) >> 1), one
 *     track per (pid, cat, name); its original tid is kept as "tid" (a number
 *     or a string as written) and "thread_name": the name labels the track.
 *     extra_attributes_json = a JSON object with, in this order: "ph" (not for
 *     slices), "cat" (string, when the event has one), "pid"/"tid" (when they
 *     were strings; an async row's "tid" always), "id" (not slices: the id's
 *     text, a number in decimal), "s" (an instant's scope), "bp" (a flow's
 *     binding point), "flow_in"/"flow_out": true (a slice's, when set), "args"
 *     (the event's args object, compact, when present; for a pair the
 *     begin's), "args_truncated": true (when args exceeded the reader's 64 KiB
 *     cap; one Warning per file), "thread_name" (an async row's track), then
 *     "end_args" (a pair's E or e args when present and not {}).
 *     framework_stream_id = a slice's args.stream (its number text, or a
 *     string's content) when args has a top-level "stream" member.
 *     flow_id = a list: for a slice, [args.flow_id] (the synth writes it to
 *     link framework steps to runtime flows), else [args.correlation] (Kineto
 *     gives a cuda_runtime launch and the GPU kernel or memcpy it started the
 *     same "correlation" number, the pair its ac2g flow arrows link), then
 *     "<cat>:<bind_id>" when it has a bind_id (flow v2; cat "" gives
 *     ":<bind_id>"); for a flow event (s, t, f) with an id, ["<cat>:<id>"]; else
 *     null. The keys travel as one text with 0x1F between them (that byte in a
 *     cat or id becomes U+FFFD) and are written by put_framework_flows; in a
 *     file with a rank each key is written "r<rank>:<key>", as every rank
 *     numbers its correlations alike.
 *     worker_gid = the file's rank (framework_ranks.c: distributedInfo.rank,
 *     else a file name like rank-N, else a rank per host), null without one.
 *     nc_idx, pcore_idx null.
 *   B/E matching, per framework file, per (process_id, thread_id) as a stack, as
 *   Chrome's viewer does: an E closes the latest open B of its thread. Async
 *   b/e likewise per (process_id, cat, id), an absent id counting as "": an e
 *   closes the latest open b of its cat and id, so b's of one id nest. An n
 *   goes on the track of the latest open b of its cat and id (thread_name: that
 *   b's name), else on its own name's track. An E (e) with no open B (b), a B
 *   (b) still open at the end of its file, and an E (e) earlier than its B (b)
 *   are dropped; each kind gives one Warning per file with the count (category
 *   "Invalid Data"). An X with a negative dur is dropped likewise.
 *   id = the row's position in the table, from 0. When a track nests deeper
 *   than the timeline samples apart (profile/nesting.h NX_NESTING_LEVELS), one
 *   Warning (category "Deep Nesting") says how many tracks and how deep.
 *   Order: rows sorted by start_ts; ties keep runtime events before framework
 *   events, runtime events in session order then line order, framework events
 *   in file order (session order, then file name, then position in the file).
 *   The runtime TSVs are sorted already (the reader enforces it) and are merged
 *   streaming. Chrome traces are not in time order, so their events are
 *   buffered (104 bytes plus name and attribute text each) and sorted; above
 *   NX_FRAMEWORK_SORT_BUDGET bytes the buffer is spilled as a sorted run
 *   (event_runs.h, framework_buffer.c) and the runs are merged at the end, so
 *   memory is bounded whatever the traces' size. B and b events still open
 *   stay in the buffer across a spill (capped at NX_FRAMEWORK_MEMORY_LIMIT bytes; above
 *   it processing fails naming the file). A file's baseTimeNanoseconds, which
 *   Kineto writes after traceEvents, is added to its events in the buffer at
 *   the end of the file and to its spilled runs as they are merged.
 */
#include "process/system/system_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/row.h"
#include "profile/nesting.h"
#include "profile/timeline_index.h"
#include "util/run_control.h"
#include "util/strbuf.h"

typedef struct ev_cols {
    size_t id, name, start, end, dur, source, instance, pid, tid, nc, worker, flow, stream, extra;
} ev_cols;

/* flow ids "12<sep>13" as a list of strings, each after `prefix` (none when
 * flows is NULL or ""). False when out of memory. */
static bool put_flow_ids(nx_row *r, size_t c, const char *flows, char sep, const char *prefix, nx_strbuf *tmp,
                         const char ***ptrs, size_t *pcap)
{
    if (!flows || !flows[0])
        return true;
    size_t n = 1;
    for (const char *p = flows; *p; p++)
        n += *p == sep;
    if (n > *pcap) {
        const char **np = realloc(*ptrs, n * sizeof *np);
        if (!np)
            return false;
        *ptrs = np;
        *pcap = n;
    }
    /* Each key as prefix, key, NUL; the pointers are set once tmp stops growing. */
    tmp->len = 0;
    for (const char *p = flows;; p++) {
        const char *end = strchr(p, sep);
        size_t len = end ? (size_t)(end - p) : strlen(p);
        nx_strbuf_puts(tmp, prefix);
        nx_strbuf_append(tmp, p, len);
        nx_strbuf_putc(tmp, '\0');
        if (!end)
            break;
        p = end;
    }
    if (nx_strbuf_failed(tmp))
        return false;
    const char *q = tmp->data;
    for (size_t k = 0; k < n; k++, q += strlen(q) + 1)
        (*ptrs)[k] = q;
    nx_row_list_str(r, c, *ptrs, n);
    return true;
}

/* A framework event's flow_id: its keys (framework_kinds.c, nx_fw_flows), null
 * when none; scoped to its file's rank ("r<N>:<key>") when the file has one,
 * since every rank numbers its correlations from the same start. */
static bool put_framework_flows(nx_row *r, size_t c, const nx_event_record *e, int64_t rank, nx_strbuf *tmp,
                                const char ***ptrs, size_t *pcap)
{
    char prefix[32] = "";
    if (rank >= 0)
        snprintf(prefix, sizeof prefix, "r%" PRId64 ":", rank);
    return put_flow_ids(r, c, e->flow, NX_FW_FLOW_SEP, prefix, tmp, ptrs, pcap);
}

/* Framework file number `file` of the capture, in the order they are read. */
static const char *chrome_path(const nx_capture *cap, uint32_t file)
{
    for (size_t s = 0; s < cap->n_sessions; s++) {
        if (file < cap->sessions[s].n_chrome_traces)
            return cap->sessions[s].chrome_traces[file];
        file -= (uint32_t)cap->sessions[s].n_chrome_traces;
    }
    return "a framework trace";   /* not reached: every file number comes from that order */
}

/* nx_fw_next, dropping with a Warning each event whose start or end (after its
 * file's baseTimeNanoseconds) is not a Unix ns time a row may hold:
 * 0..NX_UNIX_NS_MAX, the bound of device records, so that no duration or
 * span computed from the rows can wrap. */
static int fw_next_in_range(fw_buffer *b, size_t *fi, nx_event_record *out, const nx_capture *cap,
                            const nx_cap_warner *warn, nx_error *err)
{
    for (;;) {
        int got = nx_fw_next(b, fi, out, err);
        if (got != 1 || (out->start >= 0 && out->end <= NX_UNIX_NS_MAX))
            return got;
        nx_cap_warn(warn, chrome_path(cap, out->file), out->offset, "Invalid Data",
                    "the event \"%s\" runs from %" PRId64 " to %" PRId64 " ns (Unix ns, after any "
                    "baseTimeNanoseconds; an int64 limit stands for a time beyond it), outside 0..%" PRId64
                    "; dropped", out->name, out->start, out->end, NX_UNIX_NS_MAX);
    }
}


/* One Warning when some track's call stack nests past the levels the timeline samples
 * apart (profile/nesting.h NX_NESTING_LEVELS), so that a view showing fewer of the
 * deepest events when zoomed out is explained. Read from the index just written;
 * without one (rows out of start order) there are no levels and nothing to say. */
static void warn_folded_levels(const char *dir, const nx_cap_warner *warn)
{
    nx_tlx *x;
    if (!warn->fn || nx_tlx_open(dir, "SystemProfileEvents", &x, NULL) != 0)
        return;
    uint64_t tracks = 0;
    uint32_t deepest = 0;
    for (size_t t = 0; t < nx_tlx_track_count(x); t++) {
        uint32_t d;
        if (nx_tlx_track_max_depth(x, t, &d) && d > NX_NESTING_LEVELS - 1) {
            tracks++;
            deepest = d > deepest ? d : deepest;
        }
    }
    nx_tlx_close(x);
    if (tracks == 0)
        return;
    char msg[320];
    snprintf(msg, sizeof msg,
             "%" PRIu64 " track(s) hold events deeper than depth %u (the deepest at depth %u): the timeline samples "
             "their events from depth %u down as one level, one per pixel, so a zoomed-out view draws only some of "
             "them (depth and self time stay exact)",
             tracks, NX_NESTING_LEVELS - 1, deepest, NX_NESTING_LEVELS - 1);
    warn->fn(warn->ctx, "SystemProfileEvents", NX_CAP_NOWHERE, "Deep Nesting", msg);
}

int nx_system_write_events(const nx_capture *cap, const nx_process_ctx *ctx, const nx_cap_warner *warn,
                        unsigned *tables, nx_system_result *res, nx_error *err)
{
    fw_buffer fw;
    rt_source *src = NULL;
    size_t nsrc = 0;
    nx_strbuf tmp = NX_STRBUF_INIT, attrs = NX_STRBUF_INIT;
    const char **ptrs = NULL;
    size_t pcap = 0;
    nx_row r = {0};
    bool row_open = false;
    nx_error cerr = {0};
    nx_error perr = {0};
    int rc = -1;

    if (!nx_fw_init(&fw, ctx->dest.dir)) {
        nx_error_set(err, "SystemProfileEvents: out of memory");
        goto out;
    }
    if (nx_fw_read_all(cap, warn, &fw, res, err) != 0)
        goto out;
    if (nx_fw_ranks_resolve(fw.ranks, cap, warn) != 0) {
        nx_error_set(err, "SystemProfileEvents: out of memory");
        goto out;
    }
    int stopped = nx_run_stopped();   /* the sort is done: the last moment before writing */
    if (stopped) {
        nx_run_stopped_message(stopped, err);
        goto out;
    }
    src = calloc(cap->n_sessions ? cap->n_sessions : 1, sizeof *src);
    if (!src) {
        nx_error_set(err, "SystemProfileEvents: out of memory");
        goto out;
    }
    if (nx_sys_open_sources(cap, NX_SYS_RUNTIME_EVENTS, src, &nsrc, err) != 0)
        goto out;

    nx_run_phase("system-events");
    if (nx_row_open(&r, &ctx->dest, "SystemProfileEvents", &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        goto out;
    }
    row_open = true;
    ev_cols c = {
        .id = nx_row_col(&r, "id"), .name = nx_row_col(&r, "name"), .start = nx_row_col(&r, "start_ts"),
        .end = nx_row_col(&r, "end_ts"), .dur = nx_row_col(&r, "duration_ns"),
        .source = nx_row_col(&r, "trace_event_source"), .instance = nx_row_col(&r, "instance_id"),
        .pid = nx_row_col(&r, "process_id"), .tid = nx_row_col(&r, "thread_id"), .nc = nx_row_col(&r, "nc_idx"),
        .worker = nx_row_col(&r, "worker_gid"), .flow = nx_row_col(&r, "flow_id"),
        .stream = nx_row_col(&r, "framework_stream_id"), .extra = nx_row_col(&r, "extra_attributes_json"),
    };
    size_t fi = 0;
    int64_t id = 0;
    nx_event_record fe;
    int fw_has = fw_next_in_range(&fw, &fi, &fe, cap, warn, err);
    for (;;) {
        if (fw_has < 0)
            goto out;
        rt_source *best = NULL;
        for (size_t i = 0; i < nsrc; i++)
            if (src[i].has && (!best || src[i].rec.u.runtime.start_ns < best->rec.u.runtime.start_ns))
                best = &src[i];
        bool take_fw = fw_has && (!best || fe.start < best->rec.u.runtime.start_ns);
        if (!best && !take_fw)
            break;
        if (nx_row_begin(&r, &perr) != 0)
            goto row_fail;
        nx_row_i64(&r, c.id, id++);
        if (take_fw) {
            const nx_event_record *e = &fe;
            nx_row_str(&r, c.name, e->name);
            nx_row_i64(&r, c.start, e->start);
            nx_row_i64(&r, c.end, e->end);
            nx_row_i64(&r, c.dur, e->end - e->start);
            nx_row_str(&r, c.source, "framework");
            nx_row_str(&r, c.instance, nx_sys_instance_of(&cap->sessions[e->session]));
            nx_row_i64(&r, c.pid, e->pid);
            nx_row_i64(&r, c.tid, e->tid);
            int64_t rank = nx_fw_rank_of(fw.ranks, e->file);
            if (rank >= 0)
                nx_row_i64(&r, c.worker, rank);
            if (!put_framework_flows(&r, c.flow, e, rank, &tmp, &ptrs, &pcap)) {
                nx_error_set(err, "SystemProfileEvents: out of memory");
                goto out;
            }
            if (e->stream)
                nx_row_str(&r, c.stream, e->stream);
            if (nx_fw_names_extend(fw.names, e->file, e->pid, e->tid, e->json, &attrs)) {
                if (nx_strbuf_failed(&attrs)) {
                    nx_error_set(err, "SystemProfileEvents: out of memory");
                    goto out;
                }
                nx_row_strn(&r, c.extra, attrs.data, attrs.len);
            } else {
                nx_row_str(&r, c.extra, e->json);
            }
            nx_sys_span_add(res, e->start, e->end);
        } else {
            const nx_sys_runtime_event *e = &best->rec.u.runtime;
            nx_row_str(&r, c.name, e->name);
            nx_row_i64(&r, c.start, e->start_ns);
            nx_row_i64(&r, c.end, e->end_ns);
            nx_row_i64(&r, c.dur, e->end_ns - e->start_ns);
            nx_row_str(&r, c.source, e->source);
            nx_row_str(&r, c.instance, nx_sys_instance_of(&cap->sessions[best->session]));
            nx_row_i64(&r, c.pid, e->pid);
            nx_row_i64(&r, c.tid, e->tid);
            if (e->nc_idx != NX_SYS_NULL)
                nx_row_i64(&r, c.nc, e->nc_idx);
            if (e->worker_gid != NX_SYS_NULL)
                nx_row_i64(&r, c.worker, e->worker_gid);
            bool flows_ok = put_flow_ids(&r, c.flow, e->flow_ids, ',', "", &tmp, &ptrs, &pcap);
            attrs.len = 0;
            nx_sys_attributes_to_json(e->attributes, &attrs);
            if (!flows_ok || nx_strbuf_failed(&attrs)) {
                nx_error_set(err, "SystemProfileEvents: out of memory");
                goto out;
            }
            nx_row_strn(&r, c.extra, attrs.data, attrs.len);
            nx_sys_span_add(res, e->start_ns, e->end_ns);
        }
        if (nx_row_end(&r, &perr) != 0)
            goto row_fail;
        if (take_fw)
            fw_has = fw_next_in_range(&fw, &fi, &fe, cap, warn, err);
        if (!take_fw) {
            int got = nx_sys_reader_next(best->r, &best->rec, &cerr);
            if (got < 0) {
                nx_error_set(err, "%s", cerr.msg);
                goto out;
            }
            best->has = got == 1;
        }
    }
    res->events = (uint64_t)id;
    row_open = false;
    if (nx_row_close(&r, true, tables, &perr) != 0) {
        nx_error_set(err, "%s", perr.msg);
        goto out;
    }
    warn_folded_levels(ctx->dest.dir, warn);
    rc = 0;
    goto out;
row_fail:
    nx_error_set(err, "%s", perr.msg);
out:
    if (row_open)
        nx_row_discard(&r);
    for (size_t i = 0; i < nsrc; i++)
        nx_sys_reader_close(src[i].r);
    free(src);
    nx_fw_free(&fw);
    free(ptrs);
    nx_strbuf_free(&tmp);
    nx_strbuf_free(&attrs);
    return rc;
}
