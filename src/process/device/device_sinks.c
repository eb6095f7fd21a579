/*
 * device_sinks.c — the list of device sinks the pipeline feeds (device_sink.h).
 * A new device table is a new sink file plus one line here.
 */
#include "process/device/device_sink.h"

extern const nx_device_sink nx_sink_instruction;
extern const nx_device_sink nx_sink_program_tables;
extern const nx_device_sink nx_sink_activity;
extern const nx_device_sink nx_sink_summary;
extern const nx_device_sink nx_sink_rollups;
extern const nx_device_sink nx_sink_semaphore;
extern const nx_device_sink nx_sink_cc;
extern const nx_device_sink nx_sink_throttle_error;
extern const nx_device_sink nx_sink_execution;
extern const nx_device_sink nx_sink_stack_frames;
extern const nx_device_sink nx_sink_dma_tables;
extern const nx_device_sink nx_sink_memory_usage;
extern const nx_device_sink nx_sink_kernel_tables;
extern const nx_device_sink nx_sink_core_barriers;

const nx_device_sink *const nx_device_sinks[] = {
    &nx_sink_instruction,
    &nx_sink_program_tables,
    &nx_sink_activity,
    &nx_sink_summary,
    &nx_sink_rollups,
    &nx_sink_semaphore,
    &nx_sink_cc,
    &nx_sink_throttle_error,
    &nx_sink_execution,
    &nx_sink_stack_frames,
    &nx_sink_dma_tables,
    &nx_sink_memory_usage,
    &nx_sink_kernel_tables,
    &nx_sink_core_barriers,
};
const size_t nx_device_sink_count = sizeof nx_device_sinks / sizeof nx_device_sinks[0];
