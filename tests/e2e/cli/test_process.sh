#!/usr/bin/env bash
# test_process.sh NXPROF — end-to-end checks of `nxprof process`: a tiny 2-core synth
# capture becomes a system profile and one device profile per NeuronCore with the
# expected tables (under --data-path/--display-name and --output-file); one trace
# and no system data is one device profile; several sessions are a set of profiles
# each (--output-file refuses them); a session directory is accepted as the
# capture; a corrupt capture exits 1 with the file named and leaves the previous
# profiles byte-identical with no temporary directory behind, a run stopped by
# SIGTERM midway removes its temporary directories and one killed by SIGKILL leaves
# the old profiles intact and its leftovers are removed by the next run, and usage
# errors exit 2. System profile: a
# framework-only capture (a Chrome trace alone) works, --ignore-device-profile and
# --ignore-system-profile each skip their half (both: exit 1 naming the capture),
# a malformed TSV exits 1 naming file and line, bad JSON exits 1 naming the file.
# --jobs 4 writes the same bytes as --jobs 1.
set -u
BIN=${1:?usage: test_process.sh path/to/nxprof}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"

# --- a tiny capture, processed ---
expect 0 "tiny synth" -- synth --preset tiny --out "$TMP/cap" --seed 3
expect 0 "process --data-path" -- process "$TMP/cap" --data-path "$TMP/data" --display-name run1
G="$TMP/data/profiles/global"
P="$G/run1@latest"
check 'grep -q "wrote $P (system profile, 2 device profiles)" <<<"$OUT"' "process prints the system profile"
check 'grep -q "device profile $G/run1-nd0-nc1@latest (NeuronCore 1 of device 0)" <<<"$OUT"' "and each device profile"
for t in SystemProfileEvents CpuUsage DeviceProfileList Metadata SchemaFields; do
    check '[ -s "$P/$t.parquet" ] && [ "$(head -c 4 "$P/$t.parquet")" = PAR1 ]' "system profile: $t.parquet written"
done
check '[ ! -e "$P/Instruction.parquet" ]' "system profile: no device table"
for c in 0 1; do
    for t in Instruction NeffHeader DmaQueuesInfo Summary Metadata SchemaFields; do
        check '[ -s "$G/run1-nd0-nc$c@latest/$t.parquet" ]' "device profile nc$c: $t.parquet written"
    done
    check '[ ! -e "$G/run1-nd0-nc$c@latest/SystemProfileEvents.parquet" ]' "device profile nc$c: no system table"
done
check '[ "$(ls "$G" | sort | tr "\n" " ")" = "run1-nd0-nc0@latest run1-nd0-nc1@latest run1@latest " ]' \
    "nothing but the three profiles in profiles/global (and the set's hidden folder)"
expect 0 "DeviceProfileList" -- top "$P" --table DeviceProfileList --by device_profile_name,nc_id --format csv
check 'grep -q "^run1-nd0-nc0,0,1" <<<"$OUT" && grep -q "^run1-nd0-nc1,1,1" <<<"$OUT"' \
    "DeviceProfileList names each device profile once, with its NeuronCore"

expect 0 "default display name" -- process "$TMP/cap/" --data-path "$TMP/data"
check '[ -s "$G/cap@latest/DeviceProfileList.parquet" ] && [ -s "$G/cap-nd0-nc0@latest/Instruction.parquet" ]' \
    "display name defaults to the capture's base name"

expect 0 "process --output-file" -- process "$TMP/cap" --output-file "$TMP/prof"
check '[ -s "$TMP/prof/DeviceProfileList.parquet" ] && [ -s "$TMP/prof/Metadata.parquet" ]' "--output-file writes the system profile to DIR"
check '[ "$(ls "$TMP/prof/devices" | tr "\n" " ")" = "prof-nd0-nc0 prof-nd0-nc1 " ] && [ -s "$TMP/prof/devices/prof-nd0-nc1/Instruction.parquet" ]' \
    "and the device profiles to DIR/devices/<name>"

expect 0 "split tables" -- process "$TMP/cap" --output-file "$TMP/split" --max-rows-per-file 200
S0="$TMP/split/devices/split-nd0-nc0"
check '[ -s "$S0/Instruction_0.parquet" ] && [ -s "$S0/Instruction_2.parquet" ] && [ ! -e "$S0/Instruction.parquet" ]' \
    "Instruction split into _0.._k above --max-rows-per-file"

