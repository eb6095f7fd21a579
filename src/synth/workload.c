/*
 * workload.c — the presets' model: one transformer decoder layer (Llama-style:
 * RMSNorm, q/k/v projections, rotary embedding, causal attention as an NKI flash
 * kernel, o_proj + AllReduce, residual, RMSNorm, SiLU-gated MLP + AllReduce,
 * residual), tensor-parallel over the cores, lowered to NeuronCore engine
 * instructions and DMA blocks the way the Neuron compiler tiles it: 128x128
 * weight tiles loaded by LDWEIGHTS and streamed by MATMUL, weights prefetched
 * over four DMA queues with a bounded number of blocks in flight.
 *
 * Durations are in ticks (cycles at 1.4 GHz) and follow the tile shapes.
 *
 * Static memory allocations (MEMORY_ALLOCATIONS), each live from the instruction
 * that first touches the buffer to the one that last reads it, all over the 128
 * SBUF partitions unless said otherwise:
 *   matmul, per 128-column weight tile j: the tile in SBUF (K/128 x 256 bytes per
 *     partition; the Sync DMA trigger .. the tile's last MATMUL) and its
 *     accumulator in PSUM bank j % 8 (4 bytes x moving columns; first MATMUL ..
 *     the drain); per op the moving activations (K/128 x moving x 2 bytes; first
 *     .. last MATMUL);
 *   rope: the cos half of the table in partitions 0..63 (the gather trigger ..
 *     the middle rotation), the sin half in 64..127 (.. the last rotation);
 *   attention tile: QK^T in PSUM bank 0 (MATMUL .. mask), the probabilities in
 *     SBUF (mask .. transpose), P^T in bank 1 (transpose .. PV MATMUL), PV in
 *     bank 2 (PV MATMUL .. the output add);
 *   layer: input0 (input DMA trigger .. the attention residual), the attention
 *     block's output (its residual .. the MLP residual) and output0 (the MLP
 *     residual .. the store's DMA trigger), seq x hidden x 2 / 128 bytes each.
 */
#include <string.h>

#include "synth/synth_internal.h"

static const sy_dims PRESETS[] = {
    [NX_SYNTH_TINY] = {.hidden = 256, .heads = 2, .kv_heads = 2, .head_dim = 128, .inter = 512, .seq = 128,
                       .packet_bytes = 8192, .prefetch = 2, .gap_lo_us = 200, .gap_hi_us = 260,
                       .throttle_every = 2, .error_every = 2, .notify_every = 1},
    [NX_SYNTH_LLAMA_LAYER] = {.hidden = 4096, .heads = 32, .kv_heads = 8, .head_dim = 128, .inter = 14336,
                              .seq = 256, .packet_bytes = 16384, .prefetch = 4, .gap_lo_us = 45,
                              .gap_hi_us = 95, .throttle_every = 8, .error_every = 40, .notify_every = 4},
};

const sy_dims *sy_preset_dims(nx_synth_preset p)
{
    return &PRESETS[p];
}

#define TILE 128u
#define MAX_MOVING 512u

static unsigned tiles(unsigned n) { return (n + TILE - 1) / TILE; }
/* A per-core shard of n columns, at least one tile. */
static unsigned shard(unsigned n, unsigned tp) { return n / tp > TILE ? n / tp : TILE; }

typedef struct layer {
    sy_builder *b;
    int64_t layer_frame;         /* NeuronLlamaDecoderLayer.forward */
    int64_t hlo_next;
    unsigned wq;                 /* next weight queue, round robin */
    uint32_t ready;              /* step after which the current op's input is in SBUF */
} layer;

