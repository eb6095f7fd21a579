/*
 * stack_frames.h — the deduplicated stack-frame tree of a capture's programs,
 * shared by the StackFrame* tables (stack_frame_tables.c) and the Instruction
 * table's stack_frame_ids column (instruction_table.c), so both use the same ids.
 *
 * Built from the programs' STACK_FRAMES sections, programs in capture order,
 * frames in record order (a parent is always an earlier record):
 *   - a file name or function name gets the next id (0, 1, ...) the first time
 *     its exact text is seen;
 *   - a location is (file name id, function name id, line); a new one gets the
 *     next location id;
 *   - a frame is (location id, parent frame id, -1 at the root); a new one gets
 *     the next frame id. Identical call chains in several programs therefore
 *     share their ids.
 * path[p][f] is the text of Instruction.stack_frame_ids for an instruction of
 * program p whose stack_frame_id is f: the frame ids from the outermost caller
 * to frame f, as "[<id>, <id>, ...]" (the catalogue's example "[101, 102, 103]").
 *
 * Memory is bounded by the programs' frames (and their depth for the paths).
 */
#ifndef NX_STACK_FRAMES_H
#define NX_STACK_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "capture/program_file.h"
#include "util/error.h"

typedef struct nx_sf_frame {
    int64_t location;                /* index into locations */
    int64_t parent;                  /* index into frames, -1 at the root */
} nx_sf_frame;

typedef struct nx_sf_location {
    int64_t file_name, function_name;   /* indices into file_names / function_names */
    uint32_t line;
} nx_sf_location;

typedef struct nx_frame_index {
    nx_sf_frame *frames;
    size_t n_frames;
    nx_sf_location *locations;
    size_t n_locations;
    const char **file_names;         /* point into the programs */
    size_t n_file_names;
    const char **function_names;
    size_t n_function_names;
    size_t n_progs;
    size_t *prog_frames;             /* per program: its frame count */
    int64_t **frame_id;              /* per program, per frame record: global frame id */
    const char ***path;              /* per program, per frame record: stack_frame_ids text */
    char *text;                      /* storage of every path */
} nx_frame_index;

/* Builds the index; 0, or -1 with a message naming `who` in err (out of memory). */
int nx_frame_index_build(nx_program *const *progs, size_t n_progs, nx_frame_index *out, const char *who,
                         nx_error *err);
void nx_frame_index_free(nx_frame_index *x);

#endif
