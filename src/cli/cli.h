/*
 * cli.h — what every `nxprof <command>` shares: the command table entry, exit
 * codes and the one-line usage-error convention.
 *
 * Each command lives in its own cmd_<name>.c and exports one nx_command. A
 * command's run() receives argv with argv[0] == the command name, parses its
 * options with getopt_long (optstring starting with ':' so missing arguments are
 * told apart from unknown options) and returns an NX_EXIT_* code. The analyses
 * of query/analysis.h's registry are commands too, without a file of their own:
 * cmd_analysis.c runs each of them.
 */
#ifndef NX_CLI_H
#define NX_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "query/analysis.h"

enum {
    NX_EXIT_OK = 0,
    NX_EXIT_ERROR = 1,      /* runtime or input error */
    NX_EXIT_USAGE = 2,      /* unknown command/option, missing or bad argument */
    NX_EXIT_TRUNCATED = 3   /* output stopped at a row limit (export-csv) */
};

typedef struct nx_command {
    const char *name;
    const char *summary;                 /* one line for `nxprof --help` */
    int (*run)(int argc, char **argv);
    void (*help)(FILE *out);             /* full `nxprof <name> --help` text */
} nx_command;

extern const nx_command nx_cmd_annotations;
extern const nx_command nx_cmd_diff;
extern const nx_command nx_cmd_export_csv;
extern const nx_command nx_cmd_export_perfetto;
extern const nx_command nx_cmd_index;
extern const nx_command nx_cmd_process;
extern const nx_command nx_cmd_schema;
extern const nx_command nx_cmd_serve;
extern const nx_command nx_cmd_sql;
extern const nx_command nx_cmd_summary;
extern const nx_command nx_cmd_synth;
extern const nx_command nx_cmd_top;
extern const nx_command nx_cmd_view;

/* Prints "nxprof <cmd>: <message>" and a one-line hint to stderr; returns NX_EXIT_USAGE. */
int nx_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints the schema catalogue as "yaml" or "json" on stdout (cmd_schema.c). */
int nx_schema_print(const char *format);

/* Prints a profile's Summary and top OpcodeSummary rows as text or JSON (cmd_summary.c);
 * a system profile's rows of `rank` only when rank >= 0, the profiler's own rows
 * among its operators when profiler_rows; returns an NX_EXIT_* code (1 when
 * either table is missing). */
int nx_summary_print(const char *profile_dir, int64_t rank, bool profiler_rows, bool json);

/* `nxprof <a->name>` (cmd_analysis.c): runs analysis a on argv (argv[0] ==
 * its name) and returns an NX_EXIT_* code; and its --help text. */
int nx_analysis_cmd_run(const nx_analysis *a, int argc, char **argv);
void nx_analysis_cmd_help(const nx_analysis *a, FILE *out);

/* --rank N (summary, top): a decimal rank 0..10^18 into *out; 0, or -1 when s is none. */
int nx_parse_rank(const char *s, int64_t *out);

/* serve/view helpers (cmd_serve.c): port 0..65535 and bind-address checks (0 or -1);
 * the default data path is profile/profile_layout.h nx_data_path_default. */
int nx_serve_parse_port(const char *s, unsigned *out);
int nx_serve_check_bind(const char *s);
/* --allow-host NAME (serve and view): at most NX_SERVE_MAX_ALLOW_HOSTS of them. */
#define NX_SERVE_MAX_ALLOW_HOSTS 16
/* Adds NAME to hosts[*n]: 0, or NX_EXIT_USAGE after printing why NAME is refused
 * (not a host name or address, a port given, too many). */
int nx_serve_allow_host(const char *cmd, const char *name, const char **hosts, size_t *n);
/* The query API's options of serve and view (cmd_serve.c, docs/api.md
 * "Reference-compatible query API"): --api-port P (0..65535), --disable-ui, --query-timeout S
 * (seconds, a decimal number above 0, at most 86400) and --query-max-rows N
 * (1..1000000000). */
enum { NX_SERVE_OPT_API_PORT = 3000, NX_SERVE_OPT_DISABLE_UI, NX_SERVE_OPT_QUERY_TIMEOUT, NX_SERVE_OPT_MAX_ROWS };
#define NX_SERVE_API_LONG_OPTIONS                                                                                  \
    {"api-port", required_argument, NULL, NX_SERVE_OPT_API_PORT},                                                  \
        {"disable-ui", no_argument, NULL, NX_SERVE_OPT_DISABLE_UI},                                                \
        {"query-timeout", required_argument, NULL, NX_SERVE_OPT_QUERY_TIMEOUT},                                    \
        {"query-max-rows", required_argument, NULL, NX_SERVE_OPT_MAX_ROWS}
struct nx_server_options;
/* Applies option c (with its argument) to o: 0; 1 when c is none of them; else
 * NX_EXIT_USAGE after printing why the argument is refused. */
int nx_serve_api_option(const char *cmd, int c, const char *arg, struct nx_server_options *o);
/* Their lines of --help, each text starting at column col. */
void nx_serve_api_help(FILE *out, int col);

/* Turns getopt_long's '?' or ':' result into a usage error naming the option. */
int nx_getopt_error(const char *cmd, int c, char **argv);

/* Perfetto traces (perfetto_out.c). One profile's `tables` (n; NULL: every
 * timeline table) over [start, end] into the file `path`, written aside and
 * renamed into place when complete; an NX_EXIT_* code, errors on stderr. */
int nx_perfetto_write(const char *cmd, const char *profile_dir, const char *path, int64_t start, int64_t end,
                      const char *const *tables, size_t n);
/* The reference tool's files for the profile at profile_dir into out_dir:
 * system_profile.pftrace for a system profile, and device_profile_model_<id>.pftrace
 * for each of its device profiles (or for profile_dir itself when it is a
 * device profile); <id> is the device profile name's "nd<D>-nc<C>" part and
 * what follows it, else the whole name. An NX_EXIT_* code. */
int nx_perfetto_write_set(const char *cmd, const char *profile_dir, const char *out_dir);

#endif
