/*
 * system_read.c — the streaming reader of the system capture's TSV files and
 * the table of their columns (shared with system_write.c). See
 * system_capture.h and docs/capture-format.md, "System capture".
 *
 * One reader serves every kind: KINDS gives each kind's version tag, file name,
 * header line and field count; lines are split once, then a per-kind parser
 * fills the record and record_key() gives the column the lines must be sorted
 * by (non-decreasing). device_mem.tsv is all non-negative integers: every field
 * goes through get_int(), and total_bytes is the category sum, an error when it
 * overflows int64 (so the processor never writes a wrapped total).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture/capture_util.h"
#include "capture/device_trace.h"
#include "capture/system_capture.h"
#include "util/json.h"

#define READ_BUF (64u << 10)
#define MAX_LINE (1u << 20)
#define MAX_FIELDS (3 + NX_HBM_CATEGORY_COUNT)   /* the widest kind: device-memory */

/* The device-memory header: the three key columns, then "\t<category>_bytes" for each. */
#define HBM_COLUMN_(name) "\t" #name "_bytes"
#define HBM_HEADER "timestamp_ns\tdevice_idx\thbm_idx" NX_SYS_HBM_CATEGORIES(HBM_COLUMN_)
#define HBM_NAME_(name) #name "_bytes",
static const char *const HBM_COLUMNS[NX_HBM_CATEGORY_COUNT] = {NX_SYS_HBM_CATEGORIES(HBM_NAME_)};
#undef HBM_NAME_

static const struct {
    const char *tag, *file, *columns;
    unsigned n;
} KINDS[] = {
    [NX_SYS_RUNTIME_EVENTS] = {"runtime-events", NX_CAP_RUNTIME_EVENTS_FILE,
                               "start_ns\tend_ns\tsource\tname\tpid\ttid\tnc_idx\tworker_gid\tflow_ids\tattributes", 10},
    [NX_SYS_CPU_USAGE] = {"cpu-usage", NX_CAP_CPU_USAGE_FILE, "timestamp_ns\tcpu\tutil_percent", 3},
    [NX_SYS_HOST_MEM] = {"host-memory", NX_CAP_HOST_MEM_FILE, "timestamp_ns\tused_bytes\ttotal_bytes", 3},
    [NX_SYS_DEVICE_MEM] = {"device-memory", NX_CAP_DEVICE_MEM_FILE, HBM_HEADER, 3 + NX_HBM_CATEGORY_COUNT},
};
_Static_assert(sizeof KINDS / sizeof KINDS[0] == NX_SYS_KIND_COUNT, "one KINDS entry per nx_sys_kind");

const char *nx_sys_hbm_column(unsigned c) { return c < NX_HBM_CATEGORY_COUNT ? HBM_COLUMNS[c] : NULL; }

const char *nx_sys_kind_tag(nx_sys_kind k) { return KINDS[k].tag; }
const char *nx_sys_file_name(nx_sys_kind k) { return KINDS[k].file; }
const char *nx_sys_columns(int k) { return KINDS[k].columns; }

struct nx_sys_reader {
    char *path;
    int fd;
    nx_sys_kind kind;
    char *buf;
    size_t len, pos;
    bool eof;
    char *line;
    size_t line_cap;
    uint64_t line_no;
    int64_t last_key;
    char *field[MAX_FIELDS];
};

