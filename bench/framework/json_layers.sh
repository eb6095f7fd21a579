#!/usr/bin/env bash
# bench/framework/json_layers.sh — builds json_layers (yajl, simdjson through its C++ shim,
# nxprof's tokenizer src/util/json_scan.c, the prototype trace-event tokenizer) into a
# temporary folder and runs it on TRACE_JSON:
#
#   bash bench/framework/json_layers.sh TRACE_JSON [RUNS]
#
# Needs libyajl-dev (a build dependency of nxprof) and libsimdjson-dev (Debian 12: 3.0.1;
# bench only, nxprof does not link it). The C code gets a RelWithDebInfo build's -O2 -g; the
# shim also gets -march=native, because On-Demand picks its SIMD kernel (haswell, icelake)
# at compile time and would otherwise fall back to its scalar one.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 TRACE_JSON [RUNS]" >&2; exit 2; }
[ -f /usr/include/simdjson.h ] || { echo "bench/framework: needs libsimdjson-dev (apt-get install libsimdjson-dev)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-O2 -g -Wall -Wextra -Werror)
src=$here/../../src
cc -std=c11 "${flags[@]}" -I "$src" -c "$here/json_layers.c" -o "$tmp/json_layers.o"
cc -std=c11 "${flags[@]}" -I "$src" -c "$src/util/json_scan.c" -o "$tmp/json_scan.o"
cc -std=c11 "${flags[@]}" -I "$src" -c "$src/util/strbuf.c" -o "$tmp/strbuf.o"
c++ -std=c++17 "${flags[@]}" -march=native -c "$here/simdjson_shim.cpp" -o "$tmp/simdjson_shim.o"
c++ "$tmp/json_layers.o" "$tmp/json_scan.o" "$tmp/strbuf.o" "$tmp/simdjson_shim.o" -lsimdjson -lyajl -o "$tmp/json_layers"
"$tmp/json_layers" "$@"
