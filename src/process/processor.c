/*
 * processor.c — the device pipeline of `nxprof process` (see processor.h).
 *
 * Each device trace is a stream: records are read one at a time and instruction
 * records wait in a min-heap (by start tick) until no later record can start
 * before them, which the trace's reorder window bounds (a record is never more
 * than reorder_window_ticks behind the largest tick before it). The ready heads
 * of all streams are merged by Unix start time, so Instruction rows come out
 * sorted by start_ts while memory stays bounded by the reorder window.
 *
 * Rows go through a small row helper that records which columns were filled and
 * puts null into every other one; a required column left empty is an error that
 * names the table and field, so no required value is ever silently null.
 */
#include "process/processor.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "capture/device_trace.h"
#include "capture/program_file.h"
#include "nxprof_version.h"
#include "process/profile_output.h"
#include "process/table_writer.h"
#include "schema/schema.h"

/* ------------------------------------------------------------ row helper -- */

typedef struct row {
    nx_table_writer *tw;
    const nx_schema_table *s;
    nxpq_writer *w;
    bool *set;                       /* per column: a value was put this row */
    int rc;                          /* first put failure */
    const char *missing;             /* a field name the catalogue lacks */
} row;

static int row_open(row *r, const char *dir, const char *table, uint64_t max_rows, nxpq_error *err)
{
    memset(r, 0, sizeof *r);
    r->tw = nx_table_writer_open(dir, table, max_rows, NULL, err);
    if (!r->tw)
        return -1;
    r->s = nx_table_writer_schema(r->tw);
    r->set = calloc(r->s->n_fields, sizeof *r->set);
    if (!r->set) {
        nx_table_writer_abort(r->tw);
        r->tw = NULL;
        snprintf(err->msg, sizeof err->msg, "%s: out of memory", table);
        return -1;
    }
    return 0;
}

static int row_begin(row *r, nxpq_error *err)
{
    r->w = nx_table_begin_row(r->tw, err);
    if (!r->w)
        return -1;
    memset(r->set, 0, r->s->n_fields * sizeof *r->set);
    r->rc = 0;
    return 0;
}

/* The column index of `name`, or SIZE_MAX (remembered for row_end's message)
 * when the catalogue has no such field; puts into SIZE_MAX fail the row. */
static size_t col(row *r, const char *name)
{
    int c = nx_schema_field_index(r->s, name);
    if (c < 0) {
        r->missing = name;
        return SIZE_MAX;
    }
    return (size_t)c;
}

static bool known(row *r, size_t c)
{
    if (c < r->s->n_fields)
        return true;
    if (r->rc == 0)
        r->rc = -1;
    return false;
}

static void mark(row *r, size_t c, int rc)
{
    r->set[c] = true;
    if (rc != 0 && r->rc == 0)
        r->rc = rc;
}

static void put_i64(row *r, size_t c, int64_t v)
{
    if (known(r, c))
        mark(r, c, nxpq_put_int64(r->w, c, v));
}
static void put_i32(row *r, size_t c, int32_t v)
{
    if (known(r, c))
        mark(r, c, nxpq_put_int32(r->w, c, v));
}
static void put_f32(row *r, size_t c, float v)
{
    if (known(r, c))
        mark(r, c, nxpq_put_float(r->w, c, v));
}
static void put_bool(row *r, size_t c, bool v)
{
    if (known(r, c))
        mark(r, c, nxpq_put_bool(r->w, c, v));
}
static void put_str(row *r, size_t c, const char *s)
{
    if (known(r, c))
        mark(r, c, nxpq_put_string(r->w, c, s, strlen(s)));
}
/* Optional values: absent (-1, "") stays unset and becomes null at row_end. */
static void put_opt_i64(row *r, size_t c, int64_t v)
{
    if (v != NX_ABSENT)
        put_i64(r, c, v);
}
static void put_opt_str(row *r, size_t c, const char *s)
{
    if (s && *s)
        put_str(r, c, s);
}

static int row_end(row *r, nxpq_error *err)
{
    if (r->missing) {
        snprintf(err->msg, sizeof err->msg, "%s: the catalogue has no field %s", r->s->name, r->missing);
        return -1;
    }
    for (size_t c = 0; c < r->s->n_fields; c++) {
        if (r->set[c])
            continue;
        if (r->s->fields[c].required) {
            snprintf(err->msg, sizeof err->msg, "%s: no value for required field %s", r->s->name,
                     r->s->fields[c].name);
            return -1;
        }
        mark(r, c, nxpq_put_null(r->w, c));
    }
    if (r->rc != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: could not store a value", r->s->name);
        return -1;
    }
    return nx_table_end_row(r->tw, err);
}

