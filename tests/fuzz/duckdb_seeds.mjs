// duckdb_seeds.mjs — writes the fuzz seeds that come from other writers
// (tests/fuzz/corpus/parquet/duck_*.parquet and polars_*.parquet): every column
// type nxprof reads, nulls, null/empty lists and null elements, every codec,
// data page v2, small row groups, and a file of types nxprof does not decode.
// Each file stays under 4 KB. Regenerate with
//   node tests/fuzz/duckdb_seeds.mjs tests/fuzz/corpus/parquet
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node duckdb_seeds.mjs DIR');
const db = await (await DuckDBInstance.create(':memory:')).connect();
const base = `SELECT i::INTEGER AS i32, (i * 1000003)::BIGINT AS i64, i % 3 = 0 AS b,
  (i / 7.0)::FLOAT AS f, (i / 3.0)::DOUBLE AS d,
  CASE WHEN i % 5 = 0 THEN NULL ELSE 'v' || (i % 4) END AS s,
  CASE WHEN i % 6 = 0 THEN NULL WHEN i % 6 = 1 THEN [] ELSE [i, NULL, i * 2] END AS li,
  CASE WHEN i % 4 = 0 THEN NULL ELSE ['a', NULL, 'bc' || i] END AS ls
  FROM range(@N@) t(i)`;
const files = [
  ['duck_zstd', 40, 'COMPRESSION zstd'],
  ['duck_snappy', 40, 'COMPRESSION snappy'],
  ['duck_gzip', 30, 'COMPRESSION gzip'],
  ['duck_lz4', 30, 'COMPRESSION lz4_raw'],
  ['duck_plain', 20, 'COMPRESSION uncompressed'],
  ['duck_v2', 40, 'COMPRESSION uncompressed, PARQUET_VERSION v2'],
  ['duck_v2_zstd', 40, 'COMPRESSION zstd, PARQUET_VERSION v2'],
  ['duck_groups', 60, 'COMPRESSION uncompressed, ROW_GROUP_SIZE 16'],
];
for (const [name, n, opts] of files)
  await db.run(`COPY (${base.replace('@N@', n)}) TO '${dir}/${name}.parquet' (FORMAT parquet, ${opts})`);
await db.run(`COPY (SELECT i::BIGINT AS ts FROM range(300) t(i)) TO '${dir}/duck_sorted_v2.parquet'
  (FORMAT parquet, COMPRESSION uncompressed, PARQUET_VERSION v2)`);
await db.run(`COPY (SELECT {'a': i, 'b': 'x'} AS st, MAP {'k': i} AS m, [[i]] AS nested, i::HUGEINT AS h,
  1::TINYINT AS t8, 'x'::BLOB AS bl FROM range(5) t(i)) TO '${dir}/duck_unsupported.parquet'
  (FORMAT parquet, COMPRESSION uncompressed)`);

const n = 30;
const df = pl.DataFrame([
  pl.Series('i64', Array.from({ length: n }, (_, i) => (i % 5 ? i * 3 : null)), pl.Int64),
  pl.Series('s', Array.from({ length: n }, (_, i) => (i % 4 ? `p${i % 3}` : null)), pl.Utf8),
  pl.Series('li', Array.from({ length: n }, (_, i) => (i % 6 ? Array.from({ length: i % 3 }, (_, k) => i + k) : null)),
    pl.List(pl.Int64)),
]);
df.writeParquet(`${dir}/polars_plain.parquet`, { compression: 'uncompressed' });
