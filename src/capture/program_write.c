/*
 * program_write.c — the program file writer: validates an nx_program, builds the
 * string table (each distinct string once, in first-use order so the bytes are
 * deterministic), lays out header, table of contents, the record sections and
 * STRINGS last (complete only once every record is put), hashes the image and
 * names the file after the hash. See program_file.h.
 *
 * The table of contents lists sections 1..11 always (empty ones with count 0)
 * and each later section (MEMORY_ALLOCATIONS, the NKI sections, ASSEMBLY) only
 * when the program has records for it, so a program without them carries no
 * section an older reader would warn about.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <xxhash.h>

#include "capture/capture_util.h"
#include "capture/program_internal.h"
#include "util/strbuf.h"

/* Open-addressing set of strings -> offset in the table being built. */
typedef struct strtab {
    nx_strbuf bytes;
    const char **keys;
    uint32_t *refs;
    size_t cap, n;
    bool failed;
} strtab;

static int strtab_grow(strtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    const char **keys = calloc(cap, sizeof *keys);
    uint32_t *refs = calloc(cap, sizeof *refs);
    if (!keys || !refs) {
        free(keys);
        free(refs);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i])
            continue;
        size_t h = (size_t)XXH3_64bits(t->keys[i], strlen(t->keys[i])) & (cap - 1);
        while (keys[h])
            h = (h + 1) & (cap - 1);
        keys[h] = t->keys[i];
        refs[h] = t->refs[i];
    }
    free(t->keys);
    free(t->refs);
    t->keys = keys;
    t->refs = refs;
    t->cap = cap;
    return 0;
}

/* The offset of s in the table, adding it on first use; "" and NULL are 0. */
static uint32_t strtab_ref(strtab *t, const char *s)
{
    if (!s || !*s || t->failed)
        return 0;
    if ((t->n + 1) * 2 > t->cap && strtab_grow(t) != 0) {
        t->failed = true;
        return 0;
    }
    size_t len = strlen(s);
    size_t h = (size_t)XXH3_64bits(s, len) & (t->cap - 1);
    while (t->keys[h]) {
        if (strcmp(t->keys[h], s) == 0)
            return t->refs[h];
        h = (h + 1) & (t->cap - 1);
    }
    if (t->bytes.len + len + 1 > UINT32_MAX) {
        t->failed = true;
        return 0;
    }
    t->keys[h] = s;
    t->refs[h] = (uint32_t)t->bytes.len;
    t->n++;
    nx_strbuf_append(&t->bytes, s, len + 1);
    return t->refs[h];
}

static void strtab_free(strtab *t)
{
    nx_strbuf_free(&t->bytes);
    free(t->keys);
    free(t->refs);
}

/* The image being built: records in `out` (section by section), strings apart. */
typedef struct image {
    nx_strbuf out;
    strtab strings;
    uint64_t sec_offset[NX_SEC_LAST + 1], sec_count[NX_SEC_LAST + 1];
} image;

static unsigned char *reserve(image *im, size_t n)
{
    unsigned char *p = (unsigned char *)nx_strbuf_reserve(&im->out, n);
    if (p) {
        memset(p, 0, n);
        nx_strbuf_commit(&im->out, n);
    }
    return p;
}

static void put_header_record(image *im, const nx_program *p)
{
    unsigned char *r = reserve(im, NX_PROG_PROGRAM_SIZE);
    if (!r)
        return;
    unsigned k = 0;
#define X(name) nx_put_u32(r + PROG_HDR_STRINGS + 4 * k++, strtab_ref(&im->strings, p->header.name));
    NX_PROG_HEADER_STRINGS(X)
#undef X
    memcpy(r + PROG_HDR_UUID, p->header.uuid, 16);
    k = 0;
#define X(name) nx_put_i64(r + PROG_HDR_INTS + 8 * k++, p->header.name);
    NX_PROG_HEADER_INTS(X)
#undef X
}

static void put_hardware(image *im, const nx_program *p)
{
    unsigned char *r = reserve(im, NX_PROG_HARDWARE_SIZE);
    if (!r)
        return;
    unsigned k = 0;
#define X(name) nx_put_u64(r + PROG_HW_U64S + 8 * k++, p->hw.name);
    NX_PROG_HW_U64S(X)
#undef X
    k = 0;
#define X(name) nx_put_u32(r + PROG_HW_U32S + 4 * k++, p->hw.name);
    NX_PROG_HW_U32S(X)
#undef X
}

