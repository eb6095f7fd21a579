/*
 * profile_output.c — output directory resolution and the
 * build-in-a-sibling / rename-into-place publish described in profile_output.h.
 */
#define _GNU_SOURCE   /* renameat2 */
#include "profile/profile_output.h"
#include "profile/annotations.h"
#include "profile/path_text.h"
#include "profile/profile_manifest.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p: creates every missing component of `path`. */
int nx_make_dirs(char *path, nx_error *err)
{
    for (char *p = path + 1; ; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        int rc = mkdir(path, 0777);
        int e = errno;
        struct stat st;
        if (rc < 0 && !(e == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
            nx_error_set(err, "cannot create directory %s: %s", path, strerror(e == EEXIST ? ENOTDIR : e));
            *p = saved;
            return -1;
        }
        *p = saved;
        if (!saved)
            return 0;
    }
}

/* Splits a directory path into a heap copy of its parent and a pointer to its last
 * component inside `path` (trailing slashes removed in place by the caller). */
static char *parent_of(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        *base = path;
        return strdup(".");
    }
    *base = slash + 1;
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* A fresh empty sibling ".<base>.<tag>-<pid>-XXXXXX" of final_dir: unique even for
 * concurrent runs with the same display name, and hidden from the profile listing. */
static char *make_sibling(const char *final_dir, const char *tag, nx_error *err)
{
    const char *base;
    char *parent = parent_of(final_dir, &base);
    if (!parent) {
        nx_error_set(err, "out of memory");
        return NULL;
    }
    char *dir = nx_path_printf("%s/.%s.%s-%ld-XXXXXX", parent, base, tag, (long)getpid());
    free(parent);
    if (!dir) {
        nx_error_set(err, "out of memory");
        return NULL;
    }
    return nx_make_temp_dir(dir, err);
}

char *nx_make_temp_dir(char *dir, nx_error *err)
{
    if (!mkdtemp(dir)) {
        nx_error_set(err, "cannot create a temporary directory %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    /* mkdtemp makes it 0700; the published profile should have the usual
     * permissions (0777 less the umask), like any directory the user makes. */
    mode_t mask = umask(0);
    umask(mask);
    if (chmod(dir, 0777 & ~mask) < 0) {
        nx_error_set(err, "cannot set permissions on %s: %s", dir, strerror(errno));
        rmdir(dir);
        free(dir);
        return NULL;
    }
    return dir;
}

/* Removes ".<base>.tmp-<pid>-*" and ".<base>.old-<pid>-*" siblings whose process
 * is gone: what a run killed with SIGKILL (or a power cut) left behind. A live
 * pid's directory is another run in progress and is left alone. */
void nx_profile_sweep_stale(const char *parent, const char *base)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    size_t blen = strlen(base);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] != '.' || strncmp(n + 1, base, blen) != 0 || n[1 + blen] != '.')
            continue;
        const char *tag = n + 2 + blen;
        if (strncmp(tag, "tmp-", 4) != 0 && strncmp(tag, "old-", 4) != 0)
            continue;
        char *end;
        long pid = strtol(tag + 4, &end, 10);
        if (end == tag + 4 || *end != '-' || strlen(end + 1) != 6 || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char *path = nx_path_printf("%s/%s", parent, n);
        nx_error ignored;
        /* A build of a dead run is nxprof's whole; a previous profile moved
         * aside is removed by its manifest, and kept if anything else is in it. */
        struct stat st;
        if (path && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            unlink(path);   /* a link a migration had not yet exchanged (profile_set.h) */
        else if (path && nx_profile_building(path) == 1)
            nx_remove_tree(path);
        else if (path)
            nx_profile_remove(path, &ignored);
        free(path);
    }
    closedir(d);
}

/* Writes the marker into the profile being built. */
static int write_marker(const char *tmp_dir, nx_error *err)
{
    char *path = nx_path_printf("%s/%s", tmp_dir, NX_PROFILE_MARKER);
    if (!path)
        return nx_error_set(err, "out of memory");
    FILE *f = fopen(path, "wx");
    int rc = 0;
    if (!f || fputs(NX_MANIFEST_BUILDING "\n", f) < 0)
        rc = nx_error_set(err, "cannot write %s: %s", path, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0)
        rc = nx_error_set(err, "cannot write %s: %s", path, strerror(errno));
    free(path);
    return rc;
}

int nx_profile_dir_create(const char *dir, nx_error *err)
{
    if (mkdir(dir, 0777) < 0)
        return nx_error_set(err, "cannot create directory %s: %s", dir, strerror(errno));
    return write_marker(dir, err);
}

int nx_profile_output_begin(nx_profile_output *o, const char *final_dir, nx_error *err)
{
    o->final_dir = strdup(final_dir);
    o->tmp_dir = NULL;
    if (!o->final_dir)
        return nx_error_set(err, "out of memory");
    /* "a/b/" and "a/b" name the same directory; the sibling logic needs the latter. */
    size_t len = strlen(o->final_dir);
    while (len > 1 && o->final_dir[len - 1] == '/')
        o->final_dir[--len] = '\0';
    const char *base;
    char *parent = parent_of(o->final_dir, &base);
    if (!parent) {
        nx_profile_output_abort(o);
        return nx_error_set(err, "out of memory");
    }
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        free(parent);
        nx_error_set(err, "output directory %s does not name a directory of its own", final_dir);
        nx_profile_output_abort(o);
        return -1;
    }
    if (nx_profile_owned(o->final_dir, err) < 0) {
        free(parent);
        nx_profile_output_abort(o);
        return -1;
    }
    int rc = nx_make_dirs(parent, err);
    if (rc == 0)
        nx_profile_sweep_stale(parent, base);
    free(parent);
    if (rc < 0 || !(o->tmp_dir = make_sibling(o->final_dir, "tmp", err)) || write_marker(o->tmp_dir, err) < 0) {
        nx_profile_output_abort(o);
        return -1;
    }
    return 0;
}