/* Closes the table (abort when `ok` is false); counts it in *tables when written. */
static int row_close(row *r, bool ok, unsigned *tables, nxpq_error *err)
{
    int rc = 0;
    if (r->tw) {
        if (ok) {
            rc = nx_table_writer_close(r->tw, err);
            if (rc == 0)
                (*tables)++;
        } else {
            nx_table_writer_abort(r->tw);
        }
    }
    free(r->set);
    memset(r, 0, sizeof *r);
    return rc;
}

/* ------------------------------------------------------------ trace stream -- */

typedef struct trace_stream {
    const char *path;
    const nx_program *prog;
    nx_trace_reader *rd;
    nx_trace_header hdr;
    nx_trace_record *heap;           /* pending instruction records, min-heap by ts */
    size_t n, cap;
    uint64_t max_ts;                 /* largest record tick read so far */
    bool eof;
    bool any;                        /* at least one record */
    uint64_t first_tick, last_tick;  /* over every record's ts and end */
} trace_stream;

static void heap_push(trace_stream *s, const nx_trace_record *rec)
{
    size_t i = s->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s->heap[p].ts <= rec->ts)
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = *rec;
}

static void heap_pop(trace_stream *s)
{
    nx_trace_record last = s->heap[--s->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->n)
            break;
        if (c + 1 < s->n && s->heap[c + 1].ts < s->heap[c].ts)
            c++;
        if (last.ts <= s->heap[c].ts)
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->n > 0)
        s->heap[i] = last;
}

static bool head_ready(const trace_stream *s)
{
    if (s->n == 0)
        return false;
    if (s->eof)
        return true;
    uint64_t w = s->hdr.reorder_window_ticks;
    return s->max_ts >= w && s->heap[0].ts <= s->max_ts - w;
}

/* Reads until the stream's earliest pending instruction can no longer be
 * preceded by a later record, or the trace ends. */
static int stream_fill(trace_stream *s, nx_cap_error *cerr)
{
    while (!s->eof && !head_ready(s)) {
        nx_trace_record rec;
        int rc = nx_trace_reader_next(s->rd, &rec, cerr);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            s->eof = true;
            break;
        }
        uint64_t hi = rec.end > rec.ts ? rec.end : rec.ts;
        if (!s->any || rec.ts < s->first_tick)
            s->first_tick = rec.ts;
        if (!s->any || hi > s->last_tick)
            s->last_tick = hi;
        s->any = true;
        if (rec.ts > s->max_ts)
            s->max_ts = rec.ts;
        if (rec.kind != NX_REC_INSTRUCTION)
            continue;
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 1024;
            nx_trace_record *h = realloc(s->heap, cap * sizeof *h);
            if (!h) {
                snprintf(cerr->msg, sizeof cerr->msg, "%s: out of memory for the reorder window", s->path);
                return -1;
            }
            s->heap = h;
            s->cap = cap;
        }
        heap_push(s, &rec);
    }
    return 0;
}

static int64_t unix_ns(const nx_trace_header *h, uint64_t ticks)
{
    return h->epoch_ns + (int64_t)nx_trace_ticks_to_ns(h, ticks);
}

/* ------------------------------------------------------------ the run -- */

typedef struct proc {
    const nx_process_options *o;
    nx_process_stats *st;
    nx_capture cap;
    nx_program **progs;              /* one per program file, capture order */
    size_t n_progs;
    uint32_t *prog_pcores;           /* max pcore_count of each program's traces */
    trace_stream *streams;
    size_t n_streams;
    char *tmp_dir;
    uint64_t max_rows;
    nxpq_error perr;                 /* output errors */
    nx_cap_error cerr;               /* capture errors */
} proc;

static void on_warning(void *ctx, const char *path, uint64_t where, const char *category, const char *message)
{
    nx_process_stats *st = ctx;
    st->warnings++;
    if (where == NX_CAP_NOWHERE)
        fprintf(stderr, "nxprof process: warning: %s: %s: %s\n", path, category, message);
    else
        fprintf(stderr, "nxprof process: warning: %s (at %" PRIu64 "): %s: %s\n", path, where, category, message);
}

