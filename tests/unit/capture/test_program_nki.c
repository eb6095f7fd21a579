/* test_capture_program_nki.c — the program file's NKI sections (NKI_FRAMES,
 * NKI_ITERATIONS, NKI_INSTRUCTIONS) and ASSEMBLY: round trip through the writer
 * and the reader, a program without them (an older file) still reads with none,
 * each damaged field refused with the section, record and byte offset, and the
 * writer refusing what the reader would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "capture_fixture.h"

/* The fixture's program plus a kernel: MATMUL (tensor pc 1) and TENSOR_TENSOR
 * (vector pc 0) mapped, in frames fwd -> qk, loops i_q -> i_k; assembly for
 * all five instructions. */
static nx_prog_instr instrs[5];
static nx_prog_frame frames[2] = {{NX_ABSENT, "/k/attn.py", "attn.fwd", 10}, {0, "/k/attn.py", "attn.qk", 20}};
static nx_prog_nki_iter iters[2] = {{NX_ABSENT, 1, "i_q", "/k/attn.py", 12}, {0, 3, "i_k", "/k/attn.py", 14}};
static nx_prog_nki_instr maps[2] = {{NX_ENGINE_TENSOR, 1, 1, 1, "/k/attn.py", 22},
                                    {NX_ENGINE_VECTOR, 0, 0, NX_ABSENT, "/k/attn.py", 16}};
static nx_prog_asm lines[5];

static void kernel_program(nx_program *p)
{
    fix_program(p);
    memcpy(instrs, p->instrs, sizeof instrs);
    instrs[1].kernel_instruction_name = "inst.1:0";
    instrs[3].kernel_instruction_name = "inst.2:0";
    for (unsigned i = 0; i < 5; i++) {
        instrs[i].compiler_pc = 100 + 2 * i;
        lines[i] = (nx_prog_asm){instrs[i].engine, instrs[i].pc, 100 + 2 * i, instrs[i].opcode, "name=x"};
    }
    p->instrs = instrs;
    p->nki_frames = frames, p->n_nki_frames = 2;
    p->nki_iters = iters, p->n_nki_iters = 2;
    p->nki_instrs = maps, p->n_nki_instrs = 2;
    p->asm_lines = lines, p->n_asm_lines = 5;
}

static unsigned char *encode(const nx_program *p, size_t *n)
{
    unsigned char *data;
    uint64_t h;
    nx_error err;
    assert_int_equal(nx_program_encode(p, &data, n, &h, NULL, &err), 0);
    return data;
}

/* The byte offset of section id in an image, from its TOC. */
static uint64_t section_at(const unsigned char *data, uint32_t id)
{
    uint32_t toc_n;
    memcpy(&toc_n, data + 16, 4);
    for (uint32_t k = 0; k < toc_n; k++) {
        const unsigned char *e = data + NX_PROG_HEADER_SIZE + k * NX_PROG_TOC_ENTRY_SIZE;
        uint32_t eid;
        uint64_t off;
        memcpy(&eid, e, 4);
        memcpy(&off, e + 8, 8);
        if (eid == id)
            return off;
    }
    fail_msg("section %u not in the TOC", id);
    return 0;
}

static void test_round_trip(void **state)
{
    (void)state;
    nx_program src;
    kernel_program(&src);
    size_t n;
    unsigned char *data = encode(&src, &n);
    uint16_t minor;
    memcpy(&minor, data + 10, 2);
    assert_int_equal(minor, NX_PROG_VERSION_MINOR);
    nx_program *p;
    nx_error err;
    assert_int_equal(nx_program_adopt(data, n, "nki.nxprog", &p, NULL, &err), 0);
    assert_int_equal(p->n_nki_frames, 2);
    assert_string_equal(p->nki_frames[1].function_name, "attn.qk");
    assert_int_equal(p->nki_frames[1].parent, 0);
    assert_int_equal(p->nki_frames[1].line, 20);
    assert_int_equal(p->n_nki_iters, 2);
    assert_string_equal(p->nki_iters[1].name, "i_k");
    assert_int_equal(p->nki_iters[1].value, 3);
    assert_int_equal(p->nki_iters[1].parent, 0);
    assert_int_equal(p->n_nki_instrs, 2);
    assert_int_equal(p->nki_instrs[0].pc, 1);
    assert_int_equal(p->nki_instrs[0].iteration, 1);
    assert_int_equal(p->nki_instrs[1].engine, NX_ENGINE_VECTOR);
    assert_int_equal(p->nki_instrs[1].iteration, NX_ABSENT);
    assert_int_equal(p->nki_instrs[1].line, 16);
    assert_string_equal(p->nki_instrs[1].file_name, "/k/attn.py");
    assert_int_equal(p->n_asm_lines, 5);
    assert_int_equal(p->asm_lines[4].compiler_pc, 108);
    assert_string_equal(p->asm_lines[3].opcode, "TENSOR_TENSOR");
    assert_string_equal(p->asm_lines[3].operands, "name=x");
    nx_program_close(p);
}

