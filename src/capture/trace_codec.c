/*
 * trace_codec.c — the device trace's byte layout: the 256-byte header, the
 * 40-byte records of each kind, tick conversion and the names of the small
 * enumerations. See device_trace.h and docs/capture-format.md.
 */
#include <string.h>

#include "capture/capture_util.h"
#include "capture/device_trace.h"

static const char *const KIND_NAMES[NX_REC_KIND_MAX + 1] = {
    NULL, "instruction", "dma_block", "dma_packet", "semaphore", "cc_op", "cc_instr",
    "throttle", "error", "execution",
};
static const char *const SEM_OPS[] = {"sem_set", "sem_inc", "sem_dec"};
static const char *const SEM_TIMINGS[] = {NULL, "start", "complete"};
static const char *const ERROR_TYPES[NX_ERR_TYPE_COUNT] = {"Custom Notification", "Errors", "Warnings"};
static const char *const QUEUE_TYPES[NX_DMAQ_COUNT] = {
    "instruction", "input", "output", "data", "software_dynamic", "hardware_dynamic", "unknown",
};
static const char *const PERF_MODES[] = {NULL, "2x", "4x"};

const char *nx_rec_kind_name(unsigned kind) { return kind <= NX_REC_KIND_MAX ? KIND_NAMES[kind] : NULL; }
const char *nx_sem_op_name(unsigned op) { return op < 3 ? SEM_OPS[op] : NULL; }
const char *nx_sem_timing_name(unsigned t) { return t < 3 ? SEM_TIMINGS[t] : NULL; }
const char *nx_error_type_name(unsigned t) { return t < NX_ERR_TYPE_COUNT ? ERROR_TYPES[t] : NULL; }
const char *nx_dma_queue_type_name(unsigned t) { return t < NX_DMAQ_COUNT ? QUEUE_TYPES[t] : NULL; }
const char *nx_performance_mode_name(unsigned m) { return m < 3 ? PERF_MODES[m] : NULL; }

uint64_t nx_trace_ticks_to_ns(const nx_trace_header *h, uint64_t ticks)
{
    /* Split so that no product exceeds 64 bits: num and den are 32-bit. */
    uint64_t q = ticks / h->ticks_per_ns_num, r = ticks % h->ticks_per_ns_num;
    return q * h->ticks_per_ns_den + r * h->ticks_per_ns_den / h->ticks_per_ns_num;
}

void nx_trace_clock_init(nx_trace_clock *c, const nx_trace_header *h)
{
    c->num = h->ticks_per_ns_num ? h->ticks_per_ns_num : 1;   /* readers refuse 0 */
    c->den = h->ticks_per_ns_den;
    c->inv = UINT64_MAX / c->num;
}

uint64_t nx_trace_ns_to_ticks(const nx_trace_header *h, uint64_t ns)
{
    uint64_t q = ns / h->ticks_per_ns_den, r = ns % h->ticks_per_ns_den;
    return q * h->ticks_per_ns_num + r * h->ticks_per_ns_num / h->ticks_per_ns_den;
}

static void put_text(unsigned char *dst, const char *src, size_t slot)
{
    size_t n = strnlen(src, slot);
    memcpy(dst, src, n);
}

void nx_trace_header_encode(const nx_trace_header *h, unsigned char out[NX_TRACE_HEADER_SIZE])
{
    memset(out, 0, NX_TRACE_HEADER_SIZE);
    memcpy(out, NX_TRACE_MAGIC, 8);
    nx_put_u16(out + 8, h->version_major);
    nx_put_u16(out + 10, h->version_minor);
    nx_put_u32(out + 12, h->header_size);
    nx_put_u32(out + 16, h->record_size);
    nx_put_u32(out + 20, h->pcore_count);
    nx_put_u64(out + 24, h->program_hash);
    nx_put_u32(out + 32, h->ticks_per_ns_num);
    nx_put_u32(out + 36, h->ticks_per_ns_den);
    nx_put_i64(out + 40, h->epoch_ns);
    nx_put_u64(out + 48, h->reorder_window_ticks);
    nx_put_u32(out + 56, h->neuron_device_idx);
    nx_put_u32(out + 60, h->neuroncore_idx);
    nx_put_u32(out + 64, h->pid);
    nx_put_u32(out + 68, h->flags);
    nx_put_i64(out + 72, h->session_id);
    nx_put_i64(out + 80, h->model_id);
    put_text(out + 88, h->instance_id, NX_TRACE_TEXT_SIZE);
    put_text(out + 120, h->instance_type, NX_TRACE_TEXT_SIZE);
    put_text(out + 152, h->runtime_version, NX_TRACE_VERSION_TEXT_SIZE);
    put_text(out + 168, h->driver_version, NX_TRACE_VERSION_TEXT_SIZE);
    put_text(out + 184, h->collectives_version, NX_TRACE_VERSION_TEXT_SIZE);
}

