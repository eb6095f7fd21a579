/*
 * test_parquet_reader.c — unit tests of the Parquet reader (src/parquet/reader.c,
 * scan.c, chunk.c, format_read.c) on files assembled by hand, byte by byte:
 * footer and metadata error paths (truncated file, bad magic, footer length
 * beyond the file, garbage footer, inconsistent schema and row groups), the
 * mapping of schema shapes to columns, and page-level reading that writers
 * seldom produce (rows spanning pages, v2 pages, BIT_PACKED levels, index
 * pages, dictionaries) with the error messages corrupt pages must give.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parquet/format.h"
#include "parquet/parquet.h"

/* ------------------------------------------------------------ byte helpers */

typedef struct bytes {
    uint8_t d[4096];
    size_t n;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    assert_true(b->n + n <= sizeof b->d);
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put_u8(bytes *b, uint8_t v)
{
    put(b, &v, 1);
}

static void put_u32(bytes *b, uint32_t v)
{
    put(b, &v, 4);
}

/* Levels as one bit-packed run of the hybrid, optionally length-prefixed (v1). */
static void put_levels(bytes *b, const uint8_t *lv, size_t n, unsigned bw, bool prefix)
{
    size_t groups = (n + 7) / 8, len = 1 + groups * bw;
    assert_true(groups < 64);
    if (prefix)
        put_u32(b, (uint32_t)len);
    put_u8(b, (uint8_t)(groups << 1 | 1));
    size_t start = b->n;
    for (size_t i = 0; i < groups * bw; i++)
        put_u8(b, 0);
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < bw; k++)
            if ((lv[i] >> k) & 1)
                b->d[start + (i * bw + k) / 8] |= (uint8_t)(1u << ((i * bw + k) % 8));
}

static void put_plain_string(bytes *b, const char *s)
{
    put_u32(b, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}

/* ------------------------------------------------------------ file builder */

/* A one-row-group Parquet file assembled by hand: pages are appended as they
 * come; the footer is written from the schema and chunks declared. */
typedef struct tfile {
    nx_strbuf b;
    pq_schema_element schema[32];
    uint32_t n_schema;
    pq_column_chunk chunks[8];
    const char *paths[8][3];
    int32_t encodings[1];
    uint32_t n_chunks;
    int64_t rows;
    bool no_row_group;
} tfile;

static void tf_init(tfile *f, int64_t rows)
{
    memset(f, 0, sizeof *f);
    nx_strbuf_append(&f->b, "PAR1", 4);
    f->rows = rows;
    f->schema[f->n_schema++] = (pq_schema_element){.name = "schema"};
}

/* A schema element; type < 0 makes a group, converted < 0 leaves it unannotated. */
static void tf_el(tfile *f, const char *name, int type, int rep, int children, int converted)
{
    pq_schema_element *e = &f->schema[f->n_schema++];
    *e = (pq_schema_element){.name = name, .has_repetition = true, .repetition = rep, .num_children = children};
    if (type >= 0) {
        e->has_type = true;
        e->type = type;
    }
    if (converted >= 0) {
        e->has_converted_type = true;
        e->converted_type = converted;
    }
}

static size_t tf_raw_page(tfile *f, const pq_page_header *h, const void *body, size_t len)
{
    size_t at = f->b.len;
    pq_write_page_header(&f->b, h);
    nx_strbuf_append(&f->b, body, len);
    return at;
}

static size_t tf_data_page(tfile *f, int32_t n_values, int32_t enc, int32_t level_enc, const bytes *body)
{
    pq_page_header h = {.type = PQ_PAGE_DATA, .uncompressed_page_size = (int32_t)body->n,
                        .compressed_page_size = (int32_t)body->n, .has_data_page_header = true};
    h.data_page_header = (pq_data_page_header){n_values, enc, level_enc, level_enc, false, {0}};
    return tf_raw_page(f, &h, body->d, body->n);
}

static size_t tf_dict_page(tfile *f, int32_t n_values, const bytes *body)
{
    pq_page_header h = {.type = PQ_PAGE_DICTIONARY, .uncompressed_page_size = (int32_t)body->n,
                        .compressed_page_size = (int32_t)body->n, .has_dictionary_page_header = true};
    h.dictionary_page_header = (pq_dictionary_page_header){n_values, PQ_ENC_PLAIN, false};
    return tf_raw_page(f, &h, body->d, body->n);
}

/* DATA_PAGE_V2 header, written field by field (format_write.c has no v2 writer). */
static size_t tf_v2_page(tfile *f, int32_t n_values, int32_t n_nulls, int32_t n_rows, int32_t rep_len, int32_t def_len,
                         const bytes *body)
{
    size_t at = f->b.len;
    nxth_writer w;
    nxth_writer_init(&w, &f->b);
    nxth_struct_begin(&w);
    nxth_field_i32(&w, 1, PQ_PAGE_DATA_V2);
    nxth_field_i32(&w, 2, (int32_t)body->n);
    nxth_field_i32(&w, 3, (int32_t)body->n);
    nxth_field_struct_begin(&w, 8);
    nxth_field_i32(&w, 1, n_values);
    nxth_field_i32(&w, 2, n_nulls);
    nxth_field_i32(&w, 3, n_rows);
    nxth_field_i32(&w, 4, PQ_ENC_PLAIN);
    nxth_field_i32(&w, 5, def_len);
    nxth_field_i32(&w, 6, rep_len);
    nxth_field_bool(&w, 7, false);
    nxth_struct_end(&w);
    nxth_struct_end(&w);
    nx_strbuf_append(&f->b, body->d, body->n);
    return at;
}

/* Declares the column chunk whose pages start at `start` and end here. */
static pq_column_chunk *tf_chunk(tfile *f, int32_t type, size_t start, int64_t num_values, const char *p0,
                                 const char *p1, const char *p2)
{
    uint32_t i = f->n_chunks++;
    f->paths[i][0] = p0;
    f->paths[i][1] = p1;
    f->paths[i][2] = p2;
    pq_column_chunk *c = &f->chunks[i];
    memset(c, 0, sizeof *c);
    c->meta.type = type;
    c->meta.encodings = f->encodings;
    c->meta.n_encodings = 1;
    c->meta.path_in_schema = f->paths[i];
    c->meta.n_path = p2 ? 3 : p1 ? 2 : 1;
    c->meta.num_values = num_values;
    c->meta.total_compressed_size = c->meta.total_uncompressed_size = (int64_t)(f->b.len - start);
    c->meta.data_page_offset = (int64_t)start;
    return c;
}

static void tf_offset_index(tfile *f, pq_column_chunk *c, const pq_page_location *locs, uint32_t n)
{
    pq_offset_index oi = {(pq_page_location *)locs, n};
    c->has_offset_index = true;
    c->offset_index_offset = (int64_t)f->b.len;
    pq_write_offset_index(&f->b, &oi);
    c->offset_index_length = (int32_t)(f->b.len - (size_t)c->offset_index_offset);
}

static void tf_finish(tfile *f)
{
    pq_row_group rg = {.columns = f->chunks, .n_columns = f->n_chunks, .num_rows = f->rows};
    pq_kv kv[] = {{"k1", "v1"}, {"novalue", NULL}};
    pq_file_meta m = {.version = 1, .schema = f->schema, .n_schema = f->n_schema, .num_rows = f->rows,
                      .row_groups = &rg, .n_row_groups = f->no_row_group ? 0 : 1, .kv = kv, .n_kv = 2,
                      .created_by = "hand-built"};
    nx_strbuf foot = NX_STRBUF_INIT;
    pq_write_file_meta(&foot, &m);
    assert_false(foot.failed);
    nx_strbuf_append(&f->b, foot.data, foot.len);
    uint32_t len = (uint32_t)foot.len;
    nx_strbuf_append(&f->b, &len, 4);
    nx_strbuf_append(&f->b, "PAR1", 4);
    nx_strbuf_free(&foot);
    assert_false(f->b.failed);
}

static nxpq_reader *tf_open(tfile *f, nx_error *err)
{
    return nxpq_reader_open_memory(f->b.data, f->b.len, "t.parquet", err);
}

/* Opening must fail with a message that contains `want`. */
static void expect_open_error(const void *data, size_t len, const char *want)
{
    nx_error err;
    nxpq_reader *r = nxpq_reader_open_memory(data, len, "t.parquet", &err);
    assert_null(r);
    if (!strstr(err.msg, want) || strncmp(err.msg, "t.parquet: ", 11) != 0)
        fail_msg("error '%s' lacks '%s'", err.msg, want);
}

/* ----------------------------------------------------------- scan helpers */

/* Scans the whole file (all columns) and returns the first batch's column j;
 * the file must hold a single batch. */
static const nxpq_column_data *scan_one(nxpq_reader *r, nxpq_scan **s, size_t j)
{
    nx_error err;
    *s = nxpq_scan_open(r, NULL, &err);
    assert_non_null(*s);
    const nxpq_batch *b;
    if (nxpq_scan_next(*s, &b, &err) != 1)
        fail_msg("scan failed: %s", err.msg);
    return &b->columns[j];
}

/* Scanning must fail with exactly `want`. */
static void expect_scan_error(tfile *f, const char *want)
{
    nx_error err;
    nxpq_reader *r = tf_open(f, &err);
    if (!r)
        fail_msg("open failed: %s", err.msg);
    nxpq_scan *s = nxpq_scan_open(r, NULL, &err);
    assert_non_null(s);
    const nxpq_batch *b;
    int rc;
    while ((rc = nxpq_scan_next(s, &b, &err)) == 1)
        ;
    assert_int_equal(rc, -1);
    if (strcmp(err.msg, want) != 0 && !(want[0] == '~' && strstr(err.msg, want + 1)))
        fail_msg("error '%s', expected '%s'", err.msg, want);
    assert_int_equal(nxpq_scan_next(s, &b, &err), -1); /* stays failed */
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f->b);
}

