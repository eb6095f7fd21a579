/*
 * fuzz_program.c — libFuzzer harness for the program file reader
 * (capture/program_file.h).
 *
 * Each input is a program file image decoded with nx_program_adopt (the path
 * nx_program_open takes after reading the file). A rejected input must leave
 * *out NULL and a message; an accepted one must hold what the header promises:
 * every string readable, every instruction found again by (engine, pc), every
 * stack frame's parent an earlier frame, every cross reference in range (checked
 * by walking them). Then the program is encoded again (the writer validates with
 * the same rules, so what the reader accepted must encode) and the new image
 * decoded: the same counts. A violated invariant aborts.
 *
 * Seeds: tests/fuzz/corpus/program/ (tests/fuzz/make_corpus.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/program_file.h"
#include "fuzz_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t sink;

static void touch(const char *s)
{
    NXFUZZ_CHECK(s != NULL);
    sink += strlen(s);
}

static void warn(void *ctx, const char *path, uint64_t where, const char *category, const char *message)
{
    (void)ctx;
    (void)where;
    touch(path);
    touch(category);
    touch(message);
}

/* The NKI sections and ASSEMBLY: chains backwards, every reference in range. */
static void walk_nki(const nx_program *p)
{
    for (size_t i = 0; i < p->n_nki_frames; i++) {
        touch(p->nki_frames[i].file_name);
        touch(p->nki_frames[i].function_name);
        NXFUZZ_CHECK(p->nki_frames[i].parent == NX_ABSENT ||
                     (p->nki_frames[i].parent >= 0 && (uint64_t)p->nki_frames[i].parent < i));
    }
    for (size_t i = 0; i < p->n_nki_iters; i++) {
        touch(p->nki_iters[i].name);
        touch(p->nki_iters[i].file_name);
        NXFUZZ_CHECK(p->nki_iters[i].parent == NX_ABSENT ||
                     (p->nki_iters[i].parent >= 0 && (uint64_t)p->nki_iters[i].parent < i));
    }
    for (size_t i = 0; i < p->n_nki_instrs; i++) {
        const nx_prog_nki_instr *m = &p->nki_instrs[i];
        const nx_prog_instr *in = nx_program_find_instr(p, m->engine, m->pc);
        touch(m->file_name);
        NXFUZZ_CHECK(in != NULL && in->kernel_instruction_name[0] != '\0');
        NXFUZZ_CHECK(m->frame < p->n_nki_frames);
        NXFUZZ_CHECK(m->iteration == NX_ABSENT || (m->iteration >= 0 && (uint64_t)m->iteration < p->n_nki_iters));
    }
    for (size_t i = 0; i < p->n_asm_lines; i++) {
        const nx_prog_asm *a = &p->asm_lines[i];
        touch(a->opcode);
        touch(a->operands);
        NXFUZZ_CHECK(nx_program_find_instr(p, a->engine, a->pc) != NULL);
        NXFUZZ_CHECK(a->compiler_pc >= 0 && (i == 0 || a->compiler_pc > p->asm_lines[i - 1].compiler_pc));
    }
}

