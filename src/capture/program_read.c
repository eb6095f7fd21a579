/*
 * program_read.c — the program file reader: file header, table of contents,
 * section bounds, record decoding and string references; semantic rules are in
 * program_validate.c. See program_file.h for the contract.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <xxhash.h>

#include "capture/capture_util.h"
#include "capture/program_internal.h"

static const uint32_t SPEC_SIZE[NX_SEC_LAST + 1] = {
    [NX_SEC_STRINGS] = 1, [NX_SEC_PROGRAM] = NX_PROG_PROGRAM_SIZE,
    [NX_SEC_HARDWARE] = NX_PROG_HARDWARE_SIZE, [NX_SEC_INSTRUCTIONS] = NX_PROG_INSTR_SIZE,
    [NX_SEC_DMA_QUEUES] = NX_PROG_QUEUE_SIZE, [NX_SEC_DMA_DESCRIPTORS] = NX_PROG_DESC_SIZE,
    [NX_SEC_TENSORS] = NX_PROG_TENSOR_SIZE, [NX_SEC_SEMAPHORES] = NX_PROG_SEMAPHORE_SIZE,
    [NX_SEC_COLLECTIVES] = NX_PROG_COLLECTIVE_SIZE, [NX_SEC_CC_STREAMS] = NX_PROG_CC_STREAM_SIZE,
    [NX_SEC_STACK_FRAMES] = NX_PROG_FRAME_SIZE, [NX_SEC_MEMORY_ALLOCATIONS] = NX_PROG_ALLOC_SIZE,
    [NX_SEC_NKI_FRAMES] = NX_PROG_NKI_FRAME_SIZE, [NX_SEC_NKI_ITERATIONS] = NX_PROG_NKI_ITER_SIZE,
    [NX_SEC_NKI_INSTRUCTIONS] = NX_PROG_NKI_INSTR_SIZE, [NX_SEC_ASSEMBLY] = NX_PROG_ASM_SIZE,
};

typedef struct section {
    bool present;
    uint64_t offset, count;
    uint32_t record_size;
} section;

/* Decoding state: the image, its sections and the first error. */
typedef struct decoder {
    const unsigned char *data;
    uint64_t size;
    const char *name;
    section sec[NX_SEC_LAST + 1];
    const nx_cap_warner *warn;
    nx_error *err;
    nx_program *p;
} decoder;

/* A string reference at image offset `at`: must start a NUL-terminated string. */
static int get_str(decoder *d, uint64_t at, const char **out)
{
    uint32_t ref = nx_get_u32(d->data + at);
    const char *s = nx_program_string(d->p, ref);
    if (!s)
        return nx_cap_fail_at(d->err, d->name, at,
                              "string reference %" PRIu32 " is not the start of a string in STRINGS "
                              "(%" PRIu64 " bytes)", ref, d->p->strings_size);
    *out = s;
    return 0;
}

static int check_header(decoder *d, uint64_t *toc_off, uint32_t *toc_n)
{
    if (d->size < NX_PROG_HEADER_SIZE)
        return nx_cap_fail_at(d->err, d->name, 0, "truncated header: %" PRIu64 " bytes, expected at least %d",
                              d->size, NX_PROG_HEADER_SIZE);
    if (memcmp(d->data, NX_PROG_MAGIC, 8) != 0)
        return nx_cap_fail_at(d->err, d->name, 0, "wrong magic; expected \"NXPROG\\0\\0\" (a program file)");
    uint16_t major = nx_get_u16(d->data + 8), minor = nx_get_u16(d->data + 10);
    if (major != NX_PROG_VERSION_MAJOR)
        return nx_cap_fail_at(d->err, d->name, 8, "unsupported version %u.%u; this reader reads %d.x",
                              major, minor, NX_PROG_VERSION_MAJOR);
    d->p->version_major = major;
    d->p->version_minor = minor;
    uint32_t hsize = nx_get_u32(d->data + 12);
    *toc_n = nx_get_u32(d->data + 16);
    uint32_t entry = nx_get_u32(d->data + 20);
    *toc_off = nx_get_u64(d->data + 24);
    uint64_t fsize = nx_get_u64(d->data + 32);
    if (hsize < NX_PROG_HEADER_SIZE || hsize > d->size)
        return nx_cap_fail_at(d->err, d->name, 12, "header_size %" PRIu32 "; expected %d..file size",
                              hsize, NX_PROG_HEADER_SIZE);
    if (fsize != d->size)
        return nx_cap_fail_at(d->err, d->name, 32, "file_size says %" PRIu64 " bytes but the file has %" PRIu64
                              " (truncated or padded)", fsize, d->size);
    if (entry != NX_PROG_TOC_ENTRY_SIZE)
        return nx_cap_fail_at(d->err, d->name, 20, "toc_entry_size %" PRIu32 "; expected %d",
                              entry, NX_PROG_TOC_ENTRY_SIZE);
    if (*toc_off < hsize || *toc_off > d->size || (d->size - *toc_off) / NX_PROG_TOC_ENTRY_SIZE < *toc_n)
        return nx_cap_fail_at(d->err, d->name, 24, "table of contents (%" PRIu32 " entries at %" PRIu64
                              ") does not lie between the header and the end of the file", *toc_n, *toc_off);
    d->p->header_bytes = *toc_off + (uint64_t)*toc_n * NX_PROG_TOC_ENTRY_SIZE;
    return 0;
}

