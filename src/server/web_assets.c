/*
 * web_assets.c — lookup over the embedded viewer files (see web_assets.h).
 *
 * The table itself is generated at build time (tools/gen_web_assets.c) sorted by path, so
 * nx_web_asset_find is a binary search with exact, case-sensitive comparison; "/" is
 * looked up as "/index.html". Nothing here touches the file system.
 */
#include "server/web_assets.h"

#include <string.h>

extern const nx_web_asset nx_web_asset_table[];
extern const size_t nx_web_asset_count;

const nx_web_asset *nx_web_asset_find(const char *path)
{
    if (!path || !*path)
        return NULL;
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    size_t lo = 0, hi = nx_web_asset_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(path, nx_web_asset_table[mid].path);
        if (c == 0)
            return &nx_web_asset_table[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const nx_web_asset *nx_web_assets_all(size_t *count)
{
    if (count)
        *count = nx_web_asset_count;
    return nx_web_asset_table;
}
