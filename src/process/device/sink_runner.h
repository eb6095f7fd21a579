/*
 * sink_runner.h — feeds the device sinks their events, each sink on a thread of
 * its own.
 *
 * The pipeline thread reads and merges the traces; the sinks' per-event work
 * (roll-ups, summaries, DMA bookkeeping, building rows) would otherwise all run
 * on that same thread. The runner copies each event once into a shared batch;
 * a full batch is handed to every sink that wants one of the kinds it holds,
 * each on its own thread with a queue of such batches (util/handoff.h), and the
 * pipeline goes on filling the next batch. A batch is refilled only once every
 * sink it was given to is done with it. Each sink still sees exactly the events
 * of its kinds, one at a time, in the pipeline's order, and never concurrently
 * with itself: its code needs no locking, and its output is the same as on one
 * thread. A sink that is never given a full batch gets no thread; its events
 * are delivered on the caller's thread at nx_sink_runner_drain().
 *
 * Sinks may keep pointers only to what outlives the run (the trace, the program),
 * not to the event or its record, which live in the batch.
 */
#ifndef NX_SINK_RUNNER_H
#define NX_SINK_RUNNER_H

#include "process/device/device_sink.h"
#include "util/error.h"

typedef struct nx_sink_runner nx_sink_runner;

/* A runner for the n sinks, with their opened states (sinks without kinds get
 * no events). NULL and err when out of memory. */
nx_sink_runner *nx_sink_runner_new(const nx_device_sink *const *sinks, void *const *states, size_t n,
                                   nx_error *err);
/* Queues a copy of ev for the sinks that want its kind. -1 with err when a sink
 * failed on an earlier batch (err names it through the sink's own message). */
int nx_sink_runner_event(nx_sink_runner *r, const nx_device_event *ev, nx_error *err);
/* Delivers every queued event and stops the threads; -1 with the first error. */
int nx_sink_runner_drain(nx_sink_runner *r, nx_error *err);
/* Stops the threads (finishing or discarding what they hold) and frees the
 * runner, not the sinks' states. */
void nx_sink_runner_free(nx_sink_runner *r);

#endif
