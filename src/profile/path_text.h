/*
 * path_text.h — paths as strings: one built with printf, and a path's last
 * component. The layout, the manifest, the publish, the real-path rules and
 * the annotations all build the paths they name this way; a module of its own
 * so that none of them reaches into another (the publish, say) for it.
 */
#ifndef NX_PATH_TEXT_H
#define NX_PATH_TEXT_H

/* printf into a fresh heap string (a path); NULL when memory runs out. */
char *nx_path_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last component of the path dir, trailing slashes ignored, malloc'd; NULL
 * when it has none ("/", "") or memory runs out. */
char *nx_path_last_component(const char *dir);

#endif
