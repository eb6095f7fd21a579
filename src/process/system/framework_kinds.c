/*
 * framework_kinds.c — what each kind of Chrome event becomes as a
 * SystemProfileEvents row, apart from pairing (framework_events.c): its
 * extra_attributes_json, the synthetic thread of an async track, the text of
 * an id and the keys of its flows. The rules are in system_events.c's header
 * comment; these functions only build text, so they are tested alone
 * (tests/unit/process/test_framework_kinds.c).
 */
#define _GNU_SOURCE /* memmem */
#include "process/system/system_internal.h"

#include <inttypes.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY   /* XXH3_state_t on the stack: hashing allocates nothing */
#include <xxhash.h>

#include "util/json.h"

bool nx_fw_is_slice(char ph)
{
    return ph == 'X' || ph == 'B';
}

const char *nx_fw_ref_text(const nx_chrome_ref *r, nx_strbuf *out)
{
    out->len = 0;
    if (r->kind == NX_CHROME_REF_NUMBER)
        nx_strbuf_printf(out, "%" PRId64, r->num);
    else if (r->kind == NX_CHROME_REF_STRING && r->str.s)
        nx_strbuf_puts(out, r->str.s);   /* cut at a "\u0000", as names are */
    else
        return NULL;
    char *end = nx_strbuf_reserve(out, 1);   /* terminated even when empty */
    if (!end)
        return NULL;
    *end = '\0';
    return out->data;
}

int64_t nx_fw_async_track(const char *cat, const char *name)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, "async\x1f", 6);
    XXH3_64bits_update(&st, cat, strlen(cat));
    XXH3_64bits_update(&st, "\x1f", 1);
    XXH3_64bits_update(&st, name, strlen(name));
    return -1 - (int64_t)(XXH3_64bits_digest(&st) >> 1);
}

int64_t nx_fw_async_key(const char *cat, const char *id)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, cat, strlen(cat));
    XXH3_64bits_update(&st, "\x1f", 1);
    XXH3_64bits_update(&st, id, strlen(id));
    return (int64_t)(XXH3_64bits_digest(&st) >> 1);
}

/* A member's value as the processor keeps it: a string's raw content
 * (quotes dropped), a scalar's text; false for null, an object or an array. */
static bool args_scalar(const char **val, size_t *vlen)
{
    if (**val == '"') {
        (*val)++;
        *vlen -= 2;
        return true;
    }
    return **val != '{' && **val != '[' && !(*vlen == 4 && memcmp(*val, "null", 4) == 0);
}

/* The first member named key (len n) fills v and vl once: later ones are ignored,
 * as nx_json_member finds the first. */
static void take_member(const char *k, size_t kl, const char *key, size_t n, const char *val, size_t vlen,
                        bool *seen, const char **v, size_t *vl)
{
    if (*seen || kl != n || memcmp(k, key, n) != 0)
        return;
    *seen = true;
    if (args_scalar(&val, &vlen)) {
        *v = val;
        *vl = vlen;
    }
}

/* False when none of the keys nx_fw_slice_args_find wants can be a member of
 * the args text s[0..len): none appears there in quotes (a member's key is
 * compared as written, so this is exact). Most args, an operator's shapes,
 * hold none, and skip the pass member by member. */
static bool may_hold_keys(const char *s, size_t len)
{
    return memmem(s, len, "\"stream\"", 8) || memmem(s, len, "\"flow_id\"", 9) ||
           memmem(s, len, "\"correlation\"", 13);
}

void nx_fw_slice_args_find(const nx_chrome_event *ev, nx_fw_slice_args *a)
{
    *a = (nx_fw_slice_args){0};
    nx_json_iter it;
    if (!nx_fw_is_slice(ev->ph) || !ev->args.s || !may_hold_keys(ev->args.s, ev->args.len) ||
        !nx_json_members_begin(&it, ev->args.s, ev->args.len))
        return;
    bool seen[3] = {false, false, false};
    const char *k, *v;
    size_t kl, vl;
    while (!(seen[0] && seen[1] && seen[2]) && nx_json_members_next(&it, &k, &kl, &v, &vl)) {
        take_member(k, kl, "stream", 6, v, vl, &seen[0], &a->stream, &a->stream_len);
        take_member(k, kl, "flow_id", 7, v, vl, &seen[1], &a->flow_id, &a->flow_id_len);
        take_member(k, kl, "correlation", 11, v, vl, &seen[2], &a->correlation, &a->correlation_len);
    }
}

