/*
 * breakdown_internal.h — what the breakdown's collection pass (breakdown.c)
 * hands its answers (breakdown_answer.c). Not a public header.
 */
#ifndef NX_QUERY_BREAKDOWN_INTERNAL_H
#define NX_QUERY_BREAKDOWN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "query/breakdown.h"
#include "util/strbuf.h"
#include "util/error.h"

/* One kernel, memcpy or memset row. */
typedef struct bd_row {
    int64_t start, end;
    int64_t launch;                  /* its launch's start; INT64_MIN: none linked */
    int64_t rank, device, corr;      /* corr -1: none */
    int64_t name;                    /* index into bd_names */
    int64_t bytes;                   /* args.bytes, -1: none */
    int dtype, kind, cls, xfer;      /* nx_device_type, nx_activity_kind, NX_BD_*, NX_BD_* (memory rows) */
} bd_row;

typedef struct bd_launch {
    int64_t rank, corr, start;
} bd_launch;

typedef struct bd_span {
    int64_t rank, lo, hi;
} bd_span;

typedef struct bd_step {
    int64_t rank, step, start, end;
    char *name;
} bd_step;

/* Interned names: v[0..n), and an open-addressing table of cap slots. */
typedef struct bd_names {
    char **v;
    int64_t *slot;
    size_t n, cap;
} bd_names;

typedef struct bd_acc {
    int64_t rank;                    /* the rank asked for, -1: all */
    bd_row *rows;                    /* after the pass: by rank, device, start */
    size_t n_rows, cap_rows;
    bd_launch *launches;
    size_t n_launches, cap_launches;
    bd_span *spans;
    size_t n_spans, cap_spans;
    bd_step *steps;
    size_t n_steps, cap_steps;
    bd_names names;
    nx_bd_host host;
    bool any_row;
} bd_acc;

/* The entries of every (rank, device) and its steps (step >= 0: only steps
 * numbered step), and the top kernels. 0 or -1 with err. */
int bd_answer_entries(bd_acc *a, int64_t step, nx_breakdown *out, nx_error *err);
int bd_answer_kernels(const bd_acc *a, size_t top, nx_breakdown *out, nx_error *err);

/* The JSON member ,"key":pct shared by breakdown_json.c and engine_breakdown.c
 * (other numbers by util/json.h): null when pct < 0, nothing to take a share of. */
void bd_json_pct(nx_strbuf *b, const char *key, double pct);

#endif
