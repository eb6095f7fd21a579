/*
 * builder.c — assembles the simulated program: instructions with the IR names
 * of the op being built, DMA descriptors, collectives, stack frames, and the
 * step list the scheduler replays; sy_builder_finish() derives the semaphores
 * from the dependencies and fills an nx_program for the program file writer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth/synth_internal.h"

void sy_builder_init(sy_builder *b, const sy_dims *d, unsigned cores)
{
    memset(b, 0, sizeof *b);
    b->arena.block_size = 1 << 20;
    b->d = d;
    b->cores = cores;
    b->ring_desc = SY_NONE;
    b->next_bir = 218000;
    b->next_penguin = 80;
    b->next_kernel_inst = 1;
    b->sbuf_cursor = 0x2000;
    b->op.hlo_id = b->op.framework_id = b->op.frame = NX_ABSENT;
    b->nki.frame = b->nki.iter = NX_ABSENT;
}

void sy_builder_free(sy_builder *b)
{
    for (int e = 0; e < NX_ENGINE_COUNT; e++)
        free(b->instrs[e]);
    free(b->steps);
    free(b->descs);
    free(b->allocs);
    sy_nki_free(b);
    nx_arena_free(&b->arena);
}

char *sy_str(sy_builder *b, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    char *s = nx_arena_strndup(&b->arena, buf, len);
    if (!s) {
        b->failed = true;
        return (char *)"";
    }
    return s;
}

bool sy_grow(sy_builder *b, void *arr_ptr, size_t n, size_t *cap, size_t size)
{
    void **arr = arr_ptr;
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 256;
    void *p = realloc(*arr, c * size);
    if (!p) {
        b->failed = true;
        return false;
    }
    *arr = p;
    *cap = c;
    return true;
}

static uint32_t push_step(sy_builder *b, sy_step st)
{
    if (!sy_grow(b, &b->steps, b->n_steps, &b->cap_steps, sizeof *b->steps))
        return 0;
    st.signal_sem = NX_NO_SEMAPHORE;
    b->steps[b->n_steps] = st;
    return (uint32_t)b->n_steps++;
}

/* The IR names of the current op: a fresh BIR instruction and Penguin node. */
static void name_instr(sy_builder *b, nx_prog_instr *in)
{
    const sy_op_names *op = &b->op;
    in->subgraph = "sg0000";
    in->layer = "layer_0";
    in->framework_name = op->framework;
    in->hlo_name = op->hlo;
    in->raw_hlo_id = op->hlo_id;
    in->raw_framework_id = op->framework_id;
    in->stack_frame_id = op->frame;
    in->bir_debug_info_source_location = op->source;
    in->raw_penguin_id = b->next_penguin;
    in->raw_bir_id = b->next_bir++;
    in->bir_instruction_name = sy_str(b, "I-%lld-%lld_sg0000", (long long)b->next_penguin,
                                      (long long)(in->raw_bir_id % 7));
    in->penguin_name = op->penguin;
    if (op->kernel) {
        in->kernel_instruction_name = sy_str(b, "inst.%lld:%lld", (long long)b->next_kernel_inst,
                                             (long long)(40 + b->next_kernel_inst % 90));
        b->next_kernel_inst++;
        in->nki_source_location = sy_nki_note(b, in);
    }
}

uint32_t sy_instr(sy_builder *b, uint8_t engine, const char *opcode, uint32_t ticks, uint32_t dep0, uint32_t dep1)
{
    if (!sy_grow(b, &b->instrs[engine], b->n_instrs[engine], &b->cap_instrs[engine], sizeof *b->instrs[engine]))
        return 0;
    nx_prog_instr *in = &b->instrs[engine][b->n_instrs[engine]];
    memset(in, 0, sizeof *in);
#define X(name) in->name = NX_ABSENT;
    NX_PROG_INSTR_INTS(X)
#undef X
    in->pc = (uint32_t)b->n_instrs[engine]++;
    in->compiler_pc = in->pc;
    in->engine = engine;
    in->opcode = opcode;
    in->compiler_opcode = opcode;
    in->wait_semaphore = in->signal_semaphore = NX_NO_SEMAPHORE;
    name_instr(b, in);
    sy_step st = {.kind = SY_INSTR, .engine = engine, .pc = in->pc, .ticks = ticks, .aux = SY_NONE,
                  .trigger = SY_NONE, .dep = {dep0, dep1, SY_NONE}};
    return push_step(b, st);
}

