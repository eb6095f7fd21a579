/*
 * processor.h — `nxprof process`: turns a capture directory into a profile
 * directory of Parquet tables.
 *
 * Two pipelines fill one temporary directory that is then published atomically:
 * the device pipeline (device_pipeline.h: program files and device traces, one
 * pass, every device table through its sink) and the system pipeline
 * (system_tables.h: runtime events, CPU and memory samples, Chrome traces).
 * Non-fatal capture problems are reported on stderr and become Warning rows;
 * SchemaFields is always written.
 * A fatal capture or output error leaves any previous profile untouched.
 */
#ifndef NX_PROCESSOR_H
#define NX_PROCESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nx_process_options {
    const char *capture_dir;     /* the directory given on the command line */
    const char *data_path;       /* NULL: $HOME/.nxprof (ignored with output_file) */
    const char *display_name;    /* required unless output_file is set */
    const char *output_file;     /* explicit profile directory, or NULL */
    uint64_t max_rows_per_file;  /* 0: NX_TABLE_MAX_ROWS_DEFAULT */
    bool ignore_device_profile;  /* skip program files and device traces */
    bool ignore_system_profile;  /* skip runtime events, samples and Chrome traces */
    int jobs;                    /* threads encoding Parquet pages; 0: one per CPU (at most 8) */
    bool progress;               /* a progress line on stderr (the caller checks it is a terminal) */
} nx_process_options;

typedef struct nx_process_stats {
    char *profile_dir;           /* where the profile was published (malloc'd) */
    uint64_t instructions;       /* Instruction rows */
    size_t traces;               /* device traces read */
    size_t programs;             /* program files read */
    unsigned tables;             /* tables written */
    uint64_t warnings;           /* non-fatal capture problems reported on stderr */
} nx_process_stats;

/* Processes o->capture_dir. Returns 0 (st filled; release with
 * nx_process_stats_free) or -1 with a message in err naming the file at fault. */
int nx_process_run(const nx_process_options *o, nx_process_stats *st, char *err, size_t errlen);
void nx_process_stats_free(nx_process_stats *st);

#endif
