/*
 * cmd_view.c — `nxprof view`: the reference tool's entry point, kept under its
 * flag names so its users' muscle memory works.
 *
 *   view --show-profile-schema        the schema as OpenAPI YAML (same as `nxprof schema`)
 *   view -d CAPTURE_DIR --ingest-only [processing options] [--output-format F]
 *                                     process the capture exactly as `nxprof process`
 *                                     (options shared through process_cli.h); with
 *                                     F = summary-text or summary-json, then print the
 *                                     new profile's summary (`nxprof summary`), the
 *                                     processing report going to stderr so stdout holds
 *                                     only the summary. F = parquet (default): the
 *                                     report goes to stdout as with `process`.
 *   view -d CAPTURE_DIR --output-format perfetto --output-file DIR [processing options]
 *                                     process into DIR as above (--ingest-only implied),
 *                                     then write the reference's Perfetto files beside
 *                                     the tables: DIR/system_profile.pftrace and
 *                                     DIR/device_profile_model_<id>.pftrace per device
 *                                     profile (cli.h nx_perfetto_write_set).
 *   view -d CAPTURE_DIR [--bind A] [--port N] [--allow-host NAME]... [--api-port P]
 *        [--disable-ui] [--query-timeout S] [--query-max-rows N]
 *                                     process as above (report on stdout), then serve the
 *                                     viewer (src/server/server.h, `nxprof serve`) over the
 *                                     data path the profile went to, printing its URL,
 *                                     until SIGINT/SIGTERM. --output-file cannot be used
 *                                     here (the server serves a data path), nor
 *                                     --output-format other than parquet; --bind/--port/
 *                                     --allow-host and the query API's options
 *                                     (cli.h nx_serve_api_option) only here (not with
 *                                     --ingest-only).
 * Unlike `process`, view may omit both --data-path and --output-file: the profile
 * then goes to the default data path ($HOME/.nxprof/profiles/global/N@latest).
 * --show-profile-schema cannot be combined with -d.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/process_cli.h"
#include "profile/profile_layout.h"
#include "server/server.h"

static void view_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof view --show-profile-schema\n"
            "       nxprof view -d CAPTURE_DIR [--display-name N] [--data-path P] [--bind A] [--port N]\n"
            "                   [--allow-host NAME]... [--api-port P] [--disable-ui] [--query-timeout S]\n"
            "                   [--query-max-rows N]\n"
            "       nxprof view -d CAPTURE_DIR --ingest-only [--display-name N] [--data-path P]\n"
            "                   [--output-file DIR] [--output-format parquet|summary-text|summary-json]\n"
            "       nxprof view -d CAPTURE_DIR --output-format perfetto --output-file DIR\n"
            "                   [--max-rows-per-file N] [--ignore-device-profile]\n"
            "                   [--ignore-system-profile] [--jobs N]\n"
            "\n"
            "Reference-compatible entry point.\n"
            "\n"
            "  --show-profile-schema      print the profile schema as OpenAPI YAML (same as 'nxprof schema')\n"
            "  -d, --directory DIR        the capture directory to process\n"
            "      --ingest-only          process the capture into a profile and stop; without it,\n"
            "                             view then serves the viewer (as 'nxprof serve') and\n"
            "                             prints the URL to open\n"
            "      --bind ADDR, --port N  where to serve (default 127.0.0.1, 3001; port 0 picks one)\n"
            "      --allow-host NAME      a further host name the viewer is reached by (repeatable;\n"
            "                             as 'nxprof serve --allow-host')\n");
    nx_serve_api_help(out, 29);
    fprintf(out,
            "      --output-format F      parquet (default): just the profile; summary-text or\n"
            "                             summary-json: also print its summary ('nxprof summary');\n"
            "                             perfetto (needs --output-file, implies --ingest-only):\n"
            "                             also write DIR/system_profile.pftrace and\n"
            "                             DIR/device_profile_model_<id>.pftrace (<id>: nd<D>-nc<C>)\n"
            "Processing options, as for 'nxprof process' (without --data-path and --output-file\n"
            "the profile goes to $HOME/.nxprof/profiles/global/N@latest):\n");
    nx_process_cli_help(out);
    fprintf(out,
            "  -h, --help                 show this help\n"
            "\n"
            "Exit status: 0 success, 1 capture, output or summary error, 2 usage error.\n");
}

typedef enum { OUT_PARQUET, OUT_SUMMARY_TEXT, OUT_SUMMARY_JSON, OUT_PERFETTO } view_output;

static int view_run(int argc, char **argv)
{
    enum { OPT_SHOW_SCHEMA = 1000, OPT_INGEST_ONLY, OPT_OUTPUT_FORMAT, OPT_BIND, OPT_PORT, OPT_ALLOW_HOST };
    static const struct option opts[] = {
        {"show-profile-schema", no_argument, NULL, OPT_SHOW_SCHEMA},
        {"directory", required_argument, NULL, 'd'},
        {"ingest-only", no_argument, NULL, OPT_INGEST_ONLY},
        {"output-format", required_argument, NULL, OPT_OUTPUT_FORMAT},
        {"bind", required_argument, NULL, OPT_BIND},
        {"port", required_argument, NULL, OPT_PORT},
        {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
        NX_SERVE_API_LONG_OPTIONS,
        NX_PROCESS_LONG_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool show_schema = false, ingest_only = false, fmt_given = false;
    const char *bind = NULL;
    unsigned port = 3001;
    const char *hosts[NX_SERVE_MAX_ALLOW_HOSTS];
    size_t n_hosts = 0;
    bool serve_opt = false;
    /* The query API's options (cli.h nx_serve_api_option), kept until the server starts. */
    nx_server_options api = {.api_port = NX_SERVER_DEFAULT_API_PORT};
    view_output fmt = OUT_PARQUET;
    nx_process_options o = {0};
    int c;
    while ((c = getopt_long(argc, argv, ":d:h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_SHOW_SCHEMA:
            show_schema = true;
            break;
        case 'd':
            o.capture_dir = optarg;
            break;
        case OPT_INGEST_ONLY:
            ingest_only = true;
            break;
        case OPT_BIND:
            if (nx_serve_check_bind(optarg) < 0)
                return nx_usage_error("view", "bad --bind '%s' (an IPv4 or IPv6 address)", optarg);
            bind = optarg;
            serve_opt = true;
            break;
        case OPT_PORT:
            if (nx_serve_parse_port(optarg, &port) < 0)
                return nx_usage_error("view", "bad --port '%s' (0..65535)", optarg);
            serve_opt = true;
            break;
        case OPT_ALLOW_HOST: {
            int rc = nx_serve_allow_host("view", optarg, hosts, &n_hosts);
            if (rc != 0)
                return rc;
            serve_opt = true;
            break;
        }
        case OPT_OUTPUT_FORMAT:
            fmt_given = true;
            if (strcmp(optarg, "parquet") == 0)
                fmt = OUT_PARQUET;
            else if (strcmp(optarg, "summary-text") == 0)
                fmt = OUT_SUMMARY_TEXT;
            else if (strcmp(optarg, "summary-json") == 0)
                fmt = OUT_SUMMARY_JSON;
            else if (strcmp(optarg, "perfetto") == 0)
                fmt = OUT_PERFETTO;
            else
                return nx_usage_error("view",
                                      "unknown output format '%s' (parquet, summary-text, summary-json or perfetto)",
                                      optarg);
            break;
        case 'h':
            view_help(stdout);
            return NX_EXIT_OK;
        default: {
            int rc = nx_serve_api_option("view", c, optarg, &api);
            if (rc == 0) {
                serve_opt = true;
                break;
            }
            if (rc != 1)
                return rc;
            rc = nx_process_cli_option("view", c, optarg, &o);
            if (rc < 0)
                return nx_getopt_error("view", c, argv);
            if (rc != 0)
                return rc;
        }
        }
    }
    if (optind < argc)
        return nx_usage_error("view", "unexpected argument '%s'", argv[optind]);
    if (show_schema) {
        if (o.capture_dir || ingest_only)
            return nx_usage_error("view", "--show-profile-schema cannot be combined with -d or --ingest-only");
        return nx_schema_print("yaml");
    }
    if (!o.capture_dir)
        return nx_usage_error("view", "nothing to do: give -d CAPTURE_DIR --ingest-only, or --show-profile-schema");
    if (ingest_only && serve_opt)
        return nx_usage_error("view", "--bind, --port, --allow-host and the query API's options serve the "
                                      "viewer; they cannot be combined with --ingest-only");
    if (fmt == OUT_PERFETTO) {
        if (!o.output_file)
            return nx_usage_error("view", "--output-format perfetto needs --output-file DIR (where the traces go)");
        if (serve_opt)
            return nx_usage_error("view", "--output-format perfetto writes files; it cannot be combined with --bind, "
                                          "--port or --allow-host");
        ingest_only = true;
    }
    if (!ingest_only && o.output_file)
        return nx_usage_error("view", "--output-file needs --ingest-only (the viewer serves a data path)");
    if (!ingest_only && fmt_given && fmt != OUT_PARQUET)
        return nx_usage_error("view", "--output-format %s needs --ingest-only",
                              fmt == OUT_SUMMARY_JSON ? "summary-json" : "summary-text");
    char *owned = NULL;
    int rc = nx_process_cli_validate("view", &o, true, &owned);
    char *profile_dir = NULL;
    if (rc == 0)
        rc = nx_process_cli_execute("view", &o, fmt == OUT_PARQUET || fmt == OUT_PERFETTO ? stdout : stderr,
                                    &profile_dir);
    if (rc == 0 && fmt == OUT_PERFETTO)
        rc = nx_perfetto_write_set("view", profile_dir, o.output_file);
    else if (rc == 0 && fmt != OUT_PARQUET)
        rc = nx_summary_print(profile_dir, -1, false, fmt == OUT_SUMMARY_JSON);
    if (rc == 0 && !ingest_only) {
        char *dp = NULL;
        nx_error err;
        if (!o.data_path && nx_data_path_default(&dp, &err) < 0) {
            fprintf(stderr, "nxprof view: %s\n", err.msg);
            rc = NX_EXIT_ERROR;
        } else {
            /* The first profile published (the system profile, or a lone device
             * profile; with several sessions N-s1): the display name of its entry. */
            const char *base;
            size_t len = nx_layout_entry_name(profile_dir, &base);
            if (!len)
                len = strlen(base);
            char open_name[256];
            snprintf(open_name, sizeof open_name, "%.*s", (int)len, base);
            nx_server_options so = api;
            so.data_path = o.data_path ? o.data_path : dp;
            so.bind = bind;
            so.port = port;
            so.open_profile = open_name;
            so.allow_hosts = hosts;
            so.n_allow_hosts = n_hosts;
            fflush(stdout);
            rc = nx_server_run(&so, stdout) == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
        }
        free(dp);
    }
    free(profile_dir);
    free(owned);
    return rc;
}

const nx_command nx_cmd_view = {
    .name = "view",
    .summary = "process a capture, then serve it (-d CAPTURE_DIR); --ingest-only, --show-profile-schema",
    .run = view_run,
    .help = view_help,
};
