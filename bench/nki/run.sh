#!/bin/bash
# bench/nki/run.sh — the NKI answers on synth llama-layer device profiles of growing size
# (docs/benchmarks.md "nki"): for each --events count, synth + process, 41 random NKI
# instructions picked with DuckDB, then build/bench/nki/bench_nki. Usage:
#   bench/nki/run.sh [EVENTS...]     (default: 20000 3000000 20000000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/nxprof bench=$root/build/bench/nki/bench_nki py=$root/.venv/bin/python
work=$(mktemp -d /tmp/nxbench-nki-XXXXXX)
trap 'rm -rf "$work"' EXIT
for events in "${@:-20000 3000000 20000000}"; do
  for e in $events; do
    "$bin" synth --out "$work/cap$e" --preset llama-layer --events "$e" --seed 3 >/dev/null
    "$bin" process "$work/cap$e" --data-path "$work/dp$e" --display-name b >/dev/null 2>&1
    d=$(readlink -f "$work/dp$e/profiles/global/b-nd0-nc0@latest")
    ords=$("$py" - "$d" <<'PY'
import duckdb, glob, random, re, sys
out = []
for f in sorted(glob.glob(f"{sys.argv[1]}/Instruction*.parquet")):
    m = re.search(r"Instruction_([0-9]+)[.]parquet", f)
    k = int(m.group(1)) if m else 0
    out += [(k << 40) | r[0] for r in duckdb.sql(f"SELECT file_row_number FROM read_parquet('{f}', file_row_number=true) "
                                                 "WHERE kernel_instruction_name IS NOT NULL").fetchall()]
random.seed(1)
print(" ".join(map(str, random.sample(out, min(41, len(out))))))
PY
)
    echo "events=$e $("$bench" "$d" $ords)"
    rm -rf "$work/cap$e" "$work/dp$e"
  done
done
