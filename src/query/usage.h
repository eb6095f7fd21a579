/*
 * usage.h — the utilisation lanes of a profile over a time window: per samples
 * table (DmaUsage, HbmUsage, SbufUsage, PsumUsage, CpuUsage, HostMemUsage,
 * SystemProfileHbmUsage) its series, each reduced to at most one sample per
 * pixel bucket. Behind GET /api/profiles/<n>/usage (docs/api.md) and the
 * viewer's lanes (/api/schema "viewer" "usage").
 *
 * The lanes (nx_usage_lane_at, in this order, which is also the order of the
 * answer's series whatever the order asked):
 *   table                  lane     label            value               unit              key                   gauge before
 *   DmaUsage               dma      DMA throughput   current_throughput  bytes_per_second  pcore_idx             no    no
 *   HbmUsage               hbm      HBM usage        current_throughput  bytes_per_second  pcore_idx             no    no
 *   SbufUsage              sbuf     SBUF usage       avg_util_percent    percent           pcore_idx             no    yes
 *   PsumUsage              psum     PSUM usage       avg_util_percent    percent           pcore_idx             no    yes
 *   PendingDma             pending  Pending DMA      value               "" (a count)      pcore_idx             yes   yes
 *   CpuUsage               cpu      CPU (host)       util_percent        percent           cpu_id ("average")    yes   yes
 *   HostMemUsage           hostmem  Host memory      used_percent        percent           none: "host"          yes   yes
 *   SystemProfileHbmUsage  devhbm   Device HBM       total_bytes         bytes             device_idx, hbm_idx   yes   yes
 * series_what (what one series is): "core" for the device tables, "CPU",
 * "host", "HBM". gauge: the table holds plain samples every few ms, a value
 * holding until the next sample (PendingDma: the count of DMA transfers in flight from each
 * change point on); the other device tables hold per-10-us buckets.
 *
 * Rules:
 * - value: one column per table, FLOAT or DOUBLE (read as double) or INT64 or INT32
 *   (SystemProfileHbmUsage, PendingDma: compared and reported as integers); a table whose
 *   value column has another type, or whose timestamp is not INT64, has no series.
 * - Series key: one series per distinct key among the rows used. The key
 *   columns are INT64 (pcore_idx, device_idx, hbm_idx) or one STRING (cpu_id);
 *   a null value, or a key column the file lacks or holds in another type,
 *   makes that part of the key null: its own series. CpuUsage: when any row
 *   scanned (every row with timestamp <= end, since the table reports "before")
 *   has cpu_id "average", only the "average" rows are used (one series, the
 *   mean over all CPUs); otherwise every cpu_id is its own series.
 * - label (labelled lanes: CpuUsage, HostMemUsage, SystemProfileHbmUsage): the
 *   key as text: the cpu_id (no label for a null one), "host", "device <d> hbm
 *   <h>" (a null part as "null"). The device tables' series have no label.
 * - Points: rows with timestamp in [start, end] (null timestamps or values
 *   skipped); with L = end - start + 1 a sample's bucket is
 *   floor((t - start) * width / L) (window.h's sampler rule), and each occupied
 *   bucket keeps the sample with the largest value (ties: the earliest in file
 *   order); points in bucket order.
 * - before (the lanes marked so): the sample with the largest timestamp < start
 *   (ties: the last in file order), the value in force at start; found by a scan
 *   of the table from its start (the other tables are read only over the window).
 *   A series with a "before" but no point in the window is still answered.
 * - Series order: first appearance among the rows used (rows before start first).
 * - At most NX_USAGE_MAX_SERIES series per table, else an error (CpuUsage: only
 *   when no "average" row was scanned).
 * Memory: width points per series while scanning.
 */
#ifndef NX_QUERY_USAGE_H
#define NX_QUERY_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"

#define NX_USAGE_LANES 8
#define NX_USAGE_MAX_SERIES 256
#define NX_USAGE_MAX_KEYS 2

typedef struct nx_usage_lane {
    const char *table, *lane, *label;
    const char *value, *unit;                 /* the value column and its catalogue unit */
    const char *keys[NX_USAGE_MAX_KEYS + 1];  /* key columns, NULL-ended */
    bool gauge, before;
    const char *series_what;
} nx_usage_lane;

/* Lane i < NX_USAGE_LANES in order, or NULL; the lane of a table, or NULL. */
const nx_usage_lane *nx_usage_lane_at(size_t i);
const nx_usage_lane *nx_usage_lane_find(const char *table);

/* One part of a series' key. */
typedef struct nx_usage_key {
    bool null;
    int64_t i;                 /* INT64 keys */
    char *s;                   /* the STRING key: malloc'd, NUL-terminated (s[len]) */
    size_t len;
} nx_usage_key;

typedef union nx_usage_value {
    double f;
    int64_t i;                 /* is_int series */
} nx_usage_value;

typedef struct nx_usage_series {
    const nx_usage_lane *lane;
    nx_usage_key key[NX_USAGE_MAX_KEYS];  /* one per lane->keys entry */
    bool labelled;
    char *label;                          /* labelled: malloc'd text, NULL for a null label */
    bool is_int;                          /* values are INT64 */
    bool has_before;                      /* lane->before and a sample before start */
    int64_t before_t;
    nx_usage_value before_v;
    size_t n;                             /* points */
    int64_t *t;                           /* absolute timestamps, ns */
    nx_usage_value *v;
} nx_usage_series;

typedef struct nx_usage {
    nx_usage_series *series;
    size_t n;
} nx_usage;

/* The series of the given tables (lane tables, none twice) of profile_dir over
 * [start, end] (start <= end) at width >= 1 buckets. A table the profile lacks
 * gives no series. 0 (*out filled; nx_usage_free it) or -1 with err naming the
 * table. */
int nx_usage_read(const char *profile_dir, const char *const *tables, size_t n_tables, int64_t start, int64_t end,
                  uint32_t width, nx_usage *out, nx_error *err);
void nx_usage_free(nx_usage *u);

#endif
