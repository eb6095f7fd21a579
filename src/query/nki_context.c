/* nki_context.c — an instruction's NKI source, call stack, loop iteration and assembly (rules in nki_context.h). */
#include "query/nki_context.h"

#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/event.h"

/* The Instruction fields the context reads. */
#define NKI_FIELDS 4
static const char *const FIELDS[NKI_FIELDS] = {"kernel_instruction_name", "compiler_pc", "compiler_opcode",
                                               "pcore_idx"};

/* The frames from f up its callers, reversed into outermost first. -1 when out of memory. */
static int frame_chain(nx_nki_context *c, const nx_nki_frame *f)
{
    const nx_nki_index *x = c->idx;
    if (!f)
        return 0;
    if (!(c->frames = malloc(x->n_frames * sizeof *c->frames)))
        return -1;
    while (f && c->n_frames < x->n_frames) {
        c->frames[c->n_frames++] = f;
        f = f->has_parent ? nx_nki_find_frame(x, c->pcore, f->parent) : NULL;
    }
    for (size_t i = 0; i < c->n_frames / 2; i++) {
        const nx_nki_frame *t = c->frames[i];
        c->frames[i] = c->frames[c->n_frames - 1 - i];
        c->frames[c->n_frames - 1 - i] = t;
    }
    return 0;
}

/* The bindings from v up its enclosing loops, reversed into outer first. -1 when out of memory. */
static int iter_chain(nx_nki_context *c, const nx_nki_iter *v)
{
    const nx_nki_index *x = c->idx;
    if (!v)
        return 0;
    if (!(c->iters = malloc(x->n_iters * sizeof *c->iters)))
        return -1;
    while (v && c->n_iters < x->n_iters) {
        c->iters[c->n_iters++] = v;
        v = v->has_parent ? nx_nki_find_iter(x, c->pcore, v->parent) : NULL;
    }
    for (size_t i = 0; i < c->n_iters / 2; i++) {
        const nx_nki_iter *t = c->iters[i];
        c->iters[i] = c->iters[c->n_iters - 1 - i];
        c->iters[c->n_iters - 1 - i] = t;
    }
    return 0;
}

/* Fills the source part from the KernelInstructions row of (pcore, name). -1 when out of memory. */
static int source(nx_nki_context *c, int64_t pcore, const char *name, size_t len)
{
    const nx_nki_line *k = nx_nki_source_find(c->idx->kinst, true, pcore, name, len);
    if (!k)
        return 0;
    c->has_source = true;
    c->kinst = k;
    c->pcore = pcore;
    c->file = k->file;
    c->line = k->line;
    c->has_line = k->has_line;
    if (frame_chain(c, k->has_frame ? nx_nki_find_frame(c->idx, pcore, k->frame) : NULL) < 0 ||
        iter_chain(c, k->has_iteration ? nx_nki_find_iter(c->idx, pcore, k->iteration) : NULL) < 0)
        return -1;
    if (c->n_frames)
        c->function = nx_nki_str(c->idx, c->frames[c->n_frames - 1]->function);
    return 0;
}

int nx_nki_context_of(const char *profile_dir, const nx_event *ev, nx_nki_context *out, nx_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = nx_nki_index_get(profile_dir, &out->idx, err);
    if (rc != 0)
        return rc;
    const nxpq_column_data *col[NKI_FIELDS] = {NULL, NULL, NULL, NULL};
    for (size_t f = 0; f < ev->schema->n_fields; f++)
        for (size_t k = 0; k < NKI_FIELDS; k++)
            if (strcmp(ev->schema->fields[f].name, FIELDS[k]) == 0)
                col[k] = nx_event_field(ev, f);
    const nxpq_column_data *name = col[0], *pc = col[1], *op = col[2], *core = col[3];
    size_t r = ev->row;
    bool has_op = op && op->type == NXPQ_STRING && !(op->valid && !op->valid[r]);
    if (pc && pc->type == NXPQ_INT64 && !(pc->valid && !pc->valid[r]))
        out->assembly = nx_nki_find_asm(out->idx, pc->values.i64[r], has_op ? op->data + op->offsets[r] : NULL,
                                        has_op ? (size_t)(op->offsets[r + 1] - op->offsets[r]) : 0);
    bool has_core = core && core->type == NXPQ_INT64 && !(core->valid && !core->valid[r]);
    if (name && name->type == NXPQ_STRING && !(name->valid && !name->valid[r])) {
        size_t len = (size_t)(name->offsets[r + 1] - name->offsets[r]);
        out->kernel_instruction_name = strndup(name->data + name->offsets[r], len);
        rc = !out->kernel_instruction_name ? -1
             : has_core                    ? source(out, core->values.i64[r], name->data + name->offsets[r], len)
                                           : 0;
    }
    if (rc < 0) {
        nx_nki_context_free(out);
        return nx_error_set(err, "%s: Instruction row: out of memory", profile_dir);
    }
    return 0;
}

int nx_nki_context_read(const char *profile_dir, int64_t ordinal, const int64_t *start_hint, nx_nki_context *out,
                        nx_error *err)
{
    memset(out, 0, sizeof *out);
    nx_event ev;
    int rc = nx_event_read_fields(profile_dir, "Instruction", ordinal, start_hint, FIELDS, NKI_FIELDS, &ev, err);
    if (rc != 0)
        return rc;
    rc = nx_nki_context_of(profile_dir, &ev, out, err);
    nx_event_free(&ev);
    return rc;
}

void nx_nki_context_free(nx_nki_context *c)
{
    nx_nki_index_release(c->idx);
    free(c->kernel_instruction_name);
    free(c->frames);
    free(c->iters);
    memset(c, 0, sizeof *c);
}
