/*
 * format_read.c — decodes Parquet metadata from the Thrift compact protocol:
 * the footer (FileMetaData), page headers, and the page index (ColumnIndex,
 * OffsetIndex). Field ids follow parquet.thrift; unknown fields are skipped so
 * files from newer writers still decode. Strings and byte fields are copied
 * into the caller's arena. Besides the wire format, each decoder checks what
 * later code relies on (see format.h) and fails the thrift reader otherwise,
 * so a caller checks r->failed once.
 */
#include "parquet/format.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

static bool check(nxth_reader *r, bool ok, const char *what)
{
    if (!ok)
        nxth_fail(r, what);
    return ok && !r->failed;
}

/* Required fields are tracked as bits of `seen`, one per field id. */
static void require_fields(nxth_reader *r, uint32_t seen, uint32_t need, const char *structure)
{
    if (r->failed || (seen & need) == need)
        return;
    char msg[96];
    snprintf(msg, sizeof msg, "%s lacks required field %d", structure, __builtin_ctz(need & ~seen));
    nxth_fail(r, msg);
}

#define F(id) (1u << (id))

static void *alloc_array(nxth_reader *r, nx_arena *a, uint32_t n, size_t size)
{
    void *p = nx_arena_calloc(a, n ? n : 1, size);
    if (!p)
        nxth_fail(r, "out of memory decoding metadata");
    return p;
}

static const char *read_string(nxth_reader *r, nx_arena *a, uint8_t type)
{
    uint32_t len;
    const uint8_t *p = nxth_read_binary(r, type, &len);
    if (r->failed)
        return NULL;
    char *s = nx_arena_strndup(a, (const char *)p, len);
    if (!s)
        nxth_fail(r, "out of memory decoding metadata");
    return s;
}

static pq_bytes read_bytes(nxth_reader *r, nx_arena *a, uint8_t type)
{
    pq_bytes b = {NULL, 0};
    uint32_t len;
    const uint8_t *p = nxth_read_binary(r, type, &len);
    if (r->failed)
        return b;
    uint8_t *copy = nx_arena_alloc(a, len ? len : 1);
    if (!copy) {
        nxth_fail(r, "out of memory decoding metadata");
        return b;
    }
    if (len)
        memcpy(copy, p, len);
    b.ptr = copy;
    b.len = len;
    return b;
}

/* A list header whose elements must all have type `want`. */
static uint32_t list_of(nxth_reader *r, uint8_t type, uint8_t want, uint8_t *et)
{
    uint32_t n = nxth_read_list_begin(r, type, et);
    bool bools = want == NXTH_BOOL_TRUE && (*et == NXTH_BOOL_TRUE || *et == NXTH_BOOL_FALSE);
    bool ints = want == NXTH_I64 && *et >= NXTH_BYTE && *et <= NXTH_I64;
    if (!r->failed && n && *et != want && !bools && !ints)
        nxth_fail(r, "list has the wrong element type");
    return r->failed ? 0 : n;
}

typedef void (*read_fn)(nxth_reader *r, nx_arena *a, void *out);

/* A list<struct>: allocates the array and reads each element with fn. */
static void *read_struct_list(nxth_reader *r, nx_arena *a, uint8_t type, size_t size, uint32_t *count, read_fn fn)
{
    uint8_t et;
    *count = 0;
    uint32_t n = list_of(r, type, NXTH_STRUCT, &et);
    char *arr = r->failed ? NULL : alloc_array(r, a, n, size);
    for (uint32_t i = 0; i < n && !r->failed; i++) {
        nxth_read_struct_begin(r);
        fn(r, a, arr + (size_t)i * size);
        nxth_read_struct_end(r);
    }
    if (!r->failed)
        *count = n;
    return arr;
}

/* --------------------------------------------------------------- statistics */

