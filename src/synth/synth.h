/*
 * synth.h — the workload simulator behind `nxprof synth`: writes a complete,
 * valid capture (docs/capture-format.md) of NeuronCores running a real-looking
 * workload, for the demo, the tests and the benchmarks.
 *
 * How it works: the preset's model (a transformer decoder layer) is compiled
 * into a program file, then every NeuronCore's engines, DMA queues and CC cores
 * are scheduled once with semaphore dependencies into a per-core template of
 * one execution (about 30k records for llama-layer). Each execution then
 * replays its template through a monotone time warp drawn from the seed (so
 * every duration varies but no dependency or ordering is broken), with its own
 * throttle and error notifications, until the event budget is met. One thread
 * per core writes that core's trace; memory is the templates plus one write
 * buffer per thread, whatever the number of events.
 *
 * Output: OUT/<instance-id>_pid_<pid>/<timestamp>/ with the program, one trace
 * per core and (unless disabled) the system capture and trace.json. The same
 * options give byte-identical files. The session directory is built under a
 * temporary name and renamed into place; a previous synth output of the same
 * session is replaced, a directory holding anything else is refused.
 */
#ifndef NX_SYNTH_H
#define NX_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/device_trace.h"
#include "util/error.h"

typedef enum nx_synth_preset {
    NX_SYNTH_TINY,          /* a small layer: a few thousand events, every record kind */
    NX_SYNTH_LLAMA_LAYER    /* a Llama-3-8B-shaped decoder layer, tensor-parallel over the cores */
} nx_synth_preset;

#define NX_SYNTH_MAX_CORES 64

typedef struct nx_synth_options {
    const char *out_dir;
    nx_synth_preset preset;
    uint64_t events;        /* device records to write, at least (0: the preset's default) */
    unsigned cores;         /* NeuronCores, 1..NX_SYNTH_MAX_CORES (0: the preset's default) */
    uint64_t seed;
    bool system;            /* also write the system capture and trace.json */
    unsigned threads;       /* writer threads (0: one per online CPU, at most one per core) */
    bool force;             /* write into a non-empty out_dir (adding a session beside what is there,
                               or replacing the session of the same seed); else that is refused */
} nx_synth_options;

typedef struct nx_synth_stats {
    char *session_dir;      /* malloc'd; release with nx_synth_stats_free() */
    uint64_t program_hash;
    unsigned cores;
    uint32_t executions;    /* per core */
    uint64_t records[NX_REC_KIND_MAX + 1];   /* device records per kind, all cores */
    uint64_t total_records;
    uint64_t device_bytes;  /* bytes of all traces */
    uint64_t runtime_events, cpu_samples, mem_samples, chrome_events;
    uint64_t device_mem_samples;   /* device_mem.tsv lines (one per device, HBM and sample time) */
    double seconds;         /* wall time of the whole run */
} nx_synth_stats;

/* "tiny" / "llama-layer"; parse returns false for an unknown name. */
const char *nx_synth_preset_name(nx_synth_preset p);
bool nx_synth_preset_parse(const char *name, nx_synth_preset *out);
uint64_t nx_synth_default_events(nx_synth_preset p);
unsigned nx_synth_default_cores(nx_synth_preset p);

/* Writes the capture. Returns 0, or -1 with a message (naming the file at fault
 * where there is one) in err. */
int nx_synth_run(const nx_synth_options *opts, nx_synth_stats *stats, nx_error *err);
void nx_synth_stats_free(nx_synth_stats *stats);

#endif
