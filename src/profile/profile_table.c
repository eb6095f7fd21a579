/*
 * profile_table.c — one profile table across its split files (rules in
 * profile_table.h): directory listing, numeric ordering of <Table>_<n>.parquet,
 * and a scan that walks the files one after the other, resolving the projection
 * by column name in each file.
 */
#include "profile/profile_table.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct nx_profile_table {
    char *name;
    char **paths;
    size_t n_files;
    /* Readers of the first min(n_files, KEPT_READERS) files, opened for their
     * row counts and kept, so a scan does not parse those footers again (a
     * 10M-row file's footer is ~5 ms). Reader 0 holds the table's schema. */
    nxpq_reader **readers;
    int64_t *file_rows;              /* per file */
    int64_t num_rows;
};

/* Readers a table keeps open: a footer's metadata is ~2 MB at 10M rows, so
 * this bounds the memory of a table split into hundreds of files. */
enum { KEPT_READERS = 16 };

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* 1 and *idx when `name` is exactly <table>_<n>.parquet with n canonical decimal. */
static int split_index(const char *name, const char *table, size_t tlen, unsigned long *idx)
{
    static const char ext[] = ".parquet";
    size_t len = strlen(name), elen = sizeof ext - 1;
    if (len <= tlen + 1 + elen || strncmp(name, table, tlen) != 0 || name[tlen] != '_' ||
        strcmp(name + len - elen, ext) != 0)
        return 0;
    const char *d = name + tlen + 1, *e = name + len - elen;
    if (d == e || (d[0] == '0' && e - d > 1) || e - d > 9)
        return 0;
    unsigned long v = 0;
    for (const char *p = d; p < e; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    *idx = v;
    return 1;
}

static int cmp_ulong(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

void nx_profile_table_close(nx_profile_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_files; i++) {
        if (t->readers && t->readers[i])
            nxpq_reader_close(t->readers[i]);
        free(t->paths[i]);
    }
    free(t->readers);
    free(t->file_rows);
    free(t->paths);
    free(t->name);
    free(t);
}

int nx_profile_table_open(const char *profile_dir, const char *table, nx_profile_table **out, nx_error *err)
{
    *out = NULL;
    size_t tlen = strlen(table);
    DIR *d = opendir(profile_dir);
    if (!d) {
        nx_error_set(err, "%s: cannot open profile directory: %s", profile_dir, strerror(errno));
        return -1;
    }
    bool single = false;
    unsigned long *idx = NULL;
    size_t n_idx = 0, cap = 0;
    int rc = -1;
    nx_profile_table *t = NULL;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        unsigned long v;
        if (strncmp(e->d_name, table, tlen) != 0)
            continue;
        if (strcmp(e->d_name + tlen, ".parquet") == 0) {
            single = true;
        } else if (split_index(e->d_name, table, tlen, &v)) {
            if (n_idx == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                unsigned long *g = realloc(idx, ncap * sizeof *g);
                if (!g) {
                    nx_error_set(err, "%s: out of memory listing %s", table, profile_dir);
                    goto done;
                }
                idx = g;
                cap = ncap;
            }
            idx[n_idx++] = v;
        }
        errno = 0;
    }
    if (errno) {
        nx_error_set(err, "%s: cannot list %s: %s", table, profile_dir, strerror(errno));
        goto done;
    }
    if (!single && n_idx == 0) {
        nx_error_set(err, "%s: no %s.parquet or %s_0.parquet in %s", table, table, table, profile_dir);
        rc = NX_PROFILE_TABLE_ABSENT;
        goto done;
    }
    if (single && n_idx > 0) {
        nx_error_set(err, "%s: %s holds both %s.parquet and %s_<n>.parquet files; which is the table is ambiguous",
                table, profile_dir, table, table);
        goto done;
    }
    if (n_idx > 1)
        qsort(idx, n_idx, sizeof *idx, cmp_ulong);
    for (size_t i = 0; i < n_idx; i++) {
        if (idx[i] != i) {
            nx_error_set(err, "%s: split files in %s are not numbered 0..%zu: %s_%zu.parquet is missing", table,
                    profile_dir, n_idx - 1, table, i);
            goto done;
        }
    }
    t = calloc(1, sizeof *t);
    size_t n_files = single ? 1 : n_idx;
    if (!t || !(t->name = strdup(table)) || !(t->paths = calloc(n_files, sizeof *t->paths)) ||
        !(t->readers = calloc(n_files, sizeof *t->readers)) || !(t->file_rows = calloc(n_files, sizeof *t->file_rows))) {
        nx_error_set(err, "%s: out of memory", table);
        goto done;
    }
    for (size_t i = 0; i < n_files; i++) {
        char fname[512];
        if (single)
            snprintf(fname, sizeof fname, "%s.parquet", table);
        else
            snprintf(fname, sizeof fname, "%s_%zu.parquet", table, i);
        if (!(t->paths[i] = join_path(profile_dir, fname))) {
            nx_error_set(err, "%s: out of memory", table);
            goto done;
        }
        t->n_files = i + 1;
    }
    /* Row counts come from each footer; the first KEPT_READERS files stay open. */
    for (size_t i = 0; i < n_files; i++) {
        nxpq_reader *r = nxpq_reader_open_regular(t->paths[i], err);
        if (!r)
            goto done;
        t->file_rows[i] = nxpq_reader_num_rows(r);
        t->num_rows += t->file_rows[i];
        if (i < KEPT_READERS)
            t->readers[i] = r;
        else
            nxpq_reader_close(r);
    }
    *out = t;
    t = NULL;
    rc = 0;
done:
    closedir(d);
    free(idx);
    nx_profile_table_close(t);
    return rc;
}

