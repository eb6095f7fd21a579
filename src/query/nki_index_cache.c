/* nki_index_cache.c — the NKI indexes kept per profile and shared by the server's
 * threads (nki_index.h "Cache"): looked up by directory and the four tables'
 * file identities, held by reference count, the least recently used dropped. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "query/nki_index.h"
#include "query/nki_index_internal.h"

#define SIG_TABLES 4
typedef struct file_sig {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    bool present;
} file_sig;

typedef struct cache_entry {
    char *dir;
    file_sig sig[SIG_TABLES];
    nx_nki_index *idx;
    int refs;          /* holders, the cache's own reference included while cached */
    uint64_t used;
} cache_entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry cache[NX_NKI_CACHE];
static uint64_t cache_clock;
/* Indexes evicted while still held: freed at their last release. */
static cache_entry *orphans;
static size_t n_orphans, orphan_cap;

static const char *const SIG_NAMES[SIG_TABLES] = {"KernelInstructions", "KernelStackFrames",
                                                  "KernelIterationVariables", "AssemblyInstruction"};

/* The identity of each table's first file (<T>.parquet, else <T>_0.parquet). */
static void signature(const char *dir, file_sig *sig)
{
    for (size_t i = 0; i < SIG_TABLES; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.parquet", dir, SIG_NAMES[i]);
        bool ok = stat(path, &st) == 0;
        if (!ok) {
            snprintf(path, sizeof path, "%s/%s_0.parquet", dir, SIG_NAMES[i]);
            ok = stat(path, &st) == 0;
        }
        sig[i] = ok ? (file_sig){st.st_dev, st.st_ino, st.st_size, st.st_mtim, true} : (file_sig){0};
    }
}

static bool sig_equal(const file_sig *a, const file_sig *b)
{
    for (size_t i = 0; i < SIG_TABLES; i++)
        if (a[i].present != b[i].present || a[i].dev != b[i].dev || a[i].ino != b[i].ino ||
            a[i].size != b[i].size || a[i].mtime.tv_sec != b[i].mtime.tv_sec ||
            a[i].mtime.tv_nsec != b[i].mtime.tv_nsec)
            return false;
    return true;
}

static void hold_orphan(nx_nki_index *idx, int refs);

/* Drops the cache's reference to entry e (the index lives on while held). Lock held. */
static void evict(cache_entry *e)
{
    if (!e->idx)
        return;
    if (--e->refs == 0) {
        nx_nki_index_destroy(e->idx);
    } else {
        hold_orphan(e->idx, e->refs);
    }
    free(e->dir);
    *e = (cache_entry){0};
}

/* The held entry for dir with signature sig, or NULL. Lock held. */
static nx_nki_index *lookup(const char *dir, const file_sig *sig)
{
    for (size_t i = 0; i < NX_NKI_CACHE; i++) {
        cache_entry *e = &cache[i];
        if (!e->idx || strcmp(e->dir, dir) != 0)
            continue;
        if (!sig_equal(e->sig, sig)) {
            evict(e);
            return NULL;
        }
        e->refs++;
        e->used = ++cache_clock;
        return e->idx;
    }
    return NULL;
}

/* Keeps an index the cache does not hold, until its last release. Lock held. */
static void hold_orphan(nx_nki_index *idx, int refs)
{
    if (n_orphans == orphan_cap) {
        size_t cap = orphan_cap ? 2 * orphan_cap : 4;
        cache_entry *o = realloc(orphans, cap * sizeof *o);
        if (!o)
            return; /* leaks one index rather than free it under a holder */
        orphans = o;
        orphan_cap = cap;
    }
    orphans[n_orphans++] = (cache_entry){.idx = idx, .refs = refs};
}

/* Caches idx for dir (one reference for the caller, one for the cache). Lock held. */
static void insert(const char *dir, const file_sig *sig, nx_nki_index *idx)
{
    cache_entry *slot = &cache[0];
    for (size_t i = 0; i < NX_NKI_CACHE; i++) {
        if (!cache[i].idx) {
            slot = &cache[i];
            break;
        }
        if (cache[i].used < slot->used)
            slot = &cache[i];
    }
    evict(slot);
    char *d = strdup(dir);
    if (!d) {
        hold_orphan(idx, 1);
        return;
    }
    *slot = (cache_entry){.dir = d, .idx = idx, .refs = 2, .used = ++cache_clock};
    memcpy(slot->sig, sig, sizeof slot->sig);
}

int nx_nki_index_get(const char *profile_dir, const nx_nki_index **out, nx_error *err)
{
    file_sig sig[SIG_TABLES];
    signature(profile_dir, sig);
    pthread_mutex_lock(&cache_lock);
    nx_nki_index *idx = lookup(profile_dir, sig);
    pthread_mutex_unlock(&cache_lock);
    if (idx) {
        *out = idx;
        return 0;
    }
    /* One build at a time: a second request for the same profile waits and finds it cached. */
    pthread_mutex_lock(&build_lock);
    pthread_mutex_lock(&cache_lock);
    idx = lookup(profile_dir, sig);
    pthread_mutex_unlock(&cache_lock);
    bool built = !idx;
    int rc = built ? nx_nki_index_build(profile_dir, &idx, err) : 0;
    if (rc == 0 && built) {
        pthread_mutex_lock(&cache_lock);
        insert(profile_dir, sig, idx);
        pthread_mutex_unlock(&cache_lock);
    }
    pthread_mutex_unlock(&build_lock);
    if (rc != 0)
        return rc;
    *out = idx;
    return 0;
}

void nx_nki_index_release(const nx_nki_index *idx)
{
    if (!idx)
        return;
    pthread_mutex_lock(&cache_lock);
    bool done = false;
    for (size_t i = 0; i < NX_NKI_CACHE && !done; i++)
        if (cache[i].idx == idx) {
            cache[i].refs--;
            done = true;
        }
    for (size_t i = 0; i < n_orphans && !done; i++)
        if (orphans[i].idx == idx) {
            if (--orphans[i].refs == 0) {
                nx_nki_index_destroy(orphans[i].idx);
                orphans[i] = orphans[--n_orphans];
            }
            done = true;
        }
    pthread_mutex_unlock(&cache_lock);
}
