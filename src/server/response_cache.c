/* response_cache.c — an LRU of JSON responses behind one mutex (see response_cache.h). */
#include "server/response_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ENTRIES 64
#define BUDGET_BYTES ((size_t)64 << 20)

typedef struct entry {
    char *dir, *key, *json;
    size_t len;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
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
    free(e->key);
    free(e->json);
    memset(e, 0, sizeof *e);
}

static bool matches(const entry *e, const char *dir, const struct stat *st, const char *key)
{
    return e->stamp && e->dev == st->st_dev && e->ino == st->st_ino && e->mtime.tv_sec == st->st_mtim.tv_sec &&
           e->mtime.tv_nsec == st->st_mtim.tv_nsec && strcmp(e->dir, dir) == 0 && strcmp(e->key, key) == 0;
}

bool nx_response_cache_get(const char *dir, const struct stat *st, const char *key, nx_strbuf *b)
{
    bool hit = false;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < ENTRIES && !hit; i++) {
        if (matches(&g_entries[i], dir, st, key)) {
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

void nx_response_cache_put(const char *dir, const struct stat *st, const char *key, const char *json, size_t len)
{
    if (len > BUDGET_BYTES / 4)
        return;
    entry n = {.dir = strdup(dir), .key = strdup(key), .json = malloc(len ? len : 1), .len = len,
               .dev = st->st_dev, .ino = st->st_ino, .mtime = st->st_mtim};
    if (!n.dir || !n.key || !n.json) {
        free(n.dir);
        free(n.key);
        free(n.json);
        return;
    }
    memcpy(n.json, json, len);
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < ENTRIES; i++)   /* another thread may have stored it meanwhile */
        if (matches(&g_entries[i], dir, st, key))
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
