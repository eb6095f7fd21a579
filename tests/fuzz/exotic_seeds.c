/*
 * exotic_seeds.c — writes tests/fuzz/corpus/parquet/exotic.parquet, a seed
 * built page by page with what no writer installed here produces but the
 * reader must handle: DATA_PAGE_V2 pages with DELTA_BYTE_ARRAY strings,
 * BYTE_STREAM_SPLIT doubles, RLE booleans and DELTA_BINARY_PACKED ints; v1
 * list pages with the deprecated BIT_PACKED levels and a row that continues
 * on the next page. Not part of the build; regenerate with
 *
 *   cmake --build build && cc -std=c11 -Ibuild/layers/parquet tests/fuzz/exotic_seeds.c \
 *     build/libnxparquet.a build/libnxschema.a build/libnxutil.a \
 *     $(pkg-config --libs libzstd liblz4 zlib libxxhash) -lsnappy -lm -lpthread -o /tmp/exotic \
 *     && /tmp/exotic tests/fuzz/corpus/parquet/exotic.parquet
 */
#include <stdio.h>
#include <string.h>

#include "parquet/format.h"

static nx_strbuf file = NX_STRBUF_INIT;

static void put(nx_strbuf *b, const void *p, size_t n)
{
    nx_strbuf_append(b, p, n);
}

static void put_u8(nx_strbuf *b, unsigned v)
{
    nx_strbuf_putc(b, (char)v);
}

static void put_uleb(nx_strbuf *b, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        put_u8(b, (unsigned)(v & 0x7f) | 0x80);
    put_u8(b, (unsigned)v);
}

