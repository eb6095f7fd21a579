/*
 * process_options.h — what a run of `nxprof process` was asked to do: the
 * orchestrator (processor.h) takes it, and every device sink (device_sink.h)
 * sees it through its context, so it stands apart from both.
 */
#ifndef NX_PROCESS_OPTIONS_H
#define NX_PROCESS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nx_process_options {
    const char *capture_dir;     /* the directory given on the command line */
    const char *data_path;       /* NULL: $HOME/.nxprof (ignored with output_file) */
    const char *display_name;    /* required unless output_file is set */
    const char *output_file;     /* explicit profile directory, or NULL */
    uint64_t max_rows_per_file;  /* 0: NX_TABLE_MAX_ROWS_DEFAULT */
    bool ignore_device_profile;  /* skip program files and device traces */
    bool ignore_system_profile;  /* skip runtime events, samples and Chrome traces */
    int jobs;                    /* profiles built at once; 0: one per four CPUs */
    bool progress;               /* a progress line on stderr (the caller checks it is a terminal) */
} nx_process_options;

#endif
