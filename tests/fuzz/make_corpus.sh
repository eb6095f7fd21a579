#!/usr/bin/env bash
# make_corpus.sh — (re)writes the seed corpora of the fuzz harnesses in
# tests/fuzz/corpus/<harness>/ (all but parquet/, whose seeds come from
# writer_seeds.c, exotic_seeds.c and duckdb_seeds.mjs).
#
#   tests/fuzz/make_corpus.sh [NXPROF]      (default build/nxprof)
#
# The capture is `nxprof synth --preset tiny --events 1` (2 cores, seed 1): the
# same bytes as the fixture the harnesses build in-process (fuzz_fixture.c), so the
# trace seeds pair with the fixture's program and the index seeds match its
# Parquet files. The output is deterministic; commit it.
set -euo pipefail
cd "$(dirname "$0")/../.."
NXPROF=${1:-build/nxprof}
[ -x "$NXPROF" ] || { echo "make_corpus: $NXPROF is not built (make build)" >&2; exit 1; }
C=tests/fuzz/corpus
work=$(mktemp -d "${TMPDIR:-/tmp}/nxfuzz-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$NXPROF" synth --preset tiny --events 1 --out "$work/cap" >/dev/null
"$NXPROF" synth --preset tiny --events 1 --cores 1 --no-system --out "$work/cap1" >/dev/null
session=$(dirname "$(find "$work/cap" -name 'program_*.nxprog')")
"$NXPROF" process "$work/cap" --data-path "$work/data" --display-name tiny >/dev/null

for h in program trace system_tsv chrome_json chrome_gz timeline_index http xspace annotations; do
  rm -rf "${C:?}/$h"
  mkdir -p "$C/$h"
done

# program: the 2-core program (collectives, CC streams) and the 1-core one.
cp "$session"/program_*.nxprog "$C/program/tiny-2core.nxprog"
cp "$(find "$work/cap1" -name 'program_*.nxprog')" "$C/program/tiny-1core.nxprog"

# trace: both cores' traces whole, one cut to its header (an empty trace) and one to
# 100 records (a trace that ends mid-execution).
n=0
for t in "$session"/trace_*.nxtrace; do
  cp "$t" "$C/trace/core$n.nxtrace"
  n=$((n + 1))
done
head -c 256 "$C/trace/core0.nxtrace" >"$C/trace/header-only.nxtrace"
head -c $((256 + 100 * 40)) "$C/trace/core1.nxtrace" >"$C/trace/first-100.nxtrace"

# system_tsv: each kind, cut to its first lines (records stay sorted).
head -n 40 "$session/runtime_events.tsv" >"$C/system_tsv/runtime_events.tsv"
head -n 30 "$session/cpu_usage.tsv" >"$C/system_tsv/cpu_usage.tsv"
head -n 30 "$session/host_mem.tsv" >"$C/system_tsv/host_mem.tsv"
head -n 12 "$session/device_mem.tsv" >"$C/system_tsv/device_mem.tsv"

# chrome_json: synth's trace.json, the real PyTorch traces cut to their first 40
# events (every top-level key kept), and hand-written edge cases.
cp "$session/trace.json" "$C/chrome_json/synth.json"
for f in tests/data/chrome-traces/rank-34.*.json.gz tests/data/chrome-traces/mi250_*.json.gz \
         tests/data/chrome-traces/benchmark_result_*.json.gz; do
  base=$(basename "$f" .json.gz)
  base=${base%%.*}
  python3 - "$f" "$C/chrome_json/$base.json" <<'EOF'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1]))
doc["traceEvents"] = doc["traceEvents"][:40]
if "distributedInfo" in doc and "pg_config" in doc["distributedInfo"]:
    doc["distributedInfo"]["pg_config"] = doc["distributedInfo"]["pg_config"][:1]
json.dump(doc, open(sys.argv[2], "w"), indent=1)
EOF
done
printf '%s' '[{"ph":"X","name":"a","ts":1.5,"dur":2,"pid":1,"tid":2},{"ph":"B","name":"b","ts":"x"}' \
  >"$C/chrome_json/bare-array-unclosed.json"
