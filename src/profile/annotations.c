/*
 * annotations.c — the annotations document: parsed and validated with the strict
 * tokenizer (util/json_scan.h), checked, written, appended (annotations.h).
 *
 * Markers and regions are read by one routine driven by a table of their members
 * (name, kind, limits, where the value goes), so the two share every rule.
 */
#include "profile/annotations.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/json_scan.h"

/* ---------------------------------------------------------- members -- */

enum member_kind { M_TIME, M_TEXT, M_COLOUR };

typedef struct member {
    const char *name;
    enum member_kind kind;
    bool required;
    bool nonempty;
    size_t max;     /* M_TEXT: the most bytes */
    size_t off;     /* where the value goes in the item */
} member;

#define N_MARKER_MEMBERS 4
static const member MARKER_MEMBERS[N_MARKER_MEMBERS] = {
    {"time_ns", M_TIME, true, false, 0, offsetof(nx_marker, time_ns)},
    {"label", M_TEXT, true, false, NX_ANNOTATIONS_MAX_TEXT, offsetof(nx_marker, label)},
    {"colour", M_COLOUR, false, false, 0, offsetof(nx_marker, colour)},
    {"track", M_TEXT, false, false, NX_ANNOTATIONS_MAX_TEXT, offsetof(nx_marker, track)},
};

#define N_REGION_MEMBERS 5
static const member REGION_MEMBERS[N_REGION_MEMBERS] = {
    {"start_ns", M_TIME, true, false, 0, offsetof(nx_region, start_ns)},
    {"end_ns", M_TIME, true, false, 0, offsetof(nx_region, end_ns)},
    {"name", M_TEXT, true, true, NX_ANNOTATIONS_MAX_TEXT, offsetof(nx_region, name)},
    {"colour", M_COLOUR, false, false, 0, offsetof(nx_region, colour)},
    {"note", M_TEXT, false, false, NX_ANNOTATIONS_MAX_NOTE, offsetof(nx_region, note)},
};

/* One kind of item (markers or regions): its list's name and members. */
typedef struct item_kind {
    const char *list;
    const member *members;
    size_t n_members;
    size_t size;
} item_kind;

static const item_kind MARKERS = {"markers", MARKER_MEMBERS, N_MARKER_MEMBERS, sizeof(nx_marker)};
static const item_kind REGIONS = {"regions", REGION_MEMBERS, N_REGION_MEMBERS, sizeof(nx_region)};

static int64_t *time_at(void *item, const member *m)
{
    return (int64_t *)((char *)item + m->off);
}

static char **text_at(void *item, const member *m)
{
    return (char **)((char *)item + m->off);
}

/* ----------------------------------------------------------- checks -- */

