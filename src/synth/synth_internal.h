/*
 * synth_internal.h — the simulator's internal model, shared by its files:
 *
 *   workload.c   presets -> layer ops -> steps (instructions, DMA blocks,
 *                collectives with dependencies) and the program tables
 *   builder.c    the step/program builder and its naming helpers
 *   schedule.c   steps -> one execution's records per core (the template)
 *   replay.c     template -> N executions through a time warp, per core thread
 *   system.c     runtime events, CPU/memory samples, trace.json
 *   synth.c      nx_synth_run(): directories, program file, threads, stats
 */
#ifndef NX_SYNTH_INTERNAL_H
#define NX_SYNTH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/device_trace.h"
#include "capture/program_file.h"
#include "synth/synth.h"
#include "util/arena.h"
#include "util/error.h"

/* --- deterministic randomness (splitmix64) ---------------------------------- */

static inline uint64_t sy_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline uint64_t sy_next(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ull;
    return sy_mix(*state);
}
/* Uniform in [lo, hi]. */
static inline uint64_t sy_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
    return lo + sy_next(state) % (hi - lo + 1);
}
/* A stream of its own for (seed, a, b): independent draws per core, execution, ... */
static inline uint64_t sy_seed(uint64_t seed, uint64_t a, uint64_t b)
{
    return sy_mix(seed ^ sy_mix(a * 0x100000001b3ull ^ sy_mix(b + 0x51ed27)));
}

/* --- timing constants: one tick is one 1.4 GHz cycle ------------------------- */

#define SY_TICKS_NUM 7u            /* 7/5 ticks per ns */
#define SY_TICKS_DEN 5u
#define SY_US(x) ((uint64_t)(x) * 1400u)   /* microseconds -> ticks */
#define SY_NONE UINT32_MAX
#define SY_MAX_DEPS 3

/* --- model dimensions of a preset --------------------------------------------- */

typedef struct sy_dims {
    unsigned hidden, heads, kv_heads, head_dim, inter, seq;
    unsigned packet_bytes;       /* DMA packet size */
    unsigned prefetch;           /* weight blocks in flight per matmul */
    uint64_t gap_lo_us, gap_hi_us;   /* host time between executions */
    unsigned throttle_every;     /* an execution is throttled with probability 1/n */
    unsigned error_every;        /* ... reports a hardware warning with probability 1/n */
    unsigned notify_every;       /* ... a custom notification with probability 1/n */
} sy_dims;

/* --- steps: the program as the scheduler sees it ----------------------------- */

enum { SY_INSTR, SY_DMA, SY_CC };

typedef struct sy_step {
    uint8_t kind;
    uint8_t engine;              /* INSTR: its engine; DMA/CC: trigger engine or NX_ENGINE_NONE */
    uint16_t queue;              /* DMA */
    uint16_t signal_sem;         /* incremented on completion, or NX_NO_SEMAPHORE */
    uint32_t pc;                 /* INSTR: pc; DMA/CC: trigger pc or NX_NO_PC */
    uint32_t ticks;              /* INSTR: base duration; DMA: bytes; CC: bytes per rank */
    uint32_t aux;                /* DMA: descriptor; CC: collective */
    uint32_t trigger;            /* DMA/CC: triggering step, or SY_NONE */
    uint32_t dep[SY_MAX_DEPS];   /* steps that must complete first, or SY_NONE */
} sy_step;

/* Well-known queues and semaphores of the generated program. */
enum {
    SY_Q_INPUT, SY_Q_OUTPUT, SY_Q_W0, SY_Q_W1, SY_Q_W2, SY_Q_W3, SY_Q_SWDGE, SY_Q_HWDGE, SY_Q_CCRING,
    SY_N_QUEUES
};
#define SY_N_WEIGHT_QUEUES 4
/* Semaphores: one per engine, one per queue, one for collectives. */
#define SY_SEM_ENGINE(e) ((uint16_t)(e))
#define SY_SEM_QUEUE(q) ((uint16_t)(NX_ENGINE_COUNT + (q)))
#define SY_SEM_CC ((uint16_t)(NX_ENGINE_COUNT + SY_N_QUEUES))
#define SY_N_SEMS (NX_ENGINE_COUNT + SY_N_QUEUES + 1)
#define SY_CC_CORE0 8            /* the ring runs on CC cores 8..11 */
#define SY_CC_CORES 16

