/*
 * file_map.c — see file_map.h. The registry is a fixed array the SIGBUS handler
 * can read without locks: a slot's range is written before its state becomes
 * LIVE (release) and read only after the handler sees LIVE (acquire). A fault on
 * a mapping happens in a thread that holds it open, so the slot it hits cannot
 * be closed while the handler runs.
 */
#define _GNU_SOURCE
#include "file_map.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };

static struct slot {
    atomic_int state;
    atomic_uintptr_t start;
    atomic_size_t len;
    atomic_bool damaged;
} slots[NX_FILE_MAP_SLOTS];

struct nx_file_map {
    void *addr;
    size_t size;
    unsigned slot;
};

static struct sigaction previous;
static uintptr_t page_size;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

static bool zero_fill(uintptr_t at)
{
    for (unsigned i = 0; i < NX_FILE_MAP_SLOTS; i++) {
        struct slot *s = &slots[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_LIVE)
            continue;
        uintptr_t start = atomic_load_explicit(&s->start, memory_order_relaxed);
        size_t len = atomic_load_explicit(&s->len, memory_order_relaxed);
        if (at < start || at - start >= len)
            continue;
        void *page = (void *)(at & ~(page_size - 1));
        if (mmap(page, (size_t)page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            return false;
        atomic_store(&s->damaged, true);
        return true;
    }
    return false;
}

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    bool ours = zero_fill((uintptr_t)info->si_addr);
    errno = saved;
    if (ours)
        return;   /* the read is retried and sees zeros */
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        /* Returning re-runs the faulting read, which now gets the default action. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGBUS, &dfl, NULL);
    } else {
        previous.sa_handler(sig);
    }
}

/* Installs on_sigbus unless it is the handler now, keeping the one it replaces.
 * Asked on every open, so a handler set later by someone else (a test runner
 * sets its own around each test) does not leave new mappings unprotected. */
static void ensure_handler(void)
{
    pthread_mutex_lock(&install_lock);
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction now;
    if (sigaction(SIGBUS, NULL, &now) == 0 && !((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigbus)) {
        struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_ONSTACK};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, &previous);
    }
    pthread_mutex_unlock(&install_lock);
}

nx_file_map *nx_file_map_open(int fd, size_t size)
{
    ensure_handler();
    nx_file_map *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    for (unsigned i = 0; i < NX_FILE_MAP_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expect, SLOT_BUSY))
            continue;
        void *addr = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (addr == MAP_FAILED) {
            int e = size ? errno : EINVAL;
            atomic_store(&slots[i].state, SLOT_FREE);
            free(m);
            errno = e;
            return NULL;
        }
        atomic_store_explicit(&slots[i].start, (uintptr_t)addr, memory_order_relaxed);
        atomic_store_explicit(&slots[i].len, size, memory_order_relaxed);
        atomic_store(&slots[i].damaged, false);
        atomic_store_explicit(&slots[i].state, SLOT_LIVE, memory_order_release);
        *m = (nx_file_map){.addr = addr, .size = size, .slot = i};
        return m;
    }
    free(m);
    errno = EMFILE;
    return NULL;
}

const void *nx_file_map_data(const nx_file_map *m)
{
    return m->addr;
}

size_t nx_file_map_size(const nx_file_map *m)
{
    return m->size;
}

bool nx_file_map_damaged(const nx_file_map *m)
{
    return atomic_load(&slots[m->slot].damaged);
}

void nx_file_map_close(nx_file_map *m)
{
    if (!m)
        return;
    struct slot *s = &slots[m->slot];
    atomic_store(&s->state, SLOT_BUSY);
    munmap(m->addr, m->size);
    atomic_store(&s->state, SLOT_FREE);
    free(m);
}
