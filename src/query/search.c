/*
 * search.c — the search over timeline tables (rules in search.h).
 *
 * Each listed table is passed once through a window query over all time with
 * the field's column in dictionary form. A matcher answers "does this row
 * match" from a per-dictionary-entry flag table (rebuilt when a batch brings
 * another dictionary), a per-track flag table, or a compare of the row's
 * plain value. Per table the pass counts the matches before the position P,
 * at it and after it, and keeps the nearest match on the searched side (its
 * start, end and ordinal only). The event found is then read again with a
 * one-instant window for its track name and value.
 */
#include "query/search.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/engine/row_split.h"
#include "query/engine/window.h"
#include "util/fork_join.h"

/* An event's place in the search order: (start, table position + 1, ordinal);
 * table 0 sorts before every table (a position without from_ord). */
typedef struct skey {
    int64_t start;
    size_t table;
    int64_t ord;
} skey;

static int key_cmp(const skey *a, const skey *b)
{
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->table != b->table)
        return a->table < b->table ? -1 : 1;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static inline unsigned char fold(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c; }

bool nx_search_contains(const char *hay, size_t len, const char *needle, size_t nlen)
{
    if (nlen == 0)
        return true;
    if (nlen > len)
        return false;
    unsigned char first = fold((unsigned char)needle[0]);
    for (size_t i = 0; i + nlen <= len; i++) {
        if (fold((unsigned char)hay[i]) != first)
            continue;
        size_t k = 1;
        while (k < nlen && fold((unsigned char)hay[i + k]) == fold((unsigned char)needle[k]))
            k++;
        if (k == nlen)
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- matcher -- */

typedef enum mkind { M_TRACK, M_STRING, M_INT, M_NOTHING /* an integer column, q no integer */ } mkind;

typedef struct matcher {
    mkind kind;
    const nx_search_options *o;
    int64_t qi;                  /* M_INT: q as a number */
    uint64_t dict_id;            /* the dictionary `hit` was built for (have_dict) */
    bool have_dict, dict_any;    /* dict_any: some entry matches */
    uint8_t *hit;                /* per dictionary entry (+1 for null), or per track id */
    size_t hit_cap;
    size_t n_tracks;             /* M_TRACK: track ids whose flag is known */
} matcher;

static bool text_matches(const matcher *m, const char *s, size_t len)
{
    if (m->o->match == NX_SEARCH_EXACT)
        return len == m->o->q_len && memcmp(s, m->o->q, len) == 0;
    return nx_search_contains(s, len, m->o->q, m->o->q_len);
}

/* q as a decimal int64: optional '-', then digits. */
static bool parse_q(const char *q, size_t len, int64_t *out)
{
    char buf[24];
    if (len == 0 || len >= sizeof buf)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!(q[i] >= '0' && q[i] <= '9') && !(i == 0 && q[i] == '-' && len > 1))
            return false;
    memcpy(buf, q, len);
    buf[len] = '\0';
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno)
        return false;
    *out = v;
    return true;
}

static int hit_reserve(matcher *m, size_t n)
{
    if (n <= m->hit_cap)
        return 0;
    size_t cap = m->hit_cap ? m->hit_cap : 64;
    while (cap < n)
        cap *= 2;
    uint8_t *h = realloc(m->hit, cap);
    if (!h)
        return -1;
    m->hit = h;
    m->hit_cap = cap;
    return 0;
}

/* Flags per entry of column c's dictionary (c->dict_index non-NULL). */
static int dict_flags(matcher *m, const nxpq_column_data *c)
{
    if (m->have_dict && m->dict_id == c->dict_id)
        return 0;
    if (hit_reserve(m, c->dict_n + 1) < 0)
        return -1;
    bool any = false;
    for (size_t d = 0; d < c->dict_n; d++) {
        bool h = m->kind == M_STRING ? text_matches(m, c->dict_strs[d].ptr, c->dict_strs[d].len)
                                     : (c->type == NXPQ_INT64 ? c->dict_values.i64[d] : c->dict_values.i32[d]) == m->qi;
        m->hit[d] = h;
        any |= h;
    }
    m->hit[c->dict_n] = 0; /* null rows */
    m->dict_id = c->dict_id;
    m->have_dict = true;
    m->dict_any = any;
    return 0;
}