static int read_toc_entry(decoder *d, uint64_t at)
{
    uint32_t id = nx_get_u32(d->data + at), rsize = nx_get_u32(d->data + at + 4);
    uint64_t off = nx_get_u64(d->data + at + 8), count = nx_get_u64(d->data + at + 16);
    if (id == 0 || id > NX_SEC_LAST || SPEC_SIZE[id] == 0) {   /* 0: an id this reader has no section for */
        nx_cap_warn(d->warn, d->name, at, "Invalid Data",
                    "section id %" PRIu32 " is unknown to this reader (version %d.%d); ignored",
                    id, NX_PROG_VERSION_MAJOR, NX_PROG_VERSION_MINOR);
        return 0;
    }
    if (d->sec[id].present)
        return nx_cap_fail_at(d->err, d->name, at, "section %" PRIu32 " appears twice in the table of contents", id);
    if (rsize < SPEC_SIZE[id] || (id == NX_SEC_STRINGS && rsize != 1))
        return nx_cap_fail_at(d->err, d->name, at + 4, "section %" PRIu32 " record_size %" PRIu32
                              "; expected %s%" PRIu32, id, rsize, id == NX_SEC_STRINGS ? "" : "at least ",
                              SPEC_SIZE[id]);
    if (off < d->p->header_bytes || off > d->size || (d->size - off) / rsize < count)
        return nx_cap_fail_at(d->err, d->name, at + 8, "section %" PRIu32 " (%" PRIu64 " records of %" PRIu32
                              " bytes at offset %" PRIu64 ") runs past the end of the file (%" PRIu64
                              " bytes) or into the header", id, count, rsize, off, d->size);
    d->sec[id] = (section){true, off, count, rsize};
    return 0;
}

/* Sections may come in any order but must not overlap. */
static int check_overlaps(decoder *d)
{
    for (int a = 1; a <= NX_SEC_LAST; a++)
        for (int b = a + 1; b <= NX_SEC_LAST; b++) {   /* ids without a section are never present */
            const section *x = &d->sec[a], *y = &d->sec[b];
            if (!x->present || !y->present)
                continue;
            uint64_t xe = x->offset + x->count * x->record_size, ye = y->offset + y->count * y->record_size;
            if (x->offset < ye && y->offset < xe)
                return nx_cap_fail_at(d->err, d->name, x->offset, "sections %d and %d overlap", a, b);
        }
    return 0;
}

static int read_toc(decoder *d)
{
    uint64_t toc_off = 0;
    uint32_t toc_n = 0;
    if (check_header(d, &toc_off, &toc_n) != 0)
        return -1;
    for (uint32_t i = 0; i < toc_n; i++)
        if (read_toc_entry(d, toc_off + (uint64_t)i * NX_PROG_TOC_ENTRY_SIZE) != 0)
            return -1;
    static const int required[] = {NX_SEC_STRINGS, NX_SEC_PROGRAM, NX_SEC_HARDWARE, NX_SEC_INSTRUCTIONS};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!d->sec[required[i]].present)
            return nx_cap_fail_at(d->err, d->name, toc_off, "required section %d is missing from the table of contents",
                                  required[i]);
    for (int id = NX_SEC_PROGRAM; id <= NX_SEC_HARDWARE; id++)
        if (d->sec[id].count != 1)
            return nx_cap_fail_at(d->err, d->name, toc_off, "section %d has %" PRIu64 " records; expected exactly 1",
                                  id, d->sec[id].count);
    return check_overlaps(d);
}