/* Starts an op: its names, a stack frame under the layer's, a new Penguin node. */
static void op(layer *L, const char *framework, const char *hlo_kind, const char *file, const char *fn,
               uint32_t line, bool kernel)
{
    sy_builder *b = L->b;
    int64_t id = L->hlo_next++;
    b->op.framework = sy_str(b, "NeuronLlamaDecoderLayer[0]/%s", framework);
    b->op.hlo = sy_str(b, "%s.%lld", hlo_kind, (long long)id);
    b->op.hlo_id = id;
    b->op.framework_id = id * 3 + 1;
    b->op.frame = sy_frame(b, L->layer_frame, file, fn, line);
    b->op.source = sy_str(b, "%s:%u", file, line);
    b->op.kernel = kernel;
    b->next_penguin++;
    b->op.penguin = sy_str(b, "bfloat16<128 x %u> $%lld[i%lld_0, i%lld_1]", b->d->seq, (long long)b->next_penguin,
                           (long long)b->next_penguin, (long long)b->next_penguin);
}

static uint64_t sbuf_addr(sy_builder *b, uint64_t bytes)
{
    uint64_t a = b->sbuf_cursor;
    b->sbuf_cursor = 0x2000 + (b->sbuf_cursor - 0x2000 + bytes) % 0x2e000;
    return a;
}

/* An elementwise instruction on Vector/Scalar/GpSimd over [128 x free] elements. */
static uint32_t elementwise(layer *L, uint8_t engine, const char *opcode, const char *fn, unsigned free,
                            uint32_t dep0, uint32_t dep1)
{
    sy_builder *b = L->b;
    uint32_t ticks = engine == NX_ENGINE_GPSIMD ? 2 * free + 100 : engine == NX_ENGINE_SCALAR ? free + 224 : free + 60;
    bool two_x = strcmp(opcode, "TENSOR_SCALAR") == 0;
    if (two_x)
        ticks = free / 2 + 60;
    uint32_t s = sy_instr(b, engine, opcode, ticks, dep0, dep1);
    nx_prog_instr *in = sy_last_instr(b, engine);
    uint64_t bytes = 128ull * free * 2, src = sbuf_addr(b, bytes), dst = sbuf_addr(b, bytes);
    in->operands = fn ? sy_str(b, "func=%s src=0x%llx dst=0x%llx size=128x%u", fn, (unsigned long long)src,
                               (unsigned long long)dst, free)
                      : sy_str(b, "src=0x%llx dst=0x%llx size=128x%u", (unsigned long long)src,
                               (unsigned long long)dst, free);
    in->compiler_operands = in->operands;
    in->sbuf_read_bytes = (int64_t)bytes;
    in->sbuf_write_bytes = (int64_t)bytes;
    in->channels = 128;
    in->performance_mode = two_x ? 1 : 0;
    if (fn)
        in->scalar_activation_fn = fn;
    return s;
}

/* Sync engine triggers a DMA block (after `dep`, e.g. buffer reuse). */
static uint32_t dma_via(layer *L, uint8_t engine, uint16_t q, uint32_t bytes, uint32_t dep, const char *var,
                        const char *src, const char *dst)
{
    sy_builder *b = L->b;
    const char *opcode = engine == NX_ENGINE_GPSIMD ? "DGE_GATHER" : "DMA_TRIGGER";
    uint32_t trig = sy_instr(b, engine, opcode, 40, dep, SY_NONE);
    nx_prog_instr *in = sy_last_instr(b, engine);
    in->compiler_opcode = "PSEUDO_DMA_TRIGGER";
    in->operands = sy_str(b, "queue=%u desc=%zu size=%u", q, b->n_descs, bytes);
    in->compiler_operands = sy_str(b, "name=sg0000 args_table_var_id=%zu", b->n_descs);
    if (strcmp(src, "[HBM]") == 0)
        in->hbm_read_bytes = bytes;
    else
        in->hbm_write_bytes = bytes;
    const char *op = strcmp(dst, "[SB]") == 0 ? "read" : "write";
    return sy_dma(b, q, bytes, trig, SY_NONE, var, op, src, dst);
}