/* Capacities of the generated program's HARDWARE (synth.c program_identity). */
#define SY_SBUF_PARTITION_BYTES 196608u
#define SY_PSUM_BANK_BYTES (16384u / 8u)

void sy_alloc(sy_builder *b, const char *name, uint8_t memory, uint8_t bank, uint16_t first, uint16_t count,
              uint64_t bytes, uint32_t from, uint32_t to)
{
    if (from == SY_NONE || to == SY_NONE || from >= b->n_steps || to >= b->n_steps)
        return;   /* an op that was not built (e.g. no AllReduce on one core) */
    if (!sy_grow(b, &b->allocs, b->n_allocs, &b->cap_allocs, sizeof *b->allocs))
        return;
    uint64_t cap = memory == NX_MEM_SBUF ? SY_SBUF_PARTITION_BYTES : SY_PSUM_BANK_BYTES;
    b->allocs[b->n_allocs++] = (nx_prog_alloc){
        .name = name, .memory = memory, .bank = memory == NX_MEM_SBUF ? NX_NO_BANK : bank,
        .first_partition = first, .partition_count = count, .live_pc = from, .free_pc = to,
        .bytes_per_partition = bytes == 0 ? 1 : bytes > cap ? cap : bytes};
}

nx_prog_instr *sy_last_instr(sy_builder *b, uint8_t engine)
{
    return &b->instrs[engine][b->n_instrs[engine] - 1];
}

/* The generated program's DMA queues, indexed by SY_Q_*. */
static const struct { const char *name, *purpose; uint8_t type, owner; uint32_t engine; } QUEUES[SY_N_QUEUES] = {
    {"qSyncIO0-Q0-E0", "input", NX_DMAQ_INPUT, NX_ENGINE_SYNC, 0},
    {"qSyncIO1-Q1-E1", "output", NX_DMAQ_OUTPUT, NX_ENGINE_SYNC, 1},
    {"qSyncWeights0-Q2-E2", "weights", NX_DMAQ_DATA, NX_ENGINE_SYNC, 2},
    {"qSyncWeights1-Q3-E3", "weights", NX_DMAQ_DATA, NX_ENGINE_SYNC, 3},
    {"qSyncWeights2-Q4-E4", "weights", NX_DMAQ_DATA, NX_ENGINE_SYNC, 4},
    {"qSyncWeights3-Q5-E5", "weights", NX_DMAQ_DATA, NX_ENGINE_SYNC, 5},
    {"qGpSimdSWDGE0-Q6-E2", "gather", NX_DMAQ_SOFTWARE_DYNAMIC, NX_ENGINE_GPSIMD, 2},
    {"qSyncDynamicHW-Q7-E3", "descriptors", NX_DMAQ_HARDWARE_DYNAMIC, NX_ENGINE_NONE, 3},
    {"qCCRing0-Q8-E8", "collectives", NX_DMAQ_DATA, NX_ENGINE_NONE, 8},
};

uint32_t sy_queue_dma_engine(uint16_t q)
{
    return QUEUES[q].engine;
}

static uint32_t add_desc(sy_builder *b, uint16_t q, const char *variable, const char *op, const char *src,
                         const char *dst, uint32_t bytes)
{
    if (!sy_grow(b, &b->descs, b->n_descs, &b->cap_descs, sizeof *b->descs))
        return 0;
    nx_prog_dma_desc *x = &b->descs[b->n_descs];
    memset(x, 0, sizeof *x);
    unsigned rows = bytes / 256 ? bytes / 256 : 1;   /* 128 bf16 columns per row */
    bool to_sbuf = strcmp(dst, "[SB]") == 0, from_sbuf = strcmp(src, "[SB]") == 0;
    x->queue = q;
    x->completion_semaphore = NX_NO_SEMAPHORE;
    x->is_transpose = 0;
    x->trigger = x->completion = NX_ABSENT;
    x->op = op;
    x->variable = variable;
    x->source = src;
    x->dest = dst;
    x->semaphore_label = sy_str(b, "S[%d] (%s)", SY_SEM_QUEUE(q), QUEUES[q].name);
    x->modular_flow_function = sy_str(b, "sg0000:%zu", b->n_descs % 4);
    x->read_num_sbuf_partitions = from_sbuf ? 128 : 0;
    x->write_num_sbuf_partitions = to_sbuf ? 128 : 0;
    x->read_sbuf_partitions = from_sbuf ? "0-127" : "";
    x->write_sbuf_partitions = to_sbuf ? "0-127" : "";
    x->read_shape = sy_str(b, "[%u, 128]", rows);
    x->write_shape = sy_str(b, "[128, %u]", rows);
    x->read_offset = sy_str(b, "[0x%llx]", (unsigned long long)(b->n_descs * 0x40000ull));
    x->write_offset = sy_str(b, "[0x%llx]", (unsigned long long)(b->sbuf_cursor & 0xfffff));
    x->read_steps = "[1, 256]";
    x->write_steps = sy_str(b, "[1, %u]", rows * 2);
    return (uint32_t)b->n_descs++;
}