static int read_strings(decoder *d)
{
    const section *s = &d->sec[NX_SEC_STRINGS];
    const unsigned char *t = d->data + s->offset;
    if (s->count > UINT32_MAX)
        return nx_cap_fail_at(d->err, d->name, s->offset,
                              "STRINGS holds %" PRIu64 " bytes; string references are 32-bit", s->count);
    if (s->count == 0 || t[0] != 0 || t[s->count - 1] != 0)
        return nx_cap_fail_at(d->err, d->name, s->offset,
                              "STRINGS must start with a NUL (the empty string) and end with a NUL");
    d->p->strings = (const char *)t;
    d->p->strings_size = s->count;
    return 0;
}

/* Pointer to record i of section id. */
static const unsigned char *rec(const decoder *d, int id, uint64_t i)
{
    return d->data + d->sec[id].offset + i * d->sec[id].record_size;
}
static uint64_t rec_off(const decoder *d, int id, uint64_t i)
{
    return d->sec[id].offset + i * d->sec[id].record_size;
}

static int read_program_header(decoder *d)
{
    nx_prog_header *h = &d->p->header;
    uint64_t at = rec_off(d, NX_SEC_PROGRAM, 0);
    unsigned k = 0;
#define X(name) if (get_str(d, at + PROG_HDR_STRINGS + 4 * k++, &h->name) != 0) return -1;
    NX_PROG_HEADER_STRINGS(X)
#undef X
    memcpy(h->uuid, d->data + at + PROG_HDR_UUID, 16);
    k = 0;
#define X(name) h->name = nx_get_i64(d->data + at + PROG_HDR_INTS + 8 * k++);
    NX_PROG_HEADER_INTS(X)
#undef X
    const unsigned char *hw = rec(d, NX_SEC_HARDWARE, 0);
    k = 0;
#define X(name) d->p->hw.name = nx_get_u64(hw + PROG_HW_U64S + 8 * k++);
    NX_PROG_HW_U64S(X)
#undef X
    k = 0;
#define X(name) d->p->hw.name = nx_get_u32(hw + PROG_HW_U32S + 4 * k++);
    NX_PROG_HW_U32S(X)
#undef X
    return 0;
}

static int read_instr(decoder *d, uint64_t i, nx_prog_instr *in)
{
    const unsigned char *r = rec(d, NX_SEC_INSTRUCTIONS, i);
    uint64_t at = rec_off(d, NX_SEC_INSTRUCTIONS, i);
    in->pc = nx_get_u32(r);
    in->engine = r[4];
    in->tensor_instruction_type = r[5];
    in->performance_mode = r[6];
    in->wait_semaphore = nx_get_u16(r + 8);
    in->signal_semaphore = nx_get_u16(r + 10);
    unsigned k = 0;
#define X(name) if (get_str(d, at + PROG_INSTR_STRINGS + 4 * k++, &in->name) != 0) return -1;
    NX_PROG_INSTR_STRINGS(X)
#undef X
    k = 0;
#define X(name) in->name = nx_get_i64(r + PROG_INSTR_INTS + 8 * k++);
    NX_PROG_INSTR_INTS(X)
#undef X
    return 0;
}

static int read_queue(decoder *d, uint64_t i, nx_prog_queue *q)
{
    const unsigned char *r = rec(d, NX_SEC_DMA_QUEUES, i);
    uint64_t at = rec_off(d, NX_SEC_DMA_QUEUES, i);
    if (get_str(d, at, &q->name) != 0 || get_str(d, at + 4, &q->purpose) != 0)
        return -1;
    q->type = r[8];
    q->owner_engine = r[9];
    q->dma_engine = nx_get_u32(r + 12);
    q->axi_port = nx_get_u32(r + 16);
    q->dram_channel = nx_get_u32(r + 20);
    return 0;
}

