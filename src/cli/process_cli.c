/* process_cli.c — shared processing options of `process` and `view` (rules in process_cli.h). */
#include "cli/process_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "profile/path_text.h"
#include "profile/profile_layout.h"
#include "profile/table_writer.h"

void nx_process_cli_help(FILE *out)
{
    fprintf(out,
            "      --data-path P          write to P/profiles/global/: the system profile N@latest/\n"
            "                             and a device profile N-nd<D>-nc<C>@latest/ per NeuronCore\n"
            "      --display-name N       profile name (default: the capture's name)\n"
            "      --output-file DIR      write the system profile to DIR and its device profiles to\n"
            "                             DIR/devices/<name>/ instead (one capture session only)\n"
            "      --max-rows-per-file N  split a table into T_0.parquet, T_1.parquet, ... above\n"
            "                             N rows per file (default %u)\n"
            "      --ignore-device-profile  skip program files and device traces\n"
            "      --ignore-system-profile  skip runtime events, host samples and Chrome traces\n"
            "      --jobs N               profiles (device traces) built at once (default: one\n"
            "                             per four CPUs); the profiles are the same for every N\n"
            "A progress line is shown on stderr when it is a terminal.\n",
            NX_TABLE_MAX_ROWS_DEFAULT);
}

/* Parses a decimal integer in [1, max]; 0 on success. */
static int parse_positive(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *s == '+' || *end || errno || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int nx_process_cli_option(const char *cmd, int id, const char *arg, nx_process_options *o)
{
    unsigned long long v;
    switch (id) {
    case NX_PO_DATA_PATH:
        o->data_path = arg;
        return 0;
    case NX_PO_DISPLAY_NAME:
        o->display_name = arg;
        return 0;
    case NX_PO_OUTPUT_FILE:
        o->output_file = arg;
        return 0;
    case NX_PO_MAX_ROWS:
        if (parse_positive(arg, UINT64_MAX, &v) != 0)
            return nx_usage_error(cmd, "--max-rows-per-file needs a positive integer, got '%s'", arg);
        o->max_rows_per_file = v;
        return 0;
    case NX_PO_IGNORE_DEVICE:
        o->ignore_device_profile = true;
        return 0;
    case NX_PO_IGNORE_SYSTEM:
        o->ignore_system_profile = true;
        return 0;
    case NX_PO_JOBS:
        if (parse_positive(arg, 1024, &v) != 0)
            return nx_usage_error(cmd, "--jobs needs an integer from 1 to 1024, got '%s'", arg);
        o->jobs = (int)v;
        return 0;
    default:
        return -1;
    }
}

/* The capture directory's name; for one trace file its name without the
 * suffixes trace writers add ("w0.123.pt.trace.json.gz" -> "w0.123"), so the
 * profile is not called "trace.json". */
static char *default_display_name(const char *capture)
{
    char *name = nx_path_last_component(capture);
    struct stat st;
    if (!name || stat(capture, &st) != 0 || S_ISDIR(st.st_mode))
        return name;
    static const char *const suffixes[] = {".gz", ".json", ".pb", ".xplane", ".trace", ".pt"};
    for (bool cut = true; cut;) {
        cut = false;
        size_t len = strlen(name);
        for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
            size_t n = strlen(suffixes[i]);
            if (len > n && strcmp(name + len - n, suffixes[i]) == 0) {
                name[len - n] = '\0';
                cut = true;
                break;
            }
        }
    }
    return name;
}

int nx_process_cli_validate(const char *cmd, nx_process_options *o, bool default_data_path, char **owned)
{
    *owned = NULL;
    if (!o->capture_dir || !*o->capture_dir)
        return nx_usage_error(cmd, "the capture directory must not be empty");
    if (o->output_file && (o->data_path || o->display_name))
        return nx_usage_error(cmd, "--output-file cannot be combined with --data-path or --display-name");
    if (!o->output_file && !o->data_path && !default_data_path)
        return nx_usage_error(cmd, "one of --data-path P or --output-file DIR is required");
    if (o->output_file && !*o->output_file)
        return nx_usage_error(cmd, "--output-file needs a directory");
    if (o->ignore_device_profile && o->ignore_system_profile)
        return nx_usage_error(cmd, "--ignore-device-profile with --ignore-system-profile leaves nothing to process");
    if (!o->output_file && !o->display_name) {
        *owned = default_display_name(o->capture_dir);
        if (!*owned)
            return nx_usage_error(cmd, "no display name in '%s'; give --display-name", o->capture_dir);
        o->display_name = *owned;
    }
    nx_error nerr;
    if (o->display_name && nx_display_name_validate(o->display_name, &nerr) != 0) {
        int rc = nx_usage_error(cmd, "bad display name '%s': %s", o->display_name, nerr.msg);
        free(*owned);
        *owned = NULL;
        o->display_name = NULL;
        return rc;
    }
    return 0;
}

int nx_process_cli_execute(const char *cmd, nx_process_options *o, FILE *report, char **profile_dir)
{
    if (profile_dir)
        *profile_dir = NULL;
    o->progress = isatty(STDERR_FILENO) == 1;
    nx_process_stats st;
    nx_error err = {0};
    if (nx_process_run(o, &st, &err) != 0) {
        fprintf(stderr, "nxprof %s: %s\n", cmd, err.msg);
        return NX_EXIT_ERROR;
    }
    for (size_t i = 0; i < st.n_profiles; i++) {
        const nx_process_profile *p = &st.profiles[i];
        if (p->system)
            fprintf(report, "%s: wrote %s (system profile, %zu device profile%s)\n", cmd, p->dir, p->n_devices,
                    p->n_devices == 1 ? "" : "s");
        else if (p->in_system)
            fprintf(report, "  device profile %s (NeuronCore %" PRIu32 " of device %" PRIu32 ")\n", p->dir, p->core,
                    p->device);
        else
            fprintf(report, "%s: wrote %s (device profile: NeuronCore %" PRIu32 " of device %" PRIu32 ")\n", cmd,
                    p->dir, p->core, p->device);
    }
    fprintf(report, "  %zu program(s), %zu device trace(s), %" PRIu64 " instructions, %u tables\n", st.programs,
            st.traces, st.instructions, st.tables);
    if (profile_dir) {
        *profile_dir = st.profile_dir;
        st.profile_dir = NULL;
    }
    nx_process_stats_free(&st);
    return fflush(report) == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
}