static void walk(const nx_program *p)
{
#define T_(name) touch(h->name);
    const nx_prog_header *h = &p->header;
    NX_PROG_HEADER_STRINGS(T_)
#undef T_
    for (size_t i = 0; i < p->n_instrs; i++) {
        const nx_prog_instr *in = &p->instrs[i];
#define T_(name) touch(in->name);
        NX_PROG_INSTR_STRINGS(T_)
#undef T_
        NXFUZZ_CHECK(in->engine < NX_ENGINE_COUNT);
        NXFUZZ_CHECK(nx_program_find_instr(p, in->engine, in->pc) == in);
        NXFUZZ_CHECK(in->wait_semaphore == NX_NO_SEMAPHORE || in->wait_semaphore < p->n_semaphores);
        NXFUZZ_CHECK(in->signal_semaphore == NX_NO_SEMAPHORE || in->signal_semaphore < p->n_semaphores);
        NXFUZZ_CHECK(in->stack_frame_id == NX_ABSENT ||
                     (in->stack_frame_id >= 0 && (uint64_t)in->stack_frame_id < p->n_frames));
        NXFUZZ_CHECK(p->instr_pcs[i] == in->pc);
    }
    for (size_t i = 0; i < p->n_queues; i++) {
        touch(p->queues[i].name);
        touch(p->queues[i].purpose);
        NXFUZZ_CHECK(nx_dma_queue_type_name(p->queues[i].type) != NULL);
    }
    for (size_t i = 0; i < p->n_descs; i++) {
        const nx_prog_dma_desc *d = &p->descs[i];
#define T_(name) touch(d->name);
        NX_PROG_DESC_STRINGS(T_)
#undef T_
        NXFUZZ_CHECK(d->queue < p->n_queues);
        NXFUZZ_CHECK(d->completion_semaphore == NX_NO_SEMAPHORE || d->completion_semaphore < p->n_semaphores);
    }
    for (size_t i = 0; i < p->n_tensors; i++) {
        touch(p->tensors[i].name);
        touch(p->tensors[i].type);
        touch(p->tensors[i].format);
        touch(p->tensors[i].shape);
    }
    for (size_t i = 0; i < p->n_semaphores; i++)
        touch(p->semaphores[i].name);
    for (size_t i = 0; i < p->n_collectives; i++) {
        const nx_prog_collective *c = &p->collectives[i];
        touch(c->operation);
        touch(c->algorithm);
        touch(c->dtype);
        touch(c->replica_group);
    }
    for (size_t i = 0; i < p->n_cc_streams; i++)
        touch(p->cc_streams[i].cc_core_ids);
    for (size_t i = 0; i < p->n_frames; i++) {
        touch(p->frames[i].file_name);
        touch(p->frames[i].function_name);
        NXFUZZ_CHECK(p->frames[i].parent == NX_ABSENT ||
                     (p->frames[i].parent >= 0 && (uint64_t)p->frames[i].parent < i));
    }
    for (size_t i = 0; i < p->n_allocs; i++) {
        const nx_prog_alloc *a = &p->allocs[i];
        touch(a->name);
        NXFUZZ_CHECK(a->memory < NX_MEM_COUNT);
        NXFUZZ_CHECK(nx_program_find_instr(p, a->live_engine, a->live_pc) != NULL);
        NXFUZZ_CHECK(nx_program_find_instr(p, a->free_engine, a->free_pc) != NULL);
        NXFUZZ_CHECK(a->bytes_per_partition >= 1 &&
                     a->bytes_per_partition <= nx_prog_alloc_capacity(&p->hw, a->memory));
    }
    walk_nki(p);
    /* A few string references, valid or not: the string table's lookups. */
    for (uint32_t ref = 0; ref < 64 && ref < p->strings_size; ref += 7) {
        const char *s = nx_program_string(p, ref);
        if (s)
            touch(s);
    }
    (void)nx_program_string(p, UINT32_MAX);
    (void)nx_program_find_instr(p, NX_ENGINE_COUNT, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *img = malloc(size ? size : 1);
    if (!img)
        return 0;
    memcpy(img, data, size);
    nx_cap_warner w = {warn, NULL};
    nx_error err;
    err.msg[0] = '\0';
    nx_program *p = (nx_program *)1;
    if (nx_program_adopt(img, size, "fuzz.nxprog", &p, &w, &err) != 0) { /* img freed by the reader */
        NXFUZZ_CHECK(p == NULL);
        NXFUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg) != NULL);
        return 0;
    }
    NXFUZZ_CHECK(p != NULL);
    NXFUZZ_CHECK(p->file_size == size);
    walk(p);

    /* What the reader accepted, the writer's validation accepts too, and its image reads back. */
    unsigned char *again = NULL;
    size_t again_size = 0;
    uint64_t hash = 0;
    int rc = nx_program_encode(p, &again, &again_size, &hash, NULL, &err);
    if (rc != 0)
        fprintf(stderr, "encode refused a program the reader accepted: %s\n", err.msg);
    NXFUZZ_CHECK(rc == 0);
    nx_program *q = NULL;
    rc = nx_program_adopt(again, again_size, "again.nxprog", &q, NULL, &err);
    if (rc != 0)
        fprintf(stderr, "the re-encoded program does not read back: %s\n", err.msg);
    NXFUZZ_CHECK(rc == 0);
    NXFUZZ_CHECK(q->hash == hash && q->n_instrs == p->n_instrs && q->n_queues == p->n_queues &&
                 q->n_descs == p->n_descs && q->n_tensors == p->n_tensors && q->n_semaphores == p->n_semaphores &&
                 q->n_collectives == p->n_collectives && q->n_cc_streams == p->n_cc_streams &&
                 q->n_frames == p->n_frames && q->n_allocs == p->n_allocs &&
                 q->n_nki_frames == p->n_nki_frames && q->n_nki_iters == p->n_nki_iters &&
                 q->n_nki_instrs == p->n_nki_instrs && q->n_asm_lines == p->n_asm_lines);
    nx_program_close(q);
    nx_program_close(p);
    return 0;
}