static void encode_body(const nx_trace_record *r, unsigned char *o)
{
    switch (r->kind) {
    case NX_REC_INSTRUCTION:
        o[2] = r->u.instr.engine;
        o[3] = r->u.instr.flags;
        nx_put_u32(o + 4, r->u.instr.pc);
        nx_put_u32(o + 24, r->u.instr.evt_wait_ticks);
        nx_put_u32(o + 28, r->u.instr.crc_in);
        nx_put_u32(o + 32, r->u.instr.crc_out);
        break;
    case NX_REC_DMA_BLOCK:
        nx_put_u16(o + 2, r->u.block.queue);
        nx_put_u32(o + 4, r->u.block.block_id);
        nx_put_u32(o + 16, r->u.block.descriptor);
        nx_put_u32(o + 20, r->u.block.trigger_pc);
        o[24] = r->u.block.trigger_engine;
        break;
    case NX_REC_DMA_PACKET:
        nx_put_u16(o + 2, r->u.packet.queue);
        nx_put_u32(o + 4, r->u.packet.block_id);
        nx_put_u32(o + 24, r->u.packet.read_bytes);
        nx_put_u32(o + 28, r->u.packet.write_bytes);
        nx_put_u32(o + 32, r->u.packet.crc);
        nx_put_u16(o + 36, r->u.packet.packet_idx);
        break;
    case NX_REC_SEMAPHORE:
        nx_put_u16(o + 2, r->u.sem.semaphore);
        nx_put_i32(o + 4, r->u.sem.value);
        o[16] = r->u.sem.source_kind;
        o[17] = r->u.sem.op;
        o[18] = r->u.sem.timing;
        o[19] = r->u.sem.flags;
        nx_put_u16(o + 20, r->u.sem.source);
        nx_put_i32(o + 24, r->u.sem.update_mode);
        break;
    case NX_REC_CC_OP:
        nx_put_u32(o + 4, r->u.cc_op.collective);
        nx_put_u64(o + 24, r->u.cc_op.trigger_ts);
        break;
    case NX_REC_CC_INSTR:
        o[2] = r->u.cc_instr.cc_core;
        o[3] = r->u.cc_instr.trigger_engine;
        nx_put_u32(o + 4, r->u.cc_instr.description);
        nx_put_u64(o + 24, r->u.cc_instr.trigger_ts);
        nx_put_u32(o + 32, r->u.cc_instr.collective);
        break;
    case NX_REC_THROTTLE:
        o[2] = r->u.throttle.mechanism;
        nx_put_u16(o + 4, r->u.throttle.k);
        nx_put_u16(o + 6, r->u.throttle.n);
        break;
    case NX_REC_ERROR:
        o[2] = r->u.error.type;
        nx_put_u32(o + 4, r->u.error.error_type_id);
        nx_put_u64(o + 16, r->u.error.payload);
        nx_put_u32(o + 24, r->u.error.description);
        nx_put_u32(o + 28, r->u.error.metadata);
        break;
    case NX_REC_EXECUTION:
        nx_put_u32(o + 4, r->u.execution.index);
        break;
    default:
        break;
    }
}