/* out = in(seq x K) . W(K x N): per 128-column tile of W a weight block, then per
 * 128-row tile of K an LDWEIGHTS and MATMULs over the moving dimension, then a
 * PSUM drain. Returns the last drain. */
static uint32_t matmul(layer *L, unsigned K, unsigned N, const char *weight)
{
    sy_builder *b = L->b;
    const unsigned kt = tiles(K), nt = tiles(N), seq = b->d->seq;
    const unsigned moving = seq < MAX_MOVING ? seq : MAX_MOVING, chunks = (seq + MAX_MOVING - 1) / MAX_MOVING;
    sy_tensor(b, weight, "WEIGHT", sy_str(b, "%u %u", K, N), (int64_t)K * N * 2);
    uint32_t *last_mm = nx_arena_calloc(&b->arena, nt, sizeof *last_mm);
    uint32_t drain = L->ready, first_of_op = SY_NONE;
    if (!last_mm) {
        b->failed = true;
        return drain;
    }
    for (unsigned j = 0; j < nt; j++) {
        uint32_t reuse = j >= b->d->prefetch ? last_mm[j - b->d->prefetch] : SY_NONE;
        uint32_t block = dma_via(L, NX_ENGINE_SYNC, (uint16_t)(SY_Q_W0 + L->wq++ % SY_N_WEIGHT_QUEUES),
                                 kt * TILE * TILE * 2, reuse, weight, "[HBM]", "[SB]");
        uint32_t mm = SY_NONE, first_mm = SY_NONE;
        for (unsigned i = 0; i < kt; i++) {
            sy_instr(b, NX_ENGINE_TENSOR, "LDWEIGHTS", 160, i == 0 ? block : SY_NONE, SY_NONE);
            nx_prog_instr *lw = sy_last_instr(b, NX_ENGINE_TENSOR);
            lw->operands = sy_str(b, "src=0x%llx rows=128 cols=128 dtype=bf16",
                                  (unsigned long long)sbuf_addr(b, TILE * TILE * 2));
            lw->compiler_operands = lw->operands;
            lw->sbuf_read_bytes = lw->weight_queue_bytes = TILE * TILE * 2;
            for (unsigned c = 0; c < chunks; c++) {
                mm = sy_instr(b, NX_ENGINE_TENSOR, "MATMUL", 64 + moving, i == 0 && c == 0 ? L->ready : SY_NONE,
                              SY_NONE);
                nx_prog_instr *in = sy_last_instr(b, NX_ENGINE_TENSOR);
                in->operands = sy_str(b, "src=0x%llx dst=psum[%u]+0x%x rows=128 cols=%u acc=%d",
                                      (unsigned long long)sbuf_addr(b, TILE * moving * 2), j % 8, c * 0x800,
                                      moving, i > 0);
                in->compiler_operands = in->operands;
                in->tensor_instruction_type = NX_TENSOR_REGULAR;
                in->sbuf_read_bytes = in->input_queue_bytes = TILE * moving * 2;
                in->psum_write_bytes = in->output_queue_bytes = TILE * moving * 4;
                in->tensor_elements = TILE * moving;
                in->raw_flops = in->adjusted_flops = 2ll * TILE * TILE * moving;
                if (first_mm == SY_NONE)
                    first_mm = mm;
            }
        }
        if (first_of_op == SY_NONE)
            first_of_op = first_mm;
        sy_alloc(b, sy_str(b, "%s[%u]", weight, j), NX_MEM_SBUF, NX_NO_BANK, 0, TILE, (uint64_t)kt * TILE * 2,
                 block, mm);
        last_mm[j] = mm;
        bool scalar = j % 2 == 0;   /* drains alternate between Scalar and Vector */
        drain = elementwise(L, scalar ? NX_ENGINE_SCALAR : NX_ENGINE_VECTOR, scalar ? "ACTIVATE" : "TENSOR_COPY",
                            scalar ? "Copy" : NULL, seq, mm, SY_NONE);
        nx_prog_instr *d = sy_last_instr(b, scalar ? NX_ENGINE_SCALAR : NX_ENGINE_VECTOR);
        d->psum_read_bytes = TILE * seq * 4;
        d->sbuf_read_bytes = NX_ABSENT;
        d->psum_read_sbuf_write_bytes = TILE * seq * 2;
        sy_alloc(b, sy_str(b, "%s.psum[%u]", b->op.hlo, j), NX_MEM_PSUM, (uint8_t)(j % 8), 0, TILE,
                 (uint64_t)chunks * moving * 4, first_mm, drain);
    }
    sy_alloc(b, sy_str(b, "%s.moving", b->op.hlo), NX_MEM_SBUF, NX_NO_BANK, 0, TILE, (uint64_t)kt * moving * 2,
             first_of_op, last_mm[nt - 1]);
    return drain;
}

