/* text_out.c — JSON/CSV value writers for the query commands (rules in text_out.h). */
#include "cli/text_out.h"

#include <math.h>
#include <string.h>

#include "util/json.h"

void nx_out_json_string(FILE *out, const char *s, size_t len)
{
    /* Escaped a character at a time (util/json.h) through a small buffer, so a
     * long value needs no allocation. */
    char buf[512];
    size_t k = 0, used;
    buf[k++] = '"';
    for (size_t i = 0; i < len; i += used) {
        if (k > sizeof buf - NX_JSON_ESCAPE_MAX - 1) {
            fwrite(buf, 1, k, out);
            k = 0;
        }
        k += nx_json_escape_char(s + i, len - i, buf + k, &used);
    }
    buf[k++] = '"';
    fwrite(buf, 1, k, out);
}

void nx_out_csv_field(FILE *out, const char *s, size_t len)
{
    bool quote = false;
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (!quote) {
        fwrite(s, 1, len, out);
        return;
    }
    putc('"', out);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            putc('"', out);
        putc(s[i], out);
    }
    putc('"', out);
}

void nx_out_json_real(FILE *out, double v, bool is_double)
{
    char t[NX_FLOAT_TEXT_MAX];
    fputs(is_double ? nx_json_f64_text(t, v) : nx_json_f32_text(t, (float)v), out);
}
