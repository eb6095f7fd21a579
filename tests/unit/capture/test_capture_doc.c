/* test_capture_doc.c — docs/capture-format.md against the code: the worked
 * example's hex blocks, written by hand from the spec, must be a valid capture
 * with the values the text claims, and the section table's record sizes must be
 * the ones the readers use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <libgen.h>

#include "capture_fixture.h"

/* The spec, found next to this source file (CMake compiles with absolute paths). */
static char *read_spec(void)
{
    char src[1024];
    snprintf(src, sizeof src, "%s", __FILE__);
    char path[1200];
    snprintf(path, sizeof path, "%s/../../../docs/capture-format.md", dirname(src));
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, fp) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(fp);
    return s;
}

/* Concatenates the bytes of every "```hex <tag>" block; '#' starts a comment. */
static size_t hex_blocks(const char *doc, const char *tag, unsigned char *out, size_t cap)
{
    char fence[64];
    snprintf(fence, sizeof fence, "```hex %s\n", tag);
    size_t n = 0;
    for (const char *p = strstr(doc, fence); p; p = strstr(p, fence)) {
        p += strlen(fence);
        const char *end = strstr(p, "```");
        assert_non_null(end);
        for (const char *q = p; q < end; q++) {
            if (*q == '#')
                while (q < end && *q != '\n')
                    q++;
            if (isxdigit((unsigned char)q[0]) && isxdigit((unsigned char)q[1])) {
                unsigned v;
                assert_int_equal(sscanf(q, "%2x", &v), 1);
                assert_true(n < cap);
                out[n++] = (unsigned char)v;
                q++;
            }
        }
        p = end;
    }
    return n;
}

static void write_bytes(const char *path, const unsigned char *b, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, n, fp), n);
    fclose(fp);
}

static void test_worked_example(void **state)
{
    (void)state;
    char *doc = read_spec();
    assert_non_null(doc);
    static unsigned char prog[4096], trace[4096];
    size_t np = hex_blocks(doc, "program", prog, sizeof prog);
    size_t nt = hex_blocks(doc, "trace", trace, sizeof trace);
    assert_int_equal(np, 699);
    assert_int_equal(nt, 336);
    char *dir = fix_tmpdir();
    char *pp = fix_path(dir, "program_fe4043b08800d829.nxprog");
    char *tp = fix_path(dir, "trace_fe4043b08800d829_nd0_nc0.nxtrace");
    write_bytes(pp, prog, np);
    write_bytes(tp, trace, nt);
    nx_program *p;
    nx_error err;
    if (nx_program_open(pp, &p, NULL, &err) != 0)
        fail_msg("%s", err.msg);
    assert_true(p->hash == 0xfe4043b08800d829ull);
    assert_string_equal(p->header.network_name, "model.neff");
    const nx_prog_instr *mm = nx_program_find_instr(p, NX_ENGINE_TENSOR, 0);
    assert_non_null(mm);
    assert_string_equal(mm->opcode, "MATMUL");
    assert_int_equal(mm->raw_flops, 16777216);
    nx_trace_reader *r;
    if (nx_trace_reader_open(tp, p, NULL, &r, &err) != 0)
        fail_msg("%s", err.msg);
    const nx_trace_header *h = nx_trace_reader_header(r);
    nx_trace_record rec;
    assert_int_equal(nx_trace_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.kind, NX_REC_EXECUTION);
    assert_int_equal(nx_trace_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.kind, NX_REC_INSTRUCTION);
    assert_int_equal(nx_trace_ticks_to_ns(h, rec.ts), 500);
    assert_int_equal(nx_trace_ticks_to_ns(h, rec.end), 1000);
    assert_int_equal(nx_trace_ticks_to_ns(h, rec.u.instr.evt_wait_ticks), 50);
    assert_int_equal(h->epoch_ns + (int64_t)nx_trace_ticks_to_ns(h, rec.ts), 1766072156592459982);
    assert_int_equal(nx_trace_reader_next(r, &rec, &err), 0);
    nx_trace_reader_close(r);
    nx_program_close(p);
    fix_rmtree(dir);
    free(pp);
    free(tp);
    free(dir);
    free(doc);
}

/* "| <id> | <NAME> | <size> |" rows of the section table. */
static void test_section_sizes(void **state)
{
    (void)state;
    char *doc = read_spec();
    assert_non_null(doc);
    static const struct { const char *name; unsigned size; } want[] = {
        {"PROGRAM", NX_PROG_PROGRAM_SIZE}, {"HARDWARE", NX_PROG_HARDWARE_SIZE},
        {"INSTRUCTIONS", NX_PROG_INSTR_SIZE}, {"DMA_QUEUES", NX_PROG_QUEUE_SIZE},
        {"DMA_DESCRIPTORS", NX_PROG_DESC_SIZE}, {"TENSORS", NX_PROG_TENSOR_SIZE},
        {"SEMAPHORES", NX_PROG_SEMAPHORE_SIZE}, {"COLLECTIVES", NX_PROG_COLLECTIVE_SIZE},
        {"CC_STREAMS", NX_PROG_CC_STREAM_SIZE}, {"STACK_FRAMES", NX_PROG_FRAME_SIZE},
        {"MEMORY_ALLOCATIONS", NX_PROG_ALLOC_SIZE},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char row[96];
        snprintf(row, sizeof row, "| %s | %u |", want[i].name, want[i].size);
        if (!strstr(doc, row))
            fail_msg("docs/capture-format.md lacks the row '%s'", row);
    }
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_section_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
