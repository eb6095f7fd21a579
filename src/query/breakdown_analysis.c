/*
 * breakdown_analysis.c — the analysis "breakdown" (analysis.h): where each
 * device's time went, served to `nxprof breakdown` and GET
 * /api/profiles/<name>/breakdown. A system profile answers breakdown.h's
 * answer, a device profile (no SystemProfileEvents) engine_breakdown.h's; the
 * one analysis covers both so that a profile's page and its command need not
 * know which kind it is. Here are the parameters, that choice, and both
 * answers as text (their JSON is breakdown_json.c's and engine_breakdown.c's).
 */
#include <inttypes.h>

#include "profile/profile_table.h"
#include "query/analysis.h"
#include "query/breakdown.h"
#include "query/engine_breakdown.h"

enum { P_RANK, P_STEP, P_TOP };       /* PARAMS' order */

static const nx_analysis_param PARAMS[] = {
    [P_RANK] = {"rank", "N", "only the rows of rank N (worker_gid)", -1, 0, INT64_MAX},
    [P_STEP] = {"step", "N", "only the entries of steps numbered N (kernels stay the whole trace's)", -1, 0, INT64_MAX},
    [P_TOP] = {"top", "K", "kernels to list", 10, 1, 1000},
};

/* ---------------------------------------------------------------- text -- */

