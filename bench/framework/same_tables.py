#!/usr/bin/env python3
"""bench/framework/same_tables.py — checks that two profile directories hold the same tables
with the same content, row for row (DuckDB: the same columns, the same row count, and no
row of one missing from the other, duplicates counted). Used to show that a speed change
of the framework-trace path leaves its output as it was:

    .venv/bin/python bench/framework/same_tables.py PROFILE_A PROFILE_B

Prints one line per table and exits 1 when any differs. Table files are matched by name
(Parquet files only; split files T_0, T_1 ... are read together as T*). Metadata's
profile_name is the output folder's name, so it is left out of the comparison."""
import glob
import os
import re
import sys

import duckdb


def tables(d):
    names = set()
    for p in glob.glob(os.path.join(d, '*.parquet')):
        names.add(re.sub(r'_\d+$', '', os.path.basename(p)[:-len('.parquet')]))
    return names


def files(d, t):
    one = os.path.join(d, t + '.parquet')
    return [one] if os.path.exists(one) else sorted(glob.glob(os.path.join(d, t + '_*.parquet')))


IGNORED = {'Metadata': ['profile_name']}


def main(a, b):
    ta, tb = tables(a), tables(b)
    if ta != tb:
        print('different tables:', sorted(ta ^ tb))
        return 1
    con = duckdb.connect()
    bad = 0
    for t in sorted(ta):
        drop = f" EXCLUDE ({', '.join(IGNORED[t])})" if t in IGNORED else ''
        ra = f"(SELECT *{drop} FROM read_parquet({files(a, t)!r}))"
        rb = f"(SELECT *{drop} FROM read_parquet({files(b, t)!r}))"
        ca = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {ra}").fetchall()]
        cb = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {rb}").fetchall()]
        if ca != cb:
            print(f'{t}: different columns')
            bad = 1
            continue
        na = con.execute(f"SELECT count(*) FROM {ra}").fetchone()[0]
        nb = con.execute(f"SELECT count(*) FROM {rb}").fetchone()[0]
        diff = con.execute(f"SELECT count(*) FROM ((SELECT * FROM {ra} EXCEPT ALL SELECT * FROM {rb}) "
                           f"UNION ALL (SELECT * FROM {rb} EXCEPT ALL SELECT * FROM {ra}))").fetchone()[0]
        print(f'{t}: {na} rows / {nb} rows, {diff} differing')
        bad |= na != nb or diff != 0
    return int(bad)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
