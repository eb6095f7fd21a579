/*
 * capture_util.c — the capture module's shared vocabulary (engine names, file
 * names) and helpers (error formatting, whole-file I/O); see capture.h and
 * capture_util.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture_util.h"
#include "util/open_regular.h"

static const char *const ENGINE_NAMES[NX_ENGINE_COUNT] = {"tensor", "vector", "scalar", "gpsimd", "sync"};
static const char *const ENGINE_DISPLAY[NX_ENGINE_COUNT] = {"Tensor", "Vector", "Scalar", "GpSimd", "Sync"};
static const char *const ENGINE_HW[NX_ENGINE_COUNT] = {"PE", "DVE", "ACT", "Pool", "SP"};

const char *nx_engine_name(unsigned e) { return e < NX_ENGINE_COUNT ? ENGINE_NAMES[e] : NULL; }
const char *nx_engine_display_name(unsigned e) { return e < NX_ENGINE_COUNT ? ENGINE_DISPLAY[e] : NULL; }
const char *nx_engine_hw_name(unsigned e) { return e < NX_ENGINE_COUNT ? ENGINE_HW[e] : NULL; }

void nx_cap_program_name(uint64_t hash, char out[NX_CAP_NAME_MAX])
{
    snprintf(out, NX_CAP_NAME_MAX, "program_%016" PRIx64 ".nxprog", hash);
}

void nx_cap_trace_name(uint64_t hash, uint32_t device, uint32_t core, char out[NX_CAP_NAME_MAX])
{
    snprintf(out, NX_CAP_NAME_MAX, "trace_%016" PRIx64 "_nd%" PRIu32 "_nc%" PRIu32 ".nxtrace",
             hash, device, core);
}

/* Exactly 16 lowercase hex digits at s; advances *s past them. */
static bool parse_hash(const char **s, uint64_t *hash)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = (*s)[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *s += 16;
    *hash = v;
    return true;
}

/* A decimal u32 without leading zeros (except "0"); advances *s. */
static bool parse_u32(const char **s, uint32_t *out)
{
    const char *p = *s;
    if (!isdigit((unsigned char)*p) || (p[0] == '0' && isdigit((unsigned char)p[1])))
        return false;
    uint64_t v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (uint64_t)(*p++ - '0');
        if (v > UINT32_MAX)
            return false;
    }
    *s = p;
    *out = (uint32_t)v;
    return true;
}

static bool eat(const char **s, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*s, lit, n) != 0)
        return false;
    *s += n;
    return true;
}

bool nx_cap_parse_program_name(const char *name, uint64_t *hash)
{
    const char *s = name;
    return eat(&s, "program_") && parse_hash(&s, hash) && eat(&s, ".nxprog") && *s == '\0';
}

bool nx_cap_parse_trace_name(const char *name, uint64_t *hash, uint32_t *device, uint32_t *core)
{
    const char *s = name;
    return eat(&s, "trace_") && parse_hash(&s, hash) && eat(&s, "_nd") && parse_u32(&s, device) &&
           eat(&s, "_nc") && parse_u32(&s, core) && eat(&s, ".nxtrace") && *s == '\0';
}

bool nx_cap_session_dir_name(const char *instance_id, uint32_t pid, char out[NX_CAP_NAME_MAX])
{
    if (!*instance_id)
        return false;
    for (const char *p = instance_id; *p; p++)
        if (*p == '/' || *p == '_' || iscntrl((unsigned char)*p))
            return false;
    int n = snprintf(out, NX_CAP_NAME_MAX, "%s_pid_%" PRIu32, instance_id, pid);
    return n > 0 && n < NX_CAP_NAME_MAX;
}

int nx_cap_fail(nx_error *err, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nx_error_vat(err, path ? path : "(capture)", NULL, NULL, NX_ERROR_NOWHERE, fmt, ap);
    va_end(ap);
    return -1;
}

int nx_cap_fail_at(nx_error *err, const char *path, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nx_error_vat(err, path ? path : "(capture)", NULL, "offset", offset, fmt, ap);
    va_end(ap);
    return -1;
}

void nx_cap_warn(const nx_cap_warner *w, const char *path, uint64_t where, const char *category,
                 const char *fmt, ...)
{
    if (!w || !w->fn)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->fn(w->ctx, path, where, category, msg);
}

int nx_cap_open_input(const char *path, struct stat *st, nx_error *err)
{
    nx_error why = {0};
    int fd = nx_open_regular(path, st, &why);
    if (fd < 0)
        nx_cap_fail(err, path, "%s", why.msg);
    return fd;
}

int nx_cap_read_file(const char *path, unsigned char **data, size_t *size, nx_error *err)
{
    struct stat st;
    int fd = nx_cap_open_input(path, &st, err);
    if (fd < 0)
        return -1;
    size_t n = (size_t)st.st_size;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return nx_cap_fail(err, path, "out of memory reading %zu bytes", n);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return nx_cap_fail(err, path, "read failed: %s", strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *size = n;
    return 0;
}

int nx_cap_write_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int nx_cap_write_file(const char *path, const void *data, size_t size, nx_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return nx_cap_fail(err, path, "cannot create: %s", strerror(errno));
    if (nx_cap_write_all(fd, data, size) != 0) {
        int e = errno;
        close(fd);
        return nx_cap_fail(err, path, "write failed: %s", strerror(e));
    }
    if (close(fd) != 0)
        return nx_cap_fail(err, path, "close failed: %s", strerror(errno));
    return 0;
}

bool nx_cap_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

const char *nx_cap_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *nx_cap_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *s = malloc(a + b + 2);
    if (!s)
        return NULL;
    memcpy(s, dir, a);
    size_t k = a;
    if (a && dir[a - 1] != '/')
        s[k++] = '/';
    memcpy(s + k, name, b + 1);
    return s;
}
