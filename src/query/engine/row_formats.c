/*
 * row_formats.c — the list of export formats (row_writer.h): a new format is
 * its row writer (a file defining its nx_row_format) plus one line here, with
 * its extern.
 */
#include <string.h>

#include "query/engine/row_writer.h"

extern const nx_row_format nx_format_csv;
extern const nx_row_format nx_format_json;
extern const nx_row_format nx_format_perfetto;

static const nx_row_format *const FORMATS[] = {
    &nx_format_csv,
    &nx_format_json,
    &nx_format_perfetto,
};

const nx_row_format *nx_row_format_at(size_t i)
{
    return i < sizeof FORMATS / sizeof FORMATS[0] ? FORMATS[i] : NULL;
}

const nx_row_format *nx_row_format_find(const char *name)
{
    for (size_t i = 0; nx_row_format_at(i); i++)
        if (strcmp(FORMATS[i]->name, name) == 0)
            return FORMATS[i];
    return NULL;
}
