/* bench/framework/json_layers.h — what each candidate JSON layer of json_layers.c extracts
 * from a trace.json held in memory: the work nxprof's Chrome reader needs from the layer
 * (every event's ph, name, cat, pid, tid, id as text, ts and dur as numbers, args as its raw
 * JSON text), folded into sums so that no layer can skip any of it. */
#ifndef NXPROF_BENCH_JSON_LAYERS_H
#define NXPROF_BENCH_JSON_LAYERS_H

#include <stddef.h>

struct scan_result {
    size_t events;      /* objects in traceEvents */
    size_t text_bytes;  /* bytes of ph, name, cat, pid, tid and id values */
    size_t args_bytes;  /* bytes of the raw args text (0 where a layer cannot give it) */
    double ts_sum;      /* sum of ts and dur */
};

/* 0 on success, else -1 with a message on stderr. buf has len bytes of JSON followed by at
 * least 64 bytes of padding (simdjson reads past the end). */
int scan_simdjson(const char *buf, size_t len, struct scan_result *r);

#endif
