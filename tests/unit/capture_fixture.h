/*
 * capture_fixture.h — a small, complete program (every section filled) and
 * helpers for the capture tests: temporary directories, a warning collector,
 * and byte patching of written files. Header-only so each test binary gets its
 * own copy; only tests/unit/test_*.c files become tests.
 */
#ifndef NX_CAPTURE_FIXTURE_H
#define NX_CAPTURE_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/device_trace.h"
#include "capture/program_file.h"

static inline nx_prog_instr fix_instr(uint8_t engine, uint32_t pc, const char *opcode)
{
    nx_prog_instr in = {.pc = pc, .engine = engine, .wait_semaphore = NX_NO_SEMAPHORE,
                        .signal_semaphore = NX_NO_SEMAPHORE, .opcode = opcode, .operands = "src=0x10 dst=0x20"};
#define X(name) in.name = NX_ABSENT;
    NX_PROG_INSTR_INTS(X)
#undef X
    return in;
}

/* Fills p with a program of 5 instructions (3 tensor, 1 vector, 1 sync), 2 queues,
 * 2 descriptors, 1 tensor, 2 semaphores, 1 collective, 1 CC stream, 2 frames. */
static inline void fix_program(nx_program *p)
{
    static nx_prog_instr instrs[5];
    static nx_prog_queue queues[2];
    static nx_prog_dma_desc descs[2];
    static nx_prog_tensor tensors[1];
    static nx_prog_semaphore sems[2];
    static nx_prog_collective colls[1];
    static nx_prog_cc_stream streams[1];
    static nx_prog_frame frames[2];
    static const char *const extra[] = {"DMA_ADVANCE", "Tensor Completion", "sem 5 overflow", "DMA2D OOB"};
    memset(p, 0, sizeof *p);
    p->header = (nx_prog_header){.network_name = "model.neff", .enabled_features = "coalesced-cc",
                                 .package_version = "0", .build_version = "0", .compiler_version = "2.13.2",
                                 .cc_participant_count = 2, .neuroncore_count = 1,
                                 .logical_neuroncore_count = 1, .pcore_count_per_lnc = 1, .num_subgraphs = 1};
    memcpy(p->header.uuid, "0123456789abcdef", 16);
    p->hw = (nx_prog_hardware){1400000000, 1400000000, 1400000000, 1400000000, 1400000000, 437000000000,
                               410000000000, 34359738368, 196608, 16384, 128, 128, 128, 128, 128, 16, 128, 8,
                               16, 0};
    instrs[0] = fix_instr(NX_ENGINE_TENSOR, 0, "LDWEIGHTS");
    instrs[1] = fix_instr(NX_ENGINE_TENSOR, 1, "MATMUL");
    instrs[1].hlo_name = "dot.12";
    instrs[1].raw_flops = 2 * 128 * 128 * 256;
    instrs[1].wait_semaphore = 0;
    instrs[1].tensor_instruction_type = NX_TENSOR_REGULAR;
    instrs[1].stack_frame_id = 1;
    instrs[2] = fix_instr(NX_ENGINE_TENSOR, 7, "MATMUL");
    instrs[3] = fix_instr(NX_ENGINE_VECTOR, 0, "TENSOR_TENSOR");
    instrs[3].performance_mode = 1;
    instrs[4] = fix_instr(NX_ENGINE_SYNC, 0, "DMA_TRIGGER");
    instrs[4].signal_semaphore = 1;
    queues[0] = (nx_prog_queue){"qTensorWeights0", "weights", NX_DMAQ_DATA, NX_ENGINE_SYNC, 0, 0, 0};
    queues[1] = (nx_prog_queue){"qSyncIO0", "input", NX_DMAQ_INPUT, NX_ENGINE_SYNC, 1, 1, 1};
    for (int i = 0; i < 2; i++)
        descs[i] = (nx_prog_dma_desc){.queue = (uint16_t)i, .completion_semaphore = 0, .is_transpose = 0xFF,
                                      .trigger = NX_ABSENT, .completion = NX_ABSENT, .op = "read",
                                      .variable = "w0", .source = "[HBM]", .dest = "[SB]"};
    tensors[0] = (nx_prog_tensor){"w0", "WEIGHT", "NC", "128 128", 32768, 7};
    sems[0] = (nx_prog_semaphore){"S[0]", 0};
    sems[1] = (nx_prog_semaphore){"S[1]", 0};
    colls[0] = (nx_prog_collective){"AllReduce", "Ring", "bf16", "[[0, 1]]", 0, 1024, 0, 0, 2048, 2048, 0,
                                    NX_ENGINE_GPSIMD};
    streams[0] = (nx_prog_cc_stream){0, 0, "[8,9,10,11]"};
    frames[0] = (nx_prog_frame){NX_ABSENT, "model.py", "forward", 10};
    frames[1] = (nx_prog_frame){0, "layers.py", "linear", 42};
    p->instrs = instrs, p->n_instrs = 5;
    p->queues = queues, p->n_queues = 2;
    p->descs = descs, p->n_descs = 2;
    p->tensors = tensors, p->n_tensors = 1;
    p->semaphores = sems, p->n_semaphores = 2;
    p->collectives = colls, p->n_collectives = 1;
    p->cc_streams = streams, p->n_cc_streams = 1;
    p->frames = frames, p->n_frames = 2;
    p->extra_strings = extra, p->n_extra_strings = 4;
}

/* A fresh directory under $TMPDIR (or /tmp); the path is malloc'd. */
static inline char *fix_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/nxcap_XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static inline char *fix_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, name);
    return s;
}

static inline void fix_rmtree(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Overwrites len bytes at offset of an existing file. */
static inline int fix_patch(const char *path, long offset, const void *bytes, size_t len)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int rc = pwrite(fd, bytes, len, offset) == (ssize_t)len ? 0 : -1;
    close(fd);
    return rc;
}

static inline int fix_truncate(const char *path, long size)
{
    return truncate(path, size);
}

/* Collects warnings for assertions. */
typedef struct fix_warnings {
    int count;
    char last[512];
} fix_warnings;

static inline void fix_warn_cb(void *ctx, const char *path, uint64_t where, const char *category, const char *message)
{
    fix_warnings *w = ctx;
    (void)where;
    w->count++;
    snprintf(w->last, sizeof w->last, "%s [%s] %s", path, category, message);
}

#endif