static void read_statistics(nxth_reader *r, nx_arena *a, pq_statistics *s)
{
    pq_bytes legacy_min = {NULL, 0}, legacy_max = {NULL, 0};
    bool has_legacy_min = false, has_legacy_max = false;
    int16_t id;
    uint8_t t;
    memset(s, 0, sizeof *s);
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        switch (id) {
        case 1: legacy_max = read_bytes(r, a, t); has_legacy_max = true; break;
        case 2: legacy_min = read_bytes(r, a, t); has_legacy_min = true; break;
        case 3: s->null_count = nxth_read_i64(r, t); s->has_null_count = true; break;
        case 5: s->max_value = read_bytes(r, a, t); s->has_max = true; break;
        case 6: s->min_value = read_bytes(r, a, t); s->has_min = true; break;
        case 9: s->nan_count = nxth_read_i64(r, t); s->has_nan_count = true; break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    /* min_value/max_value supersede the deprecated min/max; old writers only
     * have the latter (signed order, which is right for the integer columns
     * that pruning uses). */
    if (!s->has_min && has_legacy_min) {
        s->min_value = legacy_min;
        s->has_min = true;
    }
    if (!s->has_max && has_legacy_max) {
        s->max_value = legacy_max;
        s->has_max = true;
    }
    check(r, s->null_count >= 0 && s->nan_count >= 0, "negative count in statistics");
}

/* ------------------------------------------------------------------- schema */

static void read_int_type(nxth_reader *r, pq_schema_element *el)
{
    int16_t id;
    uint8_t t;
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id == 1)
            el->int_bit_width = nxth_read_i32(r, t);
        else if (id == 2)
            el->int_signed = nxth_read_bool(r, t, false);
        else
            nxth_skip(r, t);
    }
    nxth_read_struct_end(r);
}

/* TimestampType / TimeType: field 2 is the TimeUnit union, whose member id is the unit. */
static void read_time_type(nxth_reader *r, pq_schema_element *el)
{
    int16_t id, uid;
    uint8_t t, ut;
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id == 2 && t == NXTH_STRUCT) {
            nxth_read_struct_begin(r);
            while (nxth_read_field(r, &uid, &ut)) {
                el->time_unit = uid;
                nxth_skip(r, ut);
            }
            nxth_read_struct_end(r);
        } else {
            nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
}

/* LogicalType is a union: its single field's id names the member. */
static void read_logical_type(nxth_reader *r, pq_schema_element *el)
{
    int16_t id;
    uint8_t t;
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (!check(r, t == NXTH_STRUCT, "LogicalType member is not a struct"))
            break;
        el->logical_type = id;
        if (id == PQ_LOGICAL_INTEGER)
            read_int_type(r, el);
        else if (id == PQ_LOGICAL_TIMESTAMP || id == PQ_LOGICAL_TIME)
            read_time_type(r, el);
        else
            nxth_skip(r, t);
    }
    nxth_read_struct_end(r);
}

static void read_schema_element(nxth_reader *r, nx_arena *a, void *out)
{
    pq_schema_element *el = out;
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 10)
            seen |= F(id);
        switch (id) {
        case 1: el->type = nxth_read_i32(r, t); el->has_type = true; break;
        case 2: el->type_length = nxth_read_i32(r, t); break;
        case 3: el->repetition = nxth_read_i32(r, t); el->has_repetition = true; break;
        case 4: el->name = read_string(r, a, t); break;
        case 5: el->num_children = nxth_read_i32(r, t); break;
        case 6: el->converted_type = nxth_read_i32(r, t); el->has_converted_type = true; break;
        case 10: read_logical_type(r, el); break;
        default: nxth_skip(r, t);
        }
    }
    require_fields(r, seen, F(4), "SchemaElement");
    check(r, el->num_children >= 0, "negative num_children in the schema");
    check(r, !el->has_type || (el->type >= PQ_BOOLEAN && el->type <= PQ_FIXED_LEN_BYTE_ARRAY),
          "unknown physical type in the schema");
}

/* The schema is a depth-first flattening of a tree: element 0 is the root and
 * each group is followed by its num_children subtrees. The running count of
 * elements still expected must reach zero exactly at the end. */
static void check_schema_tree(nxth_reader *r, const pq_schema_element *s, uint32_t n)
{
    if (!check(r, n > 0, "the schema is empty"))
        return;
    uint64_t pending = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (!check(r, pending > 0, "the schema has elements outside its tree"))
            return;
        pending = pending - 1 + (uint64_t)s[i].num_children;
        if (!check(r, i == 0 || s[i].num_children > 0 || s[i].has_type,
                   "a schema element has neither a type nor children"))
            return;
    }
    check(r, pending == 0, "the schema declares more children than it has elements");
}

/* ----------------------------------------------------------- column chunks */

