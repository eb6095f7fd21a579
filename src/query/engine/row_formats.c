/*
 * row_formats.c — the list of export formats (row_writer.h): a new format is
 * its row writer plus one line here.
 */
#include <string.h>

#include "query/engine/row_writer.h"

static const nx_row_format FORMATS[] = {
    {"csv", ".csv", true, nx_csv_rows_open},
    {"json", ".json", true, nx_json_rows_open},
    {"perfetto", ".pftrace", false, nx_perfetto_rows_open},

};

const nx_row_format *nx_row_format_at(size_t i)
{
    return i < sizeof FORMATS / sizeof FORMATS[0] ? &FORMATS[i] : NULL;
}

const nx_row_format *nx_row_format_find(const char *name)
{
    for (size_t i = 0; nx_row_format_at(i); i++)
        if (strcmp(FORMATS[i].name, name) == 0)
            return &FORMATS[i];
    return NULL;
}
