/*
 * trace_read.c — the streaming device trace reader: header checks, a 1 MiB read
 * buffer, and per-record validation against the header and the paired program
 * with constant state per stream. See device_trace.h for the contract and
 * docs/capture-format.md for the rules ("What readers reject").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture_util.h"
#include "capture/device_trace.h"

#define READ_BUF (1u << 20)
#define MAX_BACKSTEP_WARNINGS 10

/* Per (pcore, queue): where its DMA blocks and packets have got to. */
typedef struct dma_state {
    uint32_t first;           /* the first block id announced */
    uint32_t next_announce;   /* block id the next DMA_BLOCK must carry */
    uint32_t cur_block;       /* block whose packets are arriving */
    uint32_t next_packet;     /* packet_idx the next packet of cur_block must carry */
    bool announced, started;
} dma_state;

enum { S_INSTR, S_BLOCK, S_PACKET, S_SEM, S_CC_OP, S_CC_INSTR, S_THROTTLE, S_ERROR, S_EXEC, S_COUNT };

struct nx_trace_reader {
    char *path;
    int fd;
    const nx_program *prog;
    nx_cap_warner warn;
    nx_trace_header h;
    unsigned char *buf;
    size_t buf_len, buf_pos;
    uint64_t next_off, last_off, n_records, n_read;
    uint64_t max_ts;
    uint64_t *last_ts;              /* one per stream, see stream_of() */
    size_t base[S_COUNT];
    size_t sem_sources;             /* engines + queues + CC cores, per pcore */
    dma_state *dma;                 /* pcore_count * n_queues */
    uint64_t exec_end;
    bool any_exec;
    uint64_t backsteps;
};

/* --- header ---------------------------------------------------------------- */