static void read_kv(nxth_reader *r, nx_arena *a, void *out)
{
    pq_kv *kv = out;
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    while (nxth_read_field(r, &id, &t)) {
        if (id == 1) {
            kv->key = read_string(r, a, t);
            seen |= F(1);
        } else if (id == 2) {
            kv->value = read_string(r, a, t);
        } else {
            nxth_skip(r, t);
        }
    }
    require_fields(r, seen, F(1), "KeyValue");
}

static void read_encodings(nxth_reader *r, nx_arena *a, uint8_t t, pq_column_meta *m)
{
    uint8_t et;
    uint32_t n = list_of(r, t, NXTH_I64, &et); /* any integer element type */
    m->encodings = r->failed ? NULL : alloc_array(r, a, n, sizeof *m->encodings);
    for (uint32_t i = 0; i < n && !r->failed; i++)
        m->encodings[i] = nxth_read_i32(r, et);
    m->n_encodings = r->failed ? 0 : n;
}

static void read_path(nxth_reader *r, nx_arena *a, uint8_t t, pq_column_meta *m)
{
    uint8_t et;
    uint32_t n = list_of(r, t, NXTH_BINARY, &et);
    m->path_in_schema = r->failed ? NULL : alloc_array(r, a, n, sizeof *m->path_in_schema);
    for (uint32_t i = 0; i < n && !r->failed; i++)
        m->path_in_schema[i] = read_string(r, a, NXTH_BINARY);
    m->n_path = r->failed ? 0 : n;
}

static void check_column_meta(nxth_reader *r, const pq_column_meta *m)
{
    check(r, m->type >= PQ_BOOLEAN && m->type <= PQ_FIXED_LEN_BYTE_ARRAY, "unknown physical type in column metadata");
    check(r, m->n_path > 0, "empty path_in_schema");
    check(r, m->num_values >= 0 && m->total_uncompressed_size >= 0 && m->total_compressed_size >= 0,
          "negative count or size in column metadata");
    check(r, m->data_page_offset >= 0 && (!m->has_dictionary_page_offset || m->dictionary_page_offset >= 0),
          "negative page offset in column metadata");
}

static void read_column_meta(nxth_reader *r, nx_arena *a, pq_column_meta *m)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 12)
            seen |= F(id);
        switch (id) {
        case 1: m->type = nxth_read_i32(r, t); break;
        case 2: read_encodings(r, a, t, m); break;
        case 3: read_path(r, a, t, m); break;
        case 4: m->codec = nxth_read_i32(r, t); break;
        case 5: m->num_values = nxth_read_i64(r, t); break;
        case 6: m->total_uncompressed_size = nxth_read_i64(r, t); break;
        case 7: m->total_compressed_size = nxth_read_i64(r, t); break;
        case 9: m->data_page_offset = nxth_read_i64(r, t); break;
        case 11:
            m->dictionary_page_offset = nxth_read_i64(r, t);
            m->has_dictionary_page_offset = true;
            break;
        case 12:
            read_statistics(r, a, &m->statistics);
            m->has_statistics = true;
            break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2) | F(3) | F(4) | F(5) | F(6) | F(7) | F(9), "ColumnMetaData");
    check_column_meta(r, m);
}

static void read_column_chunk(nxth_reader *r, nx_arena *a, void *out)
{
    pq_column_chunk *c = out;
    bool has_oi_len = false, has_ci_len = false;
    int16_t id;
    uint8_t t;
    while (nxth_read_field(r, &id, &t)) {
        switch (id) {
        case 1: nxth_fail(r, "column data in another file (file_path) is not supported"); break;
        case 2: c->file_offset = nxth_read_i64(r, t); break;
        case 3: read_column_meta(r, a, &c->meta); break;
        case 4: c->offset_index_offset = nxth_read_i64(r, t); c->has_offset_index = true; break;
        case 5: c->offset_index_length = nxth_read_i32(r, t); has_oi_len = true; break;
        case 6: c->column_index_offset = nxth_read_i64(r, t); c->has_column_index = true; break;
        case 7: c->column_index_length = nxth_read_i32(r, t); has_ci_len = true; break;
        case 8:
        case 9: nxth_fail(r, "encrypted column chunks are not supported"); break;
        default: nxth_skip(r, t);
        }
    }
    /* An index is usable only with both its offset and length. */
    c->has_offset_index = c->has_offset_index && has_oi_len;
    c->has_column_index = c->has_column_index && has_ci_len;
    check(r, c->meta.n_path > 0, "ColumnChunk lacks its meta_data");
    check(r, !c->has_offset_index || (c->offset_index_offset >= 0 && c->offset_index_length >= 0),
          "negative offset index location");
    check(r, !c->has_column_index || (c->column_index_offset >= 0 && c->column_index_length >= 0),
          "negative column index location");
}

