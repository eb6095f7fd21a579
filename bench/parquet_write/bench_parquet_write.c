/*
 * bench_parquet_write.c — the nxprof side of bench/parquet_write.
 *
 * Builds, deterministically and in memory, a profile-like table of N rows and
 * 13 columns (timestamps, ids, durations, byte and flop counts; low-cardinality
 * strings such as engine and opcode; medium-cardinality strings such as
 * operands (20,000 distinct) and hlo_name (2,000)), then:
 *   bench_parquet_write staging OUT ROWS   writes it UNCOMPRESSED for the peers to load
 *   bench_parquet_write write OUT ROWS     times writing it with nxprof's defaults (ZSTD)
 * and prints one JSON line: {"rows", "seconds", "cpu_seconds", "bytes"}. Only the
 * write is timed (wall clock, and CPU time of all threads).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "parquet/parquet.h"

enum { C_START, C_END, C_DUR, C_ID, C_PC, C_ENGINE, C_OPCODE, C_OPERANDS, C_HLO, C_FRAMEWORK,
       C_HBM, C_FLOPS, C_PCORE, N_COLS };

static const nxpq_column_spec COLUMNS[N_COLS] = {
    {"start_ts", NXPQ_INT64, false, NXPQ_ENCODE_DELTA},
    {"end_ts", NXPQ_INT64, false, NXPQ_ENCODE_DELTA},
    {"duration_ns", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
    {"instruction_id", NXPQ_INT64, false, NXPQ_ENCODE_DELTA},
    {"pc", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
    {"engine", NXPQ_STRING, false, NXPQ_ENCODE_AUTO},
    {"opcode", NXPQ_STRING, false, NXPQ_ENCODE_AUTO},
    {"operands", NXPQ_STRING, true, NXPQ_ENCODE_AUTO},
    {"hlo_name", NXPQ_STRING, true, NXPQ_ENCODE_AUTO},
    {"framework_op", NXPQ_STRING, true, NXPQ_ENCODE_AUTO},
    {"hbm_bytes", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
    {"flops", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
    {"pcore_idx", NXPQ_INT64, false, NXPQ_ENCODE_AUTO},
};

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next_random(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Distinct strings of one column, stored back to back as a columnar producer
 * (Arrow, a profile processor's string table) would hold them. */
typedef struct pool {
    char **s;
    size_t *len;
    size_t n;
    char *bytes;
} pool;

static void pool_make(pool *p, size_t n, const char *kind)
{
    static const char *engines[] = {"tensor", "vector", "scalar", "gpsimd", "sync"};
    static const char *ops[] = {"MATMUL", "LDWEIGHTS", "TENSOR_TENSOR", "TENSOR_SCALAR", "ACTIVATE",
                                "TENSOR_REDUCE", "TENSOR_COPY", "IOTA", "SEM_WAIT", "SEM_SET",
                                "DMA_TRIGGER", "MEMSET", "TRANSPOSE", "SELECT", "SHUFFLE", "GATHER"};
    p->n = n;
    p->s = malloc(n * sizeof *p->s);
    p->len = malloc(n * sizeof *p->len);
    p->bytes = malloc(n * 160);
    if (!p->s || !p->len || !p->bytes)
        exit(1);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        char buf[160];
        if (strcmp(kind, "engine") == 0)
            snprintf(buf, sizeof buf, "%s", engines[i % 5]);
        else if (strcmp(kind, "opcode") == 0)
            snprintf(buf, sizeof buf, "%s", ops[i % 16]);
        else if (strcmp(kind, "operands") == 0)
            snprintf(buf, sizeof buf, "src=sb[%u:%u] dst=psum[%u] acc=%u len=%u",
                     (unsigned)(next_random() % 128), (unsigned)(next_random() % 65536),
                     (unsigned)(next_random() % 8), (unsigned)(i & 1), (unsigned)(next_random() % 4096));
        else if (strcmp(kind, "hlo") == 0)
            snprintf(buf, sizeof buf, "%s.%zu", i % 3 ? "dot" : "fusion", i);
        else
            snprintf(buf, sizeof buf, "aten::%s_%zu", i % 2 ? "linear" : "softmax", i);
        p->len[i] = strlen(buf);
        p->s[i] = memcpy(p->bytes + used, buf, p->len[i]);
        used += p->len[i];
    }
}

typedef struct table {
    size_t rows;
    int64_t *v[N_COLS];      /* int columns, or pool indices for string columns (-1 = null) */
    pool pools[N_COLS];
} table;

/*
 * Like a real instruction trace, rows replay a compiled program: PROGRAM_SIZE
 * static instructions (pc, engine, opcode, operands, hlo_name, framework op,
 * bytes, flops fixed per pc) executed in order, iteration after iteration,
 * with sorted timestamps and per-execution jitter on the durations.
 */
#define PROGRAM_SIZE 20000

