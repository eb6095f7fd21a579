/*
 * fuzz_chrome_gz.c — libFuzzer harness for the Chrome trace reader
 * (capture/chrome_trace.h) on gzip'd traces.
 *
 * An input that starts with the gzip magic (1f 8b) is the .json.gz file itself:
 * damaged headers, deflate streams, trailers, several members, bytes after the
 * last one. Any other input is JSON that the harness compresses first, as one
 * gzip member or, for inputs of odd size, two members split in the middle (the
 * reader must read both as one text), at a compression level from the input's
 * size. Either way the file is read with the options and checks of
 * fuzz_chrome_common.h.
 *
 * Seeds: tests/fuzz/corpus/chrome_gz/ (tests/fuzz/make_corpus.sh: the small real
 * PyTorch traces of tests/data/chrome-traces/ and gzip'd JSON edge cases).
 */
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "fuzz_chrome_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Appends data as one gzip member to out (grown as needed); false when out of memory. */
static bool gzip_member(const uint8_t *data, size_t size, int level, uint8_t **out, size_t *len, size_t *cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    size_t need = *len + deflateBound(&z, (uLong)size) + 32;
    if (need > *cap) {
        uint8_t *g = realloc(*out, need);
        if (!g) {
            deflateEnd(&z);
            return false;
        }
        *out = g;
        *cap = need;
    }
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = *out + *len;
    z.avail_out = (uInt)(*cap - *len);
    int rc = deflate(&z, Z_FINISH);
    *len = *cap - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        nxfuzz_chrome_read(nxfuzz_write("fuzz.json.gz", data, size), size);
        return 0;
    }
    uint8_t *gz = NULL;
    size_t len = 0, cap = 0, half = size % 2 ? size / 2 : size;
    int level = (int)(size % 10);
    bool ok = gzip_member(data, half, level, &gz, &len, &cap) &&
              (half == size || gzip_member(data + half, size - half, level, &gz, &len, &cap));
    if (ok)
        nxfuzz_chrome_read(nxfuzz_write("fuzz.json.gz", gz, len), size);
    free(gz);
    return 0;
}