/* --------------------------------------------------------------- row groups */

static void read_sorting_column(nxth_reader *r, nx_arena *a, void *out)
{
    pq_sorting_column *sc = out;
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    (void)a;
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 3)
            seen |= F(id);
        if (id == 1)
            sc->column_idx = nxth_read_i32(r, t);
        else if (id == 2)
            sc->descending = nxth_read_bool(r, t, false);
        else if (id == 3)
            sc->nulls_first = nxth_read_bool(r, t, false);
        else
            nxth_skip(r, t);
    }
    require_fields(r, seen, F(1) | F(2) | F(3), "SortingColumn");
}

static void read_row_group(nxth_reader *r, nx_arena *a, void *out)
{
    pq_row_group *g = out;
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 7)
            seen |= F(id);
        switch (id) {
        case 1:
            g->columns = read_struct_list(r, a, t, sizeof *g->columns, &g->n_columns, read_column_chunk);
            break;
        case 2: g->total_byte_size = nxth_read_i64(r, t); break;
        case 3: g->num_rows = nxth_read_i64(r, t); break;
        case 4:
            g->sorting_columns = read_struct_list(r, a, t, sizeof *g->sorting_columns, &g->n_sorting_columns,
                                                  read_sorting_column);
            break;
        case 5: g->file_offset = nxth_read_i64(r, t); g->has_file_offset = true; break;
        case 6: g->total_compressed_size = nxth_read_i64(r, t); g->has_total_compressed_size = true; break;
        case 7: g->ordinal = (int16_t)nxth_read_i32(r, t); g->has_ordinal = true; break;
        default: nxth_skip(r, t);
        }
    }
    require_fields(r, seen, F(1) | F(2) | F(3), "RowGroup");
    check(r, g->num_rows >= 0, "negative num_rows in a row group");
}

/* -------------------------------------------------------------- file footer */

static void skip_list_count(nxth_reader *r, uint8_t t, uint32_t *count)
{
    uint8_t et;
    uint32_t n = nxth_read_list_begin(r, t, &et);
    for (uint32_t i = 0; i < n && !r->failed; i++)
        nxth_skip(r, et);
    *count = r->failed ? 0 : n;
}

void pq_read_file_meta(nxth_reader *r, nx_arena *a, pq_file_meta *m)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    memset(m, 0, sizeof *m);
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 9)
            seen |= F(id);
        switch (id) {
        case 1: m->version = nxth_read_i32(r, t); break;
        case 2: m->schema = read_struct_list(r, a, t, sizeof *m->schema, &m->n_schema, read_schema_element); break;
        case 3: m->num_rows = nxth_read_i64(r, t); break;
        case 4:
            m->row_groups = read_struct_list(r, a, t, sizeof *m->row_groups, &m->n_row_groups, read_row_group);
            break;
        case 5: m->kv = read_struct_list(r, a, t, sizeof *m->kv, &m->n_kv, read_kv); break;
        case 6: m->created_by = read_string(r, a, t); break;
        case 7: skip_list_count(r, t, &m->n_column_orders); break;
        case 8: nxth_fail(r, "encrypted Parquet files are not supported"); break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2) | F(3) | F(4), "FileMetaData");
    check(r, m->num_rows >= 0, "negative num_rows in the footer");
    if (!r->failed)
        check_schema_tree(r, m->schema, m->n_schema);
}

/* ------------------------------------------------------------- page headers */

static void read_data_page_header(nxth_reader *r, nx_arena *a, pq_data_page_header *h)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 5)
            seen |= F(id);
        switch (id) {
        case 1: h->num_values = nxth_read_i32(r, t); break;
        case 2: h->encoding = nxth_read_i32(r, t); break;
        case 3: h->definition_level_encoding = nxth_read_i32(r, t); break;
        case 4: h->repetition_level_encoding = nxth_read_i32(r, t); break;
        case 5: read_statistics(r, a, &h->statistics); h->has_statistics = true; break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2) | F(3) | F(4), "DataPageHeader");
    check(r, h->num_values >= 0, "negative num_values in a data page header");
}

