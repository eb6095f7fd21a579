/*
 * program_validate.c — the program file's semantic rules (ranges, sort order,
 * cross references), shared by the reader and the writer; see program_internal.h.
 */
#include <inttypes.h>
#include <stdio.h>

#include "capture/capture_util.h"
#include "capture/program_internal.h"

static const char *const SECTION_NAMES[NX_SEC_LAST + 1] = {
    "", "STRINGS", "PROGRAM", "HARDWARE", "INSTRUCTIONS", "DMA_QUEUES", "DMA_DESCRIPTORS",
    "TENSORS", "SEMAPHORES", "COLLECTIVES", "CC_STREAMS", "STACK_FRAMES", "MEMORY_ALLOCATIONS",
    [NX_SEC_NKI_FRAMES] = "NKI_FRAMES", [NX_SEC_NKI_ITERATIONS] = "NKI_ITERATIONS",
    [NX_SEC_NKI_INSTRUCTIONS] = "NKI_INSTRUCTIONS", [NX_SEC_ASSEMBLY] = "ASSEMBLY",
};

int nx_prog_fail_rec(nx_error *err, const char *path, const prog_loc *loc, int sec, size_t index,
                    unsigned field_off, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (loc) {
        uint64_t off = loc->offset[sec] + (uint64_t)index * loc->record_size[sec] + field_off;
        return nx_cap_fail_at(err, path, off, "%s record %zu: %s", SECTION_NAMES[sec], index, msg);
    }
    return nx_cap_fail(err, path, "%s record %zu: %s", SECTION_NAMES[sec], index, msg);
}

static bool sem_ok(const nx_program *p, uint16_t s)
{
    return s == NX_NO_SEMAPHORE || s < p->n_semaphores;
}

static int check_hardware(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    /* Every Metadata field these feed is required, so zero means a broken writer. */
    const uint64_t u64s[] = {
#define X(name) p->hw.name,
        NX_PROG_HW_U64S(X)
#undef X
    };
    const char *const u64_names[] = {
#define X(name) #name,
        NX_PROG_HW_U64S(X)
#undef X
    };
    for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++)
        if (u64s[i] == 0)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_HARDWARE, 0, PROG_HW_U64S + 8 * (unsigned)i,
                            "%s is 0; expected a positive value", u64_names[i]);
    const uint32_t u32s[] = {p->hw.tensor_rows, p->hw.tensor_cols, p->hw.vector_channels,
                             p->hw.scalar_channels, p->hw.gpsimd_channels,
                             p->hw.dma_engines_per_neuroncore, p->hw.sbuf_partitions, p->hw.psum_banks};
    const char *const u32_names[] = {"tensor_rows", "tensor_cols", "vector_channels", "scalar_channels",
                                     "gpsimd_channels", "dma_engines_per_neuroncore",
                                     "sbuf_partitions", "psum_banks"};
    for (size_t i = 0; i < sizeof u32s / sizeof u32s[0]; i++)
        if (u32s[i] == 0)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_HARDWARE, 0, PROG_HW_U32S + 4 * (unsigned)i,
                            "%s is 0; expected a positive value", u32_names[i]);
    return 0;
}

/* Optional integers are NX_ABSENT (-1) or non-negative. */
static int check_instr_ints(const nx_program *p, size_t i, const char *path, const prog_loc *loc,
                            nx_error *err)
{
    const nx_prog_instr *in = &p->instrs[i];
    const int64_t v[] = {
#define X(name) in->name,
        NX_PROG_INSTR_INTS(X)
#undef X
    };
    const char *const names[] = {
#define X(name) #name,
        NX_PROG_INSTR_INTS(X)
#undef X
    };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        if (v[k] < NX_ABSENT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, PROG_INSTR_INTS + 8 * (unsigned)k,
                            "%s is %" PRId64 "; expected -1 (absent) or a non-negative value",
                            names[k], v[k]);
    if (in->stack_frame_id != NX_ABSENT && (uint64_t)in->stack_frame_id >= p->n_frames)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, PROG_INSTR_INTS + 40,
                        "stack_frame_id %" PRId64 " out of range (program has %zu frames)",
                        in->stack_frame_id, p->n_frames);
    return 0;
}