const char *nx_profile_table_name(const nx_profile_table *t) { return t->name; }
size_t nx_profile_table_file_count(const nx_profile_table *t) { return t->n_files; }
const char *nx_profile_table_file_path(const nx_profile_table *t, size_t i) { return i < t->n_files ? t->paths[i] : NULL; }
int64_t nx_profile_table_num_rows(const nx_profile_table *t) { return t->num_rows; }
int64_t nx_profile_table_file_rows(const nx_profile_table *t, size_t i) { return i < t->n_files ? t->file_rows[i] : 0; }
size_t nx_profile_table_num_columns(const nx_profile_table *t) { return nxpq_reader_num_columns(t->readers[0]); }

const nxpq_column_info *nx_profile_table_column(const nx_profile_table *t, size_t i)
{
    return nxpq_reader_column(t->readers[0], i);
}

int nx_profile_table_find_column(const nx_profile_table *t, const char *name)
{
    return nxpq_reader_find_column(t->readers[0], name);
}

/* ------------------------------------------------------------------ scan -- */

struct nx_profile_scan {
    nx_profile_table *t;
    nx_profile_scan_options o;
    size_t file;            /* index of the file being scanned */
    int64_t file_first;     /* table-wide row number of that file's first row */
    nxpq_reader *reader;    /* that file's reader (not owned when the table keeps it) */
    nxpq_scan *scan;
    size_t *proj;           /* per-file column indices for the projection */
    nxpq_type *types;       /* projected types, from file 0 */
    nxpq_scan_stats done;   /* stats of the files already closed */
    nx_profile_range more[NX_PROFILE_MAX_MORE_RANGES]; /* copy: o.more_ranges points here */
};

static void add_stats(nxpq_scan_stats *to, const nxpq_scan_stats *st)
{
    to->row_groups_total += st->row_groups_total;
    to->row_groups_read += st->row_groups_read;
    to->pages_total += st->pages_total;
    to->pages_read += st->pages_read;
}

static void scan_close_file(nx_profile_scan *s)
{
    if (s->scan) {
        nxpq_scan_stats st;
        nxpq_scan_get_stats(s->scan, &st);
        add_stats(&s->done, &st);
        nxpq_scan_close(s->scan);
    }
    s->scan = NULL;
    if (s->reader && s->reader != s->t->readers[s->file])
        nxpq_reader_close(s->reader);
    s->reader = NULL;
}

/* The projected columns' types, from file 0 (the table's schema), whichever
 * file the scan starts at. */