/* RMSNorm over [seq x hidden]: square-accumulate, rsqrt, scale, gamma. */
static uint32_t rmsnorm(layer *L, const char *gamma)
{
    sy_builder *b = L->b;
    const unsigned hidden = b->d->hidden;
    sy_tensor(b, gamma, "WEIGHT", sy_str(b, "%u", hidden), (int64_t)hidden * 2);
    uint32_t last = L->ready;
    for (unsigned r = 0; r < tiles(b->d->seq); r++) {
        uint32_t sq = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, hidden, L->ready, SY_NONE);
        uint32_t rs = elementwise(L, NX_ENGINE_SCALAR, "ACTIVATE", "Rsqrt", 1, sq, SY_NONE);
        uint32_t sc = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_SCALAR", NULL, hidden, rs, SY_NONE);
        last = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, hidden, sc, SY_NONE);
    }
    return last;
}

/* Rotary embedding: positions on GpSimd, sin/cos rows gathered by the software
 * DGE, then q and k rotated on Vector. */
static uint32_t rope(layer *L, unsigned q_cols, unsigned k_cols)
{
    sy_builder *b = L->b;
    uint32_t iota = elementwise(L, NX_ENGINE_GPSIMD, "IOTA", NULL, b->d->seq, L->ready, SY_NONE);
    uint32_t table = dma_via(L, NX_ENGINE_GPSIMD, SY_Q_SWDGE, b->d->seq * b->d->head_dim * 4, iota,
                             "rope_cache", "[HBM]", "[SB]");
    uint32_t last = table, middle = SY_NONE;
    const unsigned n = tiles(q_cols) + tiles(k_cols);
    for (unsigned t = 0; t < n; t++) {
        uint32_t m = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, b->d->seq, t == 0 ? table : SY_NONE,
                                 L->ready);
        last = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, b->d->seq, m, SY_NONE);
        if (t == (n - 1) / 2)
            middle = last;
    }
    const uint64_t half = (uint64_t)b->d->seq * b->d->head_dim * 4 / TILE;
    sy_alloc(b, "rope_cache.cos", NX_MEM_SBUF, NX_NO_BANK, 0, TILE / 2, half, table, middle);
    sy_alloc(b, "rope_cache.sin", NX_MEM_SBUF, NX_NO_BANK, TILE / 2, TILE / 2, half, table, last);
    return last;
}

/* The NKI kernel's call frames: flash_fwd calls one helper per stage. */
typedef struct nki_kernel {
    int64_t fwd, qk, softmax, pv;
} nki_kernel;

static nki_kernel nki_frames(sy_builder *b)
{
    nki_kernel k;
    k.fwd = sy_nki_frame(b, NX_ABSENT, "flash_attn.flash_fwd", 201);
    k.qk = sy_nki_frame(b, k.fwd, "flash_attn._qk_block", 229);
    k.softmax = sy_nki_frame(b, k.fwd, "flash_attn._softmax", 231);
    k.pv = sy_nki_frame(b, k.fwd, "flash_attn._pv_block", 234);
    return k;
}