static int check_instr(const nx_program *p, size_t i, const char *path, const prog_loc *loc,
                       nx_error *err)
{
    const nx_prog_instr *in = &p->instrs[i];
    if (in->engine >= NX_ENGINE_COUNT)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, 4,
                        "engine %u out of range (expected 0..%d)", in->engine, NX_ENGINE_COUNT - 1);
    if (i > 0) {
        const nx_prog_instr *prev = &p->instrs[i - 1];
        if (in->engine < prev->engine || (in->engine == prev->engine && in->pc <= prev->pc))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, 0,
                            "(engine %u, pc %" PRIu32 ") follows (engine %u, pc %" PRIu32
                            "); expected records sorted by engine then strictly increasing pc",
                            in->engine, in->pc, prev->engine, prev->pc);
    }
    if (in->tensor_instruction_type > (NX_TENSOR_REGULAR | NX_TENSOR_TRANSPOSE))
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, 5,
                        "tensor_instruction_type %u has unknown bits (expected 0..3)",
                        in->tensor_instruction_type);
    if (in->performance_mode > 2)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, 6,
                        "performance_mode %u out of range (expected 0..2)", in->performance_mode);
    if (!sem_ok(p, in->wait_semaphore))
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, 8,
                        "wait_semaphore %u out of range (program has %zu semaphores; 65535 = none)",
                        in->wait_semaphore, p->n_semaphores);
    if (!sem_ok(p, in->signal_semaphore))
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, 10,
                        "signal_semaphore %u out of range (program has %zu semaphores; 65535 = none)",
                        in->signal_semaphore, p->n_semaphores);
    if (!in->opcode || !*in->opcode)
        return nx_prog_fail_rec(err, path, loc, NX_SEC_INSTRUCTIONS, i, PROG_INSTR_STRINGS,
                        "empty opcode; every instruction needs one");
    return check_instr_ints(p, i, path, loc, err);
}

static int check_queues(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    if (p->n_queues > 0xFFFF)
        return nx_cap_fail(err, path, "%zu DMA queues; at most 65535 fit the trace's u16 queue field",
                           p->n_queues);
    for (size_t i = 0; i < p->n_queues; i++) {
        const nx_prog_queue *q = &p->queues[i];
        if (!q->name || !*q->name)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_QUEUES, i, 0, "empty queue name");
        if (q->type >= NX_DMAQ_COUNT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_QUEUES, i, 8,
                            "queue type %u out of range (expected 0..%d)", q->type, NX_DMAQ_COUNT - 1);
        if (q->owner_engine >= NX_ENGINE_COUNT && q->owner_engine != NX_ENGINE_NONE)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_QUEUES, i, 9,
                            "owner engine %u out of range (expected 0..4 or 255)", q->owner_engine);
    }
    return 0;
}

static int check_descs(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    for (size_t i = 0; i < p->n_descs; i++) {
        const nx_prog_dma_desc *d = &p->descs[i];
        if (d->queue >= p->n_queues)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_DESCRIPTORS, i, 0,
                            "queue %u out of range (program has %zu queues)", d->queue, p->n_queues);
        if (!sem_ok(p, d->completion_semaphore))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_DESCRIPTORS, i, 2,
                            "completion semaphore %u out of range (program has %zu semaphores)",
                            d->completion_semaphore, p->n_semaphores);
        if (d->is_transpose > 1 && d->is_transpose != 0xFF)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_DESCRIPTORS, i, 4,
                            "is_transpose %u; expected 0, 1 or 255", d->is_transpose);
        if (d->trigger < NX_ABSENT || d->completion < NX_ABSENT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_DMA_DESCRIPTORS, i, d->trigger < NX_ABSENT ? 16 : 24,
                            "negative trigger/completion; expected -1 (absent) or >= 0");
    }
    return 0;
}

