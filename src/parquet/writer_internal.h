/*
 * writer_internal.h — internal: the Parquet writer's state, shared by
 * writer.c (API, row groups, footer), column_encode.c (page and chunk
 * encoding, run on worker threads) and dictionary.c.
 *
 * Life of a value: put_*() appends it, PLAIN-encoded, to the open raw page of
 * its column (levels one byte each). At a row boundary a full raw page is
 * closed and queued on its column; a pool of encoding threads takes columns
 * with queued pages and encodes them in order (dictionary, levels, values,
 * compression) into the column's chunk buffer, while the caller goes on
 * filling new pages. Pages are encoded a moment after they were filled, so
 * their bytes are still in cache, and their buffers return to the column's
 * free list for reuse: steady state allocates nothing and touches little
 * memory. When the row group fills, the main thread waits for the queues to
 * drain, then writes each column's chunk (dictionary page, data pages).
 */
#ifndef NX_PARQUET_WRITER_INTERNAL_H
#define NX_PARQUET_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "parquet/compress.h"
#include "parquet/format.h"
#include "parquet/parquet.h"
#include "util/arena.h"
#include "util/strbuf.h"

/* Running min/max/null/NaN counts over a page or a column chunk. */
typedef struct stats_acc {
    bool any;                /* at least one non-null, non-NaN value seen */
    int64_t imin, imax;      /* INT32, INT64, BOOLEAN, LIST_INT64 */
    double dmin, dmax;       /* FLOAT, DOUBLE */
    nx_strbuf smin, smax;    /* STRING, LIST_STRING (owned copies) */
    int64_t nulls, nans;
} stats_acc;

void stats_reset(stats_acc *s);
void stats_free(stats_acc *s);
void stats_int(stats_acc *s, int64_t v);
void stats_double(stats_acc *s, double v);
void stats_bytes(stats_acc *s, const void *p, size_t n);
void stats_merge(stats_acc *into, const stats_acc *from, nxpq_type type);
/* Unsigned byte-wise order, shorter first on a common prefix (UTF-8 order). */
int pq_bytes_cmp(const void *a, size_t alen, const void *b, size_t blen);

/* Distinct values of one column chunk (dictionary.c). The PLAIN forms in
 * insertion order are the dictionary page body. */
typedef struct dict_slot {
    uint64_t hash;
    uint32_t entry1;         /* entry index + 1; 0 marks an empty slot */
    uint32_t plain_len;      /* length of the entry's PLAIN form */
} dict_slot;

typedef struct dictionary {
    nx_strbuf plain;
    dict_slot *slots;
    uint32_t *offsets;       /* per entry: start of its PLAIN form in plain */
    size_t n_slots, n_entries, cap_entries;
} dictionary;

void dict_clear(dictionary *d);
void dict_free(dictionary *d);
/* Room for `more` new entries; -1 when out of memory. */
int dict_reserve(dictionary *d, size_t more);
/* Entry index of the PLAIN form plain[0..n) with this hash, inserted if new;
 * -1 when out of memory. The table must exist (dict_reserve() once). */
int64_t dict_lookup(dictionary *d, uint64_t hash, const void *plain, uint32_t n);
/* The same for an integer whose hash is pq_mix64() of its (sign-extended)
 * value: pq_mix64 is a bijection of 64-bit words, so equal hashes are equal
 * values and no bytes are compared. */
int64_t dict_lookup_int(dictionary *d, uint64_t hash, const void *plain, uint32_t n);
/* Hash used for dictionary slots of integer values: MurmurHash3's finalizer.
 * Every input bit reaches the low bits that pick a slot, so patterned ids
 * (multiples of 1024) still spread out; and it is a bijection, which
 * dict_lookup_int() relies on. Inline: it runs once per value put. */
