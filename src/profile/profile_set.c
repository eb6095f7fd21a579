/*
 * profile_set.c — generations of a run's set of profiles behind one `current` link,
 * switched in one rename (profile_set.h).
 */
#include "profile/profile_set.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile_layout.h"
#include "profile/annotations.h"
#include "profile/profile_manifest.h"
#include "profile/profile_output.h"
#include "profile/path_text.h"

#define SET_SUFFIX ".nxprof-set"
#define CURRENT "current"

/* The link text of <root>/<entry>: where the public name of a profile of set_dir points. */
static char *link_target(const nx_profile_set *s, const char *entry)
{
    const char *set_base = strrchr(s->set_dir, '/') + 1;
    return nx_path_printf("%s/" CURRENT "/%s", set_base, entry);
}

/* 1 when `path` is a symbolic link whose text is exactly `want`, 0 when not a link
 * or another text, -1 when out of memory. */
static int link_is(const char *path, const char *want)
{
    size_t n = strlen(want);
    char *buf = malloc(n + 2);
    if (!buf)
        return -1;
    ssize_t got = readlink(path, buf, n + 2);
    int same = got == (ssize_t)n && memcmp(buf, want, n) == 0;
    free(buf);
    return same;
}

/* The generation `current` names ("g-..."), malloc'd; NULL when there is none, or
 * when `current` is not a link to a generation of the set folder (checked by
 * check_current before any work). */
static char *current_gen(const nx_profile_set *s)
{
    char *path = nx_path_printf("%s/" CURRENT, s->set_dir);
    char buf[256];
    ssize_t got = path ? readlink(path, buf, sizeof buf - 1) : -1;
    free(path);
    if (got <= 2)
        return NULL;
    buf[got] = '\0';
    return strncmp(buf, "g-", 2) == 0 && !strchr(buf, '/') ? strdup(buf) : NULL;
}

/* Removes a generation: each profile in it by its manifest (a build of a dead run
 * whole), then the folder. Anything that is not nxprof's stays, and so does the folder. */
static int remove_generation(const char *gen, nx_error *err)
{
    DIR *d = opendir(gen);
    if (!d)
        return errno == ENOENT ? 0 : nx_error_set(err, "cannot read %s: %s", gen, strerror(errno));
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *path = nx_path_printf("%s/%s", gen, e->d_name);
        if (!path)
            rc = nx_error_set(err, "out of memory");
        else if (nx_profile_building(path) == 1 && nx_remove_tree(path) < 0)
            rc = nx_error_set(err, "cannot remove %s: %s", path, strerror(errno));
        else if (nx_profile_building(path) != 1 && nx_profile_remove(path, err) < 0)
            rc = -1;
        free(path);
    }
    closedir(d);
    if (rc == 0 && rmdir(gen) < 0)
        rc = nx_error_set(err, "cannot remove %s: %s", gen, strerror(errno));
    return rc;
}

/* True when the entry `name` of the set folder carries, after prefix, a pid whose
 * process is gone: a generation or switch link a killed run left. */
static bool dead_run(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0)
        return false;
    char *end;
    long pid = strtol(name + n, &end, 10);
    return end != name + n && *end == '-' && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes what killed runs of the set left: generations other than the current
 * one, and links made for a switch that never happened. */
static void sweep_set(const nx_profile_set *s)
{
    char *cur = current_gen(s);
    DIR *d = opendir(s->set_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        bool gen = dead_run(e->d_name, "g-") && !(cur && strcmp(cur, e->d_name) == 0);
        bool link = dead_run(e->d_name, "." CURRENT "-");
        char *path = gen || link ? nx_path_printf("%s/%s", s->set_dir, e->d_name) : NULL;
        nx_error ignored = {0};
        if (path && gen)
            remove_generation(path, &ignored);
        else if (path)
            unlink(path);
        free(path);
    }
    if (d)
        closedir(d);
    free(cur);
}

/* 0 when every profile of the published generation is nxprof's to remove (checked
 * before any work: the switch retires it whole); else -1 naming the profile by its
 * public name and what is in it. */
static int check_current(const nx_profile_set *s, nx_error *err)
{
    char *cur = nx_path_printf("%s/" CURRENT, s->set_dir), *gen = current_gen(s);
    struct stat st;
    bool foreign = cur && lstat(cur, &st) == 0 && !gen;
    free(gen);
    if (foreign) {
        int rc = nx_error_set(err, "refusing to publish into %s: %s is not a link to one of its generations; "
                                     "remove it yourself", s->set_dir, cur);
        free(cur);
        return rc;
    }
    DIR *d = cur ? opendir(cur) : NULL;
    if (!d) {
        int rc = !cur ? nx_error_set(err, "out of memory")
                 : errno == ENOENT ? 0 : nx_error_set(err, "cannot read %s: %s", cur, strerror(errno));
        free(cur);
        return rc;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *path = nx_path_printf("%s/%s", cur, e->d_name);
        char *shown = nx_path_printf("%s/%s", s->root, e->d_name);
        rc = path && shown ? nx_profile_owned_as(path, shown, err) : nx_error_set(err, "out of memory");
        free(path);
        free(shown);
    }
    closedir(d);
    free(cur);
    return rc;
}