static int check_named(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    for (size_t i = 0; i < p->n_tensors; i++)
        if (!p->tensors[i].name || !*p->tensors[i].name)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_TENSORS, i, 0, "empty tensor name");
    if (p->n_semaphores > 0xFFFF)
        return nx_cap_fail(err, path, "%zu semaphores; at most 65535 (65535 itself means none)",
                           p->n_semaphores);
    for (size_t i = 0; i < p->n_semaphores; i++)
        if (!p->semaphores[i].name || !*p->semaphores[i].name)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_SEMAPHORES, i, 0, "empty semaphore name");
    for (size_t i = 0; i < p->n_frames; i++)
        if (p->frames[i].parent != NX_ABSENT &&
            (p->frames[i].parent < 0 || (uint64_t)p->frames[i].parent >= i))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_STACK_FRAMES, i, 0,
                            "parent %" PRId64 "; expected -1 or the index of an earlier frame",
                            p->frames[i].parent);
    return 0;
}

static int check_collectives(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    for (size_t i = 0; i < p->n_collectives; i++) {
        const nx_prog_collective *c = &p->collectives[i];
        if (!c->operation || !*c->operation)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_COLLECTIVES, i, 0, "empty operation");
        if (c->trigger_engine >= NX_ENGINE_COUNT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_COLLECTIVES, i, 72,
                            "trigger engine %u out of range (expected 0..4)", c->trigger_engine);
        if (c->op_id < 0 || c->num_elements < 0 || c->stream_id < 0 || c->stream_index < 0)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_COLLECTIVES, i, 16,
                            "op_id, num_elements, stream_id and stream_index must be >= 0");
        if (c->input_size < NX_ABSENT || c->output_size < NX_ABSENT || c->replica_group_id < NX_ABSENT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_COLLECTIVES, i, 48,
                            "input_size, output_size, replica_group_id: expected -1 or >= 0");
    }
    return 0;
}

uint64_t nx_prog_alloc_capacity(const nx_prog_hardware *hw, unsigned memory)
{
    if (memory == NX_MEM_SBUF)
        return hw->sbuf_partition_bytes;
    return hw->psum_banks ? hw->psum_partition_bytes / hw->psum_banks : 0;
}

/* p->instrs is already checked to be sorted by (engine, pc), and engine_first
 * is not filled yet (writer), so this searches the whole array. */
const nx_prog_instr *nx_prog_lookup_instr(const nx_program *p, unsigned engine, uint32_t pc)
{
    size_t lo = 0, hi = p->n_instrs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const nx_prog_instr *m = &p->instrs[mid];
        if (m->engine < engine || (m->engine == engine && m->pc < pc))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_instrs && p->instrs[lo].engine == engine && p->instrs[lo].pc == pc ? &p->instrs[lo] : NULL;
}

/* MEMORY_ALLOCATIONS: memory kind, bank, partition range, bytes within one
 * partition's (bank's) capacity, and both ends of the live range naming
 * instructions of the program. Whether allocations live at the same time fit
 * together is not checked: that depends on the order instructions run in. */
