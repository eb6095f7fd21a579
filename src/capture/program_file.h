/*
 * program_file.h — the program file (`program_<hash>.nxprog`), nxprof's open
 * stand-in for a compiled NEFF: what was compiled (NeffHeader facts), for which
 * hardware (clocks, array sizes, bandwidths), and every instruction, DMA queue,
 * DMA descriptor, tensor, semaphore, collective and stack frame that a device
 * trace refers to by number. Byte layout: docs/capture-format.md, "Program file".
 *
 * Reading: nx_program_open() reads the whole file (programs are small: a few MB
 * for tens of thousands of instructions), computes its XXH3-64 hash, decodes
 * every section into the arrays of nx_program and validates every cross
 * reference, so a trace reader can trust it. Strings are never NULL: an absent
 * optional string is "".
 *
 * Writing: fill an nx_program (or reuse one that was read) and call
 * nx_program_write(); it runs the same validation first, so it never writes a
 * file the reader would reject, and names the file after its hash.
 *
 * The field lists below are X-macros so that the structs, the codec and the
 * specification table share one order: field k of a list is stored at the k-th
 * slot of its block in the record (see the layout tables in the spec).
 */
#ifndef NX_PROGRAM_FILE_H
#define NX_PROGRAM_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "util/absent.h"
#include "util/arena.h"

#define NX_PROG_MAGIC "NXPROG\0\0"      /* 8 bytes */
#define NX_PROG_VERSION_MAJOR 1
#define NX_PROG_VERSION_MINOR 2         /* 1.1 added MEMORY_ALLOCATIONS; 1.2 the NKI
                                           debug info and ASSEMBLY */
#define NX_PROG_HEADER_SIZE 64
#define NX_PROG_TOC_ENTRY_SIZE 32

#define NX_NO_SEMAPHORE 0xFFFF          /* u16 semaphore fields: none */
#define NX_NO_TENSOR 0xFFFFFFFFu

/* Section ids (TOC entry field `id`). */
typedef enum nx_prog_section {
    NX_SEC_STRINGS = 1,
    NX_SEC_PROGRAM = 2,
    NX_SEC_HARDWARE = 3,
    NX_SEC_INSTRUCTIONS = 4,
    NX_SEC_DMA_QUEUES = 5,
    NX_SEC_DMA_DESCRIPTORS = 6,
    NX_SEC_TENSORS = 7,
    NX_SEC_SEMAPHORES = 8,
    NX_SEC_COLLECTIVES = 9,
    NX_SEC_CC_STREAMS = 10,
    NX_SEC_STACK_FRAMES = 11,
    NX_SEC_MEMORY_ALLOCATIONS = 12,   /* since 1.1 */
    NX_SEC_NKI_FRAMES = 20,           /* since 1.2: NKI kernel debug info */
    NX_SEC_NKI_ITERATIONS = 21,
    NX_SEC_NKI_INSTRUCTIONS = 22,
    NX_SEC_ASSEMBLY = 23,             /* since 1.2: the compiler's assembly listing */
    NX_SEC_LAST = 23
} nx_prog_section;

/* Record sizes of version 1.0. A reader accepts larger records (later minor
 * versions append fields) and ignores the extra bytes. */
enum {
    NX_PROG_PROGRAM_SIZE = 80,
    NX_PROG_HARDWARE_SIZE = 120,
    NX_PROG_INSTR_SIZE = 288,
    NX_PROG_QUEUE_SIZE = 24,
    NX_PROG_DESC_SIZE = 112,
    NX_PROG_TENSOR_SIZE = 32,
    NX_PROG_SEMAPHORE_SIZE = 8,
    NX_PROG_COLLECTIVE_SIZE = 80,
    NX_PROG_CC_STREAM_SIZE = 24,
    NX_PROG_FRAME_SIZE = 24,
    NX_PROG_ALLOC_SIZE = 32,
    NX_PROG_NKI_FRAME_SIZE = 24,
    NX_PROG_NKI_ITER_SIZE = 32,
    NX_PROG_NKI_INSTR_SIZE = 32,
    NX_PROG_ASM_SIZE = 24
};

