/*
 * profile_layout.c — the data path's layout (profile_layout.h): the root,
 * display names, the "@latest" entries, nested device profiles, finding and
 * listing profiles.
 */
#define _DEFAULT_SOURCE /* realpath, strndup */
#include "profile/profile_layout.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/data_path.h"
#include "profile/path_text.h"

#define HOME_DATA_PATH ".nxprof"
#define ROOT_FOLDER "profiles/global"
#define LATEST "@latest"

int nx_display_name_validate(const char *name, nx_error *err)
{
    if (!name || !*name)
        return nx_error_set(err, "display name is empty");
    size_t len = strlen(name);
    if (len > NX_DISPLAY_NAME_MAX)
        return nx_error_set(err, "display name is %zu bytes long; the limit is %d", len, NX_DISPLAY_NAME_MAX);
    /* The name becomes one path component: a '/' or ".." would place the profile
     * outside profiles/global, and control characters make names that shells and
     * the viewer's listing cannot show faithfully. */
    if (strchr(name, '/'))
        return nx_error_set(err, "display name '%s' contains '/'", name);
    if (strstr(name, ".."))
        return nx_error_set(err, "display name '%s' contains '..'", name);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return nx_error_set(err, "display name contains the control character 0x%02x at byte %zu", *p,
                        (size_t)(p - (const unsigned char *)name));
    return 0;
}

int nx_data_path_default(char **out, nx_error *err)
{
    const char *home = getenv("HOME");
    *out = NULL;
    if (!home || !*home)
        return nx_error_set(err, "HOME is not set: give --data-path");
    *out = nx_path_printf("%s/" HOME_DATA_PATH, home);
    return *out ? 0 : nx_error_set(err, "out of memory");
}

int nx_data_path_root(const char *data_path, char **out, nx_error *err)
{
    *out = NULL;
    if (data_path && !*data_path)
        return nx_error_set(err, "data path is empty");
    char *dflt = NULL;
    if (!data_path && nx_data_path_default(&dflt, err) < 0)
        return -1;
    *out = nx_path_printf("%s/" ROOT_FOLDER, data_path ? data_path : dflt);
    free(dflt);
    return *out ? 0 : nx_error_set(err, "out of memory");
}

int nx_profile_dir_resolve(const char *data_path, const char *display_name, const char *output_file,
                           char **out, nx_error *err)
{
    *out = NULL;
    if (output_file) {
        if (!*output_file)
            return nx_error_set(err, "output directory is empty");
        *out = strdup(output_file);
        return *out ? 0 : nx_error_set(err, "out of memory");
    }
    char *root;
    if (nx_display_name_validate(display_name, err) < 0 || nx_data_path_root(data_path, &root, err) < 0)
        return -1;
    *out = nx_path_printf("%s/%s" LATEST, root, display_name);
    free(root);
    return *out ? 0 : nx_error_set(err, "out of memory");
}

char *nx_layout_entry(const char *name)
{
    return nx_path_printf("%s" LATEST, name);
}

