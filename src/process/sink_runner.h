/*
 * sink_runner.h — feeds one device sink its events, on a thread of its own.
 *
 * The pipeline thread reads and merges the traces; the sinks' per-event work
 * (roll-ups, summaries, DMA bookkeeping, building rows) would otherwise all run
 * on that same thread. A runner copies each event into a batch and, once a batch
 * is full, hands it to the sink's thread while the pipeline fills the next one
 * (a queue of up to 8 full batches), so sinks run beside the pipeline and
 * beside each other.
 * Each sink still sees its events one at a time, in the pipeline's order, and
 * never concurrently with itself: its code needs no locking, and its output is
 * the same as on one thread. A sink that never fills a batch gets no thread;
 * its events are delivered at nx_sink_runner_drain().
 *
 * Sinks may keep pointers only to what outlives the run (the trace, the program),
 * not to the event or its record, which live in the batch.
 */
#ifndef NX_SINK_RUNNER_H
#define NX_SINK_RUNNER_H

#include "process/device_sink.h"

typedef struct nx_sink_runner nx_sink_runner;

nx_sink_runner *nx_sink_runner_new(const nx_device_sink *sink, void *state, nxpq_error *err);
/* Queues a copy of ev. -1 with err when the sink failed on an earlier batch. */
int nx_sink_runner_event(nx_sink_runner *r, const nx_device_event *ev, nxpq_error *err);
/* Delivers every queued event and stops the thread; -1 with the sink's first error. */
int nx_sink_runner_drain(nx_sink_runner *r, nxpq_error *err);
/* Stops the thread (finishing the batch it holds) and frees the runner, not the sink's state. */
void nx_sink_runner_free(nx_sink_runner *r);

#endif