static inline uint64_t pq_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* A caller-known dictionary (nxpq_set_dictionary_*): the column's entries,
 * merged into distinct values once, and which distinct values the chunk being
 * encoded uses. Raw pages of such a column hold distinct ids, not PLAIN values;
 * the encoder maps them to the chunk's dictionary entries (first use appends
 * the value to c->dict, so the dictionary page, bit width and statistics code
 * is shared with hashed dictionaries). */
#define CD_NULL UINT32_MAX          /* canon[]: the entry is null */
#define CD_WIDE (UINT32_MAX - 1)    /* canon[]: the value does not fit the INT32 column */
typedef struct cd_key {
    uint32_t id;             /* distinct id, CD_NULL or CD_WIDE */
    uint32_t len;            /* bytes of its PLAIN form (0 unless a distinct id) */
} cd_key;
typedef struct caller_dict {
    cd_key *canon;           /* per caller entry: one load per value put */
    size_t n_keys;
    dictionary distinct;     /* distinct PLAIN forms (no hash slots kept) */
    uint32_t *plain_len;     /* per distinct id: bytes of its PLAIN form */
    uint32_t *chunk1;        /* per distinct id: chunk dictionary entry + 1; 0 unused */
    uint32_t *used;          /* per chunk dictionary entry: its distinct id */
} caller_dict;

enum { MODE_PLAIN, MODE_DICT, MODE_DELTA };

/* With dictionary_skip_distinct, a dictionary whose chunk has encoded at least
 * this many values, more than half of them distinct, gives way to PLAIN
 * (column_encode.c). */
#define DICT_JUDGE_VALUES 8192

#define NXPQ_MAX_THREADS 8

/* One page's worth of buffered values, not yet encoded. */
typedef struct raw_page {
    nx_strbuf def, rep;      /* one byte per level */
    nx_strbuf plain;         /* PLAIN values (booleans one byte each; DELTA columns unused) */
    int64_t *ints;           /* DELTA columns: the values */
    size_t n_ints, cap_ints;
    uint32_t *ids;           /* caller-dictionary columns: distinct ids of the values */
    size_t n_ids, cap_ids;
    size_t id_bytes;         /* ... and the bytes their PLAIN forms would take */
    size_t rows, levels, values;
    int64_t first_row;       /* within the row group */
    stats_acc stats;         /* numbers at put time; strings when encoded */
} raw_page;

/* What the page index needs about one encoded data page. */
typedef struct page_info {
    int64_t offset;          /* within the chunk buffer; later within the file */
    int32_t size;            /* header + compressed body */
    int64_t first_row;
    bool null_page;
    bool has_bounds;
    int64_t nulls, nans;
    uint32_t min_off, min_len, max_off, max_len;  /* in the column's bounds buffer */
    pq_bytes min, max;       /* arena copies, set by the main thread */
} page_info;

/* One column chunk's page index, kept until close. */
typedef struct chunk_index {
    page_info *pages;
    uint32_t n_pages;
    bool write_column_index; /* false when a page's non-null values were all NaN */
    int32_t boundary_order;
} chunk_index;

/* Scratch space of one encoding thread. */
typedef struct encode_scratch {
    nx_strbuf body, comp;
    uint64_t *hashes;        /* per page value: hash */
    uint32_t *voffs;         /* per page value: offset of its PLAIN form */
    uint32_t *idx;           /* per page value: dictionary index */
    size_t cap_values;
    int64_t *ints;           /* a PLAIN integer page's values, for delta_fallback */
    size_t cap_ints;
    uint8_t *seen;           /* per dictionary entry: 1 when the page uses it */
    size_t cap_seen;
    pq_compressor compressor;
} encode_scratch;

