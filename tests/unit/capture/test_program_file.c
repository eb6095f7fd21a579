/* test_capture_program.c — program file: write/read round trip, determinism, and
 * every fatal check with a crafted bad file (message names the file and offset).
 * The fixture program also carries three MEMORY_ALLOCATIONS records (format 1.1);
 * a program without them must round-trip with an 11-entry TOC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>

#include "capture_fixture.h"

static const char *s0(const char *s) { return s ? s : ""; }

static void assert_instr_equal(const nx_prog_instr *a, const nx_prog_instr *b)
{
    assert_int_equal(a->pc, b->pc);
    assert_int_equal(a->engine, b->engine);
    assert_int_equal(a->tensor_instruction_type, b->tensor_instruction_type);
    assert_int_equal(a->performance_mode, b->performance_mode);
    assert_int_equal(a->wait_semaphore, b->wait_semaphore);
    assert_int_equal(a->signal_semaphore, b->signal_semaphore);
#define X(name) assert_string_equal(s0(a->name), s0(b->name));
    NX_PROG_INSTR_STRINGS(X)
#undef X
#define X(name) assert_int_equal(a->name, b->name);
    NX_PROG_INSTR_INTS(X)
#undef X
}

static void assert_program_equal(const nx_program *a, const nx_program *b)
{
#define X(name) assert_string_equal(s0(a->header.name), s0(b->header.name));
    NX_PROG_HEADER_STRINGS(X)
#undef X
#define X(name) assert_int_equal(a->header.name, b->header.name);
    NX_PROG_HEADER_INTS(X)
#undef X
    assert_memory_equal(a->header.uuid, b->header.uuid, 16);
    assert_memory_equal(&a->hw, &b->hw, sizeof a->hw);
    assert_int_equal(a->n_instrs, b->n_instrs);
    for (size_t i = 0; i < a->n_instrs; i++)
        assert_instr_equal(&a->instrs[i], &b->instrs[i]);
    assert_int_equal(a->n_queues, b->n_queues);
    for (size_t i = 0; i < a->n_queues; i++) {
        assert_string_equal(a->queues[i].name, b->queues[i].name);
        assert_string_equal(a->queues[i].purpose, b->queues[i].purpose);
        assert_int_equal(a->queues[i].type, b->queues[i].type);
        assert_int_equal(a->queues[i].dram_channel, b->queues[i].dram_channel);
    }
    assert_int_equal(a->n_descs, b->n_descs);
    for (size_t i = 0; i < a->n_descs; i++) {
#define X(name) assert_string_equal(s0(a->descs[i].name), s0(b->descs[i].name));
        NX_PROG_DESC_STRINGS(X)
#undef X
        assert_int_equal(a->descs[i].queue, b->descs[i].queue);
        assert_int_equal(a->descs[i].is_transpose, b->descs[i].is_transpose);
    }
    assert_int_equal(a->n_tensors, b->n_tensors);
    assert_string_equal(a->tensors[0].shape, b->tensors[0].shape);
    assert_int_equal(a->tensors[0].size, b->tensors[0].size);
    assert_int_equal(a->n_semaphores, b->n_semaphores);
    assert_string_equal(a->semaphores[1].name, b->semaphores[1].name);
    assert_int_equal(a->n_collectives, b->n_collectives);
    assert_string_equal(a->collectives[0].replica_group, b->collectives[0].replica_group);
    assert_int_equal(a->collectives[0].output_size, b->collectives[0].output_size);
    assert_int_equal(a->collectives[0].trigger_engine, b->collectives[0].trigger_engine);
    assert_string_equal(a->cc_streams[0].cc_core_ids, b->cc_streams[0].cc_core_ids);
    assert_int_equal(a->n_frames, b->n_frames);
    assert_int_equal(a->frames[1].parent, b->frames[1].parent);
    assert_string_equal(a->frames[1].function_name, b->frames[1].function_name);
    assert_int_equal(a->frames[1].line, b->frames[1].line);
    assert_int_equal(a->n_allocs, b->n_allocs);
    for (size_t i = 0; i < a->n_allocs; i++) {
        const nx_prog_alloc *x = &a->allocs[i], *y = &b->allocs[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->memory, y->memory);
        assert_int_equal(x->bank, y->bank);
        assert_int_equal(x->first_partition, y->first_partition);
        assert_int_equal(x->partition_count, y->partition_count);
        assert_int_equal(x->live_engine, y->live_engine);
        assert_int_equal(x->live_pc, y->live_pc);
        assert_int_equal(x->free_engine, y->free_engine);
        assert_int_equal(x->free_pc, y->free_pc);
        assert_int_equal(x->bytes_per_partition, y->bytes_per_partition);
        assert_int_equal(x->end_address, y->end_address);
    }
}

/* Three allocations over the fixture's instructions: a weight tile in every SBUF
 * partition (LDWEIGHTS .. the Vector op), a partial SBUF range filled by the Sync
 * DMA trigger, and a PSUM accumulator in bank 3 (MATMUL pc 1 .. the Vector op). */
