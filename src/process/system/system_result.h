/*
 * system_result.h — what the system tables of a profile held (their rows, the
 * time span), added up by each file of the system half of `process` as it
 * writes its table; the processor hands it to the Metadata of a profile
 * without device traces (system_tables.h).
 *
 * Its own header so that the header the half's files share (system_internal.h)
 * need not include the half's interface (system_tables.h), whose entry,
 * system_tables.c, is one of those files.
 */
#ifndef NX_SYSTEM_RESULT_H
#define NX_SYSTEM_RESULT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nx_system_result {
    bool any;                    /* at least one row in one of the four data tables */
    int64_t first_ns, last_ns;   /* over every row's start/end/timestamp (0 when !any) */
    uint64_t events;             /* SystemProfileEvents rows */
    uint64_t cpu_samples;        /* CpuUsage rows */
    uint64_t mem_samples;        /* HostMemUsage rows */
    uint64_t hbm_samples;        /* SystemProfileHbmUsage rows */
    bool relative_time;          /* some framework trace's times count from its start, not the epoch */
} nx_system_result;

#endif
