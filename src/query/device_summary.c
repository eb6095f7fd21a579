/* device_summary.c — a device profile's Summary row and top OpcodeSummary rows (rules in device_summary.h). */
#include "query/device_summary.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "schema/schema.h"

/* ------------------------------------------------------- OpcodeSummary -- */

typedef struct op_row {
    nx_cell c[NX_OPCODE_FIELDS];
    size_t seq;                  /* file order */
} op_row;

static bool row_time(const op_row *o, int64_t *t)
{
    const nx_cell *c = &o->c[NX_OP_TIME];
    *t = c->i;
    return !c->null && (c->type == NXPQ_INT64 || c->type == NXPQ_INT32);
}

/* Cell k of a and of b compared as text, a null or non-string one as "". */
static int text_cmp(const op_row *a, const op_row *b, int k)
{
    const nx_cell *x = &a->c[k], *y = &b->c[k];
    const char *s = x->s ? x->s : "", *t = y->s ? y->s : "";
    size_t ls = x->s ? x->len : 0, lt = y->s ? y->len : 0;
    int c = memcmp(s, t, ls < lt ? ls : lt);
    return c ? c : ls < lt ? -1 : ls > lt;
}

static int op_cmp(const void *pa, const void *pb)
{
    const op_row *a = pa, *b = pb;
    int64_t ta, tb;
    bool ha = row_time(a, &ta), hb = row_time(b, &tb);
    if (ha != hb)
        return ha ? -1 : 1;
    if (ha && ta != tb)
        return ta > tb ? -1 : 1;
    int c = text_cmp(a, b, NX_OP_ENGINE);
    if (!c)
        c = text_cmp(a, b, NX_OP_OPCODE);
    return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Every row of the scan into *rows (where[f]: batch column of schema field f, -1 none). */
static int read_op_rows(nx_profile_scan *s, const int *where, op_row **rows, size_t *n, nx_error *err)
{
    size_t cap = 0;
    const nxpq_batch *b;
    int more;
    while ((more = nx_profile_scan_next(s, &b, err)) > 0)
        for (size_t r = 0; r < b->n_rows; r++) {
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 256;
                op_row *g = realloc(*rows, nc * sizeof *g);
                if (!g)
                    return nx_error_set(err, "OpcodeSummary: out of memory");
                *rows = g;
                cap = nc;
            }
            op_row *o = &(*rows)[(*n)++];
            memset(o, 0, sizeof *o);
            o->seq = *n;
            for (size_t f = 0; f < NX_OPCODE_FIELDS; f++) {
                o->c[f] = (nx_cell){.type = NXPQ_UNSUPPORTED, .null = true};
                if (where[f] >= 0 && !nx_cell_set(&o->c[f], &b->columns[where[f]], r))
                    return nx_error_set(err, "OpcodeSummary: out of memory");
            }
        }
    return more < 0 ? -1 : 0;
}

static int read_opcodes(const char *dir, size_t top, nx_device_summary *d, nx_error *err)
{
    static const char *const FIELDS[NX_OPCODE_FIELDS] = {"engine", "opcode", "instruction_count",
                                                         "instruction_time_ns", "active_time_ns", "active_time_percent"};
    const nx_schema_table *st = nx_schema_table_find("OpcodeSummary");
    for (size_t f = 0; f < NX_OPCODE_FIELDS; f++)
        if (!st || st->n_fields != NX_OPCODE_FIELDS || strcmp(st->fields[f].name, FIELDS[f]) != 0)
            return nx_error_set(err, "OpcodeSummary: the catalogue's fields are not those of device_summary.h");
    nx_profile_table *t;
    int rc = nx_profile_table_open(dir, "OpcodeSummary", &t, err);
    if (rc != 0)
        return rc == NX_PROFILE_TABLE_ABSENT ? 0 : -1;
    d->have_opcodes = true;
    d->opcode_rows = nx_profile_table_num_rows(t);
    const char *cols[NX_OPCODE_FIELDS];
    int where[NX_OPCODE_FIELDS];
    size_t nc = 0;
    for (size_t f = 0; f < NX_OPCODE_FIELDS; f++) {
        int c = nx_profile_table_find_column(t, st->fields[f].name);
        where[f] = -1;
        if (c >= 0 && nx_cell_type_ok(nx_profile_table_column(t, (size_t)c)->type)) {
            where[f] = (int)nc;
            cols[nc++] = st->fields[f].name;
        }
    }
    op_row *rows = NULL;
    size_t n = 0;
    rc = 0;
    if (nc > 0) {
        nx_profile_scan_options so = {.columns = cols, .n_columns = nc};
        nx_profile_scan *s = nx_profile_scan_open(t, &so, err);
        rc = s ? read_op_rows(s, where, &rows, &n, err) : -1;
        nx_profile_scan_close(s);
    }
    nx_profile_table_close(t);
    if (rc == 0)
        qsort(rows, n, sizeof *rows, op_cmp);
    size_t keep = rc == 0 ? (n < top ? n : top) : 0;
    if (keep && !(d->opcodes = malloc(keep * sizeof *d->opcodes)))
        rc = nx_error_set(err, "OpcodeSummary: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && i < keep)
            memcpy(d->opcodes[d->n_opcodes++], rows[i].c, sizeof rows[i].c);
        else
            for (size_t f = 0; f < NX_OPCODE_FIELDS; f++)
                nx_cell_free(&rows[i].c[f]);
    }
    free(rows);
    return rc;
}

/* ------------------------------------------------------------------ all -- */

void nx_device_summary_free(nx_device_summary *s)
{
    nx_row0_free(&s->summary);
    for (size_t i = 0; i < s->n_opcodes; i++)
        for (size_t f = 0; f < NX_OPCODE_FIELDS; f++)
            nx_cell_free(&s->opcodes[i][f]);
    free(s->opcodes);
    memset(s, 0, sizeof *s);
}

int nx_device_summary_read(const char *dir, size_t top, nx_device_summary *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    if (nx_row0_read(dir, "Summary", &out->summary, err) < 0 || read_opcodes(dir, top, out, err) < 0 ||
        nx_nki_coverage_read(dir, &out->nki, err) < 0) {
        nx_device_summary_free(out);
        return -1;
    }
    return 0;
}
