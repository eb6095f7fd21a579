/*
 * nki.c — the simulated compiler's debug info for its NKI kernel (the program
 * file's NKI_FRAMES, NKI_ITERATIONS and NKI_INSTRUCTIONS) and its assembly
 * listing (ASSEMBLY). The workload says where each kernel instruction comes from
 * (frame, loop binding, line) before it builds it; every instruction of an NKI
 * op is then mapped there. Instructions outside NKI ops are never mapped, so a
 * profile's NKI coverage stays below 100%.
 */
#include <stdlib.h>
#include <string.h>

#include "synth/synth_internal.h"

int64_t sy_nki_frame(sy_builder *b, int64_t parent, const char *function, uint32_t call_line)
{
    sy_nki *k = &b->nki;
    if (k->n_frames == sizeof k->frames / sizeof k->frames[0]) {
        b->failed = true;
        return NX_ABSENT;
    }
    k->frames[k->n_frames] = (nx_prog_frame){parent, SY_NKI_FILE, function, call_line};
    return (int64_t)k->n_frames++;
}

int64_t sy_nki_loop(sy_builder *b, int64_t parent, const char *var, int64_t value, uint32_t line)
{
    sy_nki *k = &b->nki;
    if (!sy_grow(b, &k->iters, k->n_iters, &k->cap_iters, sizeof *k->iters))
        return NX_ABSENT;
    k->iters[k->n_iters] = (nx_prog_nki_iter){parent, value, var, SY_NKI_FILE, line};
    return (int64_t)k->n_iters++;
}

void sy_nki_at(sy_builder *b, int64_t frame, int64_t iter, uint32_t line)
{
    b->nki.frame = frame;
    b->nki.iter = iter;
    b->nki.line = line;
}

const char *sy_nki_note(sy_builder *b, const nx_prog_instr *in)
{
    sy_nki *k = &b->nki;
    if (k->frame == NX_ABSENT || !sy_grow(b, &k->maps, k->n_maps, &k->cap_maps, sizeof *k->maps))
        return "";
    k->maps[k->n_maps++] = (nx_prog_nki_instr){in->engine, in->pc, (uint32_t)k->frame, k->iter, SY_NKI_FILE,
                                               k->line};
    return sy_str(b, "flash_attn.py:%u", k->line);
}

static int by_engine_pc(const void *a, const void *b)
{
    const nx_prog_nki_instr *x = a, *y = b;
    if (x->engine != y->engine)
        return x->engine < y->engine ? -1 : 1;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* One assembly line per instruction, in program order (engine, pc), which is
 * also the compiler pc; operands name the BIR instruction, then the operand
 * text the instruction was given. */
static int fill_assembly(sy_builder *b, nx_program *p)
{
    if (p->n_instrs == 0)
        return 0;
    nx_prog_asm *lines = nx_arena_alloc(&b->arena, p->n_instrs * sizeof *lines);
    if (!lines)
        return -1;
    for (size_t i = 0; i < p->n_instrs; i++) {
        nx_prog_instr *in = &p->instrs[i];
        in->compiler_pc = (int64_t)i;
        const char *ops = in->compiler_operands && *in->compiler_operands ? in->compiler_operands : in->operands;
        lines[i] = (nx_prog_asm){in->engine, in->pc, (int64_t)i, in->compiler_opcode,
                                 sy_str(b, "name=%s%s%s", in->bir_instruction_name, ops && *ops ? " " : "",
                                        ops ? ops : "")};
    }
    b->nki.asm_lines = lines;
    p->asm_lines = lines, p->n_asm_lines = p->n_instrs;
    return 0;
}

int sy_nki_finish(sy_builder *b, nx_program *p)
{
    sy_nki *k = &b->nki;
    if (k->n_maps)
        qsort(k->maps, k->n_maps, sizeof *k->maps, by_engine_pc);
    p->nki_frames = k->frames, p->n_nki_frames = k->n_frames;
    p->nki_iters = k->iters, p->n_nki_iters = k->n_iters;
    p->nki_instrs = k->maps, p->n_nki_instrs = k->n_maps;
    return fill_assembly(b, p);
}

void sy_nki_free(sy_builder *b)
{
    free(b->nki.iters);
    free(b->nki.maps);
}
