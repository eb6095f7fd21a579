/*
 * kernel_tables.c — the NKI source attribution tables (KernelStackFrames,
 * KernelIterationVariables, KernelInstructions) from the programs' NKI sections,
 * and AssemblyInstruction from their ASSEMBLY sections (no trace records).
 * Written when the pipeline finishes; a table whose sections no program has is
 * not written (nx_row_close() skips a table without rows).
 *
 * Ids are profile-wide: a program's frame, binding and instruction indices are
 * offset by the counts of the programs before it (capture order), so the ids of
 * two programs never collide. The NKI tables repeat each program's rows for
 * every physical core its traces have (pcore_idx 0..n-1, as DmaQueuesInfo), so
 * KernelInstructions joins Instruction on (kernel_instruction_name, pcore_idx).
 * Depths count from 1 at the outermost frame (binding). docs/processing.md has
 * the rules per column.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"

/* Profile-wide id offsets of one program. */
typedef struct kt_base {
    int64_t frame, iter, instr;
} kt_base;

static kt_base base_of(const nx_process_ctx *ctx, size_t prog)
{
    kt_base b = {0, 0, 0};
    for (size_t i = 0; i < prog; i++) {
        b.frame += (int64_t)ctx->progs[i]->n_nki_frames;
        b.iter += (int64_t)ctx->progs[i]->n_nki_iters;
        b.instr += (int64_t)ctx->progs[i]->n_instrs;
    }
    return b;
}

/* parent + base, or NX_ABSENT (null) at a root. */
static int64_t rebase(int64_t parent, int64_t base)
{
    return parent == NX_ABSENT ? NX_ABSENT : parent + base;
}

static int write_frames(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "KernelStackFrames", err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "stack_frame_id"), c_fn = nx_row_col(&r, "fully_qualified_function_name"),
           c_parent = nx_row_col(&r, "parent_stack_frame_id"), c_core = nx_row_col(&r, "pcore_idx"),
           c_file = nx_row_col(&r, "file_path"), c_line = nx_row_col(&r, "line_number");
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        int64_t base = base_of(ctx, p).frame;
        for (uint32_t core = 0; core < ctx->prog_pcores[p]; core++)
            for (size_t i = 0; i < g->n_nki_frames; i++) {
                const nx_prog_frame *f = &g->nki_frames[i];
                if (nx_row_begin(&r, err) != 0)
                    goto fail;
                nx_row_i64(&r, c_id, base + (int64_t)i);
                nx_row_opt_str(&r, c_fn, f->function_name);
                nx_row_opt_i64(&r, c_parent, rebase(f->parent, base));
                nx_row_i64(&r, c_core, core);
                nx_row_opt_str(&r, c_file, f->file_name);
                nx_row_i64(&r, c_line, f->line);
                if (nx_row_end(&r, err) != 0)
                    goto fail;
            }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int write_iterations(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "KernelIterationVariables", err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "iteration_variable_id"), c_name = nx_row_col(&r, "variable_name"),
           c_value = nx_row_col(&r, "variable_value"), c_parent = nx_row_col(&r, "parent_iteration_variable_id"),
           c_core = nx_row_col(&r, "pcore_idx"), c_file = nx_row_col(&r, "file_path"),
           c_line = nx_row_col(&r, "line_number");
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        int64_t base = base_of(ctx, p).iter;
        for (uint32_t core = 0; core < ctx->prog_pcores[p]; core++)
            for (size_t i = 0; i < g->n_nki_iters; i++) {
                const nx_prog_nki_iter *v = &g->nki_iters[i];
                if (nx_row_begin(&r, err) != 0)
                    goto fail;
                nx_row_i64(&r, c_id, base + (int64_t)i);
                nx_row_opt_str(&r, c_name, v->name);
                nx_row_i64(&r, c_value, v->value);
                nx_row_opt_i64(&r, c_parent, rebase(v->parent, base));
                nx_row_i64(&r, c_core, core);
                nx_row_opt_str(&r, c_file, v->file_name);
                nx_row_i64(&r, c_line, v->line);
                if (nx_row_end(&r, err) != 0)
                    goto fail;
            }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

/* Depth of every record of a parent chain (parents come first): 1 at a root.
 * records: n records of `stride` bytes (NULL when n is 0), each with its int64
 * parent at byte `parent_at`. */
static int64_t *chain_depths(const void *records, size_t n, size_t stride, size_t parent_at)
{
    int64_t *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int64_t parent;
        memcpy(&parent, (const char *)records + i * stride + parent_at, sizeof parent);
        d[i] = parent == NX_ABSENT ? 1 : d[parent] + 1;
    }
    return d;
}

