/* timeline.c — the viewer's timeline answer (see timeline.h). */
#include "query/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "profile/timeline_index.h"
#include "query/engine/budget.h"
#include "query/engine/sampled_pass.h"
#include "query/engine/window.h"
#include "schema/schema.h"

/* ------------------------------------------------------------ interning -- */

/* Strings interned by content, ids dense from 0 (open addressing over one buffer). */
typedef struct strtab {
    char *bytes;
    size_t len, cap;
    size_t *off, *slen;              /* per string */
    size_t n, cap_n;
    int32_t *slots;                  /* string id + 1, 0 empty */
    size_t n_slots;
    bool failed;                     /* out of memory: every later add fails */
} strtab;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static bool strtab_rehash(strtab *t)
{
    size_t ns = t->n_slots ? t->n_slots * 2 : 256;
    int32_t *sl = calloc(ns, sizeof *sl);
    if (!sl)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        size_t h = (size_t)hash_bytes(t->bytes + t->off[i], t->slen[i]) & (ns - 1);
        while (sl[h])
            h = (h + 1) & (ns - 1);
        sl[h] = (int32_t)i + 1;
    }
    free(t->slots);
    t->slots = sl;
    t->n_slots = ns;
    return true;
}

/* The id of s[0..n), added when new; -1 (and t->failed) when out of memory. */
static int32_t strtab_add(strtab *t, const char *s, size_t n)
{
    if (t->failed || (2 * (t->n + 1) > t->n_slots && !strtab_rehash(t)) || t->n >= INT32_MAX - 1)
        return t->failed = true, -1;
    size_t h = (size_t)hash_bytes(s, n) & (t->n_slots - 1);
    for (; t->slots[h]; h = (h + 1) & (t->n_slots - 1)) {
        size_t i = (size_t)t->slots[h] - 1;
        if (t->slen[i] == n && memcmp(t->bytes + t->off[i], s, n) == 0)
            return (int32_t)i;
    }
    if (t->n == t->cap_n) {
        size_t c = t->cap_n ? 2 * t->cap_n : 64;
        size_t *o = realloc(t->off, c * sizeof *o);
        if (o)
            t->off = o;
        size_t *l = realloc(t->slen, c * sizeof *l);
        if (l)
            t->slen = l;
        if (!o || !l)
            return t->failed = true, -1;
        t->cap_n = c;
    }
    if (t->len + n + 1 > t->cap) {
        size_t c = t->cap ? t->cap : 1024;
        while (c < t->len + n + 1)
            c *= 2;
        char *b = realloc(t->bytes, c);
        if (!b)
            return t->failed = true, -1;
        t->bytes = b;
        t->cap = c;
    }
    if (n)
        memcpy(t->bytes + t->len, s, n);
    t->off[t->n] = t->len;
    t->slen[t->n] = n;
    t->len += n;
    t->slots[h] = (int32_t)t->n + 1;
    return (int32_t)t->n++;
}

static void strtab_free(strtab *t)
{
    free(t->bytes);
    free(t->off);
    free(t->slen);
    free(t->slots);
}

/* -------------------------------------------------------- one table's labels -- */

/* A table's kept events with their labels, before grouping by track. String
 * label values are ids into the table's own strings. */
typedef struct part {
    const char *dir, *table;
    nx_sampled sp;
    size_t nl;                       /* labels (at least 1 for the arrays' stride) */
    const char *const *labels;
    size_t n_labels;
    bool is_str[NX_TLX_MAX_LABELS];
    int64_t *lab;                    /* per sample and label */
    uint8_t *ok;
    strtab strs;
    nx_error *err;
} part;

static int part_oom(part *p)
{
    return nx_error_set(p->err, "%s: out of memory", p->table);
}

/* Sets label l of sample i from a string or an integer. */
static void put_str(part *p, size_t i, size_t l, const char *s, size_t len)
{
    p->ok[i * p->nl + l] = 1;
    p->lab[i * p->nl + l] = strtab_add(&p->strs, s, len);
}