static nx_prog_alloc fix_allocs[3] = {
    {"w0.tile", NX_MEM_SBUF, NX_NO_BANK, 0, 128, NX_ENGINE_TENSOR, NX_ENGINE_VECTOR, 0, 0, 4096, 8192},
    {"x.part", NX_MEM_SBUF, NX_NO_BANK, 32, 32, NX_ENGINE_SYNC, NX_ENGINE_TENSOR, 0, 1, 196608, 196608},
    {"acc", NX_MEM_PSUM, 3, 0, 128, NX_ENGINE_TENSOR, NX_ENGINE_VECTOR, 1, 0, 2048, 0},   /* address not recorded */
};

typedef struct fixture {
    char *dir, *path;
    uint64_t hash;
    nx_program src;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = fix_tmpdir();
    fix_program(&f->src);
    f->src.allocs = fix_allocs;
    f->src.n_allocs = 3;
    nx_error err;
    if (!f->dir || nx_program_write(f->dir, &f->src, &f->hash, &f->path, &err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    fix_rmtree(f->dir);
    free(f->dir);
    free(f->path);
    free(f);
    return 0;
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    nx_program *p;
    nx_error err;
    assert_int_equal(nx_program_open(f->path, &p, NULL, &err), 0);
    assert_program_equal(&f->src, p);
    assert_true(p->hash == f->hash);
    assert_int_equal(p->version_major, 1);
    assert_int_equal(p->version_minor, 2);
    assert_int_equal(NX_SEC_LAST, 23);
    assert_int_equal(p->header_bytes, NX_PROG_HEADER_SIZE + 12 * NX_PROG_TOC_ENTRY_SIZE);
    uint32_t ref;
    assert_true(nx_program_find_string(p, "Tensor Completion", &ref));
    assert_string_equal(nx_program_string(p, ref), "Tensor Completion");
    assert_null(nx_program_string(p, ref + 1));       /* not the start of a string */
    assert_false(nx_program_find_string(p, "never written", &ref));
    assert_string_equal(nx_program_find_instr(p, NX_ENGINE_TENSOR, 7)->opcode, "MATMUL");
    assert_string_equal(nx_program_find_instr(p, NX_ENGINE_TENSOR, 1)->hlo_name, "dot.12");
    assert_null(nx_program_find_instr(p, NX_ENGINE_TENSOR, 5));
    assert_null(nx_program_find_instr(p, NX_ENGINE_SCALAR, 0));
    assert_string_equal(nx_program_find_instr(p, NX_ENGINE_SYNC, 0)->opcode, "DMA_TRIGGER");
    nx_program_close(p);
}

static void test_deterministic_and_hash_sensitive(void **state)
{
    fixture *f = *state;
    unsigned char *a, *b;
    size_t na, nb;
    uint64_t ha, hb;
    nx_error err;
    assert_int_equal(nx_program_encode(&f->src, &a, &na, &ha, NULL, &err), 0);
    assert_int_equal(nx_program_encode(&f->src, &b, &nb, &hb, NULL, &err), 0);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(b);
    f->src.instrs[2].pc = 8;
    assert_int_equal(nx_program_encode(&f->src, &b, &nb, &hb, NULL, &err), 0);
    assert_true(ha != hb);
    f->src.instrs[2].pc = 7;
    free(a);
    free(b);
}

/* Reads the TOC entry of section `id` from the written file (the writer puts
 * entry k at 64 + 32 (k - 1)). */
static uint64_t section_offset(const char *path, int id)
{
    FILE *fp = fopen(path, "rb");
    unsigned char e[8];
    assert_non_null(fp);
    assert_int_equal(fseek(fp, NX_PROG_HEADER_SIZE + (id - 1) * NX_PROG_TOC_ENTRY_SIZE + 8, SEEK_SET), 0);
    assert_int_equal(fread(e, 1, 8, fp), 8);
    fclose(fp);
    uint64_t v;
    memcpy(&v, e, 8);
    return v;
}

/* Opening must fail with a message naming the file, "offset <want_off>" (when
 * want_off >= 0) and `needle`. */
static void expect_fatal(const char *path, long want_off, const char *needle)
{
    nx_program *p = (nx_program *)1;
    nx_error err = {0};
    assert_int_equal(nx_program_open(path, &p, NULL, &err), -1);
    assert_null(p);
    if (!strstr(err.msg, path) || !strstr(err.msg, needle))
        fail_msg("message '%s' lacks the path or '%s'", err.msg, needle);
    if (want_off >= 0) {
        char off[48];
        snprintf(off, sizeof off, "offset %ld:", want_off);
        if (!strstr(err.msg, off))
            fail_msg("message '%s' lacks '%s'", err.msg, off);
    }
}

static void test_bad_magic(void **state)
{
    fixture *f = *state;
    assert_int_equal(fix_patch(f->path, 0, "NXPROX", 6), 0);
    expect_fatal(f->path, 0, "wrong magic");
}

static void test_unsupported_version(void **state)
{
    fixture *f = *state;
    uint16_t v[2] = {2, 0};
    assert_int_equal(fix_patch(f->path, 8, v, 4), 0);
    expect_fatal(f->path, 8, "unsupported version 2.0");
}

static void test_truncated(void **state)
{
    fixture *f = *state;
    FILE *fp = fopen(f->path, "rb");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    assert_int_equal(fix_truncate(f->path, size - 10), 0);
    expect_fatal(f->path, 32, "truncated");
    assert_int_equal(fix_truncate(f->path, 40), 0);
    expect_fatal(f->path, 0, "truncated header");
}

static void test_section_past_end(void **state)
{
    fixture *f = *state;
    uint64_t count = 1000000;
    long entry = NX_PROG_HEADER_SIZE + (NX_SEC_INSTRUCTIONS - 1) * NX_PROG_TOC_ENTRY_SIZE;
    assert_int_equal(fix_patch(f->path, entry + 16, &count, 8), 0);
    expect_fatal(f->path, entry + 8, "runs past the end");
}

static void test_duplicate_and_missing_sections(void **state)
{
    fixture *f = *state;
    uint32_t id = NX_SEC_SEMAPHORES;
    long tensors = NX_PROG_HEADER_SIZE + (NX_SEC_TENSORS - 1) * NX_PROG_TOC_ENTRY_SIZE;
    assert_int_equal(fix_patch(f->path, tensors, &id, 4), 0);
    expect_fatal(f->path, -1, "appears twice");
    id = NX_SEC_TENSORS;
    assert_int_equal(fix_patch(f->path, tensors, &id, 4), 0);
    id = 99;   /* INSTRUCTIONS becomes an unknown section: a warning, then "missing" */
    assert_int_equal(fix_patch(f->path, NX_PROG_HEADER_SIZE + (NX_SEC_INSTRUCTIONS - 1) * NX_PROG_TOC_ENTRY_SIZE,
                               &id, 4), 0);
    expect_fatal(f->path, -1, "required section 4 is missing");
}

static void test_record_size_too_small(void **state)
{
    fixture *f = *state;
    uint32_t size = 100;
    long entry = NX_PROG_HEADER_SIZE + (NX_SEC_INSTRUCTIONS - 1) * NX_PROG_TOC_ENTRY_SIZE;
    assert_int_equal(fix_patch(f->path, entry + 4, &size, 4), 0);
    expect_fatal(f->path, entry + 4, "record_size 100; expected at least 288");
}

static void test_bad_string_reference(void **state)
{
    fixture *f = *state;
    uint64_t instrs = section_offset(f->path, NX_SEC_INSTRUCTIONS);
    uint32_t ref = 3;   /* inside "model.neff", not at the start of a string */
    assert_int_equal(fix_patch(f->path, (long)instrs + 16, &ref, 4), 0);
    expect_fatal(f->path, (long)instrs + 16, "not the start of a string");
    ref = 0xFFFFFF;
    assert_int_equal(fix_patch(f->path, (long)instrs + 16, &ref, 4), 0);
    expect_fatal(f->path, (long)instrs + 16, "string reference 16777215");
}

static void test_unsorted_pcs(void **state)
{
    fixture *f = *state;
    uint64_t instrs = section_offset(f->path, NX_SEC_INSTRUCTIONS);
    uint32_t pc = 1;   /* record 2 (tensor pc 7) becomes a duplicate of record 1 */
    assert_int_equal(fix_patch(f->path, (long)instrs + 2 * NX_PROG_INSTR_SIZE, &pc, 4), 0);
    expect_fatal(f->path, (long)(instrs + 2 * NX_PROG_INSTR_SIZE), "strictly increasing pc");
}

static void test_reference_out_of_range(void **state)
{
    fixture *f = *state;
    uint64_t instrs = section_offset(f->path, NX_SEC_INSTRUCTIONS);
    uint16_t sem = 9;
    assert_int_equal(fix_patch(f->path, (long)instrs + NX_PROG_INSTR_SIZE + 8, &sem, 2), 0);
    expect_fatal(f->path, (long)(instrs + NX_PROG_INSTR_SIZE + 8), "wait_semaphore 9 out of range");
}

static void test_frame_parent_forward(void **state)
{
    fixture *f = *state;
    uint64_t frames = section_offset(f->path, NX_SEC_STACK_FRAMES);
    int64_t parent = 1;   /* frame 0 pointing at frame 1 could loop */
    assert_int_equal(fix_patch(f->path, (long)frames, &parent, 8), 0);
    expect_fatal(f->path, (long)frames, "earlier frame");
}

static void test_name_hash_mismatch(void **state)
{
    fixture *f = *state;
    char *other = fix_path(f->dir, "program_0000000000000001.nxprog");
    assert_int_equal(rename(f->path, other), 0);
    expect_fatal(other, -1, "the file name says hash 0000000000000001");
    assert_int_equal(rename(other, f->path), 0);
    free(other);
}

static void test_unknown_section_is_a_warning(void **state)
{
    fixture *f = *state;
    uint32_t id = 13;
    long entry = NX_PROG_HEADER_SIZE + (NX_SEC_CC_STREAMS - 1) * NX_PROG_TOC_ENTRY_SIZE;
    assert_int_equal(fix_patch(f->path, entry, &id, 4), 0);
    /* The content changed, so it no longer matches its name: read it unnamed. */
    char *copy = fix_path(f->dir, "renamed.nxprog");
    assert_int_equal(rename(f->path, copy), 0);
    fix_warnings w = {0};
    nx_cap_warner warner = {fix_warn_cb, &w};
    nx_program *p;
    nx_error err;
    assert_int_equal(nx_program_open(copy, &p, &warner, &err), 0);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "section id 13 is unknown"));
    assert_int_equal(p->n_cc_streams, 0);
    nx_program_close(p);
    assert_int_equal(rename(copy, f->path), 0);
    free(copy);
}