/* Flags of the window's tracks up to its current count. */
static int track_flags(matcher *m, const nx_window *w)
{
    size_t n = nx_window_track_count(w);
    if (n <= m->n_tracks)
        return 0;
    if (hit_reserve(m, n) < 0)
        return -1;
    for (size_t id = m->n_tracks; id < n; id++) {
        size_t len;
        const char *s = nx_window_track_name(w, (uint32_t)id, &len);
        m->hit[id] = text_matches(m, s, len);
    }
    m->n_tracks = n;
    return 0;
}

static bool row_matches(const matcher *m, const nxpq_column_data *c, size_t i, uint32_t track)
{
    switch (m->kind) {
    case M_TRACK:
        return m->hit[track];
    case M_STRING: {
        if (c->dict_index)
            return m->hit[c->dict_index[i]];
        const char *s;
        size_t len;
        return nx_column_str(c, i, &s, &len) && text_matches(m, s, len);
    }
    case M_INT: {
        if (c->dict_index)
            return m->hit[c->dict_index[i]];
        int64_t v;
        return nx_column_int(c, i, &v) && v == m->qi;
    }
    default:
        return false;
    }
}

/* ------------------------------------------------------------------ pass -- */

typedef struct table_pass {
    uint64_t total, before, at;  /* matches; before P; equal to P */
    bool have_best;              /* the nearest match on the searched side */
    skey best;
    int64_t best_end;
} table_pass;

/* The matcher for the field in table t: 0, or 1 when the table is skipped. */
static int matcher_for(matcher *m, nx_profile_table *t, const nx_search_options *o)
{
    *m = (matcher){.o = o};
    if (strcmp(o->field, "track") == 0) {
        m->kind = M_TRACK;
        return 0;
    }
    int c = nx_profile_table_find_column(t, o->field);
    if (c < 0)
        return 1;
    nxpq_type ty = nx_profile_table_column(t, (size_t)c)->type;
    if (ty == NXPQ_STRING)
        m->kind = M_STRING;
    else if (ty == NXPQ_INT32 || ty == NXPQ_INT64)
        m->kind = parse_q(o->q, o->q_len, &m->qi) ? M_INT : M_NOTHING;
    else
        return 1;
    return 0;
}

static void offer(table_pass *p, const nx_search_options *o, const skey *pos, const skey *k, int64_t end)
{
    int c = key_cmp(k, pos);
    p->total++;
    if (c < 0)
        p->before++;
    else if (c == 0)
        p->at++;
    bool side = o->dir == NX_SEARCH_NEXT ? c > 0 : c < 0;
    if (!side)
        return;
    if (!p->have_best || (o->dir == NX_SEARCH_NEXT ? key_cmp(k, &p->best) < 0 : key_cmp(k, &p->best) > 0)) {
        p->best = *k;
        p->best_end = end;
        p->have_best = true;
    }
}

/* Passes rows [rows_begin, rows_end) of table t (position ti in o->tables). */
static int scan_span(nx_profile_table *t, size_t ti, int64_t rows_begin, int64_t rows_end, matcher *m,
                     const skey *pos, table_pass *p, nx_error *err)
{
    const nx_search_options *o = m->o;
    const char *cols[1] = {o->field};
    bool column = m->kind == M_STRING || m->kind == M_INT;
    /* An integer is looked for only in pages whose statistics admit it. */
    nx_profile_range eq = {o->field, m->qi, m->qi};
    nx_window_options wo = {.start = INT64_MIN, .end = INT64_MAX, .columns = cols, .n_columns = column,
                            .dictionary = true, .ranges = &eq, .n_ranges = m->kind == M_INT,
                            .rows_begin = rows_begin, .rows_end = rows_end};
    nx_window *w = nx_window_open(t, &wo, err);
    if (!w)
        return -1;
    nx_window_batch b;
    int more;
    while ((more = nx_window_next(w, &b, err)) > 0) {
        const nxpq_column_data *c = column ? &b.batch->columns[0] : NULL;
        if (b.n_rows == 0)
            continue;
        int rc = 0;
        if (m->kind == M_TRACK)
            rc = track_flags(m, w);
        else if (c->dict_index)
            rc = dict_flags(m, c);
        if (rc < 0) {
            nx_error_set(err, "%s: out of memory searching %s", nx_profile_table_name(t), o->field);
            more = -1;
            break;
        }
        if (c && c->dict_index && !m->dict_any)
            continue; /* no entry of this dictionary matches */
        int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
        for (size_t k = 0; k < b.n_rows; k++) {
            if (!row_matches(m, c, b.rows[k], b.track[k]))
                continue;
            skey key = {b.start[k], ti + 1, base + b.rows[k]};
            offer(p, o, pos, &key, b.end[k]);
        }
    }
    nx_window_close(w);
    return more < 0 ? -1 : 0;
}