static void put_zigzag(nx_strbuf *b, int64_t v)
{
    put_uleb(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* DELTA_BINARY_PACKED of at most 33 values: one block of 128 in 4 miniblocks,
 * every miniblock packed 8 bits wide (enough for these small deltas). */
static void put_delta(nx_strbuf *b, const int64_t *v, size_t n)
{
    put_uleb(b, 128);
    put_uleb(b, 4);
    put_uleb(b, n);
    put_zigzag(b, n ? v[0] : 0);
    if (n < 2)
        return;
    int64_t min = v[1] - v[0];
    for (size_t i = 2; i < n; i++)
        min = v[i] - v[i - 1] < min ? v[i] - v[i - 1] : min;
    put_zigzag(b, min);
    put(b, "\x08\x00\x00\x00", 4);
    for (size_t i = 1; i <= 32; i++)
        put_u8(b, i < n ? (unsigned)(v[i] - v[i - 1] - min) : 0);
}

/* Levels as one bit-packed run of the hybrid, least significant bit first. */
static void put_hybrid(nx_strbuf *b, const uint8_t *lv, size_t n, unsigned bw)
{
    uint8_t bytes[16] = {0};
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < bw; k++)
            bytes[(i * bw + k) / 8] |= (uint8_t)(((lv[i] >> k) & 1) << ((i * bw + k) % 8));
    put_u8(b, (unsigned)((n + 7) / 8) << 1 | 1);
    put(b, bytes, (n + 7) / 8 * bw);
}

/* The deprecated BIT_PACKED levels: most significant bit first, no header. */
static void put_bit_packed(nx_strbuf *b, const uint8_t *lv, size_t n, unsigned bw)
{
    uint8_t bytes[16] = {0};
    for (size_t i = 0, bit = 0; i < n; i++)
        for (unsigned k = bw; k-- > 0; bit++)
            bytes[bit / 8] |= (uint8_t)(((lv[i] >> k) & 1) << (7 - bit % 8));
    put(b, bytes, (n * bw + 7) / 8);
}

static size_t v2_page(int32_t n, int32_t nulls, int32_t enc, const nx_strbuf *def, const nx_strbuf *vals)
{
    size_t at = file.len, len = def->len + vals->len;
    nxth_writer w;
    nxth_writer_init(&w, &file);
    nxth_struct_begin(&w);
    nxth_field_i32(&w, 1, PQ_PAGE_DATA_V2);
    nxth_field_i32(&w, 2, (int32_t)len);
    nxth_field_i32(&w, 3, (int32_t)len);
    nxth_field_struct_begin(&w, 8);
    nxth_field_i32(&w, 1, n);
    nxth_field_i32(&w, 2, nulls);
    nxth_field_i32(&w, 3, n);
    nxth_field_i32(&w, 4, enc);
    nxth_field_i32(&w, 5, (int32_t)def->len);
    nxth_field_i32(&w, 6, 0);
    nxth_field_bool(&w, 7, false);
    nxth_struct_end(&w);
    nxth_struct_end(&w);
    put(&file, def->data, def->len);
    put(&file, vals->data, vals->len);
    return at;
}

static size_t v1_page(int32_t n, const nx_strbuf *body)
{
    pq_page_header h = {.type = PQ_PAGE_DATA, .uncompressed_page_size = (int32_t)body->len,
                        .compressed_page_size = (int32_t)body->len, .has_data_page_header = true};
    h.data_page_header = (pq_data_page_header){n, PQ_ENC_PLAIN, PQ_ENC_BIT_PACKED, PQ_ENC_BIT_PACKED, false, {0}};
    size_t at = file.len;
    pq_write_page_header(&file, &h);
    put(&file, body->data, body->len);
    return at;
}

/* s: optional strings as DELTA_BYTE_ARRAY (the spec's example words). */
static size_t page_strings(void)
{
    const uint8_t def[6] = {1, 0, 1, 1, 1, 0};
    const int64_t prefix[4] = {0, 2, 0, 3}, suffix[4] = {4, 2, 6, 5};
    nx_strbuf d = NX_STRBUF_INIT, v = NX_STRBUF_INIT;
    put_hybrid(&d, def, 6, 1);
    put_delta(&v, prefix, 4);
    put_delta(&v, suffix, 4);
    nx_strbuf_puts(&v, "axislebabbleyhood");
    size_t at = v2_page(6, 2, PQ_ENC_DELTA_BYTE_ARRAY, &d, &v);
    nx_strbuf_free(&d);
    nx_strbuf_free(&v);
    return at;
}

/* f: required doubles as BYTE_STREAM_SPLIT. */
static size_t page_doubles(void)
{
    const double f[6] = {1.5, -2, 0, 3.25, 1e300, -0.0};
    nx_strbuf d = NX_STRBUF_INIT, v = NX_STRBUF_INIT;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 6; i++)
            put_u8(&v, ((const uint8_t *)&f[i])[k]);
    size_t at = v2_page(6, 0, PQ_ENC_BYTE_STREAM_SPLIT, &d, &v);
    nx_strbuf_free(&v);
    return at;
}

/* b: optional booleans, RLE encoded (length-prefixed even in v2 pages). */
static size_t page_booleans(void)
{
    const uint8_t def[6] = {1, 1, 0, 1, 1, 1}, vals[5] = {1, 0, 1, 1, 0};
    nx_strbuf d = NX_STRBUF_INIT, v = NX_STRBUF_INIT, runs = NX_STRBUF_INIT;
    put_hybrid(&d, def, 6, 1);
    put_hybrid(&runs, vals, 5, 1);
    uint32_t len = (uint32_t)runs.len;
    put(&v, &len, 4);
    put(&v, runs.data, runs.len);
    size_t at = v2_page(6, 1, PQ_ENC_RLE, &d, &v);
    nx_strbuf_free(&d);
    nx_strbuf_free(&v);
    nx_strbuf_free(&runs);
    return at;
}

/* n: required INT32 as DELTA_BINARY_PACKED (the spec's example 2, cut to 6). */
static size_t page_ints(void)
{
    const int64_t n[6] = {7, 5, 3, 1, 2, 3};
    nx_strbuf d = NX_STRBUF_INIT, v = NX_STRBUF_INIT;
    put_delta(&v, n, 6);
    size_t at = v2_page(6, 0, PQ_ENC_DELTA_BINARY_PACKED, &d, &v);
    nx_strbuf_free(&v);
    return at;
}

