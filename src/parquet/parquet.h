/*
 * parquet.h — nxprof's Parquet codec: the public API.
 *
 * Written from the Apache Parquet format specification (parquet.thrift,
 * Encodings.md, PageIndex.md, LogicalTypes.md). It covers what a profile needs:
 *
 *   physical/logical types  INT32, INT64, FLOAT, DOUBLE, BOOLEAN, BYTE_ARRAY as
 *                           STRING, and LIST<INT64> / LIST<STRING> in the standard
 *                           3-level form (optional group <name> (LIST) { repeated
 *                           group list { optional <type> element } });
 *   columns                 required or optional (nullable); lists may be null or
 *                           empty and their elements may be null;
 *   encodings written       PLAIN, RLE/bit-packed hybrid (levels, booleans,
 *                           dictionary indices), RLE_DICTIONARY with a PLAIN
 *                           dictionary page (falls back to PLAIN when the dictionary
 *                           outgrows its limit), DELTA_BINARY_PACKED (int columns);
 *   compression             ZSTD (default), SNAPPY, UNCOMPRESSED;
 *   statistics              per column chunk and per page (min/max/null_count, and
 *                           nan_count for floats), ColumnIndex + OffsetIndex (the
 *                           page index), key/value metadata, created_by.
 *
 * The reader decodes every encoding the writer produces plus what other writers
 * commonly use, projects columns, skips row groups and pages by min/max on int
 * columns, and streams rows in batches. Every offset and length read from a file
 * is bounds-checked: corrupt input yields an error message, never a crash.
 *
 * Errors: functions that can fail return -1 or NULL and fill an nx_error
 * (util/error.h) whose message names the file and, where it applies, the column,
 * page and byte offset.
 * Nothing here prints or exits.
 *
 * Threads: a writer or reader is used by one thread at a time; distinct objects
 * are independent. The writer itself encodes a row group's columns on several
 * threads (nxpq_writer_options.threads), and a scan may decode a batch's
 * columns on several (nxpq_scan_options.threads); both are invisible to callers.
 */
#ifndef NX_PARQUET_H
#define NX_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum nxpq_type {
    NXPQ_BOOLEAN,
    NXPQ_INT32,
    NXPQ_INT64,
    NXPQ_FLOAT,
    NXPQ_DOUBLE,
    NXPQ_STRING,
    NXPQ_LIST_INT64,
    NXPQ_LIST_STRING,
    NXPQ_UNSUPPORTED   /* reader only: a column this codec cannot decode (INT96,
                          FIXED_LEN_BYTE_ARRAY, structs, maps, other lists); it is
                          listed but cannot be projected */
} nxpq_type;

/* Values are the Parquet CompressionCodec numbers. The writer supports
 * UNCOMPRESSED, SNAPPY and ZSTD; the reader also GZIP, BROTLI and LZ4_RAW. */
typedef enum nxpq_codec {
    NXPQ_UNCOMPRESSED = 0,
    NXPQ_SNAPPY = 1,
    NXPQ_GZIP = 2,
    NXPQ_BROTLI = 4,
    NXPQ_ZSTD = 6,
    NXPQ_LZ4_RAW = 7
} nxpq_codec;

/* How the writer encodes a column's values. */
typedef enum nxpq_encoding_pref {
    NXPQ_ENCODE_AUTO,        /* strings and ints: dictionary, falling back to PLAIN
                                (see also dictionary_skip_distinct);
                                floats, doubles, booleans: PLAIN */
    NXPQ_ENCODE_PLAIN,
    NXPQ_ENCODE_DICTIONARY,  /* RLE_DICTIONARY (same fallbacks as AUTO); strings and
                                ints only, other types stay PLAIN */
    NXPQ_ENCODE_DELTA        /* DELTA_BINARY_PACKED; INT32/INT64/LIST_INT64 only.
                                Best for sorted timestamps. */
} nxpq_encoding_pref;

typedef struct nxpq_column_spec {
    const char *name;
    nxpq_type type;
    bool nullable;             /* false: REQUIRED, every row must have a value */
    nxpq_encoding_pref encoding;
} nxpq_column_spec;

typedef struct nxpq_kv {
    const char *key;
    const char *value;
} nxpq_kv;

