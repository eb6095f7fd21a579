/*
 * device_trace.h — the device trace (`trace_<hash>_nd<D>_nc<C>.nxtrace`), one per
 * NeuronCore: nxprof's open stand-in for an NTFF. A 256-byte little-endian
 * header (clock, identity, paired program hash) is followed by 40-byte records,
 * a kind byte first, timestamps in device ticks. Byte layout and every rule:
 * docs/capture-format.md, "Device trace".
 *
 * Reading streams in constant memory (a 1 MiB buffer plus per-stream state
 * sized by the program, never by the trace) and validates each record against
 * the header and the paired program before handing it out. Fatal problems end
 * the read with an error naming the file and byte offset; non-fatal ones go to
 * the warner (see nx_trace_reader_open()).
 *
 * Writing buffers records and writes them in large chunks; the writer encodes,
 * the reader judges: run a new writer's output through the reader in tests.
 */
#ifndef NX_DEVICE_TRACE_H
#define NX_DEVICE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/program_file.h"

#define NX_TRACE_MAGIC "NXTRACE\0"     /* 8 bytes */
#define NX_TRACE_VERSION_MAJOR 1
#define NX_TRACE_VERSION_MINOR 0
#define NX_TRACE_HEADER_SIZE 256
#define NX_TRACE_RECORD_SIZE 40
#define NX_TRACE_MAX_PCORES 8
#define NX_TRACE_TEXT_SIZE 32           /* instance_id, instance_type */
#define NX_TRACE_VERSION_TEXT_SIZE 16   /* runtime/driver/collectives versions */
#define NX_NO_PC 0xFFFFFFFFu
#define NX_NO_REF 0xFFFFFFFFu
#define NX_NO_TICKS UINT64_MAX

/* Header flags. */
#define NX_TRACE_FLAG_SIMULATION 0x1   /* Metadata.is_simulation */
#define NX_TRACE_FLAG_VNC 0x2          /* Metadata.vnc_enabled */

typedef struct nx_trace_header {
    uint16_t version_major, version_minor;
    uint32_t header_size;            /* where records start */
    uint32_t record_size;
    uint32_t pcore_count;            /* physical cores in this trace, 1..NX_TRACE_MAX_PCORES */
    uint64_t program_hash;
    uint32_t ticks_per_ns_num;       /* ticks per nanosecond = num / den, exactly */
    uint32_t ticks_per_ns_den;
    int64_t epoch_ns;                /* Unix time in ns of tick 0 */
    uint64_t reorder_window_ticks;   /* see "Ordering" in the spec */
    uint32_t neuron_device_idx;
    uint32_t neuroncore_idx;
    uint32_t pid;
    uint32_t flags;                  /* NX_TRACE_FLAG_* */
    int64_t session_id;              /* NX_ABSENT when unknown */
    int64_t model_id;
    char instance_id[NX_TRACE_TEXT_SIZE + 1];     /* NUL-terminated copies */
    char instance_type[NX_TRACE_TEXT_SIZE + 1];
    char runtime_version[NX_TRACE_VERSION_TEXT_SIZE + 1];
    char driver_version[NX_TRACE_VERSION_TEXT_SIZE + 1];
    char collectives_version[NX_TRACE_VERSION_TEXT_SIZE + 1];
} nx_trace_header;

/* Ticks -> nanoseconds since tick 0, exact floor of ticks * den / num. */
uint64_t nx_trace_ticks_to_ns(const nx_trace_header *h, uint64_t ticks);
/* Nanoseconds -> ticks, floor of ns * num / den. */
uint64_t nx_trace_ns_to_ticks(const nx_trace_header *h, uint64_t ns);

/* A trace's clock prepared for converting every record: the same results as
 * nx_trace_ticks_to_ns(), with multiplications by a reciprocal of num where
 * that divides twice (two 64-bit divisions per timestamp were a visible share
 * of the pipeline thread). */
typedef struct nx_trace_clock {
    uint64_t num, den;
    uint64_t inv;                    /* floor((2^64 - 1) / num) */
} nx_trace_clock;

void nx_trace_clock_init(nx_trace_clock *c, const nx_trace_header *h);

