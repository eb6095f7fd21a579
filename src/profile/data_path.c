/*
 * data_path.c — real-path comparisons of capture, output and data paths
 * (data_path.h).
 */
#define _DEFAULT_SOURCE /* realpath */
#include "profile/data_path.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/path_text.h"

char *nx_path_real_planned(const char *path)
{
    char *real = realpath(path, NULL);
    if (real || errno != ENOENT)
        return real;
    /* Walk up to the nearest ancestor that exists, then append what is missing. */
    char *head = strdup(path);
    if (!head)
        return NULL;
    size_t len = strlen(head);
    while (len > 1 && head[len - 1] == '/')
        head[--len] = '\0';
    char *slash = strrchr(head, '/');
    const char *tail = slash ? slash + 1 : head;
    char *parent = slash == head ? strdup("/") : slash ? strndup(head, (size_t)(slash - head)) : strdup(".");
    char *up = parent ? nx_path_real_planned(parent) : NULL;
    char *out = NULL;
    if (up && (strcmp(tail, ".") == 0 || !*tail))
        out = strdup(up);
    else if (up && strcmp(tail, "..") == 0)   /* a missing folder's parent */
        out = strrchr(up, '/') == up ? strdup("/") : strndup(up, (size_t)(strrchr(up, '/') - up));
    else if (up)
        out = nx_path_printf("%s%s%s", up, strcmp(up, "/") == 0 ? "" : "/", tail);
    free(up);
    free(parent);
    free(head);
    return out;
}

bool nx_path_within(const char *inner, const char *outer)
{
    size_t n = strlen(outer);
    if (strcmp(outer, "/") == 0)
        return inner[0] == '/';
    return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

int nx_output_apart_from_capture(const char *capture_dir, const char *final_dir, nx_error *err)
{
    char *cap = realpath(capture_dir, NULL);
    if (!cap)
        return nx_error_set(err, "cannot resolve the capture directory %s: %s", capture_dir, strerror(errno));
    char *out = nx_path_real_planned(final_dir);
    int rc = 0;
    if (!out)
        rc = nx_error_set(err, "cannot resolve the output directory %s: %s", final_dir, strerror(errno));
    else if (nx_path_within(cap, out))
        rc = nx_error_set(err, "refusing to write %s: the capture %s lies inside it, and publishing would "
                                 "replace it; move the capture or choose another output directory",
                            final_dir, capture_dir);
    else if (nx_path_within(out, cap))
        rc = nx_error_set(err, "refusing to write %s: it lies inside the capture %s; choose an output "
                                 "directory outside the capture",
                            final_dir, capture_dir);
    free(out);
    free(cap);
    return rc;
}

char *nx_dir_real_inside(const char *path, const char *root)
{
    char *outer = realpath(root, NULL);
    char *real = outer ? realpath(path, NULL) : NULL;
    int e = errno == ENOMEM ? ENOMEM : ENOENT;
    struct stat st;
    bool ok = real && strcmp(real, outer) != 0 && nx_path_within(real, outer) && stat(real, &st) == 0 &&
              S_ISDIR(st.st_mode);
    free(outer);
    if (ok)
        return real;
    free(real);
    errno = e;
    return NULL;
}
