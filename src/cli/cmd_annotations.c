/*
 * cmd_annotations.c — `nxprof annotations PROFILE_DIR [--export FILE | --import FILE
 * [--replace]]`: a profile's saved markers and named regions (profile/annotations.h),
 * the ones the viewer saves.
 *
 * Rules:
 *   - No option: the markers and regions as text, one line each (a region's note on
 *     the lines after it, indented), times as the tables' absolute ns.
 *   - --export FILE: the document (docs/processing.md "Annotations") into FILE, "-"
 *     for stdout; a profile without annotations exports an empty document.
 *   - --import FILE: FILE's document ("-": stdin), validated, added after what the
 *     profile holds (--replace: instead of it), saved atomically; one line says what
 *     the profile holds now. Nothing is written when FILE is invalid.
 *   - PROFILE_DIR must be a profile (its marker or Metadata.parquet), so a mistyped
 *     path never gets an annotations file.
 * Exit: 0; 1 no profile, an invalid or unreadable file; 2 usage.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "profile/annotations.h"
#include "profile/path_text.h"
#include "profile/profile_manifest.h"

static void annotations_help(FILE *out)
{
    fprintf(out,
            "Usage: nxprof annotations PROFILE_DIR [--export FILE | --import FILE [--replace]]\n"
            "\n"
            "List, export or import a profile's saved annotations: the time markers and named\n"
            "regions the viewer saves with the profile (docs/viewer.md). The file format is\n"
            "JSON (docs/processing.md \"Annotations\"); re-processing the capture keeps them.\n"
            "\n"
            "  -e, --export FILE  write the annotations as JSON to FILE (- for stdout)\n"
            "  -i, --import FILE  add the annotations of the JSON file FILE (- for stdin)\n"
            "  -r, --replace      with --import: replace the profile's annotations instead\n"
            "  -h, --help         show this help\n"
            "\n"
            "Exit status: 0 success, 1 missing profile or invalid file, 2 usage error.\n");
}

/* True when dir is a profile: it holds nxprof's marker or a Metadata table. */
static bool is_profile(const char *dir)
{
    struct stat st;
    char *marker = nx_path_printf("%s/%s", dir, NX_PROFILE_MARKER);
    char *meta = nx_path_printf("%s/Metadata.parquet", dir);
    bool yes = marker && meta && (stat(marker, &st) == 0 || stat(meta, &st) == 0);
    free(marker);
    free(meta);
    return yes;
}

/* A string as one line of text: control characters as spaces. */
static void put_line_text(const char *s)
{
    for (; *s; s++)
        putchar((unsigned char)*s < 0x20 ? ' ' : *s);
}

static void list_text(const char *dir, const nx_annotations *a)
{
    printf("%s: %zu marker%s, %zu region%s\n", dir, a->n_markers, a->n_markers == 1 ? "" : "s", a->n_regions,
           a->n_regions == 1 ? "" : "s");
    if (a->n_markers)
        printf("\nmarkers\n  %-20s  %-7s  %s\n", "time_ns", "colour", "label [track]");
    for (size_t i = 0; i < a->n_markers; i++) {
        const nx_marker *m = &a->markers[i];
        printf("  %-20" PRId64 "  %-7s  ", m->time_ns, m->colour ? m->colour : "");
        put_line_text(m->label);
        if (m->track) {
            printf(" [");
            put_line_text(m->track);
            putchar(']');
        }
        putchar('\n');
    }
    if (a->n_regions)
        printf("\nregions\n  %-20s  %-20s  %-14s  %-7s  %s\n", "start_ns", "end_ns", "duration_ns", "colour", "name");
    for (size_t i = 0; i < a->n_regions; i++) {
        const nx_region *r = &a->regions[i];
        printf("  %-20" PRId64 "  %-20" PRId64 "  %-14" PRId64 "  %-7s  ", r->start_ns, r->end_ns,
               r->end_ns - r->start_ns, r->colour ? r->colour : "");
        put_line_text(r->name);
        putchar('\n');
        for (const char *line = r->note; line && *line;) {
            size_t n = strcspn(line, "\n");
            printf("      %.*s\n", (int)n, line);
            line += n + (line[n] == '\n');
        }
    }
}