printf '%s' '[{"ph":"B","name":"f","cat":"c","ts":1712195495519695.812,"pid":"Spans","tid":"0x1f"},{"ph":"E","ts":1712195495519699,"pid":"Spans","tid":"0x1f"}]' \
  >"$C/chrome_json/bare-array.json"
printf '%s\n' '{"displayTimeUnit":"ns","traceEvents":[' \
  '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main\u0000x","n":[1,2.5e3,-0.0,{"k":null}]}},' \
  '{"ph":"s","id":"0x10","bind_id":7,"name":"flow","ts":3,"pid":1,"tid":1,"bp":"e"},' \
  '{"ph":"i","s":"g","name":"\ud83d\ude00","ts":-4.0001,"pid":1,"tid":1,"flow_in":true,"flow_out":false},' \
  '{"ph":"C","name":"mem","ts":5,"pid":1,"args":{"bytes":123456789012345678901234567890}},' \
  '{"ph":"X","name":"dup","name":"last","ts":9223372036854775.807,"dur":0.0005,"pid":null,"tid":2}' \
  '],"traceName":"t","deviceProperties":[{"id":0,"name":"x"}],"schemaVersion":1}' \
  >"$C/chrome_json/edge-cases.json"

# chrome_gz: real traces as they are, a trimmed one gzip'd, two members, junk after a
# member; and plain JSON, which the harness compresses itself.
cp tests/data/chrome-traces/rank-34.*.json.gz "$C/chrome_gz/rank-34.json.gz"
cp tests/data/chrome-traces/mi250_*.json.gz "$C/chrome_gz/mi250.json.gz"
gzip -n -c "$C/chrome_json/synth.json" >"$C/chrome_gz/synth.json.gz"
{ printf '%s' '[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},' | gzip -n -c
  printf '%s' '{"ph":"X","name":"b","ts":3,"dur":1,"pid":1,"tid":1}]' | gzip -n -c; } >"$C/chrome_gz/two-members.json.gz"
{ gzip -n -c "$C/chrome_json/bare-array.json"; printf 'junk'; } >"$C/chrome_gz/trailing-junk.json.gz"
cp "$C/chrome_json/edge-cases.json" "$C/chrome_gz/edge-cases.json"

# xspace: the real JAX XSpace cut down, and hand-made spaces (xspace_seeds.py says which).
python3 tests/fuzz/xspace_seeds.py tests/data/real-gpu/jax.xplane.pb "$C/xspace"

# timeline_index: every index of the processed tiny profiles (the harness matches
# them against the fixture's identical Parquet files).
g="$work/data/profiles/global"
for t in Instruction DmaPacket DmaPacketAggregated CcInstruction CcOp SemaphoreUpdate; do
  cp "$g/tiny-nd0-nc0@latest/.$t.nxtl" "$C/timeline_index/nc0-$t.nxtl"
done
cp "$g/tiny-nd0-nc1@latest/.Instruction.nxtl" "$C/timeline_index/nc1-Instruction.nxtl"
cp "$g/tiny@latest/.SystemProfileEvents.nxtl" "$C/timeline_index/system-SystemProfileEvents.nxtl"

# http: one request per file, every endpoint with valid and invalid parameters.
D=tiny-nd0-nc0
i=0
while IFS= read -r req; do
  [ -n "$req" ] || continue
  printf '%s' "$req" >"$C/http/$(printf '%02d' $i).req"
  i=$((i + 1))