static double pct(int64_t part, int64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

static void entry_text(const nx_bd_entry *e, nx_strbuf *o)
{
    nx_strbuf_puts(o, e->device);
    if (e->rank >= 0)
        nx_strbuf_printf(o, ", rank %" PRId64, e->rank);
    if (e->step_name)
        nx_strbuf_printf(o, ", step %" PRId64 " (%s)", e->step, e->step_name);
    else
        nx_strbuf_puts(o, ", whole trace");
    const nx_bd_temporal *t = &e->t;
    nx_strbuf_printf(o, " [%" PRId64 ", %" PRId64 ") window %" PRId64 " ns\n", e->start_ns, e->end_ns, t->window_ns);
    nx_strbuf_printf(o,
                     "  time:      compute %" PRId64 " ns (%.1f%%), communication %" PRId64 " ns (%.1f%%), memory %" PRId64
                     " ns (%.1f%%), idle %" PRId64 " ns (%.1f%%)\n",
                     t->compute_ns, pct(t->compute_ns, t->window_ns), t->communication_ns,
                     pct(t->communication_ns, t->window_ns), t->memory_ns, pct(t->memory_ns, t->window_ns), t->idle_ns,
                     pct(t->idle_ns, t->window_ns));
    nx_strbuf_printf(o, "  overlap:   communication under compute %" PRId64 " ns", t->overlapped_comm_ns);
    if (t->overlap_pct >= 0)
        nx_strbuf_printf(o, " (%.1f%% of communication)\n", t->overlap_pct);
    else
        nx_strbuf_puts(o, " (no communication kernels)\n");
    const nx_bd_idle *i = &e->idle;
    nx_strbuf_printf(o,
                     "  idle:      host wait %" PRId64 " ns (%" PRId64 " gaps), kernel wait %" PRId64 " ns (%" PRId64
                     " gaps), other %" PRId64 " ns (%" PRId64 " gaps)\n",
                     i->host_wait_ns, i->host_wait_count, i->kernel_wait_ns, i->kernel_wait_count, i->other_ns,
                     i->other_count);
    nx_strbuf_puts(o, "  classes:  ");
    for (int c = 0; c < NX_BD_N_CLASSES; c++)
        nx_strbuf_printf(o, "%s %s %" PRId64 " rows %" PRId64 " ns", c ? "," : "", nx_breakdown_class_name(c),
                         e->class_count[c], e->class_ns[c]);
    const nx_bd_launch *l = &e->launch;
    nx_strbuf_printf(o,
                     "\n  launch:    %" PRId64 " kernels, %" PRId64 " linked to a launch; delay median %" PRId64
                     " ns, p95 %" PRId64 " ns, max %" PRId64 " ns, %" PRId64 " outliers (> %" PRId64 " ns); %" PRId64
                     " short kernels; %s\n",
                     l->kernels, l->linked, l->median_ns, l->p95_ns, l->max_ns, l->outliers, l->outlier_above_ns,
                     l->short_kernels, l->verdict);
    for (int k = 0; k < NX_BD_N_XFER; k++) {
        const nx_bd_xfer *x = &e->xfer[k];
        if (x->count)
            nx_strbuf_printf(o,
                             "  transfer:  %s %" PRId64 " rows, %" PRId64 " with bytes: %" PRId64 " bytes in %" PRId64
                             " ns, %.3f GB/s\n",
                             nx_breakdown_xfer_name(k), x->count, x->with_bytes, x->bytes, x->duration_ns, x->gbps);
    }
}

/* A system profile's entries, then its top kernels (with the spread across
 * ranks when there are several). */
static void system_text(const nx_breakdown *b, nx_strbuf *o)
{
    for (size_t i = 0; i < b->n_entries; i++)
        entry_text(&b->entries[i], o);
    if (!b->n_kernels)
        return;
    nx_strbuf_printf(o, "\ntop kernels by total time%s\n",
                     b->n_ranks > 1 ? " (spread: each rank's total, min / max / mean)" : "");
    for (size_t i = 0; i < b->n_kernels; i++) {
        const nx_bd_kernel *k = &b->kernels[i];
        nx_strbuf_printf(o, "  %" PRId64 " ns  %" PRId64 " x  mean %.0f  min %" PRId64 "  max %" PRId64, k->total_ns,
                         k->count, k->mean_ns, k->min_ns, k->max_ns);
        if (b->n_ranks > 1)
            nx_strbuf_printf(o, "  ranks %" PRId64 " / %" PRId64 " / %.0f", k->rank_min_ns, k->rank_max_ns,
                             k->rank_mean_ns);
        nx_strbuf_printf(o, "  %s  %s\n", nx_breakdown_class_name(k->cls), k->name);
    }
}

/* A device profile's window split, collectives, DMA and engines. */
static void engines_text(const nx_engine_breakdown *b, nx_strbuf *o)
{
    nx_strbuf_printf(o, "NeuronCore [%" PRId64 ", %" PRId64 ") window %" PRId64 " ns\n", b->start_ns, b->end_ns,
                     b->window_ns);
    nx_strbuf_printf(o,
                     "  time:      compute %" PRId64 " ns (%.1f%%), collectives %" PRId64 " ns (%.1f%%), DMA %" PRId64
                     " ns (%.1f%%), idle %" PRId64 " ns (%.1f%%)\n",
                     b->compute_ns, pct(b->compute_ns, b->window_ns), b->communication_ns,
                     pct(b->communication_ns, b->window_ns), b->memory_ns, pct(b->memory_ns, b->window_ns), b->idle_ns,
                     pct(b->idle_ns, b->window_ns));
    nx_strbuf_printf(o, "  overlap:   collectives under compute %" PRId64 " ns", b->overlapped_cc_ns);
    if (b->overlap_pct >= 0)
        nx_strbuf_printf(o, " (%.1f%% of %" PRId64 " ns in %" PRId64 " CcOp rows)\n", b->overlap_pct, b->cc_ns,
                         b->cc_count);
    else
        nx_strbuf_puts(o, " (no CcOp rows)\n");
    nx_strbuf_printf(o, "  DMA:       %" PRId64 " packets, %" PRId64 " bytes, busy %" PRId64 " ns, %.3f GB/s\n",
                     b->dma_count, b->dma_bytes, b->dma_busy_ns, b->dma_gbps);
    for (size_t i = 0; i < b->n_engines; i++) {
        const nx_eb_engine *e = &b->engines[i];
        nx_strbuf_printf(o, "  engine %-10s %" PRId64 " instructions, busy %" PRId64 " ns (%.1f%%), idle %" PRId64 " ns\n",
                         e->name, e->count, e->busy_ns, pct(e->busy_ns, b->window_ns), e->idle_ns);
    }
}

/* ------------------------------------------------------------ analysis -- */

/* A device profile (no SystemProfileEvents): its engines, collectives and DMA. */
static int engines_answer(const nx_analysis_call *call, nx_strbuf *out, nx_error *err)
{
    nx_engine_breakdown b;
    int rc = nx_engine_breakdown_read(call->dir, &b, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return nx_error_set(err, "%s has neither SystemProfileEvents nor Instruction", call->name),
               NX_ANALYSIS_NOT_APPLICABLE;
    if (rc != 0)
        return NX_ANALYSIS_ERROR;
    if (call->format == NX_ANALYSIS_JSON)
        nx_engine_breakdown_json(&b, call->safe_ints, out);
    else
        engines_text(&b, out);
    nx_engine_breakdown_free(&b);
    return NX_ANALYSIS_OK;
}

static int breakdown_answer(const nx_analysis_call *call, nx_strbuf *out, nx_error *err)
{
    int64_t rank = call->args[P_RANK], step = call->args[P_STEP];
    nx_breakdown b;
    int rc = nx_breakdown_read(call->dir, rank, step, (size_t)call->args[P_TOP], &b, err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        /* The filters are a system profile's: a device profile given one is
         * refused rather than answered unfiltered. */
        if (rank >= 0 || step >= 0)
            return nx_error_set(err, "rank, step: %s is not a system profile", call->name), NX_ANALYSIS_BAD_PARAM;
        return engines_answer(call, out, err);
    }
    if (rc != 0)
        return NX_ANALYSIS_ERROR;
    if (call->format == NX_ANALYSIS_JSON)
        nx_breakdown_json(&b, call->safe_ints, out);
    else
        system_text(&b, out);
    nx_breakdown_free(&b);
    return NX_ANALYSIS_OK;
}

const nx_analysis nx_analysis_breakdown = {
    .name = "breakdown",
    .summary = "where each device's time went, per rank and step (compute, communication, idle causes, launches)",
    .help = "Where each device of a system profile spent its time, per rank over the rank's trace\n"
            "span and per step (ProfilerStep#N, or a slice with args.step_num): compute,\n"
            "communication (not under compute), memory and idle, which add up to the window;\n"
            "communication under compute and the overlap percentage; idle time by cause (host\n"
            "wait, kernel wait, other); kernel classes; launch delays (kernel start - launch) with\n"
            "median, p95, outliers, short kernels and a CPU-/GPU-bound verdict; memcpy/memset\n"
            "bytes and bandwidth; the top kernels by total time with their spread across ranks.\n"
            "On a NeuronCore's device profile: each engine's busy and idle time, compute\n"
            "(instructions) > collectives (CcOp) > DMA (DmaPacket) > idle over the profile's\n"
            "window, collectives under compute, DMA bytes and bandwidth; --rank and --step are\n"
            "refused there (exit 2), and a profile with neither SystemProfileEvents nor\n"
            "Instruction is refused (exit 1).\n"
            "Definitions and thresholds: docs/analyses.md. Times are integer ns.\n",
    .params = PARAMS,
    .n_params = sizeof PARAMS / sizeof PARAMS[0],
    .answer = breakdown_answer,
};
