/* cmd_synth.c — `nxprof synth`: write a simulated capture (see src/synth/synth.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "synth/synth.h"

static void synth_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof synth --out DIR [--preset tiny|llama-layer] [--events N] [--cores N]\n"
            "                    [--seed S] [--no-system] [--force]\n"
            "\n"
            "Simulate NeuronCores running a workload and write its capture to\n"
            "DIR/<instance-id>_pid_<pid>/<timestamp>/ (format: docs/capture-format.md).\n"
            "The same options always give byte-identical files.\n"
            "\n"
            "  -o, --out DIR        where to write the capture: a new or empty directory\n"
            "  -p, --preset NAME    tiny: a small decoder layer, a few thousand events, every\n"
            "                       record kind; llama-layer (default): a Llama-3-8B-shaped\n"
            "                       decoder layer, tensor-parallel over the cores\n"
            "  -n, --events N       device trace records to write, at least (tiny: %" PRIu64
            ", llama-layer: %" PRIu64 ");\n"
            "                       whole executions are written until N is reached\n"
            "  -c, --cores N        NeuronCores, 1..%d (default %u); more than one adds AllReduces\n"
            "  -s, --seed S         random seed (default 1)\n"
            "      --no-system      device traces and program only: no runtime events,\n"
            "                       CPU/memory samples or trace.json\n"
            "      --force          write into a non-empty DIR: this capture's session is added\n"
            "                       beside the sessions there (the same seed replaces its own)\n"
            "  -h, --help           show this help\n",
            nx_synth_default_events(NX_SYNTH_TINY), nx_synth_default_events(NX_SYNTH_LLAMA_LAYER),
            NX_SYNTH_MAX_CORES, nx_synth_default_cores(NX_SYNTH_LLAMA_LAYER));
}

/* A positive decimal u64 (suffixes k, M, G for 1e3, 1e6, 1e9). */
static bool parse_count(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = *end == 'k' ? 1000ull : *end == 'M' ? 1000000ull : *end == 'G' ? 1000000000ull : 1;
    if (mul != 1)
        end++;
    if (errno || end == s || *end || v > UINT64_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

static void print_stats(const nx_synth_stats *st, const nx_synth_options *o)
{
    printf("synth: wrote %s\n", st->session_dir);
    printf("  preset %s, seed %" PRIu64 ", %u cores x %" PRIu32 " executions, program %016" PRIx64 "\n",
           nx_synth_preset_name(o->preset), o->seed, st->cores, st->executions, st->program_hash);
    printf("  %" PRIu64 " device records (%.1f MB):", st->total_records, (double)st->device_bytes / 1e6);
    for (int k = 1; k <= NX_REC_KIND_MAX; k++)
        printf(" %s %" PRIu64 "%s", nx_rec_kind_name((unsigned)k), st->records[k], k < NX_REC_KIND_MAX ? "," : "\n");
    if (o->system)
        printf("  system: %" PRIu64 " runtime events, %" PRIu64 " CPU and %" PRIu64 " memory samples, %" PRIu64
               " device-memory snapshots, %" PRIu64 " trace.json events\n", st->runtime_events, st->cpu_samples,
               st->mem_samples, st->device_mem_samples, st->chrome_events);
    printf("  %.3f s, %.1fM device records/s\n", st->seconds,
           st->seconds > 0 ? (double)st->total_records / st->seconds / 1e6 : 0.0);
}

static int synth_run(int argc, char **argv)
{
    enum { OPT_NO_SYSTEM = 1000, OPT_FORCE };
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},     {"preset", required_argument, NULL, 'p'},
        {"events", required_argument, NULL, 'n'},  {"cores", required_argument, NULL, 'c'},
        {"seed", required_argument, NULL, 's'},    {"no-system", no_argument, NULL, OPT_NO_SYSTEM},
        {"force", no_argument, NULL, OPT_FORCE},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    nx_synth_options o = {.preset = NX_SYNTH_LLAMA_LAYER, .seed = 1, .system = true};
    uint64_t v;
    int c;
    while ((c = getopt_long(argc, argv, ":o:p:n:c:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o.out_dir = optarg;
            break;
        case 'p':
            if (!nx_synth_preset_parse(optarg, &o.preset))
                return nx_usage_error("synth", "unknown preset '%s' (expected tiny or llama-layer)", optarg);
            break;
        case 'n':
            if (!parse_count(optarg, &o.events) || o.events == 0)
                return nx_usage_error("synth", "--events needs a positive integer, got '%s'", optarg);
            break;
        case 'c':
            if (!parse_count(optarg, &v) || v == 0 || v > NX_SYNTH_MAX_CORES)
                return nx_usage_error("synth", "--cores needs an integer from 1 to %d, got '%s'", NX_SYNTH_MAX_CORES,
                                      optarg);
            o.cores = (unsigned)v;
            break;
        case 's':
            if (!parse_count(optarg, &o.seed))
                return nx_usage_error("synth", "--seed needs a non-negative integer, got '%s'", optarg);
            break;
        case OPT_NO_SYSTEM:
            o.system = false;
            break;
        case OPT_FORCE:
            o.force = true;
            break;
        case 'h':
            synth_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("synth", c, argv);
        }
    }
    if (optind < argc)
        return nx_usage_error("synth", "unexpected argument '%s'", argv[optind]);
    if (!o.out_dir || !*o.out_dir)
        return nx_usage_error("synth", "--out DIR is required");
    nx_synth_stats st;
    nx_error err = {0};
    if (nx_synth_run(&o, &st, &err) != 0) {
        fprintf(stderr, "nxprof synth: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    print_stats(&st, &o);
    nx_synth_stats_free(&st);
    return fflush(stdout) == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
}

const nx_command nx_cmd_synth = {
    .name = "synth",
    .summary = "write a simulated capture (program, device traces, system capture)",
    .run = synth_run,
    .help = synth_help,
};
