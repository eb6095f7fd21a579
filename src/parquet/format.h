/*
 * format.h — internal: the Parquet metadata structures (a subset of
 * parquet.thrift) and their compact-protocol encoding (format_write.c) and
 * decoding (format_read.c).
 *
 * Decoded structures live in an nx_arena owned by the caller; byte fields
 * (statistics, strings) point into the arena (copied) so the input buffer may
 * be released. Unknown fields are skipped, so newer files still decode.
 * "has_*" flags mark optional fields that were present.
 */
#ifndef NX_PARQUET_FORMAT_H
#define NX_PARQUET_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/thrift.h"
#include "util/arena.h"
#include "util/strbuf.h"

/* parquet.thrift enums */
enum { PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_INT96 = 3, PQ_FLOAT = 4, PQ_DOUBLE = 5,
       PQ_BYTE_ARRAY = 6, PQ_FIXED_LEN_BYTE_ARRAY = 7 };
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
enum { PQ_CONVERTED_UTF8 = 0, PQ_CONVERTED_LIST = 3 };
enum { PQ_ENC_PLAIN = 0, PQ_ENC_PLAIN_DICTIONARY = 2, PQ_ENC_RLE = 3, PQ_ENC_BIT_PACKED = 4,
       PQ_ENC_DELTA_BINARY_PACKED = 5, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
       PQ_ENC_DELTA_BYTE_ARRAY = 7, PQ_ENC_RLE_DICTIONARY = 8, PQ_ENC_BYTE_STREAM_SPLIT = 9 };
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICTIONARY = 2, PQ_PAGE_DATA_V2 = 3 };
enum { PQ_BOUNDARY_UNORDERED = 0, PQ_BOUNDARY_ASCENDING = 1, PQ_BOUNDARY_DESCENDING = 2 };
/* LogicalType union member ids we write or recognise */
enum { PQ_LOGICAL_NONE = 0, PQ_LOGICAL_STRING = 1, PQ_LOGICAL_LIST = 3, PQ_LOGICAL_DECIMAL = 5,
       PQ_LOGICAL_DATE = 6, PQ_LOGICAL_TIME = 7, PQ_LOGICAL_TIMESTAMP = 8, PQ_LOGICAL_INTEGER = 10,
       PQ_LOGICAL_FLOAT16 = 15 };
/* TimeUnit union member ids (TIME and TIMESTAMP logical types) */
enum { PQ_UNIT_NONE = 0, PQ_UNIT_MILLIS = 1, PQ_UNIT_MICROS = 2, PQ_UNIT_NANOS = 3 };

typedef struct pq_bytes {
    const uint8_t *ptr;
    uint32_t len;
} pq_bytes;

typedef struct pq_statistics {
    bool has_min, has_max, has_null_count, has_nan_count;
    pq_bytes min_value, max_value;   /* fields 6/5; decoders fall back to legacy 2/1 */
    int64_t null_count;
    int64_t nan_count;
} pq_statistics;

typedef struct pq_schema_element {
    bool has_type;
    int32_t type;
    bool has_repetition;
    int32_t repetition;
    const char *name;
    int32_t num_children;            /* 0 for leaves */
    bool has_converted_type;
    int32_t converted_type;
    int32_t logical_type;            /* PQ_LOGICAL_* union member id, or NONE */
    int32_t time_unit;               /* PQ_UNIT_*: TIME and TIMESTAMP logical types */
    int32_t int_bit_width;           /* INTEGER logical type */
    bool int_signed;
    int32_t type_length;
} pq_schema_element;

typedef struct pq_kv {
    const char *key;
    const char *value;               /* NULL when absent */
} pq_kv;

typedef struct pq_data_page_header {
    int32_t num_values;
    int32_t encoding;
    int32_t definition_level_encoding;
    int32_t repetition_level_encoding;
    bool has_statistics;
    pq_statistics statistics;
} pq_data_page_header;

typedef struct pq_dictionary_page_header {
    int32_t num_values;
    int32_t encoding;
    bool is_sorted;
} pq_dictionary_page_header;

