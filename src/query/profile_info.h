/*
 * profile_info.h — what one profile directory holds, as the profile listing
 * says it (docs/api.md "GET /api/profiles"):
 *   - readable: the directory could be listed;
 *   - size: the sum of st_size of the regular files directly in it (lstat:
 *     symlinks are not followed; a system profile's devices/ folder is not
 *     counted);
 *   - tables: every "*.parquet" file name without the extension, and without a
 *     "_<digits>" suffix when the rest names a catalogue table (split tables),
 *     sorted (strcmp), each once;
 *   - device: one of them is a device timeline table (a timeline table of
 *     profile/timeline_rules.h outside the "system" group: Instruction,
 *     DmaPacketAggregated, DmaPacket, SemaphoreUpdate, CcInstruction, CcOp);
 *   - span: the smallest Metadata.first_hw_timestamp and the largest
 *     last_hw_timestamp (profile/profile_table.h nx_profile_span);
 *   - devices (profiles that are not device profiles): the DeviceProfileList
 *     rows with a non-null device_profile_name, in table order, each with its
 *     nc_id (when an integer) and the directory query/system_summary.h
 *     nx_device_profile_dir finds for it (NULL when it refuses the name);
 *   - relative_time: SystemProfileMetadata's first_ts ends with
 *     NX_RELATIVE_TIME_SUFFIX (schema.h): some framework trace's times count
 *     from the trace start, not the Unix epoch;
 *   - annotations: the counts of saved markers and regions (profile/annotations.h;
 *     0 and 0 without a file);
 *   - error: what could not be read (the directory, Metadata, DeviceProfileList,
 *     the annotations file),
 *     naming the file; several messages are joined by "; ". The rest is
 *     answered all the same.
 */
#ifndef NX_QUERY_PROFILE_INFO_H
#define NX_QUERY_PROFILE_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nx_profile_device {
    char *name;              /* device_profile_name */
    bool has_nc;
    int64_t nc_id;
    char *dir;               /* malloc'd; NULL when the name is refused */
} nx_profile_device;

typedef struct nx_profile_info {
    bool readable, device;
    uint64_t size;
    char **tables;
    size_t n_tables;
    bool has_span;
    int64_t first_ts, last_ts;
    bool relative_time;
    size_t n_markers, n_regions;   /* saved annotations */
    nx_profile_device *devices;
    size_t n_devices;
    char *error;             /* NULL, or the messages */
} nx_profile_info;

/* Reads what profile_dir holds (rules above). 0 (*out filled; nx_profile_info_free
 * it), or -1 when out of memory. */
int nx_profile_info_read(const char *profile_dir, nx_profile_info *out);
void nx_profile_info_free(nx_profile_info *p);

#endif