#define BAD(r, err, ...) bad_line((r), (err), __VA_ARGS__)
static int bad_line(nx_sys_reader *r, nx_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad_line(nx_sys_reader *r, nx_error *err, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nx_cap_fail(err, r->path, "line %" PRIu64 ": %s", r->line_no, msg);
}

/* Next line into r->line without its LF; 1 line, 0 end of file, -1 error. */
static int next_line(nx_sys_reader *r, nx_error *err)
{
    size_t n = 0;
    for (;;) {
        if (r->pos == r->len) {
            if (r->eof)
                break;
            ssize_t got = read(r->fd, r->buf, READ_BUF);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0)
                return nx_cap_fail(err, r->path, "read failed: %s", strerror(errno));
            r->len = (size_t)got, r->pos = 0, r->eof = got == 0;
            continue;
        }
        char c = r->buf[r->pos++];
        if (c == '\n') {
            r->line[n] = '\0';
            r->line_no++;
            return 1;
        }
        if (n + 1 >= MAX_LINE) {
            r->line_no++;
            return BAD(r, err, "longer than %u bytes", MAX_LINE);
        }
        if (n + 1 >= r->line_cap) {
            size_t cap = r->line_cap * 2;
            char *p = realloc(r->line, cap);
            if (!p)
                return nx_cap_fail(err, r->path, "out of memory");
            r->line = p, r->line_cap = cap;
        }
        r->line[n++] = c;
    }
    if (n == 0)
        return 0;
    r->line[n] = '\0';   /* a last line without LF */
    r->line_no++;
    return 1;
}

static int split(nx_sys_reader *r, nx_error *err)
{
    unsigned want = KINDS[r->kind].n, n = 0;
    char *p = r->line;
    if (!*p)
        return BAD(r, err, "empty line; expected %u TAB-separated fields", want);
    for (;;) {
        if (n == MAX_FIELDS)
            return BAD(r, err, "more than %u fields", want);
        r->field[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    if (n != want)
        return BAD(r, err, "%u fields; expected %u (%s)", n, want, KINDS[r->kind].columns);
    return 0;
}

/* --- field parsers --------------------------------------------------------------- */

static const char *column_name(nx_sys_kind k, unsigned i)
{
    static char name[32];
    const char *c = KINDS[k].columns;
    for (unsigned j = 0; j < i && c; j++) {
        c = strchr(c, '\t');
        c = c ? c + 1 : NULL;
    }
    size_t len = c ? strcspn(c, "\t") : 0;
    snprintf(name, sizeof name, "%.*s", (int)len, c ? c : "");
    return name;
}

/* Up to 40 bytes of a field as an error message shows them: bytes outside
 * printable ASCII as \xNN, so a damaged file never puts raw bytes on a terminal. */
typedef struct shown_text {
    char s[4 * 40 + 4];
} shown_text;

static shown_text shown(const char *v)
{
    shown_text t;
    size_t o = 0;
    for (size_t i = 0; v[i] && i < 40; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c >= 0x20 && c < 0x7f)
            t.s[o++] = (char)c;
        else
            o += (size_t)snprintf(t.s + o, sizeof t.s - o, "\\x%02x", c);
    }
    t.s[o] = '\0';
    return t;
}

static int get_int(nx_sys_reader *r, unsigned i, bool optional, int64_t *out, nx_error *err)
{
    const char *s = r->field[i];
    if (!*s && optional) {
        *out = NX_SYS_NULL;
        return 0;
    }
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > INT64_MAX)
            break;
    }
    if (p == s || *p || p - s > 19 || v > INT64_MAX)
        return BAD(r, err, "column '%s': expected a non-negative decimal integer%s, got '%s'",
                   column_name(r->kind, i), optional ? " or nothing" : "", shown(s).s);
    *out = (int64_t)v;
    return 0;
}

static int get_text(nx_sys_reader *r, unsigned i, bool allow_empty, nx_error *err)
{
    const unsigned char *s = (const unsigned char *)r->field[i];
    if (!*s && !allow_empty)
        return BAD(r, err, "column '%s': empty; expected text", column_name(r->kind, i));
    for (; *s; s++)
        if (*s < 0x20 || *s == 0x7f)
            return BAD(r, err, "column '%s': control character 0x%02x", column_name(r->kind, i), *s);
    return 0;
}

