/*
 * device_sinks.c — the list of device sinks the pipeline feeds (device_sink.h).
 * A new device table is a new sink file plus one line here.
 */
#include "process/device_sink.h"

extern const nx_device_sink nx_sink_instruction;
extern const nx_device_sink nx_sink_program_tables;

const nx_device_sink *const nx_device_sinks[] = {
    &nx_sink_instruction,
    &nx_sink_program_tables,
};
const size_t nx_device_sink_count = sizeof nx_device_sinks / sizeof nx_device_sinks[0];
