#!/usr/bin/env bash
# test_system_profile.sh NXPROF — `top`, `summary`, `export-csv` and `index` on system
# profiles: one made from the real PyTorch traces of tests/data/chrome-traces (a
# framework-only capture) and one from a synth capture (runtime events, device
# profiles under devices/). Exit codes, the columns and sections they print, the
# timeline index's depth and self time, and what happens without a usable index.
set -u
BIN=${1:?usage: test_system_profile.sh path/to/nxprof}
. "$(dirname "$0")/harness.sh"
TRACES="$(dirname "$0")/../../data/chrome-traces"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/cap"
cp "$TRACES"/*.json.gz "$T/cap/"
expect 0 "process the PyTorch traces" -- process "$T/cap" --output-file "$T/sys"
contains "system profile" "process names the system profile"
S="$T/sys"
check '[ -s "$S/.SystemProfileEvents.nxtl" ]' "SystemProfileEvents gets its timeline index"

# --- top: by name by default, self time, percent of wall time ---
expect 0 "top on a system profile" -- top "$S"
contains "SystemProfileEvents:" "top defaults to SystemProfileEvents"
contains "sum_self_ns" "top shows self time"
contains "percent of wall time" "top says what the percent is of"
check '! grep -q "note:" <<<"$OUT"' "no note while the index is usable"
expect 0 "top csv" -- top "$S" --format csv --limit 0
check '[ "$(head -1 <<<"$OUT")" = "name,count,sum_duration_ns,sum_self_ns" ]' "csv header: name, count, sums"
NAMES=$(($(wc -l <<<"$OUT") - 1))
expect 0 "top by cat" -- top "$S" --by cat --format csv --limit 0
contains "cpu_op," "cat comes from extra_attributes_json"
contains "kernel," "GPU kernels have their category"
expect 0 "top by thread" -- top "$S" --by thread --format json --profiler-rows
contains '"percent_of_wall":' "json has the percent of wall time"
contains '"wall_ns":' "json has the wall time"
contains '"thread":"rank 0 / GPU 0 / stream 7"' "threads are labelled by the trace's metadata names (process_labels / thread_name), after the rank its file name gives"
contains '"thread":"rank 0 / Spans / PyTorch Profiler"' "string pid/tid label a thread as written"
expect 0 "top by two keys" -- top "$S" --by trace_event_source,cat --limit 3
expect 0 "top by a real column" -- top "$S" --by process_id --format csv
expect 2 "top by an unknown key" -- top "$S" --by nope; contains "no column 'nope'" "unknown key named"
contains "cat, thread" "the virtual keys are named"
expect 2 "top by a list column" -- top "$S" --by flow_id
expect 1 "top --table Instruction on a system profile" -- top "$S" --table Instruction
expect 0 "top of another table of it" -- top "$S" --table Metadata --by profile_schema_version

# --- summary ---
expect 0 "summary on a system profile" -- summary "$S"
contains "System profile $S" "summary names the profile"
contains "wall time" "summary shows the wall time"
contains "Busy time per thread" "summary shows busy time"
contains "Top 10 operators by self time" "summary shows the top operators"
check '! grep -q "Device profiles" <<<"$OUT"' "no device table without DeviceProfileList"
expect 0 "summary json" -- summary "$S" --format json
contains '"kind":"system"' "json says what kind of profile"
contains '"device_profiles":null' "no device profiles listed"
contains '"top_operators":[' "json lists the operators"

# --- export-csv (the traces were recorded years apart: the window spans 63 years) ---
expect 0 "export-csv sampled" -- export-csv "$S" --start +0 --end +2000000000s --width 50 --out "$T/x1"
check '[ "$(ls "$T/x1")" = "SystemProfileEvents.csv" ]' "the default tables of a system profile: SystemProfileEvents"
check '! grep -q "note:" <<<"$OUT"' "absent default tables are not noted"
check 'head -1 "$T/x1/SystemProfileEvents.csv" | grep -q "^timeline_track,id,name,start_ts"' "header"
expect 0 "export-csv complete" -- export-csv "$S" --start +0 --end +2000000000s --no-sample --max-rows 10000000 \
    --tables SystemProfileEvents --out "$T/x2"
ROWS=$("$BIN" top "$S" --format json | grep -o '"rows":[0-9]*' | cut -d: -f2)
check '[ "$(($(wc -l <"$T/x2/SystemProfileEvents.csv") - 1))" = "$ROWS" ]' "a complete export holds every row"
check 'NXPROF_NO_TIMELINE_INDEX=1 "$BIN" export-csv "$S" --start +0 --end +2000000000s --width 50 --out "$T/x3" 2>/dev/null &&
       cmp -s "$T/x1/SystemProfileEvents.csv" "$T/x3/SystemProfileEvents.csv"' "sampled export: index = scan"

# --- without a usable index: the same answers, computed, with a note ---
"$BIN" top "$S" --format csv --limit 0 >"$T/top-index.csv"
printf '\003' | dd of="$S/.SystemProfileEvents.nxtl" bs=1 seek=8 conv=notrunc 2>/dev/null   # version 3
expect 0 "top with an old index" -- top "$S" --format csv --limit 0
contains "version 3" "the note says which version"
contains "nxprof index" "the note says how to rebuild"
check '"$BIN" top "$S" --format csv --limit 0 2>/dev/null | cmp -s - "$T/top-index.csv"' "old index: same answer"
expect 0 "nxprof index rebuilds it" -- index "$S" --tables SystemProfileEvents
check '"$BIN" top "$S" --format csv --limit 0 2>&1 | cmp -s - "$T/top-index.csv"' "rebuilt: same answer, no note"
rm "$S/.SystemProfileEvents.nxtl"
expect 0 "summary without an index" -- summary "$S"
contains "note:" "a note says the index was not used"

# --- one trace alone, and a synth capture with device profiles ---
mkdir "$T/one"
cp "$(ls "$TRACES"/*.json.gz | head -1)" "$T/one/"
expect 0 "process one trace" -- process "$T/one" --output-file "$T/one-sys"
expect 0 "top of one trace" -- top "$T/one-sys" --by cat
expect 0 "summary of one trace" -- summary "$T/one-sys" --format json
"$BIN" synth --preset tiny --out "$T/syn" --seed 3 >/dev/null 2>&1
expect 0 "process a synth capture" -- process "$T/syn" --output-file "$T/p"
expect 0 "summary of its system profile" -- summary "$T/p"
contains "Device profiles" "the device profiles are listed"
contains "p-nd0-nc0" "by name"
contains "CC active time" "with their CC active time"
check '! grep -q "error:" <<<"$OUT"' "every device profile was read"
expect 0 "top of its runtime events" -- top "$T/p" --by thread
contains "nc0" "runtime events on NeuronCore 0 have its track"
expect 0 "summary of a device profile as before" -- summary "$T/p/devices/p-nd0-nc0"
contains "Top " "the device summary"
mv "$T/p/devices/p-nd0-nc1" "$T/moved"
expect 0 "summary with a device profile missing" -- summary "$T/p"
contains "p-nd0-nc1: error: device profile 'p-nd0-nc1' not found" "the missing one is named, by its name"
expect 0 "view --ingest-only summary-text of a system profile" -- \
    view -d "$T/syn" --ingest-only --output-file "$T/v" --output-format summary-text
contains "System profile $T/v" "view prints the system summary"
finish
