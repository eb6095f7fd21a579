/*
 * api_nki.c — the NKI answers of a device profile over HTTP (docs/api.md):
 *   the "nki" member of an Instruction's /event (query/nki_context.h), and
 *   /api/profiles/<name>/source, the time per NKI source line
 *   (query/nki_lines.h), its lines cut at `limit` (default 500), kept in the
 *   response cache like /tracks (a whole scan of Instruction).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_table.h"
#include "query/event.h"
#include "query/nki_context.h"
#include "query/nki_lines.h"
#include "server/api_internal.h"
#include "server/response_cache.h"
#include "util/json.h"

static void opt_cstr(nx_strbuf *b, const char *s)
{
    if (s)
        nx_json_put_cstr(b, s);
    else
        nx_strbuf_puts(b, "null");
}

static void opt_i64(nx_strbuf *b, bool has, int64_t v)
{
    if (has)
        nx_json_put_i64(b, v, true);
    else
        nx_strbuf_puts(b, "null");
}

/* {"file","line"} members of a location, after the object's first member. */
static void location(nx_strbuf *b, const nx_nki_index *x, size_t file, bool has_line, int64_t line)
{
    nx_strbuf_puts(b, ",\"file\":");
    opt_cstr(b, nx_nki_str(x, file));
    nx_strbuf_puts(b, ",\"line\":");
    opt_i64(b, has_line, line);
}

