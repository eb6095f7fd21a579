/*
 * fuzz_timeline_index.c — libFuzzer harness for the timeline index reader
 * (profile/timeline_index.h) and the sampled pass answered from it
 * (query/engine/index_sample.h).
 *
 * Each input is an index file's bytes, opened from memory with nx_tlx_open_buffer:
 *   - against each timeline table of the fixture's profiles (fuzz_fixture.h; the
 *     seeds are those profiles' own .<Table>.nxtl files, so the files section
 *     matches one of them), as nx_tlx_open would check it beside the table's
 *     Parquet files: an index accepted there must also be accepted alone;
 *   - alone (no Parquet files to match), so that inputs whose files section no
 *     longer matches still reach the blocks.
 * An opened index is then read as the server reads it: every track's name and
 * extent, label lookups and values of tuples in and out of range, depth and self
 * time of rows in and out of range, and sampled passes (whole extent at 1, 3 and
 * 1000 buckets, a zoomed window that cuts blocks, the widest window, a window
 * taken from the input's last bytes). Invariants: samples in ordinal order, each
 * on a known track and bucket, no more kept than in the window; every kept
 * event's label tuple readable. A violated invariant aborts.
 *
 * Seeds: tests/fuzz/corpus/timeline_index/ (tests/fuzz/make_corpus.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_fixture.h"
#include "profile/timeline_index.h"
#include "profile/timeline_rules.h"
#include "query/engine/index_sample.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    nxfuzz_data_path();
    return 0;
}

static void touch(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        sink += (unsigned char)s[i];
}

/* One sampled pass, per (track, bucket) or, from the depth tracks, per (track, depth, bucket). */
static void sample_by(const nx_tlx *x, int64_t start, int64_t end, uint32_t width, bool by_depth)
{
    nx_sampled s;
    memset(&s, 0, sizeof s);
    nx_error err = {0};
    if (nx_tlx_sample(x, start, end, width, by_depth, NULL, &s, &err) != 0) {
        NXFUZZ_CHECK(err.msg[0] != '\0');
        nx_sampled_free(&s);
        return;
    }
    NXFUZZ_CHECK(s.n <= s.in_window);
    for (size_t i = 0; i < s.n_tracks; i++) {
        NXFUZZ_CHECK(s.names[i] != NULL);
        touch(s.names[i], s.name_len[i]);
    }
    for (size_t i = 0; i < s.n; i++) {
        const nx_sample *e = &s.samples[i];
        NXFUZZ_CHECK(e->track < s.n_tracks && e->bucket < width);
        /* Sorted; equal ordinals only when a damaged index gives two events one row
         * (harmless: the export skips the second, the viewer draws both). */
        NXFUZZ_CHECK(i == 0 || e->ordinal >= s.samples[i - 1].ordinal);
        for (int l = 0; l < (int)x->n_labels; l++) {
            int64_t iv;
            const char *str = NULL;
            size_t len = 0;
            if (nx_tlx_label_value(x, e->tag, l, &iv, &str, &len) && str)
                touch(str, len);
        }
    }
    nx_sampled_free(&s);
}

static void sample(const nx_tlx *x, int64_t start, int64_t end, uint32_t width)
{
    if (end < start)
        return;
    sample_by(x, start, end, width, false);
    sample_by(x, start, end, width, true);
}