/* One head, one 128-query tile of causal flash attention (NKI kernel), generated
 * in iteration `it` (the i_q binding) of the kernel's loops. */
static uint32_t attention_tile(layer *L, uint32_t dep, const nki_kernel *k, int64_t it)
{
    sy_builder *b = L->b;
    const unsigned seq = b->d->seq;
    sy_nki_at(b, k->qk, it, 241);
    uint32_t qk = sy_instr(b, NX_ENGINE_TENSOR, "MATMUL", 64 + seq, dep, SY_NONE);
    nx_prog_instr *in = sy_last_instr(b, NX_ENGINE_TENSOR);
    in->operands = sy_str(b, "src=0x%llx dst=psum[0] rows=128 cols=%u acc=0",
                          (unsigned long long)sbuf_addr(b, TILE * seq * 2), seq);
    in->tensor_instruction_type = NX_TENSOR_REGULAR;
    in->sbuf_read_bytes = TILE * seq * 2;
    in->psum_write_bytes = TILE * seq * 4;
    in->tensor_elements = TILE * seq;
    in->raw_flops = in->adjusted_flops = 2ll * TILE * TILE * seq;
    sy_nki_at(b, k->qk, it, 243);
    uint32_t mask = elementwise(L, NX_ENGINE_GPSIMD, "AFFINE_SELECT", NULL, seq, qk, SY_NONE);
    sy_nki_at(b, k->softmax, it, 252);
    uint32_t mx = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_REDUCE", NULL, seq, mask, SY_NONE);
    sy_nki_at(b, k->softmax, it, 253);
    uint32_t ex = elementwise(L, NX_ENGINE_SCALAR, "ACTIVATE", "Exp", seq, mx, SY_NONE);
    sy_nki_at(b, k->softmax, it, 254);
    uint32_t sum = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_REDUCE", NULL, seq, ex, SY_NONE);
    sy_nki_at(b, k->pv, it, 263);
    uint32_t tr = sy_instr(b, NX_ENGINE_TENSOR, "TRANSPOSE", 64 + seq, ex, SY_NONE);
    in = sy_last_instr(b, NX_ENGINE_TENSOR);
    in->operands = sy_str(b, "src=0x%llx dst=psum[1] rows=128 cols=%u", (unsigned long long)sbuf_addr(b, TILE * seq * 2), seq);
    in->tensor_instruction_type = NX_TENSOR_TRANSPOSE;
    in->tensor_elements_transpose = TILE * seq;
    in->flops_transpose = in->adjusted_flops_transpose = 2ll * TILE * TILE * seq;
    sy_nki_at(b, k->pv, it, 264);
    uint32_t pv = sy_instr(b, NX_ENGINE_TENSOR, "MATMUL", 64 + seq, tr, SY_NONE);
    in = sy_last_instr(b, NX_ENGINE_TENSOR);
    in->operands = sy_str(b, "src=0x%llx dst=psum[2] rows=128 cols=%u acc=0", (unsigned long long)sbuf_addr(b, TILE * seq * 2), seq);
    in->tensor_instruction_type = NX_TENSOR_REGULAR;
    in->sbuf_read_bytes = TILE * seq * 2;
    in->psum_write_bytes = TILE * TILE * 4;
    in->tensor_elements = TILE * seq;
    in->raw_flops = in->adjusted_flops = 2ll * TILE * TILE * seq;
    sy_nki_at(b, k->fwd, it, 235);
    uint32_t rc = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_SCALAR", NULL, seq, sum, SY_NONE);
    sy_nki_at(b, k->fwd, it, 236);
    uint32_t out = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, TILE, pv, rc);
    sy_nki_at(b, NX_ABSENT, NX_ABSENT, 0);
    sy_alloc(b, "flash.qk", NX_MEM_PSUM, 0, 0, TILE, (uint64_t)seq * 4, qk, mask);
    sy_alloc(b, "flash.probs", NX_MEM_SBUF, NX_NO_BANK, 0, TILE, (uint64_t)seq * 2, mask, tr);
    sy_alloc(b, "flash.probs_t", NX_MEM_PSUM, 1, 0, TILE, (uint64_t)seq * 4, tr, pv);
    sy_alloc(b, "flash.pv", NX_MEM_PSUM, 2, 0, TILE, (uint64_t)TILE * 4, pv, out);
    return out;
}

