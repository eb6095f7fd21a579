/*
 * annotations_file.c — a profile's annotations file on disk: read (regular files
 * only, bounded), written atomically, carried into a re-processed profile
 * (annotations.h).
 */
#include "profile/annotations.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/path_text.h"
#include "profile/profile_manifest.h"
#include "util/open_regular.h"

bool nx_annotations_entry(const char *name)
{
    static const char tmp[] = NX_ANNOTATIONS_FILE ".tmp-";
    return strcmp(name, NX_ANNOTATIONS_FILE) == 0 || strncmp(name, tmp, sizeof tmp - 1) == 0;
}

/* The file's bytes (malloc'd, NUL-terminated) into *text, *len; 1 when read, 0 when
 * there is no file, -1 (naming path) when it is not a regular file, is too large or
 * cannot be read. A symbolic link is refused: a profile serves nothing from outside. */
static int read_file(const char *path, char **text, size_t *len, nx_error *err)
{
    struct stat st;
    *text = NULL;
    *len = 0;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : nx_error_set(err, "%s: cannot inspect: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return nx_error_set(err, "%s: not a regular file", path);
    nx_error why = {0};
    int fd = nx_open_regular(path, &st, &why);
    if (fd < 0)
        return nx_error_set(err, "%s: %s", path, why.msg);
    if (st.st_size > NX_ANNOTATIONS_MAX_BYTES) {
        close(fd);
        return nx_error_set(err, "%s: larger than %d bytes", path, NX_ANNOTATIONS_MAX_BYTES);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int saved = errno;
    close(fd);
    if (!buf)
        return nx_error_set(err, "out of memory");
    if (got != (size_t)st.st_size) {
        free(buf);
        return nx_error_set(err, "%s: cannot read: %s", path, got ? "it shrank while read" : strerror(saved));
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 1;
}

/* Writes text[0..len) as dir's annotations file: a temporary file fsync'd and
 * renamed over it, then the directory fsync'd, so the name holds the previous
 * document or this one whatever happens. */
static int write_atomic(const char *dir, const char *text, size_t len, nx_error *err)
{
    char *path = nx_path_printf("%s/" NX_ANNOTATIONS_FILE, dir);
    char *tmp = nx_path_printf("%s/" NX_ANNOTATIONS_FILE ".tmp-%ld-XXXXXX", dir, (long)getpid());
    if (!path || !tmp) {
        free(path);
        free(tmp);
        return nx_error_set(err, "out of memory");
    }
    int fd = mkstemp(tmp), rc = 0;
    if (fd < 0)
        rc = nx_error_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    for (size_t done = 0; rc == 0 && done < len;) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = nx_error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
        else
            done += (size_t)n;
    }
    if (rc == 0 && (fchmod(fd, 0644) != 0 || fsync(fd) != 0))
        rc = nx_error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = nx_error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = nx_error_set(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc < 0 && fd >= 0)
        unlink(tmp);
    int dfd = rc == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (rc == 0 && (dfd < 0 || fsync(dfd) != 0))
        rc = nx_error_set(err, "%s: cannot sync the directory: %s", dir, strerror(errno));
    if (dfd >= 0)
        close(dfd);
    free(path);
    free(tmp);
    return rc;
}

int nx_annotations_load(const char *dir, nx_annotations *a, nx_error *err)
{
    memset(a, 0, sizeof *a);
    char *path = nx_path_printf("%s/" NX_ANNOTATIONS_FILE, dir);
    if (!path)
        return nx_error_set(err, "out of memory");
    char *text;
    size_t len;
    int rc = read_file(path, &text, &len, err);
    if (rc == 1)
        rc = nx_annotations_parse(text, len, path, a, err);
    free(text);
    free(path);
    return rc < 0 ? -1 : 0;
}

int nx_annotations_save(const char *dir, const nx_annotations *a, nx_error *err)
{
    char *path = nx_path_printf("%s/" NX_ANNOTATIONS_FILE, dir);
    if (!path)
        return nx_error_set(err, "out of memory");
    int rc = nx_annotations_check(a, path, err);
    nx_strbuf b = NX_STRBUF_INIT;
    if (rc == 0)
        nx_annotations_json(a, &b);
    if (rc == 0 && nx_strbuf_failed(&b))
        rc = nx_error_set(err, "out of memory");
    else if (rc == 0 && b.len > NX_ANNOTATIONS_MAX_BYTES)
        rc = nx_error_set(err, "%s: the annotations take more than %d bytes", path, NX_ANNOTATIONS_MAX_BYTES);
    if (rc == 0)
        rc = write_atomic(dir, b.data, b.len, err);
    nx_strbuf_free(&b);
    free(path);
    return rc;
}

/* Carries the file of one profile (not its sub-profiles). */
static int carry_one(const char *from, const char *to, nx_error *err)
{
    char *path = nx_path_printf("%s/" NX_ANNOTATIONS_FILE, from);
    if (!path)
        return nx_error_set(err, "out of memory");
    char *text;
    size_t len;
    int rc = read_file(path, &text, &len, err);
    if (rc == 1)
        rc = write_atomic(to, text, len, err);
    free(text);
    free(path);
    return rc < 0 ? -1 : 0;
}

/* True when dir holds a profile marker (a sub-profile, profile_manifest.h "p"). */
static bool is_profile(const char *dir)
{
    char *marker = nx_path_printf("%s/" NX_PROFILE_MARKER, dir);
    struct stat st;
    bool yes = marker && lstat(marker, &st) == 0 && S_ISREG(st.st_mode);
    free(marker);
    return yes;
}

/* Carries each sub-profile <folder>/<name> that `to` holds (a folder of sub-profiles,
 * such as devices/, in the profile) from the same place in `from`. */
static int carry_folder(const char *from, const char *to, const char *folder, nx_error *err)
{
    char *dir = nx_path_printf("%s/%s", to, folder);
    DIR *d = dir ? opendir(dir) : NULL;
    int rc = dir ? 0 : nx_error_set(err, "out of memory");
    for (struct dirent *e; rc == 0 && d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *sub_to = nx_path_printf("%s/%s", dir, e->d_name);
        char *sub_from = nx_path_printf("%s/%s/%s", from, folder, e->d_name);
        if (!sub_to || !sub_from)
            rc = nx_error_set(err, "out of memory");
        else if (is_profile(sub_to))
            rc = nx_annotations_carry(sub_from, sub_to, err);
        free(sub_to);
        free(sub_from);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

int nx_annotations_carry(const char *from, const char *to, nx_error *err)
{
    if (carry_one(from, to, err) < 0)
        return -1;
    DIR *d = opendir(to);
    if (!d)
        return nx_error_set(err, "cannot read %s: %s", to, strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = nx_path_printf("%s/%s", to, e->d_name);
        struct stat st;
        if (!sub)
            rc = nx_error_set(err, "out of memory");
        else if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode) && !is_profile(sub))
            rc = carry_folder(from, to, e->d_name, err);
        free(sub);
    }
    closedir(d);
    return rc;
}