/* s[0..len) appended with each NX_FW_FLOW_SEP byte (a control character no
 * tool puts in a category or id) as U+FFFD, so that it cannot split a key. */
static void put_flow_part(nx_strbuf *list, const char *s, size_t len)
{
    for (const char *sep; (sep = memchr(s, NX_FW_FLOW_SEP, len)); len -= (size_t)(sep + 1 - s), s = sep + 1) {
        nx_strbuf_append(list, s, (size_t)(sep - s));
        nx_strbuf_puts(list, "\xef\xbf\xbd");
    }
    nx_strbuf_append(list, s, len);
}

/* Appends the key "<cat>:<id>" to the list. */
static void flow_key(nx_strbuf *list, const char *cat, const char *id)
{
    if (list->len)
        nx_strbuf_putc(list, NX_FW_FLOW_SEP);
    put_flow_part(list, cat, strlen(cat));
    nx_strbuf_putc(list, ':');
    put_flow_part(list, id, strlen(id));
}

void nx_fw_flows(nx_strbuf *list, const nx_chrome_event *ev, const nx_fw_slice_args *a, const char *id,
                 nx_strbuf *scratch)
{
    const char *cat = ev->cat.s ? ev->cat.s : "";
    list->len = 0;
    if (!nx_fw_is_slice(ev->ph)) {
        if (id && (ev->ph == 's' || ev->ph == 't' || ev->ph == 'f'))
            flow_key(list, cat, id);
        return;
    }
    if (a->flow_id)
        put_flow_part(list, a->flow_id, a->flow_id_len);
    else if (a->correlation)
        put_flow_part(list, a->correlation, a->correlation_len);
    const char *bind = nx_fw_ref_text(&ev->bind_id, scratch);
    if (bind)
        flow_key(list, cat, bind);
}

/* ,"key": before a member (no comma before the first). */
static void put_key(nx_strbuf *b, const char *key)
{
    if (b->len > 1)
        nx_strbuf_putc(b, ',');
    nx_strbuf_putc(b, '"');
    nx_strbuf_puts(b, key);
    nx_strbuf_puts(b, "\":");
}

static void put_text_member(nx_strbuf *b, const char *key, const char *s)
{
    put_key(b, key);
    nx_json_put_cstr(b, s);   /* the reader's strings may hold "\u0000": cut there, as a C string */
}

static void put_true(nx_strbuf *b, const char *key)
{
    put_key(b, key);
    nx_strbuf_puts(b, "true");
}

/* The "tid" member: a string tid always (slices and every kind keep it so);
 * on an async row, whose thread_id is its track, a numeric tid too. */
static void put_tid(nx_strbuf *b, const nx_chrome_event *ev, bool async)
{
    if (ev->tid.kind == NX_CHROME_REF_STRING && ev->tid.str.s) {
        put_text_member(b, "tid", ev->tid.str.s);
    } else if (async && ev->tid.kind == NX_CHROME_REF_NUMBER) {
        put_key(b, "tid");
        nx_strbuf_printf(b, "%" PRId64, ev->tid.num);
    }
}

void nx_fw_attrs(nx_strbuf *b, const nx_chrome_event *ev, const char *id, const char *thread_name)
{
    bool slice = nx_fw_is_slice(ev->ph);
    b->len = 0;
    nx_strbuf_putc(b, '{');
    if (!slice) {
        char ph[2] = {ev->ph, '\0'};
        put_key(b, "ph");
        nx_json_put_string(b, ph, 1);
    }
    if (ev->cat.s)
        put_text_member(b, "cat", ev->cat.s);
    if (ev->pid.kind == NX_CHROME_REF_STRING && ev->pid.str.s)
        put_text_member(b, "pid", ev->pid.str.s);
    put_tid(b, ev, thread_name != NULL);
    if (!slice && id)
        put_text_member(b, "id", id);
    if (!slice && ev->s.s)
        put_text_member(b, "s", ev->s.s);
    if (!slice && ev->bp.s)
        put_text_member(b, "bp", ev->bp.s);
    if (slice && ev->flow_in)
        put_true(b, "flow_in");
    if (slice && ev->flow_out)
        put_true(b, "flow_out");
    if (ev->args.s) {
        put_key(b, "args");
        nx_strbuf_append(b, ev->args.s, ev->args.len);
    }
    if (ev->args_too_large)
        put_true(b, "args_truncated");
    if (thread_name)
        put_text_member(b, "thread_name", thread_name);
    nx_strbuf_putc(b, '}');
}