typedef struct nxpq_writer_options {
    nxpq_codec codec;              /* default NXPQ_ZSTD */
    int compression_level;         /* ZSTD level; default 1 (level 3 costs ~25% more CPU for
                                      ~0.6% smaller profile tables) */
    uint64_t row_group_rows;       /* flush a row group at this many rows (default 1,048,576) */
    uint64_t row_group_bytes;      /* ... or this much buffered data (default 128 MiB) */
    uint32_t page_bytes;           /* target uncompressed data page size (default 1 MiB) */
    uint32_t page_rows;            /* ... and at most this many rows per page (default 65,536),
                                      so the page index can skip to a time window */
    uint32_t dictionary_max_bytes; /* dictionary page limit before PLAIN fallback (default 1 MiB) */
    bool dictionary_skip_distinct; /* also fall back when a column chunk has dictionary-encoded
                                      8192 values or more, over half of them distinct: its later
                                      pages and the column's later chunks are PLAIN (ids,
                                      timestamps, checksums gain nothing from a dictionary and
                                      cost the most to hash). Default false */
    bool delta_fallback;           /* integer columns not in dictionary form (the dictionary
                                      outgrew its limit or was skipped, above) write their
                                      pages DELTA_BINARY_PACKED instead of PLAIN, unless the
                                      column asked for NXPQ_ENCODE_PLAIN. Default false */
    int delta_max_bit_width;       /* 1..64: a DELTA_BINARY_PACKED page (NXPQ_ENCODE_DELTA or
                                      delta_fallback) whose miniblocks would need more bits
                                      per value is written PLAIN instead (docs/parquet.md,
                                      fastparquet). Default 64: never */
    bool write_page_index;         /* ColumnIndex + OffsetIndex (default true) */
    bool write_statistics;         /* chunk and page statistics (default true) */
    int threads;                   /* threads encoding pages behind the caller; 0 (default) =
                                      one per online CPU, at most 8 */
    int sorting_column;            /* column declared sorted ascending in each row group,
                                      or -1 (default) */
    const nxpq_kv *metadata;       /* key/value pairs for the footer, copied at open */
    size_t n_metadata;
    const char *created_by;        /* default "nxprof version <v>" */
} nxpq_writer_options;

/* Fills *o with the defaults above. */
void nxpq_writer_options_init(nxpq_writer_options *o);

/* ------------------------------------------------------------------ writer --
 * Usage: open; for each row, put exactly one value (or null) per column, then
 * nxpq_end_row(); finally nxpq_writer_close(). Row groups are flushed to disk as
 * they fill, so memory stays bounded by the row group limits.
 *
 * After any failure the writer is poisoned: later calls return -1, and
 * nxpq_writer_close() reports the first error and removes the partial file.
 */
typedef struct nxpq_writer nxpq_writer;

typedef struct nxpq_str {
    const char *ptr;
    size_t len;
} nxpq_str;

/* Creates (truncates) `path`. Returns NULL and fills *err on failure. The
 * column specs are copied. */
nxpq_writer *nxpq_writer_open(const char *path, const nxpq_column_spec *cols, size_t n_cols,
                              const nxpq_writer_options *opts, nx_error *err);

/* Put one value into column `col` of the current row. The function must match
 * the column's type; put_null is allowed on nullable columns only. */
int nxpq_put_int32(nxpq_writer *w, size_t col, int32_t v);
int nxpq_put_int64(nxpq_writer *w, size_t col, int64_t v);
int nxpq_put_float(nxpq_writer *w, size_t col, float v);
int nxpq_put_double(nxpq_writer *w, size_t col, double v);
int nxpq_put_bool(nxpq_writer *w, size_t col, bool v);
int nxpq_put_string(nxpq_writer *w, size_t col, const char *s, size_t len);
int nxpq_put_null(nxpq_writer *w, size_t col);
/* Lists: n == 0 writes an empty list. items may contain NULL ptr entries (null
 * elements) for LIST_STRING; use nxpq_put_null for a null list. */
int nxpq_put_list_int64(nxpq_writer *w, size_t col, const int64_t *items, size_t n);
int nxpq_put_list_string(nxpq_writer *w, size_t col, const nxpq_str *items, size_t n);

/* Batch forms: append n values to one column, then close the n rows with
 * nxpq_end_rows(). The int and double forms take non-null values; in the string
 * form an item with a NULL ptr is a null (nullable columns only). Columnar
 * callers should prefer these: they cost a copy per value, not a call. */
int nxpq_put_int64_array(nxpq_writer *w, size_t col, const int64_t *v, size_t n);
int nxpq_put_double_array(nxpq_writer *w, size_t col, const double *v, size_t n);
int nxpq_put_string_array(nxpq_writer *w, size_t col, const nxpq_str *v, size_t n);
/* Masked batch forms: n values, valid[i] == 0 marks a null (valid NULL: none).
 * The int64 form also fills INT32 columns (a value outside INT32 fails the
 * writer, naming the column and row); the double form also fills FLOAT columns;
 * the bool form takes one byte per value. A null in a required column fails. */
