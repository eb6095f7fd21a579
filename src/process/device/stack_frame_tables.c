/*
 * stack_frame_tables.c — StackFrame, StackFrameFileLocation, StackFrameFileName
 * and StackFrameFunctionName, from the programs' STACK_FRAMES sections (no
 * trace records). Written when the pipeline finishes; nothing is written when
 * no program has stack frames.
 *
 * Ids are the indices of the deduplicated tree built by stack_frames.h (the same
 * ones Instruction.stack_frame_ids lists), written in decimal where the schema
 * types the id as a string:
 *   StackFrameFileName      id "<n>", name: one row per distinct file name.
 *   StackFrameFunctionName  id "<n>", name: one row per distinct function name.
 *   StackFrameFileLocation  id "<n>", file_name_id, function_name_id (int32,
 *                           the numeric value of those tables' ids),
 *                           line_number (int32: a u32 line above 2^31-1 keeps
 *                           its 32 bits): one row per distinct (file, function, line).
 *   StackFrame              id "<n>", file_location_id (int32), parent_frame_id:
 *                           the caller's id, or "-1" for an outermost frame
 *                           (the schema makes the column required, so a root
 *                           cannot be null; -1 is the format's "absent").
 * Rows are in id order (first appearance, programs in capture order).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/device/device_sink.h"
#include "process/row.h"
#include "process/device/stack_frames.h"

/* One "id, name" table. */
static int write_names(const nx_process_ctx *ctx, const char *table, const char *const *names, size_t n,
                       unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, table, err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "id"), c_name = nx_row_col(&r, "name");
    char id[24];
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof id, "%zu", i);
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_id, id);
        nx_row_str(&r, c_name, names[i]);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int write_locations(const nx_process_ctx *ctx, const nx_frame_index *x, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "StackFrameFileLocation", err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "id"), c_file = nx_row_col(&r, "file_name_id"),
           c_fn = nx_row_col(&r, "function_name_id"), c_line = nx_row_col(&r, "line_number");
    char id[24];
    for (size_t i = 0; i < x->n_locations; i++) {
        const nx_sf_location *l = &x->locations[i];
        snprintf(id, sizeof id, "%zu", i);
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_id, id);
        nx_row_i64(&r, c_file, l->file_name);
        nx_row_i64(&r, c_fn, l->function_name);
        nx_row_i64(&r, c_line, (int32_t)l->line);   /* int32 column: u32 bits */
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int write_frames(const nx_process_ctx *ctx, const nx_frame_index *x, unsigned *tables, nx_error *err)
{
    nx_row r;
    if (nx_row_open(&r, &ctx->dest, "StackFrame", err) != 0)
        return -1;
    size_t c_id = nx_row_col(&r, "id"), c_loc = nx_row_col(&r, "file_location_id"),
           c_parent = nx_row_col(&r, "parent_frame_id");
    char id[24], parent[24];
    for (size_t i = 0; i < x->n_frames; i++) {
        snprintf(id, sizeof id, "%zu", i);
        snprintf(parent, sizeof parent, "%" PRId64, x->frames[i].parent);
        if (nx_row_begin(&r, err) != 0)
            goto fail;
        nx_row_str(&r, c_id, id);
        nx_row_i64(&r, c_loc, x->frames[i].location);
        nx_row_str(&r, c_parent, parent);
        if (nx_row_end(&r, err) != 0)
            goto fail;
    }
    return nx_row_close(&r, true, tables, err);
fail:
    nx_row_discard(&r);
    return -1;
}

static int sf_finish(void *state, const nx_process_ctx *ctx, unsigned *tables, nx_error *err)
{
    (void)state;
    nx_frame_index x;
    if (nx_frame_index_build(ctx->progs, ctx->n_progs, &x, "StackFrame", err) != 0)
        return -1;
    int rc = 0;
    if (x.n_frames > 0) {
        rc = write_names(ctx, "StackFrameFileName", x.file_names, x.n_file_names, tables, err);
        if (rc == 0)
            rc = write_names(ctx, "StackFrameFunctionName", x.function_names, x.n_function_names, tables, err);
        if (rc == 0)
            rc = write_locations(ctx, &x, tables, err);
        if (rc == 0)
            rc = write_frames(ctx, &x, tables, err);
    }
    nx_frame_index_free(&x);
    return rc;
}

const nx_device_sink nx_sink_stack_frames = {
    .name = "StackFrame tables",
    .kinds = 0,
    .finish = sf_finish,
};