/* GpSimd waits at a core barrier (every core reaches the same one: its id is the
 * collective's number), then triggers an AllReduce of the [seq x hidden] partial
 * sums; returns the CC step. */
static uint32_t all_reduce(layer *L, uint32_t dep)
{
    sy_builder *b = L->b;
    uint64_t bytes = (uint64_t)b->d->seq * b->d->hidden * 2;
    uint32_t bar = sy_instr(b, NX_ENGINE_GPSIMD, "CORE_BARRIER", 40, dep, SY_NONE);
    nx_prog_instr *bi = sy_last_instr(b, NX_ENGINE_GPSIMD);
    bi->compiler_opcode = "PSEUDO_CORE_BARRIER";
    bi->operands = sy_str(b, "$S[%d]>=%u $S[%d]++@complete semaphore=%d id=%zu", SY_SEM_CC, b->cores, SY_SEM_CC,
                          SY_SEM_CC, b->n_colls + 1);
    bi->compiler_operands = bi->operands;
    uint32_t trig = sy_instr(b, NX_ENGINE_GPSIMD, "TRIGGER_COLLECTIVE", 80, bar, SY_NONE);
    nx_prog_instr *in = sy_last_instr(b, NX_ENGINE_GPSIMD);
    in->compiler_opcode = "PSEUDO_TRIGGER_COLLECTIVE_2";
    in->operands = sy_str(b, "ctype=ALL_REDUCE op=ADD dtype=bfloat16 size=%llu", (unsigned long long)bytes);
    in->compiler_operands = in->operands;
    in->instruction_chain = sy_str(b, "PSEUDO_TRIGGER_COLLECTIVE_2 $S[%d]>=1 $S[%d]++@complete ctype=ALL_REDUCE "
                                   "op=ADD dtype=bfloat16 cc_dim=0 src0_var_id=%zu\n PSEUDO_EXTENSION group_id=0 "
                                   "channel_id=0 stream_id=0", SY_SEM_CC, SY_SEM_CC, b->n_colls + 1353);
    return sy_collective(b, "AllReduce", bytes, trig);
}

/* residual add of [seq x hidden] after `dep` (the AllReduce or the op before). */
static uint32_t residual(layer *L, uint32_t dep)
{
    uint32_t last = dep;
    for (unsigned r = 0; r < tiles(L->b->d->seq); r++)
        last = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, L->b->d->hidden, dep, SY_NONE);
    return last;
}

