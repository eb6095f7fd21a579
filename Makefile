# nxprof — top-level entry points. CMake does the building underneath.
#
#   make            build build/nxprof (RelWithDebInfo, -Wall -Wextra -Werror)
#   make demo       bootstrap, build, run the main job on the embedded default
#   make check      bootstrap, build, run the whole test suite (what CI runs)
#   make asan       build an ASan+UBSan variant in build-asan/ and run its tests
#   make clean
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo check test asan bootstrap clean

all: build

build:
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j $(JOBS)

bootstrap:
	@scripts/bootstrap

demo: bootstrap build
	@scripts/demo

test: build
	@cd build && ctest --output-on-failure -j $(JOBS)

check: bootstrap
	@$(MAKE) --no-print-directory test

asan:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNXPROF_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf build build-asan
