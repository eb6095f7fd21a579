/*
 * profile_manifest.c — the manifest in a profile's marker and the ownership rule
 * built on it (profile_manifest.h): what nxprof may replace or delete.
 */
#include "profile/profile_manifest.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile_layout.h"
#include "profile/annotations.h"
#include "profile/path_text.h"

typedef struct manifest {
    char *text;      /* the marker's bytes, split in place into lines */
    char **lines;    /* "f path", "d path", "p path" */
    size_t n;
} manifest;

static void manifest_free(manifest *m)
{
    free(m->text);
    free(m->lines);
    m->text = NULL;
    m->lines = NULL;
    m->n = 0;
}

/* The marker of dir, whole, NUL-terminated, malloc'd; NULL with errno on failure. */
static char *read_marker(const char *dir)
{
    char *path = nx_path_printf("%s/%s", dir, NX_PROFILE_MARKER);
    if (!path) {
        errno = ENOMEM;
        return NULL;
    }
    struct stat st;
    FILE *f = lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "r") : NULL;
    free(path);
    if (!f)
        return NULL;
    char *text = malloc((size_t)st.st_size + 1);
    size_t got = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!text) {
        errno = ENOMEM;
        return NULL;
    }
    text[got] = '\0';
    return text;
}

/* Loads dir's manifest into *m. 1: a manifest; 0: no marker, or a marker of an
 * older nxprof (the legacy rule applies); -1: out of memory. */
static int manifest_load(const char *dir, manifest *m)
{
    memset(m, 0, sizeof *m);
    char *text = read_marker(dir);
    if (!text)
        return errno == ENOMEM ? -1 : 0;
    size_t hlen = strlen(NX_MANIFEST_HEADER);
    if (strncmp(text, NX_MANIFEST_HEADER, hlen) != 0 || text[hlen] != '\n') {
        free(text);
        return 0;
    }
    m->text = text;
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == '\n';
    if (!(m->lines = malloc(cap * sizeof *m->lines))) {
        manifest_free(m);
        return -1;
    }
    for (char *line = text + hlen + 1, *nl; *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break;   /* a line cut short is not trusted */
        *nl = '\0';
        if (strlen(line) > 2 && strchr("fdp", line[0]) && line[1] == ' ')
            m->lines[m->n++] = line;
    }
    return 1;
}

/* The kind letter the manifest lists `rel` with, or 0 when it does not list it. */
static char manifest_kind(const manifest *m, const char *rel)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->lines[i] + 2, rel) == 0)
            return m->lines[i][0];
    return 0;
}

/* True when `name` is a timeline index's (".<Table>.nxtl"). */
static bool index_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] == '.' && n > 6 && strcmp(name + n - 5, ".nxtl") == 0;
}

/* True when `path`, a regular file named `name`, is one an older nxprof wrote into
 * a profile: the marker, a timeline index (.T.nxtl) or a Parquet file whose footer
 * names nxprof. */
static bool legacy_entry(const char *path, const char *name)
{
    size_t n = strlen(name);
    if (strcmp(name, NX_PROFILE_MARKER) == 0 || nx_annotations_entry(name))
        return true;
    if (index_name(name))
        return true;
    if (n <= 8 || strcmp(name + n - 8, ".parquet") != 0)
        return false;
    nx_error ignored;
    nxpq_reader *r = nxpq_reader_open(path, &ignored);
    if (!r)
        return false;
    const char *by = nxpq_reader_created_by(r);
    bool ours = by && strncmp(by, "nxprof", 6) == 0;
    nxpq_reader_close(r);
    return ours;
}

typedef struct walk {
    const char *top;   /* the profile being replaced */
    const char *shown; /* its name in messages */
    bool remove;       /* delete what is accepted (only after a check passed) */
    nx_error *err;
} walk;

static int owned_dir(const walk *w, const char *dir);

/* The message for an entry that nxprof did not write. */
static int foreign(const walk *w, const char *path, bool marked)
{
    size_t n = strlen(w->top);
    if (strncmp(path, w->top, n) == 0 && path[n] == '/')
        path += n + 1;   /* named as the user sees it inside the profile */
    if (marked)
        return nx_error_set(w->err,
                              "refusing to replace %s: it holds %s, which nxprof did not write; move it out of "
                              "the profile, choose another output directory, or remove the profile yourself",
                              w->shown, path);
    return nx_error_set(w->err,
                          "refusing to replace %s: it is not a profile nxprof wrote (it holds %s); "
                          "choose another output directory, or remove it yourself",
                          w->shown, path);
}

/* Deletes an accepted entry (remove mode): a file, or a folder emptied before. */
static int drop(const walk *w, const char *path, bool is_dir)
{
    if (!w->remove || (is_dir ? rmdir(path) : unlink(path)) == 0)
        return 0;
    return nx_error_set(w->err, "cannot remove %s: %s", path, strerror(errno));
}

