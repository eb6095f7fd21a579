/* sampled_events.c — the release of what a sampled pass kept (sampled_events.h). */
#include "query/engine/sampled_events.h"

#include <stdlib.h>
#include <string.h>

#include "profile/timeline_index.h"

void nx_sampled_free(nx_sampled *s)
{
    nx_tlx_close(s->index);
    for (size_t i = 0; i < s->n_tracks; i++)
        free(s->names[i]);
    free(s->names);
    free(s->name_len);
    free(s->samples);
    free(s->depth);
    memset(s, 0, sizeof *s);
}