static void read_dictionary_page_header(nxth_reader *r, pq_dictionary_page_header *h)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 3)
            seen |= F(id);
        if (id == 1)
            h->num_values = nxth_read_i32(r, t);
        else if (id == 2)
            h->encoding = nxth_read_i32(r, t);
        else if (id == 3)
            h->is_sorted = nxth_read_bool(r, t, false);
        else
            nxth_skip(r, t);
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2), "DictionaryPageHeader");
    check(r, h->num_values >= 0, "negative num_values in a dictionary page header");
}

static void read_data_page_header_v2(nxth_reader *r, nx_arena *a, pq_data_page_header_v2 *h)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    h->is_compressed = true; /* the default when absent */
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 8)
            seen |= F(id);
        switch (id) {
        case 1: h->num_values = nxth_read_i32(r, t); break;
        case 2: h->num_nulls = nxth_read_i32(r, t); break;
        case 3: h->num_rows = nxth_read_i32(r, t); break;
        case 4: h->encoding = nxth_read_i32(r, t); break;
        case 5: h->definition_levels_byte_length = nxth_read_i32(r, t); break;
        case 6: h->repetition_levels_byte_length = nxth_read_i32(r, t); break;
        case 7: h->is_compressed = nxth_read_bool(r, t, false); break;
        case 8: read_statistics(r, a, &h->statistics); h->has_statistics = true; break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2) | F(3) | F(4) | F(5) | F(6), "DataPageHeaderV2");
    check(r, h->num_values >= 0 && h->num_nulls >= 0 && h->num_nulls <= h->num_values && h->num_rows >= 0 &&
                 h->num_rows <= h->num_values,
          "inconsistent counts in a data page v2 header");
    check(r, h->definition_levels_byte_length >= 0 && h->repetition_levels_byte_length >= 0,
          "negative level length in a data page v2 header");
}

/* The sizes a page header promises must fit together. */
static void check_page_header(nxth_reader *r, const pq_page_header *h)
{
    check(r, h->uncompressed_page_size >= 0 && h->compressed_page_size >= 0, "negative page size");
    if (h->type == PQ_PAGE_DATA)
        check(r, h->has_data_page_header, "data page without a data_page_header");
    else if (h->type == PQ_PAGE_DICTIONARY)
        check(r, h->has_dictionary_page_header, "dictionary page without a dictionary_page_header");
    else if (h->type == PQ_PAGE_DATA_V2 && check(r, h->has_data_page_header_v2, "data page v2 without its header")) {
        int64_t levels = (int64_t)h->data_page_header_v2.definition_levels_byte_length +
                         h->data_page_header_v2.repetition_levels_byte_length;
        check(r, levels <= h->compressed_page_size && levels <= h->uncompressed_page_size,
              "data page v2 levels are longer than the page");
    }
}

void pq_read_page_header(nxth_reader *r, nx_arena *a, pq_page_header *h)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    memset(h, 0, sizeof *h);
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 8)
            seen |= F(id);
        switch (id) {
        case 1: h->type = nxth_read_i32(r, t); break;
        case 2: h->uncompressed_page_size = nxth_read_i32(r, t); break;
        case 3: h->compressed_page_size = nxth_read_i32(r, t); break;
        case 4: h->crc = nxth_read_i32(r, t); h->has_crc = true; break;
        case 5:
            read_data_page_header(r, a, &h->data_page_header);
            h->has_data_page_header = true;
            break;
        case 7:
            read_dictionary_page_header(r, &h->dictionary_page_header);
            h->has_dictionary_page_header = true;
            break;
        case 8:
            read_data_page_header_v2(r, a, &h->data_page_header_v2);
            h->has_data_page_header_v2 = true;
            break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2) | F(3), "PageHeader");
    if (!r->failed)
        check_page_header(r, h);
}

/* --------------------------------------------------------------- page index */

static void read_bool_list(nxth_reader *r, nx_arena *a, uint8_t t, bool **out, uint32_t *n)
{
    uint8_t et;
    *n = list_of(r, t, NXTH_BOOL_TRUE, &et);
    *out = r->failed ? NULL : alloc_array(r, a, *n, sizeof **out);
    for (uint32_t i = 0; i < *n && !r->failed; i++)
        (*out)[i] = nxth_read_bool(r, et, true);
}