/* DmaQueueType, in the schema's enum order; the number is stored. */
typedef enum nx_dma_queue_type {
    NX_DMAQ_INSTRUCTION, NX_DMAQ_INPUT, NX_DMAQ_OUTPUT, NX_DMAQ_DATA,
    NX_DMAQ_SOFTWARE_DYNAMIC, NX_DMAQ_HARDWARE_DYNAMIC, NX_DMAQ_UNKNOWN, NX_DMAQ_COUNT
} nx_dma_queue_type;
const char *nx_dma_queue_type_name(unsigned t);   /* NULL when out of range */

/* Instruction.tensor_instruction_type bits. */
#define NX_TENSOR_REGULAR 0x1
#define NX_TENSOR_TRANSPOSE 0x2
/* Instruction.performance_mode: 0 absent, 1 "2x", 2 "4x". */
const char *nx_performance_mode_name(unsigned m);  /* NULL for 0 and out of range */

/* --- PROGRAM section: one record, the NeffHeader facts ---------------------- */
#define NX_PROG_HEADER_STRINGS(X) \
    X(network_name) X(enabled_features) X(package_version) X(build_version) X(compiler_version)
#define NX_PROG_HEADER_INTS(X) \
    X(cc_participant_count) X(neuroncore_count) X(logical_neuroncore_count) \
    X(pcore_count_per_lnc) X(num_subgraphs)

#define NX_STR_FIELD(name) const char *name;
#define NX_I64_FIELD(name) int64_t name;
#define NX_U64_FIELD(name) uint64_t name;
#define NX_U32_FIELD(name) uint32_t name;

typedef struct nx_prog_header {
    NX_PROG_HEADER_STRINGS(NX_STR_FIELD)
    uint8_t uuid[16];
    NX_PROG_HEADER_INTS(NX_I64_FIELD)
} nx_prog_header;

/* --- HARDWARE section: one record, what Metadata and Summary's MFU/MBU need -- */
#define NX_PROG_HW_U64S(X) \
    X(neuroncore_clock_hz) X(tensor_clock_hz) X(vector_clock_hz) X(scalar_clock_hz) \
    X(gpsimd_clock_hz) X(dma_ddr_bandwidth) X(hbm_ddr_bandwidth) X(hbm_capacity_bytes) \
    X(sbuf_partition_bytes) X(psum_partition_bytes)
#define NX_PROG_HW_U32S(X) \
    X(tensor_rows) X(tensor_cols) X(vector_channels) X(scalar_channels) X(gpsimd_channels) \
    X(dma_engines_per_neuroncore) X(sbuf_partitions) X(psum_banks) X(cc_core_count) X(reserved)

typedef struct nx_prog_hardware {
    NX_PROG_HW_U64S(NX_U64_FIELD)
    NX_PROG_HW_U32S(NX_U32_FIELD)
} nx_prog_hardware;

/* --- INSTRUCTIONS: one record per instruction, sorted by (engine, pc) -------- */
#define NX_PROG_INSTR_STRINGS(X) \
    X(opcode) X(operands) X(compiler_opcode) X(compiler_operands) X(timeline_track) \
    X(subgraph) X(bir_instruction_name) X(kernel_instruction_name) X(hlo_name) X(hlo_attrs) \
    X(framework_name) X(penguin_name) X(layer) X(nki_source_location) \
    X(bir_debug_info_source_location) X(instruction_chain) X(scalar_activation_fn)
#define NX_PROG_INSTR_INTS(X) \
    X(compiler_pc) X(raw_penguin_id) X(raw_bir_id) X(raw_hlo_id) X(raw_framework_id) \
    X(stack_frame_id) \
    X(hbm_read_bytes) X(hbm_write_bytes) X(sbuf_read_bytes) X(sbuf_write_bytes) \
    X(spill_save_bytes) X(spill_reload_bytes) X(psum_read_bytes) X(psum_write_bytes) \
    X(psum_read_sbuf_write_bytes) X(input_queue_bytes) X(output_queue_bytes) \
    X(weight_queue_bytes) \
    X(tensor_elements) X(raw_flops) X(adjusted_flops) X(tensor_elements_transpose) \
    X(flops_transpose) X(adjusted_flops_transpose) X(channels)

