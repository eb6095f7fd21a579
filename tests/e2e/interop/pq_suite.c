/*
 * pq_suite.c — the C half of the Parquet interop suite (tests/e2e/js/parquet_interop.test.mjs).
 *
 *   pq_suite list         names the files of the suite, one a line.
 *   pq_suite write DIR [NAME...]
 *                         writes the suite's Parquet files (all, or those named) with
 *                         nxprof's writer, each next to FILE.json holding the exact
 *                         values written, the writer options and what the options
 *                         imply (encodings of the data pages, dictionary pages, page
 *                         index); writing all also lists them in DIR/suite.json. The
 *                         JS side reads every file with DuckDB and Polars and compares.
 *   pq_suite dump FILE [--range COL MIN MAX] [--batch N]
 *                         reads FILE with nxprof's reader and prints the same JSON
 *                         shape (pq_dump.c; only built once the reader exists).
 *
 * The data is pseudo-random but deterministic (splitmix64 seeded per file and
 * column), and deliberately nasty: INT32/INT64 extremes, 2^53+1 (not a double),
 * NaN, +/-Inf, -0.0, subnormals, empty, long and non-ASCII strings, JSON
 * escapes, null runs that cover whole pages, null and empty lists, null list
 * elements, long lists, sorted timestamps, deltas that wrap around. (The writer
 * API takes LIST_INT64 items as a plain int64 array, so only LIST_STRING lists
 * can hold null elements.) Files named min_* are minimal reproductions of
 * writer defects this suite found.
 *
 * JSON value forms (the contract with the JS test):
 *   BOOLEAN true/false · INT32 number · INT64 decimal string · FLOAT %.9g and
 *   DOUBLE %.17g numbers, or the strings "NaN", "Infinity", "-Infinity", "-0" ·
 *   STRING string (UTF-8) · lists arrays of those · null for null.
 *
 * Test-only code: errors print a message and exit 1.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"
#include "pq_suite.h"

/* ------------------------------------------------------------ JSON helpers */

void pqs_json_string(nx_strbuf *b, const char *s, size_t n)
{
    nx_strbuf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': nx_strbuf_puts(b, "\\\""); break;
        case '\\': nx_strbuf_puts(b, "\\\\"); break;
        case '\n': nx_strbuf_puts(b, "\\n"); break;
        case '\r': nx_strbuf_puts(b, "\\r"); break;
        case '\t': nx_strbuf_puts(b, "\\t"); break;
        default:
            if (c < 0x20)
                nx_strbuf_printf(b, "\\u%04x", c);
            else
                nx_strbuf_putc(b, (char)c);
        }
    }
    nx_strbuf_putc(b, '"');
}