static void read_bytes_list(nxth_reader *r, nx_arena *a, uint8_t t, pq_bytes **out, uint32_t *n)
{
    uint8_t et;
    *n = list_of(r, t, NXTH_BINARY, &et);
    *out = r->failed ? NULL : alloc_array(r, a, *n, sizeof **out);
    for (uint32_t i = 0; i < *n && !r->failed; i++)
        (*out)[i] = read_bytes(r, a, NXTH_BINARY);
}

static void read_i64_list(nxth_reader *r, nx_arena *a, uint8_t t, int64_t **out, uint32_t *n)
{
    uint8_t et;
    *n = list_of(r, t, NXTH_I64, &et);
    *out = r->failed ? NULL : alloc_array(r, a, *n, sizeof **out);
    for (uint32_t i = 0; i < *n && !r->failed; i++) {
        (*out)[i] = nxth_read_i64(r, et);
        check(r, (*out)[i] >= 0, "negative count in the column index");
    }
}

void pq_read_column_index(nxth_reader *r, nx_arena *a, pq_column_index *ci)
{
    uint32_t seen = 0, n_min = 0, n_max = 0, n_nulls = 0, n_nans = 0;
    int16_t id;
    uint8_t t;
    memset(ci, 0, sizeof *ci);
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 8)
            seen |= F(id);
        switch (id) {
        case 1: read_bool_list(r, a, t, &ci->null_pages, &ci->n_pages); break;
        case 2: read_bytes_list(r, a, t, &ci->min_values, &n_min); break;
        case 3: read_bytes_list(r, a, t, &ci->max_values, &n_max); break;
        case 4: ci->boundary_order = nxth_read_i32(r, t); break;
        case 5: read_i64_list(r, a, t, &ci->null_counts, &n_nulls); ci->has_null_counts = true; break;
        case 8: read_i64_list(r, a, t, &ci->nan_counts, &n_nans); ci->has_nan_counts = true; break;
        default: nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1) | F(2) | F(3) | F(4), "ColumnIndex");
    check(r, n_min == ci->n_pages && n_max == ci->n_pages, "column index lists differ in length");
    check(r, (!ci->has_null_counts || n_nulls == ci->n_pages) && (!ci->has_nan_counts || n_nans == ci->n_pages),
          "column index count lists differ in length");
}

static void read_page_location(nxth_reader *r, nx_arena *a, void *out)
{
    pq_page_location *loc = out;
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    (void)a;
    while (nxth_read_field(r, &id, &t)) {
        if (id >= 1 && id <= 3)
            seen |= F(id);
        if (id == 1)
            loc->offset = nxth_read_i64(r, t);
        else if (id == 2)
            loc->compressed_page_size = nxth_read_i32(r, t);
        else if (id == 3)
            loc->first_row_index = nxth_read_i64(r, t);
        else
            nxth_skip(r, t);
    }
    require_fields(r, seen, F(1) | F(2) | F(3), "PageLocation");
    check(r, loc->offset >= 0 && loc->compressed_page_size > 0 && loc->first_row_index >= 0,
          "negative or empty page location");
}

/* Pages follow each other without overlap, each starting at a later row. */
static void check_page_locations(nxth_reader *r, const pq_offset_index *oi)
{
    if (oi->n_pages > 0)
        check(r, oi->pages[0].first_row_index == 0, "offset index does not start at row 0");
    for (uint32_t i = 1; i < oi->n_pages && !r->failed; i++) {
        const pq_page_location *p = &oi->pages[i - 1], *q = &oi->pages[i];
        check(r, q->first_row_index > p->first_row_index, "offset index rows are not increasing");
        check(r, q->offset - p->offset >= p->compressed_page_size, "offset index pages overlap");
    }
}

void pq_read_offset_index(nxth_reader *r, nx_arena *a, pq_offset_index *oi)
{
    uint32_t seen = 0;
    int16_t id;
    uint8_t t;
    memset(oi, 0, sizeof *oi);
    nxth_read_struct_begin(r);
    while (nxth_read_field(r, &id, &t)) {
        if (id == 1) {
            seen |= F(1);
            oi->pages = read_struct_list(r, a, t, sizeof *oi->pages, &oi->n_pages, read_page_location);
        } else {
            nxth_skip(r, t);
        }
    }
    nxth_read_struct_end(r);
    require_fields(r, seen, F(1), "OffsetIndex");
    if (!r->failed)
        check_page_locations(r, oi);
}
