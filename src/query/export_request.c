/*
 * export_request.c — the one export request (see export_request.h).
 */
#include "query/export_request.h"

#include <stdio.h>
#include <string.h>

#include "parquet/parquet.h"
#include "profile/profile_table.h"

static const char *const DEFAULT_TABLES[] = {"Instruction",     "DmaPacketAggregated", "DmaPacket", "CcInstruction",
                                             "SemaphoreUpdate", "SystemProfileEvents"};
#define N_DEFAULT (sizeof DEFAULT_TABLES / sizeof DEFAULT_TABLES[0])

static void use_defaults(nx_export_request *r)
{
    for (size_t i = 0; i < N_DEFAULT; i++)
        r->tables[i] = DEFAULT_TABLES[i];
    r->n_tables = N_DEFAULT;
    r->named = false;
}

const nx_export_names nx_export_cli_names = {"--start", "--end", "--width", "--no-sample", "--max-rows"};

void nx_export_request_init(nx_export_request *r, const nx_export_names *names)
{
    memset(r, 0, sizeof *r);
    r->names = names;
    r->width = NX_EXPORT_DEFAULT_WIDTH;
    r->max_rows = NX_EXPORT_DEFAULT_MAX_ROWS;
    use_defaults(r);
}

int nx_export_parse_time(const char *s, int64_t *out, bool *relative)
{
    *relative = *s == '+';
    if (*relative)
        s++;
    unsigned __int128 v = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    const char *p = s;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            if (++digits > 28)
                return -1;
            v = v * 10 + (unsigned)(*p - '0');
            frac += dot;
        } else if (*p == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    if (digits == 0 || (dot && frac == 0))
        return -1;
    static const struct { const char *unit; uint64_t mult; } UNITS[] = {
        {"", 1}, {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    uint64_t mult = 0;
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
        if (strcmp(p, UNITS[i].unit) == 0)
            mult = UNITS[i].mult;
    if (!mult)
        return -1;
    unsigned __int128 div = 1;
    for (int i = 0; i < frac; i++)
        div *= 10;
    v *= mult;
    if (v % div != 0 || v / div > (unsigned __int128)INT64_MAX)
        return -1;
    *out = (int64_t)(v / div);
    return 0;
}

int nx_export_request_set_time(nx_export_request *r, bool end, const char *text, char *msg)
{
    int64_t v;
    bool rel;
    if (nx_export_parse_time(text, &v, &rel) < 0) {
        snprintf(msg, NX_EXPORT_MSG, "bad %s '%.100s' (ns, or a number with unit ns, us, ms or s; +T from the profile's start)",
                 end ? r->names->end : r->names->start, text);
        return -1;
    }
    nx_export_request_set_ns(r, end, v);
    *(end ? &r->end_rel : &r->start_rel) = rel;
    return 0;
}

void nx_export_request_set_ns(nx_export_request *r, bool end, int64_t ns)
{
    *(end ? &r->end : &r->start) = ns;
    *(end ? &r->have_end : &r->have_start) = true;
    *(end ? &r->end_rel : &r->start_rel) = false;
}

int nx_export_request_set_width(nx_export_request *r, int64_t width, char *msg)
{
    if (width < 1 || width > NX_EXPORT_MAX_WIDTH) {
        snprintf(msg, NX_EXPORT_MSG, "bad %s %lld (1..%d pixels)", r->names->width, (long long)width,
                 NX_EXPORT_MAX_WIDTH);
        return -1;
    }
    r->width = (uint32_t)width;
    r->width_given = true;
    return 0;
}

void nx_export_request_set_no_sample(nx_export_request *r)
{
    r->no_sample = true;
}

int nx_export_request_set_max_rows(nx_export_request *r, int64_t max_rows, char *msg)
{
    if (max_rows < 1) {
        snprintf(msg, NX_EXPORT_MSG, "bad %s %lld (a whole number >= 1)", r->names->max_rows, (long long)max_rows);
        return -1;
    }
    r->max_rows = (uint64_t)max_rows;
    return 0;
}

int nx_export_request_set_tables(nx_export_request *r, const char *list, char *msg)
{
    if (strlen(list) >= sizeof r->tables_buf) {
        snprintf(msg, NX_EXPORT_MSG, "the table list is too long");
        return -1;
    }
    memcpy(r->tables_buf, list, strlen(list) + 1);
    r->n_tables = 0;
    r->named = true;
    for (char *p = r->tables_buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p) {
            snprintf(msg, NX_EXPORT_MSG, "the table list has an empty table name in '%.200s'", list);
            return -1;
        }
        if (!nx_timeline_find(p)) {
            snprintf(msg, NX_EXPORT_MSG,
                     "unknown table '%.80s' (choose from Instruction, DmaPacketAggregated, DmaPacket, "
                     "CcInstruction, SemaphoreUpdate, SystemProfileEvents, CcOp)", p);
            return -1;
        }
        for (size_t i = 0; i < r->n_tables; i++)
            if (strcmp(r->tables[i], p) == 0) {
                snprintf(msg, NX_EXPORT_MSG, "the table list names '%.80s' twice", p);
                return -1;
            }
        r->tables[r->n_tables++] = p;   /* at most NX_TIMELINE_TABLES: each known, none twice */
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static int before(const nx_export_request *r, char *msg)
{
    snprintf(msg, NX_EXPORT_MSG, "%s is before %s", r->names->end, r->names->start);
    return -1;
}

int nx_export_request_check(nx_export_request *r, char *msg)
{
    if (!r->have_start || !r->have_end) {
        snprintf(msg, NX_EXPORT_MSG, "%s is required", !r->have_start ? r->names->start : r->names->end);
        return -1;
    }
    if (r->start_rel == r->end_rel && r->end < r->start)
        return before(r, msg);
    if (r->width_given && r->no_sample) {
        snprintf(msg, NX_EXPORT_MSG, "%s and %s exclude each other", r->names->width, r->names->no_sample);
        return -1;
    }
    if (r->no_sample)
        r->width = 0;
    if (r->width && !r->start_rel && !r->end_rel && r->start == INT64_MIN && r->end == INT64_MAX) {
        snprintf(msg, NX_EXPORT_MSG, "the window is too wide to sample");
        return -1;
    }
    return 0;
}

int nx_export_request_resolve(nx_export_request *r, const char *profile_dir, char *msg)
{
    if (!r->start_rel && !r->end_rel)
        return 0;
    int64_t first, last;
    nx_error err = {0};
    if (nx_profile_span(profile_dir, &first, &last, &err) != 0) {
        snprintf(msg, NX_EXPORT_MSG, "%.120s: cannot resolve +T times: %.100s", profile_dir,
                 err.msg[0] ? err.msg : "the profile has no Metadata span");
        return -1;
    }
    if ((r->start_rel && r->start > INT64_MAX - first) || (r->end_rel && r->end > INT64_MAX - first)) {
        snprintf(msg, NX_EXPORT_MSG, "%s/%s out of range", r->names->start, r->names->end);
        return -2;
    }
    r->start += r->start_rel ? first : 0;
    r->end += r->end_rel ? first : 0;
    r->start_rel = r->end_rel = false;
    return r->end < r->start ? before(r, msg) * 2 : 0;
}