static void table_make(table *t, size_t rows)
{
    t->rows = rows;
    for (int c = 0; c < N_COLS; c++) {
        t->v[c] = malloc(rows * sizeof(int64_t));
        if (!t->v[c])
            exit(1);
    }
    pool_make(&t->pools[C_ENGINE], 5, "engine");
    pool_make(&t->pools[C_OPCODE], 16, "opcode");
    pool_make(&t->pools[C_OPERANDS], PROGRAM_SIZE, "operands");
    pool_make(&t->pools[C_HLO], PROGRAM_SIZE / 10, "hlo");
    pool_make(&t->pools[C_FRAMEWORK], 300, "framework");
    int64_t *base_dur = malloc(PROGRAM_SIZE * sizeof *base_dur);
    int64_t (*stat)[8] = malloc(PROGRAM_SIZE * sizeof *stat);
    if (!base_dur || !stat)
        exit(1);
    for (size_t p = 0; p < PROGRAM_SIZE; p++) {
        uint64_t r = next_random();
        base_dur[p] = 40 + (int64_t)(r % 1500) * ((r >> 20) % 8 == 0 ? 20 : 1);
        stat[p][0] = (int64_t)((r >> 7) % 5);                          /* engine */
        stat[p][1] = (int64_t)((r >> 13) % 16);                         /* opcode */
        stat[p][2] = (r >> 17) % 50 == 0 ? -1 : (int64_t)p;             /* operands */
        stat[p][3] = (int64_t)(p / 10);                                 /* hlo_name */
        stat[p][4] = (r >> 23) % 20 == 0 ? -1 : (int64_t)(p / 67 % 300); /* framework op */
        stat[p][5] = (int64_t)((r >> 31) % 1024) * 512;                 /* hbm bytes */
        stat[p][6] = (r >> 41) % 3 == 0 ? 0 : (int64_t)((r >> 43) % 100000) * 128; /* flops */
    }
    int64_t ts = 1766072156592459482LL;
    for (size_t i = 0; i < rows; i++) {
        size_t p = i % PROGRAM_SIZE;
        uint64_t r = next_random();
        int64_t dur = base_dur[p] + (int64_t)(r % 32);
        ts += 5 + (int64_t)((r >> 8) % 64);
        t->v[C_START][i] = ts;
        t->v[C_END][i] = ts + dur;
        t->v[C_DUR][i] = dur;
        t->v[C_ID][i] = (int64_t)i;
        t->v[C_PC][i] = (int64_t)p * 16;
        t->v[C_ENGINE][i] = stat[p][0];
        t->v[C_OPCODE][i] = stat[p][1];
        t->v[C_OPERANDS][i] = stat[p][2];
        t->v[C_HLO][i] = stat[p][3];
        t->v[C_FRAMEWORK][i] = stat[p][4];
        t->v[C_HBM][i] = stat[p][5];
        t->v[C_FLOPS][i] = stat[p][6];
        t->v[C_PCORE][i] = (int64_t)(i * 4 / rows);
    }
    free(base_dur);
    free(stat);
}

/* Writes the table the way a columnar producer does: in batches of rows, one
 * batch call per column, then nxpq_end_rows(). */
static int write_table(const table *t, const char *path, const nxpq_writer_options *o)
{
    enum { BATCH = 4096 };
    static nxpq_str strs[BATCH];
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, COLUMNS, N_COLS, o, &err);
    if (!w) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    int rc = 0;
    for (size_t at = 0; at < t->rows && rc == 0; at += BATCH) {
        size_t n = t->rows - at < BATCH ? t->rows - at : BATCH;
        for (int c = 0; c < N_COLS && rc == 0; c++) {
            const int64_t *x = t->v[c] + at;
            if (COLUMNS[c].type == NXPQ_INT64) {
                rc = nxpq_put_int64_array(w, (size_t)c, x, n);
                continue;
            }
            for (size_t i = 0; i < n; i++)
                strs[i] = x[i] < 0 ? (nxpq_str){NULL, 0}
                                   : (nxpq_str){t->pools[c].s[x[i]], t->pools[c].len[x[i]]};
            rc = nxpq_put_string_array(w, (size_t)c, strs, n);
        }
        if (rc == 0)
            rc = nxpq_end_rows(w, n);
    }
    if (rc != 0) {
        nxpq_writer_close(w, &err);
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    if (nxpq_writer_close(w, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

/* CPU seconds used by the process so far, all threads. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "staging") != 0 && strcmp(argv[1], "write") != 0)) {
        fprintf(stderr, "usage: bench_parquet_write staging|write OUT.parquet ROWS\n");
        return 2;
    }
    size_t rows = strtoull(argv[3], NULL, 10);
    table t;
    table_make(&t, rows);
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    if (strcmp(argv[1], "staging") == 0)
        o.codec = NXPQ_UNCOMPRESSED;
    double t0 = now(), c0 = cpu_now();
    if (write_table(&t, argv[2], &o) != 0)
        return 1;
    double secs = now() - t0, cpu = cpu_now() - c0;
    struct stat st;
    if (stat(argv[2], &st) != 0)
        return 1;
    printf("{\"rows\": %zu, \"seconds\": %.6f, \"cpu_seconds\": %.6f, \"bytes\": %lld}\n", rows, secs, cpu,
           (long long)st.st_size);
    return 0;
}