static int check_flow_ids(nx_sys_reader *r, unsigned i, nx_error *err)
{
    const char *s = r->field[i];
    bool digit = false;
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digit = true;
        else if (*p == ',' && digit && p[1])
            digit = false;
        else
            return BAD(r, err, "column 'flow_ids': expected integers separated by ',', got '%s'", shown(s).s);
    }
    return 0;
}

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

static int check_attributes(nx_sys_reader *r, unsigned i, nx_error *err)
{
    if (get_text(r, i, true, err) != 0)
        return -1;
    for (const char *p = r->field[i]; *p;) {
        const char *k = p;
        while (key_char(*p))
            p++;
        if (p == k || *p != '=')
            return BAD(r, err, "column 'attributes': expected key=value pairs separated by ';' (keys of "
                       "[A-Za-z0-9_.-]), got '%s'", shown(k).s);
        p += strcspn(p, ";");
        if (*p == ';' && !*++p)
            return BAD(r, err, "column 'attributes': ends with ';'");
    }
    return 0;
}

/* A time column: Unix ns in 0..NX_UNIX_NS_MAX, the bound of device records,
 * so that spans and sums of the rows fit an int64 (device_trace.h). */
static int get_time(nx_sys_reader *r, unsigned i, int64_t *out, nx_error *err)
{
    if (get_int(r, i, false, out, err) != 0)
        return -1;
    if (*out > NX_UNIX_NS_MAX)
        return BAD(r, err, "column '%s': %" PRId64 " is not a Unix ns time a record may have (0 to %" PRId64 ")",
                   column_name(r->kind, i), *out, NX_UNIX_NS_MAX);
    return 0;
}

/* A decimal "12" or "12.5" from 0 to 100. */
static int get_percent(nx_sys_reader *r, unsigned i, double *out, nx_error *err)
{
    const char *s = r->field[i], *p = s;
    while (*p >= '0' && *p <= '9')
        p++;
    bool ok = p > s;
    if (ok && *p == '.') {
        const char *f = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        ok = p > f;
    }
    double v = ok && !*p ? strtod(s, NULL) : -1;
    if (!ok || *p || v < 0 || v > 100)
        return BAD(r, err, "column '%s': expected a decimal number from 0 to 100, got '%s'",
                   column_name(r->kind, i), shown(s).s);
    *out = v;
    return 0;
}

/* --- records ------------------------------------------------------------------------ */

static int parse_runtime(nx_sys_reader *r, nx_sys_runtime_event *e, nx_error *err)
{
    if (get_time(r, 0, &e->start_ns, err) || get_time(r, 1, &e->end_ns, err) ||
        get_text(r, 3, false, err) || get_int(r, 4, false, &e->pid, err) || get_int(r, 5, false, &e->tid, err) ||
        get_int(r, 6, true, &e->nc_idx, err) || get_int(r, 7, true, &e->worker_gid, err) ||
        check_flow_ids(r, 8, err) || check_attributes(r, 9, err))
        return -1;
    if (strcmp(r->field[2], "neuron_rt") != 0 && strcmp(r->field[2], "neuron_hw") != 0)
        return BAD(r, err, "column 'source': expected neuron_rt or neuron_hw, got '%s'", shown(r->field[2]).s);
    if (e->end_ns < e->start_ns)
        return BAD(r, err, "end_ns %" PRId64 " is before start_ns %" PRId64, e->end_ns, e->start_ns);
    e->source = r->field[2];
    e->name = r->field[3];
    e->flow_ids = r->field[8];
    e->attributes = r->field[9];
    return 0;
}

static int parse_cpu(nx_sys_reader *r, nx_sys_cpu_sample *s, nx_error *err)
{
    if (get_time(r, 0, &s->timestamp_ns, err) != 0)
        return -1;
    if (strcmp(r->field[1], "average") == 0)
        s->cpu = NX_SYS_CPU_AVERAGE;
    else if (get_int(r, 1, false, &s->cpu, err) != 0)
        return BAD(r, err, "column 'cpu': expected a CPU number or 'average', got '%s'", shown(r->field[1]).s);
    return get_percent(r, 2, &s->util_percent, err);
}

