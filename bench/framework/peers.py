#!/usr/bin/env python3
"""bench/framework/peers.py — one peer reading a trace.json, for bench/framework/run.py.

    python peers.py json|duckdb|hta TRACE_JSON

Prints one JSON line {"s": seconds, "events": n}: the time of the read alone (after the
imports, so interpreter start-up and importing pandas or duckdb are not counted, which
favours the peer) and how many events it produced.

- json: json.load of the whole file (what every Python script over a trace does first).
- duckdb: read_json with the events typed as a list of structs (args kept as JSON), then
  unnest into one row per event (maximum_object_size is a 32-bit count: DuckDB cannot read a
  trace over 4 GiB this way). The auto-detected form fails on Kineto traces: args holds
  both "Bytes" ([memory]) and "bytes" (gpu_memset), and DuckDB refuses names that differ
  only in case, so the columns are given.
- hta: HolisticTraceAnalysis' parse_trace_file with its default ParserConfig, what
  TraceAnalysis(trace_dir=...) runs for each rank: json.load, a pandas DataFrame of the
  events it keeps (names and categories interned in its symbol table), fwd/bwd links,
  correlations turned into row indexes, iterations.
"""
import json
import sys
import time

EVENT = ('STRUCT(ph VARCHAR, cat VARCHAR, name VARCHAR, pid JSON, tid JSON, ts DOUBLE, '
         'dur DOUBLE, id BIGINT, args JSON)[]')


def read_json(path):
    with open(path, 'rb') as f:
        return len(json.load(f)['traceEvents'])


def read_duckdb(path):
    import duckdb
    con = duckdb.connect()
    lit = path.replace("'", "''")
    t = time.perf_counter()
    n = con.sql(f"SELECT count(*) FROM (SELECT unnest(traceEvents) FROM read_json('{lit}', "
                f"maximum_object_size=4294967295, columns={{'traceEvents': '{EVENT}'}}))").fetchall()[0][0]
    return n, t


def read_hta(path):
    import logging
    from hta.common.trace import parse_trace_file
    from hta.configs.parser_config import ParserConfig
    logging.disable(logging.WARNING)
    t = time.perf_counter()
    _, df, _ = parse_trace_file(path, ParserConfig.get_default_cfg())
    return len(df), t


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ('json', 'duckdb', 'hta'):
        sys.exit('usage: peers.py json|duckdb|hta TRACE_JSON')
    tool, path = sys.argv[1:]
    t = time.perf_counter()
    if tool == 'json':
        n = read_json(path)
    else:
        n, t = read_duckdb(path) if tool == 'duckdb' else read_hta(path)
    print(json.dumps({'s': time.perf_counter() - t, 'events': n}))


if __name__ == '__main__':
    main()