/* A file with one required INT32 column "a" holding 1..5 in a PLAIN page. */
static void build_int32_file(tfile *f)
{
    tf_init(f, 5);
    f->schema[0].num_children = 1;
    tf_el(f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    bytes body = {.n = 0};
    for (int32_t v = 1; v <= 5; v++)
        put(&body, &v, 4);
    size_t at = tf_data_page(f, 5, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
    tf_chunk(f, PQ_INT32, at, 5, "a", NULL, NULL);
    tf_finish(f);
}

/* --------------------------------------------------------- footer errors */

static void test_footer_errors(void **state)
{
    (void)state;
    expect_open_error("PAR1PAR1", 8, "too small");
    expect_open_error("", 0, "too small");
    expect_open_error("XXXX\x05\x00\x00\x00PAR1", 12, "no PAR1 magic at the start");
    expect_open_error("PAR1\x01\x00\x00\x00PARE", 12, "encrypted");
    expect_open_error("PAR1\x00\x00\x00\x00PAR1", 12, "footer length 0");
    expect_open_error("PAR1\x01\x00\x00\x00PAR1", 12, "footer length 1 does not fit");
    static const uint8_t garbage[] = {'P', 'A', 'R', '1', 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                      8,   0,   0,   0,   'P',  'A',  'R',  '1'};
    expect_open_error(garbage, sizeof garbage, "corrupt footer");
}

static void test_truncated_and_patched_files(void **state)
{
    (void)state;
    tfile f;
    build_int32_file(&f);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    assert_non_null(r);
    nxpq_reader_close(r);
    for (size_t cut = 1; cut < f.b.len; cut += 7)
        expect_open_error(f.b.data, f.b.len - cut, ""); /* any error will do */
    expect_open_error(f.b.data, f.b.len - 1, "no PAR1 magic at the end");
    /* Footer length pointing before the file start. */
    uint32_t huge = (uint32_t)f.b.len;
    memcpy(f.b.data + f.b.len - 8, &huge, 4);
    expect_open_error(f.b.data, f.b.len, "does not fit");
    /* Footer length one byte short: the struct runs off its end. */
    nx_strbuf_free(&f.b);
    build_int32_file(&f);
    uint32_t len;
    memcpy(&len, f.b.data + f.b.len - 8, 4);
    len--;
    memmove(f.b.data + f.b.len - 9, f.b.data + f.b.len - 8, 8);
    memcpy(f.b.data + f.b.len - 9, &len, 4);
    expect_open_error(f.b.data, f.b.len - 1, "corrupt footer");
    nx_strbuf_free(&f.b);
}

static void test_footer_missing_required_field(void **state)
{
    (void)state;
    nx_strbuf b = NX_STRBUF_INIT;
    nx_strbuf_append(&b, "PAR1", 4);
    nxth_writer w;
    nxth_writer_init(&w, &b);
    nxth_struct_begin(&w);
    nxth_field_i32(&w, 1, 1); /* version only */
    nxth_struct_end(&w);
    uint32_t len = (uint32_t)b.len - 4;
    nx_strbuf_append(&b, &len, 4);
    nx_strbuf_append(&b, "PAR1", 4);
    expect_open_error(b.data, b.len, "FileMetaData lacks required field 2");
    nx_strbuf_free(&b);
}

static void test_inconsistent_metadata(void **state)
{
    (void)state;
    tfile f;
    /* The root claims two children, the schema has one. */
    tf_init(&f, 5);
    f.schema[0].num_children = 2;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_finish(&f);
    expect_open_error(f.b.data, f.b.len, "more children");
    nx_strbuf_free(&f.b);
    /* A column chunk whose path is not the schema's leaf. */
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_chunk(&f, PQ_INT32, 4, 5, "b", NULL, NULL);
    tf_finish(&f);
    expect_open_error(f.b.data, f.b.len, "row group 0: column chunk 0 does not match schema field 'a'");
    nx_strbuf_free(&f.b);
    /* ... or whose type is not. */
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_chunk(&f, PQ_INT64, 4, 5, "a", NULL, NULL);
    tf_finish(&f);
    expect_open_error(f.b.data, f.b.len, "does not match");
    nx_strbuf_free(&f.b);
    /* Two leaves, one chunk. */
    tf_init(&f, 5);
    f.schema[0].num_children = 2;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_el(&f, "b", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_chunk(&f, PQ_INT32, 4, 5, "a", NULL, NULL);
    tf_finish(&f);
    expect_open_error(f.b.data, f.b.len, "1 column chunks, but the schema has 2 leaf columns");
    nx_strbuf_free(&f.b);
}

static void test_row_count_mismatch(void **state)
{
    (void)state;
    tfile f;
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_chunk(&f, PQ_INT32, 4, 5, "a", NULL, NULL);
    /* tf_finish writes f.rows for both; patch the row group through a second build. */
    pq_row_group rg = {.columns = f.chunks, .n_columns = 1, .num_rows = 4};
    pq_file_meta m = {.version = 1, .schema = f.schema, .n_schema = f.n_schema, .num_rows = 5,
                      .row_groups = &rg, .n_row_groups = 1};
    nx_strbuf foot = NX_STRBUF_INIT;
    pq_write_file_meta(&foot, &m);
    nx_strbuf_append(&f.b, foot.data, foot.len);
    uint32_t len = (uint32_t)foot.len;
    nx_strbuf_append(&f.b, &len, 4);
    nx_strbuf_append(&f.b, "PAR1", 4);
    expect_open_error(f.b.data, f.b.len, "row groups hold 4 rows, the footer says 5");
    nx_strbuf_free(&foot);
    nx_strbuf_free(&f.b);
}

static void test_open_from_disk(void **state)
{
    (void)state;
    nx_error err;
    assert_null(nxpq_reader_open("/nonexistent/dir/x.parquet", &err));
    assert_non_null(strstr(err.msg, "/nonexistent/dir/x.parquet: cannot open"));
    char path[] = "/tmp/nxpq_reader_testXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_null(nxpq_reader_open(path, &err)); /* empty file */
    assert_non_null(strstr(err.msg, "too small"));
    tfile f;
    build_int32_file(&f);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(f.b.data, 1, f.b.len, fp), f.b.len);
    fclose(fp);
    nxpq_reader *r = nxpq_reader_open(path, &err);
    assert_non_null(r);
    nxpq_scan *s;
    const nxpq_column_data *c = scan_one(r, &s, 0);
    assert_int_equal(c->values.i32[4], 5);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    unlink(path);
    nx_strbuf_free(&f.b);
}

/* ----------------------------------------------------------- schema shapes */

static void build_shapes(tfile *f)
{
    tf_init(f, 0);
    f->no_row_group = true;
    f->schema[0].num_children = 14;
    tf_el(f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_el(f, "b", PQ_BYTE_ARRAY, PQ_OPTIONAL, 0, PQ_CONVERTED_UTF8);
    tf_el(f, "c", -1, PQ_OPTIONAL, 1, PQ_CONVERTED_LIST); /* pyarrow: list/element */
    tf_el(f, "list", -1, PQ_REPEATED, 1, -1);
    tf_el(f, "element", PQ_INT64, PQ_OPTIONAL, 0, -1);
    tf_el(f, "d", -1, PQ_REQUIRED, 1, PQ_CONVERTED_LIST); /* list/item, required all the way */
    tf_el(f, "list", -1, PQ_REPEATED, 1, -1);
    tf_el(f, "item", PQ_BYTE_ARRAY, PQ_REQUIRED, 0, -1);
    tf_el(f, "e", -1, PQ_OPTIONAL, 1, PQ_CONVERTED_LIST); /* 2-level: repeated primitive */
    tf_el(f, "array", PQ_INT64, PQ_REPEATED, 0, -1);
    tf_el(f, "f", PQ_BYTE_ARRAY, PQ_REPEATED, 0, -1); /* bare repeated field */
    tf_el(f, "g", -1, PQ_OPTIONAL, 2, -1);            /* struct */
    tf_el(f, "x", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_el(f, "y", PQ_INT64, PQ_OPTIONAL, 0, -1);
    tf_el(f, "h", -1, PQ_OPTIONAL, 1, 1); /* MAP */
    tf_el(f, "key_value", -1, PQ_REPEATED, 2, -1);
    tf_el(f, "key", PQ_BYTE_ARRAY, PQ_REQUIRED, 0, -1);
    tf_el(f, "value", PQ_INT32, PQ_OPTIONAL, 0, -1);
    tf_el(f, "i", PQ_INT96, PQ_OPTIONAL, 0, -1);
    tf_el(f, "j", -1, PQ_OPTIONAL, 1, PQ_CONVERTED_LIST); /* list of INT32 */
    tf_el(f, "list", -1, PQ_REPEATED, 1, -1);
    tf_el(f, "element", PQ_INT32, PQ_OPTIONAL, 0, -1);
    tf_el(f, "k", -1, PQ_OPTIONAL, 1, PQ_CONVERTED_LIST); /* "array" group: struct elements */
    tf_el(f, "array", -1, PQ_REPEATED, 1, -1);
    tf_el(f, "x", PQ_INT64, PQ_REQUIRED, 0, -1);
    tf_el(f, "l", PQ_DOUBLE, PQ_OPTIONAL, 0, -1);
    tf_el(f, "m", PQ_BOOLEAN, PQ_REQUIRED, 0, -1);
    tf_el(f, "n", PQ_FLOAT, PQ_OPTIONAL, 0, -1);
    tf_finish(f);
}

static void test_schema_shapes(void **state)
{
    (void)state;
    tfile f;
    build_shapes(&f);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    if (!r)
        fail_msg("%s", err.msg);
    static const struct {
        const char *name;
        nxpq_type type;
        bool nullable;
        int physical;
    } want[] = {
        {"a", NXPQ_INT32, false, PQ_INT32},           {"b", NXPQ_STRING, true, PQ_BYTE_ARRAY},
        {"c", NXPQ_LIST_INT64, true, PQ_INT64},       {"d", NXPQ_LIST_STRING, false, PQ_BYTE_ARRAY},
        {"e", NXPQ_LIST_INT64, true, PQ_INT64},       {"f", NXPQ_LIST_STRING, false, PQ_BYTE_ARRAY},
        {"g", NXPQ_UNSUPPORTED, true, -1},            {"h", NXPQ_UNSUPPORTED, true, -1},
        {"i", NXPQ_UNSUPPORTED, true, PQ_INT96},      {"j", NXPQ_UNSUPPORTED, true, PQ_INT32},
        {"k", NXPQ_UNSUPPORTED, true, -1},            {"l", NXPQ_DOUBLE, true, PQ_DOUBLE},
        {"m", NXPQ_BOOLEAN, false, PQ_BOOLEAN},       {"n", NXPQ_FLOAT, true, PQ_FLOAT},
    };
    assert_int_equal(nxpq_reader_num_columns(r), 14);
    for (size_t i = 0; i < 14; i++) {
        const nxpq_column_info *ci = nxpq_reader_column(r, i);
        assert_string_equal(ci->name, want[i].name);
        if (ci->type != want[i].type || ci->nullable != want[i].nullable || ci->physical_type != want[i].physical)
            fail_msg("column %s: type %d nullable %d physical %d", ci->name, ci->type, ci->nullable,
                     ci->physical_type);
    }
    assert_null(nxpq_reader_column(r, 14));
    assert_int_equal(nxpq_reader_find_column(r, "l"), 11);
    assert_int_equal(nxpq_reader_find_column(r, "zz"), -1);
    assert_string_equal(nxpq_reader_metadata(r, "k1"), "v1");
    assert_null(nxpq_reader_metadata(r, "novalue"));
    assert_null(nxpq_reader_metadata(r, "absent"));
    assert_string_equal(nxpq_reader_created_by(r), "hand-built");
    assert_int_equal(nxpq_reader_num_rows(r), 0);
    assert_int_equal(nxpq_reader_num_row_groups(r), 0);

    /* Unsupported columns are listed but cannot be projected. */
    size_t g = 6, j = 9, b = 1;
    nxpq_scan_options o = {.columns = &g, .n_columns = 1};
    assert_null(nxpq_scan_open(r, &o, &err));
    assert_string_equal(err.msg, "t.parquet: column 'g': its type (a struct) is not supported by this reader");
    o.columns = &j;
    assert_null(nxpq_scan_open(r, &o, &err));
    assert_non_null(strstr(err.msg, "column 'j': its type (a list of INT32)"));
    size_t bad = 99;
    o.columns = &bad;
    assert_null(nxpq_scan_open(r, &o, &err));
    nxpq_range range = {b, 0, 1};
    nxpq_scan_options ro = {.ranges = &range, .n_ranges = 1};
    assert_null(nxpq_scan_open(r, &ro, &err));
    assert_non_null(strstr(err.msg, "column 'b': a range needs an INT32 or INT64 column"));

    /* The default projection skips them; no row groups, no batches. */
    nxpq_scan *s = nxpq_scan_open(r, NULL, &err);
    assert_non_null(s);
    const nxpq_batch *batch;
    assert_int_equal(nxpq_scan_next(s, &batch, &err), 0);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
}

/* -------------------------------------------------------------- pages */

static void test_plain_batches(void **state)
{
    (void)state;
    tfile f;
    build_int32_file(&f);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    assert_non_null(r);
    nxpq_scan_options o = {.batch_rows = 2};
    nxpq_scan *s = nxpq_scan_open(r, &o, &err);
    const nxpq_batch *b;
    int64_t next = 0;
    while (nxpq_scan_next(s, &b, &err) == 1) {
        assert_int_equal(b->first_row, next);
        assert_true(b->n_rows <= 2);
        assert_null(b->columns[0].valid);
        for (size_t i = 0; i < b->n_rows; i++)
            assert_int_equal(b->columns[0].values.i32[i], next + (int64_t)i + 1);
        next += (int64_t)b->n_rows;
    }
    assert_int_equal(next, 5);
    nxpq_scan_stats st;
    nxpq_scan_get_stats(s, &st);
    assert_int_equal(st.row_groups_total, 1);
    assert_int_equal(st.pages_read, 1);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
}

/* Optional INT64, def levels 1,0,1,1,0 (RLE in v1 pages, or the deprecated
 * BIT_PACKED), values 10, 20, 30. */
static void build_optional_int64(tfile *f, int32_t level_enc)
{
    tf_init(f, 5);
    f->schema[0].num_children = 1;
    tf_el(f, "x", PQ_INT64, PQ_OPTIONAL, 0, -1);
    const uint8_t def[] = {1, 0, 1, 1, 0};
    bytes body = {.n = 0};
    if (level_enc == PQ_ENC_RLE)
        put_levels(&body, def, 5, 1, true);
    else
        put_u8(&body, 0xB0); /* 10110 000, most significant bit first */
    for (int64_t v = 10; v <= 30; v += 10)
        put(&body, &v, 8);
    size_t at = tf_data_page(f, 5, PQ_ENC_PLAIN, level_enc, &body);
    tf_chunk(f, PQ_INT64, at, 5, "x", NULL, NULL);
    tf_finish(f);
}

static void check_optional_int64(tfile *f)
{
    nx_error err;
    nxpq_reader *r = tf_open(f, &err);
    assert_non_null(r);
    nxpq_scan *s;
    const nxpq_column_data *c = scan_one(r, &s, 0);
    const uint8_t valid[] = {1, 0, 1, 1, 0};
    const int64_t vals[] = {10, 0, 20, 30, 0};
    assert_non_null(c->valid);
    assert_memory_equal(c->valid, valid, 5);
    assert_memory_equal(c->values.i64, vals, sizeof vals);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f->b);
}

static void test_nulls_rle_and_bit_packed_levels(void **state)
{
    (void)state;
    tfile f;
    build_optional_int64(&f, PQ_ENC_RLE);
    check_optional_int64(&f);
    build_optional_int64(&f, PQ_ENC_BIT_PACKED);
    check_optional_int64(&f);
}

static void test_corrupt_page_messages(void **state)
{
    (void)state;
    tfile f;
    /* Definition levels announce two bit-packed groups but hold one byte. */
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "x", PQ_INT64, PQ_OPTIONAL, 0, -1);
    bytes body = {.n = 0};
    put_u32(&body, 2);
    put_u8(&body, 2 << 1 | 1);
    put_u8(&body, 0xFF);
    size_t at = tf_data_page(&f, 16, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
    tf_chunk(&f, PQ_INT64, at, 16, "x", NULL, NULL);
    f.rows = 16;
    tf_finish(&f);
    expect_scan_error(&f, "t.parquet: column 'x', row group 0, page at offset 4: definition levels: "
                          "bit-packed run past the end of the data");

    /* A page of more values than the reader allows: refused before allocating. */
    tf_init(&f, 1 << 30);
    f.schema[0].num_children = 1;
    tf_el(&f, "x", PQ_INT64, PQ_REQUIRED, 0, -1);
    body.n = 0;
    put_u8(&body, 0);
    at = tf_data_page(&f, 1 << 30, PQ_ENC_RLE_DICTIONARY, PQ_ENC_RLE, &body);
    tf_chunk(&f, PQ_INT64, at, 1 << 30, "x", NULL, NULL);
    tf_finish(&f);
    expect_scan_error(&f, "~page holds 1073741824 values, more than this reader's limit");

    /* The header's uncompressed size disagrees with an uncompressed page. */
    tf_init(&f, 1);
    f.schema[0].num_children = 1;
    tf_el(&f, "x", PQ_INT64, PQ_REQUIRED, 0, -1);
    body.n = 0;
    put(&body, "\x01\x00\x00\x00\x00\x00\x00\x00", 8);
    pq_page_header h = {.type = PQ_PAGE_DATA, .uncompressed_page_size = 9, .compressed_page_size = 8,
                        .has_data_page_header = true};
    h.data_page_header = (pq_data_page_header){1, PQ_ENC_PLAIN, PQ_ENC_RLE, PQ_ENC_RLE, false, {0}};
    at = tf_raw_page(&f, &h, body.d, body.n);
    tf_chunk(&f, PQ_INT64, at, 1, "x", NULL, NULL);
    tf_finish(&f);
    expect_scan_error(&f, "~page holds 8 bytes, its header says 9 uncompressed");

    /* A compressed page claiming more than its codec could ever expand it to. */
    tf_init(&f, 1);
    f.schema[0].num_children = 1;
    tf_el(&f, "x", PQ_INT64, PQ_REQUIRED, 0, -1);
    h.uncompressed_page_size = 1000;
    at = tf_raw_page(&f, &h, body.d, body.n);
    tf_chunk(&f, PQ_INT64, at, 1, "x", NULL, NULL)->meta.codec = NXPQ_SNAPPY;
    tf_finish(&f);
    expect_scan_error(&f, "~page claims 1000 uncompressed bytes from 8 compressed");

    /* A page longer than its column chunk. */
    tf_init(&f, 1);
    f.schema[0].num_children = 1;
    tf_el(&f, "x", PQ_INT64, PQ_REQUIRED, 0, -1);
    h.uncompressed_page_size = h.compressed_page_size = 100;
    at = tf_raw_page(&f, &h, body.d, body.n);
    tf_chunk(&f, PQ_INT64, at, 1, "x", NULL, NULL);
    tf_finish(&f);
    expect_scan_error(&f, "~runs past the end of the column chunk");

    /* A codec this build cannot decode, and a chunk outside the file. */
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    pq_column_chunk *c = tf_chunk(&f, PQ_INT32, 4, 5, "a", NULL, NULL);
    c->meta.codec = 3; /* LZO */
    tf_finish(&f);
    expect_scan_error(&f, "t.parquet: column 'a', row group 0: compression codec 3 is not supported");
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    c = tf_chunk(&f, PQ_INT32, 4, 5, "a", NULL, NULL);
    c->meta.data_page_offset = 1 << 20;
    tf_finish(&f);
    expect_scan_error(&f, "~lies outside the file's data");
}

/* Optional strings: a dictionary page ("aa", "b") and RLE_DICTIONARY indices
 * 1, null, 0, 1 — or an index out of the dictionary's range. */
static void build_dictionary(tfile *f, uint8_t last_index)
{
    tf_init(f, 4);
    f->schema[0].num_children = 1;
    tf_el(f, "s", PQ_BYTE_ARRAY, PQ_OPTIONAL, 0, PQ_CONVERTED_UTF8);
    bytes dict = {.n = 0};
    put_plain_string(&dict, "aa");
    put_plain_string(&dict, "b");
    size_t start = tf_dict_page(f, 2, &dict);
    const uint8_t def[] = {1, 0, 1, 1};
    const uint8_t idx[] = {1, 0, last_index};
    bytes body = {.n = 0};
    put_levels(&body, def, 4, 1, true);
    put_u8(&body, 2); /* index bit width */
    put_levels(&body, idx, 3, 2, false);
    tf_data_page(f, 4, PQ_ENC_RLE_DICTIONARY, PQ_ENC_RLE, &body);
    pq_column_chunk *c = tf_chunk(f, PQ_BYTE_ARRAY, start, 4, "s", NULL, NULL);
    c->meta.has_dictionary_page_offset = true;
    c->meta.dictionary_page_offset = (int64_t)start;
    tf_finish(f);
}

static void test_dictionary_pages(void **state)
{
    (void)state;
    tfile f;
    build_dictionary(&f, 1);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    assert_non_null(r);
    nxpq_scan *s;
    const nxpq_column_data *c = scan_one(r, &s, 0);
    const uint64_t off[] = {0, 1, 1, 3, 4};
    assert_memory_equal(c->offsets, off, sizeof off);
    assert_memory_equal(c->data, "baab", 4);
    assert_int_equal(c->valid[1], 0);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
    build_dictionary(&f, 2);
    expect_scan_error(&f, "~dictionary index 2 out of range (dictionary has 2 entries)");
}

/* An INDEX_PAGE (and a page type from the future) before the data is skipped. */
static void test_unknown_pages_skipped(void **state)
{
    (void)state;
    tfile f;
    tf_init(&f, 5);
    f.schema[0].num_children = 1;
    tf_el(&f, "a", PQ_INT32, PQ_REQUIRED, 0, -1);
    pq_page_header ih = {.type = PQ_PAGE_INDEX, .uncompressed_page_size = 3, .compressed_page_size = 3};
    size_t start = tf_raw_page(&f, &ih, "xyz", 3);
    ih.type = 42;
    tf_raw_page(&f, &ih, "xyz", 3);
    bytes body = {.n = 0};
    for (int32_t v = 1; v <= 5; v++)
        put(&body, &v, 4);
    tf_data_page(&f, 5, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
    tf_chunk(&f, PQ_INT32, start, 5, "a", NULL, NULL);
    tf_finish(&f);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    nxpq_scan *s;
    const nxpq_column_data *c = scan_one(r, &s, 0);
    assert_int_equal(c->values.i32[0], 1);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
}

/* A DATA_PAGE_V2: levels unprefixed before the values. */
static void test_data_page_v2(void **state)
{
    (void)state;
    tfile f;
    tf_init(&f, 3);
    f.schema[0].num_children = 1;
    tf_el(&f, "s", PQ_BYTE_ARRAY, PQ_OPTIONAL, 0, PQ_CONVERTED_UTF8);
    const uint8_t def[] = {1, 0, 1};
    bytes body = {.n = 0};
    put_levels(&body, def, 3, 1, false);
    int32_t def_len = (int32_t)body.n;
    put_plain_string(&body, "hello");
    put_plain_string(&body, "");
    size_t at = tf_v2_page(&f, 3, 1, 3, 0, def_len, &body);
    tf_chunk(&f, PQ_BYTE_ARRAY, at, 3, "s", NULL, NULL);
    tf_finish(&f);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    nxpq_scan *s;
    const nxpq_column_data *c = scan_one(r, &s, 0);
    const uint64_t off[] = {0, 5, 5, 5};
    assert_memory_equal(c->offsets, off, sizeof off);
    assert_memory_equal(c->data, "hello", 5);
    const uint8_t valid[] = {1, 0, 1};
    assert_memory_equal(c->valid, valid, 3);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
}

/* Lists across pages read in order (no offset index): row 3 starts on the
 * first page and ends on the second, which v1 pages allow.
 *   id  li (optional list<optional int64>, levels: rep / def)
 *   0   [1, 2]           0/3 1/3
 *   1   null             0/0
 *   2   []               0/1
 *   3   [3, null, 4, 5]  0/3 1/2 | 1/3 1/3
 *   4   [6]              0/3
 */
static void build_spanning_lists(tfile *f)
{
    tf_init(f, 5);
    f->schema[0].num_children = 2;
    tf_el(f, "id", PQ_INT32, PQ_REQUIRED, 0, -1);
    tf_el(f, "li", -1, PQ_OPTIONAL, 1, PQ_CONVERTED_LIST);
    tf_el(f, "list", -1, PQ_REPEATED, 1, -1);
    tf_el(f, "element", PQ_INT64, PQ_OPTIONAL, 0, -1);
    bytes body = {.n = 0};
    for (int32_t v = 0; v < 5; v++)
        put(&body, &v, 4);
    size_t at = tf_data_page(f, 5, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
    tf_chunk(f, PQ_INT32, at, 5, "id", NULL, NULL);

    const uint8_t rep1[] = {0, 1, 0, 0, 0, 1}, def1[] = {3, 3, 0, 1, 3, 2};
    const uint8_t rep2[] = {1, 1, 0}, def2[] = {3, 3, 3};
    body.n = 0;
    put_levels(&body, rep1, 6, 1, true);
    put_levels(&body, def1, 6, 2, true);
    for (int64_t v = 1; v <= 3; v++)
        put(&body, &v, 8);
    size_t start = tf_data_page(f, 6, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
    body.n = 0;
    put_levels(&body, rep2, 3, 1, true);
    put_levels(&body, def2, 3, 2, true);
    for (int64_t v = 4; v <= 6; v++)
        put(&body, &v, 8);
    tf_data_page(f, 3, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
    tf_chunk(f, PQ_INT64, start, 9, "li", "list", "element");
    tf_finish(f);
}

/* The rows as "id:[...]" text, from every batch of the scan. */
static void dump_lists(nxpq_reader *r, size_t batch_rows, char *out, size_t cap)
{
    nx_error err;
    nxpq_scan_options o = {.batch_rows = batch_rows};
    nxpq_scan *s = nxpq_scan_open(r, &o, &err);
    const nxpq_batch *b;
    size_t n = 0;
    int rc;
    out[0] = '\0';
    while ((rc = nxpq_scan_next(s, &b, &err)) == 1) {
        const nxpq_column_data *id = &b->columns[0], *li = &b->columns[1];
        for (size_t i = 0; i < b->n_rows; i++) {
            n += (size_t)snprintf(out + n, cap - n, "%d:", id->values.i32[i]);
            if (li->valid && !li->valid[i]) {
                n += (size_t)snprintf(out + n, cap - n, "null ");
                continue;
            }
            n += (size_t)snprintf(out + n, cap - n, "[");
            for (uint64_t e = li->list_offsets[i]; e < li->list_offsets[i + 1]; e++) {
                if (li->element_valid && !li->element_valid[e])
                    n += (size_t)snprintf(out + n, cap - n, "n,");
                else
                    n += (size_t)snprintf(out + n, cap - n, "%lld,", (long long)li->values.i64[e]);
            }
            n += (size_t)snprintf(out + n, cap - n, "] ");
        }
    }
    if (rc != 0)
        fail_msg("scan failed: %s", err.msg);
    nxpq_scan_close(s);
}

static void test_lists_spanning_pages(void **state)
{
    (void)state;
    tfile f;
    build_spanning_lists(&f);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    if (!r)
        fail_msg("%s", err.msg);
    const char *want = "0:[1,2,] 1:null 2:[] 3:[3,n,4,5,] 4:[6,] ";
    for (size_t batch = 1; batch <= 6; batch++) {
        char got[512];
        dump_lists(r, batch, got, sizeof got);
        assert_string_equal(got, want);
    }
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
}

/* A page index: "ts" (required INT64, pages of rows 0-9, 10-19, 20-29 with
 * values equal to the row) and "s" (optional strings, pages 0-14 and 15-29,
 * "r<row>" or null on rows divisible by 7). */
static void build_indexed(tfile *f, bool bad_rows)
{
    tf_init(f, 30);
    f->schema[0].num_children = 2;
    tf_el(f, "ts", PQ_INT64, PQ_REQUIRED, 0, -1);
    tf_el(f, "s", PQ_BYTE_ARRAY, PQ_OPTIONAL, 0, PQ_CONVERTED_UTF8);
    pq_page_location ts_loc[3], s_loc[2];
    size_t ts_start = f->b.len;
    for (int p = 0; p < 3; p++) {
        bytes body = {.n = 0};
        for (int64_t v = p * 10; v < p * 10 + 10; v++)
            put(&body, &v, 8);
        size_t at = tf_data_page(f, 10, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
        ts_loc[p] = (pq_page_location){(int64_t)at, (int32_t)(f->b.len - at), p * 10};
    }
    pq_column_chunk *ts = tf_chunk(f, PQ_INT64, ts_start, 30, "ts", NULL, NULL);
    size_t s_start = f->b.len;
    for (int p = 0; p < 2; p++) {
        bytes body = {.n = 0};
        uint8_t def[15];
        for (int i = 0; i < 15; i++)
            def[i] = (p * 15 + i) % 7 != 0;
        put_levels(&body, def, 15, 1, true);
        for (int i = 0; i < 15; i++) {
            char v[8];
            snprintf(v, sizeof v, "r%d", p * 15 + i);
            if (def[i])
                put_plain_string(&body, v);
        }
        size_t at = tf_data_page(f, 15, PQ_ENC_PLAIN, PQ_ENC_RLE, &body);
        s_loc[p] = (pq_page_location){(int64_t)at, (int32_t)(f->b.len - at), p * 15};
    }
    pq_column_chunk *s = tf_chunk(f, PQ_BYTE_ARRAY, s_start, 30, "s", NULL, NULL);
    if (bad_rows)
        s_loc[1].first_row_index = 14;
    tf_offset_index(f, ts, ts_loc, 3);
    tf_offset_index(f, s, s_loc, 2);
    int64_t mins[3] = {0, 10, 20}, maxs[3] = {9, 19, 29};
    bool nulls[3] = {false, false, false};
    pq_bytes minb[3], maxb[3];
    for (int p = 0; p < 3; p++) {
        minb[p] = (pq_bytes){(const uint8_t *)&mins[p], 8};
        maxb[p] = (pq_bytes){(const uint8_t *)&maxs[p], 8};
    }
    pq_column_index ci = {.null_pages = nulls, .min_values = minb, .max_values = maxb, .n_pages = 3,
                          .boundary_order = PQ_BOUNDARY_ASCENDING};
    ts->has_column_index = true;
    ts->column_index_offset = (int64_t)f->b.len;
    pq_write_column_index(&f->b, &ci);
    ts->column_index_length = (int32_t)(f->b.len - (size_t)ts->column_index_offset);
    tf_finish(f);
}

static void test_page_index_pruning(void **state)
{
    (void)state;
    tfile f;
    build_indexed(&f, false);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    if (!r)
        fail_msg("%s", err.msg);
    nxpq_range range = {0, 12, 14};
    nxpq_scan_options o = {.ranges = &range, .n_ranges = 1, .batch_rows = 4};
    nxpq_scan *s = nxpq_scan_open(r, &o, &err);
    const nxpq_batch *b;
    int64_t next = 10;
    while (nxpq_scan_next(s, &b, &err) == 1) {
        assert_int_equal(b->first_row, next);
        const nxpq_column_data *ts = &b->columns[0], *sc = &b->columns[1];
        for (size_t i = 0; i < b->n_rows; i++) {
            int64_t row = b->first_row + (int64_t)i;
            assert_int_equal(ts->values.i64[i], row);
            char want[8];
            snprintf(want, sizeof want, "r%d", (int)row);
            bool present = row % 7 != 0;
            assert_int_equal(sc->valid ? sc->valid[i] : 1, present);
            size_t len = (size_t)(sc->offsets[i + 1] - sc->offsets[i]);
            assert_int_equal(len, present ? strlen(want) : 0);
            assert_memory_equal(sc->data + sc->offsets[i], want, len);
        }
        next += (int64_t)b->n_rows;
    }
    assert_int_equal(next, 20);
    nxpq_scan_stats st;
    nxpq_scan_get_stats(s, &st);
    assert_int_equal(st.row_groups_read, 1);
    assert_int_equal(st.pages_total, 5);
    assert_int_equal(st.pages_read, 3); /* ts page 1; s pages 0 and 1 (rows 10-19 cross them) */
    nxpq_scan_close(s);
    /* A range no page can hold reads nothing. */
    range.min = 100;
    range.max = 200;
    s = nxpq_scan_open(r, &o, &err);
    assert_int_equal(nxpq_scan_next(s, &b, &err), 0);
    nxpq_scan_get_stats(s, &st);
    assert_int_equal(st.row_groups_read, 0);
    assert_int_equal(st.pages_read, 0);
    nxpq_scan_close(s);
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
    /* An offset index whose rows disagree with the page. */
    build_indexed(&f, true);
    expect_scan_error(&f, "~page holds 15 rows, the offset index says 14");
}

/* Pages of `rows`-row pages that rows [a, b) touch. */
static int pages_touched(int64_t a, int64_t b, int64_t rows)
{
    return a < b ? (int)((b - 1) / rows - a / rows + 1) : 0;
}

/* A row selection (rows_begin, rows_end) returns exactly those rows, alone or with
 * a range, and reads only the pages holding them. */
static void test_row_selection(void **state)
{
    (void)state;
    tfile f;
    build_indexed(&f, false);
    nx_error err;
    nxpq_reader *r = tf_open(&f, &err);
    if (!r)
        fail_msg("%s", err.msg);
    for (int with_range = 0; with_range < 2; with_range++)
        for (int64_t a = 0; a <= 31; a++)
            for (int64_t e = a > 0 ? a : 1; e <= 32; e++) {   /* rows_end 0 means every row */
                nxpq_range range = {0, 12, 14};   /* keeps ts page 1: rows 10..19 */
                nxpq_scan_options o = {.batch_rows = 3, .rows_begin = a, .rows_end = e};
                if (with_range) {
                    o.ranges = &range;
                    o.n_ranges = 1;
                }
                int64_t lo = a, hi = e < 30 ? e : 30;   /* the rows expected */
                if (with_range) {
                    lo = lo > 10 ? lo : 10;
                    hi = hi < 20 ? hi : 20;
                }
                if (e == a)   /* rows_end == rows_begin: nothing asked, an empty scan */
                    hi = lo;
                nxpq_scan *s = nxpq_scan_open(r, &o, &err);
                assert_non_null(s);
                const nxpq_batch *b;
                int64_t next = lo;
                while (nxpq_scan_next(s, &b, &err) == 1) {
                    assert_int_equal(b->first_row, next);
                    for (size_t i = 0; i < b->n_rows; i++)
                        assert_int_equal(b->columns[0].values.i64[i], b->first_row + (int64_t)i);
                    next += (int64_t)b->n_rows;
                }
                if (hi > lo)
                    assert_int_equal(next, hi);
                else
                    assert_int_equal(next, lo);
                nxpq_scan_stats st;
                nxpq_scan_get_stats(s, &st);
                if (hi > lo)
                    assert_int_equal(st.pages_read, pages_touched(lo, hi, 10) + pages_touched(lo, hi, 15));
                else
                    assert_int_equal(st.pages_read, 0);
                nxpq_scan_close(s);
            }
    nxpq_reader_close(r);
    nx_strbuf_free(&f.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_footer_errors),
        cmocka_unit_test(test_truncated_and_patched_files),
        cmocka_unit_test(test_footer_missing_required_field),
        cmocka_unit_test(test_inconsistent_metadata),
        cmocka_unit_test(test_row_count_mismatch),
        cmocka_unit_test(test_open_from_disk),
        cmocka_unit_test(test_schema_shapes),
        cmocka_unit_test(test_plain_batches),
        cmocka_unit_test(test_nulls_rle_and_bit_packed_levels),
        cmocka_unit_test(test_corrupt_page_messages),
        cmocka_unit_test(test_dictionary_pages),
        cmocka_unit_test(test_unknown_pages_skipped),
        cmocka_unit_test(test_data_page_v2),
        cmocka_unit_test(test_lists_spanning_pages),
        cmocka_unit_test(test_page_index_pruning),
        cmocka_unit_test(test_row_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