static int open_capture(proc *p, const nx_cap_warner *warn)
{
    if (nx_capture_discover(p->o->capture_dir, &p->cap, warn, &p->cerr) != 0)
        return -1;
    size_t np = 0, nt = 0;
    for (size_t i = 0; i < p->cap.n_sessions; i++) {
        np += p->cap.sessions[i].n_programs;
        for (size_t j = 0; j < p->cap.sessions[i].n_programs; j++)
            nt += p->cap.sessions[i].programs[j].n_traces;
    }
    if (nt == 0) {
        snprintf(p->cerr.msg, sizeof p->cerr.msg,
                 "%s: no device trace (framework-only captures are not processed yet)", p->o->capture_dir);
        return -1;
    }
    p->progs = calloc(np, sizeof *p->progs);
    p->prog_pcores = calloc(np, sizeof *p->prog_pcores);
    p->streams = calloc(nt, sizeof *p->streams);
    if (!p->progs || !p->prog_pcores || !p->streams) {
        snprintf(p->cerr.msg, sizeof p->cerr.msg, "%s: out of memory", p->o->capture_dir);
        return -1;
    }
    for (size_t i = 0; i < p->cap.n_sessions; i++) {
        const nx_cap_session *ses = &p->cap.sessions[i];
        for (size_t j = 0; j < ses->n_programs; j++) {
            const nx_cap_program_file *pf = &ses->programs[j];
            size_t pi = p->n_progs;
            if (nx_program_open(pf->path, &p->progs[pi], warn, &p->cerr) != 0)
                return -1;
            p->n_progs++;
            for (size_t k = 0; k < pf->n_traces; k++) {
                trace_stream *s = &p->streams[p->n_streams];
                s->path = pf->traces[k].path;
                s->prog = p->progs[pi];
                if (nx_trace_reader_open(s->path, s->prog, warn, &s->rd, &p->cerr) != 0)
                    return -1;
                p->n_streams++;
                s->hdr = *nx_trace_reader_header(s->rd);
                if (s->hdr.pcore_count > p->prog_pcores[pi])
                    p->prog_pcores[pi] = s->hdr.pcore_count;
            }
        }
    }
    p->st->programs = p->n_progs;
    p->st->traces = p->n_streams;
    return 0;
}

/* Column indices of Instruction, resolved once. */
#define INSTR_COLS(X)                                                                                  \
    X(start_ts) X(end_ts) X(duration_ns) X(engine) X(timeline_track) X(pcore_idx) X(opcode) X(operands) \
    X(compiler_opcode) X(compiler_operands) X(id) X(pc) X(compiler_pc) X(penguin_id) X(raw_penguin_id)   \
    X(bir_id) X(raw_bir_id) X(bir_instruction_name) X(kernel_instruction_name) X(crc_in) X(crc_out)       \
    X(evt_wait_time_ns) X(hlo_attrs) X(hlo_name) X(raw_hlo_id) X(raw_framework_id) X(layer)              \
    X(nki_source_location) X(bir_debug_info_source_location) X(instruction_chain) X(hbm_read_bytes)     \
    X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) X(spill_save_bytes) X(spill_reload_bytes) \
    X(psum_read_bytes) X(psum_write_bytes) X(psum_read_sbuf_write_bytes) X(input_queue_bytes)           \
    X(output_queue_bytes) X(weight_queue_bytes) X(performance_mode) X(tensor_instruction_type)          \
    X(tensor_elements) X(raw_flops) X(adjusted_flops) X(tensor_elements_transpose) X(flops_transpose)   \
    X(adjusted_flops_transpose) X(scalar_activation_fn)

enum {
#define X(name) IC_##name,
    INSTR_COLS(X)
#undef X
    IC_COUNT
};
typedef struct instr_cols {
    size_t at[IC_COUNT];
} instr_cols;

static const char *tensor_type_text(unsigned bits)
{
    switch (bits & 3u) {
    case NX_TENSOR_REGULAR: return "[\"REGULAR\"]";
    case NX_TENSOR_TRANSPOSE: return "[\"TRANSPOSE\"]";
    case NX_TENSOR_REGULAR | NX_TENSOR_TRANSPOSE: return "[\"REGULAR\", \"TRANSPOSE\"]";
    default: return NULL;
    }
}