/* One worker of a table's pass: its span, its own table handle and flags. */
typedef struct span_job {
    const char *dir;
    const char *table;
    size_t ti, n_spans;
    int64_t rows;
    const matcher *proto;        /* kind and q as a number; hit flags are each worker's own */
    const skey *pos;
    table_pass pass[NX_FORK_JOIN_MAX];
    int rc[NX_FORK_JOIN_MAX];
    nx_error err[NX_FORK_JOIN_MAX];
} span_job;

static void span_work(void *ctx, size_t i)
{
    span_job *j = ctx;
    int64_t begin, end;
    nx_row_split_span(j->rows, j->n_spans, i, &begin, &end);
    nx_profile_table *t;
    j->rc[i] = nx_profile_table_open(j->dir, j->table, &t, &j->err[i]);
    if (j->rc[i] != 0) {
        if (j->rc[i] == NX_PROFILE_TABLE_ABSENT)
            j->rc[i] = nx_error_set(&j->err[i], "%s: the table went away while it was searched", j->table);
        return;
    }
    matcher m = *j->proto;
    j->rc[i] = scan_span(t, j->ti, begin, end, &m, j->pos, &j->pass[i], &j->err[i]);
    free(m.hit);
    nx_profile_table_close(t);
}

/* Folds a span's pass into the table's: counts add up, and the nearest match
 * of all spans is the nearest of their nearest, so the result is the one pass's. */
static void merge_pass(table_pass *to, const table_pass *p, nx_search_dir dir)
{
    to->total += p->total;
    to->before += p->before;
    to->at += p->at;
    if (p->have_best && (!to->have_best || (dir == NX_SEARCH_NEXT ? key_cmp(&p->best, &to->best) < 0
                                                                   : key_cmp(&p->best, &to->best) > 0))) {
        to->best = p->best;
        to->best_end = p->best_end;
        to->have_best = true;
    }
}

/* Table t's pass, its rows shared out among threads (row_split.h). */
static int scan_table(const char *dir, nx_profile_table *t, size_t ti, const matcher *m, const skey *pos,
                      table_pass *p, nx_error *err)
{
    span_job *j = calloc(1, sizeof *j);
    if (!j)
        return nx_error_set(err, "%s: out of memory searching %s", nx_profile_table_name(t), m->o->field);
    *j = (span_job){.dir = dir, .table = nx_profile_table_name(t), .ti = ti, .rows = nx_profile_table_num_rows(t),
                    .proto = m, .pos = pos};
    j->n_spans = nx_row_split_count(j->rows, m->o->threads);
    nx_fork_join(j->n_spans, span_work, j);
    int rc = 0;
    for (size_t i = 0; i < j->n_spans && rc == 0; i++) {
        if (j->rc[i] < 0) {
            *err = j->err[i];
            rc = -1;
        }
        merge_pass(p, &j->pass[i], m->o->dir);
    }
    free(j);
    return rc;
}

/* --------------------------------------------------------------- the event -- */

static int copy_text(char **dst, size_t *dlen, const char *s, size_t len)
{
    char *c = malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    *dst = c;
    *dlen = len;
    return 0;
}

/* The value of column c at row i into v. */
static int take_value(nx_search_value *v, const nxpq_column_data *c, size_t i)
{
    *v = (nx_search_value){.null = true};
    if (c->type == NXPQ_STRING) {
        const char *s;
        size_t len;
        if (nx_column_str(c, i, &s, &len)) {
            v->null = false;
            return copy_text(&v->s, &v->len, s, len);
        }
    } else if (nx_column_int(c, i, &v->i)) {
        v->null = false;
        v->is_int = true;
    }
    return 0;
}

