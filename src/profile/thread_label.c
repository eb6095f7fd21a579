/* thread_label.c — a framework thread's label from its stored names (rules in thread_label.h). */
#include "profile/thread_label.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
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
    snprintf(out, cap, "process %" PRId64, pid);
    return false;
}

static bool thread_part(const char *json, size_t len, int64_t tid, char *out, size_t cap)
{
    if (member(json, len, "thread_name", out, cap) || member(json, len, "tid", out, cap))
        return true;
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

size_t nx_thread_label(const char *json, size_t len, int64_t pid, int64_t tid, char *out)
{
    char p[NX_THREAD_LABEL_MAX + 32], t[NX_THREAD_LABEL_MAX + 32];
    bool named = process_part(json, len, pid, p, sizeof p);
    named |= thread_part(json, len, tid, t, sizeof t);
    if (!named)
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
                           int_at(c->pid, r), int_at(c->tid, r), out);
}