static void test_writer_refuses_invalid(void **state)
{
    fixture *f = *state;
    nx_program bad = f->src;
    nx_prog_instr swapped[2] = {f->src.instrs[1], f->src.instrs[0]};
    bad.instrs = swapped;
    bad.n_instrs = 2;
    unsigned char *data;
    size_t n;
    uint64_t h;
    nx_error err;
    assert_int_equal(nx_program_encode(&bad, &data, &n, &h, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "INSTRUCTIONS record 1"));
    bad = f->src;
    bad.hw.tensor_rows = 0;
    assert_int_equal(nx_program_encode(&bad, &data, &n, &h, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "tensor_rows is 0"));
}

/* Without allocations the writer lists sections 1..11 only and readers see none;
 * a file that says version 1.0 (written before MEMORY_ALLOCATIONS) still reads. */
static void test_no_allocations(void **state)
{
    fixture *f = *state;
    nx_program src = f->src;
    src.allocs = NULL;
    src.n_allocs = 0;
    unsigned char *data;
    size_t n;
    uint64_t h;
    nx_error err;
    assert_int_equal(nx_program_encode(&src, &data, &n, &h, NULL, &err), 0);
    uint32_t toc_n;
    memcpy(&toc_n, data + 16, 4);
    assert_int_equal(toc_n, 11);
    data[10] = 0;   /* version 1.0 */
    nx_program *p;
    assert_int_equal(nx_program_adopt(data, n, "old.nxprog", &p, NULL, &err), 0);
    assert_int_equal(p->version_minor, 0);
    assert_int_equal(p->n_allocs, 0);
    assert_null(p->allocs);
    assert_int_equal(p->header_bytes, NX_PROG_HEADER_SIZE + 11 * NX_PROG_TOC_ENTRY_SIZE);
    nx_program_close(p);
}

