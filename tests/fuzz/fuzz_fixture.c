/* fuzz_fixture.c — the scratch directory and the tiny fixture of the fuzz harnesses (fuzz_fixture.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "fuzz_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "process/processor.h"
#include "synth/synth.h"

static char scratch[PATH_MAX];
static char session[PATH_MAX], program[PATH_MAX], data_path[PATH_MAX];

void nxfuzz_check(int ok, const char *what, const char *file, int line)
{
    if (ok)
        return;
    fprintf(stderr, "%s:%d: harness invariant violated: %s\n", file, line, what);
    abort();
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz fixture: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* snprintf that aborts when the text does not fit (paths here are short). */
static void fmt(char *buf, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        die("path too long", buf);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_scratch(void)
{
    if (scratch[0])
        nftw(scratch, rm_one, 32, FTW_DEPTH | FTW_PHYS);
}

const char *nxfuzz_scratch(void)
{
    if (scratch[0])
        return scratch;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    fmt(scratch, sizeof scratch, "%s/nxfuzz.XXXXXX", tmp);
    if (!mkdtemp(scratch)) {
        int e = errno;
        scratch[0] = '\0';
        die("cannot create a scratch directory", strerror(e));
    }
    atexit(remove_scratch);
    return scratch;
}

/* Paths handed out by nxfuzz_write, one per name. */
static struct {
    char name[64];
    char path[PATH_MAX];
} slots[8];

const char *nxfuzz_write(const char *name, const uint8_t *data, size_t size)
{
    const char *dir = nxfuzz_scratch();
    int k = 0;
    while (k < 8 && slots[k].name[0] && strcmp(slots[k].name, name) != 0)
        k++;
    if (k == 8)
        die("too many scratch file names", name);
    if (!slots[k].name[0]) {
        fmt(slots[k].name, sizeof slots[k].name, "%s", name);
        fmt(slots[k].path, sizeof slots[k].path, "%s/%s", dir, name);
    }
    int fd = open(slots[k].path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        die("cannot write a scratch file", strerror(errno));
    for (size_t off = 0; off < size;) {
        ssize_t n = write(fd, data + off, size - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("cannot write a scratch file", strerror(errno));
        off += (size_t)n;
    }
    if (close(fd) != 0)
        die("cannot write a scratch file", strerror(errno));
    return slots[k].path;
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out)
        die("cannot copy", from);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            die("cannot copy", to);
    if (ferror(in) || fclose(out) != 0)
        die("cannot copy", from);
    fclose(in);
}

/* broken@latest: a copy of the first device profile whose Instruction table is cut
 * in the middle and whose Instruction index has a byte flipped in its data. */
static void make_broken(void)
{
    char src[PATH_MAX], dst[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    fmt(src, sizeof src, "%s/profiles/global/tiny-nd0-nc0@latest", data_path);
    fmt(dst, sizeof dst, "%s/profiles/global/broken@latest", data_path);
    if (mkdir(dst, 0700) != 0)
        die("cannot create", dst);
    DIR *d = opendir(src);
    if (!d)
        die("cannot list", src);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        fmt(a, sizeof a, "%s/%s", src, e->d_name);
        fmt(b, sizeof b, "%s/%s", dst, e->d_name);
        copy_file(a, b);
    }
    closedir(d);
    struct stat st;
    fmt(b, sizeof b, "%s/Instruction.parquet", dst);
    if (stat(b, &st) != 0 || truncate(b, st.st_size / 2) != 0)
        die("cannot cut", b);
    fmt(b, sizeof b, "%s/.Instruction.nxtl", dst);
    FILE *f = fopen(b, "r+b");
    if (!f || fseek(f, 200, SEEK_SET) != 0 || fputc(0xff, f) == EOF || fclose(f) != 0)
        die("cannot damage", b);
}

static void build_fixture(void)
{
    const char *dir = nxfuzz_scratch();
    char cap[PATH_MAX], out[PATH_MAX];
    nx_error err = {0};
    fmt(cap, sizeof cap, "%s/capture", dir);
    fmt(data_path, sizeof data_path, "%s/data", dir);
    nx_synth_options so = {.out_dir = cap, .preset = NX_SYNTH_TINY, .events = 1, .cores = 2, .seed = 1,
                           .system = true, .threads = 1};
    nx_synth_stats ss;
    memset(&ss, 0, sizeof ss);
    if (nx_synth_run(&so, &ss, &err) != 0)
        die("synth", err.msg);
    char name[NX_CAP_NAME_MAX];
    nx_cap_program_name(ss.program_hash, name);
    fmt(session, sizeof session, "%s", ss.session_dir);
    fmt(program, sizeof program, "%s/%s", ss.session_dir, name);
    nx_synth_stats_free(&ss);

    nx_process_options po = {.capture_dir = cap, .data_path = data_path, .display_name = "tiny", .jobs = 1};
    nx_process_stats ps;
    memset(&ps, 0, sizeof ps);
    if (nx_process_run(&po, &ps, &err) != 0)
        die("process", err.msg);
    nx_process_stats_free(&ps);
    fmt(out, sizeof out, "%s/profiles/global/nested@latest", data_path);
    nx_process_options pn = {.capture_dir = cap, .output_file = out, .display_name = "nested", .jobs = 1};
    memset(&ps, 0, sizeof ps);
    if (nx_process_run(&pn, &ps, &err) != 0)
        die("process --output-file", err.msg);
    nx_process_stats_free(&ps);
    make_broken();
}

const char *nxfuzz_session_dir(void)
{
    if (!session[0])
        build_fixture();
    return session;
}

const char *nxfuzz_program_path(void)
{
    nxfuzz_session_dir();
    return program;
}

const char *nxfuzz_data_path(void)
{
    nxfuzz_session_dir();
    return data_path;
}

const char *nxfuzz_profile_dir(const char *name)
{
    static char buf[PATH_MAX];
    fmt(buf, sizeof buf, "%s/profiles/global/%s@latest", nxfuzz_data_path(), name);
    return buf;
}
