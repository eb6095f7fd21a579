/*
 * api_memory.c — GET /api/profiles/<name>/memory?start=S&end=E&width=W: the Memory
 * view's answer of query/memory.h written as JSON (docs/api.md).
 *
 * {"start", "end", "width", "partitions",
 *  "sbuf": {"present", "in_window", "kept", "rects": [{"start", "end" (ns from S, so
 *           an allocation that began before the window starts below 0), "partition_lo",
 *           "partition_hi", "start_address", "end_address", "owner", "op_source_type",
 *           "opcode", "operands", "queue_name", "tensor_name", "hlo_name", "pcore_idx",
 *           "block_id" (null when null), "ordinal"}]},
 *  "hbm": {"present", "total", "skipped", "categories": [{"usage_type", "bytes"}]}}
 * Integers beyond 2^53 are decimal strings, as everywhere in the API. Over the query
 * memory budget: 503.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query/memory.h"
#include "server/api_internal.h"

static void put_opt_str(nx_strbuf *b, const char *key, const char *s)
{
    nx_strbuf_printf(b, ",\"%s\":", key);
    if (s)
        nx_json_put_cstr(b, s);
    else
        nx_strbuf_puts(b, "null");
}

static void put_opt_int(nx_strbuf *b, const char *key, bool has, int64_t v)
{
    if (has)
        nx_json_put_i64_member(b, key, v, true);
    else
        nx_strbuf_printf(b, ",\"%s\":null", key);
}

static void json_rect(nx_strbuf *b, const nx_memory_rect *r, int64_t start)
{
    nx_strbuf_puts(b, "{\"start\":");
    nx_json_i128(b, (__int128)r->start - start);
    nx_strbuf_puts(b, ",\"end\":");
    nx_json_i128(b, (__int128)r->end - start);
    nx_json_put_i64_member(b, "partition_lo", r->partition_lo, true);
    nx_json_put_i64_member(b, "partition_hi", r->partition_hi, true);
    nx_json_put_i64_member(b, "start_address", r->start_address, true);
    nx_json_put_i64_member(b, "end_address", r->end_address, true);
    put_opt_str(b, "owner", r->owner);
    put_opt_str(b, "op_source_type", r->op_source_type);
    put_opt_str(b, "opcode", r->opcode);
    put_opt_str(b, "operands", r->operands);
    put_opt_str(b, "queue_name", r->queue_name);
    put_opt_str(b, "tensor_name", r->tensor_name);
    put_opt_str(b, "hlo_name", r->hlo_name);
    put_opt_int(b, "pcore_idx", r->has_pcore_idx, r->pcore_idx);
    put_opt_int(b, "block_id", r->has_block_id, r->block_id);
    nx_json_put_i64_member(b, "ordinal", r->ordinal, true);
    nx_strbuf_putc(b, '}');
}

static void json_memory(nx_strbuf *b, const nx_memory *m, int64_t start)
{
    nx_strbuf_printf(b, ",\"partitions\":%" PRId64 ",\"sbuf\":{\"present\":%s", m->partitions,
                     m->has_sbuf ? "true" : "false");
    nx_json_put_i64_member(b, "in_window", (int64_t)m->in_window, true);
    nx_json_put_i64_member(b, "kept", (int64_t)m->kept, true);
    nx_strbuf_puts(b, ",\"rects\":[");
    for (size_t i = 0; i < m->n_rects; i++) {
        if (i)
            nx_strbuf_putc(b, ',');
        json_rect(b, &m->rects[i], start);
    }
    nx_strbuf_printf(b, "]},\"hbm\":{\"present\":%s", m->has_hbm ? "true" : "false");
    nx_json_put_i64_member(b, "total", m->hbm_total, true);
    nx_json_put_i64_member(b, "skipped", (int64_t)m->hbm_skipped, true);
    nx_strbuf_puts(b, ",\"categories\":[");
    for (size_t i = 0; i < m->n_hbm; i++) {
        nx_strbuf_puts(b, i ? ",{\"usage_type\":" : "{\"usage_type\":");
        nx_json_put_cstr(b, m->hbm[i].usage_type);
        nx_json_put_i64_member(b, "bytes", m->hbm[i].bytes, true);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_puts(b, "]}}");
}

enum MHD_Result nx_api_memory(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    int64_t start, end, width;
    if (nx_api_window_params(r, 0, &start, &end, &width, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    nx_memory m;
    nx_error err = {0};
    int rc = nx_memory_read(dir, start, end, (uint32_t)width, &m, &err);
    free(dir);
    if (rc != 0)
        return nx_api_query_failed(r, rc, &err);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_api_window_head(&b, start, end, width);
    json_memory(&b, &m, start);
    nx_memory_free(&m);
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