static void put_instr(image *im, const nx_prog_instr *in)
{
    unsigned char *r = reserve(im, NX_PROG_INSTR_SIZE);
    if (!r)
        return;
    nx_put_u32(r, in->pc);
    r[4] = in->engine;
    r[5] = in->tensor_instruction_type;
    r[6] = in->performance_mode;
    nx_put_u16(r + 8, in->wait_semaphore);
    nx_put_u16(r + 10, in->signal_semaphore);
    unsigned k = 0;
#define X(name) nx_put_u32(r + PROG_INSTR_STRINGS + 4 * k++, strtab_ref(&im->strings, in->name));
    NX_PROG_INSTR_STRINGS(X)
#undef X
    k = 0;
#define X(name) nx_put_i64(r + PROG_INSTR_INTS + 8 * k++, in->name);
    NX_PROG_INSTR_INTS(X)
#undef X
}

static void put_queue(image *im, const nx_prog_queue *q)
{
    unsigned char *r = reserve(im, NX_PROG_QUEUE_SIZE);
    if (!r)
        return;
    nx_put_u32(r, strtab_ref(&im->strings, q->name));
    nx_put_u32(r + 4, strtab_ref(&im->strings, q->purpose));
    r[8] = q->type;
    r[9] = q->owner_engine;
    nx_put_u32(r + 12, q->dma_engine);
    nx_put_u32(r + 16, q->axi_port);
    nx_put_u32(r + 20, q->dram_channel);
}

static void put_desc(image *im, const nx_prog_dma_desc *x)
{
    unsigned char *r = reserve(im, NX_PROG_DESC_SIZE);
    if (!r)
        return;
    nx_put_u16(r, x->queue);
    nx_put_u16(r + 2, x->completion_semaphore);
    r[4] = x->is_transpose;
    nx_put_u32(r + 8, x->read_num_sbuf_partitions);
    nx_put_u32(r + 12, x->write_num_sbuf_partitions);
    nx_put_i64(r + 16, x->trigger);
    nx_put_i64(r + 24, x->completion);
    unsigned k = 0;
#define X(name) nx_put_u32(r + PROG_DESC_STRINGS + 4 * k++, strtab_ref(&im->strings, x->name));
    NX_PROG_DESC_STRINGS(X)
#undef X
}

static void put_tensor(image *im, const nx_prog_tensor *t)
{
    unsigned char *r = reserve(im, NX_PROG_TENSOR_SIZE);
    if (!r)
        return;
    nx_put_u32(r, strtab_ref(&im->strings, t->name));
    nx_put_u32(r + 4, strtab_ref(&im->strings, t->type));
    nx_put_u32(r + 8, strtab_ref(&im->strings, t->format));
    nx_put_u32(r + 12, strtab_ref(&im->strings, t->shape));
    nx_put_i64(r + 16, t->size);
    nx_put_i64(r + 24, t->node);
}

static void put_semaphore(image *im, const nx_prog_semaphore *s)
{
    unsigned char *r = reserve(im, NX_PROG_SEMAPHORE_SIZE);
    if (!r)
        return;
    nx_put_u32(r, strtab_ref(&im->strings, s->name));
    nx_put_i32(r + 4, s->initial_value);
}

static void put_collective(image *im, const nx_prog_collective *c)
{
    unsigned char *r = reserve(im, NX_PROG_COLLECTIVE_SIZE);
    if (!r)
        return;
    nx_put_u32(r, strtab_ref(&im->strings, c->operation));
    nx_put_u32(r + 4, strtab_ref(&im->strings, c->algorithm));
    nx_put_u32(r + 8, strtab_ref(&im->strings, c->dtype));
    nx_put_u32(r + 12, strtab_ref(&im->strings, c->replica_group));
    const int64_t v[] = {c->op_id, c->num_elements, c->stream_id, c->stream_index,
                         c->input_size, c->output_size, c->replica_group_id};
    for (unsigned k = 0; k < 7; k++)
        nx_put_i64(r + 16 + 8 * k, v[k]);
    r[72] = c->trigger_engine;
}

static void put_cc_stream(image *im, const nx_prog_cc_stream *s)
{
    unsigned char *r = reserve(im, NX_PROG_CC_STREAM_SIZE);
    if (!r)
        return;
    nx_put_i64(r, s->stream_id);
    nx_put_i64(r + 8, s->stream_index);
    nx_put_u32(r + 16, strtab_ref(&im->strings, s->cc_core_ids));
}

