/*
 * fuzz_fixture.h — what the fuzz harnesses share: a scratch directory, files
 * written into it, and a fixture made once per process: the `synth --preset tiny`
 * capture (1 execution, 2 cores, seed 1: byte for byte what
 * `nxprof synth --preset tiny --events 1` writes, so tests/fuzz/make_corpus.sh's
 * seeds belong to it) and its profiles, processed into a data path:
 *
 *   <data>/profiles/global/tiny@latest             system profile
 *   <data>/profiles/global/tiny-nd0-nc{0,1}@latest  device profiles
 *   <data>/profiles/global/nested@latest           system profile with devices/<name>/
 *   <data>/profiles/global/broken@latest           tiny-nd0-nc0 with Instruction.parquet
 *                                                  cut short and its index damaged
 *
 * Everything lives in one directory under $TMPDIR (or /tmp), removed at exit; a
 * run that crashes leaves it behind (tests/fuzz/run.sh gives each harness a
 * TMPDIR of its own and removes it). Any failure to build the fixture aborts:
 * a harness without its fixture would fuzz nothing.
 */
#ifndef NX_FUZZ_FIXTURE_H
#define NX_FUZZ_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

/* The process's scratch directory (created on first use). */
const char *nxfuzz_scratch(void);
/* Writes data to <scratch>/<name> (replacing it) and returns its path (static
 * storage per name slot: valid until the next call with the same name). */
const char *nxfuzz_write(const char *name, const uint8_t *data, size_t size);

/* The fixture (built on first use). */
const char *nxfuzz_session_dir(void);   /* the capture session directory */
const char *nxfuzz_program_path(void);  /* its program_<hash>.nxprog */
const char *nxfuzz_data_path(void);     /* the data path above */
/* The directory of profile `name` ("tiny-nd0-nc0", ...) inside the data path. */
const char *nxfuzz_profile_dir(const char *name);

/* Aborts (after printing why) unless ok: a harness's invariant. */
#define NXFUZZ_CHECK(ok) nxfuzz_check((ok), #ok, __FILE__, __LINE__)
void nxfuzz_check(int ok, const char *what, const char *file, int line);

#endif
