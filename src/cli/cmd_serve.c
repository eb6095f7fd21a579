/*
 * cmd_serve.c — `nxprof serve [--data-path P] [--bind ADDR] [--port N] [--threads N]
 * [--allow-host NAME]...`:
 * the web viewer and JSON API (docs/api.md) over the profiles in
 * P/profiles/global/<name>@latest, until SIGINT/SIGTERM.
 *
 * Rules (usage errors, exit 2): --port is 0..65535 (0: the kernel picks a free port;
 * the chosen one is printed), --threads 1..64, --bind an IPv4 or IPv6 literal
 * (default 127.0.0.1: nothing is exposed beyond this machine unless asked), no
 * positional arguments, --allow-host a host name, IPv4 address or bracketed IPv6
 * address without a port (at most 16; server.h); the query API's options as
 * nx_serve_api_option (cli.h). --data-path defaults to $HOME/.nxprof. The data path need
 * not exist yet (the listing is then empty). Exit 0 after a signal, 1 when the
 * server cannot start (port in use, address not available).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "profile/profile_layout.h"
#include "server/server.h"

#define CMD "serve"

static void serve_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof serve [--data-path P] [--bind ADDR] [--port N] [--threads N] [--allow-host NAME]...\n"
            "                    [--api-port P] [--disable-ui] [--query-timeout S] [--query-max-rows N]\n"
            "\n"
            "Serve the Device Trace Viewer and its JSON API (docs/api.md) for the profiles in\n"
            "P/profiles/global/*@latest. Prints the URL to open; stop with Ctrl-C. The reference\n"
            "tool's query API (GET /api/v1/health, POST /api/v1/db/<profile>/_search: SQL, table\n"
            "schemas, file lists) answers on both ports.\n"
            "\n"
            "  -p, --data-path P    data path (default $HOME/.nxprof)\n"
            "  -b, --bind ADDR      IPv4 or IPv6 address to listen on (default 127.0.0.1)\n"
            "  -P, --port N         TCP port, 0..65535 (default 3001; 0 picks a free port)\n"
            "  -j, --threads N      request threads, 1..64 (default 4)\n"
            "      --allow-host NAME  also answer requests whose Host (or Origin) names NAME, a\n"
            "                       host name or address this server is reached by (repeatable)\n");
    nx_serve_api_help(out, 23);
    fprintf(out,
            "  -h, --help           show this help\n"
            "\n"
            "Security: only requests whose Host header names this server (localhost, the --bind\n"
            "address, the address connected to, an --allow-host NAME; with the port, if given) are\n"
            "answered (else 421), and only same-origin ones (an Origin header other than\n"
            "http://<such a host>:<port> gets 403), so other web sites cannot read profiles\n"
            "through a browser (DNS rebinding, cross-site requests). docs/api.md \"Security\".\n"
            "\n"
            "Exit status: 0 stopped by SIGINT/SIGTERM, 1 cannot start, 2 usage error.\n");
}

/* Shared with cmd_view.c through cli.h. */
int nx_serve_parse_port(const char *s, unsigned *out)
{
    if (!*s || strlen(s) > 5)
        return -1;
    unsigned v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned)(*p - '0');
    }
    if (v > 65535)
        return -1;
    *out = v;
    return 0;
}

int nx_serve_check_bind(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1 ? 0 : -1;
}

int nx_serve_allow_host(const char *cmd, const char *name, const char **hosts, size_t *n)
{
    if (!nx_server_allow_host_valid(name))
        return nx_usage_error(cmd, "bad --allow-host '%s' (a host name, IPv4 address or [IPv6] address, no port)",
                              name);
    if (*n == NX_SERVE_MAX_ALLOW_HOSTS)
        return nx_usage_error(cmd, "too many --allow-host names (%d at most)", NX_SERVE_MAX_ALLOW_HOSTS);
    hosts[(*n)++] = name;
    return 0;
}

int nx_serve_api_option(const char *cmd, int c, const char *arg, nx_server_options *o)
{
    switch (c) {
    case NX_SERVE_OPT_API_PORT:
        if (nx_serve_parse_port(arg, &o->api_port) < 0)
            return nx_usage_error(cmd, "bad --api-port '%s' (0..65535)", arg);
        o->api_port_given = true;
        return 0;
    case NX_SERVE_OPT_DISABLE_UI:
        o->disable_ui = true;
        return 0;
    case NX_SERVE_OPT_QUERY_TIMEOUT: {
        char *end;
        double v = strtod(arg, &end);
        if (!*arg || *end || !(v > 0 && v <= 86400))
            return nx_usage_error(cmd, "bad --query-timeout '%s' (seconds, above 0, at most 86400)", arg);
        o->query_timeout_s = v;
        return 0;
    }
    case NX_SERVE_OPT_MAX_ROWS: {
        int64_t v;
        if (nx_parse_rank(arg, &v) < 0 || v < 1 || v > 1000000000)
            return nx_usage_error(cmd, "bad --query-max-rows '%s' (1..1000000000)", arg);
        o->max_rows = (uint64_t)v;
        return 0;
    }
    default: return 1;
    }
}

