/*
 * program_validate_nki.c — the rules of the program file's NKI debug info
 * (NKI_FRAMES, NKI_ITERATIONS, NKI_INSTRUCTIONS) and of its assembly listing
 * (ASSEMBLY), shared by the reader and the writer like the rest of
 * program_validate.c. Chains (frames to their callers, loop bindings to their
 * enclosing loops) point to earlier records only, so they cannot cycle and a
 * reader can compute depths in one pass.
 */
#include <inttypes.h>

#include "capture/capture_util.h"
#include "capture/program_internal.h"

/* parent is NX_ABSENT or the index of an earlier record. */
static bool parent_ok(int64_t parent, size_t i)
{
    return parent == NX_ABSENT || (parent >= 0 && (uint64_t)parent < i);
}

static int check_chains(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    for (size_t i = 0; i < p->n_nki_frames; i++) {
        const nx_prog_frame *f = &p->nki_frames[i];
        if (!parent_ok(f->parent, i))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_FRAMES, i, 0,
                                    "parent %" PRId64 "; expected -1 or the index of an earlier frame", f->parent);
        if (!f->function_name || !*f->function_name)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_FRAMES, i, 12, "empty function name");
    }
    for (size_t i = 0; i < p->n_nki_iters; i++) {
        const nx_prog_nki_iter *v = &p->nki_iters[i];
        if (!parent_ok(v->parent, i))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_ITERATIONS, i, 0,
                                    "parent %" PRId64 "; expected -1 or the index of an earlier binding",
                                    v->parent);
        if (!v->name || !*v->name)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_ITERATIONS, i, 16, "empty loop variable name");
    }
    return 0;
}

static int check_nki_instr(const nx_program *p, size_t i, const char *path, const prog_loc *loc,
                           nx_error *err)
{
    const nx_prog_nki_instr *m = &p->nki_instrs[i];
    if (i > 0) {
        const nx_prog_nki_instr *prev = &p->nki_instrs[i - 1];
        if (m->engine < prev->engine || (m->engine == prev->engine && m->pc <= prev->pc))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_INSTRUCTIONS, i, 0,
                                    "(engine %u, pc %" PRIu32 ") follows (engine %u, pc %" PRIu32
                                    "); expected records sorted by engine then strictly increasing pc",
                                    m->engine, m->pc, prev->engine, prev->pc);
    }
    const nx_prog_instr *in = nx_prog_lookup_instr(p, m->engine, m->pc);
    if (!in)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_INSTRUCTIONS, i, m->engine >= NX_ENGINE_COUNT ? 4 : 0,
                                "engine %u / pc %" PRIu32 " is not an instruction of the program",
                                m->engine, m->pc);
    if (!in->kernel_instruction_name || !*in->kernel_instruction_name)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_INSTRUCTIONS, i, 0,
                                "instruction (engine %u, pc %" PRIu32 ") has no kernel_instruction_name, "
                                "which KernelInstructions needs to name it", m->engine, m->pc);
    if (m->frame >= p->n_nki_frames)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_INSTRUCTIONS, i, 8,
                                "frame %" PRIu32 " out of range (NKI_FRAMES has %zu records)", m->frame,
                                p->n_nki_frames);
    if (m->iteration != NX_ABSENT && (m->iteration < 0 || (uint64_t)m->iteration >= p->n_nki_iters))
        return nx_prog_fail_rec(err, path, loc, NX_SEC_NKI_INSTRUCTIONS, i, 24,
                                "iteration %" PRId64 " out of range (expected -1 or 0..%zu, NKI_ITERATIONS "
                                "has %zu records)", m->iteration, p->n_nki_iters, p->n_nki_iters);
    return 0;
}

static int check_asm(const nx_program *p, size_t i, const char *path, const prog_loc *loc, nx_error *err)
{
    const nx_prog_asm *a = &p->asm_lines[i];
    if (a->compiler_pc < 0 || (i > 0 && a->compiler_pc <= p->asm_lines[i - 1].compiler_pc))
        return nx_prog_fail_rec(err, path, loc, NX_SEC_ASSEMBLY, i, 16,
                                "compiler_pc %" PRId64 "; expected >= 0 and above the previous record's",
                                a->compiler_pc);
    const nx_prog_instr *in = nx_prog_lookup_instr(p, a->engine, a->pc);
    if (!in)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_ASSEMBLY, i, a->engine >= NX_ENGINE_COUNT ? 4 : 0,
                                "engine %u / pc %" PRIu32 " is not an instruction of the program",
                                a->engine, a->pc);
    if (in->compiler_pc != NX_ABSENT && in->compiler_pc != a->compiler_pc)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_ASSEMBLY, i, 16,
                                "compiler_pc %" PRId64 " but instruction (engine %u, pc %" PRIu32
                                ") records compiler_pc %" PRId64, a->compiler_pc, a->engine, a->pc,
                                in->compiler_pc);
    if (!a->opcode || !*a->opcode)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_ASSEMBLY, i, 8, "empty opcode");
    return 0;
}

int nx_prog_validate_nki(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    if (check_chains(p, path, loc, err) != 0)
        return -1;
    for (size_t i = 0; i < p->n_nki_instrs; i++)
        if (check_nki_instr(p, i, path, loc, err) != 0)
            return -1;
    for (size_t i = 0; i < p->n_asm_lines; i++)
        if (check_asm(p, i, path, loc, err) != 0)
            return -1;
    return 0;
}