static int export_to(const char *file, const nx_annotations *a)
{
    nx_strbuf b = NX_STRBUF_INIT;
    nx_annotations_json(a, &b);
    if (nx_strbuf_failed(&b)) {
        fprintf(stderr, "nxprof annotations: out of memory\n");
        return NX_EXIT_ERROR;
    }
    bool to_stdout = strcmp(file, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(file, "w");
    bool ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    if (f && !to_stdout && fclose(f) != 0)
        ok = false;
    nx_strbuf_free(&b);
    if (!ok) {
        fprintf(stderr, "nxprof annotations: cannot write %s\n", file);
        return NX_EXIT_ERROR;
    }
    return NX_EXIT_OK;
}

/* FILE's text ("-": stdin), malloc'd, at most NX_ANNOTATIONS_MAX_BYTES + 1 bytes (so
 * the parser reports a larger one); NULL with a message on stderr. */
static char *read_input(const char *file, size_t *len)
{
    bool from_stdin = strcmp(file, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(file, "r");
    char *buf = f ? malloc(NX_ANNOTATIONS_MAX_BYTES + 2) : NULL;
    if (!f || !buf) {
        fprintf(stderr, "nxprof annotations: cannot read %s\n", file);
        if (f && !from_stdin)
            fclose(f);
        free(buf);
        return NULL;
    }
    *len = fread(buf, 1, NX_ANNOTATIONS_MAX_BYTES + 1, f);
    bool failed = ferror(f);
    if (!from_stdin)
        fclose(f);
    if (failed) {
        fprintf(stderr, "nxprof annotations: cannot read %s\n", file);
        free(buf);
        return NULL;
    }
    buf[*len] = '\0';
    return buf;
}

static int import_from(const char *dir, const char *file, bool replace, nx_annotations *have)
{
    size_t len = 0;
    char *text = read_input(file, &len);
    if (!text)
        return NX_EXIT_ERROR;
    nx_annotations in;
    nx_error err = {0};
    int rc = nx_annotations_parse(text, len, strcmp(file, "-") == 0 ? "stdin" : file, &in, &err);
    free(text);
    if (rc == 0 && replace) {
        nx_annotations_free(have);
        *have = in;
        memset(&in, 0, sizeof in);
    } else if (rc == 0) {
        rc = nx_annotations_append(have, &in, &err);
    }
    if (rc == 0)
        rc = nx_annotations_save(dir, have, &err);
    if (rc == 0)
        printf("%s: %zu markers, %zu regions\n", dir, have->n_markers, have->n_regions);
    else
        fprintf(stderr, "nxprof annotations: %s\n", err.msg);
    nx_annotations_free(&in);
    return rc == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
}

static int annotations_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"export", required_argument, NULL, 'e'},
        {"import", required_argument, NULL, 'i'},
        {"replace", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *export_file = NULL, *import_file = NULL;
    bool replace = false;
    int c;
    while ((c = getopt_long(argc, argv, ":e:i:rh", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            export_file = optarg;
            break;
        case 'i':
            import_file = optarg;
            break;
        case 'r':
            replace = true;
            break;
        case 'h':
            annotations_help(stdout);
            return NX_EXIT_OK;
        default:
            return nx_getopt_error("annotations", c, argv);
        }
    }
    if (optind >= argc)
        return nx_usage_error("annotations", "PROFILE_DIR is required");
    if (optind + 1 < argc)
        return nx_usage_error("annotations", "unexpected argument '%s'", argv[optind + 1]);
    if (export_file && import_file)
        return nx_usage_error("annotations", "--export and --import do not go together");
    if (replace && !import_file)
        return nx_usage_error("annotations", "--replace goes with --import");
    const char *dir = argv[optind];
    if (!is_profile(dir)) {
        fprintf(stderr, "nxprof annotations: %s: not a profile directory\n", dir);
        return NX_EXIT_ERROR;
    }
    nx_annotations a;
    nx_error err = {0};
    if (nx_annotations_load(dir, &a, &err) < 0 && !(import_file && replace)) {
        fprintf(stderr, "nxprof annotations: %s\n", err.msg);
        return NX_EXIT_ERROR;
    }
    int status = NX_EXIT_OK;
    if (export_file)
        status = export_to(export_file, &a);
    else if (import_file)
        status = import_from(dir, import_file, replace, &a);
    else
        list_text(dir, &a);
    nx_annotations_free(&a);
    return status;
}

const nx_command nx_cmd_annotations = {
    .name = "annotations",
    .summary = "list, export or import a profile's saved markers and regions",
    .run = annotations_run,
    .help = annotations_help,
};