int nxpq_put_int64_masked(nxpq_writer *w, size_t col, const int64_t *v, const uint8_t *valid, size_t n);
int nxpq_put_double_masked(nxpq_writer *w, size_t col, const double *v, const uint8_t *valid, size_t n);
int nxpq_put_bool_masked(nxpq_writer *w, size_t col, const uint8_t *v, const uint8_t *valid, size_t n);

/* Caller-known dictionaries, for a column whose values all come from a set the
 * caller knows before the first row (properties of a program's instructions,
 * say): the caller gives the set once and then puts indices into it, so the
 * writer never hashes or compares a value per row.
 *
 * nxpq_set_dictionary_strings() (STRING columns) and nxpq_set_dictionary_int64()
 * (INT64 and INT32 columns) give the column's entries: index k stands for entry
 * k. A string entry with a NULL ptr, or an int entry with valid[k] == 0 (valid
 * NULL: all valid), stands for null. Entries may repeat (equal values are
 * merged), so a caller may pass one entry per object rather than distinct
 * values. The values are copied. Allowed once per column, before the file's
 * first row, on columns not DELTA-encoded; from then on the column takes only
 * nxpq_put_dict_masked() and nxpq_put_null(). An INT32 column's entry outside
 * INT32 fails the writer only when a row uses it.
 *
 * The file is the one the ordinary puts of the same values would give, byte for
 * byte: per column chunk the dictionary page holds the entries the chunk uses,
 * in first-use order; page and chunk statistics (min/max over the entries used,
 * null counts) and the page index are the same; pages and row groups are cut by
 * the same PLAIN byte counts; a chunk whose dictionary outgrows
 * dictionary_max_bytes falls back to PLAIN in the same way. */
int nxpq_set_dictionary_strings(nxpq_writer *w, size_t col, const nxpq_str *v, size_t n);
int nxpq_set_dictionary_int64(nxpq_writer *w, size_t col, const int64_t *v, const uint8_t *valid, size_t n);
/* n values of a column with a caller dictionary: row i is entry idx[i], or null
 * where valid[i] == 0 (valid NULL: none). An index past the last entry, or a
 * null (a null entry included) in a required column, fails the writer. */
int nxpq_put_dict_masked(nxpq_writer *w, size_t col, const uint32_t *idx, const uint8_t *valid, size_t n);

/* Close the current row (or the last n rows after batch puts): every column
 * must hold exactly the same number of values. May flush a row group. */
int nxpq_end_row(nxpq_writer *w);
int nxpq_end_rows(nxpq_writer *w, size_t n);

/* Flush the last row group, write the page index and footer, close the file.
 * Frees w in all cases. Returns 0, or -1 with *err filled (the file is removed). */
int nxpq_writer_close(nxpq_writer *w, nx_error *err);
/* Stop without finishing: closes and removes the file, frees w. */
void nxpq_writer_abort(nxpq_writer *w);
/* Rows written so far (ended rows). */
uint64_t nxpq_writer_rows(const nxpq_writer *w);

/* ------------------------------------------------------------------ reader -- */
typedef struct nxpq_reader nxpq_reader;

typedef struct nxpq_column_info {
    const char *name;          /* top-level field name */
    nxpq_type type;
    bool nullable;
    int physical_type;         /* Parquet Type number of the leaf */
    const char *unsupported;   /* type NXPQ_UNSUPPORTED: what the column holds that this
                                  reader refuses ("INT96", "TIMESTAMP(MICROS)", "a map", ...) */
} nxpq_column_info;

/* Opens and validates the footer. */
nxpq_reader *nxpq_reader_open(const char *path, nx_error *err);
/* Same, for files of a profile: a path whose last component is a symbolic link
 * (not followed), or that is not a regular file (a FIFO, a device), is refused. */
nxpq_reader *nxpq_reader_open_regular(const char *path, nx_error *err);
/* Same over a caller-owned buffer that must outlive the reader (fuzzing, tests). */
nxpq_reader *nxpq_reader_open_memory(const void *data, size_t len, const char *name, nx_error *err);
void nxpq_reader_close(nxpq_reader *r);