static void put_instruction(row *r, const instr_cols *c, const trace_stream *s, const nx_trace_record *rec,
                            const nx_prog_instr *in, int64_t id, char *idbuf, size_t idlen)
{
    int64_t start = unix_ns(&s->hdr, rec->ts), end = unix_ns(&s->hdr, rec->end);
    put_i64(r, c->at[IC_start_ts], start);
    put_i64(r, c->at[IC_end_ts], end);
    put_i64(r, c->at[IC_duration_ns], end - start);
    put_str(r, c->at[IC_engine], nx_engine_name(rec->u.instr.engine));
    put_opt_str(r, c->at[IC_timeline_track], in->timeline_track);
    put_i64(r, c->at[IC_pcore_idx], rec->pcore);
    put_str(r, c->at[IC_opcode], in->opcode);
    put_str(r, c->at[IC_operands], in->operands);
    put_opt_str(r, c->at[IC_compiler_opcode], in->compiler_opcode);
    put_opt_str(r, c->at[IC_compiler_operands], in->compiler_operands);
    put_i64(r, c->at[IC_id], id);
    put_i64(r, c->at[IC_pc], rec->u.instr.pc);
    put_opt_i64(r, c->at[IC_compiler_pc], in->compiler_pc);
    if (in->raw_penguin_id != NX_ABSENT) {
        snprintf(idbuf, idlen, "%s:%" PRId64, in->subgraph, in->raw_penguin_id);
        put_str(r, c->at[IC_penguin_id], idbuf);
    }
    put_opt_i64(r, c->at[IC_raw_penguin_id], in->raw_penguin_id);
    if (in->raw_bir_id != NX_ABSENT)
        snprintf(idbuf, idlen, "%s:%" PRId64, in->subgraph, in->raw_bir_id);
    else
        snprintf(idbuf, idlen, "%s:", in->subgraph);
    put_str(r, c->at[IC_bir_id], idbuf);
    put_opt_i64(r, c->at[IC_raw_bir_id], in->raw_bir_id);
    put_opt_str(r, c->at[IC_bir_instruction_name], in->bir_instruction_name);
    put_opt_str(r, c->at[IC_kernel_instruction_name], in->kernel_instruction_name);
    if (rec->u.instr.flags & NX_INSTR_FLAG_CRC) {
        put_i64(r, c->at[IC_crc_in], rec->u.instr.crc_in);
        put_i64(r, c->at[IC_crc_out], rec->u.instr.crc_out);
    }
    put_i64(r, c->at[IC_evt_wait_time_ns], (int64_t)nx_trace_ticks_to_ns(&s->hdr, rec->u.instr.evt_wait_ticks));
    put_opt_str(r, c->at[IC_hlo_attrs], in->hlo_attrs);
    put_opt_str(r, c->at[IC_hlo_name], in->hlo_name);
    put_opt_i64(r, c->at[IC_raw_hlo_id], in->raw_hlo_id);
    put_opt_i64(r, c->at[IC_raw_framework_id], in->raw_framework_id);
    put_opt_str(r, c->at[IC_layer], in->layer);
    put_opt_str(r, c->at[IC_nki_source_location], in->nki_source_location);
    put_opt_str(r, c->at[IC_bir_debug_info_source_location], in->bir_debug_info_source_location);
    put_opt_str(r, c->at[IC_instruction_chain], in->instruction_chain);
#define X(name) put_opt_i64(r, c->at[IC_##name], in->name);
    X(hbm_read_bytes) X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) X(spill_save_bytes)
    X(spill_reload_bytes) X(psum_read_bytes) X(psum_write_bytes) X(psum_read_sbuf_write_bytes)
    X(input_queue_bytes) X(output_queue_bytes) X(weight_queue_bytes) X(tensor_elements) X(raw_flops)
    X(adjusted_flops) X(tensor_elements_transpose) X(flops_transpose) X(adjusted_flops_transpose)
#undef X
    put_opt_str(r, c->at[IC_performance_mode], nx_performance_mode_name(in->performance_mode));
    put_opt_str(r, c->at[IC_tensor_instruction_type], tensor_type_text(in->tensor_instruction_type));
    put_opt_str(r, c->at[IC_scalar_activation_fn], in->scalar_activation_fn);
}