/* floor(x / c->num): the reciprocal's estimate is at most 2 below, then exact. */
static inline uint64_t nx_trace_clock_div(const nx_trace_clock *c, uint64_t x)
{
    uint64_t q = (uint64_t)(((unsigned __int128)x * c->inv) >> 64);
    uint64_t r = x - q * c->num;
    while (r >= c->num) {
        q++;
        r -= c->num;
    }
    return q;
}

/* Ticks -> nanoseconds since tick 0, exactly as nx_trace_ticks_to_ns(). The
 * result wraps when it exceeds 2^64 - 1: nx_trace_clock_unix_ns checks. */
static inline uint64_t nx_trace_clock_ns(const nx_trace_clock *c, uint64_t ticks)
{
    uint64_t q = nx_trace_clock_div(c, ticks), r = ticks - q * c->num;
    return q * c->den + nx_trace_clock_div(c, r * c->den);
}

/* The Unix ns times a record may have: 0 (1970) to 2^62 - 1 (in 2116). Any
 * other is a damaged tick or epoch value; the bound leaves the difference of
 * any two times and every usage bucket boundary room in an int64. */
#define NX_UNIX_NS_MAX (((int64_t)1 << 62) - 1)

/* epoch_ns + ticks in ns as Unix ns: true and *out, or false when it is not
 * in 0..NX_UNIX_NS_MAX (never a silent wrap). */
static inline bool nx_trace_clock_unix_ns(const nx_trace_clock *c, int64_t epoch_ns, uint64_t ticks, int64_t *out)
{
    uint64_t q = nx_trace_clock_div(c, ticks), r = ticks - q * c->num, hi;
    if (__builtin_mul_overflow(q, c->den, &hi))
        return false;
    uint64_t ns = hi + nx_trace_clock_div(c, r * c->den);
    if (ns < hi || ns > (uint64_t)INT64_MAX)
        return false;
    return !__builtin_add_overflow(epoch_ns, (int64_t)ns, out) && *out >= 0 && *out <= NX_UNIX_NS_MAX;
}

typedef enum nx_rec_kind {
    NX_REC_INSTRUCTION = 1,
    NX_REC_DMA_BLOCK = 2,
    NX_REC_DMA_PACKET = 3,
    NX_REC_SEMAPHORE = 4,
    NX_REC_CC_OP = 5,
    NX_REC_CC_INSTR = 6,
    NX_REC_THROTTLE = 7,
    NX_REC_ERROR = 8,
    NX_REC_EXECUTION = 9,
    NX_REC_KIND_MAX = 9
} nx_rec_kind;
const char *nx_rec_kind_name(unsigned kind);   /* "instruction", ...; NULL if unknown */

/* SemaphoreUpdate vocabularies. */
typedef enum nx_sem_source { NX_SEM_SRC_ENGINE, NX_SEM_SRC_QUEUE, NX_SEM_SRC_CC_CORE } nx_sem_source;
typedef enum nx_sem_op { NX_SEM_SET, NX_SEM_INC, NX_SEM_DEC } nx_sem_op;
typedef enum nx_sem_timing { NX_SEM_TIMING_NONE, NX_SEM_TIMING_START, NX_SEM_TIMING_COMPLETE } nx_sem_timing;
const char *nx_sem_op_name(unsigned op);           /* "sem_set", "sem_inc", "sem_dec" */
const char *nx_sem_timing_name(unsigned timing);   /* NULL (none), "start", "complete" */
/* ErrorType, in the schema's enum order. */
typedef enum nx_error_type { NX_ERR_CUSTOM_NOTIFICATION, NX_ERR_ERRORS, NX_ERR_WARNINGS, NX_ERR_TYPE_COUNT } nx_error_type;
const char *nx_error_type_name(unsigned t);

/* One decoded record. `ts` is the ordering key (bytes 8..15); interval kinds
 * also have `end` (bytes 16..23) >= ts. Fields not listed for a kind are 0. */
