/*
 * barrier_table.c — CoreBarriers: one row per executed core-barrier instruction,
 * derived from the instruction records (no record kind of its own). Rules
 * (docs/processing.md, "CoreBarriers"):
 *
 * - A core barrier is an instruction whose program entry (INSTRUCTIONS) has the
 *   compiler opcode PSEUDO_CORE_BARRIER. Each of its instruction records is a row,
 *   in the pipeline's start order (so the table is sorted by start_ts).
 * - start_ts / end_ts / duration_ns: the record's (the engine reaches the barrier,
 *   waits, and goes on); engine_name: the engine's display name ("GpSimd", as in
 *   SemaphoreUpdate.update_source); compiler_pc, compiler_opcode and
 *   compiler_operands: the program entry's (compiler_pc null-free: the entry's pc
 *   when the program records none); pcore_idx: the record's.
 * - semaphore and id: the decimal integers after "semaphore=" and "id=" in the
 *   compiler operands (the operand text the compiler writes, e.g.
 *   "$S[45]>=16 $S[8]++@complete semaphore=9 id=1"). A barrier instruction whose
 *   operands lack either writes no rows; the run gets one Warning per such
 *   program instruction, with how many records it had.
 *
 * Memory: per program, one small entry per instruction, built at open.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"

#define BARRIER_OPCODE "PSEUDO_CORE_BARRIER"

#define BAR_COLS(X)                                                                                   \
    X(start_ts) X(end_ts) X(duration_ns) X(engine_name) X(id) X(semaphore) X(compiler_pc)             \
    X(compiler_opcode) X(compiler_operands) X(pcore_idx)

enum {
#define X(name) BC_##name,
    BAR_COLS(X)
#undef X
    BC_COUNT
};

enum { NOT_BARRIER, BARRIER, BAD_BARRIER };

typedef struct bar_instr {
    uint8_t kind;
    int64_t id, semaphore;
    uint64_t skipped;                /* BAD_BARRIER: records seen */
} bar_instr;

typedef struct bar_sink {
    nx_row r;
    size_t col[BC_COUNT];
    bar_instr **per_prog;            /* per program: one per instruction, or NULL (no barrier) */
    size_t n_progs;
} bar_sink;

static void bar_free(bar_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_progs; i++)
        free(s->per_prog[i]);
    free(s->per_prog);
    free(s);
}

/* The decimal integer after `key` in text (a key at the start or after a space); -1 when none. */
static int operand_int(const char *text, const char *key, int64_t *out)
{
    size_t k = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, ' '), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, k) != 0 || p[k] < '0' || p[k] > '9')
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(p + k, &end, 10);
        if (errno != 0 || (*end != '\0' && *end != ' '))
            return -1;
        *out = v;
        return 0;
    }
    return -1;
}

/* The barrier entries of program p, or NULL (and 0) when it has no barrier. */
static int build_prog(const nx_program *p, bar_instr **out)
{
    *out = NULL;
    for (size_t i = 0; i < p->n_instrs; i++) {
        const nx_prog_instr *in = &p->instrs[i];
        if (!in->compiler_opcode || strcmp(in->compiler_opcode, BARRIER_OPCODE) != 0)
            continue;
        if (!*out && !(*out = calloc(p->n_instrs, sizeof **out)))
            return -1;
        bar_instr *b = &(*out)[i];
        const char *ops = in->compiler_operands ? in->compiler_operands : "";
        b->kind = operand_int(ops, "id=", &b->id) == 0 && operand_int(ops, "semaphore=", &b->semaphore) == 0
                      ? BARRIER
                      : BAD_BARRIER;
    }
    return 0;
}

