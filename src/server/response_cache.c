/* response_cache.c — an LRU of JSON responses behind one mutex, keyed on the
 * identity of the files they were built from (see response_cache.h). */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include "server/response_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/annotations.h"

#define ENTRIES 64
#define BUDGET_BYTES ((size_t)64 << 20)

typedef struct entry {
    char *dir, *fingerprint, *key, *json;
    size_t len;
    uint64_t stamp;                  /* last use; 0: empty */
} entry;

static entry g_entries[ENTRIES];
static size_t g_bytes;
static uint64_t g_clock;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void drop(entry *e)
{
    g_bytes -= e->len;
    free(e->dir);
    free(e->fingerprint);
    free(e->key);
    free(e->json);
    memset(e, 0, sizeof *e);
}

/* The entries a fingerprint covers: not "." and "..", and not the annotations file
 * (profile/annotations.h), which no cached answer reads: saving annotations must not
 * throw away a profile's cached timeline. */
static int not_dot(const struct dirent *d)
{
    return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 && !nx_annotations_entry(d->d_name);
}

char *nx_response_cache_fingerprint(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct dirent **names = NULL;
    int n = scandir(dir, &names, not_dot, alphasort);
    nx_strbuf b = NX_STRBUF_INIT;
    bool ok = n >= 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        /* An entry gone meanwhile is simply absent from this fingerprint. */
        if (fstatat(fd, names[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
            nx_strbuf_printf(&b, "%s/%ju/%ju/%jd/%jd.%09ld/%jd.%09ld\n", names[i]->d_name, (uintmax_t)st.st_dev,
                             (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
                             st.st_mtim.tv_nsec, (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
        free(names[i]);
    }
    free(names);
    close(fd);
    nx_strbuf_putc(&b, '\n'); /* an empty directory has a fingerprint too */
    if (!ok || nx_strbuf_failed(&b)) {
        nx_strbuf_free(&b);
        return NULL;
    }
    return nx_strbuf_detach(&b);
}

static bool matches(const entry *e, const char *dir, const char *fingerprint, const char *key)
{
    return e->stamp && strcmp(e->dir, dir) == 0 && strcmp(e->fingerprint, fingerprint) == 0 &&
           strcmp(e->key, key) == 0;
}

bool nx_response_cache_get(const char *dir, const char *fingerprint, const char *key, nx_strbuf *b)
{
    bool hit = false;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < ENTRIES && !hit; i++) {
        if (matches(&g_entries[i], dir, fingerprint, key)) {
            nx_strbuf_append(b, g_entries[i].json, g_entries[i].len);
            g_entries[i].stamp = ++g_clock;
            hit = true;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return hit;
}

static entry *least_recent(void)
{
    entry *v = &g_entries[0];
    for (size_t i = 1; i < ENTRIES; i++)
        if (g_entries[i].stamp < v->stamp)
            v = &g_entries[i];
    return v;
}

void nx_response_cache_put(const char *dir, const char *fingerprint, const char *key, const char *json, size_t len)
{
    if (len > BUDGET_BYTES / 4)
        return;
    entry n = {.dir = strdup(dir), .fingerprint = strdup(fingerprint), .key = strdup(key),
               .json = malloc(len ? len : 1), .len = len};
    if (!n.dir || !n.fingerprint || !n.key || !n.json) {
        free(n.dir);
        free(n.fingerprint);
        free(n.key);
        free(n.json);
        return;
    }
    memcpy(n.json, json, len);
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < ENTRIES; i++)   /* another thread may have stored it meanwhile */
        if (matches(&g_entries[i], dir, fingerprint, key))
            drop(&g_entries[i]);
    entry *slot = least_recent();
    if (slot->stamp)
        drop(slot);
    while (g_bytes + len > BUDGET_BYTES) {
        entry *v = NULL;
        for (size_t i = 0; i < ENTRIES; i++)
            if (g_entries[i].stamp && (!v || g_entries[i].stamp < v->stamp))
                v = &g_entries[i];
        if (!v)
            break;
        drop(v);
    }
    n.stamp = ++g_clock;
    *slot = n;
    g_bytes += len;
    pthread_mutex_unlock(&g_lock);
}

void nx_response_cache_clear(void)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < ENTRIES; i++)
        if (g_entries[i].stamp)
            drop(&g_entries[i]);
    pthread_mutex_unlock(&g_lock);
}