int64_t nxpq_reader_num_rows(const nxpq_reader *r);
size_t nxpq_reader_num_row_groups(const nxpq_reader *r);
size_t nxpq_reader_num_columns(const nxpq_reader *r);
const nxpq_column_info *nxpq_reader_column(const nxpq_reader *r, size_t i);
/* Index of the column named `name`, or -1. */
int nxpq_reader_find_column(const nxpq_reader *r, const char *name);
/* Footer key/value lookup; NULL if absent. */
const char *nxpq_reader_metadata(const nxpq_reader *r, const char *key);
const char *nxpq_reader_created_by(const nxpq_reader *r);

/* Keep only row groups and pages whose [min, max] on `column` (an INT32 or
 * INT64 column) can intersect [min, max]. Pruning is by statistics and the page
 * index; rows inside a kept page are all returned, so callers apply their exact
 * predicate to the rows they get. */
typedef struct nxpq_range {
    size_t column;
    int64_t min;
    int64_t max;
} nxpq_range;

typedef struct nxpq_scan_options {
    const size_t *columns;     /* projection; NULL with n_columns 0 means all supported columns */
    size_t n_columns;
    const nxpq_range *ranges;  /* all must hold (AND) */
    size_t n_ranges;
    size_t batch_rows;         /* rows per batch at most (default 65,536) */
    int threads;               /* threads decoding a batch's columns, the caller's included
                                  (0 or 1: the caller alone; at most 8). Batches under
                                  4,096 rows are always decoded by the caller. The batch
                                  and its bytes do not depend on it. */
    bool dictionary;           /* hand out dictionary form (nxpq_column_data) where it applies */
    int64_t rows_begin;        /* with rows_end > 0: only rows [rows_begin, rows_end) of the file */
    int64_t rows_end;          /* (and of the ranges' pages); only their pages are read */
} nxpq_scan_options;

/* One projected column of a batch. Row i of the batch:
 *   valid == NULL or valid[i] != 0  -> present, else null
 *   scalars: values.i32/i64/f32/f64/b[i] (0 for null rows)
 *   STRING:  bytes data[offsets[i] .. offsets[i+1])
 *   lists:   elements list_offsets[i] .. list_offsets[i+1]; element j is
 *            values.i64[j] (LIST_INT64) or data[offsets[j] .. offsets[j+1])
 *            (LIST_STRING); element_valid (NULL = all present) marks null elements
 * Dictionary form (only from a scan with nxpq_scan_options.dictionary, only for
 * STRING, INT32 and INT64 columns): when dict_index is non-NULL the column
 * holds no values/offsets/data; row i, when valid, is dictionary entry
 * dict_index[i] (< dict_n; a null row holds dict_n, so per-entry tables with
 * one extra entry for null need no look at valid): dict_values.i32/i64[d] or the
 * bytes dict_strs[d]. dict_id identifies the dictionary's contents: two batch
 * columns with the same dict_id have the same dictionary (ids are never
 * reused in a process), so per-entry work can be cached across batches. A
 * column is in this form when all rows of the batch come from
 * dictionary-encoded pages; otherwise it holds plain values as above.
 * Arrays are owned by the scan and valid until the next nxpq_scan_next(). */
typedef struct nxpq_column_data {
    nxpq_type type;
    const uint8_t *valid;
    union {
        const int32_t *i32;
        const int64_t *i64;
        const float *f32;
        const double *f64;
        const uint8_t *b;
    } values;
    const uint64_t *offsets;
    const char *data;
    const uint64_t *list_offsets;
    const uint8_t *element_valid;
    const uint32_t *dict_index;
    size_t dict_n;
    union {
        const int32_t *i32;
        const int64_t *i64;
        const uint8_t *b;
    } dict_values;
    const nxpq_str *dict_strs;
    uint64_t dict_id;
} nxpq_column_data;

typedef struct nxpq_batch {
    size_t n_rows;
    int64_t first_row;          /* file-wide index of row 0; a batch never spans a skipped gap */
    size_t n_columns;
    const nxpq_column_data *columns; /* in projection order */
} nxpq_batch;

typedef struct nxpq_scan_stats {
    uint64_t row_groups_total, row_groups_read;
    uint64_t pages_total, pages_read;   /* data pages over the projected columns */
} nxpq_scan_stats;

typedef struct nxpq_scan nxpq_scan;

nxpq_scan *nxpq_scan_open(nxpq_reader *r, const nxpq_scan_options *opts, nx_error *err);
/* Returns 1 and sets *out to the next batch, 0 at the end, -1 on error. */
int nxpq_scan_next(nxpq_scan *s, const nxpq_batch **out, nx_error *err);
void nxpq_scan_get_stats(const nxpq_scan *s, nxpq_scan_stats *out);
void nxpq_scan_close(nxpq_scan *s);

const char *nxpq_type_name(nxpq_type t);

#endif