/* Kinds whose bytes 16..23 are an end timestamp. */
static bool is_interval(unsigned kind)
{
    return kind == NX_REC_INSTRUCTION || kind == NX_REC_DMA_PACKET || kind == NX_REC_CC_OP ||
           kind == NX_REC_CC_INSTR || kind == NX_REC_THROTTLE || kind == NX_REC_EXECUTION;
}

void nx_trace_encode(const nx_trace_record *r, unsigned char out[NX_TRACE_RECORD_SIZE])
{
    memset(out, 0, NX_TRACE_RECORD_SIZE);
    out[0] = r->kind;
    out[1] = r->pcore;
    nx_put_u64(out + 8, r->ts);
    if (is_interval(r->kind))
        nx_put_u64(out + 16, r->end);
    encode_body(r, out);
}

static void decode_body(const unsigned char *in, nx_trace_record *r)
{
    switch (r->kind) {
    case NX_REC_INSTRUCTION:
        r->u.instr.engine = in[2];
        r->u.instr.flags = in[3];
        r->u.instr.pc = nx_get_u32(in + 4);
        r->u.instr.evt_wait_ticks = nx_get_u32(in + 24);
        r->u.instr.crc_in = nx_get_u32(in + 28);
        r->u.instr.crc_out = nx_get_u32(in + 32);
        break;
    case NX_REC_DMA_BLOCK:
        r->u.block.queue = nx_get_u16(in + 2);
        r->u.block.block_id = nx_get_u32(in + 4);
        r->u.block.descriptor = nx_get_u32(in + 16);
        r->u.block.trigger_pc = nx_get_u32(in + 20);
        r->u.block.trigger_engine = in[24];
        break;
    case NX_REC_DMA_PACKET:
        r->u.packet.queue = nx_get_u16(in + 2);
        r->u.packet.block_id = nx_get_u32(in + 4);
        r->u.packet.read_bytes = nx_get_u32(in + 24);
        r->u.packet.write_bytes = nx_get_u32(in + 28);
        r->u.packet.crc = nx_get_u32(in + 32);
        r->u.packet.packet_idx = nx_get_u16(in + 36);
        break;
    case NX_REC_SEMAPHORE:
        r->u.sem.semaphore = nx_get_u16(in + 2);
        r->u.sem.value = nx_get_i32(in + 4);
        r->u.sem.source_kind = in[16];
        r->u.sem.op = in[17];
        r->u.sem.timing = in[18];
        r->u.sem.flags = in[19];
        r->u.sem.source = nx_get_u16(in + 20);
        r->u.sem.update_mode = nx_get_i32(in + 24);
        break;
    case NX_REC_CC_OP:
        r->u.cc_op.collective = nx_get_u32(in + 4);
        r->u.cc_op.trigger_ts = nx_get_u64(in + 24);
        break;
    case NX_REC_CC_INSTR:
        r->u.cc_instr.cc_core = in[2];
        r->u.cc_instr.trigger_engine = in[3];
        r->u.cc_instr.description = nx_get_u32(in + 4);
        r->u.cc_instr.trigger_ts = nx_get_u64(in + 24);
        r->u.cc_instr.collective = nx_get_u32(in + 32);
        break;
    case NX_REC_THROTTLE:
        r->u.throttle.mechanism = in[2];
        r->u.throttle.k = nx_get_u16(in + 4);
        r->u.throttle.n = nx_get_u16(in + 6);
        break;
    case NX_REC_ERROR:
        r->u.error.type = in[2];
        r->u.error.error_type_id = nx_get_u32(in + 4);
        r->u.error.payload = nx_get_u64(in + 16);
        r->u.error.description = nx_get_u32(in + 24);
        r->u.error.metadata = nx_get_u32(in + 28);
        break;
    case NX_REC_EXECUTION:
        r->u.execution.index = nx_get_u32(in + 4);
        break;
    default:
        break;
    }
}

void nx_trace_decode(const unsigned char in[NX_TRACE_RECORD_SIZE], nx_trace_record *r)
{
    memset(r, 0, sizeof *r);
    r->kind = in[0];
    r->pcore = in[1];
    r->ts = nx_get_u64(in + 8);
    r->end = is_interval(r->kind) ? nx_get_u64(in + 16) : 0;
    decode_body(in, r);
}
