/*
 * processor.h — `nxprof process`: turns a capture directory into a profile
 * directory of Parquet tables.
 *
 * This slice reads the program files and every device trace of a capture
 * (streaming: records are held only within each trace's reorder window) and
 * writes, through the catalogue-driven table writer into a temporary directory
 * that is published atomically:
 *   Instruction    one row per instruction record, every trace merged and sorted
 *                  by start_ts, joined with the program's instruction table;
 *   NeffHeader     one row per program file;
 *   DmaQueuesInfo  one row per (program queue, physical core), when queues exist;
 *   Metadata       one row per device trace (clock, hardware, first/last times);
 *   SchemaFields   the catalogue itself.
 * A fatal capture or output error leaves any previous profile untouched.
 */
#ifndef NX_PROCESSOR_H
#define NX_PROCESSOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct nx_process_options {
    const char *capture_dir;     /* the directory given on the command line */
    const char *data_path;       /* NULL: $HOME/.nxprof (ignored with output_file) */
    const char *display_name;    /* required unless output_file is set */
    const char *output_file;     /* explicit profile directory, or NULL */
    uint64_t max_rows_per_file;  /* 0: NX_TABLE_MAX_ROWS_DEFAULT */
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