/* A program without the sections: no TOC entry for them, and it reads with none
 * (as every file before 1.2 does). */
static void test_absent(void **state)
{
    (void)state;
    nx_program src;
    fix_program(&src);
    size_t n;
    unsigned char *data = encode(&src, &n);
    uint32_t toc_n;
    memcpy(&toc_n, data + 16, 4);
    assert_int_equal(toc_n, 11);
    data[10] = 1;   /* version 1.1 */
    nx_program *p;
    nx_error err;
    assert_int_equal(nx_program_adopt(data, n, "old.nxprog", &p, NULL, &err), 0);
    assert_int_equal(p->n_nki_frames + p->n_nki_iters + p->n_nki_instrs + p->n_asm_lines, 0);
    assert_null(p->nki_instrs);
    assert_null(p->asm_lines);
    nx_program_close(p);
}

/* Patches `len` bytes at `field` of record `rec` of section `id` and expects the
 * reader to refuse at the record's field `want_field`, naming the record and `needle`. */
static void expect_bad_at(uint32_t id, uint32_t size, const char *section, unsigned rec, unsigned field,
                          const void *bytes, size_t len, unsigned want_field, const char *needle)
{
    nx_program src;
    kernel_program(&src);
    size_t n;
    unsigned char *data = encode(&src, &n);
    uint64_t at = section_at(data, id) + (uint64_t)rec * size;
    memcpy(data + at + field, bytes, len);
    at += want_field;
    nx_program *p = (nx_program *)1;
    nx_error err;
    assert_int_equal(nx_program_adopt(data, n, "bad.nxprog", &p, NULL, &err), -1);
    assert_null(p);
    char where[160];
    snprintf(where, sizeof where, "offset %llu", (unsigned long long)at);
    if (!strstr(err.msg, where) || !strstr(err.msg, section) || !strstr(err.msg, needle))
        fail_msg("expected \"%s\", \"%s\" and \"%s\" in: %s", where, section, needle, err.msg);
}

/* The same, the error at the patched field. */
static void expect_bad(uint32_t id, uint32_t size, const char *section, unsigned rec, unsigned field,
                       const void *bytes, size_t len, const char *needle)
{
    expect_bad_at(id, size, section, rec, field, bytes, len, field, needle);
}