/* STACK_FRAMES and NKI_FRAMES (same layout). */
static void put_frame(image *im, const nx_prog_frame *f)
{
    unsigned char *r = reserve(im, NX_PROG_FRAME_SIZE);
    if (!r)
        return;
    nx_put_i64(r, f->parent);
    nx_put_u32(r + 8, strtab_ref(&im->strings, f->file_name));
    nx_put_u32(r + 12, strtab_ref(&im->strings, f->function_name));
    nx_put_u32(r + 16, f->line);
}

static void put_alloc(image *im, const nx_prog_alloc *a)
{
    unsigned char *r = reserve(im, NX_PROG_ALLOC_SIZE);
    if (!r)
        return;
    nx_put_u32(r, strtab_ref(&im->strings, a->name));
    r[4] = a->memory;
    r[5] = a->bank;
    nx_put_u16(r + 6, a->first_partition);
    nx_put_u16(r + 8, a->partition_count);
    r[10] = a->live_engine;
    r[11] = a->free_engine;
    nx_put_u32(r + 12, a->live_pc);
    nx_put_u32(r + 16, a->free_pc);
    nx_put_u32(r + 20, a->end_address);
    nx_put_u64(r + 24, a->bytes_per_partition);
}

static void put_nki_iter(image *im, const nx_prog_nki_iter *v)
{
    unsigned char *r = reserve(im, NX_PROG_NKI_ITER_SIZE);
    if (!r)
        return;
    nx_put_i64(r, v->parent);
    nx_put_i64(r + 8, v->value);
    nx_put_u32(r + 16, strtab_ref(&im->strings, v->name));
    nx_put_u32(r + 20, strtab_ref(&im->strings, v->file_name));
    nx_put_u32(r + 24, v->line);
}

static void put_nki_instr(image *im, const nx_prog_nki_instr *m)
{
    unsigned char *r = reserve(im, NX_PROG_NKI_INSTR_SIZE);
    if (!r)
        return;
    nx_put_u32(r, m->pc);
    r[4] = m->engine;
    nx_put_u32(r + 8, m->frame);
    nx_put_u32(r + 12, strtab_ref(&im->strings, m->file_name));
    nx_put_u32(r + 16, m->line);
    nx_put_i64(r + 24, m->iteration);
}

static void put_asm(image *im, const nx_prog_asm *a)
{
    unsigned char *r = reserve(im, NX_PROG_ASM_SIZE);
    if (!r)
        return;
    nx_put_u32(r, a->pc);
    r[4] = a->engine;
    nx_put_u32(r + 8, strtab_ref(&im->strings, a->opcode));
    nx_put_u32(r + 12, strtab_ref(&im->strings, a->operands));
    nx_put_i64(r + 16, a->compiler_pc);
}

/* Appends section id's records (everything but STRINGS). */
#define PUT_SECTION(im, id, arr, n, fn)                              \
    do {                                                             \
        (im)->sec_offset[id] = (im)->out.len;                        \
        (im)->sec_count[id] = (n);                                   \
        for (size_t i_ = 0; i_ < (n); i_++)                          \
            fn((im), &(arr)[i_]);                                    \
    } while (0)

static const uint32_t RECORD_SIZE[NX_SEC_LAST + 1] = {
    [NX_SEC_STRINGS] = 1, [NX_SEC_PROGRAM] = NX_PROG_PROGRAM_SIZE, [NX_SEC_HARDWARE] = NX_PROG_HARDWARE_SIZE,
    [NX_SEC_INSTRUCTIONS] = NX_PROG_INSTR_SIZE, [NX_SEC_DMA_QUEUES] = NX_PROG_QUEUE_SIZE,
    [NX_SEC_DMA_DESCRIPTORS] = NX_PROG_DESC_SIZE, [NX_SEC_TENSORS] = NX_PROG_TENSOR_SIZE,
    [NX_SEC_SEMAPHORES] = NX_PROG_SEMAPHORE_SIZE, [NX_SEC_COLLECTIVES] = NX_PROG_COLLECTIVE_SIZE,
    [NX_SEC_CC_STREAMS] = NX_PROG_CC_STREAM_SIZE, [NX_SEC_STACK_FRAMES] = NX_PROG_FRAME_SIZE,
    [NX_SEC_MEMORY_ALLOCATIONS] = NX_PROG_ALLOC_SIZE, [NX_SEC_NKI_FRAMES] = NX_PROG_NKI_FRAME_SIZE,
    [NX_SEC_NKI_ITERATIONS] = NX_PROG_NKI_ITER_SIZE, [NX_SEC_NKI_INSTRUCTIONS] = NX_PROG_NKI_INSTR_SIZE,
    [NX_SEC_ASSEMBLY] = NX_PROG_ASM_SIZE,
};