size_t nx_layout_entry_name(const char *entry, const char **name)
{
    size_t len = strlen(entry);
    while (len > 1 && entry[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && entry[start - 1] != '/')
        start--;
    size_t n = len - start;
    if (name)
        *name = entry + start;
    if (n <= sizeof LATEST - 1 || memcmp(entry + len - (sizeof LATEST - 1), LATEST, sizeof LATEST - 1) != 0)
        return 0;
    return n - (sizeof LATEST - 1);
}

/* 0 when `path` is a directory whose real path lies inside root (real),
 * NX_LAYOUT_MISSING when not (missing or outside), -1 out of memory. */
static int dir_inside(const char *root, const char *path)
{
    char *real = path ? nx_dir_real_inside(path, root) : NULL;
    int rc = real ? 0 : !path || errno == ENOMEM ? -1 : NX_LAYOUT_MISSING;
    free(real);
    return rc;
}

/* The system part <S> of a name "<S>[/devices/<D>]" (malloc'd into *sys) and
 * where <D> starts (NULL for none). 0, NX_LAYOUT_INVALID or -1 with err. */
static int split_name(const char *name, char **sys, const char **dev, nx_error *err)
{
    const char *sep = strstr(name, "/" NX_LAYOUT_DEVICES_DIR "/");
    *dev = sep ? sep + sizeof NX_LAYOUT_DEVICES_DIR + 1 : NULL;
    *sys = strndup(name, sep ? (size_t)(sep - name) : strlen(name));
    if (!*sys)
        return nx_error_set(err, "out of memory");
    if (nx_display_name_validate(*sys, err) == 0 && (!*dev || nx_display_name_validate(*dev, err) == 0))
        return 0;
    free(*sys);
    *sys = NULL;
    return NX_LAYOUT_INVALID;
}

int nx_layout_find(const char *root, const char *name, char **dir, nx_error *err)
{
    *dir = NULL;
    char *sys;
    const char *dev;
    int rc = split_name(name, &sys, &dev, err);
    if (rc != 0)
        return rc;
    /* Resolved on every call: the data path may be created or moved meanwhile. */
    char *real = realpath(root, NULL);
    rc = real ? 0 : errno == ENOMEM ? -1 : NX_LAYOUT_MISSING;
    char *path = rc == 0 ? nx_path_printf("%s/%s" LATEST, real, sys) : NULL;
    if (rc == 0)
        rc = dir_inside(real, path);
    if (rc == 0 && dev) {
        /* <system>/devices/<device>: inside the root too, however reached. */
        char *d = nx_path_printf("%s/" NX_LAYOUT_DEVICES_DIR "/%s", path, dev);
        rc = dir_inside(real, d);
        free(path);
        path = d;
    }
    free(real);
    free(sys);
    if (rc != 0) {
        free(path);
        return rc < 0 ? nx_error_set(err, "out of memory") : (nx_error_set(err, "no such profile: %s", name), rc);
    }
    *dir = path;
    return 0;
}

static int profile_cmp(const void *a, const void *b)
{
    return strcmp(((const nx_layout_profile *)a)->name, ((const nx_layout_profile *)b)->name);
}

/* Appends profile `name` of root to *ps when nx_layout_find finds it. 0 (added
 * or not a profile), -1 when out of memory. */
static int list_add(const char *root, char *name, nx_layout_profile **ps, size_t *n, size_t *cap)
{
    nx_error err;
    char *dir;
    int rc = nx_layout_find(root, name, &dir, &err);
    if (rc != 0) {
        free(name);
        return rc < 0 ? -1 : 0; /* an invalid name or one leading out of the root: not listed */
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        nx_layout_profile *g = realloc(*ps, nc * sizeof *g);
        if (!g) {
            free(name);
            free(dir);
            return -1;
        }
        *ps = g;
        *cap = nc;
    }
    (*ps)[(*n)++] = (nx_layout_profile){.name = name, .dir = dir};
    return 0;
}

int nx_layout_list(const char *root, nx_layout_profile **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    char *real = realpath(root, NULL);
    DIR *d = real ? opendir(real) : NULL;
    free(real);
    if (!d)
        return 0; /* no data path yet: an empty listing */
    nx_layout_profile *ps = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const char *start;
        size_t len = nx_layout_entry_name(e->d_name, &start);
        char *name = len ? strndup(start, len) : NULL;
        if (len)
            rc = name ? list_add(root, name, &ps, &n, &cap) : -1;
    }
    closedir(d);
    if (rc != 0) {
        nx_layout_list_free(ps, n);
        return -1;
    }
    if (n > 1)
        qsort(ps, n, sizeof *ps, profile_cmp);
    *out = ps;
    *count = n;
    return 0;
}

void nx_layout_list_free(nx_layout_profile *ps, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(ps[i].name);
        free(ps[i].dir);
    }
    free(ps);
}