int nx_rename_exchange(const char *a, const char *b)
{
#ifdef RENAME_EXCHANGE
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
    (void)a;
    (void)b;
    errno = ENOSYS;
    return -1;
#endif
}

/* Moves o's temporary directory to its final name. *old gets where the previous
 * profile now is (NULL: there was none) and *exchanged whether that is o->tmp_dir
 * (swapped in one step) or a separate sibling. -1 with nothing changed on failure. */
static int swap_in(nx_profile_output *o, char **old, bool *exchanged, nx_error *err)
{
    struct stat st;
    *old = NULL;
    *exchanged = false;
    if (lstat(o->final_dir, &st) == 0) {
        /* After the exchange the temporary name holds the previous profile. */
        if (nx_rename_exchange(o->tmp_dir, o->final_dir) == 0) {
            *exchanged = true;
            return 0;
        }
        /* rename() onto an empty directory replaces it, so mkdtemp gives a unique,
         * race-free name to move the previous profile to. */
        if (!(*old = make_sibling(o->final_dir, "old", err)))
            return -1;
        if (rename(o->final_dir, *old) < 0) {
            nx_error_set(err, "cannot move the previous profile %s aside: %s", o->final_dir, strerror(errno));
            rmdir(*old);
            free(*old);
            *old = NULL;
            return -1;
        }
    } else if (errno != ENOENT) {
        return nx_error_set(err, "cannot inspect %s: %s", o->final_dir, strerror(errno));
    }
    if (rename(o->tmp_dir, o->final_dir) < 0) {
        nx_error_set(err, "cannot rename %s to %s: %s", o->tmp_dir, o->final_dir, strerror(errno));
        /* Put the previous profile back so a failed run changes nothing. */
        if (*old && rename(*old, o->final_dir) < 0) {
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n, "; the previous profile is left at %s", *old);
        }
        free(*old);
        *old = NULL;
        return -1;
    }
    return 0;
}

/* Undoes swap_in(): the new profile goes back to o->tmp_dir (for abort to remove)
 * and the previous one, if any, back to o->final_dir. Best effort (a failed run). */
static void swap_back(nx_profile_output *o, char *old, bool exchanged)
{
    if (exchanged) {
        nx_rename_exchange(o->tmp_dir, o->final_dir);
        return;
    }
    if (rename(o->final_dir, o->tmp_dir) == 0 && old)
        rename(old, o->final_dir);
}

int nx_profile_output_publish(nx_profile_output *o, size_t n, nx_error *err)
{
    char **old = calloc(n + 1, sizeof *old);
    bool *exchanged = calloc(n + 1, sizeof *exchanged);
    int rc = old && exchanged ? 0 : nx_error_set(err, "out of memory");
    /* The previous profile's annotations go with the new one (annotations.h); then the
     * manifest records exactly what this run wrote: all a later run may delete. */
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = nx_annotations_carry(o[i].final_dir, o[i].tmp_dir, err) < 0 ? -1 : nx_manifest_write(o[i].tmp_dir, err);
    nx_publish_step("built");
    /* Every target is checked before the first one changes: a run publishes all
     * of its profiles or none. */
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = nx_profile_owned(o[i].final_dir, err);
    size_t swapped = 0;   /* swap_in() that fails changes nothing */
    while (rc == 0 && swapped < n)
        if (swap_in(&o[swapped], &old[swapped], &exchanged[swapped], err) < 0)
            rc = -1;
        else
            swapped++;
    if (rc < 0) {
        for (size_t i = swapped; i-- > 0;)
            swap_back(&o[i], old[i], exchanged[i]);
        for (size_t i = 0; i < n; i++) {
            if (old && old[i])
                rmdir(old[i]);   /* only ever empty here: its profile went back */
            nx_profile_output_abort(&o[i]);
        }
    } else {
        nx_publish_step("swapped");
        for (size_t i = 0; i < n; i++) {
            const char *prev = exchanged[i] ? o[i].tmp_dir : old[i];
            nx_error why;
            if (prev && nx_profile_remove(prev, &why) < 0 && rc == 0)
                rc = nx_error_set(err, "published %s but left the previous profile at %s: %s",
                                    o[i].final_dir, prev, why.msg);
            free(o[i].tmp_dir);
            free(o[i].final_dir);
            o[i].tmp_dir = o[i].final_dir = NULL;
        }
    }
    if (old)
        for (size_t i = 0; i < n; i++)
            free(old[i]);
    free(old);
    free(exchanged);
    if (rc == 0)
        nx_publish_step("pruned");
    return rc;
}

void nx_profile_output_abort(nx_profile_output *o)
{
    if (o->tmp_dir)
        nx_remove_tree(o->tmp_dir);
    free(o->tmp_dir);
    free(o->final_dir);
    o->tmp_dir = o->final_dir = NULL;
}

int nx_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0, saved = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *child = nx_path_printf("%s/%s", path, e->d_name);
        if (!child || nx_remove_tree(child) < 0) {
            if (!saved)
                saved = child ? errno : ENOMEM;
            rc = -1;
        }
        free(child);
    }
    closedir(d);
    if (rc == 0 && rmdir(path) < 0)
        return -1;
    if (rc < 0)
        errno = saved;
    return rc;
}

void nx_publish_step(const char *step)
{
    const char *at = getenv("NXPROF_TEST_KILL_AT");
    if (at && strcmp(at, step) == 0)
        raise(SIGKILL);
}
