/*
 * replay_main.c — a main() for a fuzz harness without libFuzzer: feeds every file
 * named on the command line (a directory: every regular file in it, in name order;
 * a missing directory counts as empty) to LLVMFuzzerTestOneInput once, after
 * LLVMFuzzerInitialize when the harness has one. A harness that finds a problem
 * aborts, so a crash or a sanitizer report fails the replay; otherwise it prints
 * how many inputs it replayed and exits 0.
 *
 * CMake links one replay_<harness> per harness with the normal compiler (gcc), so
 * `make check` replays tests/fuzz/regressions/<harness>/ and the seed corpus
 * tests/fuzz/corpus/<harness>/ (and `make asan` does so under ASan and UBSan).
 *
 *   replay_<harness> FILE|DIR...
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long replayed;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "replay: out of memory\n");
            fclose(f);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *g = realloc(buf, cap *= 2);
        if (!g)
            free(buf);
        buf = g;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    /* As libFuzzer does: the input in a buffer of exactly its size. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    replayed++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0; /* no regressions (yet) for this harness */
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **g = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
            if (!g)
                break;
            names = g;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *p = malloc(len);
        snprintf(p, len, "%s/%s", path, names[i]);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && replay_file(p) != 0)
            rc = -1;
        free(p);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i]) != 0)
            rc = 1;
    printf("replay: %lu inputs replayed\n", replayed);
    return rc;
}
