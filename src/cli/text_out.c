/* text_out.c — JSON/CSV value writers for the query commands (rules in text_out.h). */
#include "cli/text_out.h"

#include <math.h>
#include <string.h>

void nx_out_json_string(FILE *out, const char *s, size_t len)
{
    putc('"', out);
    size_t run = 0; /* bytes [i - run, i) need no escaping: write them in one go */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            run++;
            continue;
        }
        fwrite(s + i - run, 1, run, out);
        run = 0;
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default: fprintf(out, "\\u%04x", c); break;
        }
    }
    fwrite(s + len - run, 1, run, out);
    putc('"', out);
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
    if (!isfinite(v))
        fputs("null", out);
    else
        fprintf(out, is_double ? "%.17g" : "%.9g", v);
}