/* One line of help: `opt` at column 6 and `text` at column col (two spaces after a
 * longer option); opt "" continues the text of the option above. */
static void help_line(FILE *out, int col, const char *opt, const char *text)
{
    int w = *opt ? 6 + (int)strlen(opt) : 0;
    fprintf(out, "%s%s%*s%s\n", *opt ? "      " : "", opt, w < col ? col - w : 2, "", text);
}

void nx_serve_api_help(FILE *out, int col)
{
    char text[96];
    help_line(out, col, "--api-port P", "also answer the API (/api/..., no web pages) on port P,");
    snprintf(text, sizeof text, "0..65535 (default %u, as the reference tool; 0 picks one;", NX_SERVER_DEFAULT_API_PORT);
    help_line(out, col, "", text);
    help_line(out, col, "", "the default taken is a warning, a P given an error)");
    help_line(out, col, "--disable-ui", "no web pages: only the API port is opened");
    snprintf(text, sizeof text, "a SQL query's time limit, seconds (default %g; then 408)",
             NX_SERVER_DEFAULT_QUERY_TIMEOUT_S);
    help_line(out, col, "--query-timeout S", text);
    snprintf(text, sizeof text, "the most rows a SQL query answers (default %u; the", NX_SERVER_DEFAULT_MAX_ROWS);
    help_line(out, col, "--query-max-rows N", text);
    help_line(out, col, "", "answer says when it cut)");
}

static int serve_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data-path", required_argument, NULL, 'p'}, {"bind", required_argument, NULL, 'b'},
        {"port", required_argument, NULL, 'P'},      {"threads", required_argument, NULL, 'j'},
        {"allow-host", required_argument, NULL, 'A'}, {"help", no_argument, NULL, 'h'},
        NX_SERVE_API_LONG_OPTIONS,                    {NULL, 0, NULL, 0},
    };
    const char *hosts[NX_SERVE_MAX_ALLOW_HOSTS];
    nx_server_options o = {.port = 3001, .api_port = NX_SERVER_DEFAULT_API_PORT, .allow_hosts = hosts};
    int c, rc;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:b:P:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!*optarg)
                return nx_usage_error(CMD, "--data-path is empty");
            o.data_path = optarg;
            break;
        case 'b':
            if (nx_serve_check_bind(optarg) < 0)
                return nx_usage_error(CMD, "bad --bind '%s' (an IPv4 or IPv6 address)", optarg);
            o.bind = optarg;
            break;
        case 'P':
            if (nx_serve_parse_port(optarg, &o.port) < 0)
                return nx_usage_error(CMD, "bad --port '%s' (0..65535)", optarg);
            break;
        case 'j': {
            unsigned v;
            if (nx_serve_parse_port(optarg, &v) < 0 || v < 1 || v > 64)
                return nx_usage_error(CMD, "bad --threads '%s' (1..64)", optarg);
            o.threads = v;
            break;
        }
        case 'A':
            if ((rc = nx_serve_allow_host(CMD, optarg, hosts, &o.n_allow_hosts)) != 0)
                return rc;
            break;
        case 'h': serve_help(stdout); return NX_EXIT_OK;
        default:
            if ((rc = nx_serve_api_option(CMD, c, optarg, &o)) == 1)
                return nx_getopt_error(CMD, c, argv);
            if (rc != 0)
                return rc;
        }
    }
    if (optind < argc)
        return nx_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    char *owned = NULL;
    if (!o.data_path) {
        nx_error err;
        if (nx_data_path_default(&owned, &err) < 0) {
            fprintf(stderr, "nxprof " CMD ": %s\n", err.msg);
            return NX_EXIT_ERROR;
        }
        o.data_path = owned;
    }
    rc = nx_server_run(&o, stdout) == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
    free(owned);
    return rc;
}

const nx_command nx_cmd_serve = {
    .name = "serve",
    .summary = "serve the Device Trace Viewer and JSON API (http://127.0.0.1:3001)",
    .run = serve_run,
    .help = serve_help,
};