/* Naming context of the op being built (see builder.c). */
typedef struct sy_op_names {
    const char *framework;       /* NeuronLlamaDecoderLayer[0]/.../aten.linear */
    const char *hlo;             /* dot.12 */
    int64_t hlo_id, framework_id;
    int64_t frame;               /* innermost stack frame */
    const char *source;          /* modeling_llama.py:212 */
    const char *penguin;         /* the op's Penguin IR expression */
    bool kernel;                 /* instructions come from an NKI kernel */
} sy_op_names;

/* The NKI kernel's debug info and the program's assembly listing (nki.c). */
#define SY_NKI_FILE "/home/ubuntu/kernels/flash_attn.py"
typedef struct sy_nki {
    nx_prog_frame frames[8];     /* NKI_FRAMES */
    size_t n_frames;
    nx_prog_nki_iter *iters;     /* NKI_ITERATIONS */
    size_t n_iters, cap_iters;
    nx_prog_nki_instr *maps;     /* NKI_INSTRUCTIONS, in build order until finished */
    size_t n_maps, cap_maps;
    nx_prog_asm *asm_lines;      /* ASSEMBLY, built by sy_nki_finish() */
    int64_t frame, iter;         /* where the next kernel instruction comes from: */
    uint32_t line;               /* frame NX_ABSENT = nowhere (not mapped) */
} sy_nki;

typedef struct sy_builder {
    nx_arena arena;              /* every string and array below */
    const sy_dims *d;
    unsigned cores;
    nx_prog_instr *instrs[NX_ENGINE_COUNT];
    size_t n_instrs[NX_ENGINE_COUNT], cap_instrs[NX_ENGINE_COUNT];
    sy_step *steps;
    size_t n_steps, cap_steps;
    nx_prog_dma_desc *descs;
    size_t n_descs, cap_descs;
    nx_prog_tensor tensors[32];
    size_t n_tensors;
    nx_prog_frame frames[64];
    size_t n_frames;
    nx_prog_collective colls[4];
    size_t n_colls;
    uint32_t ring_desc;          /* descriptor of the collectives' ring DMA, or SY_NONE */
    sy_op_names op;
    int64_t next_bir, next_penguin, next_kernel_inst;
    uint64_t sbuf_cursor;        /* fake SBUF addresses for operand text */
    nx_prog_alloc *allocs;       /* MEMORY_ALLOCATIONS; live_pc/free_pc hold step indices
                                    until sy_builder_finish() turns them into (engine, pc) */
    size_t n_allocs, cap_allocs;
    sy_nki nki;
    bool failed;                 /* an allocation failed */
} sy_builder;

/* builder.c */
/* Makes room for one more element of *arr (n used of *cap); false (and
 * b->failed) when out of memory. */