static void stack(nx_strbuf *b, const nx_nki_context *c)
{
    nx_strbuf_puts(b, ",\"stack\":[");
    for (size_t i = 0; i < c->n_frames; i++) {
        const nx_nki_frame *f = c->frames[i];
        nx_strbuf_puts(b, i ? ",{\"id\":" : "{\"id\":");
        nx_json_put_i64(b, f->id, true);
        nx_strbuf_puts(b, ",\"function\":");
        opt_cstr(b, nx_nki_str(c->idx, f->function));
        location(b, c->idx, f->file, f->has_line, f->line);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_putc(b, ']');
}

static void iteration(nx_strbuf *b, const nx_nki_context *c)
{
    nx_strbuf_puts(b, ",\"iteration\":[");
    for (size_t i = 0; i < c->n_iters; i++) {
        const nx_nki_iter *v = c->iters[i];
        nx_strbuf_puts(b, i ? ",{\"id\":" : "{\"id\":");
        nx_json_put_i64(b, v->id, true);
        nx_strbuf_puts(b, ",\"name\":");
        opt_cstr(b, nx_nki_str(c->idx, v->name));
        nx_strbuf_puts(b, ",\"value\":");
        opt_i64(b, v->has_value, v->value);
        location(b, c->idx, v->file, v->has_line, v->line);
        nx_strbuf_putc(b, '}');
    }
    nx_strbuf_putc(b, ']');
}

static void context_json(nx_strbuf *b, const nx_nki_context *c)
{
    nx_strbuf_puts(b, ",\"nki\":{\"kernel_instruction_name\":");
    opt_cstr(b, c->kernel_instruction_name);
    nx_strbuf_puts(b, ",\"source\":");
    if (c->has_source) {
        nx_strbuf_puts(b, "{\"function\":");
        opt_cstr(b, c->function);
        nx_strbuf_puts(b, ",\"file\":");
        opt_cstr(b, c->file);
        nx_strbuf_puts(b, ",\"line\":");
        opt_i64(b, c->has_line, c->line);
        nx_strbuf_putc(b, '}');
    } else {
        nx_strbuf_puts(b, "null");
    }
    stack(b, c);
    iteration(b, c);
    nx_strbuf_puts(b, ",\"assembly\":");
    if (c->assembly) {
        nx_strbuf_puts(b, "{\"instruction_id\":");
        nx_json_put_i64(b, c->assembly->id, true);
        nx_json_put_i64_member(b, "compiler_pc", c->assembly->pc, true);
        nx_strbuf_puts(b, ",\"opcode\":");
        opt_cstr(b, nx_nki_str(c->idx, c->assembly->opcode));
        nx_strbuf_puts(b, ",\"operands\":");
        opt_cstr(b, nx_nki_str(c->idx, c->assembly->operands));
        nx_strbuf_putc(b, '}');
    } else {
        nx_strbuf_puts(b, "null");
    }
    nx_strbuf_putc(b, '}');
}

int nx_api_nki_member(nx_strbuf *b, const char *dir, const nx_event *ev, nx_error *err)
{
    nx_nki_context c;
    int rc = nx_nki_context_of(dir, ev, &c, err);
    if (rc == NX_PROFILE_TABLE_ABSENT)
        return 0;
    if (rc != 0)
        return -1;
    context_json(b, &c);
    nx_nki_context_free(&c);
    return 0;
}

static void source_line(nx_strbuf *b, const nx_nki_lines *s, size_t i)
{
    nx_nki_line_time l;
    nx_nki_lines_at(s, i, &l);
    nx_strbuf_puts(b, i ? ",{\"file\":" : "{\"file\":");
    if (l.file)
        nx_json_put_string(b, l.file, l.file_len);
    else
        nx_strbuf_puts(b, "null");
    nx_strbuf_puts(b, ",\"line\":");
    opt_i64(b, l.has_line, l.line);
    nx_json_put_i64_member(b, "count", l.count, true);
    nx_json_put_i64_member(b, "self_ns", l.self_ns, true);
    nx_json_put_i64_member(b, "total_ns", l.total_ns, true);
    nx_json_put_f64_member(b, "self_percent", nx_nki_lines_share(s, l.self_ns));
    nx_json_put_f64_member(b, "total_percent", nx_nki_lines_share(s, l.total_ns));
    nx_strbuf_putc(b, '}');
}

/* The /source answer of dir, its lines cut at limit: 0 (b filled), or the HTTP
 * status with err. */
static unsigned source_json(const char *dir, int64_t limit, nx_strbuf *b, nx_error *err)
{
    nx_nki_lines s;
    int rc = nx_nki_lines_run(dir, &s, err);
    if (rc == NX_PROFILE_TABLE_ABSENT) {
        nx_error_set(err, "the profile has no NKI source data (Instruction and KernelInstructions tables)");
        return MHD_HTTP_NOT_FOUND;
    }
    if (rc != 0)
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    nx_strbuf_puts(b, "{\"instructions\":");
    nx_json_put_i64(b, s.instructions, true);
    nx_json_put_i64_member(b, "instruction_ns", s.instruction_ns, true);
    nx_json_put_i64_member(b, "attributed", s.attributed, true);
    nx_json_put_i64_member(b, "attributed_ns", s.attributed_ns, true);
    nx_json_put_f64_member(b, "coverage_percent", nx_nki_lines_share(&s, s.attributed_ns));
    size_t n = nx_nki_lines_count(&s);
    nx_json_put_i64_member(b, "total_lines", (int64_t)n, true);
    nx_strbuf_puts(b, ",\"lines\":[");
    for (size_t i = 0; i < n && i < (size_t)limit; i++)
        source_line(b, &s, i);
    nx_strbuf_puts(b, "]}");
    nx_nki_lines_free(&s);
    return 0;
}

enum MHD_Result nx_api_source(nx_api_req *r, const char *name)
{
    enum MHD_Result res;
    int64_t limit;
    if (nx_api_int_param(r, "limit", false, 500, 1, 100000, &limit, &res) < 0)
        return res;
    char *dir;
    if (nx_api_profile_dir(r, name, &dir, &res) < 0)
        return res;
    /* A scan of the whole Instruction table: kept in the response cache, keyed
     * on every file of the profile (taken before the tables are read). */
    char *fp = nx_response_cache_fingerprint(dir);
    char key[48];
    snprintf(key, sizeof key, "source?limit=%lld", (long long)limit);
    nx_strbuf b = NX_STRBUF_INIT;
    unsigned status = 0;
    nx_error err = {0};
    if (!fp || !nx_response_cache_get(dir, fp, key, &b)) {
        status = source_json(dir, limit, &b, &err);
        if (status == 0 && fp && !nx_strbuf_failed(&b))
            nx_response_cache_put(dir, fp, key, b.data, b.len);
    }
    free(fp);
    free(dir);
    if (status != 0) {
        nx_strbuf_free(&b);
        return nx_api_error(r, status, "%s", err.msg);
    }
    return nx_api_json(r, MHD_HTTP_OK, &b);
}
