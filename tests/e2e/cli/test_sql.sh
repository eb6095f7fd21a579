#!/usr/bin/env bash
# test_sql.sh NXPROF — `nxprof sql`'s command-line contract: exit 2 with a one-line hint
# for every usage error, 1 for a path without profiles and for a refused, failed or
# timed-out query (the reason on stderr, nothing on stdout), 3 at the row limit, and
# the three formats on a device profile and a data path of `nxprof synth --preset tiny`
# (the values themselves are python.test_sql_corpus's, against DuckDB).
set -u
BIN=${1:?usage: test_sql.sh path/to/nxprof}
. "$(dirname "$0")/harness.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BIN" synth --preset tiny --out "$T/cap" --seed 2 >/dev/null 2>&1
"$BIN" process "$T/cap" --data-path "$T/dp" --display-name run >/dev/null 2>&1
"$BIN" process "$T/cap" --output-file "$T/p" >/dev/null 2>&1
D="$T/p/devices/p-nd0-nc0"
check '[ -s "$D/Instruction.parquet" ] && [ -d "$T/dp/profiles/global/run@latest" ]' "fixture profiles written"

expect 2 "no arguments" -- sql;                          contains "PROFILE_OR_DATA_PATH and the query are required" "missing arguments named"
contains "Try 'nxprof sql --help'" "hint line"
expect 2 "no query" -- sql "$D";                         contains "the query is required" "missing query named"
expect 2 "stray argument" -- sql "$D" "SELECT 1" extra;  contains "unexpected argument 'extra'" "stray argument named"
expect 2 "empty path" -- sql "" "SELECT 1";              contains "must not be empty" "empty path named"
expect 2 "bad format" -- sql "$D" "SELECT 1" --format xml; contains "unknown format 'xml'" "bad format named"
expect 2 "bad timeout" -- sql "$D" "SELECT 1" --timeout 0; contains "--timeout '0'" "bad timeout named"
expect 2 "bad max-rows" -- sql "$D" "SELECT 1" --max-rows x; contains "--max-rows 'x'" "bad max-rows named"
expect 2 "empty profile" -- sql "$T/dp" "SELECT 1" --profile ""; contains "--profile must not be empty" "empty profile named"
expect 0 "help" -- sql --help;                           contains "Usage: nxprof sql" "help text"
expect 0 "listed in nxprof --help" -- --help;            contains "sql" "sql listed"

expect 1 "absent path" -- sql "$T/none" "SELECT 1";       contains "$T/none" "absent path named"
expect 1 "capture is no profile" -- sql "$T/cap" "SELECT 1"; contains "not a profile" "non-profile named"
expect 1 "unknown profile" -- sql "$T/dp" "SELECT 1" --profile nope; contains "no profile named 'nope'" "unknown profile named"
expect 1 "syntax error" -- sql "$D" "SELEC 1";            contains "syntax error" "syntax error told"
expect 1 "refused DROP" -- sql "$D" "DROP VIEW Instruction"; contains "refused" "DROP refused"
expect 1 "refused COPY" -- sql "$D" "COPY (SELECT 1) TO '$T/out.csv'"; contains "refused" "COPY refused"
check '[ ! -e "$T/out.csv" ]' "COPY wrote nothing"
expect 1 "refused file read" -- sql "$D" "SELECT * FROM read_csv('/etc/passwd')"; contains "refused" "read_csv refused"
expect 1 "refused two statements" -- sql "$D" "SELECT 1; SELECT 2"; contains "exactly one" "two statements refused"
OUT=$("$BIN" sql "$D" "DROP VIEW Instruction" 2>/dev/null)
check '[ -z "$OUT" ]' "a refused query writes nothing on stdout"
expect 1 "timeout" -- sql "$D" "SELECT SUM(a.range * b.range) FROM range(100000) a, range(100000) b" --timeout 0.2
contains "time limit" "timeout told"

expect 0 "text" -- sql "$D" "SELECT engine, COUNT(*) AS n FROM Instruction GROUP BY 1 ORDER BY 1"
contains "engine" "text header"; contains "rows)" "text row count"
expect 0 "csv" -- sql "$D" "SELECT 'a,b' AS s, NULL AS n, 2 AS i" --format csv
contains 's,n,i' "csv header"; contains '"a,b",,2' "csv row quoted, null empty"
expect 0 "json" -- sql "$D" "SELECT COUNT(*) AS n FROM Instruction" --format json
contains '"columns":["n"]' "json columns"; contains '"truncated":false' "json not truncated"
expect 3 "row limit" -- sql "$D" "SELECT * FROM range(10)" --max-rows 4 --format json
contains '"row_count":4,"truncated":true,"row_limit":4' "json says the limit cut it"
contains "stopped at the row limit of 4 rows" "stderr says the limit cut it"
expect 0 "data path: profile_name" -- sql "$T/dp" "SELECT profile_name, COUNT(*) FROM Instruction GROUP BY 1 ORDER BY 1" --format csv
contains "run-nd0-nc0," "first device profile's rows"; contains "run-nd0-nc1," "second device profile's rows"
expect 0 "data path: schema-qualified" -- sql "$T/dp" 'SELECT COUNT(*) AS n FROM "run".SystemProfileEvents' --format csv
contains "n" "qualified answer"
expect 0 "data path: --profile" -- sql "$T/dp" "SELECT COUNT(*) AS n FROM SystemProfileEvents" --profile run --format csv
contains "n" "--profile answer"
finish
