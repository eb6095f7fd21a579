/*
 * processor.h — `nxprof process`: turns a capture directory into profiles:
 * per capture session a system profile and one device profile per device
 * trace (the rules are in profile_plan.h).
 *
 * Each profile is built by a job in its own temporary directory: a device job
 * runs the device pipeline over its one trace (device_pipeline.h: every device
 * table of that NeuronCore through the sinks), a system job writes the
 * session's system tables (system_tables.h) and DeviceProfileList. Up to
 * `jobs` jobs run at once; the files written do not depend on how many. Non-fatal capture problems are reported on stderr
 * and become Warning rows of the profile they concern; SchemaFields is always
 * written. The profiles of a run are published together (profile_output.h);
 * a fatal error, SIGINT or SIGTERM leaves every previous profile untouched and
 * removes every temporary directory.
 */
#ifndef NX_PROCESSOR_H
#define NX_PROCESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

#include "process/process_options.h"

typedef struct nx_process_profile {
    char *dir;                   /* where it was published */
    char *name;
    bool system;                 /* a system profile (else a device profile) */
    size_t n_devices;            /* system: its device profiles (they follow it) */
    uint32_t device, core;       /* device: the trace's NeuronCore */
    bool in_system;              /* device: listed by the system profile before it */
} nx_process_profile;

typedef struct nx_process_stats {
    char *profile_dir;           /* the first profile published (malloc'd): the
                                    system profile, or the only device profile */
    nx_process_profile *profiles;   /* every profile published, in plan order */
    size_t n_profiles;
    uint64_t instructions;       /* Instruction rows */
    size_t traces;               /* device traces read */
    size_t programs;             /* program files read */
    unsigned tables;             /* tables written */
    uint64_t warnings;           /* non-fatal capture problems reported on stderr */
} nx_process_stats;

/* Processes o->capture_dir. Returns 0 (st filled; release with
 * nx_process_stats_free) or -1 with a message in err naming the file at fault. */
int nx_process_run(const nx_process_options *o, nx_process_stats *st, nx_error *err);
void nx_process_stats_free(nx_process_stats *st);

#endif
