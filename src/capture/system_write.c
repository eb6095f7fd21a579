/*
 * system_write.c — writes the system capture's TSV files through a 1 MiB stdio
 * buffer, refusing values the reader would reject. See system_capture.h.
 * device_mem.tsv lines (25 integers) are formatted by hand into one buffer and
 * written with one fwrite: synth writes one per HBM per 10 ms and is benchmarked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/capture_util.h"
#include "capture/system_capture.h"

struct nx_sys_writer {
    char *path;
    FILE *fp;
    char *buf;
    nx_sys_kind kind;
    int64_t last_key;
    uint64_t line;
};

int nx_sys_writer_open(const char *path, nx_sys_kind kind, nx_sys_writer **out, nx_error *err)
{
    *out = NULL;
    nx_sys_writer *w = calloc(1, sizeof *w);
    if (!w)
        return nx_cap_fail(err, path, "out of memory");
    w->kind = kind;
    w->last_key = INT64_MIN;
    w->path = strdup(path);
    w->buf = malloc(1u << 20);
    w->fp = w->path && w->buf ? fopen(path, "w") : NULL;
    if (!w->fp) {
        int e = errno;
        free(w->path);
        free(w->buf);
        free(w);
        return nx_cap_fail(err, path, "cannot create: %s", strerror(e));
    }
    setvbuf(w->fp, w->buf, _IOFBF, 1u << 20);
    fprintf(w->fp, "#nxprof %s %d\n%s\n", nx_sys_kind_tag(kind), NX_SYS_VERSION, nx_sys_columns(kind));
    w->line = 2;
    *out = w;
    return 0;
}

static bool clean_text(const char *s, bool allow_empty, bool allow_semicolon)
{
    if (!s || (!*s && !allow_empty))
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == ';' && !allow_semicolon))
            return false;
    return true;
}

/* Lines must stay sorted by their first column. */
static int check_order(nx_sys_writer *w, int64_t key, nx_error *err)
{
    if (key < 0 || key < w->last_key)
        return nx_cap_fail(err, w->path, "line %" PRIu64 ": key %" PRId64 " is negative or before the previous "
                           "line's %" PRId64, w->line + 1, key, w->last_key);
    w->last_key = key;
    w->line++;
    return 0;
}

static void put_optional(FILE *fp, int64_t v)
{
    if (v != NX_SYS_NULL)
        fprintf(fp, "%" PRId64, v);
}

int nx_sys_write_runtime(nx_sys_writer *w, const nx_sys_runtime_event *e, nx_error *err)
{
    bool source_ok = e->source && (strcmp(e->source, "neuron_rt") == 0 || strcmp(e->source, "neuron_hw") == 0);
    if (!source_ok || !clean_text(e->name, false, true) || !clean_text(e->attributes, true, true) ||
        !clean_text(e->flow_ids, true, false) || e->end_ns < e->start_ns || e->pid < 0 || e->tid < 0)
        return nx_cap_fail(err, w->path, "line %" PRIu64 ": runtime event '%s' has a field the format does not "
                           "allow (source, control characters, end before start, negative id)", w->line + 1,
                           e->name ? e->name : "");
    if (check_order(w, e->start_ns, err) != 0)
        return -1;
    fprintf(w->fp, "%" PRId64 "\t%" PRId64 "\t%s\t%s\t%" PRId64 "\t%" PRId64 "\t", e->start_ns, e->end_ns,
            e->source, e->name, e->pid, e->tid);
    put_optional(w->fp, e->nc_idx);
    fputc('\t', w->fp);
    put_optional(w->fp, e->worker_gid);
    fprintf(w->fp, "\t%s\t%s\n", e->flow_ids, e->attributes);
    return 0;
}

int nx_sys_write_cpu(nx_sys_writer *w, const nx_sys_cpu_sample *s, nx_error *err)
{
    if (s->util_percent < 0 || s->util_percent > 100 || s->cpu < NX_SYS_CPU_AVERAGE)
        return nx_cap_fail(err, w->path, "line %" PRIu64 ": cpu %" PRId64 " utilisation %g out of range",
                           w->line + 1, s->cpu, s->util_percent);
    if (check_order(w, s->timestamp_ns, err) != 0)
        return -1;
    if (s->cpu == NX_SYS_CPU_AVERAGE)
        fprintf(w->fp, "%" PRId64 "\taverage\t%.2f\n", s->timestamp_ns, s->util_percent);
    else
        fprintf(w->fp, "%" PRId64 "\t%" PRId64 "\t%.2f\n", s->timestamp_ns, s->cpu, s->util_percent);
    return 0;
}

int nx_sys_write_mem(nx_sys_writer *w, const nx_sys_mem_sample *s, nx_error *err)
{
    if (s->total_bytes <= 0 || s->used_bytes < 0 || s->used_bytes > s->total_bytes)
        return nx_cap_fail(err, w->path, "line %" PRIu64 ": used %" PRId64 " of %" PRId64 " bytes is not possible",
                           w->line + 1, s->used_bytes, s->total_bytes);
    if (check_order(w, s->timestamp_ns, err) != 0)
        return -1;
    fprintf(w->fp, "%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", s->timestamp_ns, s->used_bytes, s->total_bytes);
    return 0;
}

/* Appends v (>= 0) in decimal at p; returns the end. */
static char *put_u63(char *p, int64_t v)
{
    char tmp[20];
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    return p;
}

int nx_sys_write_hbm(nx_sys_writer *w, const nx_sys_hbm_sample *s, nx_error *err)
{
    int64_t total = 0;
    bool ok = s->device_idx >= 0 && s->hbm_idx >= 0;
    for (unsigned c = 0; ok && c < NX_HBM_CATEGORY_COUNT; c++)
        ok = s->bytes[c] >= 0 && !__builtin_add_overflow(total, s->bytes[c], &total);
    if (!ok)
        return nx_cap_fail(err, w->path, "line %" PRIu64 ": device %" PRId64 " hbm %" PRId64 ": a negative field, or "
                           "categories whose sum overflows int64", w->line + 1, s->device_idx, s->hbm_idx);
    if (check_order(w, s->timestamp_ns, err) != 0)
        return -1;
    char line[(3 + NX_HBM_CATEGORY_COUNT) * 20 + 1], *p = line;
    p = put_u63(p, s->timestamp_ns);
    *p++ = '\t';
    p = put_u63(p, s->device_idx);
    *p++ = '\t';
    p = put_u63(p, s->hbm_idx);
    for (unsigned c = 0; c < NX_HBM_CATEGORY_COUNT; c++) {
        *p++ = '\t';
        p = put_u63(p, s->bytes[c]);
    }
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), w->fp);   /* errors surface through ferror() at close */
    return 0;
}

int nx_sys_writer_close(nx_sys_writer *w, nx_error *err)
{
    if (!w)
        return 0;
    int rc = 0;
    bool bad = ferror(w->fp) != 0;
    if (fclose(w->fp) != 0 || bad)
        rc = nx_cap_fail(err, w->path, "write failed: %s", bad ? "stream error" : strerror(errno));
    free(w->buf);
    free(w->path);
    free(w);
    return rc;
}