int nx_profile_set_begin(nx_profile_set *s, const char *root, const char *set_name, nx_error *err)
{
    memset(s, 0, sizeof *s);
    if (nx_display_name_validate(set_name, err) < 0)
        return -1;
    s->root = strdup(root);
    s->set_dir = nx_path_printf("%s/.%s" SET_SUFFIX, root, set_name);
    if (!s->root || !s->set_dir) {
        nx_profile_set_abort(s);
        return nx_error_set(err, "out of memory");
    }
    struct stat st;
    if (nx_make_dirs(s->set_dir, err) < 0) {
        nx_profile_set_abort(s);
        return -1;
    }
    if (lstat(s->set_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        nx_error_set(err, "%s is not a directory nxprof made", s->set_dir);
        nx_profile_set_abort(s);
        return -1;
    }
    /* Checked first: the sweep keeps only the generation `current` names. */
    if (check_current(s, err) < 0) {
        nx_profile_set_abort(s);
        return -1;
    }
    sweep_set(s);
    char *pattern = nx_path_printf("%s/g-%ld-XXXXXX", s->set_dir, (long)getpid());
    if (!pattern || !(s->gen = nx_make_temp_dir(pattern, err))) {
        if (!pattern)
            nx_error_set(err, "out of memory");
        nx_profile_set_abort(s);
        return -1;
    }
    return 0;
}

/* 0 when <root>/<entry> may become (or stays) the set's link: absent, the set's
 * link already, or a profile of the one-directory-per-name layout that nxprof may
 * replace. */
static int check_public(const nx_profile_set *s, const char *entry, nx_error *err)
{
    char *path = nx_path_printf("%s/%s", s->root, entry), *want = link_target(s, entry);
    struct stat st;
    int rc = 0;
    if (!path || !want)
        rc = nx_error_set(err, "out of memory");
    else if (lstat(path, &st) != 0)
        rc = errno == ENOENT ? 0 : nx_error_set(err, "cannot inspect %s: %s", path, strerror(errno));
    else if (S_ISLNK(st.st_mode))
        rc = link_is(path, want) == 1 ? 0
                                      : nx_error_set(err, "refusing to replace %s: it is a symbolic link that is "
                                                            "not this set's (a user's, or another display name's "
                                                            "set); remove it yourself or choose another display "
                                                            "name", path);
    else
        rc = nx_profile_owned(path, err);
    free(path);
    free(want);
    return rc;
}

int nx_profile_set_add(nx_profile_set *s, const char *name, char **build_dir, nx_error *err)
{
    *build_dir = NULL;
    char *entry = nx_layout_entry(name);
    char **grown = entry ? realloc(s->names, (s->n + 1) * sizeof *s->names) : NULL;
    if (!grown) {
        free(entry);
        return nx_error_set(err, "out of memory");
    }
    s->names = grown;
    if (check_public(s, entry, err) < 0) {
        free(entry);
        return -1;
    }
    s->names[s->n++] = entry;
    nx_profile_sweep_stale(s->root, entry);   /* a killed migration's leftovers */
    if (!(*build_dir = nx_path_printf("%s/%s", s->gen, entry)))
        return nx_error_set(err, "out of memory");
    if (nx_profile_dir_create(*build_dir, err) < 0) {
        free(*build_dir);
        *build_dir = NULL;
        return -1;
    }
    return 0;
}

/* Creates the links of names that have none yet (they dangle until the switch). */
static int make_links(const nx_profile_set *s, nx_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        char *path = nx_path_printf("%s/%s", s->root, s->names[i]), *want = link_target(s, s->names[i]);
        struct stat st;
        if (!path || !want)
            rc = nx_error_set(err, "out of memory");
        else if (lstat(path, &st) != 0 && symlink(want, path) != 0)
            rc = nx_error_set(err, "cannot create the link %s: %s", path, strerror(errno));
        free(path);
        free(want);
    }
    return rc;
}

/* Unlinks the set's links that lead nowhere (names made for a switch that did not
 * happen): a failed publish leaves no trace of its new names. */
static void unlink_dangling(const nx_profile_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        char *path = nx_path_printf("%s/%s", s->root, s->names[i]), *want = link_target(s, s->names[i]);
        struct stat st;
        if (path && want && link_is(path, want) == 1 && stat(path, &st) != 0 && errno == ENOENT)
            unlink(path);
        free(path);
        free(want);
    }
}