/* True when s is "#" and 3 or 6 hex digits. */
static bool colour_ok(const char *s)
{
    size_t n = strlen(s);
    if ((n != 4 && n != 7) || s[0] != '#')
        return false;
    for (size_t i = 1; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF", s[i]))
            return false;
    return true;
}

/* True when s is valid UTF-8: the escaper's repair (util/json.h) leaves it as it is. */
static bool utf8_ok(const char *s)
{
    nx_strbuf b = NX_STRBUF_INIT;
    size_t n = strlen(s);
    nx_json_put_utf8(&b, s, n);
    bool same = !nx_strbuf_failed(&b) && b.len == n && (n == 0 || memcmp(b.data, s, n) == 0);
    nx_strbuf_free(&b);
    return same;
}

/* The message for item i's member m of list `list`: "<source>: <list>[i].<m>: <why>". */
__attribute__((format(printf, 6, 7))) static int member_error(nx_error *err, const char *source, const char *list,
                                                              size_t i, const char *m, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return nx_error_set(err, "%s: %s[%zu].%s: %s", source, list, i, m, why);
}

static int check_item(const item_kind *k, const void *item, size_t i, const char *source, nx_error *err)
{
    for (size_t j = 0; j < k->n_members; j++) {
        const member *m = &k->members[j];
        if (m->kind == M_TIME)
            continue;
        const char *s = *text_at((void *)item, m);
        if (!s && m->required)
            return member_error(err, source, k->list, i, m->name, "missing");
        if (!s)
            continue;
        if (m->kind == M_COLOUR && !colour_ok(s))
            return member_error(err, source, k->list, i, m->name, "not a colour (\"#\" and 3 or 6 hex digits)");
        if (m->kind == M_TEXT && strlen(s) > m->max)
            return member_error(err, source, k->list, i, m->name, "longer than %zu bytes", m->max);
        if (m->nonempty && !*s)
            return member_error(err, source, k->list, i, m->name, "empty");
        if (!utf8_ok(s))
            return member_error(err, source, k->list, i, m->name, "not valid UTF-8");
    }
    return 0;
}

int nx_annotations_check(const nx_annotations *a, const char *source, nx_error *err)
{
    if (a->n_markers > NX_ANNOTATIONS_MAX_ITEMS || a->n_regions > NX_ANNOTATIONS_MAX_ITEMS)
        return nx_error_set(err, "%s: more than %d %s", source, NX_ANNOTATIONS_MAX_ITEMS,
                              a->n_markers > NX_ANNOTATIONS_MAX_ITEMS ? "markers" : "regions");
    for (size_t i = 0; i < a->n_markers; i++)
        if (check_item(&MARKERS, &a->markers[i], i, source, err) < 0)
            return -1;
    for (size_t i = 0; i < a->n_regions; i++) {
        if (check_item(&REGIONS, &a->regions[i], i, source, err) < 0)
            return -1;
        if (a->regions[i].end_ns < a->regions[i].start_ns)
            return member_error(err, source, "regions", i, "end_ns", "%" PRId64 " is before start_ns %" PRId64,
                                a->regions[i].end_ns, a->regions[i].start_ns);
    }
    return 0;
}

/* ----------------------------------------------------------- parser -- */

typedef struct text_reader {
    const char *p;
    size_t left;
} text_reader;

static long text_read(void *ctx, char *dst, size_t cap, nx_error *why)
{
    (void)why;
    text_reader *r = ctx;
    size_t n = r->left < cap ? r->left : cap;
    memcpy(dst, r->p, n);
    r->p += n;
    r->left -= n;
    return (long)n;
}

typedef struct parser {
    nx_json_scan scan;
    nx_json_token t;
    const char *source;
    nx_error *err;
} parser;

/* The next token; a grammar error is reported here (the kind is then NX_JSON_FAIL). */
static nx_json_kind next(parser *p)
{
    nx_json_kind k = nx_json_scan_next(&p->scan, &p->t);
    if (k == NX_JSON_FAIL)
        nx_error_set(p->err, "%s: %s (at byte %" PRIu64 ")", p->source, p->scan.err, p->scan.err_offset);
    return k;
}

/* The key token as it may be shown in a message: escaped, cut to 64 bytes. */
static void shown_key(const parser *p, char *out, size_t cap)
{
    size_t n = p->t.len < 64 ? p->t.len : 64;
    char buf[NX_JSON_ESCAPE_MAX * 64 + 3];
    size_t w = nx_json_escape(buf, p->t.s, n);
    snprintf(out, cap, "%.*s%s", (int)w, buf, p->t.len > n ? "..." : "");
}

/* The current number or string token as an int64 ns time: decimal digits only. */
static int token_time(const parser *p, int64_t *out)
{
    const nx_json_token *t = &p->t;
    if (t->kind != NX_JSON_NUMBER && t->kind != NX_JSON_STRING)
        return -1;
    char buf[32];
    if (t->len == 0 || t->len >= sizeof buf)
        return -1;
    memcpy(buf, t->s, t->len);
    buf[t->len] = '\0';
    const char *digits = buf[0] == '-' ? buf + 1 : buf;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (errno == ERANGE || *end)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* Reads the value of member m of item i into the item. */
static int read_member(parser *p, const item_kind *k, const member *m, void *item, size_t i)
{
    nx_json_kind kind = next(p);
    if (kind == NX_JSON_FAIL)
        return -1;
    if (m->kind == M_TIME)
        return token_time(p, time_at(item, m)) == 0 ? 0
               : member_error(p->err, p->source, k->list, i, m->name, "not an integer number of ns");
    if (kind == NX_JSON_NULL && !m->required)
        return 0;   /* null: left out */
    if (kind != NX_JSON_STRING)
        return member_error(p->err, p->source, k->list, i, m->name, "not a string");
    if (memchr(p->t.s, '\0', p->t.len))
        return member_error(p->err, p->source, k->list, i, m->name, "holds a NUL character");
    char *s = malloc(p->t.len + 1);
    if (!s)
        return nx_error_set(p->err, "out of memory");
    memcpy(s, p->t.s, p->t.len);
    s[p->t.len] = '\0';
    *text_at(item, m) = s;
    return 0;
}

/* Reads item i (its '{' already read) of kind k into `item` (zeroed). */
static int read_item(parser *p, const item_kind *k, void *item, size_t i)
{
    unsigned seen = 0;
    for (;;) {
        nx_json_kind kind = next(p);
        if (kind == NX_JSON_FAIL)
            return -1;
        if (kind == NX_JSON_END_MAP)
            break;
        size_t j = 0;
        while (j < k->n_members && (strlen(k->members[j].name) != p->t.len ||
                                    memcmp(k->members[j].name, p->t.s, p->t.len) != 0))
            j++;
        char key[400];
        shown_key(p, key, sizeof key);
        if (j == k->n_members)
            return nx_error_set(p->err, "%s: %s[%zu]: unknown member %s", p->source, k->list, i, key);
        if (seen & (1u << j))
            return member_error(p->err, p->source, k->list, i, k->members[j].name, "given twice");
        seen |= 1u << j;
        if (read_member(p, k, &k->members[j], item, i) < 0)
            return -1;
    }
    for (size_t j = 0; j < k->n_members; j++)
        if (k->members[j].required && !(seen & (1u << j)))
            return member_error(p->err, p->source, k->list, i, k->members[j].name, "missing");
    return 0;
}

/* Reads the list of kind k (an array of objects) into *items, *n. */
static int read_list(parser *p, const item_kind *k, void **items, size_t *n)
{
    nx_json_kind kind = next(p);
    if (kind == NX_JSON_FAIL)
        return -1;
    if (kind != NX_JSON_START_ARRAY)
        return nx_error_set(p->err, "%s: %s: not an array", p->source, k->list);
    for (;;) {
        if ((kind = next(p)) == NX_JSON_FAIL)
            return -1;
        if (kind == NX_JSON_END_ARRAY)
            return 0;
        if (kind != NX_JSON_START_MAP)
            return nx_error_set(p->err, "%s: %s[%zu]: not an object", p->source, k->list, *n);
        if (*n == NX_ANNOTATIONS_MAX_ITEMS)
            return nx_error_set(p->err, "%s: %s: more than %d", p->source, k->list, NX_ANNOTATIONS_MAX_ITEMS);
        char *grown = realloc(*items, (*n + 1) * k->size);
        if (!grown)
            return nx_error_set(p->err, "out of memory");
        *items = grown;
        void *item = grown + *n * k->size;
        memset(item, 0, k->size);
        (*n)++;   /* counted at once, so a failure frees its strings */
        if (read_item(p, k, item, *n - 1) < 0)
            return -1;
    }
}

static int read_version(parser *p)
{
    int64_t v = 0;
    if (next(p) == NX_JSON_FAIL)
        return -1;
    if (p->t.kind != NX_JSON_NUMBER || token_time(p, &v) < 0)
        return nx_error_set(p->err, "%s: version: not an integer", p->source);
    if (v != NX_ANNOTATIONS_VERSION)
        return nx_error_set(p->err, "%s: version: %" PRId64 " is not supported (this nxprof reads version %d)",
                              p->source, v, NX_ANNOTATIONS_VERSION);
    return 0;
}

/* The document's top-level object, then the end of the text. */
static int read_document(parser *p, nx_annotations *a)
{
    nx_json_kind kind = next(p);
    if (kind == NX_JSON_FAIL)
        return -1;
    if (kind != NX_JSON_START_MAP)
        return nx_error_set(p->err, "%s: not a JSON object", p->source);
    bool version = false, markers = false, regions = false;
    while ((kind = next(p)) == NX_JSON_KEY) {
        char key[400];
        shown_key(p, key, sizeof key);
        bool *seen = strcmp(key, "\"version\"") == 0 ? &version : strcmp(key, "\"markers\"") == 0 ? &markers
                     : strcmp(key, "\"regions\"") == 0 ? &regions : NULL;
        if (!seen)
            return nx_error_set(p->err, "%s: unknown member %s (known: version, markers, regions)", p->source, key);
        if (*seen)
            return nx_error_set(p->err, "%s: %s given twice", p->source, key);
        *seen = true;
        int rc = seen == &version ? read_version(p)
                 : seen == &markers ? read_list(p, &MARKERS, (void **)&a->markers, &a->n_markers)
                                    : read_list(p, &REGIONS, (void **)&a->regions, &a->n_regions);
        if (rc < 0)
            return -1;
    }
    if (kind == NX_JSON_FAIL)
        return -1;
    if (!version)
        return nx_error_set(p->err, "%s: version: missing", p->source);
    if ((kind = next(p)) == NX_JSON_FAIL)
        return -1;
    if (kind != NX_JSON_EOF || !nx_json_scan_complete(&p->scan))
        return nx_error_set(p->err, "%s: text after the document's object", p->source);
    return 0;
}

int nx_annotations_parse(const char *text, size_t len, const char *source, nx_annotations *a, nx_error *err)
{
    memset(a, 0, sizeof *a);
    if (len > NX_ANNOTATIONS_MAX_BYTES)
        return nx_error_set(err, "%s: larger than %d bytes", source, NX_ANNOTATIONS_MAX_BYTES);
    text_reader r = {text, len};
    parser p = {.source = source, .err = err};
    if (nx_json_scan_init(&p.scan, 64 * 1024, 8, text_read, &r) < 0)
        return nx_error_set(err, "out of memory");
    int rc = read_document(&p, a);
    nx_json_scan_free(&p.scan);
    if (rc == 0)
        rc = nx_annotations_check(a, source, err);
    if (rc < 0)
        nx_annotations_free(a);
    return rc;
}

/* ----------------------------------------------------------- writer -- */

static void put_item(nx_strbuf *b, const item_kind *k, const void *item)
{
    nx_strbuf_putc(b, '{');
    for (size_t j = 0; j < k->n_members; j++) {
        const member *m = &k->members[j];
        const char *s = m->kind == M_TIME ? NULL : *text_at((void *)item, m);
        if (m->kind != M_TIME && !s)
            continue;
        nx_strbuf_printf(b, "%s\"%s\":", j ? "," : "", m->name);
        if (m->kind == M_TIME)
            nx_json_put_i64(b, *time_at((void *)item, m), true);
        else
            nx_json_put_cstr(b, s);
    }
    nx_strbuf_putc(b, '}');
}

static void put_list(nx_strbuf *b, const item_kind *k, const void *items, size_t n)
{
    nx_strbuf_printf(b, ",\"%s\":[", k->list);
    for (size_t i = 0; i < n; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        put_item(b, k, (const char *)items + i * k->size);
    }
    nx_strbuf_putc(b, ']');
}

void nx_annotations_json(const nx_annotations *a, nx_strbuf *out)
{
    nx_strbuf_printf(out, "{\"version\":%d", NX_ANNOTATIONS_VERSION);
    put_list(out, &MARKERS, a->markers, a->n_markers);
    put_list(out, &REGIONS, a->regions, a->n_regions);
    nx_strbuf_puts(out, "}\n");
}

/* ------------------------------------------------------ copy and free -- */

static void free_item(const item_kind *k, void *item)
{
    for (size_t j = 0; j < k->n_members; j++)
        if (k->members[j].kind != M_TIME)
            free(*text_at(item, &k->members[j]));
}

/* Copies item `from` of kind k into `to`: -1 when out of memory (to holds what was copied). */
static int copy_item(const item_kind *k, void *to, const void *from)
{
    memcpy(to, from, k->size);
    int rc = 0;
    for (size_t j = 0; j < k->n_members; j++) {
        const member *m = &k->members[j];
        if (m->kind == M_TIME)
            continue;
        const char *s = *text_at((void *)from, m);
        char **slot = text_at(to, m);
        *slot = s && rc == 0 ? strdup(s) : NULL;
        if (s && !*slot)
            rc = -1;
    }
    return rc;
}

static int append_list(const item_kind *k, void **items, size_t *n, const void *from, size_t m)
{
    char *grown = m ? realloc(*items, (*n + m) * k->size) : *items;
    if (m && !grown)
        return -1;
    *items = grown;
    for (size_t i = 0; i < m; i++) {
        int rc = copy_item(k, grown + (*n) * k->size, (const char *)from + i * k->size);
        (*n)++;   /* its strings are freed with the rest */
        if (rc < 0)
            return -1;
    }
    return 0;
}

int nx_annotations_append(nx_annotations *into, const nx_annotations *from, nx_error *err)
{
    if (into->n_markers + from->n_markers > NX_ANNOTATIONS_MAX_ITEMS ||
        into->n_regions + from->n_regions > NX_ANNOTATIONS_MAX_ITEMS)
        return nx_error_set(err, "together they hold more than %d markers or regions", NX_ANNOTATIONS_MAX_ITEMS);
    size_t markers = into->n_markers, regions = into->n_regions;
    if (append_list(&MARKERS, (void **)&into->markers, &into->n_markers, from->markers, from->n_markers) < 0 ||
        append_list(&REGIONS, (void **)&into->regions, &into->n_regions, from->regions, from->n_regions) < 0) {
        for (size_t i = markers; i < into->n_markers; i++)
            free_item(&MARKERS, &into->markers[i]);
        for (size_t i = regions; i < into->n_regions; i++)
            free_item(&REGIONS, &into->regions[i]);
        into->n_markers = markers;
        into->n_regions = regions;
        return nx_error_set(err, "out of memory");
    }
    return 0;
}

void nx_annotations_free(nx_annotations *a)
{
    for (size_t i = 0; i < a->n_markers; i++)
        free_item(&MARKERS, &a->markers[i]);
    for (size_t i = 0; i < a->n_regions; i++)
        free_item(&REGIONS, &a->regions[i]);
    free(a->markers);
    free(a->regions);
    memset(a, 0, sizeof *a);
}