static int bar_open(const nx_process_ctx *ctx, void **state, nx_error *err)
{
    static const char *const names[] = {
#define X(name) #name,
        BAR_COLS(X)
#undef X
    };
    *state = NULL;
    bar_sink *s = calloc(1, sizeof *s);
    if (s)
        s->per_prog = calloc(ctx->n_progs + 1, sizeof *s->per_prog);
    if (!s || !s->per_prog) {
        free(s);
        snprintf(err->msg, sizeof err->msg, "CoreBarriers: out of memory");
        return -1;
    }
    s->n_progs = ctx->n_progs;
    bool any = false;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        if (build_prog(ctx->progs[p], &s->per_prog[p]) != 0) {
            bar_free(s);
            snprintf(err->msg, sizeof err->msg, "CoreBarriers: out of memory");
            return -1;
        }
        any |= s->per_prog[p] != NULL;
    }
    if (!any) {
        bar_free(s);
        return 0;   /* no program has a barrier: no table */
    }
    if (nx_row_open(&s->r, &ctx->dest, "CoreBarriers", err) != 0) {
        bar_free(s);
        return -1;
    }
    for (size_t i = 0; i < BC_COUNT; i++)
        s->col[i] = nx_row_col(&s->r, names[i]);
    *state = s;
    return 0;
}

static int bar_event(void *state, const nx_device_event *ev, nx_error *err)
{
    bar_sink *s = state;
    if (!s)
        return 0;
    const nx_device_trace *tr = ev->trace;
    bar_instr *table = s->per_prog[tr->prog_index];
    if (!table)
        return 0;
    const nx_prog_instr *in = ev->instr;
    bar_instr *b = &table[in - tr->prog->instrs];
    if (b->kind != BARRIER) {
        b->skipped += b->kind == BAD_BARRIER;
        return 0;
    }
    const size_t *c = s->col;
    nx_row *r = &s->r;
    if (nx_row_begin(r, err) != 0)
        return -1;
    nx_row_i64(r, c[BC_start_ts], ev->start_ns);
    nx_row_i64(r, c[BC_end_ts], ev->end_ns);
    nx_row_i64(r, c[BC_duration_ns], ev->end_ns - ev->start_ns);
    nx_row_str(r, c[BC_engine_name], nx_engine_display_name(in->engine));
    nx_row_i64(r, c[BC_id], b->id);
    nx_row_i64(r, c[BC_semaphore], b->semaphore);
    nx_row_i64(r, c[BC_compiler_pc], in->compiler_pc != NX_ABSENT ? in->compiler_pc : (int64_t)in->pc);
    nx_row_str(r, c[BC_compiler_opcode], in->compiler_opcode);
    nx_row_str(r, c[BC_compiler_operands], in->compiler_operands ? in->compiler_operands : "");
    nx_row_i64(r, c[BC_pcore_idx], ev->rec->pcore);
    return nx_row_end(r, err);
}

/* One Warning per barrier instruction without an id or semaphore that ran. */
static void warn_skipped(const bar_sink *s, const nx_process_ctx *ctx)
{
    for (size_t p = 0; p < s->n_progs; p++) {
        const bar_instr *table = s->per_prog[p];
        for (size_t i = 0; table && i < ctx->progs[p]->n_instrs; i++) {
            if (table[i].kind != BAD_BARRIER || table[i].skipped == 0)
                continue;
            const nx_prog_instr *in = &ctx->progs[p]->instrs[i];
            nx_cap_warn(ctx->warn, ctx->progs[p]->path, NX_CAP_NOWHERE, "Missing Data",
                        "CoreBarriers: %s instruction (engine %s, pc %" PRIu32 ") has no \"id=\" or "
                        "\"semaphore=\" in its compiler operands \"%s\"; its %" PRIu64 " record(s) are not written",
                        BARRIER_OPCODE, nx_engine_display_name(in->engine), in->pc,
                        in->compiler_operands ? in->compiler_operands : "", table[i].skipped);
        }
    }
}

static int bar_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    bar_sink *s = state;
    if (!s)
        return 0;
    warn_skipped(s, ctx);
    int rc = nx_row_close(&s->r, true, tables, err);
    bar_free(s);
    return rc;
}

static void bar_abort(void *state)
{
    bar_sink *s = state;
    if (!s)
        return;
    nx_row_discard(&s->r);
    bar_free(s);
}

const nx_device_sink nx_sink_core_barriers = {
    .name = "CoreBarriers",
    .kinds = NX_KIND_BIT(NX_REC_INSTRUCTION),
    .open = bar_open,
    .event = bar_event,
    .finish = bar_finish,
    .abort = bar_abort,
};
