// The DuckDB side of `quiver bench join`: generates the same build and
// probe tables as quiver (same formulas, here in SQL; see
// tools/quiver/cmd_join.cc), then times only the join query, single
// threaded, and prints one JSON object:
//   {"case", "build_rows", "probe_rows", "rows", "checksum", "times_s",
//    "median_s", "gen_s", "duckdb_version"}
// rows and checksum (sum(bv * pv) over the joined pairs) are strings.
//
// Usage: node bench/duckdb_join.mjs --case dense|sparse|dup30
//          --build-rows N --probe-rows M [--rounds R]
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { DuckDBInstance } from '@duckdb/node-api';

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const kase = arg('--case', 'dense');
const N = BigInt(arg('--build-rows', '1000000'));
const M = BigInt(arg('--probe-rows', String(2n * N)));
const rounds = Number(arg('--rounds', '3'));
const threads = arg('--threads', '1');
if (!['dense', 'sparse', 'dup30'].includes(kase)) throw new Error(`unknown case ${kase}`);

const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const conn = await instance.connect();
const rows = async (sql) => (await conn.runAndReadAll(sql)).getRows();

// 64-bit wrapping arithmetic on UBIGINT through UHUGEINT.
const MASK = '18446744073709551615::UHUGEINT';
await conn.run(`CREATE MACRO mul64(a, b) AS ((a::UHUGEINT * b::UHUGEINT) & ${MASK})::UBIGINT`);
await conn.run(`CREATE MACRO add64(a, b) AS ((a::UHUGEINT + b::UHUGEINT) & ${MASK})::UBIGINT`);
await conn.run(`CREATE MACRO to_signed(h) AS CASE WHEN h >= 9223372036854775808::UBIGINT
                  THEN (h::HUGEINT - 18446744073709551616::HUGEINT)::BIGINT ELSE h::BIGINT END`);
// splitmix64 in steps (CTE columns, so no sub-expression is repeated).
const splitmix = (src, x, keep) => `
  s0 AS (SELECT ${keep}, add64(${x}, 11400714819323198485::UBIGINT) AS z FROM ${src}),
  s1 AS (SELECT ${keep}, mul64(xor(z, z >> 30), 13787848793156543929::UBIGINT) AS z FROM s0),
  s2 AS (SELECT ${keep}, mul64(xor(z, z >> 27), 10723151780598845931::UBIGINT) AS z FROM s1),
  s3 AS (SELECT ${keep}, xor(z, z >> 31) AS h FROM s2)`;

const D = N - (3n * N) / 10n;
const t0 = performance.now();
// Build: p = (i * 2654435761 + 12345) mod N; bv = i.
const perm = `(SELECT i, ((i::HUGEINT * 2654435761 + 12345) % ${N})::UBIGINT AS p FROM range(${N}) t(i))`;
if (kase === 'dense') {
  await conn.run(`CREATE TABLE build AS SELECT p::BIGINT AS k, i::BIGINT AS bv FROM ${perm}`);
} else {
  const x = kase === 'sparse' ? 'p' : `p % ${D}`;
  await conn.run(`CREATE TABLE build AS WITH base AS ${perm}, ${splitmix('base', x, 'i')}
                  SELECT to_signed(h) AS k, i::BIGINT AS bv FROM s3`);
}
// Probe: q = splitmix64(j + 24301) mod 2N; pv = j; key = q (dense) or splitmix64(q).
await conn.run(`CREATE TABLE probe_q AS WITH base AS (SELECT j FROM range(${M}) t(j)), ${splitmix('base', 'j + 24301', 'j')}
                SELECT j, (h % ${2n * N}::UBIGINT) AS q FROM s3`);
if (kase === 'dense') {
  await conn.run(`CREATE TABLE probe AS SELECT q::BIGINT AS k, j::BIGINT AS pv FROM probe_q`);
} else {
  await conn.run(`CREATE TABLE probe AS WITH base AS (SELECT j, q FROM probe_q), ${splitmix('base', 'q', 'j')}
                  SELECT to_signed(h) AS k, j::BIGINT AS pv FROM s3`);
}
await conn.run('DROP TABLE probe_q');
await conn.run('CHECKPOINT');
const genS = (performance.now() - t0) / 1000;

const query = 'SELECT count(*)::VARCHAR AS n, sum(b.bv * p.pv)::VARCHAR AS s FROM probe p JOIN build b ON p.k = b.k';
const times = [];
let result = null;
for (let r = 0; r < rounds; r++) {
  const a = performance.now();
  const out = await rows(query);
  times.push((performance.now() - a) / 1000);
  const [n, s] = out[0];
  if (result && (result[0] !== n || result[1] !== s)) throw new Error('DuckDB results differ between rounds');
  result = [n, s ?? '0'];
}
const sorted = [...times].sort((a, b) => a - b);
const mid = sorted.length >> 1;
const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
const version = (await rows('SELECT version()'))[0][0];
console.log(JSON.stringify({
  case: kase, build_rows: Number(N), probe_rows: Number(M), rows: result[0], checksum: result[1],
  times_s: times, median_s: median, gen_s: genS, duckdb_version: version,
}));