static int parse_mem(nx_sys_reader *r, nx_sys_mem_sample *s, nx_error *err)
{
    if (get_time(r, 0, &s->timestamp_ns, err) || get_int(r, 1, false, &s->used_bytes, err) ||
        get_int(r, 2, false, &s->total_bytes, err))
        return -1;
    if (s->total_bytes == 0 || s->used_bytes > s->total_bytes)
        return BAD(r, err, "used_bytes %" PRId64 " and total_bytes %" PRId64 "; expected 0 <= used <= total, "
                   "total > 0", s->used_bytes, s->total_bytes);
    return 0;
}

/* timestamp_ns, device_idx, hbm_idx, then the categories; total = their sum. */
static int parse_hbm(nx_sys_reader *r, nx_sys_hbm_sample *s, nx_error *err)
{
    if (get_time(r, 0, &s->timestamp_ns, err) || get_int(r, 1, false, &s->device_idx, err) ||
        get_int(r, 2, false, &s->hbm_idx, err))
        return -1;
    int64_t total = 0;
    for (unsigned c = 0; c < NX_HBM_CATEGORY_COUNT; c++) {
        if (get_int(r, 3 + c, false, &s->bytes[c], err) != 0)
            return -1;
        if (__builtin_add_overflow(total, s->bytes[c], &total))
            return BAD(r, err, "the categories up to '%s' add up to more than %" PRId64 " (int64); total_bytes "
                       "would overflow", HBM_COLUMNS[c], INT64_MAX);
    }
    s->total_bytes = total;
    return 0;
}

static int parse_record(nx_sys_reader *r, nx_sys_record *rec, nx_error *err)
{
    switch (r->kind) {
    case NX_SYS_RUNTIME_EVENTS: return parse_runtime(r, &rec->u.runtime, err);
    case NX_SYS_CPU_USAGE: return parse_cpu(r, &rec->u.cpu, err);
    case NX_SYS_HOST_MEM: return parse_mem(r, &rec->u.mem, err);
    case NX_SYS_DEVICE_MEM: return parse_hbm(r, &rec->u.hbm, err);
    }
    return BAD(r, err, "unknown file kind %d", (int)r->kind);
}

/* The first column, which lines are sorted by. */
static int64_t record_key(nx_sys_kind kind, const nx_sys_record *rec)
{
    switch (kind) {
    case NX_SYS_RUNTIME_EVENTS: return rec->u.runtime.start_ns;
    case NX_SYS_CPU_USAGE: return rec->u.cpu.timestamp_ns;
    case NX_SYS_HOST_MEM: return rec->u.mem.timestamp_ns;
    case NX_SYS_DEVICE_MEM: return rec->u.hbm.timestamp_ns;
    }
    return 0;
}

int nx_sys_reader_next(nx_sys_reader *r, nx_sys_record *rec, nx_error *err)
{
    int got = next_line(r, err);
    if (got <= 0)
        return got;
    if (split(r, err) != 0)
        return -1;
    memset(rec, 0, sizeof *rec);
    rec->line = r->line_no;
    if (parse_record(r, rec, err) != 0)
        return -1;
    int64_t key = record_key(r->kind, rec);
    if (key < r->last_key)
        return BAD(r, err, "%s %" PRId64 " is before the previous line's %" PRId64 "; lines must be sorted",
                   column_name(r->kind, 0), key, r->last_key);
    r->last_key = key;
    return 1;
}

/* --- open / close -------------------------------------------------------------------- */

/* Names the first column that differs before the expected line, which a long
 * header (device-memory) would otherwise push out of the message. */
