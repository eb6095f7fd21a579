/*
 * text_out.h — small writers shared by the commands that print query results
 * (top, summary): JSON string literals, RFC 4180 CSV fields, and numbers in a
 * form that round-trips.
 *
 * JSON strings: util/json.h's escaping (control bytes as \u00XX, invalid UTF-8
 * as \ufffd).
 * CSV fields: quoted only when they hold a comma, a double quote, CR or LF; a quote
 * inside is doubled. Floats: "%.9g" for FLOAT and "%.17g" for DOUBLE (both round-trip);
 * NaN and infinities have no JSON spelling and are written as null.
 */
#ifndef NX_CLI_TEXT_OUT_H
#define NX_CLI_TEXT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

void nx_out_json_string(FILE *out, const char *s, size_t len);
void nx_out_csv_field(FILE *out, const char *s, size_t len);
/* JSON number for a float (is_double false) or double value, as util/json.h
 * writes it: shortest round-trip text, null when not finite. */
void nx_out_json_real(FILE *out, double v, bool is_double);

#endif