/* Patches `len` bytes at `field` of allocation record `rec` and expects a fatal
 * error at that record's field offset naming the record and `needle`. */
static void expect_bad_alloc(fixture *f, unsigned rec, unsigned field, const void *bytes, size_t len,
                             unsigned want_field, const char *needle)
{
    long at = (long)section_offset(f->path, NX_SEC_MEMORY_ALLOCATIONS) + (long)rec * NX_PROG_ALLOC_SIZE;
    unsigned char saved[8];
    FILE *fp = fopen(f->path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, at + (long)field, SEEK_SET), 0);
    assert_int_equal(fread(saved, 1, len, fp), len);
    fclose(fp);
    assert_int_equal(fix_patch(f->path, at + (long)field, bytes, len), 0);
    char *copy = fix_path(f->dir, "patched.nxprog");   /* content no longer matches the name */
    assert_int_equal(rename(f->path, copy), 0);
    char rec_name[64];
    snprintf(rec_name, sizeof rec_name, "MEMORY_ALLOCATIONS record %u", rec);
    expect_fatal(copy, at + (long)want_field, rec_name);
    expect_fatal(copy, at + (long)want_field, needle);
    assert_int_equal(rename(copy, f->path), 0);
    free(copy);
    assert_int_equal(fix_patch(f->path, at + (long)field, saved, len), 0);
}