static int check_allocs(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    for (size_t i = 0; i < p->n_allocs; i++) {
        const nx_prog_alloc *a = &p->allocs[i];
        if (!a->name || !*a->name)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 0, "empty allocation name");
        if (a->memory >= NX_MEM_COUNT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 4,
                            "memory %u out of range (expected 0 SBUF or 1 PSUM)", a->memory);
        if (a->memory == NX_MEM_SBUF && a->bank != NX_NO_BANK)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 5,
                            "bank %u on an SBUF allocation (expected 255: SBUF has no banks)", a->bank);
        if (a->memory == NX_MEM_PSUM && a->bank >= p->hw.psum_banks)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 5,
                            "bank %u out of range (HARDWARE psum_banks is %" PRIu32 ": expected 0..%" PRIu32 ")",
                            a->bank, p->hw.psum_banks, p->hw.psum_banks - 1);
        if (a->partition_count == 0)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 8,
                            "partition_count 0; expected at least 1");
        if ((uint32_t)a->first_partition + a->partition_count > p->hw.sbuf_partitions)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 6,
                            "first_partition %u + partition_count %u exceeds HARDWARE sbuf_partitions %" PRIu32
                            " (partitions %u..%u do not all exist)",
                            a->first_partition, a->partition_count, p->hw.sbuf_partitions,
                            a->first_partition, (unsigned)a->first_partition + a->partition_count - 1);
        uint64_t cap = nx_prog_alloc_capacity(&p->hw, a->memory);
        if (a->bytes_per_partition == 0 || a->bytes_per_partition > cap)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 24,
                            "bytes_per_partition %" PRIu64 " out of range (expected 1..%" PRIu64 ", the %s)",
                            a->bytes_per_partition, cap,
                            a->memory == NX_MEM_SBUF ? "capacity of an SBUF partition (sbuf_partition_bytes)"
                                                     : "capacity of a PSUM bank in one partition "
                                                       "(psum_partition_bytes / psum_banks)");
        if (a->end_address != 0 && (a->end_address < a->bytes_per_partition || a->end_address > cap))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, 20,
                            "end_address %" PRIu32 " out of range (expected 0, not recorded, or %" PRIu64
                            "..%" PRIu64 ": bytes_per_partition up to the capacity)",
                            a->end_address, a->bytes_per_partition, cap);
        if (!nx_prog_lookup_instr(p, a->live_engine, a->live_pc))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, a->live_engine >= NX_ENGINE_COUNT ? 10 : 12,
                            "live_engine %u / live_pc %" PRIu32 " is not an instruction of the program",
                            a->live_engine, a->live_pc);
        if (!nx_prog_lookup_instr(p, a->free_engine, a->free_pc))
            return nx_prog_fail_rec(err, path, loc, NX_SEC_MEMORY_ALLOCATIONS, i, a->free_engine >= NX_ENGINE_COUNT ? 11 : 16,
                            "free_engine %u / free_pc %" PRIu32 " is not an instruction of the program",
                            a->free_engine, a->free_pc);
    }
    return 0;
}

int nx_prog_validate(const nx_program *p, const char *path, const prog_loc *loc, nx_error *err)
{
    if (check_hardware(p, path, loc, err) != 0)
        return -1;
    for (size_t i = 0; i < p->n_instrs; i++)
        if (check_instr(p, i, path, loc, err) != 0)
            return -1;
    if (check_queues(p, path, loc, err) != 0 || check_descs(p, path, loc, err) != 0 ||
        check_named(p, path, loc, err) != 0 || check_collectives(p, path, loc, err) != 0 ||
        check_allocs(p, path, loc, err) != 0 || nx_prog_validate_nki(p, path, loc, err) != 0)
        return -1;
    const int64_t hdr[] = {p->header.cc_participant_count, p->header.neuroncore_count,
                           p->header.logical_neuroncore_count, p->header.pcore_count_per_lnc,
                           p->header.num_subgraphs};
    for (size_t i = 0; i < sizeof hdr / sizeof hdr[0]; i++)
        if (hdr[i] < NX_ABSENT)
            return nx_prog_fail_rec(err, path, loc, NX_SEC_PROGRAM, 0, PROG_HDR_INTS + 8 * (unsigned)i,
                            "negative count %" PRId64 "; expected -1 (absent) or >= 0", hdr[i]);
    return 0;
}

int nx_prog_index_engines(nx_program *p)
{
    for (unsigned e = 0; e < NX_ENGINE_COUNT; e++)
        p->engine_first[e] = p->engine_count[e] = 0;
    if (!(p->instr_pcs = nx_arena_alloc(&p->arena, (p->n_instrs + 1) * sizeof *p->instr_pcs)))
        return -1;
    for (size_t i = p->n_instrs; i-- > 0;) {
        unsigned e = p->instrs[i].engine;
        p->engine_first[e] = i;
        p->engine_count[e]++;
        p->instr_pcs[i] = p->instrs[i].pc;
    }
    return 0;
}
