#!/usr/bin/env bash
# test_usage.sh NXPROF — end-to-end checks of the CLI contract: help, version,
# and exit code 2 with a one-line hint for every kind of usage error.
set -u
BIN=${1:?usage: test_usage.sh path/to/nxprof}
. "$(dirname "$0")/harness.sh"

expect 0 "global help" -- --help;                contains "Commands:" "global help lists commands"
expect 0 "version" -- --version;                 contains "nxprof " "version names the tool"
expect 2 "no command" --
expect 2 "unknown command" -- frobnicate;        contains "unknown command 'frobnicate'" "unknown command named"
contains "Try 'nxprof --help'" "hint line"
expect 2 "unknown global option" -- --bogus;     contains "unknown option '--bogus'" "bogus option named"
expect 0 "help command" -- help schema;          contains "Usage: nxprof schema" "help <cmd>"
expect 2 "help for unknown command" -- help nope

# Every command listed by --help answers --help with exit 0 and rejects a bogus option with 2.
for cmd in $("$BIN" --help | awk '/^Commands:/{on=1;next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'); do
    expect 0 "$cmd --help" -- "$cmd" --help;     contains "Usage: nxprof $cmd" "$cmd help text"
    expect 2 "$cmd bogus option" -- "$cmd" --definitely-not-an-option
    contains "Try 'nxprof $cmd --help'" "$cmd hint"
    expect 2 "$cmd bogus short option" -- "$cmd" -Z
done

expect 2 "schema missing argument" -- schema --format; contains "needs an argument" "missing argument named"
expect 2 "schema bad format" -- schema --format xml;   contains "unknown format 'xml'" "bad format named"
expect 2 "schema stray argument" -- schema extra
expect 0 "schema json" -- schema --format json
expect 0 "view alias" -- view --show-profile-schema;   contains "openapi:" "view prints OpenAPI"
check '[ "$("$BIN" view --show-profile-schema)" = "$("$BIN" schema)" ]' "view --show-profile-schema equals schema"
expect 2 "view with nothing to do" -- view

# --- top, summary, view --ingest-only and the shared processing flags ---
UT=$(mktemp -d)
trap 'rm -rf "$UT"' EXIT
"$BIN" synth --preset tiny --out "$UT/cap" --seed 5 >/dev/null 2>&1
"$BIN" process "$UT/cap" --output-file "$UT/prof" >/dev/null 2>&1
PD="$UT/prof/devices/prof-nd0-nc0"   # NeuronCore 0's device profile
check '[ -s "$PD/Instruction.parquet" ]' "usage fixture profile written"
for cmd in top summary; do
    expect 2 "$cmd without PROFILE_DIR" -- $cmd;          contains "PROFILE_DIR is required" "$cmd names the missing argument"
    contains "Try 'nxprof $cmd --help'" "$cmd usage hint"
    expect 2 "$cmd stray argument" -- $cmd "$PD" extra
    expect 2 "$cmd bad format" -- $cmd "$PD" --format xml; contains "unknown format 'xml'" "$cmd bad format named"
    expect 2 "$cmd missing format value" -- $cmd "$PD" --format; contains "needs an argument" "$cmd missing value named"
    expect 1 "$cmd on a missing profile" -- $cmd "$UT/nope"
    expect 2 "$cmd negative rank" -- $cmd "$UT/prof" --rank -1; contains "--rank '-1' is not a rank" "$cmd bad rank named"
    expect 2 "$cmd non-numeric rank" -- $cmd "$UT/prof" --rank one
