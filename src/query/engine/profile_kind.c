/*
 * profile_kind.c — which kind a profile directory is (see profile_kind.h).
 */
#include "query/engine/profile_kind.h"

#include <stdio.h>
#include <sys/stat.h>

/* Whether dir holds `table` (either file layout). */
static bool has_table(const char *dir, const char *table)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.parquet", dir, table);
    if (stat(path, &st) == 0)
        return true;
    snprintf(path, sizeof path, "%s/%s_0.parquet", dir, table);
    return stat(path, &st) == 0;
}

bool nx_profile_is_system(const char *dir)
{
    return !has_table(dir, "Instruction") && has_table(dir, "SystemProfileEvents");
}
