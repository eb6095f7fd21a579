#!/usr/bin/env bash
# test_diff.sh NXPROF — `nxprof diff`'s command-line contract: exit 2 with a one-line
# hint for every usage error, 1 for profiles it cannot compare, and the three formats
# on two device profiles of `nxprof synth` (the figures are python.test_diff's).
set -u
BIN=${1:?usage: test_diff.sh path/to/nxprof}
. "$(dirname "$0")/harness.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for s in 1 2; do
    "$BIN" synth --preset tiny --out "$T/cap$s" --seed $s --cores 1 --no-system >/dev/null 2>&1
    "$BIN" process "$T/cap$s" --output-file "$T/d$s" >/dev/null 2>&1
done
"$BIN" synth --preset tiny --out "$T/capsys" --seed 3 --cores 1 >/dev/null 2>&1
"$BIN" process "$T/capsys" --output-file "$T/sys" >/dev/null 2>&1
check '[ -s "$T/d1/Instruction.parquet" ] && [ -s "$T/d2/Instruction.parquet" ]' "fixture device profiles written"
check '[ -s "$T/sys/SystemProfileEvents.parquet" ]' "fixture system profile written"

expect 2 "no profiles" -- diff;                          contains "two profiles, A and B, are required" "missing A and B named"
contains "Try 'nxprof diff --help'" "hint line"
expect 2 "one profile" -- diff "$T/d1";                  contains "two profiles" "missing B named"
expect 2 "three profiles" -- diff "$T/d1" "$T/d2" extra; contains "unexpected argument 'extra'" "stray argument named"
expect 2 "empty profile" -- diff "" "$T/d2";             contains "must not be empty" "empty directory named"
expect 2 "bad format" -- diff "$T/d1" "$T/d2" --format xml; contains "unknown format 'xml'" "bad format named"
expect 2 "bad limit" -- diff "$T/d1" "$T/d2" --limit -1; contains "--limit" "bad limit named"
expect 2 "empty key" -- diff "$T/d1" "$T/d2" --by "";    contains "--by needs a key" "empty key named"
expect 2 "unknown key" -- diff "$T/d1" "$T/d2" --by nope; contains "no column 'nope'" "unknown key named"
expect 2 "missing --by argument" -- diff "$T/d1" "$T/d2" --by; contains "needs an argument" "missing argument named"
expect 2 "bad normalize" -- diff "$T/d1" "$T/d2" --normalize steps; contains "unknown --normalize 'steps'" "bad normalize named"
expect 1 "no wall to normalise by" -- diff "$T/d1" "$T/d2" --normalize wall; contains "no wall time" "missing divisor named"
expect 1 "kinds differ" -- diff "$T/d1" "$T/sys";        contains "only two of one kind compare" "kinds named"
expect 1 "absent profile" -- diff "$T/d1" "$T/nothing"; contains "$T/nothing" "absent profile named"

expect 0 "text" -- diff "$T/d1" "$T/d2" --limit 2;       contains "total" "text has a total line"
contains "other groups)" "text says what the limit left out"
expect 0 "csv" -- diff "$T/d1" "$T/d2" --limit 0 --format csv
contains "opcode,status,count_a,count_b,total_ns_a,total_ns_b,delta_ns,ratio" "csv header"
check '[ "$("$BIN" diff "$T/d1" "$T/d2" --limit 0 --format csv | wc -l)" -gt 3 ]' "csv has a line per group"
expect 0 "json" -- diff "$T/d1" "$T/d2" --format json --limit 1; contains '"shown":1' "json limit"
expect 0 "same profile" -- diff "$T/d1" "$T/d1" --format csv --limit 0
check '! grep -qE ",(added|removed|changed)," <<<"$OUT"' "a profile against itself is all same"
expect 0 "system by thread" -- diff "$T/sys" "$T/sys" --by thread; contains "same" "system diff by thread"
finish