static int resolve_types(nx_profile_scan *s, nx_error *err)
{
    const nxpq_reader *r0 = s->t->readers[0];
    for (size_t i = 0; i < s->o.n_columns; i++) {
        int c = nxpq_reader_find_column(r0, s->o.columns[i]);
        if (c < 0)
            return nx_error_set(err, "%s: %s has no column '%s'", s->t->name, s->t->paths[0], s->o.columns[i]);
        s->types[i] = nxpq_reader_column(r0, (size_t)c)->type;
        if (s->types[i] == NXPQ_UNSUPPORTED)
            return nx_error_set(err, "%s: column '%s' of %s has a type this reader cannot decode", s->t->name,
                                  s->o.columns[i], s->t->paths[0]);
    }
    return 0;
}

/* Opens file s->file and starts its scan with the projection resolved by name. */
static int scan_open_file(nx_profile_scan *s, nx_error *err)
{
    const char *path = s->t->paths[s->file];
    s->reader = s->t->readers[s->file] ? s->t->readers[s->file] : nxpq_reader_open_regular(path, err);
    if (!s->reader)
        return -1;
    for (size_t i = 0; i < s->o.n_columns; i++) {
        int c = nxpq_reader_find_column(s->reader, s->o.columns[i]);
        if (c < 0) {
            nx_error_set(err, "%s: %s has no column '%s'", s->t->name, path, s->o.columns[i]);
            return -1;
        }
        nxpq_type ty = nxpq_reader_column(s->reader, (size_t)c)->type;
        if (ty != s->types[i]) {
            nx_error_set(err, "%s: column '%s' is %s in %s but %s in %s", s->t->name, s->o.columns[i],
                    nxpq_type_name(ty), path, nxpq_type_name(s->types[i]), s->t->paths[0]);
            return -1;
        }
        s->proj[i] = (size_t)c;
    }
    nxpq_range ranges[1 + NX_PROFILE_MAX_MORE_RANGES];
    size_t n_ranges = 0;
    nxpq_scan_options so = {
        .columns = s->proj, .n_columns = s->o.n_columns, .batch_rows = s->o.batch_rows,
        .threads = s->o.threads, .dictionary = s->o.dictionary};
    if (s->o.rows_end > 0) {
        so.rows_begin = s->o.rows_begin > s->file_first ? s->o.rows_begin - s->file_first : 0;
        so.rows_end = s->o.rows_end - s->file_first;
    }
    for (size_t i = 0; i < 1 + s->o.n_more_ranges; i++) {
        const char *col = i == 0 ? s->o.range_column : s->o.more_ranges[i - 1].column;
        if (!col)
            continue;
        int c = nxpq_reader_find_column(s->reader, col);
        if (c < 0) {
            nx_error_set(err, "%s: %s has no column '%s'", s->t->name, path, col);
            return -1;
        }
        ranges[n_ranges++] = i == 0 ? (nxpq_range){.column = (size_t)c, .min = s->o.range_min, .max = s->o.range_max}
                                    : (nxpq_range){.column = (size_t)c,
                                                   .min = s->o.more_ranges[i - 1].min,
                                                   .max = s->o.more_ranges[i - 1].max};
    }
    so.ranges = n_ranges ? ranges : NULL;
    so.n_ranges = n_ranges;
    s->scan = nxpq_scan_open(s->reader, &so, err);
    return s->scan ? 0 : -1;
}

nx_profile_scan *nx_profile_scan_open(nx_profile_table *t, const nx_profile_scan_options *o, nx_error *err)
{
    if (o->n_columns == 0) {
        nx_error_set(err, "%s: a scan needs at least one column", t->name);
        return NULL;
    }
    if (o->n_more_ranges > NX_PROFILE_MAX_MORE_RANGES) {
        nx_error_set(err, "%s: a scan takes at most %d extra ranges", t->name, NX_PROFILE_MAX_MORE_RANGES);
        return NULL;
    }
    nx_profile_scan *s = calloc(1, sizeof *s);
    if (!s || !(s->proj = calloc(o->n_columns, sizeof *s->proj)) ||
        !(s->types = calloc(o->n_columns, sizeof *s->types))) {
        nx_error_set(err, "%s: out of memory starting a scan", t->name);
        if (s)
            free(s->proj);
        free(s);
        return NULL;
    }
    s->t = t;
    s->o = *o;
    /* The extra ranges are copied so callers may pass them from the stack (the
     * projection names, by contrast, must outlive the scan). */
    for (size_t i = 0; i < o->n_more_ranges; i++)
        s->more[i] = o->more_ranges[i];
    s->o.more_ranges = s->more;
    /* A span starts at the file holding its first row. */
    while (o->rows_end > 0 && s->file + 1 < t->n_files && s->file_first + t->file_rows[s->file] <= o->rows_begin)
        s->file_first += t->file_rows[s->file++];
    if (resolve_types(s, err) != 0 || scan_open_file(s, err) != 0) {
        nx_profile_scan_close(s);
        return NULL;
    }
    return s;
}