/* One entry of a manifest profile rooted at root: accepted when listed with its kind. */
static int manifest_entry(const walk *w, const manifest *m, const char *root, const char *rel, const char *path,
                          const struct stat *st);

/* Walks the folder root/rel of a profile with a manifest. */
static int manifest_walk(const walk *w, const manifest *m, const char *root, const char *rel)
{
    char *dir = rel ? nx_path_printf("%s/%s", root, rel) : strdup(root);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        int rc = dir ? nx_error_set(w->err, "cannot read %s: %s", dir, strerror(errno))
                     : nx_error_set(w->err, "out of memory");
        free(dir);
        return rc;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!rel && strcmp(e->d_name, NX_PROFILE_MARKER) == 0)
            continue;   /* removed last, by owned_dir */
        char *crel = rel ? nx_path_printf("%s/%s", rel, e->d_name) : strdup(e->d_name);
        char *path = nx_path_printf("%s/%s", dir, e->d_name);
        struct stat st;
        if (!crel || !path)
            rc = nx_error_set(w->err, "out of memory");
        else if (lstat(path, &st) != 0)
            rc = nx_error_set(w->err, "cannot inspect %s: %s", path, strerror(errno));
        else
            rc = manifest_entry(w, m, root, crel, path, &st);
        free(crel);
        free(path);
    }
    closedir(d);
    free(dir);
    return rc;
}

static int manifest_entry(const walk *w, const manifest *m, const char *root, const char *rel, const char *path,
                          const struct stat *st)
{
    char kind = manifest_kind(m, rel);
    if (kind == 'f' && S_ISREG(st->st_mode))
        return drop(w, path, false);
    if (kind == 'd' && S_ISDIR(st->st_mode))
        return manifest_walk(w, m, root, rel) < 0 ? -1 : drop(w, path, true);
    if (kind == 'p' && S_ISDIR(st->st_mode))
        return owned_dir(w, path);
    if (!kind && !strchr(rel, '/') && (index_name(rel) || nx_annotations_entry(rel)) && S_ISREG(st->st_mode))
        return drop(w, path, false);   /* added later by `nxprof index`, or annotations saved */
    return foreign(w, path, true);
}

/* The legacy devices/ folder: every entry a sub-profile. */
static int legacy_devices(const walk *w, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return nx_error_set(w->err, "cannot read %s: %s", dir, strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *path = nx_path_printf("%s/%s", dir, e->d_name);
        struct stat st;
        if (!path)
            rc = nx_error_set(w->err, "out of memory");
        else if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = foreign(w, path, false);
        else
            rc = owned_dir(w, path);
        free(path);
    }
    closedir(d);
    return rc < 0 ? -1 : drop(w, dir, true);
}

/* Walks a profile without a manifest by the legacy rule (profile_manifest.h). */
static int legacy_walk(const walk *w, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return nx_error_set(w->err, "cannot read %s: %s", dir, strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, NX_PROFILE_MARKER) == 0)
            continue;
        char *path = nx_path_printf("%s/%s", dir, name);
        struct stat st;
        if (!path)
            rc = nx_error_set(w->err, "out of memory");
        else if (lstat(path, &st) != 0)
            rc = nx_error_set(w->err, "cannot inspect %s: %s", path, strerror(errno));
        else if (S_ISDIR(st.st_mode) && strcmp(name, NX_LAYOUT_DEVICES_DIR) == 0)
            rc = legacy_devices(w, path);
        else if (S_ISREG(st.st_mode) && legacy_entry(path, name))
            rc = drop(w, path, false);
        else
            rc = foreign(w, path, false);
        free(path);
    }
    closedir(d);
    return rc;
}

/* Checks (or, in remove mode, deletes) the profile at dir by its manifest or the
 * legacy rule; in remove mode its marker goes last, then dir itself. */
static int owned_dir(const walk *w, const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT ? 0 : nx_error_set(w->err, "cannot inspect %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return nx_error_set(w->err, "%s exists and is not a directory; nxprof replaces only profiles it wrote",
                              dir);
    manifest m;
    int kind = manifest_load(dir, &m);
    if (kind < 0)
        return nx_error_set(w->err, "out of memory");
    int rc = kind ? manifest_walk(w, &m, dir, NULL) : legacy_walk(w, dir);
    manifest_free(&m);
    if (rc < 0 || !w->remove)
        return rc;
    char *marker = nx_path_printf("%s/%s", dir, NX_PROFILE_MARKER);
    if (!marker)
        return nx_error_set(w->err, "out of memory");
    if (unlink(marker) < 0 && errno != ENOENT)
        rc = nx_error_set(w->err, "cannot remove %s: %s", marker, strerror(errno));
    free(marker);
    return rc < 0 ? -1 : drop(w, dir, true);
}

