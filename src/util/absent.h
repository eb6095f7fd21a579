/*
 * absent.h — the one marker of an optional integer that was not recorded: the
 * capture formats store it (capture/program_file.h) and the row writers of
 * process turn it into a null cell (process/row.h), so it lives below both.
 */
#ifndef NX_UTIL_ABSENT_H
#define NX_UTIL_ABSENT_H

#define NX_ABSENT (-1)                  /* optional integer fields: not recorded */

#endif
