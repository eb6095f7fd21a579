"""Adds NKI debug tables to a processed synth device profile whose capture carried none:
KernelStackFrames, KernelIterationVariables, KernelInstructions and AssemblyInstruction,
derived from its Instruction table and written with pyarrow in the catalogue's column order
and types (src/schema/catalogue.tsv), for the tests of the NKI answers (tests/python/
test_nki_api.py, tests/js/viewer_nki.test.mjs). A profile that already has
KernelInstructions is left alone.

The tables: frames 1 nki.flash_fwd (called at model.py:212) and 2 its softmax_block (called
at flash_attention.py:150); each distinct kernel_instruction_name "inst.A:B" of Instruction
maps to its nki_source_location's file and line, frame 2 for lines from 160, else 1, and the
loop binding j = B % 8 inside i = A % 4 (ids 2000 + 8 i + j and 1000 + i); each distinct
(compiler_pc, compiler_opcode) pair (each engine numbers its own stream, so a pc recurs)
gets one assembly row: instruction_id its rank by pc and opcode, the least of its operands.

Usage: python nki_tables.py <device profile dir>
"""
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

CATALOGUE = Path(__file__).resolve().parents[2] / "src" / "schema" / "catalogue.tsv"


def fields(table):
    """[(name, arrow type)] of the catalogue's table, in order."""
    out = []
    for line in CATALOGUE.read_text().splitlines():
        p = line.split("\t")
        if p[0] == "field" and p[1] == table:
            out.append((p[2], pa.int64() if p[3] == "integer" else pa.string()))
    return out


def write(directory, table, rows):
    cols = fields(table)
    arrays = [pa.array([r.get(n) for r in rows], type=t) for n, t in cols]
    pq.write_table(pa.Table.from_arrays(arrays, names=[n for n, _ in cols]), directory / f"{table}.parquet")


def main(directory):
    directory = Path(directory)
    if list(directory.glob("KernelInstructions*.parquet")):
        return
    src = f"'{directory}/Instruction*.parquet'"
    names = duckdb.sql(f"SELECT DISTINCT kernel_instruction_name, nki_source_location FROM {src} "
                       "WHERE kernel_instruction_name IS NOT NULL ORDER BY 1").fetchall()
    frames = [{"stack_frame_id": 1, "fully_qualified_function_name": "nki.flash_fwd", "file_path": "model.py",
               "line_number": 212},
              {"stack_frame_id": 2, "fully_qualified_function_name": "nki.flash_fwd.softmax_block",
               "parent_stack_frame_id": 1, "file_path": "flash_attention.py", "line_number": 150}]
    kinst, binds = [], {}
    for name, loc in names:
        file, _, line = (loc or "").rpartition(":")
        a, _, b = name[len("inst."):].partition(":")
        i, j = int(a) % 4, int(b) % 8
        binds[1000 + i] = {"iteration_variable_id": 1000 + i, "variable_name": "i", "variable_value": i,
                           "file_path": "flash_attention.py", "line_number": 130}
        binds[2000 + 8 * i + j] = {"iteration_variable_id": 2000 + 8 * i + j, "variable_name": "j",
                                   "variable_value": j, "parent_iteration_variable_id": 1000 + i,
                                   "file_path": "flash_attention.py", "line_number": 140}
        ln = int(line) if line.isdigit() else None
        frame = 2 if ln is not None and ln >= 160 else 1
        kinst.append({"kernel_instruction_name": name, "stack_frame_id": frame, "stack_frame_depth": frame,
                      "iteration_variables_id": 2000 + 8 * i + j, "iteration_variable_depth": 2,
                      "file_path": file or None, "line_number": ln})
    pcs = duckdb.sql(f"SELECT compiler_pc, compiler_opcode, min(compiler_operands) FROM {src} "
                     "WHERE compiler_pc IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    asm = [{"instruction_id": k, "compiler_pc": pc, "compiler_opcode": op or "", "compiler_operands": ops or ""}
           for k, (pc, op, ops) in enumerate(pcs)]
    write(directory, "KernelStackFrames", frames)
    write(directory, "KernelIterationVariables", [binds[k] for k in sorted(binds)])
    write(directory, "KernelInstructions", kinst)
    write(directory, "AssemblyInstruction", asm)


if __name__ == "__main__":
    main(sys.argv[1])