typedef struct nx_prog_instr {
    uint32_t pc;
    uint8_t engine;                  /* nx_engine */
    uint8_t tensor_instruction_type; /* NX_TENSOR_* bits, 0 = absent */
    uint8_t performance_mode;        /* 0 absent, 1 "2x", 2 "4x" */
    uint16_t wait_semaphore;         /* waits on this semaphore, or NX_NO_SEMAPHORE */
    uint16_t signal_semaphore;       /* increments it on completion, or NX_NO_SEMAPHORE */
    NX_PROG_INSTR_STRINGS(NX_STR_FIELD)
    NX_PROG_INSTR_INTS(NX_I64_FIELD)    /* NX_ABSENT = not recorded */
} nx_prog_instr;

/* --- DMA_QUEUES: record i is queue i ------------------------------------------ */
typedef struct nx_prog_queue {
    const char *name;                /* DmaQueuesInfo.name, e.g. "qSyncIO0" */
    const char *purpose;             /* DmaQueuesInfo.type, e.g. "weights" */
    uint8_t type;                    /* nx_dma_queue_type */
    uint8_t owner_engine;            /* engine that triggers its blocks, or NX_ENGINE_NONE */
    uint32_t dma_engine;             /* DmaQueuesInfo.engine_idx */
    uint32_t axi_port;
    uint32_t dram_channel;
} nx_prog_queue;

/* --- DMA_DESCRIPTORS: static description of a DMA block ---------------------- */
#define NX_PROG_DESC_STRINGS(X) \
    X(op) X(variable) X(source) X(dest) X(semaphore_label) X(modular_flow_function) \
    X(read_sbuf_partitions) X(read_shape) X(read_offset) X(read_steps) \
    X(write_sbuf_partitions) X(write_shape) X(write_offset) X(write_steps) \
    X(transpose_element_size) X(transpose_shape) X(transpose_from_shape) \
    X(transpose_to_shape) X(transpose_unroll_factor)

typedef struct nx_prog_dma_desc {
    uint16_t queue;                  /* the queue whose blocks use it */
    uint16_t completion_semaphore;   /* incremented when a block completes, or NX_NO_SEMAPHORE */
    uint8_t is_transpose;            /* 0 no, 1 yes, 0xFF absent */
    uint32_t read_num_sbuf_partitions;
    uint32_t write_num_sbuf_partitions;
    int64_t trigger;                 /* DmaPacketAggregated.trigger, NX_ABSENT */
    int64_t completion;              /* DmaPacketAggregated.completion, NX_ABSENT */
    NX_PROG_DESC_STRINGS(NX_STR_FIELD)
} nx_prog_dma_desc;

/* --- TENSORS, SEMAPHORES, COLLECTIVES, CC_STREAMS, STACK_FRAMES --------------- */
typedef struct nx_prog_tensor {
    const char *name, *type, *format, *shape;   /* type: "IN", "OUT", "WEIGHT" */
    int64_t size;                               /* bytes, NX_ABSENT */
    int64_t node;                               /* NX_ABSENT */
} nx_prog_tensor;

typedef struct nx_prog_semaphore {
    const char *name;                /* SemaphoreUpdate.id, e.g. "S[12]" */
    int32_t initial_value;
} nx_prog_semaphore;

typedef struct nx_prog_collective {
    const char *operation, *algorithm, *dtype, *replica_group;
    int64_t op_id, num_elements, stream_id, stream_index;
    int64_t input_size, output_size, replica_group_id;   /* NX_ABSENT allowed */
    uint8_t trigger_engine;          /* nx_engine */
} nx_prog_collective;

typedef struct nx_prog_cc_stream {
    int64_t stream_id, stream_index;
    const char *cc_core_ids;         /* e.g. "[8,9,10,11]" */
} nx_prog_cc_stream;

typedef struct nx_prog_frame {
    int64_t parent;                  /* index of the calling frame, NX_ABSENT at the root */
    const char *file_name, *function_name;
    uint32_t line;
} nx_prog_frame;