typedef struct col_writer {
    nxpq_column_spec spec;
    int physical;            /* PQ_* physical type of the leaf */
    int max_def, max_rep;
    bool delta;              /* DELTA_BINARY_PACKED: raw pages buffer ints, not PLAIN */
    int mode;                /* encoder state: MODE_*; may fall back to PLAIN */
    bool dict_abandoned;     /* fell back to PLAIN once: later chunks start PLAIN */
    caller_dict *cd;         /* set by nxpq_set_dictionary_*, else NULL */
    size_t dict_values;      /* values dictionary-encoded in this chunk */
    size_t row_pending;      /* values put since the last end_row(s) */
    raw_page *open;          /* the page being filled (main thread only) */
    /* under the writer's lock: closed pages waiting to be encoded, in order,
     * and page buffers ready for reuse */
    raw_page **queue;
    size_t queue_head, queue_len, queue_cap;
    raw_page **spare;
    size_t n_spare, cap_spare;
    bool scheduled;          /* a thread is encoding this column, or it is in the job list */
    size_t n_owned;          /* raw pages allocated for this column */
    /* the encoded chunk, filled by column_chunk_encode() */
    dictionary dict;
    nx_strbuf chunk;         /* data pages, headers included */
    page_info *infos;
    size_t n_infos, cap_infos;
    nx_strbuf bounds;        /* page min/max bytes referenced by infos */
    stats_acc chunk_stats;
    uint32_t encodings;      /* bit set of PQ_ENC_* used */
    int64_t chunk_values;    /* level entries: num_values of the chunk */
    int64_t chunk_uncompressed; /* data pages, headers included */
    bool nan_only_page;
    bool has_dict_page;
    nx_strbuf dict_page;     /* header + compressed dictionary page */
    int64_t dict_uncompressed;
    char err[256];           /* set by a failing encode */
} col_writer;

struct nxpq_writer {
    char *path;
    FILE *f;
    int64_t pos;
    nxpq_writer_options opt;
    col_writer *cols;
    size_t n_cols;
    uint64_t rows, rg_rows;
    size_t rg_bytes;         /* raw bytes buffered in this row group (estimate) */
    nx_arena meta;           /* footer data: row groups, bounds copies, kv */
    pq_row_group *rgs;
    chunk_index *indexes;    /* n_rgs * n_cols */
    size_t n_rgs, cap_rgs;
    pq_kv *kv;
    /* the encoding thread pool (writer.c); n_threads 0 encodes inline */
    int n_threads;
    pthread_t tids[NXPQ_MAX_THREADS];
    encode_scratch *scratch; /* [0] the main thread's, then one per thread */
    size_t n_scratch;
    pthread_mutex_t lock;
    pthread_cond_t work_cv;  /* workers: a column was scheduled, or shutdown */
    pthread_cond_t done_cv;  /* main thread: a column finished a page */
    size_t *jobs;            /* ring of scheduled column indices */
    size_t jobs_head, jobs_len;
    bool shutdown;
    bool pool_ready;
    nx_strbuf tmp;           /* main-thread serialisation buffer */
    bool failed;
    char err[512];
};

/* A statistics bound as PLAIN bytes (strings without their length prefix):
 * written into buf for fixed-width types, or pointing at the accumulator's own
 * copy for strings. Valid until the accumulator or buf changes. */
pq_bytes stats_bound_plain(const col_writer *c, const stats_acc *st, bool max, unsigned char buf[8]);

/* Column chunk encoding, in three steps. Thread-safe across distinct columns:
 * each touches only c and s. Errors return -1 with c->err set.
 *   column_chunk_begin()  empties the chunk state (main thread, no page queued);
 *   column_page_encode()  encodes one raw page into the chunk (any thread, pages
 *                         of a column one at a time and in order);
 *   column_chunk_finish() builds the dictionary page, if the chunk has one. */
void column_chunk_begin(col_writer *c);
int column_page_encode(const nxpq_writer *w, col_writer *c, raw_page *p, encode_scratch *s);
int column_chunk_finish(const nxpq_writer *w, col_writer *c, encode_scratch *s);
/* Frees a caller dictionary (NULL is fine). */
void caller_dict_free(caller_dict *cd);
/* Frees a scratch area's buffers. */
void encode_scratch_free(encode_scratch *s);

#endif
