/* sql_cache.c — the open SQL engines of the query API, behind one mutex (rules in
 * sql_cache.h). An engine is closed outside the lock, by whoever drops its last use. */
#define _DEFAULT_SOURCE /* strdup */
#include "server/sql_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/response_cache.h"

#define SQL_CACHE_ENTRIES 8

struct nx_sql_lease {
    char *dir, *fingerprint;
    nx_sql *db;
    unsigned users;       /* requests holding it */
    bool listed;          /* in g_list: later requests may take it */
    uint64_t stamp;       /* last taken */
    nx_sql_lease *next;
};

static nx_sql_lease *g_list;
static size_t g_count;
static uint64_t g_clock;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void destroy(nx_sql_lease *l)
{
    if (!l)
        return;
    nx_sql_close(l->db);
    free(l->dir);
    free(l->fingerprint);
    free(l);
}

/* Takes l out of g_list (locked); returns l when no request holds it (the caller
 * destroys it after unlocking), else NULL (its last user will). */
static nx_sql_lease *unlist(nx_sql_lease *l)
{
    for (nx_sql_lease **p = &g_list; *p; p = &(*p)->next) {
        if (*p == l) {
            *p = l->next;
            break;
        }
    }
    l->listed = false;
    g_count--;
    return l->users == 0 ? l : NULL;
}

/* A listed engine for dir with this fingerprint, taken (locked); NULL when none. */
static nx_sql_lease *find(const char *dir, const char *fingerprint)
{
    for (nx_sql_lease *l = g_list; l; l = l->next) {
        if (strcmp(l->dir, dir) == 0 && strcmp(l->fingerprint, fingerprint) == 0) {
            l->users++;
            l->stamp = ++g_clock;
            return l;
        }
    }
    return NULL;
}

/* Lists l (locked): engines of the same directory with other files are unlisted, and
 * the least recently used beyond SQL_CACHE_ENTRIES. Those no one holds are put in
 * drop[] (at most SQL_CACHE_ENTRIES + 1 of them) for the caller to destroy. */
static void list(nx_sql_lease *l, nx_sql_lease **drop, size_t *n_drop)
{
    for (nx_sql_lease *o = g_list, *next; o; o = next) {
        next = o->next;
        if (strcmp(o->dir, l->dir) == 0 && (drop[*n_drop] = unlist(o)) != NULL)
            (*n_drop)++;
    }
    l->listed = true;
    l->next = g_list;
    g_list = l;
    g_count++;
    while (g_count > SQL_CACHE_ENTRIES) {
        nx_sql_lease *lru = NULL;
        for (nx_sql_lease *o = g_list; o; o = o->next)
            if (!lru || o->stamp < lru->stamp)
                lru = o;
        if ((drop[*n_drop] = unlist(lru)) != NULL)
            (*n_drop)++;
    }
}

nx_sql_lease *nx_sql_cache_take(const char *dir, nx_sql **db, nx_error *err)
{
    /* No fingerprint (the directory could not be listed): an engine for this request only. */
    char *fingerprint = nx_response_cache_fingerprint(dir);
    nx_sql_lease *l = NULL;
    if (fingerprint) {
        pthread_mutex_lock(&g_lock);
        l = find(dir, fingerprint);
        pthread_mutex_unlock(&g_lock);
    }
    if (l) {
        free(fingerprint);
        *db = l->db;
        return l;
    }
    if (!(l = calloc(1, sizeof *l)) || !(l->dir = strdup(dir))) {
        free(l);
        free(fingerprint);
        nx_error_set(err, "out of memory");
        return NULL;
    }
    l->fingerprint = fingerprint;
    l->users = 1;
    if (!(l->db = nx_sql_open(dir, NULL, err))) {
        destroy(l);
        return NULL;
    }
    if (fingerprint) {
        nx_sql_lease *drop[SQL_CACHE_ENTRIES + 2];
        size_t n_drop = 0;
        pthread_mutex_lock(&g_lock);
        l->stamp = ++g_clock;
        list(l, drop, &n_drop);
        pthread_mutex_unlock(&g_lock);
        for (size_t i = 0; i < n_drop; i++)
            destroy(drop[i]);
    }
    *db = l->db;
    return l;
}

void nx_sql_cache_return(nx_sql_lease *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&g_lock);
    bool last = --l->users == 0 && !l->listed;
    pthread_mutex_unlock(&g_lock);
    if (last)
        destroy(l);
}

void nx_sql_cache_clear(void)
{
    nx_sql_lease *drop[SQL_CACHE_ENTRIES + 2];
    size_t n_drop = 0;
    pthread_mutex_lock(&g_lock);
    for (nx_sql_lease *o = g_list, *next; o; o = next) {
        next = o->next;
        if ((drop[n_drop] = unlist(o)) != NULL)
            n_drop++;
    }
    pthread_mutex_unlock(&g_lock);
    for (size_t i = 0; i < n_drop; i++)
        destroy(drop[i]);
}
