/* thread_name.c — thread names for per-thread tools (see thread_name.h). */
#define _GNU_SOURCE /* pthread_setname_np */
#include "process/thread_name.h"

#include <stdio.h>

void nx_thread_name(pthread_t t, const char *name)
{
    char cut[16];
    snprintf(cut, sizeof cut, "%s", name);
    (void)pthread_setname_np(t, cut);
}
