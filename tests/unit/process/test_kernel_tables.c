/*
 * test_kernel_tables.c — process/device/kernel_tables.c end to end on a synth capture:
 * with the program's NKI sections and ASSEMBLY, the four tables are written
 * (row counts: the records times the cores, the listing once); the same capture
 * with its program rewritten as a 1.1 file without them (the same string table,
 * its hash, name and the traces' program hash updated, as an older compiler
 * would have written it)
 * processes with none of the four files and no Warning table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "capture/program_file.h"
#include "parquet/parquet.h"
#include "process/processor.h"
#include "synth/synth.h"
#include "system_fixture.h"

static char tmp[64], session[512];

/* The folder of the first program file under dir, into session. */
static bool find_session(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            found = find_session(path);
        else if (strncmp(e->d_name, "program_", 8) == 0)
            found = snprintf(session, sizeof session, "%s", dir) > 0;
    }
    closedir(d);
    return found;
}

static void process(const char *cap, const char *out)
{
    nx_process_options po = {.capture_dir = cap, .output_file = out};
    nx_process_stats ps;
    nx_error err = {0};
    if (nx_process_run(&po, &ps, &err) != 0)
        fail_msg("process: %s", err.msg);
    nx_process_stats_free(&ps);
}

static int64_t rows_of(const char *prof, const char *table)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.parquet", prof, table);
    if (access(path, F_OK) != 0)
        return -1;
    nx_error err = {0};
    nxpq_reader *r = nxpq_reader_open(path, &err);
    assert_non_null(r);
    int64_t n = nxpq_reader_num_rows(r);
    nxpq_reader_close(r);
    return n;
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void write_all(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Rewrites the session's program without the NKI sections and ASSEMBLY, as a
 * 1.1 file, and points the traces at it. */
static void strip_program(void)
{
    DIR *d = opendir(session);
    assert_non_null(d);
    char prog_path[1024] = "";
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "program_", 8) == 0)
            snprintf(prog_path, sizeof prog_path, "%s/%s", session, e->d_name);
    nx_program *p;
    nx_error err;
    assert_int_equal(nx_program_open(prog_path, &p, NULL, &err), 0);
    assert_true(p->n_nki_instrs > 0 && p->n_asm_lines > 0);
    nx_program old = *p;
    old.n_nki_frames = old.n_nki_iters = old.n_nki_instrs = old.n_asm_lines = 0;
    old.nki_frames = NULL, old.nki_iters = NULL, old.nki_instrs = NULL, old.asm_lines = NULL;
    /* Every string of the table, in its order: the strings the records left out
     * used keep their place, so the offsets trace records refer to stay valid. */
    const char **strings = malloc(p->strings_size * sizeof *strings);
    assert_non_null(strings);
    size_t n_strings = 0;
    for (uint64_t at = 1; at < p->strings_size; at += strlen(p->strings + at) + 1)
        strings[n_strings++] = p->strings + at;
    old.extra_strings = strings, old.n_extra_strings = n_strings;
    unsigned char *data;
    size_t n;
    uint64_t hash;
    assert_int_equal(nx_program_encode(&old, &data, &n, &hash, NULL, &err), 0);
    uint16_t minor = 1;
    memcpy(data + 10, &minor, 2);
    hash = XXH3_64bits(data, n);
    char name[NX_CAP_NAME_MAX], path[1024];
    nx_cap_program_name(hash, name);
    snprintf(path, sizeof path, "%s/%s", session, name);
    assert_int_equal(unlink(prog_path), 0);
    write_all(path, data, n);
    free(data);
    free(strings);
    nx_program_close(p);
    rewinddir(d);
    char traces[8][256];
    size_t n_traces = 0;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "trace_", 6) == 0 && n_traces < 8)
            snprintf(traces[n_traces++], sizeof traces[0], "%s", e->d_name);
    closedir(d);
    assert_true(n_traces > 0);
    for (size_t i = 0; i < n_traces; i++) {
        char from[1024], to[1024];
        snprintf(from, sizeof from, "%s/%.255s", session, traces[i]);
        snprintf(to, sizeof to, "%s/trace_%016llx%s", session, (unsigned long long)hash, traces[i] + 6 + 16);
        size_t len;
        char *t = read_all(from, &len);
        memcpy(t + 24, &hash, 8);   /* the header's program_hash */
        assert_int_equal(unlink(from), 0);
        write_all(to, t, len);
        free(t);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/nxkernel-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    char cap[128];
    snprintf(cap, sizeof cap, "%s/cap", tmp);
    nx_synth_options so = {.out_dir = cap, .preset = NX_SYNTH_TINY, .cores = 1, .seed = 3, .system = false};
    nx_synth_stats ss;
    nx_error err = {0};
    if (nx_synth_run(&so, &ss, &err) != 0)
        return fprintf(stderr, "synth: %s\n", err.msg), -1;
    nx_synth_stats_free(&ss);
    return find_session(cap) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fixture_rmrf(tmp);
    return 0;
}

static void with_sections(void **state)
{
    (void)state;
    nx_program *p;
    nx_error cerr;
    char cap[128], prof[128], prog[1024] = "";
    snprintf(cap, sizeof cap, "%s/cap", tmp);
    snprintf(prof, sizeof prof, "%s/with", tmp);
    DIR *d = opendir(session);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "program_", 8) == 0)
            snprintf(prog, sizeof prog, "%s/%s", session, e->d_name);
    closedir(d);
    assert_int_equal(nx_program_open(prog, &p, NULL, &cerr), 0);
    process(cap, prof);
    assert_int_equal(rows_of(prof, "KernelStackFrames"), (int64_t)p->n_nki_frames);
    assert_int_equal(rows_of(prof, "KernelIterationVariables"), (int64_t)p->n_nki_iters);
    assert_int_equal(rows_of(prof, "KernelInstructions"), (int64_t)p->n_nki_instrs);
    assert_int_equal(rows_of(prof, "AssemblyInstruction"), (int64_t)p->n_instrs);
    assert_int_equal(rows_of(prof, "Warning"), -1);
    nx_program_close(p);
}

static void without_sections(void **state)
{
    (void)state;
    strip_program();
    char cap[128], prof[128];
    snprintf(cap, sizeof cap, "%s/cap", tmp);
    snprintf(prof, sizeof prof, "%s/without", tmp);
    process(cap, prof);
    assert_true(rows_of(prof, "Instruction") > 0);
    const char *const none[] = {"KernelStackFrames", "KernelIterationVariables", "KernelInstructions",
                                "AssemblyInstruction", "Warning"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (rows_of(prof, none[i]) != -1)
            fail_msg("%s written for a program without the NKI sections", none[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(with_sections), cmocka_unit_test(without_sections)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