static void put_int(part *p, size_t i, size_t l, int64_t v)
{
    p->ok[i * p->nl + l] = 1;
    p->lab[i * p->nl + l] = v;
}

/* The labels from the timeline index that answered the sampling (the tags are
 * its label tuples). Consecutive kept events mostly share a few tuples: a small
 * direct-mapped memo of tuple -> labels saves looking their strings up again. */
#define TUPLE_MEMO 1024
static void labels_from_index(part *p, const nx_tlx *x)
{
    int idx[NX_TLX_MAX_LABELS];
    for (size_t l = 0; l < p->n_labels; l++) {
        idx[l] = nx_tlx_label_find(x, p->labels[l]);
        if (idx[l] >= 0 && nx_tlx_label_is_string(x, idx[l]) != p->is_str[l])
            idx[l] = -1;   /* stored in another kind: null */
    }
    static const uint32_t none = UINT32_MAX;
    struct {
        uint32_t tuple;
        size_t from;                 /* the sample whose labels it has */
    } memo[TUPLE_MEMO];
    for (size_t m = 0; m < TUPLE_MEMO; m++)
        memo[m].tuple = none;
    for (size_t i = 0; i < p->sp.n; i++) {
        uint32_t tag = p->sp.samples[i].tag, slot = tag % TUPLE_MEMO;
        if (memo[slot].tuple == tag) {
            memcpy(&p->lab[i * p->nl], &p->lab[memo[slot].from * p->nl], p->nl * sizeof *p->lab);
            memcpy(&p->ok[i * p->nl], &p->ok[memo[slot].from * p->nl], p->nl);
            continue;
        }
        for (size_t l = 0; l < p->n_labels; l++) {
            int64_t v;
            const char *s;
            size_t len;
            if (idx[l] < 0 || !nx_tlx_label_value(x, tag, idx[l], &v, &s, &len))
                continue;
            if (p->is_str[l])
                put_str(p, i, l, s, len);
            else
                put_int(p, i, l, v);
        }
        memo[slot].tuple = tag;
        memo[slot].from = i;
    }
}

/* The labels from a second pass over the window, reading the label columns the
 * table's files hold in the label's kind; rows come in ordinal order, like the
 * samples, so one merge picks the kept rows. 0, or -1 with err. */
