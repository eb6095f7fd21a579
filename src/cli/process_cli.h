/*
 * process_cli.h — the processing options that `nxprof process` and
 * `nxprof view --ingest-only` share, parsed and validated in one place so the two
 * commands cannot drift apart.
 *
 * Shared long options (both commands spell them the same way):
 *   --data-path P, --display-name N, --output-file DIR, --max-rows-per-file N (> 0),
 *   --ignore-device-profile, --ignore-system-profile, --jobs N (1..1024).
 * Short forms differ per command (process: -d data path, -n name, -o output; view
 * keeps the reference tool's -d for the capture directory), so each command maps
 * its own short letters onto the NX_PO_* ids before calling nx_process_cli_option.
 * Validation (nx_process_cli_validate), all usage errors (exit 2):
 *   - the capture directory is required and non-empty;
 *   - --output-file excludes --data-path and --display-name, and one of
 *     --output-file / --data-path is required, unless the caller allows the default
 *     data path ($HOME/.nxprof, `view` does as the reference tool has a default store);
 *   - the display name defaults to the capture directory's last path component
 *     and must pass nx_display_name_validate;
 *   - --ignore-device-profile together with --ignore-system-profile is refused
 *     (nothing would be processed).
 * Progress: nx_process_cli_execute sets the progress line on when stderr is a
 * terminal (isatty), never otherwise, so logs and pipes stay clean.
 */
#ifndef NX_CLI_PROCESS_CLI_H
#define NX_CLI_PROCESS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "process/processor.h"

enum {
    NX_PO_DATA_PATH = 2000,
    NX_PO_DISPLAY_NAME,
    NX_PO_OUTPUT_FILE,
    NX_PO_MAX_ROWS,
    NX_PO_IGNORE_DEVICE,
    NX_PO_IGNORE_SYSTEM,
    NX_PO_JOBS
};

/* Entries for a getopt_long option table (no terminator). */
#define NX_PROCESS_LONG_OPTIONS                                                   \
    {"data-path", required_argument, NULL, NX_PO_DATA_PATH},                      \
    {"display-name", required_argument, NULL, NX_PO_DISPLAY_NAME},                \
    {"output-file", required_argument, NULL, NX_PO_OUTPUT_FILE},                  \
    {"max-rows-per-file", required_argument, NULL, NX_PO_MAX_ROWS},               \
    {"ignore-device-profile", no_argument, NULL, NX_PO_IGNORE_DEVICE},            \
    {"ignore-system-profile", no_argument, NULL, NX_PO_IGNORE_SYSTEM},            \
    {"jobs", required_argument, NULL, NX_PO_JOBS}

/* Help lines for those options, for the commands' --help texts. */
void nx_process_cli_help(FILE *out);

/* Applies option `id` (an NX_PO_* value) with argument `arg`. Returns 0, NX_EXIT_USAGE
 * after printing the error for a bad value, or -1 when id is not a processing option. */
int nx_process_cli_option(const char *cmd, int id, const char *arg, nx_process_options *o);

/* Checks the options once parsing is done (rules above); may set o->display_name to a
 * malloc'd default returned in *owned (free it after the run). Returns 0 or NX_EXIT_USAGE. */
int nx_process_cli_validate(const char *cmd, nx_process_options *o, bool default_data_path, char **owned);

/* Runs the processor and reports the outcome ("<cmd>: wrote DIR" and counts on
 * `report`; errors on stderr). On success *profile_dir (if not NULL) receives the
 * published directory, malloc'd. Returns NX_EXIT_OK or NX_EXIT_ERROR. */
int nx_process_cli_execute(const char *cmd, nx_process_options *o, FILE *report, char **profile_dir);

#endif