typedef struct nx_trace_record {
    uint8_t kind;                    /* nx_rec_kind */
    uint8_t pcore;
    uint64_t ts;                     /* ticks */
    uint64_t end;                    /* ticks; intervals only */
    union {
        struct { uint8_t engine, flags; uint32_t pc, evt_wait_ticks, crc_in, crc_out; } instr;
        struct { uint16_t queue; uint32_t block_id, descriptor, trigger_pc; uint8_t trigger_engine; } block;
        struct { uint16_t queue, packet_idx; uint32_t block_id, read_bytes, write_bytes, crc; } packet;
        struct { uint16_t semaphore, source; int32_t value, update_mode;
                 uint8_t source_kind, op, timing, flags; } sem;
        struct { uint32_t collective; uint64_t trigger_ts; } cc_op;
        struct { uint8_t cc_core, trigger_engine; uint32_t description, collective;
                 uint64_t trigger_ts; } cc_instr;
        struct { uint8_t mechanism; uint16_t k, n; } throttle;
        struct { uint8_t type; uint32_t error_type_id, description, metadata; uint64_t payload; } error;
        struct { uint32_t index; } execution;
    } u;
} nx_trace_record;

#define NX_INSTR_FLAG_CRC 0x1         /* instr.crc_in / crc_out hold values */
#define NX_SEM_FLAG_DOUBLE 0x1        /* sem: double_set_or_clear */

/* 40 bytes <-> record. Decoding does no validation. */
void nx_trace_encode(const nx_trace_record *r, unsigned char out[NX_TRACE_RECORD_SIZE]);
void nx_trace_decode(const unsigned char in[NX_TRACE_RECORD_SIZE], nx_trace_record *r);
/* 256 bytes <-> header; text fields longer than their slot are cut. */
void nx_trace_header_encode(const nx_trace_header *h, unsigned char out[NX_TRACE_HEADER_SIZE]);

/* --- reader ---------------------------------------------------------------- */

typedef struct nx_trace_reader nx_trace_reader;

/*
 * Opens `path`, validates the header (magic, major version, sizes, clock,
 * pcore count, text fields) and that its program hash is `prog`'s; when the file
 * name follows the trace pattern, its hash, device and core must match the
 * header too. A file whose record area is not a multiple of 40 bytes is
 * rejected here, before any record is read (truncated record).
 *
 * nx_trace_reader_next() then validates each record (see the spec's table of
 * fatal and non-fatal problems): unknown kind, pcore/engine/queue/semaphore/
 * collective/CC core out of range, pc not in the program, end before start,
 * DMA blocks out of order, a timestamp more than the header's reorder window
 * behind the largest one before it. A stream stepping back within the window
 * and an empty trace are warnings.
 */
int nx_trace_reader_open(const char *path, const nx_program *prog, const nx_cap_warner *warn,
                         nx_trace_reader **out, nx_error *err);
const nx_trace_header *nx_trace_reader_header(const nx_trace_reader *r);
/* 1: *rec holds the next record; 0: end of file; -1: fatal error in *err. */
int nx_trace_reader_next(nx_trace_reader *r, nx_trace_record *rec, nx_error *err);
/* Byte offset of the record last returned (for messages). */
uint64_t nx_trace_reader_offset(const nx_trace_reader *r);
uint64_t nx_trace_reader_record_count(const nx_trace_reader *r);   /* from the file size */
void nx_trace_reader_close(nx_trace_reader *r);

/* Reads only the header of `path` (discovery, listing). */
int nx_trace_read_header(const char *path, nx_trace_header *h, nx_error *err);

/* --- writer ---------------------------------------------------------------- */

typedef struct nx_trace_writer nx_trace_writer;

/* Creates (truncates) `path` and writes the header as format 1.0 (version, header_size
 * and record_size are set by the writer; the other fields come from h). */
int nx_trace_writer_open(const char *path, const nx_trace_header *h, nx_trace_writer **out,
                         nx_error *err);
int nx_trace_writer_put(nx_trace_writer *w, const nx_trace_record *r, nx_error *err);
/* Appends n already-encoded records (n * 40 bytes). */
int nx_trace_writer_put_raw(nx_trace_writer *w, const unsigned char *recs, size_t n,
                            nx_error *err);
/* Flushes and closes; always releases w. */
int nx_trace_writer_close(nx_trace_writer *w, nx_error *err);

#endif
