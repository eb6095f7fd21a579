#!/usr/bin/env bash
# run.sh — runs the libFuzzer harnesses built in BUILD_DIR (make fuzz) for SECONDS
# each, one after the other, each on a fresh copy of its seed corpus
# (tests/fuzz/corpus/<harness>/) and committed regressions
# (tests/fuzz/regressions/<harness>/).
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]     (default: every harness)
#
# Everything a run makes is in BUILD_DIR/fuzz-run/<harness>/: corpus/ (the seeds plus
# what the fuzzer added), artifacts/ (the input of any finding), log (libFuzzer's
# output, sanitizer reports included). Each harness gets its own TMPDIR there,
# removed afterwards. A finding is anything that makes libFuzzer stop early: a
# crash or failed harness invariant (abort), an ASan or UBSan report, a leak, an
# input running longer than TIMEOUT seconds (default 10), or more than RSS_MB of
# memory (default 2048). The script goes on with the other harnesses, then prints
# one line per harness (executions, corpus size, finding) and exits 1 when any
# harness had a finding, naming it, the input's path and the report's first lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 2 ]; then
  echo "usage: tests/fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]" >&2
  exit 2
fi
B=$1
S=$2
shift 2
ALL=(program trace system_tsv chrome_json chrome_gz parquet timeline_index http xspace annotations)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${ALL[@]}")
TIMEOUT=${TIMEOUT:-10}
RSS_MB=${RSS_MB:-2048}

# Longest input per harness: each seed fits, with room to grow.
max_len() {
  case $1 in
    program) echo 131072 ;;     # seeds 44 and 68 KB
    trace) echo 32768 ;;        # seeds up to 13 KB (~300 records)
    system_tsv) echo 16384 ;;
    chrome_json) echo 65536 ;;  # seeds up to 20 KB
    chrome_gz) echo 32768 ;;
    parquet) echo 8192 ;;
    timeline_index) echo 16384 ;;  # seeds up to 7.5 KB
    http) echo 12000 ;;         # past the 8192-byte URL limit
    xspace) echo 16384 ;;       # seeds up to 6 KB
    annotations) echo 8192 ;;   # seeds under 1 KB
    *) echo 4096 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
command -v llvm-symbolizer >/dev/null 2>&1 && export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer)}

failed=()
summary=()
for h in "${harnesses[@]}"; do
  bin="$B/tests/fuzz/fuzz_$h"
  if [ ! -x "$bin" ]; then
    echo "fuzz: $h: $bin is not built (make fuzz builds it)" >&2
    failed+=("$h")
    summary+=("$(printf '%-15s not built' "$h")")
    continue
  fi
  w="$B/fuzz-run/$h"
  rm -rf "$w"
  mkdir -p "$w/corpus" "$w/artifacts" "$w/tmp"
  cp tests/fuzz/corpus/"$h"/* "$w/corpus/" 2>/dev/null
  [ -d "tests/fuzz/regressions/$h" ] && cp tests/fuzz/regressions/"$h"/* "$w/corpus/" 2>/dev/null
  seeds=$(find "$w/corpus" -type f | wc -l)
  echo "fuzz: $h: ${S}s on $seeds seeds (log: $w/log)"
  TMPDIR="$w/tmp" "$bin" -max_total_time="$S" -max_len="$(max_len "$h")" -timeout="$TIMEOUT" \
    -rss_limit_mb="$RSS_MB" -print_final_stats=1 -artifact_prefix="$w/artifacts/" "$w/corpus" >"$w/log" 2>&1
  rc=$?
  rm -rf "$w/tmp"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -1)
  units=$(find "$w/corpus" -type f | wc -l)
  found=$(find "$w/artifacts" -type f | sort)
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    failed+=("$h")
    what=$(grep -m1 -E '^==[0-9]+==ERROR|runtime error:|harness invariant violated|^==[0-9]+== ERROR: libFuzzer|ALARM: working on the last Unit|out-of-memory' "$w/log")
    summary+=("$(printf '%-15s %10s execs  %5s units  FINDING (exit %s): %s' "$h" "${execs:-?}" "$units" "$rc" "${what:-see log}")")
    echo "fuzz: $h: FINDING (libFuzzer exit $rc)" >&2
    [ -n "$what" ] && echo "fuzz: $h: $what" >&2
    for f in $found; do
      echo "fuzz: $h: input: $f (replay: $B/tests/fuzz/fuzz_$h $f)" >&2
    done
    grep -m1 -A 25 -E '^==[0-9]+==ERROR|runtime error:|harness invariant violated|ALARM|out-of-memory' "$w/log" | sed "s/^/fuzz: $h: | /" >&2
  else
    summary+=("$(printf '%-15s %10s execs  %5s units  no finding' "$h" "${execs:-?}" "$units")")
  fi
done

echo "fuzz: summary (${S}s each)"
printf 'fuzz:   %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]} (inputs under $B/fuzz-run/<harness>/artifacts/)" >&2
  exit 1
fi
