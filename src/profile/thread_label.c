/* thread_label.c — a framework thread's label from its stored names (rules in thread_label.h). */
#include "profile/thread_label.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

/* String member `key` of the JSON object, decoded, blanks trimmed, into
 * out[0..cap); its length, or 0 when absent, not a string or blank. */
static size_t member(const char *json, size_t len, const char *key, char *out, size_t cap)
{
    size_t n = 0;
    if (!nx_json_string_member(json, len, key, out, cap - 1, &n))
        return 0;
    size_t a = 0;
    while (a < n && (out[a] == ' ' || out[a] == '\t'))
        a++;
    while (n > a && (out[n - 1] == ' ' || out[n - 1] == '\t'))
        n--;
    memmove(out, out + a, n - a);
    out[n - a] = '\0';
    return n - a;
}

/* Whether the event is an instant of global scope ("s":"g"): Kineto writes
 * those with a blank pid and tid, so nothing else names their track. */
static bool global_scope(const char *json, size_t len)
{
    char s[4];
    return member(json, len, "s", s, sizeof s) == 1 && s[0] == 'g';
}

/* The <process> part into out (cap bytes); false when nothing names it. */
static bool process_part(const char *json, size_t len, int64_t pid, char *out, size_t cap)
{
    char name[NX_THREAD_LABEL_MAX + 1];
    if (member(json, len, "process_labels", out, cap) && strcmp(out, "CPU") != 0)
        return true;
    if (member(json, len, "process_name", name, sizeof name)) {
        snprintf(out, cap, "%s (%" PRId64 ")", name, pid);
        return true;
    }
    if (member(json, len, "pid", out, cap))
        return true;
    if (global_scope(json, len)) {
        snprintf(out, cap, "Global");
        return true;
    }
    snprintf(out, cap, "process %" PRId64, pid);
    return false;
}

static bool thread_part(const char *json, size_t len, int64_t tid, char *out, size_t cap)
{
    if (member(json, len, "thread_name", out, cap) || member(json, len, "tid", out, cap))
        return true;
    if (global_scope(json, len)) {
        snprintf(out, cap, "instant events");
        return true;
    }
    snprintf(out, cap, "thread %" PRId64, tid);
    return false;
}

/* Cuts s at NX_THREAD_LABEL_MAX bytes, back to a UTF-8 character's start. */
static size_t cut_utf8(char *s, size_t n)
{
    if (n <= NX_THREAD_LABEL_MAX)
        return n;
    n = NX_THREAD_LABEL_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    s[n] = '\0';
    return n;
}

bool nx_thread_label_parts(const char *json, size_t len, int64_t pid, int64_t tid, int64_t rank, char *proc,
                           char *thread)
{
    char p[NX_THREAD_PART_MAX];
    bool named = process_part(json, len, pid, p, sizeof p);
    named |= thread_part(json, len, tid, thread, NX_THREAD_PART_MAX);
    if (rank < 0) {
        memcpy(proc, p, strlen(p) + 1);
        return named;
    }
    char full[NX_THREAD_PART_MAX + 32];
    int n = snprintf(full, sizeof full, "rank %" PRId64 " / %s", rank, p);
    size_t k = cut_utf8(full, n < 0 ? 0 : (size_t)n);
    memcpy(proc, full, k + 1);
    return true;   /* the rank alone tells the track apart */
}

/* Integer member `key`, or dflt when absent or not an integer. */
static int64_t int_member(const char *json, size_t len, const char *key, int64_t dflt)
{
    const char *v;
    size_t vl;
    char buf[24];
    if (!nx_json_member(json, len, key, &v, &vl) || vl == 0 || vl >= sizeof buf)
        return dflt;
    memcpy(buf, v, vl);
    buf[vl] = '\0';
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    return *end || errno ? dflt : (int64_t)x;
}

void nx_thread_sort_keys(const char *json, size_t len, int64_t pid, int64_t tid, int64_t *process_sort,
                         int64_t *thread_sort)
{
    *process_sort = int_member(json, len, "process_sort_index", pid);
    *thread_sort = int_member(json, len, "thread_sort_index", tid);
}

size_t nx_thread_label(const char *json, size_t len, int64_t pid, int64_t tid, int64_t rank, char *out)
{
    char p[NX_THREAD_PART_MAX], t[NX_THREAD_PART_MAX];
    if (!nx_thread_label_parts(json, len, pid, tid, rank, p, t))
        return 0;
    char full[2 * NX_THREAD_LABEL_MAX + 72];
    int n = snprintf(full, sizeof full, "%s / %s", p, t);
    size_t k = cut_utf8(full, n < 0 ? 0 : (size_t)n);
    memcpy(out, full, k + 1);
    return k;
}

static bool has(const nxpq_column_data *c, size_t r) { return !c->valid || c->valid[r]; }

static int64_t int_at(const nxpq_column_data *c, size_t r)
{
    return c->type == NXPQ_INT32 ? c->values.i32[r] : c->values.i64[r];
}

size_t nx_thread_label_of_row(const nx_thread_label_cols *c, size_t r, char *out)
{
    if (!has(c->json, r) || !has(c->source, r) || !has(c->pid, r) || !has(c->tid, r) ||
        c->source->offsets[r + 1] - c->source->offsets[r] != 9 ||
        memcmp(c->source->data + c->source->offsets[r], "framework", 9) != 0)
        return 0;
    return nx_thread_label(c->json->data + c->json->offsets[r], (size_t)(c->json->offsets[r + 1] - c->json->offsets[r]),
                           int_at(c->pid, r), int_at(c->tid, r), has(c->worker, r) ? int_at(c->worker, r) : -1, out);
}

const char *const nx_thread_label_columns[NX_THREAD_LABEL_COLUMNS] = {
    "extra_attributes_json", "trace_event_source", "process_id", "thread_id", "worker_gid"};

bool nx_thread_label_columns_ok(const nx_profile_table *t)
{
    for (size_t i = 0; i < NX_THREAD_LABEL_COLUMNS; i++) {
        int c = nx_profile_table_find_column(t, nx_thread_label_columns[i]);
        nxpq_type ty = c < 0 ? NXPQ_UNSUPPORTED : nx_profile_table_column(t, (size_t)c)->type;
        if (i < 2 ? ty != NXPQ_STRING : ty != NXPQ_INT32 && ty != NXPQ_INT64)
            return false;
    }
    return true;
}
