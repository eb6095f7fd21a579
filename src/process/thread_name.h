/*
 * thread_name.h — names the threads of `nxprof process` after their work, so that
 * per-thread tools (top -H, perf --sort comm, bench/process/scaling.py) show which
 * part of a run is busy: a job's thread is "dev:D.C" (the NeuronCore of its trace)
 * or "system", a sink's thread "sink:<sink>". Threads a named thread starts (a
 * table's writer, a writer's page encoders) inherit its name.
 */
#ifndef NX_THREAD_NAME_H
#define NX_THREAD_NAME_H

#include <pthread.h>

/* Names thread t; the kernel keeps 15 bytes. A name that cannot be set is no
 * error: it only labels the thread for tools. */
void nx_thread_name(pthread_t t, const char *name);

#endif