done
expect 2 "summary --rank of a device profile" -- summary "$PD" --rank 0; contains "ranks are a system profile's" "summary says why"
expect 0 "summary --rank of a system profile" -- summary "$UT/prof" --rank 3;   contains "rank       3" "summary names the rank"
expect 0 "top default" -- top "$PD";                  contains "total" "top prints a total line"
expect 2 "top unknown table" -- top "$PD" --table Nope; contains "unknown table 'Nope'" "unknown table named"
expect 2 "top transient table" -- top "$PD" --table MemoryBandwidthPoint
expect 1 "top absent table" -- top "$PD" --table Warning; contains "has no Warning table" "absent table named"
expect 2 "top unknown column" -- top "$PD" --by engine,nope; contains "no column 'nope'" "unknown column named"
expect 2 "top empty --by item" -- top "$PD" --by engine,;  contains "empty column name" "empty --by item"
expect 2 "top duplicate --by" -- top "$PD" --by engine,engine
expect 2 "top bad limit" -- top "$PD" --limit -3;     contains "--limit" "bad limit named"
expect 2 "top non-numeric limit" -- top "$PD" --limit ten
expect 0 "top limit 0 means all" -- top "$PD" --limit 0 --format csv
expect 2 "process --jobs 0" -- process "$UT/cap" --output-file "$UT/j" --jobs 0; contains "--jobs" "bad jobs named"
expect 2 "process --jobs x" -- process "$UT/cap" --output-file "$UT/j" --jobs x
expect 2 "process --jobs missing" -- process "$UT/cap" --output-file "$UT/j" --jobs
expect 2 "process ignores everything" -- process "$UT/cap" --output-file "$UT/j" --ignore-device-profile --ignore-system-profile
contains "nothing to process" "both ignore flags refused"
expect 0 "process --jobs 1 --ignore-system-profile" -- process "$UT/cap" --output-file "$UT/j1" --jobs 1 --ignore-system-profile
check '[ -s "$UT/j1/devices/j1-nd0-nc0/Instruction.parquet" ]' "--ignore-system-profile still writes device tables"
expect 2 "view serve with --output-file" -- view -d "$UT/cap" --output-file "$UT/v";  contains "--output-file needs --ingest-only" "view explains"
expect 2 "view --port with --ingest-only" -- view -d "$UT/cap" --ingest-only --port 0 --output-file "$UT/v"
expect 2 "view bad --port" -- view -d "$UT/cap" --port 70000
expect 2 "view bad --bind" -- view -d "$UT/cap" --bind nowhere
expect 2 "view --allow-host with --ingest-only" -- view -d "$UT/cap" --ingest-only --allow-host a.example
contains "cannot be combined with --ingest-only" "view explains --allow-host"
expect 2 "view bad output format" -- view -d "$UT/cap" --ingest-only --output-format json
contains "unknown output format 'json'" "view output format named"
expect 2 "view schema with -d" -- view --show-profile-schema -d "$UT/cap"
expect 2 "view both destinations" -- view -d "$UT/cap" --ingest-only --output-file "$UT/v" --data-path "$UT/d"
expect 2 "view --jobs 0" -- view -d "$UT/cap" --ingest-only --output-file "$UT/v" --jobs 0
expect 2 "view --max-rows-per-file 0" -- view -d "$UT/cap" --ingest-only --output-file "$UT/v" --max-rows-per-file 0
expect 2 "view stray argument" -- view -d "$UT/cap" --ingest-only extra
expect 0 "view --ingest-only" -- view -d "$UT/cap" --ingest-only --output-file "$UT/v" --jobs 2
check '[ -s "$UT/v/devices/v-nd0-nc1/Instruction.parquet" ]' "view --ingest-only writes the profile"
expect 0 "view --ingest-only --data-path" -- view -d "$UT/cap" --ingest-only --data-path "$UT/d" --display-name run
check '[ -s "$UT/d/profiles/global/run@latest/DeviceProfileList.parquet" ] && [ -s "$UT/d/profiles/global/run-nd0-nc0@latest/Instruction.parquet" ]' "view --data-path --display-name layout"

