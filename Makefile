# nxprof — top-level entry points. CMake does the building underneath.
#
#   make            build build/nxprof (RelWithDebInfo, -Wall -Wextra -Werror)
#   make demo       bootstrap, build, run the main job on the embedded default
#   make check      bootstrap, build, run the whole test suite (what CI runs)
#   make asan       build an ASan+UBSan variant in build-asan/ and run its tests
#   make bench      run the benchmarks under bench/ (prints ratios against peers)
#   make fuzz       build the Parquet reader's libFuzzer harness with clang in build-fuzz/ and
#                   run it for FUZZ_SECONDS (default 60) on a copy of its seed corpus
#   make clean
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo check test asan fuzz bench bootstrap clean

all: build

build:
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j $(JOBS)

bootstrap:
	@scripts/bootstrap

demo:
	@scripts/bootstrap --build-only
	@$(MAKE) --no-print-directory build
	@scripts/demo

test: build
	@cd build && ctest --output-on-failure -j $(JOBS)

check: bootstrap
	@$(MAKE) --no-print-directory test

asan:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNXPROF_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)

# The core library is built by CMake with clang and coverage instrumentation
# (fuzzer-no-link); only the harness is linked with libFuzzer's main.
FUZZ_SECONDS ?= 60
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
fuzz:
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_FLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" >/dev/null
	@cmake --build build-fuzz --target nxcore -j $(JOBS)
	@clang -std=c11 -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer -Isrc tests/fuzz/fuzz_parquet_reader.c \
	  build-fuzz/libnxcore.a $$(pkg-config --libs libzstd liblz4 libbrotlidec zlib libxxhash yajl) -lsnappy -lm -lpthread -o build-fuzz/fuzz_parquet_reader
	@rm -rf build-fuzz/corpus && cp -r tests/fuzz/corpus/parquet build-fuzz/corpus
	@build-fuzz/fuzz_parquet_reader -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=20 \
	  -artifact_prefix=build-fuzz/ build-fuzz/corpus

bench: bootstrap build
	@node bench/parquet_write/run.mjs --rows $${BENCH_ROWS:-10000000} --runs $${BENCH_RUNS:-3}

clean:
	rm -rf build build-asan build-fuzz