done <<EOF
GET /api/health HTTP/1.1
GET /api/profiles
GET /api/schema
GET /api/profiles/tiny
GET /api/profiles/$D
GET /api/profiles/$D/tracks
GET /api/profiles/tiny/tracks
GET /api/profiles/$D/timeline?tables=Instruction,DmaPacketAggregated,SemaphoreUpdate&start=0&end=9223372036854775807&width=100
GET /api/profiles/tiny/timeline?tables=SystemProfileEvents&start=-9223372036854775808&end=9223372036854775807&width=10000
GET /api/profiles/$D/timeline?tables=Instruction,Instruction&start=0&end=9&width=5
GET /api/profiles/$D/event?table=Instruction&ordinal=3
GET /api/profiles/tiny/event?table=SystemProfileEvents&ordinal=1099511627776&start=5
GET /api/profiles/$D/summary?top=4
GET /api/profiles/tiny/summary
GET /api/profiles/$D/usage?tables=DmaUsage,HbmUsage,SbufUsage,PsumUsage&start=0&end=9223372036854775807&width=50
GET /api/profiles/tiny/usage?tables=CpuUsage,HostMemUsage,SystemProfileHbmUsage&start=0&end=9223372036854775807&width=7
GET /api/profiles/$D/export/Instruction.csv?start=0&end=9223372036854775807&sampled=0&max_rows=20
GET /api/profiles/$D/export/DmaPacket.csv?start=0&end=9223372036854775807&width=3
GET /api/profiles/nested
GET /api/profiles/nested/devices/nested-nd0-nc1/tracks
GET /api/profiles/nested%2Fdevices%2Fnested-nd0-nc0/export/CcOp.csv?start=0&end=9223372036854775807&sampled=0
GET /api/profiles/broken/timeline?tables=Instruction&start=0&end=9223372036854775807&width=20
GET /api/profiles/broken/export/Instruction.csv?start=0&end=9223372036854775807&sampled=0
GET /api/profiles/broken/summary
GET /api/profiles/%2e%2e%2f%2e%2e%2fetc/tracks
GET /api/profiles/$D%00/tracks
GET /api/profiles/$D/event?table=Instruction&ordinal=007
GET /api/profiles/$D/summary?top=1&top=2&TOP=x
GET /api/profiles/$D/timeline?tables=Instruction&start=5&end=4&width=1
HEAD /api/profiles/$D/export/CcOp.csv?start=0&end=9
POST /api/health
GET /api/profiles/tiny?a=1&b&=c&d=%zz&e=%41+%42
GET /
GET /static/app.js
GET /profile/tiny
GET /nope.txt
GET /api/health
GET /api/profiles/tiny?a=1&b&=c&e=%41+%42
GET /api/diff?a=$D&b=tiny-nd0-nc1&by=hlo_name&limit=3
GET /api/diff?a=tiny&b=tiny&by=kernel&all=1
GET /api/diff?a=tiny&b=$D
GET /api/diff?a=broken&b=$D
GET /api/diff?a=nested/devices/nested-nd0-nc0&b=$D&by=framework_name&limit=0
GET /api/profiles/tiny/breakdown?rank=0&step=1&top=3
GET /api/profiles/$D/breakdown
GET /api/profiles/$D/breakdown?rank=1&top=0
EOF
printf 'GET /api/profiles HTTP/1.1\r\nContent-Length: 5\r\n\r\n' >"$C/http/body.req"
printf 'GET /api/profiles HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' >"$C/http/chunked.req"
# The guards (fuzz_http.c: port 3001 on 127.0.0.1, --allow-host fuzz.example).
printf 'GET /api/profiles HTTP/1.1\r\nHost: attacker.example:3001\r\n\r\n' >"$C/http/host-foreign.req"
printf 'GET /api/profiles/tiny HTTP/1.1\r\nHost: fuzz.example:3001\r\nOrigin: http://fuzz.example:3001\r\n\r\n' \
  >"$C/http/host-allowed.req"
printf 'GET /api/profiles HTTP/1.1\r\nHost: localhost\r\nOrigin: https://localhost:3001\r\n\r\n' >"$C/http/origin-foreign.req"
printf 'POST /api/profiles HTTP/1.1\r\nHost: 127.0.0.1:3001\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 0\r\n\r\n' \
  >"$C/http/post-json.req"
printf 'GET /api/profiles/tiny/tracks%%4 HTTP/1.1\r\n\r\n' >"$C/http/bad-escape.req"
# Request bodies: the reference-compatible API's POSTs and the body limits.
J='Content-Type: application/json'
printf 'POST /api/v1/db/tiny/_search HTTP/1.1\r\n%s\r\nContent-Length: 44\r\n\r\n{"type":"tableSchema","tableName":"Summary"}' "$J" \
  >"$C/http/v1-table-schema.req"