static uint32_t attention_block(layer *L)
{
    sy_builder *b = L->b;
    const unsigned tp = b->cores, hd = b->d->head_dim;
    const unsigned q_cols = shard(b->d->heads * hd, tp), kv_cols = shard(b->d->kv_heads * hd, tp);
    const unsigned local_heads = q_cols / hd;
    op(L, "CustomRMSNorm[input_layernorm]/aten.mul", "multiply", "modeling_llama.py", "CustomRMSNorm.forward", 84, false);
    L->ready = rmsnorm(L, "layers.0.input_layernorm.weight");
    op(L, "NeuronLlamaAttention[self_attn]/ColumnParallelLinear[q_proj]/aten.linear", "dot", "layers.py",
       "ColumnParallelLinear.forward", 563, false);
    uint32_t q = matmul(L, b->d->hidden, q_cols, "layers.0.self_attn.q_proj.weight");
    op(L, "NeuronLlamaAttention[self_attn]/ColumnParallelLinear[k_proj]/aten.linear", "dot", "layers.py",
       "ColumnParallelLinear.forward", 563, false);
    uint32_t k = matmul(L, b->d->hidden, kv_cols, "layers.0.self_attn.k_proj.weight");
    op(L, "NeuronLlamaAttention[self_attn]/ColumnParallelLinear[v_proj]/aten.linear", "dot", "layers.py",
       "ColumnParallelLinear.forward", 563, false);
    uint32_t v = matmul(L, b->d->hidden, kv_cols, "layers.0.self_attn.v_proj.weight");
    op(L, "NeuronLlamaAttention[self_attn]/RotaryEmbedding[rotary_emb]/aten.mul", "multiply", "modeling_llama.py",
       "apply_rotary_pos_emb", 131, false);
    L->ready = q > k ? q : k;
    uint32_t roped = rope(L, q_cols, kv_cols);
    op(L, "NeuronLlamaAttention[self_attn]/nki.flash_fwd", "custom-call", "flash_attention.py", "flash_fwd", 212, true);
    uint32_t last = roped;
    const nki_kernel kernel = nki_frames(b);
    for (unsigned h = 0; h < local_heads; h++) {
        int64_t ih = sy_nki_loop(b, NX_ABSENT, "i_h", h, 224);
        for (unsigned t = 0; t < tiles(b->d->seq); t++)
            last = attention_tile(L, h == 0 && t == 0 ? (roped > v ? roped : v) : SY_NONE, &kernel,
                                  sy_nki_loop(b, ih, "i_q", t, 226));
    }
    op(L, "NeuronLlamaAttention[self_attn]/RowParallelLinear[o_proj]/aten.linear", "dot", "layers.py",
       "RowParallelLinear.forward", 712, false);
    L->ready = last;
    uint32_t o = matmul(L, q_cols, b->d->hidden, "layers.0.self_attn.o_proj.weight");
    if (tp > 1) {
        op(L, "NeuronLlamaAttention[self_attn]/RowParallelLinear[o_proj]/xla.all_reduce", "all-reduce",
           "mappings.py", "reduce_from_tensor_model_parallel_region", 98, false);
        o = all_reduce(L, o);
    }
    op(L, "aten.add", "add", "modeling_llama.py", "NeuronLlamaDecoderLayer.forward", 419, false);
    return residual(L, o);
}

static uint32_t mlp_block(layer *L)
{
    sy_builder *b = L->b;
    const unsigned inter = shard(b->d->inter, b->cores);
    op(L, "CustomRMSNorm[post_attention_layernorm]/aten.mul", "multiply", "modeling_llama.py",
       "CustomRMSNorm.forward", 84, false);
    L->ready = rmsnorm(L, "layers.0.post_attention_layernorm.weight");
    op(L, "NeuronLlamaMLP[mlp]/ColumnParallelLinear[gate_proj]/aten.linear", "dot", "layers.py",
       "ColumnParallelLinear.forward", 563, false);
    uint32_t gate = matmul(L, b->d->hidden, inter, "layers.0.mlp.gate_proj.weight");
    op(L, "NeuronLlamaMLP[mlp]/ColumnParallelLinear[up_proj]/aten.linear", "dot", "layers.py",
       "ColumnParallelLinear.forward", 563, false);
    uint32_t up = matmul(L, b->d->hidden, inter, "layers.0.mlp.up_proj.weight");
    op(L, "NeuronLlamaMLP[mlp]/SiLU[act_fn]/aten.silu", "logistic", "activations.py", "SiLU.forward", 396, false);
    uint32_t act = SY_NONE;
    for (unsigned t = 0; t < tiles(inter); t++)
        act = elementwise(L, NX_ENGINE_SCALAR, "ACTIVATE", "Silu", b->d->seq, t == 0 ? gate : SY_NONE, SY_NONE);
    op(L, "NeuronLlamaMLP[mlp]/aten.mul", "multiply", "modeling_llama.py", "NeuronLlamaMLP.forward", 272, false);
    uint32_t prod = SY_NONE;
    for (unsigned t = 0; t < tiles(inter); t++)
        prod = elementwise(L, NX_ENGINE_VECTOR, "TENSOR_TENSOR", NULL, b->d->seq, t == 0 ? act : SY_NONE,
                           t == 0 ? up : SY_NONE);
    op(L, "NeuronLlamaMLP[mlp]/RowParallelLinear[down_proj]/aten.linear", "dot", "layers.py",
       "RowParallelLinear.forward", 712, false);
    L->ready = prod;
    uint32_t down = matmul(L, inter, b->d->hidden, "layers.0.mlp.down_proj.weight");
    if (b->cores > 1) {
        op(L, "NeuronLlamaMLP[mlp]/RowParallelLinear[down_proj]/xla.all_reduce", "all-reduce", "mappings.py",
           "reduce_from_tensor_model_parallel_region", 98, false);
        down = all_reduce(L, down);
    }
    op(L, "aten.add", "add", "modeling_llama.py", "NeuronLlamaDecoderLayer.forward", 423, false);
    return residual(L, down);
}

