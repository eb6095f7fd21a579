#!/usr/bin/env bash
# test_annotations.sh NXPROF — end-to-end checks of `nxprof annotations` and of
# annotations surviving re-processing: a profile starts with none; --import of a
# hand-written document, then --export, gives the same markers and regions (compared
# by Python's json module, times beyond 2^53 exact); a second --import adds, --replace
# replaces; an invalid file exits 1 naming the file and the member and changes
# nothing; `nxprof process` again (--data-path, system and device profiles, and
# --output-file with its nested device profiles) keeps each profile's file byte for
# byte, and the new manifest lists it; a damaged file is kept too, and then named by
# the listing; usage errors exit 2.
set -u
BIN=${1:?usage: test_annotations.sh path/to/nxprof}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/harness.sh"
PY=${PYTHON:-python3}
F=.nxprof-annotations.json

# same_doc A B: the two JSON files hold the same annotations (times as integers,
# optional members absent or null alike).
same_doc() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
def norm(path):
    d = json.load(open(path, encoding="utf-8"))
    def item(x):
        return {k: (int(v) if k.endswith("_ns") else v) for k, v in x.items() if v is not None}
    return (d["version"], [item(m) for m in d.get("markers", [])], [item(r) for r in d.get("regions", [])])
sys.exit(0 if norm(sys.argv[1]) == norm(sys.argv[2]) else 1)
EOF
}

cat >"$TMP/in.json" <<'EOF'
{"version": 1,
 "markers": [{"time_ns": 1700000000123456789, "label": "loss spike \u00e9", "colour": "#e4572e"},
             {"time_ns": "1700000000123456999", "label": "", "track": "SystemProfileEvents:7"}],
 "regions": [{"start_ns": 1700000000000000000, "end_ns": 1700000000500000000, "name": "step 3",
              "note": "slow all-reduce\nsee rank 1"}]}
EOF

expect 0 "tiny synth" -- synth --preset tiny --out "$TMP/cap" --seed 3
expect 0 "process" -- process "$TMP/cap" --data-path "$TMP/data" --display-name run1
G="$TMP/data/profiles/global"
P="$G/run1@latest"
D="$G/run1-nd0-nc0@latest"

expect 0 "list, none yet" -- annotations "$P"
contains "0 markers, 0 regions" "a new profile has no annotations"
expect 0 "export, none yet" -- annotations "$P" --export "$TMP/empty.json"
check '"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d != {\"version\":1,\"markers\":[],\"regions\":[]})" "$TMP/empty.json"' \
    "an empty export is the empty document"

expect 0 "import" -- annotations "$P" --import "$TMP/in.json"
contains "2 markers, 1 regions" "import reports what the profile holds"
check '[ -f "$P/$F" ]' "the annotations file is in the profile"
expect 0 "export" -- annotations "$P" --export "$TMP/out.json"
check 'same_doc "$TMP/in.json" "$TMP/out.json"' "export after import gives the imported annotations"
check 'grep -q "\"time_ns\":\"1700000000123456789\"" "$TMP/out.json"' "a time beyond 2^53 is written exactly (as a string)"
expect 0 "export to stdout" -- annotations "$P" --export -
check 'grep -q "loss spike" <<<"$OUT"' "--export - writes stdout"
expect 0 "list" -- annotations "$P"
contains "1700000000123456789" "the listing shows a marker's time"
contains "loss spike" "and its label"
contains "step 3" "and a region's name"
contains "see rank 1" "and its note"

expect 0 "import again" -- annotations "$P" --import "$TMP/in.json"
contains "4 markers, 2 regions" "a second import adds"
expect 0 "import --replace" -- annotations "$P" --import "$TMP/in.json" --replace
contains "2 markers, 1 regions" "--replace replaces"
cp "$P/$F" "$TMP/before.json"

# an invalid file: named with its member, nothing written
printf '{"version":1,"markers":[{"time_ns":5,"label":"a","colour":"orange"}]}' >"$TMP/bad.json"
expect 1 "invalid import" -- annotations "$P" --import "$TMP/bad.json"
contains "$TMP/bad.json: markers[0].colour: not a colour" "the error names the file and the member"
check 'cmp -s "$P/$F" "$TMP/before.json"' "an invalid import changes nothing"
printf '{"version":1,"regions":[{"start_ns":1,"end_ns":2,"name":"x","colour":"#fff","extra":1}]}' >"$TMP/bad2.json"
expect 1 "unknown member" -- annotations "$P" --import "$TMP/bad2.json"
contains 'regions[0]: unknown member "extra"' "an unknown member is refused, named"

# the device profile has annotations of its own
expect 0 "import into a device profile" -- annotations "$D" --import "$TMP/in.json"
cp "$D/$F" "$TMP/device_before.json"

# re-processing keeps them
expect 0 "process again" -- process "$TMP/cap" --data-path "$TMP/data" --display-name run1
check 'cmp -s "$P/$F" "$TMP/before.json"' "re-processing keeps the system profile's annotations"
check 'cmp -s "$D/$F" "$TMP/device_before.json"' "and the device profile's"
check '[ ! -e "$G/run1-nd0-nc1@latest/$F" ]' "a profile that had none still has none"
check 'grep -qx "f $F" "$P/.nxprof-profile"' "the new profile's manifest lists the carried file"
expect 0 "export after re-processing" -- annotations "$P" --export "$TMP/after.json"
check 'same_doc "$TMP/in.json" "$TMP/after.json"' "the same annotations after re-processing"

# a damaged file is carried as it is (never dropped), and the listing names it
printf '{"version":1,"markers":[' >"$P/$F"
expect 0 "process with a damaged annotations file" -- process "$TMP/cap" --data-path "$TMP/data" --display-name run1
check '[ "$(cat "$P/$F")" = "{\"version\":1,\"markers\":[" ]' "a damaged file is carried byte for byte"
expect 1 "list a damaged file" -- annotations "$P"
contains "$F" "the listing names the damaged file"
expect 0 "replace a damaged file" -- annotations "$P" --import "$TMP/in.json" --replace

# --output-file: the system profile and its nested device profiles
expect 0 "process --output-file" -- process "$TMP/cap" --output-file "$TMP/prof"
expect 0 "import into DIR" -- annotations "$TMP/prof" --import "$TMP/in.json"
expect 0 "import into DIR/devices/<name>" -- annotations "$TMP/prof/devices/prof-nd0-nc1" --import "$TMP/in.json" --replace
cp "$TMP/prof/$F" "$TMP/of_before.json"
cp "$TMP/prof/devices/prof-nd0-nc1/$F" "$TMP/of_device_before.json"
expect 0 "process --output-file again" -- process "$TMP/cap" --output-file "$TMP/prof"
check 'cmp -s "$TMP/prof/$F" "$TMP/of_before.json"' "--output-file: re-processing keeps DIR's annotations"
check 'cmp -s "$TMP/prof/devices/prof-nd0-nc1/$F" "$TMP/of_device_before.json"' "and a nested device profile's"
check '[ ! -e "$TMP/prof/devices/prof-nd0-nc0/$F" ]' "a nested profile that had none still has none"

# usage and bad targets
expect 2 "export and import" -- annotations "$P" --export a.json --import b.json
expect 2 "replace alone" -- annotations "$P" --replace
expect 2 "no profile" -- annotations
mkdir -p "$TMP/notaprofile"
expect 1 "not a profile" -- annotations "$TMP/notaprofile" --import "$TMP/in.json"
contains "not a profile directory" "a directory that is no profile is refused"
check '[ ! -e "$TMP/notaprofile/$F" ]' "and gets no file"

finish