/* Reads the track and value of the event found (r->table, ordinal, start). */
static int read_found(const char *dir, const nx_search_options *o, nx_search_result *r, nx_error *err)
{
    nx_profile_table *t;
    const char *tname = o->tables[r->table];
    if (nx_profile_table_open(dir, tname, &t, err) != 0)
        return -1;
    bool track = strcmp(o->field, "track") == 0;
    const char *cols[1] = {o->field};
    nx_window_options wo = {.start = r->start, .end = r->start, .columns = cols, .n_columns = !track};
    nx_window *w = nx_window_open(t, &wo, err);
    int rc = w ? 1 : -1, more = 0;
    nx_window_batch b;
    while (rc == 1 && (more = nx_window_next(w, &b, err)) > 0) {
        int64_t base = nx_row_ordinal(b.file, b.batch->first_row);
        for (size_t k = 0; k < b.n_rows && rc == 1; k++) {
            if (base + b.rows[k] != r->ordinal)
                continue;
            size_t len;
            const char *name = nx_window_track_name(w, b.track[k], &len);
            rc = copy_text(&r->track, &r->track_len, name, len);
            if (rc == 0 && track) {
                r->label = (nx_search_value){0};
                rc = copy_text(&r->label.s, &r->label.len, name, len);
            } else if (rc == 0) {
                rc = take_value(&r->label, &b.batch->columns[0], b.rows[k]);
            }
            if (rc < 0)
                nx_error_set(err, "%s: out of memory reading the event found", tname);
        }
    }
    if (more < 0)
        rc = -1;
    else if (rc == 1)
        rc = nx_error_set(err, "%s: the event at ordinal %lld changed while it was searched", tname,
                            (long long)r->ordinal);
    nx_window_close(w);
    nx_profile_table_close(t);
    return rc;
}

int nx_search_run(const char *profile_dir, const nx_search_options *o, nx_search_result *out, nx_error *err)
{
    *out = (nx_search_result){0};
    if (o->n_tables > NX_TIMELINE_TABLES)
        return nx_error_set(err, "search: at most %d tables", NX_TIMELINE_TABLES);
    skey pos = {o->from, o->have_from_ord ? o->from_table + 1 : 0, o->have_from_ord ? o->from_ord : -1};
    uint64_t counted = 0; /* matches before P, and at P when searching forward */
    matcher m;
    for (size_t i = 0; i < o->n_tables; i++) {
        nx_profile_table *t;
        int rc = nx_profile_table_open(profile_dir, o->tables[i], &t, err);
        if (rc < 0)
            goto fail;
        if (rc == NX_PROFILE_TABLE_ABSENT || matcher_for(&m, t, o) != 0) {
            out->skipped[out->n_skipped++] = i;
            nx_profile_table_close(t);
            continue;
        }
        table_pass p = {0};
        rc = m.kind == M_NOTHING ? 0 : scan_table(profile_dir, t, i, &m, &pos, &p, err);
        nx_profile_table_close(t);
        if (rc < 0)
            goto fail;
        out->total += p.total;
        counted += p.before + (o->dir == NX_SEARCH_NEXT ? p.at : 0);
        skey best = {out->start, out->table + 1, out->ordinal};
        if (p.have_best && (!out->found || (o->dir == NX_SEARCH_NEXT ? key_cmp(&p.best, &best) < 0
                                                                      : key_cmp(&p.best, &best) > 0))) {
            out->found = true;
            out->table = i;
            out->start = p.best.start;
            out->ordinal = p.best.ord;
            out->end = p.best_end;
        }
    }
    if (out->found) {
        /* No match lies between P and the event found, so the matches before it
         * are those counted before P (and at P, searching forward). */
        out->position = o->dir == NX_SEARCH_NEXT ? counted + 1 : counted;
        if (read_found(profile_dir, o, out, err) < 0)
            goto fail;
    }
    return 0;
fail:
    nx_search_free(out);
    return -1;
}

void nx_search_free(nx_search_result *r)
{
    if (!r)
        return;
    free(r->track);
    free(r->label.s);
    *r = (nx_search_result){0};
}
