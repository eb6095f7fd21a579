/*
 * trace_write.c — the device trace writer: header first, then records through
 * a 1 MiB buffer so that writing costs a memcpy per record and a write(2) per
 * 26k records; large batches of encoded records go to write(2) directly. See
 * device_trace.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture/capture_util.h"
#include "capture/device_trace.h"

#define WRITE_BUF (1u << 20)

struct nx_trace_writer {
    char *path;
    int fd;
    unsigned char *buf;
    size_t len;
};

static int flush(nx_trace_writer *w, nx_error *err)
{
    if (w->len && nx_cap_write_all(w->fd, w->buf, w->len) != 0)
        return nx_cap_fail(err, w->path, "write failed: %s", strerror(errno));
    w->len = 0;
    return 0;
}

static void discard(nx_trace_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    free(w->buf);
    free(w->path);
    free(w);
}

int nx_trace_writer_open(const char *path, const nx_trace_header *h, nx_trace_writer **out,
                         nx_error *err)
{
    *out = NULL;
    nx_trace_writer *w = calloc(1, sizeof *w);
    if (!w)
        return nx_cap_fail(err, path, "out of memory");
    w->fd = -1;
    w->path = strdup(path);
    w->buf = malloc(WRITE_BUF);
    if (!w->path || !w->buf) {
        discard(w);
        return nx_cap_fail(err, path, "out of memory");
    }
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int e = errno;
        discard(w);
        return nx_cap_fail(err, path, "cannot create: %s", strerror(e));
    }
    /* This writer writes format 1.0 whatever the caller left in these fields. */
    nx_trace_header v = *h;
    v.version_major = NX_TRACE_VERSION_MAJOR;
    v.version_minor = NX_TRACE_VERSION_MINOR;
    v.header_size = NX_TRACE_HEADER_SIZE;
    v.record_size = NX_TRACE_RECORD_SIZE;
    nx_trace_header_encode(&v, w->buf);
    w->len = NX_TRACE_HEADER_SIZE;
    *out = w;
    return 0;
}

int nx_trace_writer_put(nx_trace_writer *w, const nx_trace_record *r, nx_error *err)
{
    if (WRITE_BUF - w->len < NX_TRACE_RECORD_SIZE && flush(w, err) != 0)
        return -1;
    nx_trace_encode(r, w->buf + w->len);
    w->len += NX_TRACE_RECORD_SIZE;
    return 0;
}

int nx_trace_writer_put_raw(nx_trace_writer *w, const unsigned char *recs, size_t n, nx_error *err)
{
    size_t bytes = n * NX_TRACE_RECORD_SIZE;
    if (bytes >= WRITE_BUF / 4) {   /* big enough to skip the copy */
        if (flush(w, err) != 0)
            return -1;
        if (nx_cap_write_all(w->fd, recs, bytes) != 0)
            return nx_cap_fail(err, w->path, "write failed: %s", strerror(errno));
        return 0;
    }
    if (WRITE_BUF - w->len < bytes && flush(w, err) != 0)
        return -1;
    memcpy(w->buf + w->len, recs, bytes);
    w->len += bytes;
    return 0;
}

int nx_trace_writer_close(nx_trace_writer *w, nx_error *err)
{
    if (!w)
        return 0;
    int rc = flush(w, err);
    if (close(w->fd) != 0 && rc == 0)
        rc = nx_cap_fail(err, w->path, "close failed: %s", strerror(errno));
    w->fd = -1;
    discard(w);
    return rc;
}