static int read_desc(decoder *d, uint64_t i, nx_prog_dma_desc *x)
{
    const unsigned char *r = rec(d, NX_SEC_DMA_DESCRIPTORS, i);
    uint64_t at = rec_off(d, NX_SEC_DMA_DESCRIPTORS, i);
    x->queue = nx_get_u16(r);
    x->completion_semaphore = nx_get_u16(r + 2);
    x->is_transpose = r[4];
    x->read_num_sbuf_partitions = nx_get_u32(r + 8);
    x->write_num_sbuf_partitions = nx_get_u32(r + 12);
    x->trigger = nx_get_i64(r + 16);
    x->completion = nx_get_i64(r + 24);
    unsigned k = 0;
#define X(name) if (get_str(d, at + PROG_DESC_STRINGS + 4 * k++, &x->name) != 0) return -1;
    NX_PROG_DESC_STRINGS(X)
#undef X
    return 0;
}

static int read_tensor(decoder *d, uint64_t i, nx_prog_tensor *t)
{
    uint64_t at = rec_off(d, NX_SEC_TENSORS, i);
    if (get_str(d, at, &t->name) != 0 || get_str(d, at + 4, &t->type) != 0 ||
        get_str(d, at + 8, &t->format) != 0 || get_str(d, at + 12, &t->shape) != 0)
        return -1;
    t->size = nx_get_i64(d->data + at + 16);
    t->node = nx_get_i64(d->data + at + 24);
    return 0;
}

static int read_semaphore(decoder *d, uint64_t i, nx_prog_semaphore *s)
{
    uint64_t at = rec_off(d, NX_SEC_SEMAPHORES, i);
    s->initial_value = nx_get_i32(d->data + at + 4);
    return get_str(d, at, &s->name);
}

static int read_collective(decoder *d, uint64_t i, nx_prog_collective *c)
{
    uint64_t at = rec_off(d, NX_SEC_COLLECTIVES, i);
    const unsigned char *r = d->data + at;
    if (get_str(d, at, &c->operation) != 0 || get_str(d, at + 4, &c->algorithm) != 0 ||
        get_str(d, at + 8, &c->dtype) != 0 || get_str(d, at + 12, &c->replica_group) != 0)
        return -1;
    c->op_id = nx_get_i64(r + 16);
    c->num_elements = nx_get_i64(r + 24);
    c->stream_id = nx_get_i64(r + 32);
    c->stream_index = nx_get_i64(r + 40);
    c->input_size = nx_get_i64(r + 48);
    c->output_size = nx_get_i64(r + 56);
    c->replica_group_id = nx_get_i64(r + 64);
    c->trigger_engine = r[72];
    return 0;
}

static int read_cc_stream(decoder *d, uint64_t i, nx_prog_cc_stream *s)
{
    uint64_t at = rec_off(d, NX_SEC_CC_STREAMS, i);
    s->stream_id = nx_get_i64(d->data + at);
    s->stream_index = nx_get_i64(d->data + at + 8);
    return get_str(d, at + 16, &s->cc_core_ids);
}

/* STACK_FRAMES and NKI_FRAMES share one layout. */
static int read_frame_of(decoder *d, int id, uint64_t i, nx_prog_frame *f)
{
    uint64_t at = rec_off(d, id, i);
    f->parent = nx_get_i64(d->data + at);
    f->line = nx_get_u32(d->data + at + 16);
    if (get_str(d, at + 8, &f->file_name) != 0 || get_str(d, at + 12, &f->function_name) != 0)
        return -1;
    return 0;
}

static int read_frame(decoder *d, uint64_t i, nx_prog_frame *f)
{
    return read_frame_of(d, NX_SEC_STACK_FRAMES, i, f);
}

static int read_nki_frame(decoder *d, uint64_t i, nx_prog_frame *f)
{
    return read_frame_of(d, NX_SEC_NKI_FRAMES, i, f);
}

static int read_nki_iter(decoder *d, uint64_t i, nx_prog_nki_iter *v)
{
    uint64_t at = rec_off(d, NX_SEC_NKI_ITERATIONS, i);
    v->parent = nx_get_i64(d->data + at);
    v->value = nx_get_i64(d->data + at + 8);
    v->line = nx_get_u32(d->data + at + 24);
    return get_str(d, at + 16, &v->name) != 0 || get_str(d, at + 20, &v->file_name) != 0 ? -1 : 0;
}