static int bad_header(nx_sys_reader *r, const char *line, nx_error *err)
{
    const char *want = KINDS[r->kind].columns, *got = line;
    unsigned col = 1;
    for (;;) {
        size_t wl = strcspn(want, "\t"), gl = strcspn(got, "\t");
        bool same = wl == gl && strncmp(want, got, wl) == 0;
        if (same && want[wl] && got[gl]) {
            want += wl + 1, got += gl + 1, col++;
            continue;
        }
        if (same) {   /* one line ends here: the difference is the next column */
            want += wl + (want[wl] != '\0'), got += gl + (got[gl] != '\0'), col++;
        }
        break;
    }
    size_t wl = strcspn(want, "\t"), gl = strcspn(got, "\t");
    char is[sizeof(shown_text) + 8], should[48], cut[41];
    if (gl || *got) {
        snprintf(cut, sizeof cut, "%.*s", (int)(gl < 40 ? gl : 40), got);
        snprintf(is, sizeof is, "is '%s'", shown(cut).s);
    }
    else {
        snprintf(is, sizeof is, "is missing");
    }
    if (wl)
        snprintf(should, sizeof should, "expected '%.*s'", (int)wl, want);
    else
        snprintf(should, sizeof should, "expected no more columns");
    return BAD(r, err, "expected the header line (TAB-separated): column %u %s, %s; the header is '%s'", col, is,
               should, KINDS[r->kind].columns);
}

static int check_preamble(nx_sys_reader *r, nx_error *err)
{
    char want[64];
    snprintf(want, sizeof want, "#nxprof %s ", KINDS[r->kind].tag);
    int got = next_line(r, err);
    if (got < 0)
        return -1;
    if (got == 0)
        r->line_no++;   /* an empty file: line 1 is missing */
    if (got == 0 || strncmp(r->line, want, strlen(want)) != 0)
        return BAD(r, err, "expected the version line '%s%d'", want, NX_SYS_VERSION);
    const char *v = r->line + strlen(want);
    if (strcmp(v, "1") != 0)
        return BAD(r, err, "unsupported version '%s'; this reader reads %d", shown(v).s, NX_SYS_VERSION);
    got = next_line(r, err);
    if (got < 0)
        return -1;
    if (got == 0)
        r->line_no++;
    if (got == 0 || strcmp(r->line, KINDS[r->kind].columns) != 0)
        return bad_header(r, got == 0 ? "" : r->line, err);
    return 0;
}

int nx_sys_reader_open(const char *path, nx_sys_kind kind, nx_sys_reader **out, nx_error *err)
{
    *out = NULL;
    nx_sys_reader *r = calloc(1, sizeof *r);
    if (!r)
        return nx_cap_fail(err, path, "out of memory");
    r->fd = -1;
    r->kind = kind;
    r->last_key = INT64_MIN;
    r->line_cap = 4096;
    r->path = strdup(path);
    r->buf = malloc(READ_BUF);
    r->line = malloc(r->line_cap);
    if (!r->path || !r->buf || !r->line) {
        nx_sys_reader_close(r);
        return nx_cap_fail(err, path, "out of memory");
    }
    r->fd = nx_cap_open_input(path, NULL, err);
    if (r->fd < 0) {
        nx_sys_reader_close(r);
        return -1;
    }
    if (check_preamble(r, err) != 0) {
        nx_sys_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

void nx_sys_reader_close(nx_sys_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    free(r->line);
    free(r->path);
    free(r);
}

void nx_sys_attributes_to_json(const char *attributes, nx_strbuf *out)
{
    nx_strbuf_putc(out, '{');
    for (const char *p = attributes; *p;) {
        size_t klen = strcspn(p, "="), vlen = strcspn(p + klen + 1, ";");
        if (p != attributes)
            nx_strbuf_putc(out, ',');
        nx_json_put_string(out, p, klen);
        nx_strbuf_putc(out, ':');
        nx_json_put_string(out, p + klen + 1, vlen);
        p += klen + 1 + vlen;
        if (*p == ';')
            p++;
    }
    nx_strbuf_putc(out, '}');
}