/* p (an existing device profile directory), or NULL with err (p freed) when its
 * real path leaves `parent`, the folder the system profile is named in (a data
 * path's root): a symbolic link out of it is not followed (data_path.h). */
static char *stays_inside(const char *parent, char *p, nx_error *err)
{
    char *real = nx_dir_real_inside(p, parent);
    if (!real && errno == ENOMEM)
        nx_error_set(err, "out of memory");
    else if (!real)
        nx_error_set(err, "device profile %s leads out of %s, where its system profile is; not read", p, parent);
    if (real) {
        free(real);
        return p;
    }
    free(p);
    return NULL;
}

char *nx_device_profile_dir(const char *system_dir, const char *name, nx_error *err)
{
    if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strchr(name, '/')) {
        nx_error_set(err, "device profile name '%s' is not a plain directory name", name);
        return NULL;
    }
    size_t dl = strlen(system_dir);
    while (dl > 1 && system_dir[dl - 1] == '/')
        dl--;
    /* The parent: system_dir without its last component ("." when it has one only). */
    size_t pl = dl;
    while (pl > 0 && system_dir[pl - 1] != '/')
        pl--;
    while (pl > 1 && system_dir[pl - 1] == '/')
        pl--;
    char *parent = pl == 0 ? strdup(".") : strndup(system_dir, pl);
    char *p = parent ? nx_path_printf("%.*s/" NX_LAYOUT_DEVICES_DIR "/%s", (int)dl, system_dir, name) : NULL;
    struct stat st;
    if (p && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
        free(p);
        p = nx_path_printf("%s%s%s" LATEST, parent, strcmp(parent, "/") == 0 ? "" : "/", name);
    }
    if (!p) {
        free(parent);
        nx_error_set(err, "out of memory");
        return NULL;
    }
    p = stat(p, &st) == 0 ? stays_inside(parent, p, err) : p;
    free(parent);
    return p;
}

char *nx_layout_device_name(const char *sys, const char *sys_dir, const char *dev, const char *dev_dir)
{
    size_t sl = strlen(sys_dir);
    bool nested = strncmp(dev_dir, sys_dir, sl) == 0 && dev_dir[sl] == '/';
    return nested ? nx_path_printf("%s/" NX_LAYOUT_DEVICES_DIR "/%s", sys, dev) : strdup(dev);
}

/* Length of name less its "-nd<digits>-nc<digits>" ending, or 0 when it has none. */
static size_t device_suffix_start(const char *name, size_t len)
{
    size_t i = len;
    for (int part = 0; part < 2; part++) {
        size_t digits = 0;
        while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
            i--, digits++;
        const char *tag = part == 0 ? "-nc" : "-nd";
        if (digits == 0 || i < 3 || strncmp(name + i - 3, tag, 3) != 0)
            return 0;
        i -= 3;
    }
    return i;
}

char *nx_layout_system_dir(const char *device_dir)
{
    size_t n = strlen(device_dir);
    while (n > 1 && device_dir[n - 1] == '/')
        n--;
    size_t base = n;
    while (base > 0 && device_dir[base - 1] != '/')
        base--;
    /* device_dir[0..base) is its parent with a trailing '/', device_dir[base..n) its name. */
    static const char nested[] = "/" NX_LAYOUT_DEVICES_DIR "/";
    size_t nl = sizeof nested - 1;
    if (base >= nl && memcmp(device_dir + base - nl, nested, nl) == 0 && base > nl)
        return nx_path_printf("%.*s", (int)(base - nl), device_dir);
    const char *name = device_dir + base;
    size_t len = n - base, sl = strlen(LATEST);
    if (len <= sl || memcmp(name + len - sl, LATEST, sl) != 0)
        return NULL;
    size_t stem = device_suffix_start(name, len - sl);
    if (stem == 0)
        return NULL;
    return nx_path_printf("%.*s%.*s" LATEST, (int)base, device_dir, (int)stem, name);
}
