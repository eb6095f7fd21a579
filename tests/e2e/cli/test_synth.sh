#!/usr/bin/env bash
# test_synth.sh NXPROF — end-to-end checks of `nxprof synth`: the capture
# directory layout, file names and magics, byte-identical reruns, --cores and
# --no-system, exit 1 for runtime errors and exit 2 for every usage error.
set -u
BIN=${1:?usage: test_synth.sh path/to/nxprof}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"

# --- a tiny capture and its layout ---
expect 0 "tiny synth" -- synth --preset tiny --out "$TMP/a" --seed 3
check 'grep -q "device records" <<<"$OUT"' "synth prints a summary"
sessions=("$TMP"/a/*_pid_*/*)
check '[ ${#sessions[@]} -eq 1 ] && [ -d "${sessions[0]}" ]' "one <instance>_pid_<pid>/<timestamp> directory"
S=${sessions[0]}
check '[[ "$(basename "$(dirname "$S")")" =~ ^i-[0-9a-f]+_pid_[0-9]+$ ]]' "session parent is <instance-id>_pid_<pid>"
check '[[ "$(basename "$S")" =~ ^[0-9]+$ ]]' "session directory is a timestamp"
progs=("$S"/program_*.nxprog)
check '[ ${#progs[@]} -eq 1 ] && [ -f "${progs[0]}" ]' "one program file"
hash=$(basename "${progs[0]}" .nxprog); hash=${hash#program_}
check '[[ "$hash" =~ ^[0-9a-f]{16}$ ]]' "program named after a 16-hex-digit hash"
check '[ -f "$S/trace_${hash}_nd0_nc0.nxtrace" ] && [ -f "$S/trace_${hash}_nd0_nc1.nxtrace" ]' "one trace per core, named after the program"
for f in runtime_events.tsv cpu_usage.tsv host_mem.tsv trace.json; do
    check '[ -s "$S/$f" ]' "system capture file $f"
done
check '[ "$(head -c 6 "${progs[0]}")" = NXPROG ]' "program magic"
check '[ "$(head -c 7 "$S/trace_${hash}_nd0_nc0.nxtrace")" = NXTRACE ]' "trace magic"
size=$(stat -c %s "$S/trace_${hash}_nd0_nc0.nxtrace")
check '[ $(( (size - 256) % 40 )) -eq 0 ] && [ "$size" -gt 256 ]' "trace is a 256-byte header plus 40-byte records"
check '[ "$(head -1 "$S/cpu_usage.tsv")" = "#nxprof cpu-usage 1" ]' "system files start with their version line"
check '! ls -a "$TMP/a"/*_pid_* | grep -q synth-tmp' "no temporary directory left"

if command -v node > /dev/null; then
    n=$(sed -n 's/.* \([0-9]*\) trace.json events/\1/p' <<<"$OUT")
    check '[ "$(node -e "console.log(JSON.parse(require(\"fs\").readFileSync(process.argv[1])).traceEvents.length)" "$S/trace.json")" = "$n" ]' \
        "trace.json is JSON with as many events as synth reports"
fi

# --- determinism: the same options give the same bytes, another seed does not ---
expect 0 "rerun" -- synth --preset tiny --out "$TMP/b" --seed 3
check 'diff -r "$TMP/a" "$TMP/b" > /dev/null' "same seed, byte-identical capture"
expect 0 "other seed" -- synth --preset tiny --out "$TMP/c" --seed 4
check '! diff -r "$TMP/a" "$TMP/c" > /dev/null' "another seed, another capture"
expect 1 "rerun into a non-empty --out" -- synth --preset tiny --out "$TMP/a" --seed 3
check 'grep -q "is not empty" <<<"$OUT" && grep -q -- "--force" <<<"$OUT"' "refusal names the way out (--force)"
check 'diff -r "$TMP/a" "$TMP/b" > /dev/null' "a refused run changes nothing"
expect 0 "rerun into the same place, forced" -- synth --preset tiny --out "$TMP/a" --seed 3 --force
check 'diff -r "$TMP/a" "$TMP/b" > /dev/null' "a forced rerun replaces its own output"
expect 0 "a second session, forced" -- synth --preset tiny --out "$TMP/b" --seed 4 --force
check '[ "$(ls -d "$TMP"/b/*_pid_*/* | wc -l)" -eq 2 ]' "--force with another seed adds a second session"

# --- options ---
expect 0 "three cores, no system" -- synth --preset tiny --out "$TMP/d" --cores 3 --no-system --events 2k
D=$(echo "$TMP"/d/*_pid_*/*)
check '[ "$(ls "$D" | grep -c "\.nxtrace$")" -eq 3 ] && [ -f "$D"/trace_*_nd1_nc0.nxtrace ]' "--cores 3 gives three traces on two devices"
check '[ ! -e "$D/runtime_events.tsv" ] && [ ! -e "$D/trace.json" ]' "--no-system writes no system capture"
expect 0 "llama-layer" -- synth --out "$TMP/e" --events 50000 --cores 2 --seed 9
check 'grep -q "preset llama-layer" <<<"$OUT"' "llama-layer is the default preset"

# --- runtime errors: exit 1 with a message naming the place ---
touch "$D/notes.txt"
expect 1 "foreign file in the session" -- synth --preset tiny --out "$TMP/d" --cores 3 --no-system --events 2k --force
check 'grep -q "refusing to replace" <<<"$OUT"' "refusal names the reason"
touch "$TMP/file"
expect 1 "out is a file" -- synth --preset tiny --out "$TMP/file"

# --- usage errors: exit 2 ---
expect 0 "help" -- synth --help
check 'grep -q "Usage: nxprof synth" <<<"$OUT"' "help text"
expect 2 "no --out" -- synth --preset tiny
check 'grep -q -- "--out DIR is required" <<<"$OUT"' "missing --out named"
expect 2 "bad preset" -- synth --out "$TMP/x" --preset huge
check 'grep -q "unknown preset .huge." <<<"$OUT"' "bad preset named"
expect 2 "zero events" -- synth --out "$TMP/x" --events 0
expect 2 "bad events" -- synth --out "$TMP/x" --events lots
expect 2 "zero cores" -- synth --out "$TMP/x" --cores 0
expect 2 "too many cores" -- synth --out "$TMP/x" --cores 65
expect 2 "negative seed" -- synth --out "$TMP/x" --seed -1
expect 2 "missing value" -- synth --out
expect 2 "stray argument" -- synth --out "$TMP/x" extra
check '[ ! -e "$TMP/x" ]' "usage errors write nothing"

finish