static void test_damaged(void **state)
{
    (void)state;
    int64_t parent = 1;   /* not earlier than record 1 */
    expect_bad(NX_SEC_NKI_FRAMES, NX_PROG_NKI_FRAME_SIZE, "NKI_FRAMES record 1", 1, 0, &parent, 8,
               "parent 1; expected -1 or the index of an earlier frame");
    uint32_t empty = 0;
    expect_bad(NX_SEC_NKI_FRAMES, NX_PROG_NKI_FRAME_SIZE, "NKI_FRAMES record 0", 0, 12, &empty, 4,
               "empty function name");
    parent = 5;
    expect_bad(NX_SEC_NKI_ITERATIONS, NX_PROG_NKI_ITER_SIZE, "NKI_ITERATIONS record 1", 1, 0, &parent, 8,
               "parent 5");
    expect_bad(NX_SEC_NKI_ITERATIONS, NX_PROG_NKI_ITER_SIZE, "NKI_ITERATIONS record 0", 0, 16, &empty, 4,
               "empty loop variable name");
    uint32_t pc = 7;   /* tensor pc 7 exists but has no kernel_instruction_name */
    expect_bad(NX_SEC_NKI_INSTRUCTIONS, NX_PROG_NKI_INSTR_SIZE, "NKI_INSTRUCTIONS record 0", 0, 0, &pc, 4,
               "has no kernel_instruction_name");
    pc = 5;
    expect_bad(NX_SEC_NKI_INSTRUCTIONS, NX_PROG_NKI_INSTR_SIZE, "NKI_INSTRUCTIONS record 0", 0, 0, &pc, 4,
               "engine 0 / pc 5 is not an instruction of the program");
    uint8_t engine = NX_ENGINE_TENSOR;   /* record 1 becomes (tensor, 0): before record 0's (tensor, 1) */
    expect_bad_at(NX_SEC_NKI_INSTRUCTIONS, NX_PROG_NKI_INSTR_SIZE, "NKI_INSTRUCTIONS record 1", 1, 4, &engine, 1, 0,
                  "expected records sorted by engine then strictly increasing pc");
    uint32_t frame = 2;
    expect_bad(NX_SEC_NKI_INSTRUCTIONS, NX_PROG_NKI_INSTR_SIZE, "NKI_INSTRUCTIONS record 0", 0, 8, &frame, 4,
               "frame 2 out of range");
    int64_t iteration = 2;
    expect_bad(NX_SEC_NKI_INSTRUCTIONS, NX_PROG_NKI_INSTR_SIZE, "NKI_INSTRUCTIONS record 0", 0, 24, &iteration, 8,
               "iteration 2 out of range");
    int64_t cpc = 101;   /* record 1's is 102; instruction 0 records 100 */
    expect_bad(NX_SEC_ASSEMBLY, NX_PROG_ASM_SIZE, "ASSEMBLY record 0", 0, 16, &cpc, 8,
               "compiler_pc 101 but instruction (engine 0, pc 0) records compiler_pc 100");
    cpc = 100;
    expect_bad(NX_SEC_ASSEMBLY, NX_PROG_ASM_SIZE, "ASSEMBLY record 1", 1, 16, &cpc, 8,
               "compiler_pc 100; expected >= 0 and above the previous record's");
    expect_bad(NX_SEC_ASSEMBLY, NX_PROG_ASM_SIZE, "ASSEMBLY record 2", 2, 8, &empty, 4, "empty opcode");
    engine = 9;
    expect_bad(NX_SEC_ASSEMBLY, NX_PROG_ASM_SIZE, "ASSEMBLY record 2", 2, 4, &engine, 1,
               "engine 9 / pc 7 is not an instruction of the program");
    uint32_t ref = 2;   /* inside a string */
    expect_bad(NX_SEC_ASSEMBLY, NX_PROG_ASM_SIZE, "", 0, 12, &ref, 4, "not the start of a string");
}

/* A section that claims more records than the file holds fails at its TOC entry. */
static void test_truncated(void **state)
{
    (void)state;
    nx_program src;
    kernel_program(&src);
    size_t n;
    unsigned char *data = encode(&src, &n);
    uint32_t toc_n;
    memcpy(&toc_n, data + 16, 4);
    unsigned char *e = data + NX_PROG_HEADER_SIZE + (toc_n - 1) * NX_PROG_TOC_ENTRY_SIZE;   /* ASSEMBLY, last */
    uint64_t count = 1000;
    memcpy(e + 16, &count, 8);
    nx_program *p;
    nx_error err;
    assert_int_equal(nx_program_adopt(data, n, "cut.nxprog", &p, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "section 23 (1000 records of 24 bytes"));
}

static void test_writer_refuses(void **state)
{
    (void)state;
    nx_program src;
    kernel_program(&src);
    nx_prog_nki_instr bad[2];
    memcpy(bad, maps, sizeof bad);
    bad[1].frame = 9;
    src.nki_instrs = bad;
    unsigned char *data;
    size_t n;
    uint64_t h;
    nx_error err;
    assert_int_equal(nx_program_encode(&src, &data, &n, &h, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "NKI_INSTRUCTIONS record 1"));
    assert_non_null(strstr(err.msg, "frame 9 out of range"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_absent), cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_truncated), cmocka_unit_test(test_writer_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
