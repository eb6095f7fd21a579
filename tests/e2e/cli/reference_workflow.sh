#!/usr/bin/env bash
# reference_workflow.sh NXPROF PYTHON — the reference tool's published query workflow,
# run exactly as its users run it, with only the host and port changed:
#   view ... --disable-ui, then `curl -s .../api/v1/health` until it says healthy, then
#   the POSTs to /api/v1/db/<display-name>/_search: the Instruction GROUP BY query
#   (databaseExplorerQuery), tableSchema and listDbFiles.
# The answers are checked with PYTHON (the .venv's: json, DuckDB, pyarrow): the query's
# rows equal DuckDB's on the same Parquet files, the schema names Instruction's fields
# as the reference schema TSV does, the file list is the profile directory's.
set -u
BIN=$1
PY=$2
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${NXPROF_TEST_DATA:-$HERE/../../data}
. "$HERE/harness.sh"

TMP=$(mktemp -d)
SERVER=
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

"$BIN" synth --out "$TMP/cap" --preset llama-layer --events 20000 --seed 11 >/dev/null || { echo "synth failed"; exit 1; }
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The reference: neuron-explorer view -d CAPTURE --disable-ui (its API on port 3002).
"$BIN" view -d "$TMP/cap" --display-name run --data-path "$TMP/dp" --disable-ui --api-port "$PORT" \
    >"$TMP/view.out" 2>"$TMP/view.err" &
SERVER=$!

# The health loop, as published (bounded here so a broken server fails the test).
healthy=no
for _ in $(seq 1 600); do
    if curl -s http://localhost:$PORT/api/v1/health | grep -q healthy; then healthy=yes; break; fi
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
done
check '[ "$healthy" = yes ]' "GET /api/v1/health never said healthy (view: $(tail -3 "$TMP/view.err"))"
curl -s http://localhost:$PORT/api/v1/health >"$TMP/health.json"
check '"$PY" -c "import json,sys; assert json.load(open(sys.argv[1])) == {\"status\": \"healthy\"}" "$TMP/health.json"' \
    "health answer"

# The three POSTs, exactly as the reference workflow sends them.
curl -s -X POST http://localhost:$PORT/api/v1/db/run-nd0-nc0/_search -H 'Content-Type: application/json' -d '{"type":"databaseExplorerQuery","tableName":"Instruction","query":"SELECT engine, opcode, COUNT(*) as cnt, SUM(duration_ns) as total_dur_ns FROM Instruction GROUP BY engine, opcode ORDER BY total_dur_ns DESC"}' >"$TMP/query.json"
curl -s -X POST http://localhost:$PORT/api/v1/db/run-nd0-nc0/_search -H 'Content-Type: application/json' -d '{"type":"tableSchema","tableName":"Instruction"}' >"$TMP/schema.json"
curl -s -X POST http://localhost:$PORT/api/v1/db/run-nd0-nc0/_search -H 'Content-Type: application/json' -d '{"type":"listDbFiles"}' >"$TMP/files.json"

PROFILE="$TMP/dp/profiles/global/run-nd0-nc0@latest"

# The query: DuckDB's answer on the same files (a split table read as one).
"$PY" - "$TMP/query.json" "$PROFILE" <<'EOF'
import json, sys, duckdb
got = json.load(open(sys.argv[1]))
assert got["columns"] == ["engine", "opcode", "cnt", "total_dur_ns"], got.get("columns", got)
con = duckdb.connect()
want = con.execute(
    "SELECT engine, opcode, COUNT(*) AS cnt, SUM(duration_ns) AS total_dur_ns "
    f"FROM read_parquet('{sys.argv[2]}/Instruction*.parquet') GROUP BY engine, opcode").fetchall()
# Integers beyond 2^53 come as decimal strings (docs/api.md).
rows = [tuple(int(v) if i >= 2 and isinstance(v, str) else v for i, v in enumerate(r)) for r in got["rows"]]
assert len(rows) == got["row_count"] == len(want) > 1, (len(rows), got["row_count"], len(want))
assert sorted(rows, key=repr) == sorted([tuple(r) for r in want], key=repr), (rows[:3], want[:3])
totals = [r[3] for r in rows]
assert totals == sorted(totals, reverse=True), "ORDER BY total_dur_ns DESC"
assert got["truncated"] is False
EOF
check "[ $? -eq 0 ]" "databaseExplorerQuery equals DuckDB ($(head -c 300 "$TMP/query.json"))"

# tableSchema: Instruction's fields as the reference schema lists them.
"$PY" - "$TMP/schema.json" "$DATA/reference/profile-schema-7.4.0.tsv" <<'EOF'
import csv, json, sys
got = json.load(open(sys.argv[1]))
ref = [r for r in csv.DictReader(open(sys.argv[2]), delimiter="\t") if r["table"] == "Instruction"]
assert got["tableName"] == "Instruction"
assert [(f["name"], f["type"], f["format"], f["unit"], f["required"]) for f in got["fields"]] == \
       [(r["field"], r["type"], r["format"], r["unit"], r["required"] == "Yes") for r in ref]
EOF
check "[ $? -eq 0 ]" "tableSchema Instruction ($(head -c 300 "$TMP/schema.json"))"

# listDbFiles: the profile directory's Parquet files, sizes and footers' rows.
"$PY" - "$TMP/files.json" "$PROFILE" <<'EOF'
import json, os, sys, pyarrow.parquet as pq
got = json.load(open(sys.argv[1]))
files = sorted(f for f in os.listdir(sys.argv[2]) if f.endswith(".parquet"))
listed = sorted(f["name"] for t in got["tables"] for f in t["files"])
assert listed == files, (listed[:5], files[:5])
for t in got["tables"]:
    for f in t["files"]:
        path = os.path.join(sys.argv[2], f["name"])
        assert f["size"] == os.stat(path).st_size and f["rows"] == pq.ParquetFile(path).metadata.num_rows, f
assert "Instruction" in [t["name"] for t in got["tables"]]
EOF
check "[ $? -eq 0 ]" "listDbFiles ($(head -c 300 "$TMP/files.json"))"

# --disable-ui: no pages.
check '[ "$(curl -s -o /dev/null -w "%{http_code}" http://localhost:$PORT/)" = 404 ]' "a page with --disable-ui"
check 'kill -0 "$SERVER" 2>/dev/null' "the server is still running"
finish
