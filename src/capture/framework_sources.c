/*
 * framework_sources.c — the list of framework-event sources (framework_source.h)
 * and the choice of one by file name. A new format is a new source file plus
 * one line in the list; the first source claiming a name reads it.
 */
#include "capture/capture_util.h"
#include "capture/framework_source.h"

#include <stdio.h>
#include <string.h>

extern const nx_framework_source nx_source_chrome_json;
extern const nx_framework_source nx_source_xspace;

const nx_framework_source *const nx_framework_sources[] = {
    &nx_source_chrome_json,
    &nx_source_xspace,
};
const size_t nx_framework_source_count = sizeof nx_framework_sources / sizeof nx_framework_sources[0];

const nx_framework_source *nx_framework_source_for(const char *name)
{
    for (size_t i = 0; i < nx_framework_source_count; i++)
        for (const char *const *s = nx_framework_sources[i]->suffixes; *s; s++)
            if (nx_cap_ends_with(name, *s))
                return nx_framework_sources[i];
    return NULL;
}

void nx_framework_source_patterns(char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < nx_framework_source_count; i++) {
        for (const char *const *s = nx_framework_sources[i]->suffixes; *s; s++) {
            int n = snprintf(buf + k, cap - k, "%s*%s", k ? ", " : "", *s);
            if (n < 0 || (size_t)n >= cap - k)
                return;
            k += (size_t)n;
        }
    }
}