/* --- MEMORY_ALLOCATIONS (since 1.1): the compiler's static SBUF/PSUM allocations --
 * One record per allocation: which memory, which partitions (and PSUM bank), how
 * many bytes in each of those partitions, and its live range as two
 * instructions: it becomes live when `live` starts and is free once `free` ends
 * (how the processor turns that into SbufUsage/PsumUsage: docs/processing.md).
 * PSUM has as many partitions as SBUF (HARDWARE sbuf_partitions); a bank holds
 * psum_partition_bytes / psum_banks bytes of each partition. */
typedef enum nx_mem_kind { NX_MEM_SBUF = 0, NX_MEM_PSUM = 1, NX_MEM_COUNT } nx_mem_kind;
#define NX_NO_BANK 0xFF                 /* SBUF allocations have no bank */

typedef struct nx_prog_alloc {
    const char *name;                /* non-empty, e.g. "q_proj.weight[0]" */
    uint8_t memory;                  /* nx_mem_kind */
    uint8_t bank;                    /* PSUM: 0..psum_banks-1; SBUF: NX_NO_BANK */
    uint16_t first_partition;        /* first_partition + partition_count <= sbuf_partitions */
    uint16_t partition_count;        /* >= 1 */
    uint8_t live_engine, free_engine;
    uint32_t live_pc, free_pc;       /* (engine, pc) of instructions of the program */
    uint64_t bytes_per_partition;    /* 1 .. the capacity of one partition (SBUF) or bank (PSUM) */
    uint32_t end_address;            /* 0: not recorded; else the byte just past the allocation in each
                                        of its partitions (bank): bytes_per_partition .. the capacity;
                                        it starts at end_address - bytes_per_partition */
} nx_prog_alloc;

/* Bytes of one partition an allocation of `memory` may take: sbuf_partition_bytes
 * (SBUF) or psum_partition_bytes / psum_banks (PSUM, one bank). */
uint64_t nx_prog_alloc_capacity(const nx_prog_hardware *hw, unsigned memory);

/* --- NKI debug info (since 1.2): where an NKI kernel's instructions come from --
 * NKI_FRAMES are the kernel's call frames (nx_prog_frame, STACK_FRAMES' layout:
 * parent is the index of the calling frame in NKI_FRAMES, file and line the call
 * site). NKI_ITERATIONS are loop-variable bindings: one per loop iteration that
 * generated instructions, parent the binding of the enclosing loop. Each
 * NKI_INSTRUCTIONS record maps one instruction of the program (by engine, pc;
 * it must have a kernel_instruction_name) to its innermost frame, its innermost
 * binding and the source line that generated it. Instructions that no record
 * names did not come from an NKI kernel. */
typedef struct nx_prog_nki_iter {
    int64_t parent;                  /* index of the enclosing loop's binding, NX_ABSENT */
    int64_t value;                   /* the loop variable's value in this iteration */
    const char *name, *file_name;    /* name non-empty */
    uint32_t line;                   /* where the loop is written */
} nx_prog_nki_iter;

typedef struct nx_prog_nki_instr {
    uint8_t engine;
    uint32_t pc;                     /* (engine, pc): an instruction of the program */
    uint32_t frame;                  /* index into NKI_FRAMES: the innermost frame */
    int64_t iteration;               /* index into NKI_ITERATIONS, NX_ABSENT outside loops */
    const char *file_name;           /* the generating line */
    uint32_t line;
} nx_prog_nki_instr;

/* --- ASSEMBLY (since 1.2): the compiler's listing, one record per instruction
 * in strictly increasing compiler_pc; an instruction whose compiler_pc is
 * recorded has that same value here. */
typedef struct nx_prog_asm {
    uint8_t engine;
    uint32_t pc;                     /* (engine, pc): an instruction of the program */
    int64_t compiler_pc;             /* >= 0 */
    const char *opcode, *operands;   /* opcode non-empty */
} nx_prog_asm;