/* Points `current` at the new generation: a fresh link renamed over the old one. */
static int switch_current(const nx_profile_set *s, nx_error *err)
{
    char *link = nx_path_printf("%s/." CURRENT "-%ld-link", s->set_dir, (long)getpid());
    char *cur = nx_path_printf("%s/" CURRENT, s->set_dir);
    const char *gen_base = strrchr(s->gen, '/') + 1;
    int rc = 0;
    if (!link || !cur)
        rc = nx_error_set(err, "out of memory");
    else if ((unlink(link) < 0 && errno != ENOENT) || symlink(gen_base, link) < 0)
        rc = nx_error_set(err, "cannot create the link %s: %s", link, strerror(errno));
    else if (rename(link, cur) < 0) {
        rc = nx_error_set(err, "cannot rename %s to %s: %s", link, cur, strerror(errno));
        unlink(link);
    }
    free(link);
    free(cur);
    return rc;
}

/* Replaces a name that is still a profile directory (the one-directory-per-name
 * layout) by its link: exchanged in one step, then the profile removed. */
static int migrate(const nx_profile_set *s, const char *entry, nx_error *err)
{
    char *path = nx_path_printf("%s/%s", s->root, entry), *want = link_target(s, entry);
    char *aside = nx_path_printf("%s/.%s.tmp-%ld-link00", s->root, entry, (long)getpid());
    struct stat st;
    int rc = 0;
    if (!path || !want || !aside)
        rc = nx_error_set(err, "out of memory");
    else if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = 0;   /* already a link */
    else if (symlink(want, aside) < 0)
        rc = nx_error_set(err, "cannot create the link %s: %s", aside, strerror(errno));
    else if (nx_rename_exchange(aside, path) < 0) {
        rc = nx_error_set(err, "cannot replace the profile %s by a link (its file system cannot exchange two "
                                 "names in one step): %s", path, strerror(errno));
        unlink(aside);
    } else {
        rc = nx_profile_remove(aside, err);
    }
    free(path);
    free(want);
    free(aside);
    return rc;
}

/* Unlinks the set's links of names the new set lacks (they dangle after the switch). */
static int unlink_dropped(const nx_profile_set *s, nx_error *err)
{
    DIR *d = opendir(s->root);
    if (!d)
        return nx_error_set(err, "cannot read %s: %s", s->root, strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        bool kept = false;
        for (size_t i = 0; i < s->n && !kept; i++)
            kept = strcmp(s->names[i], e->d_name) == 0;
        char *path = kept ? NULL : nx_path_printf("%s/%s", s->root, e->d_name);
        char *want = kept ? NULL : link_target(s, e->d_name);
        if (!kept && (!path || !want))
            rc = nx_error_set(err, "out of memory");
        else if (!kept && link_is(path, want) == 1 && unlink(path) < 0)
            rc = nx_error_set(err, "cannot remove the link %s: %s", path, strerror(errno));
        free(path);
        free(want);
    }
    closedir(d);
    return rc;
}

int nx_profile_set_publish(nx_profile_set *s, nx_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        /* The annotations the previous profile of the name holds go with the new one
         * (annotations.h); carried before the manifest, which then lists them. */
        char *dir = nx_path_printf("%s/%s", s->gen, s->names[i]);
        char *prev = nx_path_printf("%s/%s", s->root, s->names[i]);
        rc = !dir || !prev ? nx_error_set(err, "out of memory") : nx_annotations_carry(prev, dir, err);
        if (rc == 0)
            rc = nx_manifest_write(dir, err);
        free(dir);
        free(prev);
    }
    nx_publish_step("built");
    /* Checked again: a name may have been taken while the profiles were built. */
    for (size_t i = 0; i < s->n && rc == 0; i++)
        rc = check_public(s, s->names[i], err);
    if (rc == 0)
        rc = check_current(s, err);
    if (rc == 0)
        rc = make_links(s, err);
    nx_publish_step("linked");
    char *prev = current_gen(s);
    if (rc == 0)
        rc = switch_current(s, err);
    if (rc < 0) {
        free(prev);
        unlink_dangling(s);
        nx_profile_set_abort(s);
        return -1;
    }
    nx_publish_step("switched");
    for (size_t i = 0; i < s->n && rc == 0; i++)
        rc = migrate(s, s->names[i], err);
    nx_publish_step("migrated");
    char *old = prev && strcmp(prev, strrchr(s->gen, '/') + 1) != 0 ? nx_path_printf("%s/%s", s->set_dir, prev)
                                                                      : NULL;
    if (rc == 0 && old)
        rc = remove_generation(old, err);
    nx_publish_step("pruned");
    if (rc == 0)
        rc = unlink_dropped(s, err);
    nx_publish_step("unlinked");
    free(old);
    free(prev);
    free(s->gen);
    s->gen = NULL;   /* published: abort must not remove it */
    nx_profile_set_abort(s);
    return rc;
}

void nx_profile_set_abort(nx_profile_set *s)
{
    if (s->gen)
        nx_remove_tree(s->gen);
    if (s->set_dir)
        rmdir(s->set_dir);   /* only when empty: a first run that was refused leaves nothing */
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->gen);
    free(s->set_dir);
    free(s->root);
    memset(s, 0, sizeof *s);
}