/* Merges the streams' ready instruction records by Unix start time. */
static int write_instructions(proc *p)
{
    static const char *const names[] = {
#define X(name) #name,
        INSTR_COLS(X)
#undef X
    };
    instr_cols c;
    row r;
    if (row_open(&r, p->tmp_dir, "Instruction", p->max_rows, &p->perr) != 0)
        return -2;
    for (size_t i = 0; i < IC_COUNT; i++)
        c.at[i] = col(&r, names[i]);
    char idbuf[256];
    int64_t id = 0;
    for (;;) {
        trace_stream *best = NULL;
        int64_t best_start = 0;
        for (size_t i = 0; i < p->n_streams; i++) {
            trace_stream *s = &p->streams[i];
            if (stream_fill(s, &p->cerr) != 0) {
                row_close(&r, false, &p->st->tables, &p->perr);
                return -1;
            }
            if (s->n == 0)
                continue;
            int64_t t = unix_ns(&s->hdr, s->heap[0].ts);
            if (!best || t < best_start) {
                best = s;
                best_start = t;
            }
        }
        if (!best)
            break;
        const nx_trace_record *rec = &best->heap[0];
        const nx_prog_instr *in = nx_program_find_instr(best->prog, rec->u.instr.engine, rec->u.instr.pc);
        if (!in) {   /* the reader guarantees the pc; kept as a guard against a mismatch */
            snprintf(p->cerr.msg, sizeof p->cerr.msg, "%s: instruction pc %" PRIu32 " not in the program",
                     best->path, rec->u.instr.pc);
            row_close(&r, false, &p->st->tables, &p->perr);
            return -1;
        }
        if (row_begin(&r, &p->perr) != 0) {
            row_close(&r, false, &p->st->tables, &p->perr);
            return -2;
        }
        put_instruction(&r, &c, best, rec, in, id++, idbuf, sizeof idbuf);
        if (row_end(&r, &p->perr) != 0) {
            row_close(&r, false, &p->st->tables, &p->perr);
            return -2;
        }
        heap_pop(best);
    }
    p->st->instructions = (uint64_t)id;
    if (id == 0) {   /* no instruction activity: the table is not written */
        row_close(&r, false, &p->st->tables, &p->perr);
        return 0;
    }
    return row_close(&r, true, &p->st->tables, &p->perr) == 0 ? 0 : -2;
}

