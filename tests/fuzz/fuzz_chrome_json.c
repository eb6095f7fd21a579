/*
 * fuzz_chrome_json.c — libFuzzer harness for the streaming Chrome trace reader
 * (capture/chrome_trace.h) on plain JSON: each input is written as a .json file and
 * read with the options and checks of fuzz_chrome_common.h.
 *
 * Seeds: tests/fuzz/corpus/chrome_json/ (tests/fuzz/make_corpus.sh: synth's
 * trace.json, the small real PyTorch traces of tests/data/chrome-traces/ cut to a
 * few events, and hand-written edge cases).
 */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_chrome_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nxfuzz_chrome_read(nxfuzz_write("fuzz.json", data, size), size);
    return 0;
}