bool sy_grow(sy_builder *b, void *arr_ptr, size_t n, size_t *cap, size_t size);
void sy_builder_init(sy_builder *b, const sy_dims *d, unsigned cores);
void sy_builder_free(sy_builder *b);
char *sy_str(sy_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends an instruction on `engine` and its step; returns the step index.
 * Fill the rest of the instruction through sy_last_instr(). */
uint32_t sy_instr(sy_builder *b, uint8_t engine, const char *opcode, uint32_t ticks,
                  uint32_t dep0, uint32_t dep1);
nx_prog_instr *sy_last_instr(sy_builder *b, uint8_t engine);
/* A DMA block of `bytes` on queue q with its descriptor, triggered by step
 * `trigger` (SY_NONE: hardware-triggered); returns the step index. */
uint32_t sy_dma(sy_builder *b, uint16_t q, uint32_t bytes, uint32_t trigger, uint32_t dep,
                const char *variable, const char *op, const char *src, const char *dst);
uint32_t sy_collective(sy_builder *b, const char *operation, uint64_t bytes, uint32_t trigger);
/* The DMA engine queue q is mapped to (queues sharing an engine contend). */
uint32_t sy_queue_dma_engine(uint16_t q);
int64_t sy_frame(sy_builder *b, int64_t parent, const char *file, const char *fn, uint32_t line);
void sy_tensor(sy_builder *b, const char *name, const char *type, const char *shape, int64_t size);
/* A static SBUF (bank NX_NO_BANK) or PSUM allocation of `bytes` per partition in
 * partitions [first, first + count), live from the start of step `from` to the
 * end of step `to` (instruction steps, or DMA steps with a trigger instruction:
 * then that instruction). Bytes above the partition's (bank's) capacity are cut. */
void sy_alloc(sy_builder *b, const char *name, uint8_t memory, uint8_t bank, uint16_t first, uint16_t count,
              uint64_t bytes, uint32_t from, uint32_t to);
/* sbuf_layout.c: sets the end_address of each SBUF allocation (live_pc/free_pc
 * still step indices) so that allocations that can be live at once never share
 * bytes of a partition of `capacity` bytes; 0 for one that does not fit. -1: out of memory. */
int sy_layout_sbuf(sy_builder *b, uint64_t capacity);
/* Sets signal/wait semaphores from the dependencies; fills `p` (pointing into b). */
int sy_builder_finish(sy_builder *b, nx_program *p);

/* nki.c: the NKI kernel's frames (file SY_NKI_FILE) and loop bindings; each
 * returns its index. sy_nki_at() says where the next kernel instructions come
 * from; sy_nki_note() maps instruction `in` there (called for every instruction
 * of an NKI op) and returns its "file.py:line", or "" when unmapped;
 * sy_nki_finish() sorts the mapping, numbers the compiler pcs (program order)
 * and writes the assembly listing into p (whose instrs are final). */
int64_t sy_nki_frame(sy_builder *b, int64_t parent, const char *function, uint32_t call_line);
int64_t sy_nki_loop(sy_builder *b, int64_t parent, const char *var, int64_t value, uint32_t line);
void sy_nki_at(sy_builder *b, int64_t frame, int64_t iter, uint32_t line);
const char *sy_nki_note(sy_builder *b, const nx_prog_instr *in);
int sy_nki_finish(sy_builder *b, nx_program *p);
void sy_nki_free(sy_builder *b);

/* workload.c */
const sy_dims *sy_preset_dims(nx_synth_preset p);
int sy_build_layer(sy_builder *b);

/* --- template: one execution of one core ------------------------------------- */

/* Fields of a template record that replay rewrites. */
enum {
    SY_F_END = 1,        /* bytes 16..23 are a time */
    SY_F_TRIG = 2,       /* bytes 24..31 are a time (unless NX_NO_TICKS) */
    SY_F_BLOCK = 4,      /* bytes 4..7 are a block id: add execution * blocks of the queue */
    SY_F_EXEC = 8,       /* bytes 4..7 are the execution index */
    SY_F_CRC_OUT = 16,   /* bytes 32..35 are a CRC of this execution's data */
    SY_F_CRC_IN = 32     /* bytes 28..31 too */
};

typedef struct sy_template {
    unsigned char *recs;         /* n * 40 bytes, sorted by ts (template time from 0) */
    uint8_t *flags;
    size_t n;
    uint64_t count[NX_REC_KIND_MAX + 1];
} sy_template;

/* Everything replay needs, shared read-only by the core threads. */
typedef struct sy_plan {
    const sy_dims *d;
    nx_synth_preset preset;
    uint64_t seed;
    unsigned cores;
    uint32_t executions;
    uint64_t length;             /* template execution length in ticks (all cores) */
    uint32_t blocks_per_queue[SY_N_QUEUES];
    sy_template *tpl;            /* one per core */
    nx_trace_header header;      /* common fields; device/core set per trace */
    uint32_t ref_oob, ref_oob_meta, ref_notify;   /* program strings of the extras */
    const char *dir;             /* where traces go */
} sy_plan;

/* schedule.c: steps -> templates for every core (lockstep across cores for
 * collectives). refs: CC instruction descriptions in the program. */
typedef struct sy_cc_refs { uint32_t advance, reduce, wait; } sy_cc_refs;
int sy_schedule(const sy_builder *b, const sy_cc_refs *refs, sy_plan *plan);
void sy_templates_free(sy_plan *plan);

/* replay.c */
#define SY_WARP_SEGMENTS 8
typedef struct sy_exec_time {
    uint64_t base;               /* tick of the execution's start */
    uint64_t len;                /* warped length */
    uint64_t gap;                /* host gap after it */
    uint64_t T[SY_WARP_SEGMENTS + 1], W[SY_WARP_SEGMENTS + 1];
    uint32_t scale[SY_WARP_SEGMENTS];   /* Q16 */
} sy_exec_time;
/* Timing of execution e starting at `base`; the next starts at base + len + gap. */
void sy_exec_timing(const sy_plan *plan, uint32_t e, uint64_t base, sy_exec_time *t);
uint64_t sy_first_base(void);
/* Writes every core's trace (threads); adds to stats. */
int sy_replay_all(const sy_plan *plan, unsigned threads, nx_synth_stats *stats, nx_error *err);

/* system.c */
typedef struct sy_session {
    const sy_plan *plan;
    const char *dir;
    const char *instance_id;
    uint32_t pid;
    int64_t epoch_ns;
    const char *network_name;
} sy_session;
int sy_write_system(const sy_session *s, nx_synth_stats *stats, nx_error *err);

#endif