typedef struct pq_data_page_header_v2 {
    int32_t num_values;
    int32_t num_nulls;
    int32_t num_rows;
    int32_t encoding;
    int32_t definition_levels_byte_length;
    int32_t repetition_levels_byte_length;
    bool is_compressed;              /* default true when absent */
    bool has_statistics;
    pq_statistics statistics;
} pq_data_page_header_v2;

typedef struct pq_page_header {
    int32_t type;
    int32_t uncompressed_page_size;
    int32_t compressed_page_size;
    bool has_crc;
    int32_t crc;
    bool has_data_page_header, has_dictionary_page_header, has_data_page_header_v2;
    pq_data_page_header data_page_header;
    pq_dictionary_page_header dictionary_page_header;
    pq_data_page_header_v2 data_page_header_v2;
} pq_page_header;

typedef struct pq_column_meta {
    int32_t type;
    int32_t *encodings;
    uint32_t n_encodings;
    const char **path_in_schema;
    uint32_t n_path;
    int32_t codec;
    int64_t num_values;
    int64_t total_uncompressed_size;
    int64_t total_compressed_size;
    int64_t data_page_offset;
    bool has_dictionary_page_offset;
    int64_t dictionary_page_offset;
    bool has_statistics;
    pq_statistics statistics;
} pq_column_meta;

typedef struct pq_column_chunk {
    int64_t file_offset;
    pq_column_meta meta;             /* required in practice; decoders fail without it */
    bool has_offset_index;
    int64_t offset_index_offset;
    int32_t offset_index_length;
    bool has_column_index;
    int64_t column_index_offset;
    int32_t column_index_length;
} pq_column_chunk;

typedef struct pq_sorting_column {
    int32_t column_idx;
    bool descending;
    bool nulls_first;
} pq_sorting_column;

typedef struct pq_row_group {
    pq_column_chunk *columns;
    uint32_t n_columns;
    int64_t total_byte_size;
    int64_t num_rows;
    pq_sorting_column *sorting_columns;
    uint32_t n_sorting_columns;
    bool has_file_offset;
    int64_t file_offset;
    bool has_total_compressed_size;
    int64_t total_compressed_size;
    bool has_ordinal;
    int16_t ordinal;
} pq_row_group;

typedef struct pq_file_meta {
    int32_t version;
    pq_schema_element *schema;
    uint32_t n_schema;
    int64_t num_rows;
    pq_row_group *row_groups;
    uint32_t n_row_groups;
    pq_kv *kv;
    uint32_t n_kv;
    const char *created_by;          /* NULL when absent */
    uint32_t n_column_orders;        /* written as TYPE_ORDER for every leaf */
} pq_file_meta;

typedef struct pq_page_location {
    int64_t offset;
    int32_t compressed_page_size;
    int64_t first_row_index;
} pq_page_location;

typedef struct pq_offset_index {
    pq_page_location *pages;
    uint32_t n_pages;
} pq_offset_index;

typedef struct pq_column_index {
    bool *null_pages;
    pq_bytes *min_values;
    pq_bytes *max_values;
    uint32_t n_pages;
    int32_t boundary_order;
    bool has_null_counts;
    int64_t *null_counts;
    bool has_nan_counts;
    int64_t *nan_counts;
} pq_column_index;

/* ---- encoding (format_write.c): append the compact-protocol form to out ---- */
void pq_write_page_header(nx_strbuf *out, const pq_page_header *h);
void pq_write_file_meta(nx_strbuf *out, const pq_file_meta *m);
void pq_write_column_index(nx_strbuf *out, const pq_column_index *ci);
void pq_write_offset_index(nx_strbuf *out, const pq_offset_index *oi);

/* ---- decoding (format_read.c) ----
 * Each reads one struct from r (which bounds the bytes), allocating from a.
 * On failure r->failed is set with a message; the output is then unusable.
 * Decoders also check semantic sanity that later code relies on (non-negative
 * sizes and counts, num_children within the schema, list lengths matching). */
void pq_read_page_header(nxth_reader *r, nx_arena *a, pq_page_header *h);
void pq_read_file_meta(nxth_reader *r, nx_arena *a, pq_file_meta *m);
void pq_read_column_index(nxth_reader *r, nx_arena *a, pq_column_index *ci);
void pq_read_offset_index(nxth_reader *r, nx_arena *a, pq_offset_index *oi);

#endif