int sy_build_layer(sy_builder *b)
{
    layer L = {.b = b, .hlo_next = 12};
    int64_t root = sy_frame(b, NX_ABSENT, "train.py", "main", 88);
    L.layer_frame = sy_frame(b, root, "modeling_llama.py", "NeuronLlamaDecoderLayer.forward", 402);
    const uint32_t act_bytes = b->d->seq * b->d->hidden * 2;
    op(&L, "aten.copy_", "copy", "train.py", "train_step", 61, false);
    sy_tensor(b, "input0", "IN", sy_str(b, "%u %u", b->d->seq, b->d->hidden), act_bytes);
    sy_tensor(b, "output0", "OUT", sy_str(b, "%u %u", b->d->seq, b->d->hidden), act_bytes);
    /* The runtime's descriptor rings are fetched by hardware before the program runs. */
    uint32_t rings = sy_dma(b, SY_Q_HWDGE, 4096, SY_NONE, SY_NONE, "dma_ring", "read", "[HBM]", "[DESC]");
    uint32_t input = dma_via(&L, NX_ENGINE_SYNC, SY_Q_INPUT, act_bytes, rings, "input0", "[HBM]", "[SB]");
    L.ready = input;
    L.ready = attention_block(&L);
    uint32_t attn = L.ready;
    uint32_t out = mlp_block(&L);
    op(&L, "aten.copy_", "copy", "train.py", "train_step", 64, false);
    uint32_t wait = sy_instr(b, NX_ENGINE_SYNC, "SEM_WAIT", 20, out, SY_NONE);
    sy_last_instr(b, NX_ENGINE_SYNC)->operands = sy_str(b, "sem=%d cond=>=1", SY_SEM_ENGINE(NX_ENGINE_VECTOR));
    uint32_t store = dma_via(&L, NX_ENGINE_SYNC, SY_Q_OUTPUT, act_bytes, wait, "output0", "[SB]", "[HBM]");
    sy_alloc(b, "input0", NX_MEM_SBUF, NX_NO_BANK, 0, TILE, act_bytes / TILE, input, attn);
    sy_alloc(b, "attn_out", NX_MEM_SBUF, NX_NO_BANK, 0, TILE, act_bytes / TILE, attn, out);
    sy_alloc(b, "output0", NX_MEM_SBUF, NX_NO_BANK, 0, TILE, act_bytes / TILE, out, store);
    /* The final barrier: Sync waits for the store, then resets every semaphore. */
    sy_instr(b, NX_ENGINE_SYNC, "SEM_RESET", 30, store, SY_NONE);
    sy_last_instr(b, NX_ENGINE_SYNC)->operands = sy_str(b, "sems=0-%d value=0", SY_N_SEMS - 1);
    return b->failed ? -1 : 0;
}