uint32_t sy_dma(sy_builder *b, uint16_t q, uint32_t bytes, uint32_t trigger, uint32_t dep, const char *variable,
                const char *op, const char *src, const char *dst)
{
    uint32_t desc = add_desc(b, q, variable, op, src, dst, bytes);
    const sy_step *t = trigger != SY_NONE ? &b->steps[trigger] : NULL;
    sy_step st = {.kind = SY_DMA, .engine = t ? t->engine : NX_ENGINE_NONE, .queue = q,
                  .pc = t ? t->pc : NX_NO_PC, .ticks = bytes, .aux = desc, .trigger = trigger,
                  .dep = {dep, SY_NONE, SY_NONE}};
    return push_step(b, st);
}

uint32_t sy_collective(sy_builder *b, const char *operation, uint64_t bytes, uint32_t trigger)
{
    if (b->ring_desc == SY_NONE)
        b->ring_desc = add_desc(b, SY_Q_CCRING, "cc_buffer", "write", "[HBM]", "[HBM]", b->d->packet_bytes);
    size_t i = b->n_colls++;
    nx_prog_collective *c = &b->colls[i];
    memset(c, 0, sizeof *c);
    c->operation = operation;
    c->algorithm = "Ring";
    c->dtype = "bf16";
    c->op_id = (int64_t)i;
    c->num_elements = (int64_t)(bytes / 2);
    c->stream_id = 0;
    c->stream_index = 0;
    c->input_size = c->output_size = (int64_t)bytes;
    c->replica_group_id = 0;
    c->trigger_engine = NX_ENGINE_GPSIMD;
    char group[256] = "[[";
    for (unsigned r = 0; r < b->cores && strlen(group) < sizeof group - 12; r++)
        snprintf(group + strlen(group), sizeof group - strlen(group), r ? ", %u" : "%u", r);
    strcat(group, "]]");
    c->replica_group = sy_str(b, "%s", group);
    const sy_step *t = &b->steps[trigger];
    sy_step st = {.kind = SY_CC, .engine = t->engine, .queue = SY_Q_CCRING, .pc = t->pc,
                  .ticks = (uint32_t)bytes, .aux = (uint32_t)i, .trigger = trigger,
                  .dep = {SY_NONE, SY_NONE, SY_NONE}};
    return push_step(b, st);
}

int64_t sy_frame(sy_builder *b, int64_t parent, const char *file, const char *fn, uint32_t line)
{
    if (b->n_frames == sizeof b->frames / sizeof b->frames[0]) {
        b->failed = true;
        return NX_ABSENT;
    }
    b->frames[b->n_frames] = (nx_prog_frame){parent, file, fn, line};
    return (int64_t)b->n_frames++;
}

void sy_tensor(sy_builder *b, const char *name, const char *type, const char *shape, int64_t size)
{
    if (b->n_tensors == sizeof b->tensors / sizeof b->tensors[0]) {
        b->failed = true;
        return;
    }
    b->tensors[b->n_tensors++] = (nx_prog_tensor){name, type, "NC", shape, size, (int64_t)(50 + b->n_tensors)};
}

/* --- finishing: semaphores and the program tables ----------------------------- */

/* The semaphore a step signals when someone on another unit waits for it. */
static uint16_t unit_sem(const sy_step *s)
{
    return s->kind == SY_INSTR ? SY_SEM_ENGINE(s->engine) : s->kind == SY_DMA ? SY_SEM_QUEUE(s->queue) : SY_SEM_CC;
}

static bool same_unit(const sy_step *a, const sy_step *b)
{
    return a->kind == SY_INSTR && b->kind == SY_INSTR && a->engine == b->engine;
}

