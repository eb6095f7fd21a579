/*
 * run_control.h — the process-wide stop request of a long run, and the marks
 * that say which phase it is in.
 *
 * Stop request: SIGINT and SIGTERM are process-wide, and a run of `process`
 * spends long stretches in code of every layer (the Chrome JSON reader, the
 * framework event sort, the device pipeline, table writing, timeline index
 * building). One flag that a signal handler sets and those loops read every
 * bounded amount of work (nx_run_stopped) stops any of them within a fraction
 * of a second, without threading a pointer through every layer's API.
 * Values: 0 run on; a signal number (SIGINT, SIGTERM); -1 a part of the run
 * failed and the rest should stop (nx_run_stop_failed).
 *
 * Phase marks: when the environment variable NXPROF_TEST_PHASE_FILE names a
 * file, nx_run_phase(name) appends "<name>\n" to it (docs/testing.md: the
 * cancellation tests send SIGTERM once a phase is reached); when
 * NXPROF_TEST_PHASE_WAIT also names this phase, the call then waits until a
 * stop is requested, so the signal arrives in that phase whatever the machine's
 * speed. Without NXPROF_TEST_PHASE_FILE it does nothing.
 */
#ifndef NX_UTIL_RUN_CONTROL_H
#define NX_UTIL_RUN_CONTROL_H

#include <stdatomic.h>
#include <stddef.h>

#include "util/error.h"

/* The flag itself, for code that takes a `const _Atomic int *cancel`. */
_Atomic int *nx_run_stop_flag(void);

/* 0 while the run goes on; else what stopped it (see above). Async-signal-safe
 * to set, cheap to read: loops call it every few thousand items. */
int nx_run_stopped(void);

/* Requests a stop from a signal handler: sig is SIGINT or SIGTERM. */
void nx_run_stop_signal(int sig);

/* A part of the run failed: the rest stops (a signal already seen is kept). */
void nx_run_stop_failed(void);

/* Clears the request (a new run starts). */
void nx_run_reset(void);

/* "interrupted by signal N; nothing was published" or "stopped: another part of
 * this run failed", for a stopped value; into err. */
void nx_run_stopped_message(int stopped, nx_error *err);

/* Appends name to $NXPROF_TEST_PHASE_FILE, when set. */
void nx_run_phase(const char *name);

#endif