# --- one trace and no system data: one device profile; sessions ---
expect 0 "one-core synth" -- synth --preset tiny --out "$TMP/one" --cores 1 --no-system --seed 3
expect 0 "one device trace" -- process "$TMP/one" --output-file "$TMP/oneprof"
check '[ -s "$TMP/oneprof/Instruction.parquet" ] && [ ! -e "$TMP/oneprof/devices" ] && [ ! -e "$TMP/oneprof/DeviceProfileList.parquet" ]' \
    "one trace, no system data: DIR is the device profile"
expect 0 "one device trace, data path" -- process "$TMP/one" --data-path "$TMP/d1" --display-name solo
check '[ "$(ls "$TMP/d1/profiles/global")" = "solo@latest" ] && [ -s "$TMP/d1/profiles/global/solo@latest/Instruction.parquet" ]' \
    "one trace, no system data: one profile named N"
SES=$(echo "$TMP"/cap/*_pid_*/*)
expect 0 "a session directory as the capture" -- process "$SES" --output-file "$TMP/sesprof"
check '[ -s "$TMP/sesprof/devices/sesprof-nd0-nc1/Instruction.parquet" ] && [ -s "$TMP/sesprof/SystemProfileEvents.parquet" ]' \
    "a <timestamp> session directory is processed as that session"
cp -r "$TMP/cap" "$TMP/two"
expect 0 "a second session" -- synth --preset tiny --out "$TMP/two" --seed 4 --force
expect 1 "two sessions, --output-file" -- process "$TMP/two" --output-file "$TMP/twoprof"
check 'grep -q "2 capture sessions" <<<"$OUT" && grep -q -- "--data-path" <<<"$OUT"' "the refusal says what to do"
check '[ ! -e "$TMP/twoprof" ]' "nothing written"
expect 0 "two sessions, --data-path" -- process "$TMP/two" --data-path "$TMP/d2" --display-name t
check '[ "$(ls "$TMP/d2/profiles/global" | sort | tr "\n" " ")" = "t-s1-nd0-nc0@latest t-s1-nd0-nc1@latest t-s1@latest t-s2-nd0-nc0@latest t-s2-nd0-nc1@latest t-s2@latest " ]' \
    "one set of profiles per session, named N-s<k>"

# --- nxprof replaces only what it wrote: a user's folder or another tool's files are refused ---
expect 0 "re-processing onto its own profile" -- process "$TMP/cap" --output-file "$TMP/prof"
check '[ -f "$TMP/prof/.nxprof-profile" ]' "a profile carries the nxprof marker"
mkdir -p "$TMP/mydocs/sub" && echo "precious" >"$TMP/mydocs/notes.txt" && echo x >"$TMP/mydocs/sub/y"
mine_before=$(cd "$TMP/mydocs" && find . | sort && cat notes.txt sub/y | md5sum)
expect 1 "--output-file onto a user's folder" -- process "$TMP/cap" --output-file "$TMP/mydocs"
check 'grep -q "refusing to replace" <<<"$OUT"' "the refusal says why"
check '[ "$mine_before" = "$(cd "$TMP/mydocs" && find . | sort && cat notes.txt sub/y | md5sum)" ]' "the user's folder is untouched"
check '[ -z "$(ls -A "$TMP" | grep "^\.mydocs")" ]' "no temporary directory beside it"
mkdir -p "$TMP/emptydir"
expect 0 "--output-file onto an empty folder" -- process "$TMP/cap" --output-file "$TMP/emptydir"

# --- a corrupt capture: exit 1, file named, old profiles intact ---
# set_hash: every file of the run1 profiles (through their links), names and bytes.
set_hash() { (cd "$G" && find -L run1* -type f | sort && find -L run1* -type f | sort | xargs cat | md5sum); }
# hidden_left: what runs left in $G besides each set's hidden folder holding `current`
# and the generation it names (docs/architecture.md, "Output layout").
hidden_left() {
    local s
    ls -A "$G" | grep "^\." | grep -v "\.nxprof-set$"
    for s in "$G"/.*.nxprof-set; do
        [ -d "$s" ] && ls -A "$s" | grep -vx -e current -e "$(readlink "$s/current")"
    done
}
cp -r "$TMP/cap" "$TMP/bad"
traces=("$TMP"/bad/*_pid_*/*/trace_*_nc1.nxtrace)
T=${traces[0]}
truncate -s -1 "$T"
before=$(set_hash)
expect 1 "truncated trace" -- process "$TMP/bad" --data-path "$TMP/data" --display-name run1
check 'grep -qF "$T" <<<"$OUT"' "error names the truncated trace"
check '[ "$before" = "$(set_hash)" ]' "previous profiles untouched after a failed run (the other core's too)"
check '[ -z "$(hidden_left)" ]' "no temporary directory left"

