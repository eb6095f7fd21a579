/*
 * fuzz_system_tsv.c — libFuzzer harness for the system capture reader
 * (capture/system_capture.h): runtime_events.tsv, cpu_usage.tsv, host_mem.tsv and
 * device_mem.tsv.
 *
 * The kind is the one the input's version line names ("#nxprof cpu-usage 1" ...),
 * else the input's size modulo 4, so every kind also sees files meant for another.
 * The input is written as a file and read to its end. Invariants: a refused file
 * leaves a message; records come with rising line numbers (never beyond the
 * file's line count); runtime events end no earlier than they start and their
 * strings have no tab or newline; the first column never decreases; CPU samples are 0..100 %; device memory totals
 * are the sum of their non-negative categories, host memory 0 <= used <= total; the attributes of every runtime
 * event render as JSON (nx_sys_attributes_to_json) that starts with '{' and ends
 * with '}'.
 *
 * Seeds: tests/fuzz/corpus/system_tsv/ (tests/fuzz/make_corpus.sh).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/system_capture.h"
#include "fuzz_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nx_sys_kind kind_of(const uint8_t *data, size_t size)
{
    for (int k = 0; k < NX_SYS_KIND_COUNT; k++) {
        char want[64];
        int n = snprintf(want, sizeof want, "#nxprof %s ", nx_sys_kind_tag((nx_sys_kind)k));
        if ((size_t)n <= size && memcmp(data, want, (size_t)n) == 0)
            return (nx_sys_kind)k;
    }
    return (nx_sys_kind)(size % NX_SYS_KIND_COUNT);
}

static void check_text(const char *s)
{
    NXFUZZ_CHECK(s != NULL);
    NXFUZZ_CHECK(strpbrk(s, "\t\n") == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nx_sys_kind kind = kind_of(data, size);
    const char *path = nxfuzz_write("fuzz.tsv", data, size);
    uint64_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    nx_sys_reader *r = NULL;
    nx_error err;
    err.msg[0] = '\0';
    if (nx_sys_reader_open(path, kind, &r, &err) != 0) {
        NXFUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL);
        return 0;
    }
    nx_sys_record rec;
    uint64_t last = 2;
    int64_t prev_first = INT64_MIN;
    int rc;
    nx_strbuf json = NX_STRBUF_INIT;
    while ((rc = nx_sys_reader_next(r, &rec, &err)) == 1) {
        NXFUZZ_CHECK(rec.line > last && rec.line <= lines);
        last = rec.line;
        int64_t first = kind == NX_SYS_RUNTIME_EVENTS ? rec.u.runtime.start_ns
                        : kind == NX_SYS_CPU_USAGE    ? rec.u.cpu.timestamp_ns
                        : kind == NX_SYS_HOST_MEM     ? rec.u.mem.timestamp_ns
                                                      : rec.u.hbm.timestamp_ns;
        NXFUZZ_CHECK(first >= prev_first); /* sorted by the first column */
        prev_first = first;
        switch (kind) {
        case NX_SYS_RUNTIME_EVENTS: {
            const nx_sys_runtime_event *e = &rec.u.runtime;
            NXFUZZ_CHECK(e->end_ns >= e->start_ns);
            check_text(e->source);
            check_text(e->name);
            check_text(e->flow_ids);
            check_text(e->attributes);
            json.len = 0;
            nx_sys_attributes_to_json(e->attributes, &json);
            NXFUZZ_CHECK(nx_strbuf_failed(&json) ||
                         (json.len >= 2 && json.data[0] == '{' && json.data[json.len - 1] == '}'));
            break;
        }
        case NX_SYS_CPU_USAGE:
            NXFUZZ_CHECK(rec.u.cpu.util_percent >= 0 && rec.u.cpu.util_percent <= 100);
            NXFUZZ_CHECK(rec.u.cpu.cpu >= NX_SYS_CPU_AVERAGE);
            break;
        case NX_SYS_HOST_MEM:
            NXFUZZ_CHECK(rec.u.mem.used_bytes >= 0 && rec.u.mem.used_bytes <= rec.u.mem.total_bytes);
            break;
        case NX_SYS_DEVICE_MEM: {
            int64_t sum = 0;
            for (unsigned c = 0; c < NX_HBM_CATEGORY_COUNT; c++) {
                NXFUZZ_CHECK(rec.u.hbm.bytes[c] >= 0);
                NXFUZZ_CHECK(!__builtin_add_overflow(sum, rec.u.hbm.bytes[c], &sum));
            }
            NXFUZZ_CHECK(sum == rec.u.hbm.total_bytes);
            break;
        }
        }
    }
    nx_strbuf_free(&json);
    if (rc < 0)
        NXFUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL);
    nx_sys_reader_close(r);
    return 0;
}