static void hex_uuid(const uint8_t uuid[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

static int write_neff_header(proc *p)
{
    row r;
    if (row_open(&r, p->tmp_dir, "NeffHeader", p->max_rows, &p->perr) != 0)
        return -1;
    for (size_t i = 0; i < p->n_progs; i++) {
        const nx_program *g = p->progs[i];
        char uuid[33], hash[17];
        hex_uuid(g->header.uuid, uuid);
        snprintf(hash, sizeof hash, "%016" PRIx64, g->hash);
        if (row_begin(&r, &p->perr) != 0)
            goto fail;
        put_opt_str(&r, col(&r, "network_name"), g->header.network_name);
        put_str(&r, col(&r, "uuid"), uuid);
        put_str(&r, col(&r, "hash"), hash);
        put_opt_str(&r, col(&r, "enabled_features"), g->header.enabled_features);
        put_i64(&r, col(&r, "header_size"), (int64_t)g->header_bytes);
        put_i64(&r, col(&r, "data_size"), (int64_t)(g->file_size - g->header_bytes));
        put_i64(&r, col(&r, "major_version"), g->version_major);
        put_i64(&r, col(&r, "minor_version"), g->version_minor);
        put_opt_str(&r, col(&r, "package_version"), g->header.package_version);
        put_opt_str(&r, col(&r, "build_version"), g->header.build_version);
        put_opt_i64(&r, col(&r, "cc_participant_count"), g->header.cc_participant_count);
        put_opt_i64(&r, col(&r, "neuroncore_count"), g->header.neuroncore_count);
        put_opt_i64(&r, col(&r, "logical_neuroncore_count"), g->header.logical_neuroncore_count);
        put_opt_i64(&r, col(&r, "pcore_count_per_lnc"), g->header.pcore_count_per_lnc);
        if (row_end(&r, &p->perr) != 0)
            goto fail;
    }
    return row_close(&r, true, &p->st->tables, &p->perr);
fail:
    row_close(&r, false, &p->st->tables, &p->perr);
    return -1;
}

static int write_dma_queues(proc *p)
{
    size_t total = 0;
    for (size_t i = 0; i < p->n_progs; i++)
        total += p->progs[i]->n_queues;
    if (total == 0)
        return 0;
    row r;
    if (row_open(&r, p->tmp_dir, "DmaQueuesInfo", p->max_rows, &p->perr) != 0)
        return -1;
    for (size_t i = 0; i < p->n_progs; i++) {
        const nx_program *g = p->progs[i];
        for (uint32_t pc = 0; pc < p->prog_pcores[i]; pc++) {
            for (size_t q = 0; q < g->n_queues; q++) {
                const nx_prog_queue *qu = &g->queues[q];
                if (row_begin(&r, &p->perr) != 0)
                    goto fail;
                put_str(&r, col(&r, "name"), qu->name);
                put_str(&r, col(&r, "type"), qu->purpose);
                put_i64(&r, col(&r, "pcore_idx"), pc);
                put_i64(&r, col(&r, "idx"), (int64_t)q);
                put_i64(&r, col(&r, "engine_idx"), qu->dma_engine);
                put_i64(&r, col(&r, "axi_port"), qu->axi_port);
                put_i64(&r, col(&r, "dram_channel"), qu->dram_channel);
                if (row_end(&r, &p->perr) != 0)
                    goto fail;
            }
        }
    }
    return row_close(&r, true, &p->st->tables, &p->perr);
fail:
    row_close(&r, false, &p->st->tables, &p->perr);
    return -1;
}

/* "YYYY-MM-DD HH:MM:SS+00:00" (the schema's example format) of Unix ns. */
static void utc_text(int64_t ns, char out[40])
{
    time_t sec = (time_t)(ns >= 0 ? ns / 1000000000 : (ns - 999999999) / 1000000000);
    struct tm tm;
    if (!gmtime_r(&sec, &tm) || strftime(out, 40, "%Y-%m-%d %H:%M:%S+00:00", &tm) == 0)
        snprintf(out, 40, "1970-01-01 00:00:00+00:00");
}

static float ghz(uint64_t hz) { return (float)((double)hz / 1e9); }

static int write_metadata(proc *p)
{
    row r;
    if (row_open(&r, p->tmp_dir, "Metadata", p->max_rows, &p->perr) != 0)
        return -1;
    for (size_t i = 0; i < p->n_streams; i++) {
        const trace_stream *s = &p->streams[i];
        const nx_trace_header *h = &s->hdr;
        const nx_prog_hardware *hw = &s->prog->hw;
        int64_t first = s->any ? unix_ns(h, s->first_tick) : h->epoch_ns;
        int64_t last = s->any ? unix_ns(h, s->last_tick) : h->epoch_ns;
        char first_txt[40], last_txt[40];
        utc_text(first, first_txt);
        utc_text(last, last_txt);
        /* The schema stores ticks per ns as an integer: the nearest one, at least 1. */
        int64_t tpn = ((int64_t)h->ticks_per_ns_num * 2 + h->ticks_per_ns_den) / (2 * (int64_t)h->ticks_per_ns_den);
        if (row_begin(&r, &p->perr) != 0)
            goto fail;
        put_str(&r, col(&r, "profile_schema_version"), NX_SCHEMA_VERSION);
        put_i32(&r, col(&r, "ntff_version"), h->version_major);
        put_i32(&r, col(&r, "num_physical_cores"), (int32_t)h->pcore_count);
        put_bool(&r, col(&r, "vnc_enabled"), (h->flags & NX_TRACE_FLAG_VNC) != 0);
        put_i64(&r, col(&r, "first_hw_timestamp"), first);
        put_i64(&r, col(&r, "last_hw_timestamp"), last);
        put_str(&r, col(&r, "first_ts"), first_txt);
        put_str(&r, col(&r, "last_ts"), last_txt);
        put_f32(&r, col(&r, "dma_ddr_bandwidth"), (float)hw->dma_ddr_bandwidth);
        put_i32(&r, col(&r, "num_dma_engines_per_neuroncore"), (int32_t)hw->dma_engines_per_neuroncore);
        put_f32(&r, col(&r, "hbm_ddr_bandwidth"), (float)hw->hbm_ddr_bandwidth);
        put_i64(&r, col(&r, "tensor_engine_num_rows"), hw->tensor_rows);
        put_i64(&r, col(&r, "tensor_engine_num_cols"), hw->tensor_cols);
        put_f32(&r, col(&r, "tensor_engine_clock_freq"), ghz(hw->tensor_clock_hz));
        put_f32(&r, col(&r, "vector_engine_clock_freq"), ghz(hw->vector_clock_hz));
        put_i64(&r, col(&r, "vector_engine_num_channels"), hw->vector_channels);
        put_f32(&r, col(&r, "scalar_engine_clock_freq"), ghz(hw->scalar_clock_hz));
        put_i64(&r, col(&r, "scalar_engine_num_channels"), hw->scalar_channels);
        put_f32(&r, col(&r, "gpsimd_engine_clock_freq"), ghz(hw->gpsimd_clock_hz));
        put_i64(&r, col(&r, "gpsimd_engine_num_channels"), hw->gpsimd_channels);
        put_f32(&r, col(&r, "neuroncore_clock_freq"), ghz(hw->neuroncore_clock_hz));
        put_i64(&r, col(&r, "ticks_per_nanosec"), tpn > 0 ? tpn : 1);
        put_opt_str(&r, col(&r, "instance_type"), h->instance_type);
        put_opt_str(&r, col(&r, "runtime_version"), h->runtime_version);
        put_opt_str(&r, col(&r, "collectives_version"), h->collectives_version);
        put_opt_str(&r, col(&r, "driver_version"), h->driver_version);
        put_str(&r, col(&r, "explorer_version"), NXPROF_VERSION);
        put_opt_str(&r, col(&r, "compiler_version"), s->prog->header.compiler_version);
        put_i64(&r, col(&r, "neuroncore_idx"), h->neuroncore_idx);
        put_i64(&r, col(&r, "neuron_device_idx"), h->neuron_device_idx);
        put_opt_str(&r, col(&r, "profile_name"), p->o->display_name);
        put_bool(&r, col(&r, "is_simulation"), (h->flags & NX_TRACE_FLAG_SIMULATION) != 0);
        if (row_end(&r, &p->perr) != 0)
            goto fail;
    }
    return row_close(&r, true, &p->st->tables, &p->perr);
fail:
    row_close(&r, false, &p->st->tables, &p->perr);
    return -1;
}

static void proc_free(proc *p)
{
    for (size_t i = 0; i < p->n_streams; i++) {
        nx_trace_reader_close(p->streams[i].rd);
        free(p->streams[i].heap);
    }
    for (size_t i = 0; i < p->n_progs; i++)
        nx_program_close(p->progs[i]);
    free(p->streams);
    free(p->progs);
    free(p->prog_pcores);
    nx_capture_free(&p->cap);
}

static void set_err(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
}

int nx_process_run(const nx_process_options *o, nx_process_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    proc p = {.o = o, .st = st, .max_rows = o->max_rows_per_file};
    nx_cap_warner warn = {.fn = on_warning, .ctx = st};
    nx_profile_output out = {0};
    char *final_dir = NULL;
    int rc = -1, irc;

    if (nx_profile_dir_resolve(o->data_path, o->display_name, o->output_file, &final_dir, &p.perr) != 0) {
        set_err(err, errlen, p.perr.msg);
        goto done;
    }
    if (open_capture(&p, &warn) != 0) {
        set_err(err, errlen, p.cerr.msg);
        goto done;
    }
    if (nx_profile_output_begin(&out, final_dir, &p.perr) != 0) {
        set_err(err, errlen, p.perr.msg);
        goto done;
    }
    p.tmp_dir = out.tmp_dir;
    irc = write_instructions(&p);
    if (irc != 0) {
        set_err(err, errlen, irc == -1 ? p.cerr.msg : p.perr.msg);
        goto done;
    }
    if (write_neff_header(&p) != 0 || write_dma_queues(&p) != 0 || write_metadata(&p) != 0 ||
        nx_write_schema_fields(out.tmp_dir, NULL, &p.perr) != 0) {
        set_err(err, errlen, p.perr.msg);
        goto done;
    }
    st->tables++;   /* SchemaFields */
    p.tmp_dir = NULL;
    if (nx_profile_output_publish(&out, &p.perr) != 0) {
        set_err(err, errlen, p.perr.msg);
        goto done;
    }
    st->profile_dir = final_dir;
    final_dir = NULL;
    rc = 0;
done:
    if (rc != 0)
        nx_profile_output_abort(&out);
    free(final_dir);
    proc_free(&p);
    return rc;
}

void nx_process_stats_free(nx_process_stats *st)
{
    free(st->profile_dir);
    st->profile_dir = NULL;
}