static void exercise(const nx_tlx *x, const uint8_t *data, size_t size)
{
    size_t n = nx_tlx_track_count(x);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        size_t len;
        uint64_t events;
        int64_t first, last;
        nx_tlx_track_info(x, i, &name, &len, &events, &first, &last);
        touch(name, len);
        lo = first < lo ? first : lo;
        hi = last > hi ? last : hi;
    }
    (void)nx_tlx_labels_complete(x);
    for (size_t t = 0; t < nx_timeline_count(); t++) {
        const char *const *labels = nx_timeline_labels(nx_timeline_at(t)->table);
        for (size_t l = 0; labels && labels[l]; l++) {
            int k = nx_tlx_label_find(x, labels[l]);
            if (k < 0)
                continue;
            NXFUZZ_CHECK(k < (int)x->n_labels);
            (void)nx_tlx_label_is_string(x, k);
            uint32_t tuples[] = {0, 1, x->n_tuples / 2, x->n_tuples - 1, x->n_tuples, UINT32_MAX};
            for (size_t j = 0; j < sizeof tuples / sizeof tuples[0]; j++) {
                int64_t iv;
                const char *str = NULL;
                size_t len = 0;
                if (nx_tlx_label_value(x, tuples[j], k, &iv, &str, &len) && str)
                    touch(str, len);
            }
        }
    }
    (void)nx_tlx_label_find(x, "no such label");
    if (nx_tlx_has_nesting(x)) {
        int64_t rows = (int64_t)(x->rows > INT64_MAX ? INT64_MAX : x->rows);
        int64_t ords[] = {0, 1, rows / 2, rows - 1, rows, -1, nx_row_ordinal(1, 0), nx_row_ordinal(x->n_files, 0),
                          INT64_MAX};
        for (size_t j = 0; j < sizeof ords / sizeof ords[0]; j++) {
            uint32_t depth;
            int64_t self;
            (void)nx_tlx_nesting(x, ords[j], &depth, &self);
        }
    }
    if (n > 0 && lo <= hi) {
        sample(x, lo, hi, 1);
        sample(x, lo, hi, 3);
        sample(x, lo, hi, 1000);
        uint64_t span = (uint64_t)hi - (uint64_t)lo;
        sample(x, (int64_t)((uint64_t)lo + span / 3), (int64_t)((uint64_t)lo + span / 2), 7);
    }
    sample(x, INT64_MIN, INT64_MAX, 5);
    if (size >= NX_TLX_HEADER_BYTES + 16) {
        int64_t a, b;
        memcpy(&a, data + size - 16, 8);
        memcpy(&b, data + size - 8, 8);
        uint32_t w = (uint32_t)((uint64_t)b % 64) + 1;
        sample(x, a < b ? a : b, a < b ? b : a, w);
    }
}

/* The fixture's profiles and their timeline tables. */
static const struct {
    const char *profile, *table;
} TABLES[] = {
    {"tiny-nd0-nc0", "Instruction"},  {"tiny-nd0-nc0", "DmaPacket"},     {"tiny-nd0-nc0", "DmaPacketAggregated"},
    {"tiny-nd0-nc0", "CcInstruction"}, {"tiny-nd0-nc0", "CcOp"},         {"tiny-nd0-nc0", "SemaphoreUpdate"},
    {"tiny-nd0-nc1", "Instruction"},  {"tiny", "SystemProfileEvents"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The reader needs its buffer 8-byte aligned, as a mapping is. */
    uint64_t *buf = malloc(size / 8 * 8 + 8);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    nx_error why = {0};
    bool matched = false;
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) {
        nx_tlx *x = NULL;
        why = (nx_error){0};
        int rc = nx_tlx_open_buffer(buf, size, nxfuzz_profile_dir(TABLES[i].profile), TABLES[i].table, &x, &why);
        NXFUZZ_CHECK(rc != 0 || x != NULL);
        NXFUZZ_CHECK(rc == 0 || rc < 0 || why.msg[0] != '\0');
        matched |= rc == 0;
        nx_tlx_close(x);
    }
    nx_tlx *x = NULL;
    why = (nx_error){0};
    int rc = nx_tlx_open_buffer(buf, size, NULL, NULL, &x, &why);
    NXFUZZ_CHECK(!matched || rc == 0);
    if (rc == 0) {
        exercise(x, data, size);
        nx_tlx_close(x);
    } else {
        NXFUZZ_CHECK(rc < 0 || why.msg[0] != '\0');
    }
    free(buf);
    return 0;
}
