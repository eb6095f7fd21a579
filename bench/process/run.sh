#!/usr/bin/env bash
# bench/process/run.sh — end-to-end `nxprof process` throughput and peak memory on
# llama-layer captures of several sizes (device records per second of wall time,
# peak resident set size), median of --runs runs per size, with ratios against peers
# measured in the same run.
#
#   bash bench/process/run.sh [--sizes 1000000,10000000,100000000] [--runs 3] [--bin build/nxprof]
#                             [--dir /tmp/nxprof-bench-process] [--jobs N] [--cores C] [--peers-max 10000000]
#
# Each capture is synthesized once (seed 7, --cores NeuronCores, default 2: the same
# total of records split over C device traces, so C device profiles built in parallel)
# and processed into a fresh directory every run; the capture and profiles are removed
# at the end. The
# issue's target on a 2-core machine: >= 5M events/s and < 1 GiB peak RSS at 100M.
#
# Peers: no other tool reads nxprof's capture format, so for every size whose --events is
# <= --peers-max (default 10000000; 0 turns peers off) the profile of nxprof's last run is
# kept and bench/process/peers.mjs measures how long DuckDB and Polars take only to WRITE
# that same profile (every table, same rows, Parquet with ZSTD) from memory (loading is not
# timed; median of the same --runs, no warm-up). Columns duckdb_write_s / polars_write_s are
# the peers' median walls; nxprof/duckdb and nxprof/polars are nxprof's median wall over the
# peer's (nxprof's figure also reads and decodes the capture and computes every table, so a
# ratio < 1 means nxprof builds the whole profile faster than the peer only writes it).
# A polars figure marked '*' is partial (Polars could not read some tables; they are named
# on stderr). Sizes above --peers-max show '-'. Peers need node and the repository's
# node_modules (@duckdb/node-api, nodejs-polars); they are checked only when peers run.
# peers.mjs's per-table detail is kept out of the output; its summary lines go to stderr.
#
# CPU per row: cpu_s is nxprof's median CPU time (user+sys of the whole `nxprof process`
# run, all threads, /usr/bin/time) and rows the total rows of the profile it wrote.
# bench/process/pyarrow_peer.py (run with the peers, needs .venv/bin/python) loads that
# profile and measures the process CPU time pyarrow spends only writing it (every table,
# pq.write_table with compression='zstd', otherwise defaults; median of the same --runs).
# nx_ns/row and pa_ns/row are the two CPU times per profile row, cpu_nx/pa their ratio
# (the issue's target: at most 0.5).
set -euo pipefail

sizes=1000000,10000000,100000000
runs=3
bin=build/nxprof
dir=/tmp/nxprof-bench-process
jobs=
cores=2
peers_max=10000000
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
while [ $# -gt 0 ]; do
    case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --jobs) jobs="--jobs $2"; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --peers-max) peers_max=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes N,N] [--runs K] [--bin PATH] [--dir DIR] [--jobs N] [--cores C] [--peers-max N]" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || { echo "bench/process: $bin is not built (run make)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench/process: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
[[ "$peers_max" =~ ^[0-9]+$ ]] || { echo "bench/process: --peers-max needs a number of events" >&2; exit 2; }
IFS=, read -ra list <<<"$sizes"
want_peers=0
for n in "${list[@]}"; do
    if [ "$n" -le "$peers_max" ]; then want_peers=1; fi
done
if [ "$want_peers" = 1 ]; then
    command -v node >/dev/null || { echo "bench/process: peers need node (or pass --peers-max 0)" >&2; exit 1; }
    [ -x "$repo/.venv/bin/python" ] || { echo "bench/process: the pyarrow peer needs $repo/.venv/bin/python (run scripts/bootstrap, or pass --peers-max 0)" >&2; exit 1; }
    for m in @duckdb/node-api nodejs-polars; do
        [ -d "$repo/node_modules/$m" ] || { echo "bench/process: peers need $repo/node_modules/$m (run npm install, or pass --peers-max 0)" >&2; exit 1; }
    done
fi
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

field() { printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9.eE+-]*\).*/\1/p"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-12s %10s %12s %14s %12s %10s %15s %15s %13s %13s %8s %10s %10s %10s %9s\n' events records wall_s records/s peak_RSS_MiB tables \
    duckdb_write_s polars_write_s nxprof/duckdb nxprof/polars cpu_s rows nx_ns/row pa_ns/row cpu_nx/pa
for n in "${list[@]}"; do
    cap="$dir/cap-$n"
    synth_out=$("$bin" synth --preset llama-layer --events "$n" --seed 7 --cores "$cores" --out "$cap")
    records=$(printf '%s\n' "$synth_out" | awk '/device records/ {print $1; exit}')
    walls=() rss=() cpus=()
    for ((i = 0; i < runs; i++)); do
        rm -rf "$dir/prof"
        # shellcheck disable=SC2086
        /usr/bin/time -f '%e %M %U %S' -o "$dir/time" "$bin" process "$cap" --output-file "$dir/prof" $jobs >"$dir/out"
        read -r w m u s <"$dir/time"
        walls+=("$w")
        cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u + s}')")
        rss+=("$m")
    done
    tables=$(awk '/tables/ {print $(NF-1)}' "$dir/out")
    wall=$(printf '%s\n' "${walls[@]}" | median)
    cpu=$(printf '%s\n' "${cpus[@]}" | median)
    peak=$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)
    rate=$(awk -v r="$records" -v w="$wall" 'BEGIN {printf "%.2fM", r / w / 1e6}')
    duck=- pol=- rduck=- rpol=- rows=- nxrow=- parow=- rcpu=-
    if [ "$n" -le "$peers_max" ]; then
        if ! peers=$(node "$here/peers.mjs" "$dir/prof" --runs "$runs" 2>"$dir/peers.log"); then
            cat "$dir/peers.log" >&2
            echo "bench/process: peers.mjs failed on the $n-event profile" >&2
            exit 1
        fi
        grep '^peers:' "$dir/peers.log" | sed "s/^/[$n] /" >&2 || true
        duck=$(field duckdb_s "$peers")
        pol=$(field polars_s "$peers")
        if [ -z "$duck" ] || [ -z "$pol" ]; then echo "bench/process: cannot parse peers.mjs output: $peers" >&2; exit 1; fi
        rduck=$(ratio "$wall" "$duck")
        rpol=$(ratio "$wall" "$pol")
        case "$peers" in *'"polars_partial":[]'*) ;; *) pol="$pol*" rpol="$rpol*" ;; esac
        if ! pa=$("$repo/.venv/bin/python" "$here/pyarrow_peer.py" "$dir/prof" --runs "$runs" 2>"$dir/pyarrow.log"); then
            cat "$dir/pyarrow.log" >&2
            echo "bench/process: pyarrow_peer.py failed on the $n-event profile" >&2
            exit 1
        fi
        grep '^pyarrow:' "$dir/pyarrow.log" | sed "s/^/[$n] /" >&2 || true
        pacpu=$(field cpu_s "$pa")
        rows=$(field rows "$pa")
        if [ -z "$pacpu" ] || [ -z "$rows" ]; then echo "bench/process: cannot parse pyarrow_peer.py output: $pa" >&2; exit 1; fi
        nxrow=$(awk -v c="$cpu" -v r="$rows" 'BEGIN {printf "%.0f", c * 1e9 / r}')
        parow=$(awk -v c="$pacpu" -v r="$rows" 'BEGIN {printf "%.0f", c * 1e9 / r}')
        rcpu=$(ratio "$cpu" "$pacpu")
    fi
    printf '%-12s %10s %12s %14s %12d %10s %15s %15s %13s %13s %8s %10s %10s %10s %9s\n' "$n" "$records" "$wall" "$rate" $((peak / 1024)) "$tables" \
        "$duck" "$pol" "$rduck" "$rpol" "$cpu" "$rows" "$nxrow" "$parow" "$rcpu"
    rm -rf "$cap" "$dir/prof"
done