static void derive_semaphores(sy_builder *b)
{
    for (size_t i = 0; i < b->n_steps; i++) {
        sy_step *s = &b->steps[i];
        for (int k = 0; k < SY_MAX_DEPS; k++) {
            if (s->dep[k] == SY_NONE)
                continue;
            sy_step *d = &b->steps[s->dep[k]];
            if (same_unit(s, d))
                continue;
            d->signal_sem = unit_sem(d);
            if (s->kind == SY_INSTR && b->instrs[s->engine][s->pc].wait_semaphore == NX_NO_SEMAPHORE)
                b->instrs[s->engine][s->pc].wait_semaphore = d->signal_sem;
        }
    }
    for (size_t i = 0; i < b->n_steps; i++) {
        const sy_step *s = &b->steps[i];
        if (s->signal_sem == NX_NO_SEMAPHORE)
            continue;
        if (s->kind == SY_INSTR)
            b->instrs[s->engine][s->pc].signal_semaphore = s->signal_sem;
        else if (s->kind == SY_DMA)
            b->descs[s->aux].completion_semaphore = s->signal_sem;
    }
}


static int fill_tables(sy_builder *b, nx_program *p)
{
    size_t n = 0;
    for (int e = 0; e < NX_ENGINE_COUNT; e++)
        n += b->n_instrs[e];
    /* The program lists instructions by engine, Tensor (engine 0, by far the
     * most) first: grow its array and append the others, rather than copy all. */
    nx_prog_instr *all = realloc(b->instrs[0], (n ? n : 1) * sizeof *all);
    if (!all)
        return -1;
    b->instrs[0] = all;
    b->cap_instrs[0] = n;
    nx_prog_queue *queues = nx_arena_alloc(&b->arena, SY_N_QUEUES * sizeof *queues);
    nx_prog_semaphore *sems = nx_arena_alloc(&b->arena, SY_N_SEMS * sizeof *sems);
    nx_prog_cc_stream *stream = nx_arena_alloc(&b->arena, sizeof *stream);
    if (!queues || !sems || !stream)
        return -1;
    size_t k = b->n_instrs[0];
    for (int e = 1; e < NX_ENGINE_COUNT; e++) {
        if (b->n_instrs[e])
            memcpy(all + k, b->instrs[e], b->n_instrs[e] * sizeof *all);
        k += b->n_instrs[e];
    }
    for (unsigned q = 0; q < SY_N_QUEUES; q++)
        queues[q] = (nx_prog_queue){QUEUES[q].name, QUEUES[q].purpose, QUEUES[q].type, QUEUES[q].owner,
                                    QUEUES[q].engine, QUEUES[q].engine % 4, QUEUES[q].engine % 2};
    for (unsigned s = 0; s < SY_N_SEMS; s++)
        sems[s] = (nx_prog_semaphore){sy_str(b, "S[%u]", s), 0};
    *stream = (nx_prog_cc_stream){0, 0, "[8,9,10,11]"};
    p->instrs = all, p->n_instrs = n;
    p->queues = queues, p->n_queues = SY_N_QUEUES;
    p->descs = b->descs, p->n_descs = b->n_descs;
    p->tensors = b->tensors, p->n_tensors = b->n_tensors;
    p->semaphores = sems, p->n_semaphores = SY_N_SEMS;
    p->collectives = b->colls, p->n_collectives = b->n_colls;
    p->cc_streams = stream, p->n_cc_streams = b->n_colls ? 1 : 0;
    p->frames = b->frames, p->n_frames = b->n_frames;
    if (sy_layout_sbuf(b, SY_SBUF_PARTITION_BYTES) != 0)
        return -1;
    /* Allocation ends: step -> its instruction (a DMA step's is its trigger). */
    size_t na = 0;
    for (size_t i = 0; i < b->n_allocs; i++) {
        nx_prog_alloc *a = &b->allocs[i];
        const sy_step *from = &b->steps[a->live_pc], *to = &b->steps[a->free_pc];
        if (from->engine >= NX_ENGINE_COUNT || to->engine >= NX_ENGINE_COUNT || from->pc == NX_NO_PC ||
            to->pc == NX_NO_PC)
            continue;   /* a hardware-triggered DMA has no instruction to name */
        a->live_engine = from->engine, a->live_pc = from->pc;
        a->free_engine = to->engine, a->free_pc = to->pc;
        b->allocs[na++] = *a;
    }
    p->allocs = b->allocs, p->n_allocs = na;
    return sy_nki_finish(b, p);
}

int sy_builder_finish(sy_builder *b, nx_program *p)
{
    derive_semaphores(b);
    return b->failed || fill_tables(b, p) != 0 || b->failed ? -1 : 0;
}