static int read_nki_instr(decoder *d, uint64_t i, nx_prog_nki_instr *m)
{
    uint64_t at = rec_off(d, NX_SEC_NKI_INSTRUCTIONS, i);
    const unsigned char *r = d->data + at;
    m->pc = nx_get_u32(r);
    m->engine = r[4];
    m->frame = nx_get_u32(r + 8);
    m->line = nx_get_u32(r + 16);
    m->iteration = nx_get_i64(r + 24);
    return get_str(d, at + 12, &m->file_name);
}

static int read_asm(decoder *d, uint64_t i, nx_prog_asm *a)
{
    uint64_t at = rec_off(d, NX_SEC_ASSEMBLY, i);
    const unsigned char *r = d->data + at;
    a->pc = nx_get_u32(r);
    a->engine = r[4];
    a->compiler_pc = nx_get_i64(r + 16);
    return get_str(d, at + 8, &a->opcode) != 0 || get_str(d, at + 12, &a->operands) != 0 ? -1 : 0;
}

/* MEMORY_ALLOCATIONS record: ranges are checked in program_validate.c. */
static int read_alloc(decoder *d, uint64_t i, nx_prog_alloc *a)
{
    uint64_t at = rec_off(d, NX_SEC_MEMORY_ALLOCATIONS, i);
    const unsigned char *r = d->data + at;
    a->memory = r[4];
    a->bank = r[5];
    a->first_partition = nx_get_u16(r + 6);
    a->partition_count = nx_get_u16(r + 8);
    a->live_engine = r[10];
    a->free_engine = r[11];
    a->live_pc = nx_get_u32(r + 12);
    a->free_pc = nx_get_u32(r + 16);
    a->end_address = nx_get_u32(r + 20);   /* reserved (0) in files that do not record it */
    a->bytes_per_partition = nx_get_u64(r + 24);
    uint32_t ref = nx_get_u32(r);
    if (!(a->name = nx_program_string(d->p, ref)))
        return nx_cap_fail_at(d->err, d->name, at, "MEMORY_ALLOCATIONS record %" PRIu64 ": name: string reference %"
                              PRIu32 " is not the start of a string in STRINGS (%" PRIu64 " bytes)",
                              i, ref, d->p->strings_size);
    return 0;
}

/* Allocates the array for section id and decodes every record with fn. */
#define READ_ARRAY(d, id, field, nfield, fn)                                                  \
    do {                                                                                      \
        uint64_t n_ = (d)->sec[id].count;                                                     \
        (d)->p->nfield = (size_t)n_;                                                          \
        if (n_ == 0)                                                                          \
            break;                                                                            \
        (d)->p->field = nx_arena_calloc(&(d)->p->arena, (size_t)n_, sizeof *(d)->p->field);   \
        if (!(d)->p->field)                                                                   \
            return nx_cap_fail((d)->err, (d)->name, "out of memory decoding section %d", id); \
        for (uint64_t i_ = 0; i_ < n_; i_++)                                                  \
            if (fn((d), i_, &(d)->p->field[i_]) != 0)                                         \
                return -1;                                                                    \
    } while (0)

static int decode_sections(decoder *d)
{
    if (read_strings(d) != 0 || read_program_header(d) != 0)
        return -1;
    READ_ARRAY(d, NX_SEC_INSTRUCTIONS, instrs, n_instrs, read_instr);
    READ_ARRAY(d, NX_SEC_DMA_QUEUES, queues, n_queues, read_queue);
    READ_ARRAY(d, NX_SEC_DMA_DESCRIPTORS, descs, n_descs, read_desc);
    READ_ARRAY(d, NX_SEC_TENSORS, tensors, n_tensors, read_tensor);
    READ_ARRAY(d, NX_SEC_SEMAPHORES, semaphores, n_semaphores, read_semaphore);
    READ_ARRAY(d, NX_SEC_COLLECTIVES, collectives, n_collectives, read_collective);
    READ_ARRAY(d, NX_SEC_CC_STREAMS, cc_streams, n_cc_streams, read_cc_stream);
    READ_ARRAY(d, NX_SEC_STACK_FRAMES, frames, n_frames, read_frame);
    READ_ARRAY(d, NX_SEC_MEMORY_ALLOCATIONS, allocs, n_allocs, read_alloc);
    READ_ARRAY(d, NX_SEC_NKI_FRAMES, nki_frames, n_nki_frames, read_nki_frame);
    READ_ARRAY(d, NX_SEC_NKI_ITERATIONS, nki_iters, n_nki_iters, read_nki_iter);
    READ_ARRAY(d, NX_SEC_NKI_INSTRUCTIONS, nki_instrs, n_nki_instrs, read_nki_instr);
    READ_ARRAY(d, NX_SEC_ASSEMBLY, asm_lines, n_asm_lines, read_asm);
    return 0;
}