# --- export-csv ---
X=(export-csv "$PD" --out "$UT/x")
expect 2 "export-csv without PROFILE_DIR" -- export-csv --start 0 --end 1 --out "$UT/x"; contains "PROFILE_DIR is required" "export-csv names the missing argument"
expect 2 "export-csv without --start" -- "${X[@]}" --end 5;            contains "--start is required" "missing --start named"
expect 2 "export-csv without --end" -- "${X[@]}" --start 5;            contains "--end is required" "missing --end named"
expect 2 "export-csv without --out" -- export-csv "$PD" --start 0 --end 1; contains "--out is required" "missing --out named"
expect 2 "export-csv end before start" -- "${X[@]}" --start 10 --end 9; contains "before --start" "end before start named"
expect 2 "export-csv unknown table" -- "${X[@]}" --start 0 --end 1 --tables Instruction,Nope; contains "unknown table 'Nope'" "unknown table named"
expect 2 "export-csv non-timeline table" -- "${X[@]}" --start 0 --end 1 --tables Summary
expect 2 "export-csv duplicate table" -- "${X[@]}" --start 0 --end 1 --tables DmaPacket,DmaPacket
expect 2 "export-csv empty table item" -- "${X[@]}" --start 0 --end 1 --tables Instruction,
expect 2 "export-csv bad time" -- "${X[@]}" --start 10xs --end 20;    contains "bad --start" "bad time named"
expect 2 "export-csv fractional ns" -- "${X[@]}" --start 1.5 --end 20
expect 2 "export-csv negative time" -- "${X[@]}" --start -5 --end 20
expect 2 "export-csv bare +" -- "${X[@]}" --start + --end 20;      contains "bad --start" "bare + named"
expect 2 "export-csv relative end before relative start" -- "${X[@]}" --start +2ms --end +1ms; contains "before --start" "relative order checked"
expect 2 "export-csv width and no-sample" -- "${X[@]}" --start 0 --end 1 --width 10 --no-sample; contains "exclude each other" "conflict named"
expect 2 "export-csv width 0" -- "${X[@]}" --start 0 --end 1 --width 0; contains "--width" "bad width named"
expect 2 "export-csv max-rows 0" -- "${X[@]}" --start 0 --end 1 --max-rows 0; contains "--max-rows" "bad max-rows named"
expect 2 "export-csv stray argument" -- "${X[@]}" extra --start 0 --end 1
expect 1 "export-csv missing profile" -- export-csv "$UT/nope" --start 0 --end 1 --out "$UT/x"
expect 0 "export-csv units" -- "${X[@]}" --start 1.5us --end 2s
check '[ "$(wc -l < "$UT/x/Instruction.csv")" -eq 1 ]' "window outside the profile gives a header-only file"
expect 3 "export-csv truncation" -- "${X[@]}" --start 0 --end 9000000000s --no-sample --max-rows 2; contains "--max-rows 2" "truncation warning names the limit"
expect 2 "export-csv width over the shared limit" -- "${X[@]}" --start 0 --end 1 --width 1048577; contains "--width" "width limit named"
J=(export-csv "$PD" --out "$UT/j" --start 0 --end 9000000000s --no-sample --tables Instruction)
expect 0 "export-csv csv" -- "${J[@]}"
expect 0 "export-csv json rows" -- "${J[@]}" --format json
check 'python3 -c "import csv,json,sys; r=json.load(open(sys.argv[1])); c=list(csv.reader(open(sys.argv[2]))); sys.exit(not (len(r) == len(c) - 1 > 0 and [x[\"track\"] for x in r] == [x[0] for x in c[1:]]))" "$UT/j/Instruction.json" "$UT/j/Instruction.csv"' "json rows: one object per CSV row, same tracks"
expect 2 "export-csv unknown format" -- "${X[@]}" --start 0 --end 1 --format perfetto

# --- export-perfetto ---
expect 2 "export-perfetto without --out" -- export-perfetto "$PD"; contains "--out is required" "missing --out named"
expect 2 "export-perfetto bad table" -- export-perfetto "$PD" --out "$UT/p.pftrace" --tables Nope; contains "unknown table 'Nope'" "table named"
expect 1 "export-perfetto missing profile" -- export-perfetto "$UT/nope" --out "$UT/p.pftrace"
expect 0 "export-perfetto" -- export-perfetto "$PD" --out "$UT/p.pftrace" --start +0 --end +1s
check '[ -s "$UT/p.pftrace" ] && ! ls "$UT"/p.pftrace.tmp-* >/dev/null 2>&1' "export-perfetto writes the trace, no temporary left"
expect 2 "view perfetto without --output-file" -- view -d "$UT/cap" --output-format perfetto

# --- serve (usage errors only: a started server would block) ---
expect 2 "serve bad port" -- serve --port 65536;        contains "bad --port" "bad port named"
expect 2 "serve negative port" -- serve --port -1
expect 2 "serve port not a number" -- serve --port 30x1
expect 2 "serve bad bind" -- serve --bind localhost;    contains "bad --bind" "bad bind named"
expect 2 "serve bad threads" -- serve --threads 0
expect 2 "serve --allow-host with a port" -- serve --allow-host a.example:80; contains "bad --allow-host" "bad host named"
expect 2 "serve --allow-host not a name" -- serve --allow-host "a b"
expect 2 "serve empty data path" -- serve --data-path ""
expect 2 "serve stray argument" -- serve extra
expect 2 "serve missing argument" -- serve --port;      contains "needs an argument" "serve missing argument named"

finish