int nx_profile_owned_as(const char *dir, const char *shown, nx_error *err)
{
    walk w = {.top = dir, .shown = shown, .remove = false, .err = err};
    return owned_dir(&w, dir);
}

int nx_profile_owned(const char *dir, nx_error *err)
{
    return nx_profile_owned_as(dir, dir, err);
}

int nx_profile_remove(const char *dir, nx_error *err)
{
    if (nx_profile_owned(dir, err) < 0)
        return -1;
    walk w = {.top = dir, .shown = dir, .remove = true, .err = err};
    return owned_dir(&w, dir);
}

int nx_profile_building(const char *dir)
{
    char *text = read_marker(dir);
    if (!text)
        return -1;
    size_t n = strlen(NX_MANIFEST_BUILDING);
    int building = strncmp(text, NX_MANIFEST_BUILDING, n) == 0 && text[n] == '\n';
    free(text);
    return building;
}

/* ------------------------------------------------------------- writing -- */

/* Appends the entry `name` of dir/rel (relative to dir) to out: a file, a
 * sub-profile (its manifest written first) or a folder (and what it holds). */
static int list_entries(const char *dir, const char *rel, FILE *out, nx_error *err);

static int list_entry(const char *dir, const char *rel, const char *name, FILE *out, nx_error *err)
{
    char *crel = rel ? nx_path_printf("%s/%s", rel, name) : strdup(name);
    char *path = crel ? nx_path_printf("%s/%s", dir, crel) : NULL;
    char *marker = path ? nx_path_printf("%s/%s", path, NX_PROFILE_MARKER) : NULL;
    struct stat st;
    int rc;
    if (!crel || !path || !marker)
        rc = nx_error_set(err, "out of memory");
    else if (lstat(path, &st) != 0)
        rc = nx_error_set(err, "cannot inspect %s: %s", path, strerror(errno));
    else if (S_ISREG(st.st_mode))
        rc = fprintf(out, "f %s\n", crel) < 0 ? -1 : 0;
    else if (S_ISDIR(st.st_mode) && lstat(marker, &st) == 0)
        rc = nx_manifest_write(path, err) < 0 ? -1 : fprintf(out, "p %s\n", crel) < 0 ? -1 : 0;
    else if (S_ISDIR(st.st_mode))
        rc = fprintf(out, "d %s\n", crel) < 0 ? -1 : list_entries(dir, crel, out, err);
    else
        rc = nx_error_set(err, "%s is not a file or a directory; a profile holds only those", path);
    free(crel);
    free(path);
    free(marker);
    return rc;
}

/* Appends the entries of dir/rel in name order (so two runs that write the same
 * files write the same manifest). */
static int list_entries(const char *dir, const char *rel, FILE *out, nx_error *err)
{
    char *here = rel ? nx_path_printf("%s/%s", dir, rel) : strdup(dir);
    struct dirent **names = NULL;
    int n = here ? scandir(here, &names, NULL, alphasort) : -1;
    int rc = 0;
    if (n < 0)
        rc = here ? nx_error_set(err, "cannot read %s: %s", here, strerror(errno))
                  : nx_error_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        bool skip = strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
                    (!rel && strncmp(name, NX_PROFILE_MARKER, strlen(NX_PROFILE_MARKER)) == 0);
        if (rc == 0 && !skip)   /* the marker and the manifest being written are not listed */
            rc = list_entry(dir, rel, name, out, err);
        free(names[i]);
    }
    free(names);
    free(here);
    return rc;
}

int nx_manifest_write(const char *dir, nx_error *err)
{
    char *tmp = nx_path_printf("%s/%s.new", dir, NX_PROFILE_MARKER);
    char *marker = nx_path_printf("%s/%s", dir, NX_PROFILE_MARKER);
    FILE *f = tmp && marker ? fopen(tmp, "w") : NULL;
    int rc = 0;
    if (!tmp || !marker)
        rc = nx_error_set(err, "out of memory");
    else if (!f)
        rc = nx_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
    else {
        err->msg[0] = '\0';
        if (fprintf(f, "%s\n", NX_MANIFEST_HEADER) < 0 || list_entries(dir, NULL, f, err) < 0)
            rc = err->msg[0] ? -1 : nx_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
        if (fclose(f) != 0 && rc == 0)
            rc = nx_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
        if (rc == 0 && rename(tmp, marker) != 0)
            rc = nx_error_set(err, "cannot rename %s to %s: %s", tmp, marker, strerror(errno));
        if (rc < 0)
            unlink(tmp);
    }
    free(tmp);
    free(marker);
    return rc;
}