/* A decoded program (reader) or the description of one to write (writer). */
typedef struct nx_program {
    nx_prog_header header;
    nx_prog_hardware hw;
    nx_prog_instr *instrs;           /* sorted by (engine, pc), pcs unique per engine */
    size_t n_instrs;
    nx_prog_queue *queues;
    size_t n_queues;
    nx_prog_dma_desc *descs;
    size_t n_descs;
    nx_prog_tensor *tensors;
    size_t n_tensors;
    nx_prog_semaphore *semaphores;
    size_t n_semaphores;
    nx_prog_collective *collectives;
    size_t n_collectives;
    nx_prog_cc_stream *cc_streams;
    size_t n_cc_streams;
    nx_prog_frame *frames;
    size_t n_frames;
    nx_prog_alloc *allocs;           /* MEMORY_ALLOCATIONS; none when the section is absent */
    size_t n_allocs;
    nx_prog_frame *nki_frames;       /* the NKI sections and ASSEMBLY: none when absent */
    size_t n_nki_frames;
    nx_prog_nki_iter *nki_iters;
    size_t n_nki_iters;
    nx_prog_nki_instr *nki_instrs;   /* sorted by (engine, pc), each instruction once */
    size_t n_nki_instrs;
    nx_prog_asm *asm_lines;
    size_t n_asm_lines;
    /* Strings that only device traces refer to (CC instruction descriptions,
     * error texts); the writer puts them in the string table. Reader: NULL. */
    const char *const *extra_strings;
    size_t n_extra_strings;

    /* Filled by the reader (and by nx_program_write for the written file). */
    char *path;
    uint64_t hash;                   /* XXH3_64bits of the file's bytes */
    uint64_t file_size;
    uint64_t header_bytes;           /* file header + table of contents (NeffHeader.header_size) */
    uint16_t version_major, version_minor;
    const char *strings;             /* the raw STRINGS section; trace records index it */
    uint64_t strings_size;
    size_t engine_first[NX_ENGINE_COUNT], engine_count[NX_ENGINE_COUNT];
    uint32_t *instr_pcs;             /* reader: instrs[i].pc for every i, so that finding an
                                        instruction (once or twice per trace record) reads 4
                                        bytes per probe, not a whole nx_prog_instr */
    unsigned char *image;            /* reader: the file's bytes (strings point into it) */
    nx_arena arena;                  /* reader-owned memory */
} nx_program;

/* Reads and validates `path`. Fatal (returns -1, *out NULL): I/O error, wrong
 * magic, unsupported major version, truncated or overlapping sections, missing
 * required section, record too small, string reference out of range, unsorted
 * or duplicate pcs, any reference out of range. Warnings: unknown section ids
 * (a later minor version), a file name whose hash differs from the content's is
 * fatal. Release with nx_program_close(). */
int nx_program_open(const char *path, nx_program **out, const nx_cap_warner *warn,
                    nx_error *err);
void nx_program_close(nx_program *p);

/* Decodes an in-memory image (`name` is used in messages); same checks. The
 * image becomes the program's: it must come from malloc and is freed by
 * nx_program_close(), or here when decoding fails. */
int nx_program_adopt(unsigned char *data, size_t size, const char *name, nx_program **out,
                     const nx_cap_warner *warn, nx_error *err);

/* The instruction of `engine` at `pc`, or NULL. O(1) when pcs are dense. */
const nx_prog_instr *nx_program_find_instr(const nx_program *p, unsigned engine, uint32_t pc);

/* The string at byte offset `ref` of the string table, or NULL when `ref` is not
 * the start of a string. Valid for a program that was read. */
const char *nx_program_string(const nx_program *p, uint32_t ref);
/* The offset of string `s` in the table; false when absent. Linear: for setup. */
bool nx_program_find_string(const nx_program *p, const char *s, uint32_t *ref);

/* Validates `p`, serialises it into a malloc'd image (*data, *size) and hashes it.
 * extra_refs (NULL, or room for p->n_extra_strings) receives the string table
 * offset of each extra string, for trace records that refer to them. */
int nx_program_encode(const nx_program *p, unsigned char **data, size_t *size,
                      uint64_t *hash, uint32_t *extra_refs, nx_error *err);
/* Encodes `p` and writes DIR/program_<hash>.nxprog; *hash receives the hash and,
 * when path_out is not NULL, *path_out a malloc'd copy of the path. */
int nx_program_write(const char *dir, const nx_program *p, uint64_t *hash, char **path_out,
                     nx_error *err);

#endif
