/* gzip_input.c — plain or multi-member gzip input, strict about what follows a member (see gzip_input.h). */
#include "util/gzip_input.h"
#include "util/open_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define IN_BYTES (128 * 1024)   /* compressed bytes read at once */

struct nx_gzip_input {
    int fd;
    bool started;          /* the first bytes were read and the kind decided */
    bool gzip;
    bool eof;              /* read() returned 0 */
    bool member_ended;     /* between two members (or after the last) */
    bool z_ready;          /* zs initialised */
    z_stream zs;
    unsigned char *in;     /* IN_BYTES: the compressed (or plain) bytes read ahead */
    size_t plain_at, plain_len;   /* plain files: the unread part of in */
    uint64_t file_read;    /* bytes read from the file so far */
    char failed[256];      /* the first failure, repeated by later reads; "" while none */
};

static long fail(nx_gzip_input *in, nx_error *msg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->failed, sizeof in->failed, fmt, ap);
    va_end(ap);
    nx_error_set(msg, "%s", in->failed);
    return -1;
}

nx_gzip_input *nx_gzip_input_open(const char *path, nx_error *msg)
{
    nx_gzip_input *in = calloc(1, sizeof *in);
    unsigned char *buf = malloc(IN_BYTES);
    if (!in || !buf) {
        free(in);
        free(buf);
        nx_error_set(msg, "out of memory");
        return NULL;
    }
    in->in = buf;
    in->fd = nx_open_regular(path, NULL, msg);
    if (in->fd < 0) {
        free(buf);
        free(in);
        return NULL;
    }
    return in;
}

/* Reads more compressed (or plain) bytes into in->in after the unread ones
 * (which the caller moved to its start). 0 (eof set at the end), or -1. */
static int fill(nx_gzip_input *in, size_t keep, size_t *have, nx_error *msg)
{
    ssize_t n;
    do
        n = read(in->fd, in->in + keep, IN_BYTES - keep);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return (int)fail(in, msg, "read error at byte %" PRIu64 ": %s", in->file_read, strerror(errno));
    if (n == 0)
        in->eof = true;
    in->file_read += (uint64_t)n;
    *have = keep + (size_t)n;
    return 0;
}

/* Decides the kind from the first bytes: at least two, unless the file is shorter. */
static int start(nx_gzip_input *in, nx_error *msg)
{
    size_t have = 0;
    while (have < 2 && !in->eof)
        if (fill(in, have, &have, msg) != 0)
            return -1;
    in->started = true;
    in->gzip = have >= 2 && in->in[0] == 0x1f && in->in[1] == 0x8b;
    if (!in->gzip) {
        in->plain_at = 0;
        in->plain_len = have;
        return 0;
    }
    if (inflateInit2(&in->zs, 15 + 16) != Z_OK)   /* 15 + 16: a gzip wrapper */
        return (int)fail(in, msg, "out of memory");
    in->z_ready = true;
    in->zs.next_in = in->in;
    in->zs.avail_in = (uInt)have;
    return 0;
}

static long read_plain(nx_gzip_input *in, unsigned char *out, size_t size, nx_error *msg)
{
    if (in->plain_at == in->plain_len) {
        if (in->eof)
            return 0;
        size_t have;
        if (fill(in, 0, &have, msg) != 0)
            return -1;
        in->plain_at = 0;
        in->plain_len = have;
        if (have == 0)
            return 0;
    }
    size_t n = in->plain_len - in->plain_at < size ? in->plain_len - in->plain_at : size;
    memcpy(out, in->in + in->plain_at, n);
    in->plain_at += n;
    return (long)n;
}

/* Between members: the next bytes must start another member, or be the end. */
static int next_member(nx_gzip_input *in, nx_error *msg)
{
    size_t have = in->zs.avail_in;
    while (have < 2 && !in->eof) {
        memmove(in->in, in->zs.next_in, have);
        if (fill(in, have, &have, msg) != 0)
            return -1;
        in->zs.next_in = in->in;
        in->zs.avail_in = (uInt)have;
    }
    if (have == 0)
        return 1;   /* the end, right after a member */
    if (have < 2 || in->zs.next_in[0] != 0x1f || in->zs.next_in[1] != 0x8b)
        return (int)fail(in, msg,
                         "compressed byte %" PRIu64 ": what follows a gzip member is not another member (a "
                         "damaged or appended-to file)",
                         nx_gzip_input_offset(in));
    if (inflateReset(&in->zs) != Z_OK)
        return (int)fail(in, msg, "gzip: cannot reset the decoder");
    in->member_ended = false;
    return 0;
}

static long read_gzip(nx_gzip_input *in, unsigned char *out, size_t size, nx_error *msg)
{
    in->zs.next_out = out;
    in->zs.avail_out = size > UINT32_MAX ? UINT32_MAX : (uInt)size;
    uInt want = in->zs.avail_out;
    while (in->zs.avail_out > 0) {
        if (in->member_ended) {
            if (in->zs.avail_out < want)
                break;   /* return what this member gave; the next read looks past it */
            int r = next_member(in, msg);
            if (r < 0)
                return -1;
            if (r > 0)
                break;
        }
        if (in->zs.avail_in == 0) {
            if (in->eof)
                return fail(in, msg,
                            "compressed byte %" PRIu64 ": gzip: unexpected end of file (inside a member: a truncated file)",
                            nx_gzip_input_offset(in));
            size_t have;
            if (fill(in, 0, &have, msg) != 0)
                return -1;
            in->zs.next_in = in->in;
            in->zs.avail_in = (uInt)have;
            continue;
        }
        int rc = inflate(&in->zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END)
            in->member_ended = true;
        else if (rc == Z_MEM_ERROR)
            return fail(in, msg, "out of memory");
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            return fail(in, msg, "compressed byte %" PRIu64 ": gzip: %s", nx_gzip_input_offset(in),
                        in->zs.msg ? in->zs.msg : "invalid data");
    }
    return (long)(want - in->zs.avail_out);
}

long nx_gzip_input_read(nx_gzip_input *in, void *buf, size_t size, nx_error *msg)
{
    if (in->failed[0]) {
        nx_error_set(msg, "%s", in->failed);
        return -1;
    }
    if (size == 0)
        return 0;
    if (!in->started && start(in, msg) != 0)
        return -1;
    return in->gzip ? read_gzip(in, buf, size, msg) : read_plain(in, buf, size, msg);
}

bool nx_gzip_input_is_gzip(const nx_gzip_input *in)
{
    return in->gzip;
}

uint64_t nx_gzip_input_offset(const nx_gzip_input *in)
{
    if (!in->started)
        return 0;
    if (in->gzip)
        return in->file_read - in->zs.avail_in;
    return in->file_read - (in->plain_len - in->plain_at);
}

void nx_gzip_input_close(nx_gzip_input *in)
{
    if (!in)
        return;
    if (in->z_ready)
        inflateEnd(&in->zs);
    if (in->fd >= 0)
        close(in->fd);
    free(in->in);
    free(in);
}
