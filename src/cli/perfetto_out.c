/*
 * perfetto_out.c — Perfetto trace files for `export-perfetto` and `view
 * --output-format perfetto` (cli.h): a profile into one file written aside and
 * renamed into place, and the reference tool's file names for a profile set.
 * The trace itself is query/export.h nx_export_profile with the Perfetto row
 * writer (query/perfetto_rows.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "query/export.h"
#include "query/profile_info.h"
#include "profile/timeline_rules.h"
#include "query/engine/row_writer.h"

/* Every timeline table, in the viewer's order. */
static size_t all_tables(const char **out)
{
    size_t n = 0;
    for (const nx_timeline_view *v; (v = nx_timeline_view_at(n)); n++)
        out[n] = v->table;
    return n;
}

/* Whether dir holds a profile: Metadata or a timeline table (a mistyped path
 * gets an error, not an empty trace). */
static bool is_profile(const char *dir)
{
    nx_profile_info info;
    bool yes = false;
    if (nx_profile_info_read(dir, &info) == 0 && info.readable)
        for (size_t i = 0; i < info.n_tables && !yes; i++)
            yes = strcmp(info.tables[i], "Metadata") == 0 || nx_timeline_find(info.tables[i]) != NULL;
    nx_profile_info_free(&info);
    return yes;
}

int nx_perfetto_write(const char *cmd, const char *profile_dir, const char *path, int64_t start, int64_t end,
                      const char *const *tables, size_t n)
{
    if (!is_profile(profile_dir)) {
        fprintf(stderr, "nxprof %s: %s is not a profile directory (no Metadata.parquet, no timeline table)\n", cmd,
                profile_dir);
        return NX_EXIT_ERROR;
    }
    const char *every[NX_TIMELINE_TABLES];
    if (!tables) {
        n = all_tables(every);
        tables = every;
    }
    size_t len = strlen(path) + 16;
    char *tmp = malloc(len);
    if (!tmp) {
        fprintf(stderr, "nxprof %s: out of memory\n", cmd);
        return NX_EXIT_ERROR;
    }
    snprintf(tmp, len, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        fprintf(stderr, "nxprof %s: cannot create a temporary file beside %s: %s\n", cmd, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return NX_EXIT_ERROR;
    }
    nx_error err = {0};
    char note[NX_ROW_NOTE];
    int rc = nx_export_profile(profile_dir, nx_row_format_find("perfetto"), f, start, end, tables, n, note, &err);
    if (rc != 0)
        fprintf(stderr, "nxprof %s: %s: %s\n", cmd, profile_dir, err.msg);
    else if (note[0])
        fprintf(stderr, "nxprof %s: note: %s: %s\n", cmd, profile_dir, note);
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, "nxprof %s: error writing %s: %s\n", cmd, path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        fprintf(stderr, "nxprof %s: cannot rename %s to %s: %s\n", cmd, tmp, path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    return rc == 0 ? NX_EXIT_OK : NX_EXIT_ERROR;
}

/* The <id> of a device profile's name (cli.h). */
static const char *model_id(const char *name)
{
    for (const char *p = strstr(name, "nd"); p; p = strstr(p + 1, "nd")) {
        const char *q = p + 2;
        if (*q < '0' || *q > '9')
            continue;
        while (*q >= '0' && *q <= '9')
            q++;
        if (strncmp(q, "-nc", 3) == 0 && q[3] >= '0' && q[3] <= '9' && (p == name || p[-1] == '-'))
            return p;
    }
    return name;
}

static int write_device(const char *cmd, const char *dir, const char *name, const char *out_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/device_profile_model_%s.pftrace", out_dir, model_id(name));
    return nx_perfetto_write(cmd, dir, path, INT64_MIN, INT64_MAX, NULL, 0);
}

int nx_perfetto_write_set(const char *cmd, const char *profile_dir, const char *out_dir)
{
    nx_profile_info info;
    if (nx_profile_info_read(profile_dir, &info) != 0 || !info.readable) {
        fprintf(stderr, "nxprof %s: %s: cannot read the profile%s%s\n", cmd, profile_dir, info.error ? ": " : "",
                info.error ? info.error : "");
        nx_profile_info_free(&info);
        return NX_EXIT_ERROR;
    }
    int rc;
    if (info.device) {
        const char *base = strrchr(profile_dir, '/');
        char name[1024];
        snprintf(name, sizeof name, "%s", base && base[1] ? base + 1 : profile_dir);
        size_t len = strlen(name);
        if (len > 7 && strcmp(name + len - 7, "@latest") == 0)
            name[len - 7] = '\0';
        rc = write_device(cmd, profile_dir, name, out_dir);
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/system_profile.pftrace", out_dir);
        rc = nx_perfetto_write(cmd, profile_dir, path, INT64_MIN, INT64_MAX, NULL, 0);
        for (size_t i = 0; i < info.n_devices && rc == NX_EXIT_OK; i++) {
            if (!info.devices[i].dir) {
                fprintf(stderr, "nxprof %s: device profile '%s' is not where it may be read\n", cmd,
                        info.devices[i].name);
                rc = NX_EXIT_ERROR;
            } else {
                rc = write_device(cmd, info.devices[i].dir, info.devices[i].name, out_dir);
            }
        }
    }
    nx_profile_info_free(&info);
    return rc;
}