static int write_program_instrs(nx_row *r, const nx_process_ctx *ctx, size_t p, nx_error *err)
{
    const nx_program *g = ctx->progs[p];
    kt_base base = base_of(ctx, p);
    int64_t *fd = chain_depths(g->nki_frames, g->n_nki_frames, sizeof *g->nki_frames, offsetof(nx_prog_frame, parent));
    int64_t *vd = chain_depths(g->nki_iters, g->n_nki_iters, sizeof *g->nki_iters, offsetof(nx_prog_nki_iter, parent));
    int rc = fd && vd ? 0 : nx_error_set(err, "KernelInstructions: out of memory");
    size_t c_name = nx_row_col(r, "kernel_instruction_name"), c_frame = nx_row_col(r, "stack_frame_id"),
           c_fdepth = nx_row_col(r, "stack_frame_depth"), c_iter = nx_row_col(r, "iteration_variables_id"),
           c_idepth = nx_row_col(r, "iteration_variable_depth"), c_core = nx_row_col(r, "pcore_idx"),
           c_file = nx_row_col(r, "file_path"), c_line = nx_row_col(r, "line_number");
    for (uint32_t core = 0; rc == 0 && core < ctx->prog_pcores[p]; core++)
        for (size_t i = 0; rc == 0 && i < g->n_nki_instrs; i++) {
            const nx_prog_nki_instr *m = &g->nki_instrs[i];
            const nx_prog_instr *in = nx_program_find_instr(g, m->engine, m->pc);
            if ((rc = nx_row_begin(r, err)) != 0)
                break;
            nx_row_str(r, c_name, in->kernel_instruction_name);
            nx_row_i64(r, c_frame, base.frame + m->frame);
            nx_row_i64(r, c_fdepth, fd[m->frame]);
            nx_row_opt_i64(r, c_iter, rebase(m->iteration, base.iter));
            nx_row_opt_i64(r, c_idepth, m->iteration == NX_ABSENT ? NX_ABSENT : vd[m->iteration]);
            nx_row_i64(r, c_core, core);
            nx_row_opt_str(r, c_file, m->file_name);
            nx_row_i64(r, c_line, m->line);
            rc = nx_row_end(r, err);
        }
    free(fd);
    free(vd);
    return rc;
}

static int write_instructions(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "KernelInstructions", err) != 0)
        return -1;
    int rc = 0;
    for (size_t p = 0; rc == 0 && p < ctx->n_progs; p++)
        if (ctx->progs[p]->n_nki_instrs)
            rc = write_program_instrs(&r, ctx, p, err);
    return nx_row_finish(&r, rc, tables, err);
}

static int write_assembly(const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "AssemblyInstruction", err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "instruction_id"), c_op = nx_row_col(&r, "compiler_opcode"),
           c_operands = nx_row_col(&r, "compiler_operands"), c_pc = nx_row_col(&r, "compiler_pc");
    for (size_t p = 0; p < ctx->n_progs; p++) {
        const nx_program *g = ctx->progs[p];
        int64_t base = base_of(ctx, p).instr;
        for (size_t i = 0; i < g->n_asm_lines; i++) {
            const nx_prog_asm *a = &g->asm_lines[i];
            const nx_prog_instr *in = nx_program_find_instr(g, a->engine, a->pc);
            if (nx_row_begin(&r, err) != 0)
                goto fail;
            nx_row_i64(&r, c_id, base + (int64_t)(in - g->instrs));
            nx_row_str(&r, c_op, a->opcode);
            nx_row_str(&r, c_operands, a->operands);
            nx_row_i64(&r, c_pc, a->compiler_pc);
            if (nx_row_end(&r, err) != 0)
                goto fail;
        }
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int kt_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    (void)state;
    bool nki = false, assembly = false;
    for (size_t p = 0; p < ctx->n_progs; p++) {
        nki |= ctx->progs[p]->n_nki_frames + ctx->progs[p]->n_nki_iters + ctx->progs[p]->n_nki_instrs > 0;
        assembly |= ctx->progs[p]->n_asm_lines > 0;
    }
    if (nki && (write_frames(ctx, tables, err) != 0 || write_iterations(ctx, tables, err) != 0 ||
                write_instructions(ctx, tables, err) != 0))
        return -1;
    return assembly ? write_assembly(ctx, tables, err) : 0;
}

const nx_device_sink nx_sink_kernel_tables = {
    .name = "Kernel and assembly tables",
    .kinds = 0,
    .finish = kt_finish,
};
