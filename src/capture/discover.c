/*
 * discover.c — finds the sessions of a capture directory and pairs each device
 * trace with its program by the hash in their file names. See capture.h
 * ("discovery") and docs/capture-format.md ("Directory layout").
 */
#define _DEFAULT_SOURCE   /* realpath */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "capture/capture_util.h"
#include "capture/framework_source.h"

/* Grows *arr (of *n elements of size sz) by one zeroed element; NULL on OOM. */
static void *push(void *arr_ptr, size_t *n, size_t sz)
{
    void **arr = arr_ptr;
    void *grown = realloc(*arr, (*n + 1) * sz);
    if (!grown)
        return NULL;
    *arr = grown;
    void *slot = (char *)grown + *n * sz;
    memset(slot, 0, sz);
    (*n)++;
    return slot;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A file some framework-event source reads (framework_sources.c). */
static bool is_framework_name(const char *name)
{
    return nx_framework_source_for(name) != NULL;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* "<instance>_pid_<digits>" -> instance (malloc'd) and pid. */
static bool parse_session_parent(const char *name, char **instance, int64_t *pid)
{
    const char *tag = strstr(name, "_pid_");
    if (!tag || tag == name || !all_digits(tag + 5) || strlen(tag + 5) > 10)
        return false;
    for (const char *p = tag + 5; *p; p++)   /* the last "_pid_" must be the tag */
        if (*p == '_')
            return false;
    *pid = strtoll(tag + 5, NULL, 10);
    *instance = strndup(name, (size_t)(tag - name));
    return *instance != NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of dir (excluding "." and ".."). */
static int list_dir(const char *dir, char ***names, size_t *n, nx_error *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return nx_cap_fail(err, dir, "cannot read directory: %s", strerror(errno));
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char **slot = push(names, n, sizeof **names);
        if (!slot || !(*slot = strdup(e->d_name))) {
            rc = nx_cap_fail(err, dir, "out of memory");
            break;
        }
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return rc;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static nx_cap_program_file *program_for(nx_cap_session *s, uint64_t hash)
{
    for (size_t i = 0; i < s->n_programs; i++)
        if (s->programs[i].hash == hash)
            return &s->programs[i];
    return NULL;
}

/* Pending traces are kept apart until every program of the directory is known. */
typedef struct pending_trace {
    char *path;
    uint64_t hash;
    uint32_t device, core;
} pending_trace;

static int add_program(nx_cap_session *s, const char *name, char *path, nx_error *err)
{
    uint64_t hash;
    if (!nx_cap_parse_program_name(name, &hash)) {
        free(path);
        return nx_cap_fail(err, s->dir, "%s: a program file name must be program_<16 lowercase hex digits>.nxprog",
                           name);
    }
    nx_cap_program_file *p = push(&s->programs, &s->n_programs, sizeof *s->programs);
    if (!p) {
        free(path);
        return nx_cap_fail(err, s->dir, "out of memory");
    }
    p->path = path;
    p->hash = hash;
    return 0;
}

static int add_trace(nx_cap_session *s, pending_trace **pend, size_t *n_pend, const char *name, char *path,
                     nx_error *err)
{
    pending_trace t = {.path = path};
    if (!nx_cap_parse_trace_name(name, &t.hash, &t.device, &t.core)) {
        free(path);
        return nx_cap_fail(err, s->dir, "%s: a trace file name must be trace_<16 lowercase hex digits>_nd<device>"
                           "_nc<core>.nxtrace", name);
    }
    pending_trace *slot = push(pend, n_pend, sizeof **pend);
    if (!slot) {
        free(path);
        return nx_cap_fail(err, s->dir, "out of memory");
    }
    *slot = t;
    return 0;
}

static int add_chrome(nx_cap_session *s, char *path, nx_error *err)
{
    char **slot = push(&s->chrome_traces, &s->n_chrome_traces, sizeof *s->chrome_traces);
    if (!slot) {
        free(path);
        return nx_cap_fail(err, s->dir, "out of memory");
    }
    *slot = path;
    return 0;
}

/* Files with a fixed name; returns true when `name` was one of them. */
static bool take_system_file(nx_cap_session *s, const char *name, char **path)
{
    char **slot = strcmp(name, NX_CAP_RUNTIME_EVENTS_FILE) == 0 ? &s->runtime_events_path
                : strcmp(name, NX_CAP_CPU_USAGE_FILE) == 0      ? &s->cpu_usage_path
                : strcmp(name, NX_CAP_HOST_MEM_FILE) == 0       ? &s->host_mem_path
                : strcmp(name, NX_CAP_DEVICE_MEM_FILE) == 0     ? &s->device_mem_path
                                                                : NULL;
    if (!slot)
        return false;
    *slot = *path;
    *path = NULL;
    return true;
}

static int classify(nx_cap_session *s, const char *name, pending_trace **pend, size_t *n_pend,
                    const nx_cap_warner *warn, nx_error *err)
{
    char *path = nx_cap_join(s->dir, name);
    if (!path)
        return nx_cap_fail(err, s->dir, "out of memory");
    if (strncmp(name, "program_", 8) == 0 && nx_cap_ends_with(name, ".nxprog"))
        return add_program(s, name, path, err);
    if (strncmp(name, "trace_", 6) == 0 && nx_cap_ends_with(name, ".nxtrace"))
        return add_trace(s, pend, n_pend, name, path, err);
    if (take_system_file(s, name, &path))
        return 0;
    if (is_framework_name(name))
        return add_chrome(s, path, err);
    nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Invalid Data", "not a capture file; ignored");
    free(path);
    return 0;
}

static int cmp_trace(const void *a, const void *b)
{
    const nx_cap_trace_file *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->core < y->core ? -1 : x->core > y->core;
}

static int cmp_program(const void *a, const void *b)
{
    const nx_cap_program_file *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* Moves each pending trace under its program; frees `pend`. */
static int pair_traces(nx_cap_session *s, pending_trace *pend, size_t n_pend, nx_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < n_pend; i++) {
        nx_cap_program_file *p = rc == 0 ? program_for(s, pend[i].hash) : NULL;
        nx_cap_trace_file *t = p ? push(&p->traces, &p->n_traces, sizeof *p->traces) : NULL;
        if (!t) {
            if (rc == 0)
                rc = p ? nx_cap_fail(err, s->dir, "out of memory")
                       : nx_cap_fail(err, pend[i].path, "no program_%016" PRIx64 ".nxprog in its directory; "
                                     "a trace needs the program it names", pend[i].hash);
            free(pend[i].path);
            continue;
        }
        *t = (nx_cap_trace_file){pend[i].path, pend[i].device, pend[i].core};
    }
    free(pend);
    if (rc != 0)
        return -1;
    for (size_t i = 0; i < s->n_programs; i++)
        if (s->programs[i].n_traces > 1)
            qsort(s->programs[i].traces, s->programs[i].n_traces, sizeof *s->programs[i].traces, cmp_trace);
    if (s->n_programs > 1)
        qsort(s->programs, s->n_programs, sizeof *s->programs, cmp_program);
    return 0;
}

static int scan_session(nx_cap_session *s, const nx_cap_warner *warn, nx_error *err)
{
    char **names;
    size_t n;
    if (list_dir(s->dir, &names, &n, err) != 0)
        return -1;
    pending_trace *pend = NULL;
    size_t n_pend = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = classify(s, names[i], &pend, &n_pend, warn, err);
    free_names(names, n);
    rc = pair_traces(s, pend, n_pend, rc == 0 ? err : NULL) != 0 || rc != 0 ? -1 : 0;
    if (rc != 0)
        return -1;
    for (size_t i = 0; i < s->n_programs; i++)
        if (s->programs[i].n_traces == 0)
            nx_cap_warn(warn, s->programs[i].path, NX_CAP_NOWHERE, "Missing Data",
                        "no device trace names this program");
    return 0;
}

static nx_cap_session *new_session(nx_capture *cap, const char *dir, const char *instance, int64_t pid,
                                   const char *timestamp, nx_error *err)
{
    nx_cap_session *s = push(&cap->sessions, &cap->n_sessions, sizeof *cap->sessions);
    if (!s)
        return nx_cap_fail(err, dir, "out of memory"), NULL;
    s->dir = strdup(dir);
    s->instance_id = strdup(instance);
    s->timestamp = strdup(timestamp);
    s->pid = pid;
    if (!s->dir || !s->instance_id || !s->timestamp)
        return nx_cap_fail(err, dir, "out of memory"), NULL;
    return s;
}

/* Every <timestamp> directory under one <instance>_pid_<pid> directory. */
static int scan_parent(nx_capture *cap, const char *parent, const char *instance, int64_t pid,
                       const nx_cap_warner *warn, nx_error *err)
{
    char **names;
    size_t n;
    if (list_dir(parent, &names, &n, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *dir = nx_cap_join(parent, names[i]);
        if (!dir) {
            rc = nx_cap_fail(err, parent, "out of memory");
            break;
        }
        if (all_digits(names[i]) && is_dir(dir)) {
            nx_cap_session *s = new_session(cap, dir, instance, pid, names[i], err);
            rc = s ? scan_session(s, warn, err) : -1;
        } else {
            nx_cap_warn(warn, dir, NX_CAP_NOWHERE, "Invalid Data",
                        "not a <timestamp> session directory (decimal digits); ignored");
        }
        free(dir);
    }
    free_names(names, n);
    return rc;
}

static int scan_root_entry(nx_capture *cap, const char *name, char ***root_chrome, size_t *n_root_chrome,
                           const nx_cap_warner *warn, nx_error *err)
{
    char *path = nx_cap_join(cap->root, name);
    if (!path)
        return nx_cap_fail(err, cap->root, "out of memory");
    char *instance = NULL;
    int64_t pid;
    int rc = 0;
    if (is_dir(path) && parse_session_parent(name, &instance, &pid)) {
        rc = scan_parent(cap, path, instance, pid, warn, err);
    } else if (is_framework_name(name) && !is_dir(path)) {
        char **slot = push(root_chrome, n_root_chrome, sizeof **root_chrome);
        if (!slot)
            rc = nx_cap_fail(err, cap->root, "out of memory");
        else
            *slot = path, path = NULL;
    } else {
        nx_cap_warn(warn, path, NX_CAP_NOWHERE, "Invalid Data",
                    "not an <instance-id>_pid_<pid> directory or a framework trace; ignored");
    }
    free(instance);
    free(path);
    return rc;
}

/* A ROOT with Chrome traces and no sessions is a framework-only capture. */
static int framework_only(nx_capture *cap, char **chrome, size_t n, nx_error *err)
{
    nx_cap_session *s = new_session(cap, cap->root, "", -1, "", err);
    if (!s) {
        free_names(chrome, n);
        return -1;
    }
    s->chrome_traces = chrome;
    s->n_chrome_traces = n;
    return 0;
}

/* The last two components of root's real path: its name and its parent's
 * name (malloc'd, NULL when root cannot be resolved or is "/"). */
static bool root_names(const char *root, char **name, char **parent)
{
    *name = *parent = NULL;
    char *real = realpath(root, NULL);
    if (!real)
        return false;
    char *slash = strrchr(real, '/');
    if (slash && slash[1]) {
        *name = strdup(slash + 1);
        *slash = '\0';
        char *up = strrchr(real, '/');
        *parent = strdup(up ? up + 1 : real);
    }
    free(real);
    if (!*name || !*parent) {
        free(*name);
        free(*parent);
        *name = *parent = NULL;
        return false;
    }
    return true;
}

/* A ROOT that is itself one level of the layout: a <timestamp> session
 * directory (under <instance>_pid_<pid>) is that one session; an
 * <instance>_pid_<pid> directory is each of its sessions. 1 when root is one
 * of those (scanned), 0 when not, -1 on error. */
static int discover_inside(nx_capture *cap, const char *root, const nx_cap_warner *warn, nx_error *err)
{
    char *name, *parent, *instance = NULL;
    int64_t pid;
    if (!root_names(root, &name, &parent))
        return 0;
    int rc = 0;
    if (all_digits(name) && parse_session_parent(parent, &instance, &pid)) {
        nx_cap_session *s = new_session(cap, root, instance, pid, name, err);
        rc = s && scan_session(s, warn, err) == 0 ? 1 : -1;
    } else if (parse_session_parent(name, &instance, &pid)) {
        rc = scan_parent(cap, root, instance, pid, warn, err) == 0 ? 1 : -1;
        if (rc == 1 && cap->n_sessions == 0)
            rc = nx_cap_fail(err, root, "no <timestamp> session directory in this <instance-id>_pid_<pid> directory");
    }
    free(instance);
    free(name);
    free(parent);
    return rc;
}

/* A ROOT that is one framework trace file (`nxprof process trace.json.gz`) is a
 * framework-only capture of that file alone. 1 when it is (taken), 0 when root
 * is not a file, -1 on error (a file no framework source reads is refused). */
static int discover_file(nx_capture *cap, const char *root, nx_error *err)
{
    struct stat st;
    if (stat(root, &st) != 0 || S_ISDIR(st.st_mode))
        return 0;
    const char *slash = strrchr(root, '/');
    if (!is_framework_name(slash ? slash + 1 : root)) {
        char patterns[128];
        nx_framework_source_patterns(patterns, sizeof patterns);
        return nx_cap_fail(err, root, "not a capture: a capture directory, or one framework trace "
                           "file (%s)", patterns);
    }
    char **one = malloc(sizeof *one);
    if (!one || !(one[0] = strdup(root))) {
        free(one);
        return nx_cap_fail(err, root, "out of memory");
    }
    return framework_only(cap, one, 1, err) == 0 ? 1 : -1;
}

int nx_capture_discover(const char *root, nx_capture *out, const nx_cap_warner *warn, nx_error *err)
{
    memset(out, 0, sizeof *out);
    out->root = strdup(root);
    if (!out->root)
        return nx_cap_fail(err, root, "out of memory");
    int file = discover_file(out, root, err);
    if (file != 0) {
        if (file < 0)
            nx_capture_free(out);
        return file < 0 ? -1 : 0;
    }
    int inside = discover_inside(out, root, warn, err);
    if (inside != 0) {
        if (inside < 0)
            nx_capture_free(out);
        return inside < 0 ? -1 : 0;
    }
    char **names, **chrome = NULL;
    size_t n, n_chrome = 0;
    if (list_dir(root, &names, &n, err) != 0) {
        nx_capture_free(out);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = scan_root_entry(out, names[i], &chrome, &n_chrome, warn, err);
    free_names(names, n);
    if (rc == 0 && out->n_sessions == 0 && n_chrome > 0) {
        rc = framework_only(out, chrome, n_chrome, err);
        chrome = NULL, n_chrome = 0;
    } else if (rc == 0 && out->n_sessions == 0) {
        char patterns[128];
        nx_framework_source_patterns(patterns, sizeof patterns);
        rc = nx_cap_fail(err, root, "not a capture: expected <instance-id>_pid_<pid>/<timestamp>/ "
                         "directories or framework trace (%s) files", patterns);
    }
    for (size_t i = 0; i < n_chrome; i++)   /* beside sessions: not part of any */
        nx_cap_warn(warn, chrome[i], NX_CAP_NOWHERE, "Invalid Data",
                    "framework trace outside a session directory; ignored");
    free_names(chrome, n_chrome);
    if (rc != 0)
        nx_capture_free(out);
    return rc;
}

static void free_session(nx_cap_session *s)
{
    for (size_t i = 0; i < s->n_programs; i++) {
        for (size_t k = 0; k < s->programs[i].n_traces; k++)
            free(s->programs[i].traces[k].path);
        free(s->programs[i].traces);
        free(s->programs[i].path);
    }
    free(s->programs);
    free_names(s->chrome_traces, s->n_chrome_traces);
    free(s->runtime_events_path);
    free(s->cpu_usage_path);
    free(s->host_mem_path);
    free(s->device_mem_path);
    free(s->dir);
    free(s->instance_id);
    free(s->timestamp);
}

void nx_capture_free(nx_capture *cap)
{
    for (size_t i = 0; i < cap->n_sessions; i++)
        free_session(&cap->sessions[i]);
    free(cap->sessions);
    free(cap->root);
    memset(cap, 0, sizeof *cap);
}
