/*
 * writer_seeds.c — writes the fuzz seeds that come from nxprof's own writer
 * (tests/fuzz/corpus/parquet/nx_*.parquet): small files with every column type,
 * nulls, null/empty lists and null elements, several pages per column and the
 * page index, so the fuzzer starts from the page-index and multi-page paths.
 * Each file stays under 4 KB. Not part of the build; regenerate with
 *
 *   cmake --build build && cc -std=c11 -Isrc tests/fuzz/writer_seeds.c build/libnxcore.a \
 *     $(pkg-config --libs libzstd liblz4 zlib libxxhash) -lsnappy -lm -lpthread -o /tmp/seeds \
 *     && /tmp/seeds tests/fuzz/corpus/parquet
 */
#include <stdio.h>
#include <string.h>

#include "parquet/parquet.h"

static int put_row(nxpq_writer *w, int r)
{
    char s[16];
    int64_t li[3] = {r, r * 2, -r};
    nxpq_str ls[3] = {{"a", 1}, {NULL, 0}, {s, 0}};
    int rc = 0;
    snprintf(s, sizeof s, "v%d", r % 5);
    ls[2].len = strlen(s);
    rc |= r % 7 ? nxpq_put_int32(w, 0, r * 7 - 100) : nxpq_put_null(w, 0);
    rc |= nxpq_put_int64(w, 1, 1000 + r * 3);
    rc |= r % 5 ? nxpq_put_double(w, 2, r / 4.0) : nxpq_put_null(w, 2);
    rc |= nxpq_put_float(w, 3, (float)r);
    rc |= r % 6 ? nxpq_put_bool(w, 4, r % 2) : nxpq_put_null(w, 4);
    rc |= r % 4 ? nxpq_put_string(w, 5, s, strlen(s)) : nxpq_put_null(w, 5);
    rc |= r % 9 ? nxpq_put_list_int64(w, 6, li, (size_t)(r % 4)) : nxpq_put_null(w, 6);
    rc |= r % 8 ? nxpq_put_list_string(w, 7, ls, (size_t)(r % 4)) : nxpq_put_null(w, 7);
    return rc | nxpq_end_row(w);
}

static int write_seed(const char *dir, const char *name, nxpq_codec codec, nxpq_encoding_pref enc)
{
    const nxpq_column_spec cols[] = {
        {"i32", NXPQ_INT32, true, enc},       {"ts", NXPQ_INT64, false, enc},
        {"d", NXPQ_DOUBLE, true, NXPQ_ENCODE_AUTO}, {"f", NXPQ_FLOAT, false, NXPQ_ENCODE_AUTO},
        {"b", NXPQ_BOOLEAN, true, NXPQ_ENCODE_AUTO}, {"s", NXPQ_STRING, true, NXPQ_ENCODE_AUTO},
        {"li", NXPQ_LIST_INT64, true, enc},   {"ls", NXPQ_LIST_STRING, true, NXPQ_ENCODE_AUTO},
    };
    nxpq_writer_options o;
    nxpq_writer_options_init(&o);
    o.codec = codec;
    o.page_bytes = 64;
    o.row_group_rows = 15;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    nx_error err;
    nxpq_writer *w = nxpq_writer_open(path, cols, 8, &o, &err);
    for (int r = 0; w && r < 30; r++)
        if (put_row(w, r) != 0)
            break;
    if (!w || nxpq_writer_close(w, &err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: writer_seeds DIR\n");
        return 2;
    }
    int rc = write_seed(argv[1], "nx_plain.parquet", NXPQ_UNCOMPRESSED, NXPQ_ENCODE_PLAIN);
    rc |= write_seed(argv[1], "nx_dict.parquet", NXPQ_UNCOMPRESSED, NXPQ_ENCODE_DICTIONARY);
    rc |= write_seed(argv[1], "nx_delta.parquet", NXPQ_UNCOMPRESSED, NXPQ_ENCODE_DELTA);
    rc |= write_seed(argv[1], "nx_snappy.parquet", NXPQ_SNAPPY, NXPQ_ENCODE_AUTO);
    return rc;
}