int nx_profile_scan_next(nx_profile_scan *s, const nxpq_batch **out, nx_error *err)
{
    for (;;) {
        if (!s->scan)
            return 0;
        int rc = nxpq_scan_next(s->scan, out, err);
        if (rc < 0)
            return -1;
        if (rc > 0) {
            if ((*out)->n_rows == 0)
                continue;
            return 1;
        }
        scan_close_file(s);
        s->file_first += s->t->file_rows[s->file];
        if (++s->file >= s->t->n_files || (s->o.rows_end > 0 && s->file_first >= s->o.rows_end))
            return 0;
        if (scan_open_file(s, err) != 0)
            return -1;
    }
}

int nx_profile_scan_each(nx_profile_table *t, const nx_profile_scan_options *o, nx_profile_batch_fn fn, void *ctx,
                         nx_error *err)
{
    nx_profile_scan *s = nx_profile_scan_open(t, o, err);
    if (!s)
        return -1;
    const nxpq_batch *b;
    int more, rc = 0;
    while (rc == 0 && (more = nx_profile_scan_next(s, &b, err)) != 0)
        rc = more < 0 ? -1 : fn(ctx, b, nx_profile_scan_file(s), err);
    nx_profile_scan_close(s);
    return rc;
}

void nx_profile_scan_close(nx_profile_scan *s)
{
    if (!s)
        return;
    scan_close_file(s);
    free(s->proj);
    free(s->types);
    free(s);
}

size_t nx_profile_scan_file(const nx_profile_scan *s) { return s->file; }

void nx_profile_scan_get_stats(const nx_profile_scan *s, nxpq_scan_stats *out)
{
    *out = s->done;
    if (s->scan) {
        nxpq_scan_stats st;
        nxpq_scan_get_stats(s->scan, &st);
        add_stats(out, &st);
    }
}

int nx_profile_span(const char *profile_dir, int64_t *first, int64_t *last, nx_error *err)
{
    nx_profile_table *t = NULL;
    int rc = nx_profile_table_open(profile_dir, "Metadata", &t, err);
    if (rc != 0)
        return rc;
    static const char *const cols[] = {"first_hw_timestamp", "last_hw_timestamp"};
    for (size_t i = 0; i < 2; i++) {
        int c = nx_profile_table_find_column(t, cols[i]);
        if (c < 0 || nx_profile_table_column(t, (size_t)c)->type != NXPQ_INT64) {
            nx_profile_table_close(t);
            snprintf(err->msg, sizeof err->msg, "%s: Metadata has no INT64 column %s", profile_dir, cols[i]);
            return NX_PROFILE_TABLE_ABSENT;
        }
    }
    nx_profile_scan_options so = {.columns = cols, .n_columns = 2};
    nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
    if (!s) {
        nx_profile_table_close(t);
        return -1;
    }
    bool have = false;
    const nxpq_batch *b;
    while ((rc = nx_profile_scan_next(s, &b, err)) > 0) {
        const nxpq_column_data *a = &b->columns[0], *z = &b->columns[1];
        for (size_t i = 0; i < b->n_rows; i++) {
            if ((a->valid && !a->valid[i]) || (z->valid && !z->valid[i]))
                continue;
            if (!have || a->values.i64[i] < *first)
                *first = a->values.i64[i];
            if (!have || z->values.i64[i] > *last)
                *last = z->values.i64[i];
            have = true;
        }
    }
    nx_profile_scan_close(s);
    nx_profile_table_close(t);
    if (rc < 0)
        return -1;
    if (!have) {
        snprintf(err->msg, sizeof err->msg, "%s: Metadata holds no timestamps", profile_dir);
        return NX_PROFILE_TABLE_ABSENT;
    }
    return 0;
}
