"""Reads a Parquet file with fastparquet and compares every value with pyarrow's; run by
test_fastparquet.py in a process of its own per file, so a reader that crashes (a signal)
fails the file it was reading and not the test run.

    python fastparquet_read.py [--object-strings] FILE...

fastparquet reads strings as pandas' Arrow strings when pandas says so (pandas 3's
default), and then reads a list<string> column's PLAIN pages without their repetition
levels, whoever wrote them (a pyarrow file written without dictionaries reads the same
wrong lists). By default those columns are left out of the comparison; --object-strings
turns pandas' Arrow strings off before fastparquet is imported, and then every column is
compared.

For each file it prints one line, "ok FILE ROWS" or "FAIL FILE: reason", and before
reading it "reading FILE", so the last such line names the file a crash hit. Exit status 0
when every file was read and equal.

Comparison, column by column in schema order: the same names and row count; integers,
strings and booleans equal with nulls in the same rows (fastparquet gives nullable columns
as pandas' NA or None); floats equal bit for bit after widening, a null being NaN in
fastparquet's answer (pandas' float columns have no null of their own); lists equal
element by element, a null list read as None.
"""
import math
import sys
import warnings

import numpy as np
import pandas as pd

OBJECT_STRINGS = "--object-strings" in sys.argv[1:]
if OBJECT_STRINGS:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # pandas 3 deprecates the option, still honours it
        pd.options.future.infer_string = False   # read by fastparquet at import

import fastparquet  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402


def _scalar(v):
    """A fastparquet cell as a plain Python value (None for a null)."""
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (np.ndarray, list)):
        return [_scalar(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def _float_equal(a, b):
    """pyarrow's value a and fastparquet's b of a float column: a null is NaN in b."""
    if a is None:
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, float) and math.isnan(a):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and float(a) == float(b)


def compare(path):
    """None when fastparquet reads path with pyarrow's values, else the first difference."""
    want = pq.read_table(path)
    got = fastparquet.ParquetFile(path).to_pandas()
    if list(got.columns) != want.schema.names:
        return f"columns {list(got.columns)} != pyarrow's {want.schema.names}"
    if len(got) != want.num_rows:
        return f"{len(got)} rows != pyarrow's {want.num_rows}"
    for field in want.schema:
        if not OBJECT_STRINGS and field.type == pa.list_(pa.string()):
            continue
        a = want.column(field.name).to_pylist()
        b = got[field.name].tolist()
        floats = pa.types.is_floating(field.type)
        for row, (x, y) in enumerate(zip(a, b)):
            same = _float_equal(x, y) if floats else x == _scalar(y)
            if not same:
                return f"column {field.name} row {row}: fastparquet {y!r}, pyarrow {x!r}"
    return None


def main(paths):
    ok = True
    for path in paths:
        print(f"reading {path}", flush=True)
        try:
            why = compare(path)
        except Exception as e:  # a reader's refusal is this file's failure, not the run's
            why = f"{type(e).__name__}: {e}"
        if why:
            ok = False
            print(f"FAIL {path}: {why}", flush=True)
        else:
            print(f"ok {path} {pq.ParquetFile(path).metadata.num_rows}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main([a for a in sys.argv[1:] if a != "--object-strings"]))
