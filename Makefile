# nxprof — top-level entry points. CMake does the building underneath.
#
#   make            build build/nxprof (RelWithDebInfo, -Wall -Wextra -Werror)
#   make demo       bootstrap, build, run the main job on the embedded default
#   make check      bootstrap, build, run the whole test suite (what CI runs)
#   make asan       build an ASan+UBSan variant in build-asan/ and run its tests
#   make bench      run the benchmarks under bench/ (prints ratios against peers)
#   make bench-framework  nxprof process vs json.load, DuckDB, HTA on a generated Kineto
#                   trace.json of BENCH_FRAMEWORK_MB MB (default 100), BENCH_RUNS runs
#   make fuzz       build every libFuzzer harness (tests/fuzz/) with clang in build-fuzz/ and
#                   run each for FUZZ_SECONDS (default 60) on a copy of its seed corpus
#   make clean
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo check test asan fuzz bench bench-framework bootstrap clean

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

# Every harness of tests/fuzz/ built with clang in build-fuzz/ (the core library with
# coverage instrumentation, -fsanitize=fuzzer-no-link; each harness linked with
# libFuzzer's main), then each run for FUZZ_SECONDS on a copy of its seed corpus by
# tests/fuzz/run.sh, which exits non-zero naming the harness and the input of any
# crash, leak, hang, out-of-memory or ASan/UBSan report. FUZZ_HARNESSES picks some.
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES ?=
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
fuzz:
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	  clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null || \
	  { echo "make fuzz: clang with libFuzzer and the sanitizers is missing (scripts/bootstrap installs it)" >&2; exit 1; }
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXPROF_FUZZ=ON \
	  -DCMAKE_C_FLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" >/dev/null
	@cmake --build build-fuzz --target fuzz_all -j $(JOBS)
	@tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

bench: bootstrap build
	@node bench/parquet_write/run.mjs --rows $${BENCH_ROWS:-10000000} --runs $${BENCH_RUNS:-3}

bench-framework: bootstrap build
	@[ -x bench/framework/.venv/bin/python ] || { python3 -m venv bench/framework/.venv && \
		bench/framework/.venv/bin/pip install -q -r bench/framework/requirements.txt; }
	@python3 bench/framework/run.py --sizes $${BENCH_FRAMEWORK_MB:-100} --runs $${BENCH_RUNS:-3}

clean:
	rm -rf build build-asan build-fuzz
