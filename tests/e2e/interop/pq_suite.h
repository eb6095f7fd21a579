/* pq_suite.h — shared by pq_suite.c (writes the interop suite) and pq_dump.c
 * (reads a file with nxprof's reader): the JSON value forms both print. */
#ifndef NX_PQ_SUITE_H
#define NX_PQ_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/parquet.h"
#include "util/strbuf.h"

void pqs_json_string(nx_strbuf *b, const char *s, size_t n);
void pqs_json_double(nx_strbuf *b, double d);
void pqs_json_float(nx_strbuf *b, float f);
void pqs_json_int64(nx_strbuf *b, int64_t v);
const char *pqs_type_json(nxpq_type t);

/* `pq_suite dump ARGS...`: returns the process exit code (77: no reader built). */
int pqs_dump(int argc, char **argv);

#endif
