/*
 * fuzz_trace.c — libFuzzer harness for the device trace reader
 * (capture/device_trace.h).
 *
 * The program is the fixture's (fuzz_fixture.h: the tiny capture the seeds come
 * from), read once. Each input is written as a trace file and read to its end with
 * nx_trace_reader_open / _next against that program. Invariants: a refused open
 * or a fatal record leaves a message; every record handed out has a known kind,
 * a pcore inside the header's count, an end not before its start where the kind
 * requires it, an instruction's pc found in the program; offsets advance by one
 * record; no more records than the file holds; nx_trace_read_header agrees with
 * the reader's header; the prepared clock (nx_trace_clock_ns) gives exactly
 * nx_trace_ticks_to_ns for every timestamp, and nx_trace_clock_unix_ns never wraps.
 *
 * Seeds: tests/fuzz/corpus/trace/ (tests/fuzz/make_corpus.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/device_trace.h"
#include "fuzz_fixture.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nx_program *prog;
static size_t sink;

static void warn(void *ctx, const char *path, uint64_t where, const char *category, const char *message)
{
    (void)ctx;
    (void)where;
    sink += strlen(path) + strlen(category) + strlen(message);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    nx_error err;
    if (nx_program_open(nxfuzz_program_path(), &prog, NULL, &err) != 0) {
        fprintf(stderr, "fuzz_trace: the fixture's program: %s\n", err.msg);
        abort();
    }
    return 0;
}

static void check_time(const nx_trace_clock *c, const nx_trace_header *h, uint64_t ticks)
{
    if (ticks == NX_NO_TICKS)
        return;
    NXFUZZ_CHECK(nx_trace_clock_ns(c, ticks) == nx_trace_ticks_to_ns(h, ticks));
    int64_t unix_ns;
    if (nx_trace_clock_unix_ns(c, h->epoch_ns, ticks, &unix_ns)) {
        __int128 want = (__int128)h->epoch_ns + (__int128)nx_trace_ticks_to_ns(h, ticks);
        NXFUZZ_CHECK(want == unix_ns);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!prog)
        LLVMFuzzerInitialize(NULL, NULL);
    const char *path = nxfuzz_write("fuzz.nxtrace", data, size);
    nx_cap_warner w = {warn, NULL};
    nx_error err;
    err.msg[0] = '\0';
    nx_trace_reader *r = (nx_trace_reader *)1;
    if (nx_trace_reader_open(path, prog, &w, &r, &err) != 0) {
        NXFUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL);
        return 0;
    }
    const nx_trace_header *h = nx_trace_reader_header(r);
    NXFUZZ_CHECK(h->pcore_count >= 1 && h->pcore_count <= NX_TRACE_MAX_PCORES);
    NXFUZZ_CHECK(h->ticks_per_ns_num != 0 && h->ticks_per_ns_den != 0);
    nx_trace_header again;
    NXFUZZ_CHECK(nx_trace_read_header(path, &again, &err) == 0);
    NXFUZZ_CHECK(again.program_hash == h->program_hash && again.header_size == h->header_size &&
                 again.epoch_ns == h->epoch_ns && again.pcore_count == h->pcore_count);
    nx_trace_clock clock;
    nx_trace_clock_init(&clock, h);
    uint64_t total = nx_trace_reader_record_count(r), n = 0, last_off = 0;
    NXFUZZ_CHECK(total <= size / NX_TRACE_RECORD_SIZE);
    nx_trace_record rec;
    int rc;
    while ((rc = nx_trace_reader_next(r, &rec, &err)) == 1) {
        n++;
        NXFUZZ_CHECK(n <= total);
        uint64_t off = nx_trace_reader_offset(r);
        NXFUZZ_CHECK(off >= h->header_size && off + NX_TRACE_RECORD_SIZE <= size && (n == 1 || off > last_off));
        last_off = off;
        NXFUZZ_CHECK(rec.kind >= 1 && rec.kind <= NX_REC_KIND_MAX && nx_rec_kind_name(rec.kind) != NULL);
        NXFUZZ_CHECK(rec.pcore < h->pcore_count);
        if (rec.kind != NX_REC_DMA_BLOCK && rec.kind != NX_REC_SEMAPHORE && rec.kind != NX_REC_ERROR)
            NXFUZZ_CHECK(rec.end >= rec.ts);
        if (rec.kind == NX_REC_INSTRUCTION)
            NXFUZZ_CHECK(nx_program_find_instr(prog, rec.u.instr.engine, rec.u.instr.pc) != NULL);
        check_time(&clock, h, rec.ts);
        check_time(&clock, h, rec.end);
    }
    if (rc < 0)
        NXFUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL);
    else
        NXFUZZ_CHECK(n == total);
    nx_trace_reader_close(r);
    return 0;
}