static int labels_from_table(part *p, int64_t start, int64_t end)
{
    memset(p->ok, 0, p->sp.n * p->nl);   /* nothing kept from a changed index */
    nx_profile_table *t = NULL;
    if (nx_profile_table_open(p->dir, p->table, &t, p->err) != 0)
        return -1;
    const char *proj[NX_TLX_MAX_LABELS];
    int col[NX_TLX_MAX_LABELS];      /* batch column of each label, or -1 */
    size_t n_proj = 0;
    for (size_t l = 0; l < p->n_labels; l++) {
        col[l] = -1;
        int c = nx_profile_table_find_column(t, p->labels[l]);
        if (c < 0)
            continue;
        nxpq_type ty = nx_profile_table_column(t, (size_t)c)->type;
        if (p->is_str[l] ? ty != NXPQ_STRING : ty != NXPQ_INT64 && ty != NXPQ_INT32)
            continue;
        col[l] = (int)n_proj;
        proj[n_proj++] = p->labels[l];
    }
    int rc = 0;
    nx_window *w = NULL;
    if (n_proj > 0) {
        nx_window_options wo = {.start = start, .end = end, .columns = proj, .n_columns = n_proj};
        rc = (w = nx_window_open(t, &wo, p->err)) ? 0 : -1;
    }
    size_t next = 0;
    nx_window_batch wb;
    while (w && rc == 0 && next < p->sp.n && (rc = nx_window_next(w, &wb, p->err)) > 0) {
        rc = 0;
        int64_t base = nx_row_ordinal(wb.file, wb.batch->first_row);
        for (size_t k = 0; k < wb.n_rows && next < p->sp.n; k++) {
            int64_t ord = base + wb.rows[k];
            while (next < p->sp.n && p->sp.samples[next].ordinal < ord)
                next++;
            if (next == p->sp.n || p->sp.samples[next].ordinal != ord)
                continue;
            size_t row = wb.rows[k];
            for (size_t l = 0; l < p->n_labels; l++) {
                if (col[l] < 0)
                    continue;
                const nxpq_column_data *c = &wb.batch->columns[col[l]];
                if (c->valid && !c->valid[row])
                    continue;
                if (c->type == NXPQ_STRING)
                    put_str(p, next, l, c->data + c->offsets[row], (size_t)(c->offsets[row + 1] - c->offsets[row]));
                else
                    put_int(p, next, l, c->type == NXPQ_INT64 ? c->values.i64[row] : c->values.i32[row]);
            }
            next++;
        }
    }
    nx_window_close(w);
    nx_profile_table_close(t);
    return rc < 0 ? -1 : 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct raw_framework_id values (label id_l) of the samples, sorted, into
 * *ids; their count, or SIZE_MAX when out of memory. */
static size_t framework_ids(const part *p, size_t id_l, int64_t **ids)
{
    if (!(*ids = malloc((p->sp.n + 1) * sizeof **ids)))
        return SIZE_MAX;
    size_t n = 0;
    for (size_t i = 0; i < p->sp.n; i++)
        if (p->ok[i * p->nl + id_l])
            (*ids)[n++] = p->lab[i * p->nl + id_l];
    qsort(*ids, n, sizeof **ids, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || (*ids)[u - 1] != (*ids)[i])
            (*ids)[u++] = (*ids)[i];
    return u;
}

/* name[k] gets the string id of the framework_name of the first
 * FrameworkInstruction row with raw_framework_id ids[k] (-1 null, -2 none). */
static int framework_lookup(part *p, nx_profile_table *t, const int64_t *ids, size_t u, int32_t *name,
                            nx_error *err)
{
    static const char *const cols[] = {"raw_framework_id", "framework_name"};
    nx_profile_scan_options so = {.columns = cols, .n_columns = 2};
    nx_profile_scan *sc = nx_profile_scan_open(t, &so, err);
    if (!sc)
        return -1;
    const nxpq_batch *b;
    int rc;
    while ((rc = nx_profile_scan_next(sc, &b, err)) > 0) {
        const nxpq_column_data *ci = &b->columns[0], *cn = &b->columns[1];
        for (size_t r = 0; r < b->n_rows; r++) {
            if (ci->valid && !ci->valid[r])
                continue;
            const int64_t *hit = bsearch(&ci->values.i64[r], ids, u, sizeof *ids, cmp_i64);
            if (!hit || name[hit - ids] != -2)
                continue;
            name[hit - ids] = cn->valid && !cn->valid[r]
                                  ? -1
                                  : strtab_add(&p->strs, cn->data + cn->offsets[r],
                                               (size_t)(cn->offsets[r + 1] - cn->offsets[r]));
        }
    }
    nx_profile_scan_close(sc);
    return rc < 0 ? -1 : 0;
}

/* Instruction's derived framework_name (label name_l) from raw_framework_id
 * (label id_l) through FrameworkInstruction (timeline.h). An absent or
 * unreadable FrameworkInstruction leaves the names null. 0, or -1 when out of memory. */
static int framework_names(part *p, size_t id_l, size_t name_l)
{
    int64_t *ids = NULL;
    size_t u = framework_ids(p, id_l, &ids);
    nx_profile_table *t = NULL;
    int32_t *name = NULL;
    nx_error ignored = {0};   /* the lookup's own errors only leave the names null */
    int rc = u == SIZE_MAX ? -1 : 0;
    if (u == 0 || u == SIZE_MAX || nx_profile_table_open(p->dir, "FrameworkInstruction", &t, &ignored) != 0)
        goto done;
    int ci = nx_profile_table_find_column(t, "raw_framework_id"), cn = nx_profile_table_find_column(t, "framework_name");
    if (ci < 0 || cn < 0 || nx_profile_table_column(t, (size_t)ci)->type != NXPQ_INT64 ||
        nx_profile_table_column(t, (size_t)cn)->type != NXPQ_STRING)
        goto done;
    if (!(name = malloc(u * sizeof *name))) {
        rc = -1;
        goto done;
    }
    for (size_t k = 0; k < u; k++)
        name[k] = -2;   /* not seen yet */
    if (framework_lookup(p, t, ids, u, name, &ignored) != 0)
        goto done;
    for (size_t i = 0; i < p->sp.n; i++) {
        if (!p->ok[i * p->nl + id_l])
            continue;
        const int64_t *hit = bsearch(&p->lab[i * p->nl + id_l], ids, u, sizeof *ids, cmp_i64);
        if (hit && name[hit - ids] >= 0) {
            p->ok[i * p->nl + name_l] = 1;
            p->lab[i * p->nl + name_l] = name[hit - ids];
        }
    }
done:
    nx_profile_table_close(t);
    free(ids);
    free(name);
    return rc;
}

/* The index of label `name` in p's labels, or SIZE_MAX. */
static size_t label_at(const part *p, const char *name)
{
    for (size_t l = 0; l < p->n_labels; l++)
        if (strcmp(p->labels[l], name) == 0)
            return l;
    return SIZE_MAX;
}

/* Samples and labels of p->table. 0, NX_PROFILE_TABLE_ABSENT, or -1 with err. */
static int part_compute(part *p, int64_t start, int64_t end, uint32_t width)
{
    int rc = nx_sampled_pass(p->dir, p->table, start, end, width, &p->sp, p->err);
    if (rc != 0)
        return rc;
    size_t n = p->sp.n ? p->sp.n : 1;
    p->lab = calloc(n * p->nl, sizeof *p->lab);
    p->ok = calloc(n * p->nl, 1);
    if (!p->lab || !p->ok)
        return part_oom(p);
    if (p->sp.n == 0)
        return 0;
    bool indexed = p->sp.index && nx_tlx_labels_complete(p->sp.index);
    if (indexed)
        labels_from_index(p, p->sp.index);
    if ((!indexed || nx_tlx_changed(p->sp.index)) && labels_from_table(p, start, end) != 0)
        return -1;   /* the table answers what a changed index cannot */
    size_t id_l = label_at(p, "raw_framework_id"), name_l = label_at(p, "framework_name");
    if (strcmp(p->table, "Instruction") == 0 && id_l != SIZE_MAX && name_l != SIZE_MAX &&
        framework_names(p, id_l, name_l) != 0)
        return part_oom(p);
    return p->strs.failed ? part_oom(p) : 0;
}

static void part_free(part *p)
{
    nx_sampled_free(&p->sp);
    free(p->lab);
    free(p->ok);
    strtab_free(&p->strs);
}

/* ------------------------------------------------------------ the answer -- */

/* Each string label kind of `table`, by the catalogue (derived labels: strings). */
static void label_kinds(const char *table, const char *const *labels, size_t n, bool *is_str)
{
    const nx_schema_table *s = nx_schema_table_find(table);
    for (size_t l = 0; l < n; l++) {
        int f = s ? nx_schema_field_index(s, labels[l]) : -1;
        is_str[l] = f < 0 || s->fields[f].column_type == NX_COL_STRING;
    }
}

static void table_clear(nx_timeline_table *t)
{
    free(t->start);
    free(t->end);
    free(t->ordinal);
    free(t->depth);
    free(t->label);
    free(t->label_set);
    for (size_t k = 0; k < t->n_tracks; k++)
        free(t->tracks[k].name);
    free(t->tracks);
    t->start = t->end = t->ordinal = t->label = NULL;
    t->depth = NULL;
    t->label_set = NULL;
    t->tracks = NULL;
    t->n_tracks = t->n_events = 0;
}

/* Allocates t's event arrays for n events and its tracks from p's (those with
 * events, in p's order; by[k] gets the first place of p's track k). */
static int table_layout(nx_timeline_table *t, const part *p, size_t *by)
{
    size_t n = p->sp.n + 1, nl = p->nl;
    t->start = malloc(n * sizeof *t->start);
    t->end = malloc(n * sizeof *t->end);
    t->ordinal = malloc(n * sizeof *t->ordinal);
    t->label = malloc(n * nl * sizeof *t->label);
    t->label_set = malloc(n * nl);
    t->tracks = calloc(p->sp.n_tracks + 1, sizeof *t->tracks);
    if (p->sp.depth)
        t->depth = malloc(n * sizeof *t->depth);
    if (!t->start || !t->end || !t->ordinal || !t->label || !t->label_set || !t->tracks || (p->sp.depth && !t->depth))
        return -1;
    for (size_t i = 0; i < p->sp.n; i++)
        by[p->sp.samples[i].track + 1]++;
    for (size_t k = 0; k < p->sp.n_tracks; k++) {
        size_t count = by[k + 1];
        by[k + 1] += by[k];
        if (count == 0)
            continue;
        nx_timeline_track *tr = &t->tracks[t->n_tracks++];
        if (!(tr->name = malloc(p->sp.name_len[k] + 1)))
            return -1;
        memcpy(tr->name, p->sp.names[k], p->sp.name_len[k] + 1);
        tr->name_len = p->sp.name_len[k];
        tr->first = by[k];
        tr->n = count;
    }
    return 0;
}

/* t's events from p, grouped by track; string ids renumbered into the answer's
 * strings in the answer's order. 0, -1 out of memory in the table, -2 out of
 * memory in the answer's strings. */
static int table_fill(nx_timeline_table *t, const part *p, strtab *strs)
{
    size_t nl = p->nl, tn = t->n_labels, *by = calloc(p->sp.n_tracks + 2, sizeof *by),
           *at = malloc((p->sp.n + 1) * sizeof *at);
    int32_t *map = malloc((p->strs.n + 1) * sizeof *map);   /* per table string: the answer's id, or -1 */
    int rc = -1;
    if (!by || !at || !map || table_layout(t, p, by) != 0)
        goto done;
    for (size_t i = 0; i < p->sp.n; i++)
        at[by[p->sp.samples[i].track]++] = i;   /* by[k] ends at track k's last place + 1 */
    for (size_t s = 0; s < p->strs.n; s++)
        map[s] = -1;
    t->n_events = p->sp.n;
    for (size_t j = 0; j < p->sp.n; j++) {
        size_t i = at[j];
        const nx_sample *x = &p->sp.samples[i];
        t->start[j] = x->start;
        t->end[j] = x->end;
        t->ordinal[j] = x->ordinal;
        if (t->depth)
            t->depth[j] = p->sp.depth[i];
        for (size_t l = 0; l < tn; l++) {
            uint8_t ok = p->ok[i * nl + l];
            int64_t v = ok ? p->lab[i * nl + l] : 0;
            if (ok && p->is_str[l]) {
                if (map[v] < 0 && (map[v] = strtab_add(strs, p->strs.bytes + p->strs.off[v], p->strs.slen[v])) < 0) {
                    rc = -2;
                    goto done;
                }
                v = map[v];
            }
            t->label_set[j * tn + l] = ok;
            t->label[j * tn + l] = v;
        }
    }
    rc = 0;
done:
    free(by);
    free(at);
    free(map);
    return rc;
}

/* One table's entry. 0 (the entry may hold an error), or -1 (out of memory in
 * the answer's strings, err set). */
static int table_answer(const char *dir, nx_timeline *tl, size_t k, strtab *strs, nx_error *err)
{
    nx_timeline_table *t = &tl->tables[k];
    const nx_timeline_info *info = nx_timeline_find(t->table);
    t->label_names = nx_timeline_labels(t->table);
    while (t->label_names && t->n_labels < NX_TLX_MAX_LABELS && t->label_names[t->n_labels])
        t->n_labels++;
    label_kinds(t->table, t->label_names, t->n_labels, t->label_is_string);
    t->nested = info->nested;
    nx_error terr = {0};
    part p = {.dir = dir, .table = t->table, .labels = t->label_names, .n_labels = t->n_labels,
              .nl = t->n_labels ? t->n_labels : 1, .err = &terr};
    memcpy(p.is_str, t->label_is_string, sizeof p.is_str);
    int rc = part_compute(&p, tl->start, tl->end, tl->width), result = 0;
    if (rc == NX_QUERY_OVER_BUDGET) {   /* the request itself is too large: no partial answer */
        nx_error_set(err, "%s: %s", t->table, terr.msg);
        part_free(&p);
        return rc;
    }
    if (rc == 0) {
        t->present = true;
        t->rows_in_window = p.sp.in_window;
        int f = table_fill(t, &p, strs);
        if (f == -2)
            result = nx_error_set(err, "timeline: out of memory for the strings of the answer");
        else if (f < 0)
            rc = part_oom(&p);
    }
    if (rc < 0) {
        table_clear(t);
        t->present = false;
        t->rows_in_window = 0;
        if (!(t->error = strdup(terr.msg[0] ? terr.msg : "unreadable")))
            result = nx_error_set(err, "timeline: out of memory");
    }
    part_free(&p);
    return result;
}

/* The answer's strings from the interning table (which gives up its bytes). */
static int take_strings(nx_timeline *tl, strtab *strs)
{
    tl->strings = calloc(strs->n + 1, sizeof *tl->strings);
    tl->string_len = calloc(strs->n + 1, sizeof *tl->string_len);
    if (!tl->strings || !tl->string_len)
        return -1;
    tl->string_data = strs->bytes;
    strs->bytes = NULL;
    for (size_t i = 0; i < strs->n; i++) {
        tl->strings[i] = tl->string_data + strs->off[i];
        tl->string_len[i] = strs->slen[i];
    }
    tl->n_strings = strs->n;
    return 0;
}

int nx_timeline_query(const char *profile_dir, const char *const *tables, size_t n_tables, int64_t start, int64_t end,
                      uint32_t width, nx_timeline *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    if (start > end || width == 0)
        return nx_error_set(err, "timeline: needs start <= end and width >= 1");
    for (size_t i = 0; i < n_tables; i++)
        if (!nx_timeline_find(tables[i]))
            return nx_error_set(err, "timeline: %s is not a timeline table", tables[i]);
    out->start = start;
    out->end = end;
    out->width = width;
    if (!(out->tables = calloc(n_tables + 1, sizeof *out->tables)))
        return nx_error_set(err, "timeline: out of memory");
    out->n_tables = n_tables;
    strtab strs = {0};
    int rc = 0;
    for (size_t i = 0; i < n_tables && rc == 0; i++) {
        out->tables[i].table = tables[i];
        rc = table_answer(profile_dir, out, i, &strs, err);
    }
    if (rc == 0 && take_strings(out, &strs) != 0)
        rc = nx_error_set(err, "timeline: out of memory");
    strtab_free(&strs);
    if (rc != 0)
        nx_timeline_free(out);
    return rc;
}

void nx_timeline_free(nx_timeline *t)
{
    for (size_t i = 0; i < t->n_tables; i++) {
        table_clear(&t->tables[i]);
        free(t->tables[i].error);
    }
    free(t->tables);
    free(t->strings);
    free(t->string_len);
    free(t->string_data);
    memset(t, 0, sizeof *t);
}