static void test_bad_allocations(void **state)
{
    fixture *f = *state;
    uint16_t first = 120;   /* record 0 spans 128 partitions: 120..247 */
    expect_bad_alloc(f, 0, 6, &first, 2, 6, "first_partition 120 + partition_count 128 exceeds HARDWARE sbuf_partitions 128");
    uint16_t count = 0;
    expect_bad_alloc(f, 1, 8, &count, 2, 8, "partition_count 0");
    uint8_t bank = 8;
    expect_bad_alloc(f, 2, 5, &bank, 1, 5, "bank 8 out of range (HARDWARE psum_banks is 8");
    bank = 0;
    expect_bad_alloc(f, 0, 5, &bank, 1, 5, "bank 0 on an SBUF allocation");
    uint8_t mem = 2;
    expect_bad_alloc(f, 1, 4, &mem, 1, 4, "memory 2 out of range");
    uint64_t bytes = 196609;
    expect_bad_alloc(f, 1, 24, &bytes, 8, 24, "bytes_per_partition 196609 out of range (expected 1..196608");
    bytes = 2049;   /* a PSUM bank holds 16384 / 8 bytes per partition */
    expect_bad_alloc(f, 2, 24, &bytes, 8, 24, "bytes_per_partition 2049 out of range (expected 1..2048");
    uint32_t end = 4095;   /* record 0 takes 4096 bytes per partition */
    expect_bad_alloc(f, 0, 20, &end, 4, 20, "end_address 4095 out of range (expected 0, not recorded, or 4096..196608");
    end = 2049;   /* past a PSUM bank */
    expect_bad_alloc(f, 2, 20, &end, 4, 20, "end_address 2049 out of range (expected 0, not recorded, or 2048..2048");
    uint32_t pc = 5;   /* tensor pcs are 0, 1, 7 */
    expect_bad_alloc(f, 0, 12, &pc, 4, 12, "live_engine 0 / live_pc 5 is not an instruction");
    uint8_t engine = 7;
    expect_bad_alloc(f, 2, 11, &engine, 1, 11, "free_engine 7 / free_pc 0 is not an instruction");
    uint32_t ref = 2;   /* inside the first string (offset 1) */
    expect_bad_alloc(f, 2, 0, &ref, 4, 0, "not the start of a string");
}