expect 1 "missing capture" -- process "$TMP/nope" --output-file "$TMP/o2"
check 'grep -qF "$TMP/nope" <<<"$OUT"' "error names the missing directory"
check '[ ! -e "$TMP/o2" ]' "nothing written for a missing capture"

P2=("$TMP"/bad/*_pid_*/*/program_*.nxprog)
printf 'X' | dd of="${P2[0]}" bs=1 seek=0 conv=notrunc 2>/dev/null
expect 1 "corrupt program" -- process "$TMP/bad" --output-file "$TMP/o3"
check 'grep -qF "program_" <<<"$OUT"' "error names the program file"

# --- a run stopped midway: SIGTERM cleans up, SIGKILL's leftovers are swept ---
# A capture large enough that processing takes a while; the signal is sent once
# the run's temporary directory exists, so it lands mid-run.
expect 0 "large synth" -- synth --preset llama-layer --events 3000000 --seed 2 --out "$TMP/big"
before=$(set_hash)
# stop_midway SIGNAL: starts a run into run1@latest, signals it mid-run, sets RC.
stop_midway() {
    "$BIN" process "$TMP/big" --data-path "$TMP/data" --display-name run1 >/dev/null 2>"$TMP/stop.err" &
    local pid=$! i
    for ((i = 0; i < 500; i++)); do
        compgen -G "$G/.run1.nxprof-set/g-$pid-*" >/dev/null && break
        sleep 0.01
    done
    sleep 0.2
    kill -s "$1" "$pid"
    wait "$pid"
    RC=$?
}
stop_midway TERM
check '[ "$RC" -ne 0 ]' "SIGTERM mid-run exits non-zero (got $RC)"
check 'grep -q "interrupted by signal" "$TMP/stop.err"' "SIGTERM is reported"
check '[ "$before" = "$(set_hash)" ]' "previous profiles untouched after SIGTERM"
check '[ -z "$(hidden_left)" ]' "SIGTERM leaves no temporary directory"
stop_midway KILL
check '[ "$RC" -eq 137 ]' "SIGKILL mid-run (got $RC)"
check '[ "$before" = "$(set_hash)" ]' "previous profiles untouched after SIGKILL"
expect 0 "run after a killed run" -- process "$TMP/cap" --data-path "$TMP/data" --display-name run1
check '[ -z "$(hidden_left)" ]' "the next run removes the killed run's temporary directory"
rm -rf "$TMP/big"

# --- system profile: framework-only captures, --ignore-*-profile, bad system files ---
TEST_DATA=${NXPROF_TEST_DATA:-$(dirname "$0")/../../data}
FX=$(ls "$TEST_DATA"/chrome-traces/*.json.gz | head -1)
[ -n "$FX" ] || { echo "no real PyTorch trace under $TEST_DATA/chrome-traces" >&2; exit 1; }
mkdir -p "$TMP/fw"
cp "$FX" "$TMP/fw/"
expect 0 "framework-only capture" -- process "$TMP/fw" --output-file "$TMP/fwp"
for t in SystemProfileEvents SystemProfileMetadata Metadata SchemaFields; do
    check '[ -s "$TMP/fwp/$t.parquet" ]' "framework-only: $t.parquet written"
done
check '[ ! -e "$TMP/fwp/Instruction.parquet" ]' "framework-only: no Instruction table"

expect 0 "--ignore-device-profile" -- process "$TMP/cap" --output-file "$TMP/nodev" --ignore-device-profile
for t in SystemProfileEvents CpuUsage HostMemUsage SystemProfileMetadata Metadata SchemaFields; do
    check '[ -s "$TMP/nodev/$t.parquet" ]' "--ignore-device-profile: $t.parquet written"
done
check '[ ! -e "$TMP/nodev/Instruction.parquet" ] && [ ! -e "$TMP/nodev/NeffHeader.parquet" ]' \
    "--ignore-device-profile: no device table"

expect 0 "--ignore-system-profile" -- process "$TMP/cap" --output-file "$TMP/nosys" --ignore-system-profile
check '[ -s "$TMP/nosys/devices/nosys-nd0-nc0/Instruction.parquet" ] && [ -s "$TMP/nosys/DeviceProfileList.parquet" ] && [ ! -e "$TMP/nosys/SystemProfileEvents.parquet" ] && [ ! -e "$TMP/nosys/CpuUsage.parquet" ]' \
    "--ignore-system-profile: device profiles and a DeviceProfileList, no system table"

expect 2 "both profiles ignored (usage error)" -- process "$TMP/cap" --output-file "$TMP/none" --ignore-device-profile --ignore-system-profile
cp -r "$TMP/cap" "$TMP/devonly"
rm -f "$TMP"/devonly/*_pid_*/*/*.tsv "$TMP"/devonly/*_pid_*/*/*.json
expect 1 "device-only capture with --ignore-device-profile" -- process "$TMP/devonly" --output-file "$TMP/none" --ignore-device-profile
contains "$TMP/devonly" "error names the capture directory"
check '[ ! -e "$TMP/none" ]' "nothing written when nothing is left to process"

cp -r "$TMP/cap" "$TMP/badtsv"
CPU=("$TMP"/badtsv/*_pid_*/*/cpu_usage.tsv)
sed -i '5s/\t[0-9.]*$/\tlots/' "${CPU[0]}"
expect 1 "malformed cpu_usage.tsv" -- process "$TMP/badtsv" --output-file "$TMP/o4"
contains "${CPU[0]}" "error names the TSV file"
contains "line 5" "error names the TSV line"
check '[ ! -e "$TMP/o4" ]' "nothing written for a malformed TSV"