static int get_text(const unsigned char *src, size_t slot, char *dst, const char *path,
                    uint64_t off, const char *field, nx_error *err)
{
    size_t n = 0;
    while (n < slot && src[n])
        n++;
    for (size_t i = 0; i < slot; i++) {
        bool ok = i < n ? src[i] >= 0x20 && src[i] < 0x7f : src[i] == 0;
        if (!ok)
            return nx_cap_fail_at(err, path, off + i, "%s: byte 0x%02x; expected printable ASCII "
                                  "padded with NUL bytes", field, src[i]);
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

static int check_header_fields(const nx_trace_header *h, const char *path, nx_error *err)
{
    if (h->version_major != NX_TRACE_VERSION_MAJOR)
        return nx_cap_fail_at(err, path, 8, "unsupported version %u.%u; this reader reads %d.x",
                              h->version_major, h->version_minor, NX_TRACE_VERSION_MAJOR);
    if (h->header_size < NX_TRACE_HEADER_SIZE)
        return nx_cap_fail_at(err, path, 12, "header_size %" PRIu32 "; expected at least %d",
                              h->header_size, NX_TRACE_HEADER_SIZE);
    if (h->record_size != NX_TRACE_RECORD_SIZE)
        return nx_cap_fail_at(err, path, 16, "record_size %" PRIu32 "; expected %d", h->record_size,
                              NX_TRACE_RECORD_SIZE);
    if (h->pcore_count == 0 || h->pcore_count > NX_TRACE_MAX_PCORES)
        return nx_cap_fail_at(err, path, 20, "pcore_count %" PRIu32 "; expected 1..%d", h->pcore_count,
                              NX_TRACE_MAX_PCORES);
    if (h->ticks_per_ns_num == 0 || h->ticks_per_ns_den == 0)
        return nx_cap_fail_at(err, path, h->ticks_per_ns_num == 0 ? 32 : 36,
                              "ticks per ns %" PRIu32 "/%" PRIu32 "; numerator and denominator must be > 0",
                              h->ticks_per_ns_num, h->ticks_per_ns_den);
    return 0;
}

static int parse_header(const unsigned char *b, size_t avail, nx_trace_header *h, const char *path,
                        nx_error *err)
{
    if (avail < NX_TRACE_HEADER_SIZE)
        return nx_cap_fail_at(err, path, avail, "truncated header: %zu bytes, expected %d", avail,
                              NX_TRACE_HEADER_SIZE);
    if (memcmp(b, NX_TRACE_MAGIC, 8) != 0)
        return nx_cap_fail_at(err, path, 0, "wrong magic; expected \"NXTRACE\\0\" (a device trace)");
    memset(h, 0, sizeof *h);
    h->version_major = nx_get_u16(b + 8);
    h->version_minor = nx_get_u16(b + 10);
    h->header_size = nx_get_u32(b + 12);
    h->record_size = nx_get_u32(b + 16);
    h->pcore_count = nx_get_u32(b + 20);
    h->program_hash = nx_get_u64(b + 24);
    h->ticks_per_ns_num = nx_get_u32(b + 32);
    h->ticks_per_ns_den = nx_get_u32(b + 36);
    h->epoch_ns = nx_get_i64(b + 40);
    h->reorder_window_ticks = nx_get_u64(b + 48);
    h->neuron_device_idx = nx_get_u32(b + 56);
    h->neuroncore_idx = nx_get_u32(b + 60);
    h->pid = nx_get_u32(b + 64);
    h->flags = nx_get_u32(b + 68);
    h->session_id = nx_get_i64(b + 72);
    h->model_id = nx_get_i64(b + 80);
    if (check_header_fields(h, path, err) != 0 ||
        get_text(b + 88, NX_TRACE_TEXT_SIZE, h->instance_id, path, 88, "instance_id", err) != 0 ||
        get_text(b + 120, NX_TRACE_TEXT_SIZE, h->instance_type, path, 120, "instance_type", err) != 0 ||
        get_text(b + 152, 16, h->runtime_version, path, 152, "runtime_version", err) != 0 ||
        get_text(b + 168, 16, h->driver_version, path, 168, "driver_version", err) != 0 ||
        get_text(b + 184, 16, h->collectives_version, path, 184, "collectives_version", err) != 0)
        return -1;
    return 0;
}

/* Reads up to n bytes at the start of the file. */
static ssize_t read_full(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int nx_trace_read_header(const char *path, nx_trace_header *h, nx_error *err)
{
    int fd = nx_cap_open_input(path, NULL, err);
    if (fd < 0)
        return -1;
    unsigned char b[NX_TRACE_HEADER_SIZE];
    ssize_t n = read_full(fd, b, sizeof b);
    int e = errno;
    close(fd);
    if (n < 0)
        return nx_cap_fail(err, path, "read failed: %s", strerror(e));
    return parse_header(b, (size_t)n, h, path, err);
}

/* --- open ------------------------------------------------------------------ */

static int check_pairing(nx_trace_reader *r, nx_error *err)
{
    const nx_trace_header *h = &r->h;
    if (h->program_hash != r->prog->hash)
        return nx_cap_fail_at(err, r->path, 24, "program hash %016" PRIx64 " does not match the program %s "
                              "(hash %016" PRIx64 "); expected the trace of that program",
                              h->program_hash, r->prog->path ? r->prog->path : "given", r->prog->hash);
    uint64_t hash;
    uint32_t dev, core;
    if (nx_cap_parse_trace_name(nx_cap_basename(r->path), &hash, &dev, &core) &&
        (hash != h->program_hash || dev != h->neuron_device_idx || core != h->neuroncore_idx))
        return nx_cap_fail(err, r->path, "the file name says hash %016" PRIx64 ", device %" PRIu32 ", core %"
                           PRIu32 " but the header says %016" PRIx64 ", %" PRIu32 ", %" PRIu32, hash, dev, core,
                           h->program_hash, h->neuron_device_idx, h->neuroncore_idx);
    return 0;
}

static int alloc_state(nx_trace_reader *r, nx_error *err)
{
    size_t pc = r->h.pcore_count, nq = r->prog->n_queues, ncc = r->prog->hw.cc_core_count;
    r->sem_sources = NX_ENGINE_COUNT + nq + ncc;
    const size_t sizes[S_COUNT] = {pc * NX_ENGINE_COUNT, pc * nq, pc * nq, pc * r->sem_sources, 1, ncc, pc, pc, 1};
    size_t total = 0;
    for (int s = 0; s < S_COUNT; s++) {
        r->base[s] = total;
        total += sizes[s];
    }
    r->last_ts = calloc(total, sizeof *r->last_ts);
    r->dma = calloc(pc * nq + 1, sizeof *r->dma);
    r->buf = malloc(READ_BUF);
    if (!r->last_ts || !r->dma || !r->buf)
        return nx_cap_fail(err, r->path, "out of memory");
    return 0;
}

static int open_file(nx_trace_reader *r, nx_error *err)
{
    struct stat st;
    r->fd = nx_cap_open_input(r->path, &st, err);
    if (r->fd < 0)
        return -1;
    unsigned char b[NX_TRACE_HEADER_SIZE];
    ssize_t n = read_full(r->fd, b, sizeof b);
    if (n < 0)
        return nx_cap_fail(err, r->path, "read failed: %s", strerror(errno));
    if (parse_header(b, (size_t)n, &r->h, r->path, err) != 0)
        return -1;
    uint64_t size = (uint64_t)st.st_size;
    if (r->h.header_size > size)
        return nx_cap_fail_at(err, r->path, 12, "header_size %" PRIu32 " is beyond the end of the file (%"
                              PRIu64 " bytes)", r->h.header_size, size);
    uint64_t body = size - r->h.header_size, rem = body % NX_TRACE_RECORD_SIZE;
    if (rem)
        return nx_cap_fail_at(err, r->path, size - rem, "truncated record: %" PRIu64 " of %d bytes at the "
                              "end of the file", rem, NX_TRACE_RECORD_SIZE);
    r->n_records = body / NX_TRACE_RECORD_SIZE;
    r->next_off = r->h.header_size;
    if (lseek(r->fd, (off_t)r->h.header_size, SEEK_SET) < 0)
        return nx_cap_fail(err, r->path, "seek failed: %s", strerror(errno));
    return 0;
}

int nx_trace_reader_open(const char *path, const nx_program *prog, const nx_cap_warner *warn,
                         nx_trace_reader **out, nx_error *err)
{
    *out = NULL;
    nx_trace_reader *r = calloc(1, sizeof *r);
    if (!r)
        return nx_cap_fail(err, path, "out of memory");
    r->fd = -1;
    r->prog = prog;
    if (warn)
        r->warn = *warn;
    r->path = strdup(path);
    if (!r->path) {
        free(r);
        return nx_cap_fail(err, path, "out of memory");
    }
    if (open_file(r, err) != 0 || check_pairing(r, err) != 0 || alloc_state(r, err) != 0) {
        nx_trace_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

const nx_trace_header *nx_trace_reader_header(const nx_trace_reader *r) { return &r->h; }
uint64_t nx_trace_reader_offset(const nx_trace_reader *r) { return r->last_off; }
uint64_t nx_trace_reader_record_count(const nx_trace_reader *r) { return r->n_records; }

void nx_trace_reader_close(nx_trace_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    free(r->last_ts);
    free(r->dma);
    free(r->path);
    free(r);
}

/* --- per-record validation --------------------------------------------------- */

#define BAD(r, err, fmt, ...) nx_cap_fail_at((err), (r)->path, (r)->last_off, fmt, __VA_ARGS__)

static int check_engine_pc(nx_trace_reader *r, unsigned engine, uint32_t pc, const char *what,
                           nx_error *err)
{
    if (engine >= NX_ENGINE_COUNT)
        return BAD(r, err, "%s engine %u out of range (expected 0..4)", what, engine);
    if (!nx_program_find_instr(r->prog, engine, pc))
        return BAD(r, err, "%s pc %" PRIu32 " is not an instruction of engine %s in the program",
                   what, pc, nx_engine_name(engine));
    return 0;
}

static int check_ref(nx_trace_reader *r, uint32_t ref, bool required, const char *what, nx_error *err)
{
    if (ref == 0 && !required)
        return 0;
    if (ref == 0 || !nx_program_string(r->prog, ref))
        return BAD(r, err, "%s string reference %" PRIu32 " is not the start of a non-empty string of the "
                   "program's string table", what, ref);
    return 0;
}

static int check_block(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    const uint16_t q = rec->u.block.queue;
    if (q >= r->prog->n_queues)
        return BAD(r, err, "queue %u out of range (program has %zu queues)", q, r->prog->n_queues);
    uint32_t d = rec->u.block.descriptor;
    if (d >= r->prog->n_descs || r->prog->descs[d].queue != q)
        return BAD(r, err, "descriptor %" PRIu32 " %s", d, d >= r->prog->n_descs
                   ? "out of range of the program's DMA_DESCRIPTORS" : "belongs to another queue");
    if (rec->u.block.trigger_engine == NX_ENGINE_NONE) {
        if (rec->u.block.trigger_pc != NX_NO_PC)
            return BAD(r, err, "trigger pc %" PRIu32 " without a trigger engine", rec->u.block.trigger_pc);
    } else if (check_engine_pc(r, rec->u.block.trigger_engine, rec->u.block.trigger_pc, "trigger", err) != 0)
        return -1;
    dma_state *s = &r->dma[(size_t)rec->pcore * r->prog->n_queues + q];
    if (s->announced && rec->u.block.block_id != s->next_announce)
        return BAD(r, err, "block id %" PRIu32 " on queue %u; expected %" PRIu32 " (block ids of a queue "
                   "increase by one)", rec->u.block.block_id, q, s->next_announce);
    if (!s->announced)
        s->first = rec->u.block.block_id;
    s->announced = true;
    s->next_announce = rec->u.block.block_id + 1;
    return 0;
}

static int check_packet(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    const uint16_t q = rec->u.packet.queue;
    if (q >= r->prog->n_queues)
        return BAD(r, err, "queue %u out of range (program has %zu queues)", q, r->prog->n_queues);
    dma_state *s = &r->dma[(size_t)rec->pcore * r->prog->n_queues + q];
    uint32_t b = rec->u.packet.block_id;
    if (!s->announced || b >= s->next_announce || (s->started && b < s->cur_block))
        return BAD(r, err, "packet of block %" PRIu32 " on queue %u; expected a block already announced by "
                   "a dma_block record and not older than block %" PRIu32, b, q, s->cur_block);
    if (!s->started || b != s->cur_block) {
        uint32_t expected = s->started ? s->cur_block + 1 : s->first;
        if (b > expected)
            nx_cap_warn(&r->warn, r->path, r->last_off, "Missing Data",
                        "blocks %" PRIu32 "..%" PRIu32 " of queue %u (pcore %u) have no packets", expected, b - 1,
                        q, rec->pcore);
        s->started = true;
        s->cur_block = b;
        s->next_packet = 0;
    }
    if (rec->u.packet.packet_idx != s->next_packet)
        return BAD(r, err, "packet_idx %u in block %" PRIu32 " of queue %u; expected %" PRIu32,
                   rec->u.packet.packet_idx, b, q, s->next_packet);
    s->next_packet++;
    return 0;
}

static int check_sem(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    if (rec->u.sem.semaphore >= r->prog->n_semaphores)
        return BAD(r, err, "semaphore %u out of range (program has %zu)", rec->u.sem.semaphore,
                   r->prog->n_semaphores);
    const size_t limit[3] = {NX_ENGINE_COUNT, r->prog->n_queues, r->prog->hw.cc_core_count};
    if (rec->u.sem.source_kind > NX_SEM_SRC_CC_CORE || rec->u.sem.source >= limit[rec->u.sem.source_kind])
        return BAD(r, err, "update source %u/%u out of range (kinds 0 engine, 1 queue, 2 CC core)",
                   rec->u.sem.source_kind, rec->u.sem.source);
    if (rec->u.sem.op > NX_SEM_DEC || rec->u.sem.timing > NX_SEM_TIMING_COMPLETE)
        return BAD(r, err, "operation %u / timing %u out of range (expected 0..2 each)", rec->u.sem.op,
                   rec->u.sem.timing);
    return 0;
}

static int check_cc(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    bool op = rec->kind == NX_REC_CC_OP;
    uint32_t coll = op ? rec->u.cc_op.collective : rec->u.cc_instr.collective;
    uint64_t trig = op ? rec->u.cc_op.trigger_ts : rec->u.cc_instr.trigger_ts;
    if ((op || coll != NX_NO_REF) && coll >= r->prog->n_collectives)
        return BAD(r, err, "collective %" PRIu32 " out of range (program has %zu)", coll, r->prog->n_collectives);
    if (trig != NX_NO_TICKS && trig > rec->ts)
        return BAD(r, err, "trigger at tick %" PRIu64 " is after the start at %" PRIu64, trig, rec->ts);
    if (op)
        return 0;
    if (rec->u.cc_instr.cc_core >= r->prog->hw.cc_core_count)
        return BAD(r, err, "CC core %u out of range (program hardware has %" PRIu32 ")", rec->u.cc_instr.cc_core,
                   r->prog->hw.cc_core_count);
    if (rec->u.cc_instr.trigger_engine >= NX_ENGINE_COUNT && rec->u.cc_instr.trigger_engine != NX_ENGINE_NONE)
        return BAD(r, err, "trigger engine %u out of range (expected 0..4 or 255)", rec->u.cc_instr.trigger_engine);
    return check_ref(r, rec->u.cc_instr.description, true, "description", err);
}

static int check_misc(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    switch (rec->kind) {
    case NX_REC_THROTTLE:
        if (rec->u.throttle.n == 0 || rec->u.throttle.k > rec->u.throttle.n)
            return BAD(r, err, "throttle %u/%u; expected 0 <= k <= n and n > 0", rec->u.throttle.k,
                       rec->u.throttle.n);
        return 0;
    case NX_REC_ERROR:
        if (rec->u.error.type >= NX_ERR_TYPE_COUNT)
            return BAD(r, err, "error type %u out of range (expected 0..2)", rec->u.error.type);
        if (check_ref(r, rec->u.error.description, true, "description", err) != 0)
            return -1;
        return check_ref(r, rec->u.error.metadata, false, "metadata", err);
    default: /* NX_REC_EXECUTION */
        if (r->any_exec && rec->ts < r->exec_end)
            nx_cap_warn(&r->warn, r->path, r->last_off, "Invalid Data",
                        "execution %" PRIu32 " starts before the previous one ended", rec->u.execution.index);
        r->any_exec = true;
        r->exec_end = rec->end;
        return 0;
    }
}

static int check_kind(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    switch (rec->kind) {
    case NX_REC_INSTRUCTION:
        return check_engine_pc(r, rec->u.instr.engine, rec->u.instr.pc, "instruction", err);
    case NX_REC_DMA_BLOCK:
        return check_block(r, rec, err);
    case NX_REC_DMA_PACKET:
        return check_packet(r, rec, err);
    case NX_REC_SEMAPHORE:
        return check_sem(r, rec, err);
    case NX_REC_CC_OP:
    case NX_REC_CC_INSTR:
        return check_cc(r, rec, err);
    default:
        return check_misc(r, rec, err);
    }
}

/* The stream a (validated) record belongs to; see "Ordering" in the spec. */
static size_t stream_of(const nx_trace_reader *r, const nx_trace_record *rec)
{
    size_t p = rec->pcore, nq = r->prog->n_queues;
    switch (rec->kind) {
    case NX_REC_INSTRUCTION: return r->base[S_INSTR] + p * NX_ENGINE_COUNT + rec->u.instr.engine;
    case NX_REC_DMA_BLOCK: return r->base[S_BLOCK] + p * nq + rec->u.block.queue;
    case NX_REC_DMA_PACKET: return r->base[S_PACKET] + p * nq + rec->u.packet.queue;
    case NX_REC_SEMAPHORE: {
        size_t off = rec->u.sem.source_kind == NX_SEM_SRC_ENGINE ? 0
                   : rec->u.sem.source_kind == NX_SEM_SRC_QUEUE ? NX_ENGINE_COUNT : NX_ENGINE_COUNT + nq;
        return r->base[S_SEM] + p * r->sem_sources + off + rec->u.sem.source;
    }
    case NX_REC_CC_OP: return r->base[S_CC_OP];
    case NX_REC_CC_INSTR: return r->base[S_CC_INSTR] + rec->u.cc_instr.cc_core;
    case NX_REC_THROTTLE: return r->base[S_THROTTLE] + p;
    case NX_REC_ERROR: return r->base[S_ERROR] + p;
    default: return r->base[S_EXEC];
    }
}

static int check_order(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    uint64_t w = r->h.reorder_window_ticks;
    if (rec->ts < r->max_ts && r->max_ts - rec->ts > w)
        return BAD(r, err, "timestamp %" PRIu64 " is %" PRIu64 " ticks behind the latest earlier timestamp %"
                   PRIu64 "; the header allows at most %" PRIu64 " (reorder window)", rec->ts,
                   r->max_ts - rec->ts, r->max_ts, w);
    if (rec->ts > r->max_ts)
        r->max_ts = rec->ts;
    uint64_t *last = &r->last_ts[stream_of(r, rec)];
    if (rec->ts < *last && ++r->backsteps <= MAX_BACKSTEP_WARNINGS)
        nx_cap_warn(&r->warn, r->path, r->last_off, "Invalid Data",
                    "%s record steps back %" PRIu64 " ticks within its stream (inside the reorder window)",
                    nx_rec_kind_name(rec->kind), *last - rec->ts);
    if (rec->ts > *last)
        *last = rec->ts;
    return 0;
}

static int validate(nx_trace_reader *r, const nx_trace_record *rec, nx_error *err)
{
    if (rec->kind == 0 || rec->kind > NX_REC_KIND_MAX)
        return BAD(r, err, "unknown record kind %u; expected 1..%d", rec->kind, NX_REC_KIND_MAX);
    if (rec->pcore >= r->h.pcore_count)
        return BAD(r, err, "pcore %u out of range (header pcore_count %" PRIu32 ")", rec->pcore, r->h.pcore_count);
    if (rec->end < rec->ts && rec->kind != NX_REC_DMA_BLOCK && rec->kind != NX_REC_SEMAPHORE &&
        rec->kind != NX_REC_ERROR)
        return BAD(r, err, "%s ends at tick %" PRIu64 ", before it starts at %" PRIu64,
                   nx_rec_kind_name(rec->kind), rec->end, rec->ts);
    if (check_kind(r, rec, err) != 0)
        return -1;
    return check_order(r, rec, err);
}

/* --- reading ------------------------------------------------------------------ */

static int refill(nx_trace_reader *r, nx_error *err)
{
    size_t keep = r->buf_len - r->buf_pos;
    memmove(r->buf, r->buf + r->buf_pos, keep);
    r->buf_len = keep;
    r->buf_pos = 0;
    ssize_t n = read_full(r->fd, r->buf + keep, READ_BUF - keep);
    if (n < 0)
        return nx_cap_fail_at(err, r->path, r->next_off, "read failed: %s", strerror(errno));
    r->buf_len += (size_t)n;
    return 0;
}

/* Blocks announced at the end whose packets never came. */
static void warn_unfinished_blocks(nx_trace_reader *r)
{
    size_t nq = r->prog->n_queues;
    for (size_t i = 0; i < r->h.pcore_count * nq; i++) {
        const dma_state *s = &r->dma[i];
        uint32_t from = s->started ? s->cur_block + 1 : s->first;
        if (s->announced && from < s->next_announce)
            nx_cap_warn(&r->warn, r->path, NX_CAP_NOWHERE, "Missing Data",
                        "blocks %" PRIu32 "..%" PRIu32 " of queue %zu (pcore %zu) have no packets", from,
                        s->next_announce - 1, i % nq, i / nq);
    }
}

static void finish(nx_trace_reader *r)
{
    warn_unfinished_blocks(r);
    if (r->n_read == 0)
        nx_cap_warn(&r->warn, r->path, NX_CAP_NOWHERE, "Missing Data", "the trace holds no records");
    if (r->backsteps > MAX_BACKSTEP_WARNINGS)
        nx_cap_warn(&r->warn, r->path, NX_CAP_NOWHERE, "Invalid Data",
                    "%" PRIu64 " more records stepped back within their stream", r->backsteps - MAX_BACKSTEP_WARNINGS);
}

int nx_trace_reader_next(nx_trace_reader *r, nx_trace_record *rec, nx_error *err)
{
    if (r->n_read >= r->n_records) {
        if (r->n_read == r->n_records) {
            finish(r);
            r->n_read++;   /* report the end-of-trace warnings once */
        }
        return 0;
    }
    if (r->buf_len - r->buf_pos < NX_TRACE_RECORD_SIZE) {
        if (refill(r, err) != 0)
            return -1;
        if (r->buf_len - r->buf_pos < NX_TRACE_RECORD_SIZE)
            return nx_cap_fail_at(err, r->path, r->next_off, "truncated record: the file shrank while "
                                  "being read");
    }
    nx_trace_decode(r->buf + r->buf_pos, rec);
    r->buf_pos += NX_TRACE_RECORD_SIZE;
    r->last_off = r->next_off;
    r->next_off += NX_TRACE_RECORD_SIZE;
    r->n_read++;
    return validate(r, rec, err) == 0 ? 1 : -1;
}