void pqs_json_double(nx_strbuf *b, double d)
{
    if (isnan(d))
        nx_strbuf_puts(b, "\"NaN\"");
    else if (isinf(d))
        nx_strbuf_puts(b, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else if (d == 0 && signbit(d))
        nx_strbuf_puts(b, "\"-0\"");
    else
        nx_strbuf_printf(b, "%.17g", d);
}

void pqs_json_float(nx_strbuf *b, float f)
{
    if (isnan(f))
        nx_strbuf_puts(b, "\"NaN\"");
    else if (isinf(f))
        nx_strbuf_puts(b, f > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else if (f == 0 && signbit(f))
        nx_strbuf_puts(b, "\"-0\"");
    else
        nx_strbuf_printf(b, "%.9g", (double)f);
}

void pqs_json_int64(nx_strbuf *b, int64_t v)
{
    nx_strbuf_printf(b, "\"%" PRId64 "\"", v);
}

const char *pqs_type_json(nxpq_type t)
{
    static const char *const names[] = {"BOOLEAN", "INT32", "INT64", "FLOAT", "DOUBLE",
                                        "STRING", "LIST_INT64", "LIST_STRING", "UNSUPPORTED"};
    return (unsigned)t <= NXPQ_UNSUPPORTED ? names[t] : "UNSUPPORTED";
}

/* ------------------------------------------------------------ randomness */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t below(rng *r, uint64_t n)
{
    return n ? rnd(r) % n : 0;
}

static double unit(rng *r)
{
    return (double)(rnd(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------ the cases */

enum gen {
    G_RANDOM,   /* full range plus a sprinkle of special values */
    G_LOWCARD,  /* a handful of distinct values (specials included) */
    G_SORTED,   /* non-decreasing (timestamps, keys) */
    G_EXTREME,  /* ints: only MIN, MAX, 0, +/-1, MIN+1, MAX-1: every delta wraps */
    G_CONST,    /* one value: dictionary indices of bit width 0 */
    G_UNIQUE,   /* high cardinality: overflows a small dictionary */
    G_NAN,      /* floats: NaN only (no valid page bounds) */
    G_ZEROS,    /* floats: -0.0 and +0.0 only */
    G_EDGE      /* floats: extremes, subnormals, infinities every page */
};
static const char *const GEN_NAMES[] = {"random", "lowcard", "sorted", "extreme", "const",
                                        "unique", "nan", "zeros", "edge"};

enum nulls { N_NONE, N_SOME, N_ALL, N_RUNS };
static const char *const NULL_NAMES[] = {"none", "some", "all", "runs"};

enum shape {
    SH_MIXED,   /* null lists (per the null pattern), 12% empty, 2% long, else 1..6 */
    SH_LONG,    /* 25% long lists (60..400 elements) */
    SH_EMPTY,   /* every present list is empty */
    SH_SHORT    /* 12% empty, else 1..6 */
};
static const char *const SHAPE_NAMES[] = {"mixed", "long", "empty", "short"};

typedef struct colcase {
    const char *name;
    nxpq_type type;
    bool nullable;
    nxpq_encoding_pref enc;
    int gen;
    int nulls;
    int shape;
    bool fallback;      /* the dictionary is meant to overflow and fall back to PLAIN */
} colcase;

typedef struct filecase {
    const char *name;
    uint64_t seed;
    size_t rows;
    nxpq_codec codec;
    int level;                /* 0: default */
    uint32_t page_rows;       /* 0: default */
    uint64_t row_group_rows;  /* 0: default */
    uint32_t page_bytes;      /* 0: default */
    uint64_t row_group_bytes; /* 0: default */
    uint32_t dict_max;        /* 0: default */
    bool no_page_index, no_statistics;
    int sorting_column;       /* -1: none */
    const nxpq_kv *kv;
    size_t n_kv;
    const char *created_by;   /* NULL: default */
    const colcase *cols;
    size_t n_cols;
    int threads;              /* 0: default (one per CPU, at most 8) */
} filecase;

#define B NXPQ_BOOLEAN
#define I32 NXPQ_INT32
#define I64 NXPQ_INT64
#define F32 NXPQ_FLOAT
#define F64 NXPQ_DOUBLE
#define STR NXPQ_STRING
#define LI NXPQ_LIST_INT64
#define LS NXPQ_LIST_STRING
#define AUTO NXPQ_ENCODE_AUTO
#define PLAIN NXPQ_ENCODE_PLAIN
#define DICT NXPQ_ENCODE_DICTIONARY
#define DELTA NXPQ_ENCODE_DELTA
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Every type, required and nullable, random data with specials, AUTO encoding. */
static const colcase TYPES[] = {
    {"b_req", B, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"b_opt", B, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"i32_req", I32, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"i32_opt", I32, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"i64_req", I64, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"i64_opt", I64, true, AUTO, G_LOWCARD, N_SOME, 0, false},
    {"f32_req", F32, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"f32_opt", F32, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"f64_req", F64, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"f64_opt", F64, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"s_req", STR, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"s_opt", STR, true, AUTO, G_LOWCARD, N_SOME, 0, false},
    {"li_req", LI, false, AUTO, G_RANDOM, N_NONE, SH_MIXED, false},
    {"li_opt", LI, true, AUTO, G_LOWCARD, N_SOME, SH_MIXED, false},
    {"ls_req", LS, false, AUTO, G_RANDOM, N_NONE, SH_MIXED, false},
    {"ls_opt", LS, true, AUTO, G_LOWCARD, N_SOME, SH_MIXED, false},
};

static const colcase ENC_PLAIN[] = {
    {"b", B, true, PLAIN, G_RANDOM, N_SOME, 0, false},
    {"i32", I32, true, PLAIN, G_RANDOM, N_SOME, 0, false},
    {"i32_low", I32, false, PLAIN, G_LOWCARD, N_NONE, 0, false},
    {"i64", I64, false, PLAIN, G_RANDOM, N_NONE, 0, false},
    {"i64_low", I64, true, PLAIN, G_LOWCARD, N_RUNS, 0, false},
    {"f32", F32, true, PLAIN, G_RANDOM, N_SOME, 0, false},
    {"f64", F64, false, PLAIN, G_RANDOM, N_NONE, 0, false},
    {"s", STR, true, PLAIN, G_RANDOM, N_SOME, 0, false},
    {"s_low", STR, false, PLAIN, G_LOWCARD, N_NONE, 0, false},
    {"li", LI, true, PLAIN, G_RANDOM, N_SOME, SH_MIXED, false},
    {"ls", LS, false, PLAIN, G_RANDOM, N_NONE, SH_MIXED, false},
};

static const colcase ENC_DICT[] = {
    {"b", B, true, DICT, G_LOWCARD, N_SOME, 0, false},       /* stays PLAIN */
    {"i32", I32, true, DICT, G_LOWCARD, N_SOME, 0, false},
    {"i64", I64, false, DICT, G_LOWCARD, N_NONE, 0, false},
    {"i64_const", I64, false, DICT, G_CONST, N_NONE, 0, false},
    {"f32", F32, true, DICT, G_LOWCARD, N_SOME, 0, false},   /* stays PLAIN */
    {"f64", F64, false, DICT, G_LOWCARD, N_NONE, 0, false},  /* stays PLAIN */
    {"s", STR, true, DICT, G_LOWCARD, N_RUNS, 0, false},
    {"s_const", STR, false, DICT, G_CONST, N_NONE, 0, false},
    {"s_rand", STR, false, DICT, G_RANDOM, N_NONE, 0, false},
    {"li", LI, true, DICT, G_LOWCARD, N_SOME, SH_MIXED, false},
    {"ls", LS, true, DICT, G_LOWCARD, N_SOME, SH_MIXED, false},
};

static const colcase ENC_DELTA[] = {
    {"ts", I64, false, DELTA, G_SORTED, N_NONE, 0, false},
    {"i64_rand", I64, false, DELTA, G_RANDOM, N_NONE, 0, false},
    {"i64_extreme", I64, true, DELTA, G_EXTREME, N_SOME, 0, false},
    {"i64_const", I64, false, DELTA, G_CONST, N_NONE, 0, false},
    {"i64_runs", I64, true, DELTA, G_SORTED, N_RUNS, 0, false},
    {"i32_sorted", I32, false, DELTA, G_SORTED, N_NONE, 0, false},
    {"i32_rand", I32, true, DELTA, G_RANDOM, N_SOME, 0, false},
    {"i32_extreme", I32, false, DELTA, G_EXTREME, N_NONE, 0, false},
    {"li", LI, true, DELTA, G_SORTED, N_SOME, SH_MIXED, false},
    {"li_extreme", LI, false, DELTA, G_EXTREME, N_NONE, SH_MIXED, false},
};

static const colcase FALLBACK[] = {
    {"s_unique", STR, false, AUTO, G_UNIQUE, N_NONE, 0, true},
    {"s_unique_opt", STR, true, DICT, G_UNIQUE, N_SOME, 0, true},
    {"i64_unique", I64, false, DICT, G_UNIQUE, N_NONE, 0, true},
    {"i32_unique", I32, true, AUTO, G_UNIQUE, N_SOME, 0, true},
    {"ls_unique", LS, true, AUTO, G_UNIQUE, N_SOME, SH_SHORT, true},
    {"li_unique", LI, false, AUTO, G_UNIQUE, N_NONE, SH_SHORT, true},
    {"s_low", STR, false, AUTO, G_LOWCARD, N_NONE, 0, false},  /* must stay dictionary */
    {"i64_low", I64, true, AUTO, G_LOWCARD, N_SOME, 0, false},
};

static const colcase NULLS[] = {
    {"b_none", B, true, AUTO, G_RANDOM, N_NONE, 0, false},
    {"b_all", B, true, AUTO, G_RANDOM, N_ALL, 0, false},
    {"b_runs", B, true, AUTO, G_RANDOM, N_RUNS, 0, false},
    {"i32_all", I32, true, AUTO, G_RANDOM, N_ALL, 0, false},
    {"i32_runs", I32, true, AUTO, G_LOWCARD, N_RUNS, 0, false},
    {"i64_none", I64, true, AUTO, G_RANDOM, N_NONE, 0, false},
    {"i64_all", I64, true, AUTO, G_RANDOM, N_ALL, 0, false},
    {"i64_all_plain", I64, true, PLAIN, G_RANDOM, N_ALL, 0, false},
    {"i64_all_delta", I64, true, DELTA, G_SORTED, N_ALL, 0, false},
    {"i64_runs_delta", I64, true, DELTA, G_RANDOM, N_RUNS, 0, false},
    {"f32_all", F32, true, AUTO, G_RANDOM, N_ALL, 0, false},
    {"f32_runs", F32, true, AUTO, G_RANDOM, N_RUNS, 0, false},
    {"f64_none", F64, true, AUTO, G_RANDOM, N_NONE, 0, false},
    {"f64_all", F64, true, AUTO, G_RANDOM, N_ALL, 0, false},
    {"f64_runs", F64, true, AUTO, G_RANDOM, N_RUNS, 0, false},
    {"s_none", STR, true, AUTO, G_RANDOM, N_NONE, 0, false},
    {"s_all", STR, true, AUTO, G_RANDOM, N_ALL, 0, false},
    {"s_runs", STR, true, AUTO, G_LOWCARD, N_RUNS, 0, false},
    {"li_all", LI, true, AUTO, G_RANDOM, N_ALL, SH_MIXED, false},
    {"li_runs", LI, true, AUTO, G_RANDOM, N_RUNS, SH_MIXED, false},
    {"ls_all", LS, true, AUTO, G_RANDOM, N_ALL, SH_MIXED, false},
    {"ls_runs", LS, true, AUTO, G_LOWCARD, N_RUNS, SH_MIXED, false},
};

static const colcase LISTS[] = {
    {"li_req", LI, false, AUTO, G_RANDOM, N_NONE, SH_MIXED, false},
    {"li_opt", LI, true, AUTO, G_RANDOM, N_SOME, SH_MIXED, false},
    {"li_long", LI, true, AUTO, G_LOWCARD, N_SOME, SH_LONG, false},
    {"li_long_plain", LI, false, PLAIN, G_RANDOM, N_NONE, SH_LONG, false},
    {"li_long_delta", LI, true, DELTA, G_SORTED, N_RUNS, SH_LONG, false},
    {"li_empty", LI, false, AUTO, G_RANDOM, N_NONE, SH_EMPTY, false},
    {"li_empty_opt", LI, true, AUTO, G_RANDOM, N_SOME, SH_EMPTY, false},
    {"ls_req", LS, false, AUTO, G_RANDOM, N_NONE, SH_MIXED, false},
    {"ls_opt", LS, true, DICT, G_LOWCARD, N_RUNS, SH_MIXED, false},
    {"ls_long", LS, true, AUTO, G_LOWCARD, N_SOME, SH_LONG, false},
    {"ls_long_plain", LS, false, PLAIN, G_RANDOM, N_NONE, SH_LONG, false},
    {"ls_empty_opt", LS, true, PLAIN, G_RANDOM, N_SOME, SH_EMPTY, false},
};

/* A profile-like timeline table: what nxprof actually writes. */
static const colcase TIMELINE[] = {
    {"start_ts", I64, false, DELTA, G_SORTED, N_NONE, 0, false},
    {"duration_ns", I64, false, AUTO, G_LOWCARD, N_NONE, 0, false},
    {"engine", STR, false, AUTO, G_LOWCARD, N_NONE, 0, false},
    {"pc", I32, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"operands", STR, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"util", F64, true, AUTO, G_RANDOM, N_RUNS, 0, false},
    {"tensor_ids", LI, true, DELTA, G_SORTED, N_SOME, SH_MIXED, false},
    {"names", LS, true, AUTO, G_LOWCARD, N_SOME, SH_MIXED, false},
};

static const colcase FLOATS[] = {
    {"f32_nan", F32, false, AUTO, G_NAN, N_NONE, 0, false},
    {"f64_nan", F64, true, AUTO, G_NAN, N_SOME, 0, false},
    {"f32_zeros", F32, false, AUTO, G_ZEROS, N_NONE, 0, false},
    {"f64_zeros", F64, true, PLAIN, G_ZEROS, N_SOME, 0, false},
    {"f32_edge", F32, true, AUTO, G_EDGE, N_SOME, 0, false},
    {"f64_edge", F64, false, AUTO, G_EDGE, N_NONE, 0, false},
    {"f64_sorted", F64, false, AUTO, G_SORTED, N_NONE, 0, false},
    {"i64_sorted", I64, false, AUTO, G_SORTED, N_NONE, 0, false},
};

static const colcase ALL8[] = {
    {"b", B, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"i32", I32, false, AUTO, G_EXTREME, N_NONE, 0, false},
    {"i64", I64, true, AUTO, G_EXTREME, N_SOME, 0, false},
    {"f32", F32, true, AUTO, G_EDGE, N_SOME, 0, false},
    {"f64", F64, false, AUTO, G_EDGE, N_NONE, 0, false},
    {"s", STR, true, AUTO, G_RANDOM, N_SOME, 0, false},
    {"li", LI, true, AUTO, G_RANDOM, N_SOME, SH_MIXED, false},
    {"ls", LS, true, AUTO, G_RANDOM, N_SOME, SH_MIXED, false},
};

static const colcase BIGPAGES[] = {
    {"s_long", STR, false, AUTO, G_RANDOM, N_NONE, 0, false},
    {"s_unique", STR, true, PLAIN, G_UNIQUE, N_SOME, 0, false},
    {"i64", I64, false, DELTA, G_SORTED, N_NONE, 0, false},
    {"ls", LS, true, AUTO, G_RANDOM, N_SOME, SH_LONG, false},
};

/* Minimal reproductions, one writer defect each (see the report in the JS test's failures):
 * the file name says what it isolates. */
static const colcase MIN_ALL_NULL_DICT[] = {{"x", I32, true, AUTO, G_RANDOM, N_ALL, 0, false}};
static const colcase MIN_EMPTY_LISTS[] = {{"l", LI, false, PLAIN, G_RANDOM, N_NONE, SH_EMPTY, false}};
static const colcase MIN_DELTA_INT32[] = {{"x", I32, false, DELTA, G_EXTREME, N_NONE, 0, false}};
static const colcase MIN_PAGE_STATS[] = {{"x", I64, true, PLAIN, G_RANDOM, N_SOME, 0, false}};

static const nxpq_kv KV_TIMELINE[] = {
    {"nxprof.table", "Instruction"},
    {"profile_schema_version", "7.4.0"},
    {"note", "ünïcödé \"quoted\" \\ tab\t中文 😀"},
    {"empty", ""},
};
static const nxpq_kv KV_ONE[] = {{"k", "v"}};

static const filecase FILES[] = {
    {"types_zstd", 101, 3000, NXPQ_ZSTD, 0, 128, 1000, 0, 0, 0, false, false, -1, KV_ONE, 1, NULL, TYPES, N(TYPES), 1},
    {"types_snappy", 102, 2100, NXPQ_SNAPPY, 0, 97, 700, 0, 0, 0, false, false, -1, NULL, 0, NULL, TYPES, N(TYPES), 3},
    {"types_uncompressed", 103, 2000, NXPQ_UNCOMPRESSED, 0, 500, 1500, 0, 0, 0, false, false, -1, NULL, 0, NULL,
     TYPES, N(TYPES), 0},
    {"types_defaults", 104, 1500, NXPQ_ZSTD, 0, 0, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL, TYPES, N(TYPES), 0},
    {"enc_plain", 201, 2000, NXPQ_ZSTD, 0, 150, 900, 0, 0, 0, false, false, -1, NULL, 0, NULL, ENC_PLAIN,
     N(ENC_PLAIN), 0},
    {"enc_dictionary", 202, 2000, NXPQ_SNAPPY, 0, 128, 1000, 0, 0, 0, false, false, -1, NULL, 0, NULL, ENC_DICT,
     N(ENC_DICT), 0},
    {"enc_dictionary_zstd19", 203, 1200, NXPQ_ZSTD, 19, 200, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL, ENC_DICT,
     N(ENC_DICT), 0},
    {"enc_delta", 204, 2600, NXPQ_ZSTD, 0, 300, 1100, 0, 0, 0, false, false, -1, NULL, 0, NULL, ENC_DELTA,
     N(ENC_DELTA), 0},
    {"enc_delta_uncompressed", 205, 1000, NXPQ_UNCOMPRESSED, 0, 129, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL,
     ENC_DELTA, N(ENC_DELTA), 0},
    {"dict_fallback", 301, 3000, NXPQ_ZSTD, 0, 15, 1000, 0, 0, 3000, false, false, -1, NULL, 0, NULL, FALLBACK,
     N(FALLBACK), 0},
    {"dict_fallback_snappy", 302, 1500, NXPQ_SNAPPY, 0, 10, 600, 0, 0, 700, false, false, -1, NULL, 0, NULL,
     FALLBACK, N(FALLBACK), 0},
    {"nulls", 401, 2400, NXPQ_ZSTD, 0, 100, 800, 0, 0, 0, false, false, -1, NULL, 0, NULL, NULLS, N(NULLS), 0},
    {"lists", 501, 900, NXPQ_ZSTD, 0, 64, 500, 0, 0, 0, false, false, -1, NULL, 0, NULL, LISTS, N(LISTS), 0},
    {"lists_snappy", 502, 500, NXPQ_SNAPPY, 0, 33, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL, LISTS, N(LISTS), 0},
    {"timeline", 601, 10000, NXPQ_ZSTD, 0, 700, 4000, 0, 0, 0, false, false, 0, KV_TIMELINE, N(KV_TIMELINE),
     "nxprof interop suite", TIMELINE, N(TIMELINE), 4},
    {"floats", 701, 1600, NXPQ_ZSTD, 0, 100, 800, 0, 0, 0, false, false, 7, NULL, 0, NULL, FLOATS, N(FLOATS), 0},
    {"stats_no_page_index", 801, 1000, NXPQ_SNAPPY, 0, 100, 400, 0, 0, 0, true, false, -1, NULL, 0, NULL, ALL8,
     N(ALL8), 0},
    {"no_stats_no_page_index", 802, 800, NXPQ_UNCOMPRESSED, 0, 100, 400, 0, 0, 0, true, true, -1, NULL, 0, NULL,
     ALL8, N(ALL8), 0},
    {"page_bytes", 901, 1500, NXPQ_ZSTD, 0, 0, 0, 4096, 32 << 10, 0, false, false, -1, NULL, 0, NULL, BIGPAGES,
     N(BIGPAGES), 0},
    {"min_all_null_dictionary", 1101, 5, NXPQ_ZSTD, 0, 0, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL,
     MIN_ALL_NULL_DICT, 1, 0},
    {"min_empty_list_null_count", 1102, 3, NXPQ_UNCOMPRESSED, 0, 0, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL,
     MIN_EMPTY_LISTS, 1, 0},
    {"min_delta_int32_wraparound", 1103, 20, NXPQ_UNCOMPRESSED, 0, 0, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL,
     MIN_DELTA_INT32, 1, 0},
    {"min_page_statistics_without_page_index", 1104, 10, NXPQ_UNCOMPRESSED, 0, 0, 0, 0, 0, 0, true, false, -1, NULL,
     0, NULL, MIN_PAGE_STATS, 1, 0},
    {"single_row", 1001, 1, NXPQ_ZSTD, 0, 0, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL, ALL8, N(ALL8), 0},
    {"empty", 1002, 0, NXPQ_ZSTD, 0, 0, 0, 0, 0, 0, false, false, -1, NULL, 0, NULL, ALL8, N(ALL8), 0},
};

/* ------------------------------------------------------------ generators */

typedef struct colstate {
    rng r;
    int64_t sorted_i;     /* G_SORTED ints */
    double sorted_d;
    uint64_t sorted_key;
    bool in_null_run;
    uint64_t run_left;
    nx_strbuf json;       /* the column's values as JSON, comma-separated */
    size_t n_json;
    nx_strbuf sbuf;       /* string scratch */
    bool has_values;      /* a non-null value or list element was written */
} colstate;

static const int32_t I32_SPECIAL[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1, INT32_MAX - 1};
static const int64_t I64_SPECIAL[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1,
                                      INT64_C(9007199254740993), -INT64_C(9007199254740993)};
static const int32_t I32_LOW[] = {0, 1, -1, 7, 1000, INT32_MIN, INT32_MAX, 123456};
static const int64_t I64_LOW[] = {0, 1, -1, INT64_C(1) << 40, INT64_MIN, INT64_MAX, INT64_C(9007199254740993), -42};
static const char *const S_LOW[] = {"", "MATMUL", "ACTIVATE", "TENSOR_TENSOR", "ünïcödé", "中文",
                                    "😀 emoji", "a\"b\\c\n\t"};

static bool next_null(colstate *s, int pattern, bool nullable)
{
    if (!nullable)
        return false;
    switch (pattern) {
    case N_SOME: return unit(&s->r) < 0.2;
    case N_ALL: return true;
    case N_RUNS:
        /* Alternate runs of nulls (1..300) and values (1..200): some runs cover whole pages. */
        if (s->run_left == 0) {
            s->in_null_run = !s->in_null_run;
            s->run_left = 1 + below(&s->r, s->in_null_run ? 300 : 200);
        }
        s->run_left--;
        return s->in_null_run;
    default: return false;
    }
}

static int64_t gen_int(colstate *s, int gen, bool is32)
{
    rng *r = &s->r;
    switch (gen) {
    case G_LOWCARD:
        return is32 ? I32_LOW[below(r, N(I32_LOW))] : I64_LOW[below(r, N(I64_LOW))];
    case G_SORTED:
        if (s->sorted_i == 0)
            s->sorted_i = is32 ? -2000000000 : INT64_C(1700000000000000000);
        s->sorted_i += (int64_t)below(r, is32 ? 20000 : 5000); /* 0 repeats a value */
        return s->sorted_i;
    case G_EXTREME:
        return is32 ? I32_SPECIAL[below(r, N(I32_SPECIAL))] : I64_SPECIAL[below(r, 7)];
    case G_CONST:
        return 42;
    case G_UNIQUE:
    case G_RANDOM:
    default:
        if (gen == G_RANDOM && unit(r) < 0.04)
            return is32 ? I32_SPECIAL[below(r, N(I32_SPECIAL))] : I64_SPECIAL[below(r, N(I64_SPECIAL))];
        /* Mostly small magnitudes (so DELTA gets narrow widths), sometimes anything. */
        if (gen == G_RANDOM && unit(r) < 0.5)
            return (int64_t)below(r, 100000) - 50000;
        return is32 ? (int64_t)(int32_t)(uint32_t)rnd(r) : (int64_t)rnd(r);
    }
}

/* A finite double from random bits (any exponent, subnormals included). */
static double random_bits_double(rng *r)
{
    for (;;) {
        uint64_t u = rnd(r);
        double d;
        memcpy(&d, &u, 8);
        if (isfinite(d))
            return d;
    }
}

static float random_bits_float(rng *r)
{
    for (;;) {
        uint32_t u = (uint32_t)rnd(r);
        float f;
        memcpy(&f, &u, 4);
        if (isfinite(f))
            return f;
    }
}

static double gen_double(colstate *s, int gen, bool is32)
{
    rng *r = &s->r;
    static const double special[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0, -1.0};
    static const double edge64[] = {DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 4.9406564584124654e-324,
                                    -4.9406564584124654e-324, INFINITY, -INFINITY, NAN, 0.1, -0.0};
    static const double edge32[] = {FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1.40129846e-45,
                                    -1.40129846e-45, INFINITY, -INFINITY, NAN, 0.1, -0.0};
    static const double low[] = {0.5, -1.25, 3.0, 1e10, -0.0, 2.5};
    switch (gen) {
    case G_LOWCARD: return low[below(r, N(low))];
    case G_CONST: return 1.5;
    case G_NAN: return NAN;
    case G_ZEROS: return unit(r) < 0.5 ? -0.0 : 0.0;
    case G_EDGE:
        if (unit(r) < 0.5)
            return is32 ? edge32[below(r, N(edge32))] : edge64[below(r, N(edge64))];
        return is32 ? (double)random_bits_float(r) : random_bits_double(r);
    case G_SORTED:
        s->sorted_d += unit(r) * 10.0;
        return s->sorted_d - 5000.0;
    default:
        if (unit(r) < 0.05)
            return special[below(r, N(special))];
        if (unit(r) < 0.3)
            return is32 ? (double)random_bits_float(r) : random_bits_double(r);
        return (unit(r) - 0.5) * pow(10.0, (double)below(r, 13) - 6.0);
    }
}

/* Appends one generated string to s->sbuf; returns its start offset. */
static size_t gen_string(colstate *s, int gen)
{
    rng *r = &s->r;
    nx_strbuf *b = &s->sbuf;
    size_t start = b->len;
    switch (gen) {
    case G_LOWCARD: nx_strbuf_puts(b, S_LOW[below(r, N(S_LOW))]); return start;
    case G_CONST: nx_strbuf_puts(b, "constant"); return start;
    case G_SORTED:
        s->sorted_key += below(r, 100);
        nx_strbuf_printf(b, "key-%012" PRIu64, s->sorted_key);
        return start;
    case G_UNIQUE:
        nx_strbuf_printf(b, "u-%016" PRIx64 "-%" PRIu64, rnd(r), below(r, 1000000));
        return start;
    default: break;
    }
    double u = unit(r);
    if (u < 0.05)
        return start; /* empty */
    size_t n = u < 0.07 ? 300 + below(r, 3000) : 1 + below(r, 24);
    static const char *const multi[] = {"é", "ß", "ü", "中", "€", "日", "😀", "𝄞"};
    static const char *const esc[] = {"\"", "\\", "\n", "\t", "\x01", "\x7f", "/"};
    for (size_t i = 0; i < n; i++) {
        double c = unit(r);
        if (c < 0.75)
            nx_strbuf_putc(b, (char)(' ' + below(r, 95)));
        else if (c < 0.80)
            nx_strbuf_puts(b, esc[below(r, N(esc))]);
        else
            nx_strbuf_puts(b, multi[below(r, N(multi))]);
    }
    return start;
}

/* Elements of a list row: -1 for a null list, else the count. */
static long gen_list_len(colstate *s, const colcase *c)
{
    rng *r = &s->r;
    if (next_null(s, c->nulls, c->nullable))
        return -1;
    double u = unit(r);
    switch (c->shape) {
    case SH_EMPTY: return 0;
    case SH_SHORT: return u < 0.12 ? 0 : (long)(1 + below(r, 6));
    case SH_LONG: return u < 0.25 ? (long)(60 + below(r, 340)) : u < 0.35 ? 0 : (long)(1 + below(r, 6));
    default: return u < 0.12 ? 0 : u < 0.14 ? (long)(100 + below(r, 500)) : (long)(1 + below(r, 6));
    }
}

static void json_sep(colstate *s)
{
    if (s->n_json++)
        nx_strbuf_putc(&s->json, ',');
}

/* Generates and writes one value of column ci, recording it as JSON. Returns -1 on a writer error. */
static int put_one(nxpq_writer *w, size_t ci, const colcase *c, colstate *s)
{
    json_sep(s);
    nx_strbuf *j = &s->json;
    int rc;
    if (c->type == NXPQ_LIST_INT64 || c->type == NXPQ_LIST_STRING) {
        long n = gen_list_len(s, c);
        if (n < 0) {
            nx_strbuf_puts(j, "null");
            return nxpq_put_null(w, ci);
        }
        nx_strbuf_putc(j, '[');
        if (c->type == NXPQ_LIST_INT64) {
            int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
            if (!v)
                return -1;
            for (long i = 0; i < n; i++) {
                v[i] = gen_int(s, c->gen, false);
                s->has_values = true;
                if (i)
                    nx_strbuf_putc(j, ',');
                pqs_json_int64(j, v[i]);
            }
            rc = nxpq_put_list_int64(w, ci, v, (size_t)n);
            free(v);
        } else {
            nxpq_str *v = malloc((size_t)(n ? n : 1) * sizeof *v);
            size_t *off = malloc((size_t)(n ? n : 1) * sizeof *off);
            if (!v || !off) {
                free(v);
                free(off);
                return -1;
            }
            s->sbuf.len = 0;
            for (long i = 0; i < n; i++) {
                if (unit(&s->r) < 0.08) { /* null element */
                    off[i] = SIZE_MAX;
                    continue;
                }
                off[i] = gen_string(s, c->gen);
                v[i].len = s->sbuf.len - off[i];
                s->has_values = true;
            }
            for (long i = 0; i < n; i++) {
                if (i)
                    nx_strbuf_putc(j, ',');
                if (off[i] == SIZE_MAX) {
                    v[i].ptr = NULL;
                    v[i].len = 0;
                    nx_strbuf_puts(j, "null");
                } else {
                    v[i].ptr = s->sbuf.data ? s->sbuf.data + off[i] : ""; /* "" is not a null element */
                    pqs_json_string(j, v[i].ptr, v[i].len);
                }
            }
            rc = nxpq_put_list_string(w, ci, v, (size_t)n);
            free(v);
            free(off);
        }
        nx_strbuf_putc(j, ']');
        return rc;
    }
    if (next_null(s, c->nulls, c->nullable)) {
        nx_strbuf_puts(j, "null");
        return nxpq_put_null(w, ci);
    }
    s->has_values = true;
    switch (c->type) {
    case NXPQ_BOOLEAN: {
        bool v = c->gen == G_CONST ? true : c->gen == G_LOWCARD ? unit(&s->r) < 0.9 : (rnd(&s->r) & 1) != 0;
        nx_strbuf_puts(j, v ? "true" : "false");
        return nxpq_put_bool(w, ci, v);
    }
    case NXPQ_INT32: {
        int32_t v = (int32_t)gen_int(s, c->gen, true);
        nx_strbuf_printf(j, "%" PRId32, v);
        return nxpq_put_int32(w, ci, v);
    }
    case NXPQ_INT64: {
        int64_t v = gen_int(s, c->gen, false);
        pqs_json_int64(j, v);
        return nxpq_put_int64(w, ci, v);
    }
    case NXPQ_FLOAT: {
        float v = (float)gen_double(s, c->gen, true);
        pqs_json_float(j, v);
        return nxpq_put_float(w, ci, v);
    }
    case NXPQ_DOUBLE: {
        double v = gen_double(s, c->gen, false);
        pqs_json_double(j, v);
        return nxpq_put_double(w, ci, v);
    }
    case NXPQ_STRING: {
        s->sbuf.len = 0;
        gen_string(s, c->gen);
        pqs_json_string(j, s->sbuf.data ? s->sbuf.data : "", s->sbuf.len);
        return nxpq_put_string(w, ci, s->sbuf.data ? s->sbuf.data : "", s->sbuf.len);
    }
    default: return -1;
    }
}

/* ------------------------------------------------------------ expectations */

static const char *codec_name(nxpq_codec c)
{
    switch (c) {
    case NXPQ_UNCOMPRESSED: return "UNCOMPRESSED";
    case NXPQ_SNAPPY: return "SNAPPY";
    case NXPQ_GZIP: return "GZIP";
    case NXPQ_BROTLI: return "BROTLI";
    case NXPQ_ZSTD: return "ZSTD";
    case NXPQ_LZ4_RAW: return "LZ4_RAW";
    }
    return "?";
}

static const char *const ENC_PREF_NAMES[] = {"AUTO", "PLAIN", "DICTIONARY", "DELTA"};

/* What parquet.h promises for this column's data pages, written as JSON:
 * "page_encodings": the exact set of data-page encodings (null: no values, any),
 * "dictionary_page": every chunk with values starts with one (true), none has
 * one (false), or either (null, after a dictionary fallback). */
static void put_expectations(nx_strbuf *b, const filecase *f, const colcase *c, bool has_values)
{
    bool intlike = c->type == NXPQ_INT32 || c->type == NXPQ_INT64 || c->type == NXPQ_LIST_INT64;
    bool byte_array = c->type == NXPQ_STRING || c->type == NXPQ_LIST_STRING;
    const char *pages, *dict;
    if (!has_values) {
        pages = "null";
        dict = "null";
    } else if (c->enc == NXPQ_ENCODE_DELTA) {
        pages = "[\"DELTA_BINARY_PACKED\"]";
        dict = "false";
    } else if (c->enc == NXPQ_ENCODE_PLAIN || !(intlike || byte_array)) {
        pages = "[\"PLAIN\"]";
        dict = "false";
    } else if (c->fallback) {
        pages = "[\"PLAIN\",\"RLE_DICTIONARY\"]";
        dict = "null";
    } else {
        pages = "[\"RLE_DICTIONARY\"]";
        dict = "true";
    }
    nx_strbuf_printf(b, "\"page_encodings\":%s,\"dictionary_page\":%s,", pages, dict);
    /* A ColumnIndex is statistics, and needs valid bounds on every non-null
     * page: a page holding only NaN has none, and then the writer leaves the
     * column index out. */
    bool col_index = !f->no_page_index && !f->no_statistics && c->gen != G_NAN;
    nx_strbuf_printf(b, "\"column_index\":%s,\"offset_index\":%s,", col_index ? "true" : "false",
                     f->no_page_index ? "false" : "true");
}

/* ------------------------------------------------------------ write */

static int write_file(const char *dir, const filecase *f, nx_strbuf *manifest)
{
    char path[4096], jpath[4200];
    snprintf(path, sizeof path, "%s/%s.parquet", dir, f->name);
    snprintf(jpath, sizeof jpath, "%s.json", path);

    nxpq_column_spec specs[64];
    if (f->n_cols > N(specs))
        return -1;
    for (size_t i = 0; i < f->n_cols; i++) {
        specs[i].name = f->cols[i].name;
        specs[i].type = f->cols[i].type;
        specs[i].nullable = f->cols[i].nullable;
        specs[i].encoding = f->cols[i].enc;
    }
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.codec = f->codec;
    if (f->level)
        o.compression_level = f->level;
    if (f->page_rows)
        o.page_rows = f->page_rows;
    if (f->row_group_rows)
        o.row_group_rows = f->row_group_rows;
    if (f->page_bytes)
        o.page_bytes = f->page_bytes;
    if (f->row_group_bytes)
        o.row_group_bytes = f->row_group_bytes;
    if (f->dict_max)
        o.dictionary_max_bytes = f->dict_max;
    o.write_page_index = !f->no_page_index;
    o.write_statistics = !f->no_statistics;
    o.sorting_column = f->sorting_column;
    o.metadata = f->kv;
    o.n_metadata = f->n_kv;
    o.created_by = f->created_by;
    o.threads = f->threads;

    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, specs, f->n_cols, &o, &err);
    if (!w) {
        fprintf(stderr, "pq_suite: %s\n", err.msg);
        return -1;
    }
    colstate *st = calloc(f->n_cols, sizeof *st);
    if (!st) {
        nxpq_writer_abort(w);
        return -1;
    }
    for (size_t i = 0; i < f->n_cols; i++)
        st[i].r.s = f->seed * UINT64_C(1000003) + i * UINT64_C(7919) + 1;
    int rc = 0;
    for (size_t row = 0; row < f->rows && rc == 0; row++) {
        for (size_t ci = 0; ci < f->n_cols && rc == 0; ci++) {
            rc = put_one(w, ci, &f->cols[ci], &st[ci]);
        }
        if (rc == 0)
            rc = nxpq_end_row(w);
    }
    if (rc != 0) {
        nxpq_writer_close(w, &err); /* reports the first error */
        fprintf(stderr, "pq_suite: writing %s: %s\n", path, err.msg);
    } else if (nxpq_writer_close(w, &err) != 0) {
        fprintf(stderr, "pq_suite: closing %s: %s\n", path, err.msg);
        rc = -1;
    }

    nx_strbuf j = NX_STRBUF_INIT;
    nx_strbuf_printf(&j, "{\"file\":\"%s.parquet\",\"rows\":%zu,\"options\":{", f->name, f->rows);
    nx_strbuf_printf(&j, "\"codec\":\"%s\",\"compression_level\":%d,\"page_rows\":%u,\"row_group_rows\":%" PRIu64
                     ",\"page_bytes\":%u,\"row_group_bytes\":%" PRIu64 ",\"dictionary_max_bytes\":%u,"
                     "\"write_page_index\":%s,\"write_statistics\":%s,\"sorting_column\":%d,\"threads\":%d,"
                     "\"created_by\":",
                     codec_name(o.codec), o.compression_level, o.page_rows, o.row_group_rows, o.page_bytes,
                     o.row_group_bytes, o.dictionary_max_bytes, o.write_page_index ? "true" : "false",
                     o.write_statistics ? "true" : "false", o.sorting_column, o.threads);
    if (f->created_by)
        pqs_json_string(&j, f->created_by, strlen(f->created_by));
    else
        nx_strbuf_puts(&j, "null");
    nx_strbuf_puts(&j, "},\"metadata\":{");
    for (size_t i = 0; i < f->n_kv; i++) {
        if (i)
            nx_strbuf_putc(&j, ',');
        pqs_json_string(&j, f->kv[i].key, strlen(f->kv[i].key));
        nx_strbuf_putc(&j, ':');
        pqs_json_string(&j, f->kv[i].value, strlen(f->kv[i].value));
    }
    nx_strbuf_puts(&j, "},\"columns\":[");
    for (size_t i = 0; i < f->n_cols; i++) {
        const colcase *c = &f->cols[i];
        nx_strbuf_printf(&j, "%s\n{\"name\":\"%s\",\"type\":\"%s\",\"nullable\":%s,\"encoding\":\"%s\","
                         "\"gen\":\"%s\",\"nulls\":\"%s\",\"shape\":\"%s\",",
                         i ? "," : "", c->name, pqs_type_json(c->type), c->nullable ? "true" : "false",
                         ENC_PREF_NAMES[c->enc], GEN_NAMES[c->gen], NULL_NAMES[c->nullable ? c->nulls : N_NONE],
                         SHAPE_NAMES[c->shape]);
        put_expectations(&j, f, c, st[i].has_values);
        nx_strbuf_puts(&j, "\"values\":[");
        if (st[i].json.len)
            nx_strbuf_append(&j, st[i].json.data, st[i].json.len);
        nx_strbuf_puts(&j, "]}");
    }
    nx_strbuf_puts(&j, "]}\n");
    FILE *out = fopen(jpath, "wb");
    if (!out || j.failed || fwrite(j.data, 1, j.len, out) != j.len || fclose(out) != 0) {
        fprintf(stderr, "pq_suite: cannot write %s\n", jpath);
        rc = -1;
    }
    nx_strbuf_free(&j);
    for (size_t i = 0; i < f->n_cols; i++) {
        nx_strbuf_free(&st[i].json);
        nx_strbuf_free(&st[i].sbuf);
    }
    free(st);
    nx_strbuf_printf(manifest, "%s\"%s.parquet\"", manifest->len > 10 ? "," : "", f->name);
    return rc;
}

/* Writes every file of the suite, or only those named. */
static int cmd_write(const char *dir, int n_names, char **names)
{
    mkdir(dir, 0777); /* may exist */
    nx_strbuf m = NX_STRBUF_INIT;
    nx_strbuf_puts(&m, "{\"files\":[");
    int rc = 0, found = 0;
    for (size_t i = 0; i < N(FILES); i++) {
        bool wanted = n_names == 0;
        for (int k = 0; k < n_names; k++)
            wanted |= strcmp(names[k], FILES[i].name) == 0;
        if (!wanted)
            continue;
        found++;
        if (write_file(dir, &FILES[i], &m) != 0)
            rc = 1;
    }
    if (n_names && found != n_names) {
        fprintf(stderr, "pq_suite: unknown file name among the arguments (see pq_suite list)\n");
        rc = 1;
    }
    nx_strbuf_puts(&m, "]}\n");
    if (n_names == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/suite.json", dir);
        FILE *out = fopen(path, "wb");
        if (!out || m.failed || fwrite(m.data, 1, m.len, out) != m.len || fclose(out) != 0) {
            fprintf(stderr, "pq_suite: cannot write %s\n", path);
            rc = 1;
        }
    }
    nx_strbuf_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < N(FILES); i++)
            printf("%s\n", FILES[i].name);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "write") == 0)
        return cmd_write(argv[2], argc - 3, argv + 3);
    if (argc >= 3 && strcmp(argv[1], "dump") == 0)
        return pqs_dump(argc - 2, argv + 2);
    fprintf(stderr, "usage: pq_suite list\n"
                    "       pq_suite write DIR [NAME...]\n"
                    "       pq_suite dump FILE [--range COLUMN MIN MAX] [--batch ROWS]\n");
    return 2;
}
