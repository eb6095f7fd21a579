/*
 * web_assets.h — the viewer's static files (the files under web/), embedded into the binary at build time.
 *
 * tools/gen_web_assets.c runs during the build, reads every file listed for it in
 * CMakeLists.txt (web/index.html, web/app.js, web/style.css, ...) and writes
 * <build>/generated/web_assets_data.c: one nx_web_asset per file, with the bytes
 * copied verbatim (no minification, no compression) and a content type chosen from the
 * file extension (.html text/html, .js text/javascript, .css text/css, .svg image/svg+xml,
 * .png image/png, .json application/json, .ico image/x-icon, anything else
 * application/octet-stream; text types carry "; charset=utf-8").
 *
 * Paths are URL paths: "/" followed by the file's path relative to web/ ("/index.html",
 * "/app.js"). "/" itself is an alias of "/index.html". No other aliasing, no
 * normalisation: the server must reject or 404 anything else, so a request path can never
 * name a file outside the embedded set.
 */
#ifndef NX_WEB_ASSETS_H
#define NX_WEB_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *path;          /* URL path, e.g. "/app.js" */
    const char *content_type;  /* e.g. "text/javascript; charset=utf-8" */
    const unsigned char *data; /* the file's bytes (also NUL-terminated, not counted) */
    size_t length;             /* number of bytes */
} nx_web_asset;

/* The asset served at `path` ("/" means "/index.html"), or NULL when there is none
 * (path NULL, empty, or not an embedded file). Exact, case-sensitive match; a query
 * string must be stripped by the caller. */
const nx_web_asset *nx_web_asset_find(const char *path);

/* Every embedded asset, for listings and tests: *count receives the number. */
const nx_web_asset *nx_web_assets_all(size_t *count);

#endif
