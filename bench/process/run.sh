#!/usr/bin/env bash
# bench/process/run.sh — end-to-end `nxprof process` throughput and peak memory on
# llama-layer captures of several sizes (device records per second of wall time,
# peak resident set size), median of --runs runs per size.
#
#   bash bench/process/run.sh [--sizes 1000000,10000000,100000000] [--runs 3] [--bin build/nxprof]
#                             [--dir /tmp/nxprof-bench-process] [--jobs N]
#
# Each capture is synthesized once (seed 7, 2 cores) and processed into a fresh
# directory every run; the capture and profiles are removed at the end. The
# issue's target on a 2-core machine: >= 5M events/s and < 1 GiB peak RSS at 100M.
set -euo pipefail

sizes=1000000,10000000,100000000
runs=3
bin=build/nxprof
dir=/tmp/nxprof-bench-process
jobs=
while [ $# -gt 0 ]; do
    case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --jobs) jobs="--jobs $2"; shift 2 ;;
    *) echo "usage: $0 [--sizes N,N] [--runs K] [--bin PATH] [--dir DIR] [--jobs N]" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || { echo "bench/process: $bin is not built (run make)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench/process: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-12s %10s %12s %14s %12s %10s\n' events records wall_s records/s peak_RSS_MiB tables
IFS=, read -ra list <<<"$sizes"
for n in "${list[@]}"; do
    cap="$dir/cap-$n"
    synth_out=$("$bin" synth --preset llama-layer --events "$n" --seed 7 --out "$cap")
    records=$(printf '%s\n' "$synth_out" | awk '/device records/ {print $1; exit}')
    walls=() rss=()
    for ((i = 0; i < runs; i++)); do
        rm -rf "$dir/prof"
        # shellcheck disable=SC2086
        /usr/bin/time -f '%e %M' -o "$dir/time" "$bin" process "$cap" --output-file "$dir/prof" $jobs >"$dir/out"
        read -r w m <"$dir/time"
        walls+=("$w")
        rss+=("$m")
    done
    tables=$(awk '/tables/ {print $(NF-1)}' "$dir/out")
    wall=$(printf '%s\n' "${walls[@]}" | median)
    peak=$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)
    rate=$(awk -v r="$records" -v w="$wall" 'BEGIN {printf "%.2fM", r / w / 1e6}')
    printf '%-12s %10s %12s %14s %12d %10s\n' "$n" "$records" "$wall" "$rate" $((peak / 1024)) "$tables"
    rm -rf "$cap" "$dir/prof"
done