int nx_program_adopt(unsigned char *data, size_t size, const char *name, nx_program **out,
                     const nx_cap_warner *warn, nx_error *err)
{
    *out = NULL;
    nx_program *p = calloc(1, sizeof *p);
    if (!p) {
        free(data);
        return nx_cap_fail(err, name, "out of memory");
    }
    p->image = data;
    p->path = nx_arena_strndup(&p->arena, name, strlen(name));
    if (!p->path) {
        nx_program_close(p);
        return nx_cap_fail(err, name, "out of memory");
    }
    decoder d = {.data = data, .size = size, .name = p->path, .warn = warn, .err = err, .p = p};
    p->file_size = size;
    p->hash = XXH3_64bits(data, size);
    if (read_toc(&d) != 0 || decode_sections(&d) != 0) {
        nx_program_close(p);
        return -1;
    }
    prog_loc loc;
    for (int id = 0; id <= NX_SEC_LAST; id++) {
        loc.offset[id] = d.sec[id].offset;
        loc.record_size[id] = d.sec[id].record_size;
    }
    if (nx_prog_validate(p, p->path, &loc, err) != 0) {
        nx_program_close(p);
        return -1;
    }
    if (nx_prog_index_engines(p) != 0) {
        nx_cap_fail(err, p->path, "out of memory");
        nx_program_close(p);
        return -1;
    }
    *out = p;
    return 0;
}

int nx_program_open(const char *path, nx_program **out, const nx_cap_warner *warn, nx_error *err)
{
    unsigned char *data;
    size_t size;
    *out = NULL;
    if (nx_cap_read_file(path, &data, &size, err) != 0 ||
        nx_program_adopt(data, size, path, out, warn, err) != 0)
        return -1;
    uint64_t named;
    if (nx_cap_parse_program_name(nx_cap_basename(path), &named) && named != (*out)->hash) {
        nx_cap_fail(err, path, "the file name says hash %016" PRIx64 " but the content hashes to %016" PRIx64
                    " (XXH3-64); the program was modified after it was named", named, (*out)->hash);
        nx_program_close(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

void nx_program_close(nx_program *p)
{
    if (!p)
        return;
    nx_arena_free(&p->arena);
    free(p->image);
    free(p);
}

const nx_prog_instr *nx_program_find_instr(const nx_program *p, unsigned engine, uint32_t pc)
{
    if (engine >= NX_ENGINE_COUNT)
        return NULL;
    size_t first = p->engine_first[engine], n = p->engine_count[engine];
    if (n == 0)
        return NULL;
    const uint32_t *pcs = p->instr_pcs + first;
    /* Fast path: pcs numbered from pcs[0] without gaps. */
    uint64_t guess = (uint64_t)pc - pcs[0];
    if (pc >= pcs[0] && guess < n && pcs[guess] == pc)
        return &p->instrs[first + guess];
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pcs[mid] < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && pcs[lo] == pc ? &p->instrs[first + lo] : NULL;
}

const char *nx_program_string(const nx_program *p, uint32_t ref)
{
    if (!p->strings || ref >= p->strings_size)
        return NULL;
    if (ref > 0 && p->strings[ref - 1] != '\0')
        return NULL;
    return p->strings + ref;
}

bool nx_program_find_string(const nx_program *p, const char *s, uint32_t *ref)
{
    for (uint64_t at = 0; at < p->strings_size;) {
        const char *cur = p->strings + at;
        size_t len = strlen(cur);
        if (strcmp(cur, s) == 0) {
            *ref = (uint32_t)at;
            return true;
        }
        at += len + 1;
    }
    return false;
}