printf 'POST /api/v1/db/%s/_search HTTP/1.1\r\n%s\r\n\r\n{"type":"listDbFiles"}' "$D" "$J" >"$C/http/v1-list-files.req"
printf 'POST /api/v1/db/nested/devices/nested-nd0-nc0/_search HTTP/1.1\r\n%s\r\n\r\n{"type":"nope"}' "$J" \
  >"$C/http/v1-nested.req"
printf 'POST /api/v1/db/tiny/_search HTTP/1.1\r\n%s\r\nContent-Length: 1048577\r\n\r\n{}' "$J" >"$C/http/v1-too-large.req"
printf 'PUT /api/v1/db/tiny/_search HTTP/1.1\r\n%s\r\nTransfer-Encoding: chunked\r\n\r\n{}' "$J" >"$C/http/v1-chunked.req"
printf 'GET /api/v1/health HTTP/1.1\r\n\r\n' >"$C/http/v1-health.req"
printf 'POST /api/v1/db/%s/_search HTTP/1.1\r\n%s\r\n\r\n{"type":"databaseExplorerQuery","tableName":"Instruction","query":"SELECT opcode, COUNT(*) AS n FROM Instruction GROUP BY opcode ORDER BY n DESC"}' \
  "$D" "$J" >"$C/http/v1-query.req"
printf 'POST /api/v1/db/tiny/_search HTTP/1.1\r\n%s\r\n\r\n{"type":"databaseExplorerQuery","query":"SELECT COUNT(*) FROM SystemProfileEvents"}' \
  "$J" >"$C/http/v1-query-system.req"
printf 'POST /api/v1/db/%s/_search HTTP/1.1\r\n%s\r\n\r\n{"type":"databaseExplorerQuery","query":"DROP TABLE Instruction"}' \
  "$D" "$J" >"$C/http/v1-query-refused.req"
# Annotations: a valid PUT, an invalid one, a GET.
A='{"version":1,"markers":[{"time_ns":"1700000000123456789","label":"a"}],"regions":[{"start_ns":1,"end_ns":2,"name":"r"}]}'
printf 'PUT /api/profiles/%s/annotations HTTP/1.1\r\n%s\r\nContent-Length: %d\r\n\r\n%s' "$D" "$J" "${#A}" "$A" \
  >"$C/http/annotations-put.req"
printf 'PUT /api/profiles/tiny/annotations HTTP/1.1\r\n%s\r\n\r\n{"version":1,"markers":[{"time_ns":1}]}' "$J" \
  >"$C/http/annotations-put-bad.req"
printf 'GET /api/profiles/nested/devices/nested-nd0-nc0/annotations HTTP/1.1\r\n\r\n' >"$C/http/annotations-get.req"

# annotations: documents by hand (every member, times as numbers and strings, escapes,
# limits' edges) and broken ones.
printf '%s' "$A" >"$C/annotations/small.json"
printf '{"version":1}' >"$C/annotations/empty.json"
cat >"$C/annotations/full.json" <<'DOC'
{"version": 1,
 "markers": [{"time_ns": -9223372036854775808, "label": "min \u00e9 \ud83d\ude00", "colour": "#ABC", "track": "Instruction:pe"},
             {"time_ns": "9223372036854775807", "label": "", "colour": null, "track": null}],
 "regions": [{"start_ns": 5, "end_ns": 5, "name": "n", "colour": "#00ff00", "note": "line\nline\t\"q\""}]}
DOC
printf '{"version":1,"markers":[{"time_ns":1,"label":"a","label":"b"}]}' >"$C/annotations/twice.json"
printf '{"version":1,"regions":[{"start_ns":9,"end_ns":1,"name":"x"}]} ' >"$C/annotations/backwards.json"

du -sh "$C"/* | sed 's/^/make_corpus: /'