/* Sections listed in the TOC, in id order: 1..11, then each optional one that
 * has records. Returns how many were put in ids. */
static uint32_t toc_ids(const nx_program *p, uint32_t ids[NX_SEC_LAST])
{
    uint32_t n = 0;
    for (uint32_t id = 1; id <= NX_SEC_STACK_FRAMES; id++)
        ids[n++] = id;
    const struct { uint32_t id; size_t count; } optional[] = {
        {NX_SEC_MEMORY_ALLOCATIONS, p->n_allocs}, {NX_SEC_NKI_FRAMES, p->n_nki_frames},
        {NX_SEC_NKI_ITERATIONS, p->n_nki_iters}, {NX_SEC_NKI_INSTRUCTIONS, p->n_nki_instrs},
        {NX_SEC_ASSEMBLY, p->n_asm_lines},
    };
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        if (optional[i].count)
            ids[n++] = optional[i].id;
    return n;
}
static uint32_t toc_count(const nx_program *p)
{
    uint32_t ids[NX_SEC_LAST];
    return toc_ids(p, ids);
}
#define TOC_BYTES(p) ((size_t)NX_PROG_HEADER_SIZE + toc_count(p) * NX_PROG_TOC_ENTRY_SIZE)

/* Lays out header and TOC (filled last), every record section, then STRINGS,
 * which is only complete once every record has been put. */
static void put_records(image *im, const nx_program *p, uint32_t *extra_refs)
{
    size_t records = NX_PROG_PROGRAM_SIZE + NX_PROG_HARDWARE_SIZE + p->n_instrs * NX_PROG_INSTR_SIZE +
                     p->n_queues * NX_PROG_QUEUE_SIZE + p->n_descs * NX_PROG_DESC_SIZE +
                     p->n_tensors * NX_PROG_TENSOR_SIZE + p->n_semaphores * NX_PROG_SEMAPHORE_SIZE +
                     p->n_collectives * NX_PROG_COLLECTIVE_SIZE + p->n_cc_streams * NX_PROG_CC_STREAM_SIZE +
                     p->n_frames * NX_PROG_FRAME_SIZE + p->n_allocs * NX_PROG_ALLOC_SIZE +
                     p->n_nki_frames * NX_PROG_NKI_FRAME_SIZE + p->n_nki_iters * NX_PROG_NKI_ITER_SIZE +
                     p->n_nki_instrs * NX_PROG_NKI_INSTR_SIZE + p->n_asm_lines * NX_PROG_ASM_SIZE;
    if (!nx_strbuf_reserve(&im->out, TOC_BYTES(p) + records))   /* one allocation for all records */
        return;
    reserve(im, TOC_BYTES(p));
    im->sec_offset[NX_SEC_PROGRAM] = im->out.len;
    im->sec_count[NX_SEC_PROGRAM] = 1;
    put_header_record(im, p);
    im->sec_offset[NX_SEC_HARDWARE] = im->out.len;
    im->sec_count[NX_SEC_HARDWARE] = 1;
    put_hardware(im, p);
    PUT_SECTION(im, NX_SEC_INSTRUCTIONS, p->instrs, p->n_instrs, put_instr);
    PUT_SECTION(im, NX_SEC_DMA_QUEUES, p->queues, p->n_queues, put_queue);
    PUT_SECTION(im, NX_SEC_DMA_DESCRIPTORS, p->descs, p->n_descs, put_desc);
    PUT_SECTION(im, NX_SEC_TENSORS, p->tensors, p->n_tensors, put_tensor);
    PUT_SECTION(im, NX_SEC_SEMAPHORES, p->semaphores, p->n_semaphores, put_semaphore);
    PUT_SECTION(im, NX_SEC_COLLECTIVES, p->collectives, p->n_collectives, put_collective);
    PUT_SECTION(im, NX_SEC_CC_STREAMS, p->cc_streams, p->n_cc_streams, put_cc_stream);
    PUT_SECTION(im, NX_SEC_STACK_FRAMES, p->frames, p->n_frames, put_frame);
    PUT_SECTION(im, NX_SEC_MEMORY_ALLOCATIONS, p->allocs, p->n_allocs, put_alloc);
    PUT_SECTION(im, NX_SEC_NKI_FRAMES, p->nki_frames, p->n_nki_frames, put_frame);
    PUT_SECTION(im, NX_SEC_NKI_ITERATIONS, p->nki_iters, p->n_nki_iters, put_nki_iter);
    PUT_SECTION(im, NX_SEC_NKI_INSTRUCTIONS, p->nki_instrs, p->n_nki_instrs, put_nki_instr);
    PUT_SECTION(im, NX_SEC_ASSEMBLY, p->asm_lines, p->n_asm_lines, put_asm);
    for (size_t i = 0; i < p->n_extra_strings; i++) {
        uint32_t ref = strtab_ref(&im->strings, p->extra_strings[i]);
        if (extra_refs)
            extra_refs[i] = ref;
    }
    im->sec_offset[NX_SEC_STRINGS] = im->out.len;
    im->sec_count[NX_SEC_STRINGS] = im->strings.bytes.len;
    nx_strbuf_append(&im->out, im->strings.bytes.data, im->strings.bytes.len);
}