/* li: optional list<optional int64> rows [1,2] null [3,4,null] [] [6] [7]
 * over two v1 pages with BIT_PACKED levels; row 2 ends on the second page. */
static size_t pages_list(void)
{
    const uint8_t rep1[4] = {0, 1, 0, 0}, def1[4] = {3, 3, 0, 3};
    const uint8_t rep2[5] = {1, 1, 0, 0, 0}, def2[5] = {3, 2, 1, 3, 3};
    const int64_t v1[3] = {1, 2, 3}, v2[3] = {4, 6, 7};
    nx_strbuf b = NX_STRBUF_INIT;
    put_bit_packed(&b, rep1, 4, 1);
    put_bit_packed(&b, def1, 4, 2);
    put(&b, v1, sizeof v1);
    size_t at = v1_page(4, &b);
    b.len = 0;
    put_bit_packed(&b, rep2, 5, 1);
    put_bit_packed(&b, def2, 5, 2);
    put(&b, v2, sizeof v2);
    v1_page(5, &b);
    nx_strbuf_free(&b);
    return at;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: exotic_seeds FILE\n");
        return 2;
    }
    pq_schema_element schema[] = {
        {.name = "schema", .num_children = 5},
        {.name = "s", .has_type = true, .type = PQ_BYTE_ARRAY, .has_repetition = true, .repetition = PQ_OPTIONAL},
        {.name = "f", .has_type = true, .type = PQ_DOUBLE, .has_repetition = true, .repetition = PQ_REQUIRED},
        {.name = "b", .has_type = true, .type = PQ_BOOLEAN, .has_repetition = true, .repetition = PQ_OPTIONAL},
        {.name = "n", .has_type = true, .type = PQ_INT32, .has_repetition = true, .repetition = PQ_REQUIRED},
        {.name = "li", .has_repetition = true, .repetition = PQ_OPTIONAL, .num_children = 1,
         .has_converted_type = true, .converted_type = PQ_CONVERTED_LIST},
        {.name = "list", .has_repetition = true, .repetition = PQ_REPEATED, .num_children = 1},
        {.name = "element", .has_type = true, .type = PQ_INT64, .has_repetition = true, .repetition = PQ_OPTIONAL},
    };
    static const char *paths[5][3] = {{"s"}, {"f"}, {"b"}, {"n"}, {"li", "list", "element"}};
    static const int32_t types[5] = {PQ_BYTE_ARRAY, PQ_DOUBLE, PQ_BOOLEAN, PQ_INT32, PQ_INT64};
    size_t (*const pages[5])(void) = {page_strings, page_doubles, page_booleans, page_ints, pages_list};
    int32_t enc = PQ_ENC_PLAIN;
    pq_column_chunk chunks[5];
    memset(chunks, 0, sizeof chunks);
    put(&file, "PAR1", 4);
    for (int c = 0; c < 5; c++) {
        size_t start = pages[c]();
        pq_column_meta *m = &chunks[c].meta;
        *m = (pq_column_meta){.type = types[c], .encodings = &enc, .n_encodings = 1,
                              .path_in_schema = paths[c], .n_path = c == 4 ? 3 : 1, .num_values = c == 4 ? 9 : 6,
                              .data_page_offset = (int64_t)start};
        m->total_compressed_size = m->total_uncompressed_size = (int64_t)(file.len - start);
    }
    pq_row_group rg = {.columns = chunks, .n_columns = 5, .num_rows = 6};
    pq_file_meta meta = {.version = 2, .schema = schema, .n_schema = 8, .num_rows = 6, .row_groups = &rg,
                         .n_row_groups = 1, .created_by = "nxprof exotic_seeds"};
    nx_strbuf foot = NX_STRBUF_INIT;
    pq_write_file_meta(&foot, &meta);
    put(&file, foot.data, foot.len);
    uint32_t len = (uint32_t)foot.len;
    put(&file, &len, 4);
    put(&file, "PAR1", 4);
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(file.data, 1, file.len, f) != file.len || fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    nx_strbuf_free(&foot);
    nx_strbuf_free(&file);
    return 0;
}
