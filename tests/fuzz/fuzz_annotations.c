/*
 * fuzz_annotations.c — libFuzzer harness for the annotations document reader
 * (profile/annotations.h), the parser of what a PUT body, an imported file or a
 * profile's saved file holds.
 *
 * Each input is a document's text. Rejected: the message names the source given.
 * Accepted: the document passes nx_annotations_check; its text as written
 * (nx_annotations_json) is valid JSON (yajl's tree parser) and parses again to a
 * document that writes the very same text (one canonical form); appending it to
 * itself keeps every item (or is refused past the limits, the document unchanged).
 * A violated invariant aborts.
 *
 * Seeds: tests/fuzz/corpus/annotations/ (tests/fuzz/make_corpus.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "fuzz_fixture.h"
#include "profile/annotations.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nx_annotations a;
    nx_error err = {0};
    if (nx_annotations_parse((const char *)data, size, "input", &a, &err) < 0) {
        NXFUZZ_CHECK(strncmp(err.msg, "input", 5) == 0 || strcmp(err.msg, "out of memory") == 0);
        return 0;
    }
    NXFUZZ_CHECK(nx_annotations_check(&a, "input", &err) == 0);
    nx_strbuf b = NX_STRBUF_INIT;
    nx_annotations_json(&a, &b);
    NXFUZZ_CHECK(!nx_strbuf_failed(&b));
    char why[256];
    yajl_val tree = yajl_tree_parse(b.data, why, sizeof why);
    NXFUZZ_CHECK(tree != NULL);
    yajl_tree_free(tree);
    nx_annotations again;
    NXFUZZ_CHECK(nx_annotations_parse(b.data, b.len, "written", &again, &err) == 0);
    nx_strbuf b2 = NX_STRBUF_INIT;
    nx_annotations_json(&again, &b2);
    NXFUZZ_CHECK(b2.len == b.len && memcmp(b.data, b2.data, b.len) == 0);
    size_t markers = again.n_markers, regions = again.n_regions;
    if (nx_annotations_append(&again, &a, &err) == 0)
        NXFUZZ_CHECK(again.n_markers == 2 * markers && again.n_regions == 2 * regions);
    else
        NXFUZZ_CHECK(again.n_markers == markers && again.n_regions == regions);
    nx_strbuf_free(&b);
    nx_strbuf_free(&b2);
    nx_annotations_free(&again);
    nx_annotations_free(&a);
    return 0;
}