/* Fills the file header and the table of contents at the start of the image. */
static void put_toc(image *im, const nx_program *p)
{
    uint32_t ids[NX_SEC_LAST];
    uint32_t toc_n = toc_ids(p, ids);
    unsigned char *buf = (unsigned char *)im->out.data;
    memcpy(buf, NX_PROG_MAGIC, 8);
    nx_put_u16(buf + 8, NX_PROG_VERSION_MAJOR);
    nx_put_u16(buf + 10, NX_PROG_VERSION_MINOR);
    nx_put_u32(buf + 12, NX_PROG_HEADER_SIZE);
    nx_put_u32(buf + 16, toc_n);
    nx_put_u32(buf + 20, NX_PROG_TOC_ENTRY_SIZE);
    nx_put_u64(buf + 24, NX_PROG_HEADER_SIZE);
    nx_put_u64(buf + 32, im->out.len);
    for (uint32_t k = 0; k < toc_n; k++) {
        uint32_t id = ids[k];
        unsigned char *e = buf + NX_PROG_HEADER_SIZE + k * NX_PROG_TOC_ENTRY_SIZE;
        nx_put_u32(e, id);
        nx_put_u32(e + 4, RECORD_SIZE[id]);
        nx_put_u64(e + 8, im->sec_offset[id]);
        nx_put_u64(e + 16, im->sec_count[id]);
    }
}

int nx_program_encode(const nx_program *p, unsigned char **data, size_t *size, uint64_t *hash,
                      uint32_t *extra_refs, nx_error *err)
{
    if (nx_prog_validate(p, "(program being written)", NULL, err) != 0)
        return -1;
    image im = {.out = NX_STRBUF_INIT, .strings = {.bytes = NX_STRBUF_INIT}};
    nx_strbuf_putc(&im.strings.bytes, '\0');   /* offset 0: the empty string */
    put_records(&im, p, extra_refs);
    bool ok = !im.strings.failed && !nx_strbuf_failed(&im.out) && !nx_strbuf_failed(&im.strings.bytes);
    if (ok)
        put_toc(&im, p);
    strtab_free(&im.strings);
    if (!ok) {
        nx_strbuf_free(&im.out);
        return nx_cap_fail(err, "(program being written)", "out of memory (or string table over 4 GiB)");
    }
    *size = im.out.len;
    *data = (unsigned char *)nx_strbuf_detach(&im.out);
    *hash = XXH3_64bits(*data, *size);
    return 0;
}

int nx_program_write(const char *dir, const nx_program *p, uint64_t *hash, char **path_out,
                     nx_error *err)
{
    unsigned char *data;
    size_t size;
    if (nx_program_encode(p, &data, &size, hash, NULL, err) != 0)
        return -1;
    char name[NX_CAP_NAME_MAX];
    nx_cap_program_name(*hash, name);
    char *path = nx_cap_join(dir, name);
    int rc = path ? nx_cap_write_file(path, data, size, err) : nx_cap_fail(err, dir, "out of memory");
    free(data);
    if (rc == 0 && path_out)
        *path_out = path;
    else
        free(path);
    return rc;
}
