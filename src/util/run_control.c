/* run_control.c — the process-wide stop request and the test phase marks (run_control.h). */
#include "util/run_control.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int stop_flag;

_Atomic int *nx_run_stop_flag(void) { return &stop_flag; }

int nx_run_stopped(void) { return atomic_load_explicit(&stop_flag, memory_order_relaxed); }

void nx_run_stop_signal(int sig) { atomic_store(&stop_flag, sig); }

void nx_run_stop_failed(void)
{
    int none = 0;
    atomic_compare_exchange_strong(&stop_flag, &none, -1);
}

void nx_run_reset(void) { atomic_store(&stop_flag, 0); }

void nx_run_stopped_message(int stopped, nx_error *err)
{
    if (stopped > 0)
        nx_error_set(err, "interrupted by signal %d; nothing was published", stopped);
    else
        nx_error_set(err, "stopped: another profile of this run failed");
}

/* NXPROF_TEST_PHASE_WAIT=<name>: the phase waits at its start until a stop is
 * requested, so a test can signal a run at a chosen phase deterministically. */
static void wait_if_asked(const char *name)
{
    const char *want = getenv("NXPROF_TEST_PHASE_WAIT");
    if (!want || strcmp(want, name) != 0)
        return;
    const struct timespec tick = {0, 1000000};
    while (!nx_run_stopped())
        nanosleep(&tick, NULL);
}

void nx_run_phase(const char *name)
{
    const char *path = getenv("NXPROF_TEST_PHASE_FILE");
    if (!path || !*path)
        return;
    /* One write of the whole line with O_APPEND: marks from several threads
     * never interleave. A failure is ignored: the marks are for tests only. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "%s\n", name);
    if (n > 0 && (size_t)n < sizeof line) {
        ssize_t written = write(fd, line, (size_t)n);
        (void)written;   /* best effort, see above */
    }
    close(fd);
    wait_if_asked(name);
}