cp -r "$TMP/cap" "$TMP/badjson"
TJ=("$TMP"/badjson/*_pid_*/*/trace.json)
printf '{"traceEvents": [{"ph": "X", "name": "op", "ts": 1,,}]}' >"${TJ[0]}"
expect 1 "bad trace.json" -- process "$TMP/badjson" --output-file "$TMP/o5"
contains "${TJ[0]}" "error names the JSON file"
mkdir -p "$TMP/fwbad" && printf '[{"ph": "X", "ts": }' >"$TMP/fwbad/trace.json"
expect 1 "bad framework-only trace.json" -- process "$TMP/fwbad" --output-file "$TMP/o6"
contains "$TMP/fwbad/trace.json" "error names the framework-only JSON file"

# --- --jobs changes the speed, not the bytes: 4 traces of ~120k Instruction rows
# each (more than one 64Ki-row group), built one at a time and all at once, give
# the same files (the profiles' directories share a name, as it is the display name) ---
expect 0 "4-core synth" -- synth --preset llama-layer --events 1000000 --cores 4 --seed 5 --out "$TMP/four"
mkdir -p "$TMP/jobs1" "$TMP/jobs4"
expect 0 "process --jobs 1" -- process "$TMP/four" --output-file "$TMP/jobs1/p" --jobs 1
expect 0 "process --jobs 4" -- process "$TMP/four" --output-file "$TMP/jobs4/p" --jobs 4
check '[ "$(find "$TMP/jobs1/p" -type f | wc -l)" -gt 100 ] && diff -r "$TMP/jobs1/p" "$TMP/jobs4/p" >/dev/null' \
    "--jobs 4 writes the same bytes as --jobs 1"

# --- usage errors ---
expect 2 "no capture" -- process --data-path "$TMP/u"
expect 2 "no destination" -- process "$TMP/cap"
expect 2 "both destinations" -- process "$TMP/cap" --data-path "$TMP/u" --output-file "$TMP/u2"
expect 2 "bad max rows" -- process "$TMP/cap" --output-file "$TMP/u2" --max-rows-per-file 0
expect 2 "non-numeric max rows" -- process "$TMP/cap" --output-file "$TMP/u2" --max-rows-per-file lots
expect 2 "unknown option" -- process "$TMP/cap" --output-file "$TMP/u2" --frobnicate
expect 2 "missing value" -- process "$TMP/cap" --data-path
expect 2 "stray argument" -- process "$TMP/cap" extra --output-file "$TMP/u2"
expect 2 "bad display name" -- process "$TMP/cap" --data-path "$TMP/u" --display-name "a/b"
expect 2 "dot-dot display name" -- process "$TMP/cap" --data-path "$TMP/u" --display-name ".."
check '[ ! -e "$TMP/u" ] && [ ! -e "$TMP/u2" ]' "usage errors write nothing"

finish