/* A MEMORY_ALLOCATIONS section claiming more records than the file holds, or
 * records smaller than 32 bytes, is fatal at its TOC entry. */
static void test_truncated_allocations(void **state)
{
    fixture *f = *state;
    long entry = NX_PROG_HEADER_SIZE + (NX_SEC_MEMORY_ALLOCATIONS - 1) * NX_PROG_TOC_ENTRY_SIZE;
    uint64_t count = 1000;
    assert_int_equal(fix_patch(f->path, entry + 16, &count, 8), 0);
    expect_fatal(f->path, entry + 8, "section 12 (1000 records of 32 bytes");
    count = 3;
    assert_int_equal(fix_patch(f->path, entry + 16, &count, 8), 0);
    uint32_t size = 24;
    assert_int_equal(fix_patch(f->path, entry + 4, &size, 4), 0);
    expect_fatal(f->path, entry + 4, "section 12 record_size 24; expected at least 32");
}

static void test_writer_refuses_bad_allocation(void **state)
{
    fixture *f = *state;
    nx_program bad = f->src;
    nx_prog_alloc a[3];
    memcpy(a, fix_allocs, sizeof a);
    a[1].free_pc = 99;
    bad.allocs = a;
    unsigned char *data;
    size_t n;
    uint64_t h;
    nx_error err;
    assert_int_equal(nx_program_encode(&bad, &data, &n, &h, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "MEMORY_ALLOCATIONS record 1"));
    assert_non_null(strstr(err.msg, "free_pc 99"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_round_trip), T(test_deterministic_and_hash_sensitive), T(test_bad_magic),
        T(test_unsupported_version), T(test_truncated), T(test_section_past_end),
        T(test_duplicate_and_missing_sections), T(test_record_size_too_small),
        T(test_bad_string_reference), T(test_unsorted_pcs), T(test_reference_out_of_range),
        T(test_frame_parent_forward), T(test_name_hash_mismatch), T(test_unknown_section_is_a_warning),
        T(test_writer_refuses_invalid), T(test_no_allocations), T(test_bad_allocations),
        T(test_truncated_allocations), T(test_writer_refuses_bad_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
