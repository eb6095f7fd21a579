/*
 * file_map.h — read-only file mappings that survive their file shrinking underneath.
 *
 * Why: a server reads profiles (Parquet files, timeline indexes) through mmap for
 * hours, next to files other programs may change. When a mapped file is
 * truncated in place, the next read of a page past its new end raises SIGBUS,
 * which would kill the server. So every mapping made here is registered, and a
 * SIGBUS on one of its pages replaces that page with zeros (an anonymous page at
 * the same address), marks the mapping damaged and lets the read go on. Readers
 * only hand the zeros to their bounds-checked decoders (fuzzed on arbitrary
 * bytes), then ask nx_file_map_damaged() before trusting what they decoded and
 * fail that request with NX_FILE_MAP_CHANGED. A later open maps the file as it
 * is then. A SIGBUS anywhere else goes to the handler installed before, or kills
 * the process as it would have.
 *
 * Mappings are MAP_PRIVATE and PROT_READ. At most NX_FILE_MAP_SLOTS exist at
 * once; past that nx_file_map_open() fails with EMFILE and the caller reads the
 * file instead.
 */
#ifndef NX_FILE_MAP_H
#define NX_FILE_MAP_H

#include <stdbool.h>
#include <stddef.h>

#define NX_FILE_MAP_SLOTS 4096

/* The error a reader reports for a damaged mapping. */
#define NX_FILE_MAP_CHANGED "the file changed while it was read (truncated in place?): reload to see its new state"

typedef struct nx_file_map nx_file_map;

/* Maps the first size bytes (> 0) of the file open at fd. Returns NULL with
 * errno set (EMFILE when every slot is taken, else mmap's). fd may be closed
 * afterwards. */
nx_file_map *nx_file_map_open(int fd, size_t size);

const void *nx_file_map_data(const nx_file_map *m);
size_t nx_file_map_size(const nx_file_map *m);

/* True once a read touched a page past the file's end: what was read there
 * was zeros, not the file. */
bool nx_file_map_damaged(const nx_file_map *m);

void nx_file_map_close(nx_file_map *m);

#endif
