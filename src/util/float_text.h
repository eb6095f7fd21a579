/*
 * float_text.h — the one formatter of floating-point values as text: the
 * shortest decimal that reads back (strtod/strtof) as the same value, in
 * printf %g notation (so 0.1, 1e+300, 3.4028235e+38). Non-finite values as
 * "nan", "inf", "-inf". Used by the CSV writer (query/engine/csv.h) and, with
 * non-finite values as null, by util/json.h's number writers.
 */
#ifndef NX_FLOAT_TEXT_H
#define NX_FLOAT_TEXT_H

#include <stddef.h>

/* The most bytes either formatter writes, NUL included. */
#define NX_FLOAT_TEXT_MAX 32

/* Text of v into buf (NX_FLOAT_TEXT_MAX bytes), NUL-terminated; returns its length. */
size_t nx_f64_text(char *buf, double v);
/* Text of the float v: the shortest that reads back as the same float. */
size_t nx_f32_text(char *buf, float v);

#endif
