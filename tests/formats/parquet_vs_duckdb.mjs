// The Parquet reader against DuckDB over apache/parquet-testing (issue 36):
// every file of data/ that quiver reads has DuckDB's row count and, per
// column, DuckDB's count of non-NULL values (definition levels), minimum
// and maximum of its numeric and date/time columns; every file quiver
// refuses is refused with a clean error naming the file (NotImplemented for
// what the reader leaves out: nested columns; Invalid for what is corrupt),
// and every file of bad_data/ is a clean error or a clean read, never a
// crash or a hang (20 s each).
// Usage: node tests/formats/parquet_vs_duckdb.mjs QUIVER_BINARY PARQUET_TESTING_DIR
// Prints one line per file and "parquet vs duckdb: N files equal, M refused
// cleanly, 0 differences"; exit 1 on any difference or crash, 77 without
// @duckdb/node-api.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [quiver, root] = process.argv.slice(2);
const require = createRequire(new URL('../../bench/package.json', import.meta.url));
let duckdb;
try {
  duckdb = require('@duckdb/node-api');
} catch {
  console.log('parquet vs duckdb: @duckdb/node-api (bench/install-duckdb.sh) missing: skipped');
  process.exit(77);
}
const db = await duckdb.DuckDBInstance.create(':memory:');
const con = await db.connect();

const q = (name) => '"' + name.replaceAll('"', '""') + '"';
function runQuiver(args) {
  const r = spawnSync(quiver, args, { encoding: 'utf8', timeout: 20000, maxBuffer: 1 << 26 });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}
// Values of quiver's one-row table output (`quiver sql`), split at '|'.
function oneRow(text) {
  const lines = text.split('\n').filter((l) => l.length);
  return lines[2].split('|').map((s) => s.trim());
}
function norm(v) {
  if (v === null || v === undefined || v === 'NULL' || v === 'null') return 'NULL';
  const s = String(v);
  const n = Number(s);
  if (s !== '' && Number.isFinite(n)) return String(Math.round(n * 1e6) / 1e6);
  return s.replace('T', ' ').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

let equal = 0, refused = 0, failures = 0;
const dataDir = path.join(root, 'data');
for (const file of readdirSync(dataDir).filter((f) => f.endsWith('.parquet')).sort()) {
  const p = path.join(dataDir, file);
  const cat = runQuiver(['cat', p]);
  if (cat.signal || cat.code === null || cat.code > 1) {
    console.log(`CRASH ${file}: ${cat.signal || cat.code}`);
    failures++;
    continue;
  }
  if (cat.code !== 0) {
    if (!/error: (NotImplemented|Invalid|IOError): .*\.parquet/.test(cat.err)) {
      console.log(`UNCLEAR ERROR ${file}: ${cat.err.trim()}`);
      failures++;
    } else {
      console.log(`refused ${file}: ${cat.err.trim().slice(0, 140)}`);
      refused++;
    }
    continue;
  }
  let cols;
  try {
    cols = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${p}')`)).getRows();
  } catch (e) {
    console.log(`duckdb refuses ${file}: ${String(e).slice(0, 100)}`);
    continue;
  }
  const exprs = ['count(*)'];
  for (const [name, type] of cols) {
    exprs.push(`count(${q(name)})`);
    if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|FLOAT|DOUBLE|DATE|DECIMAL)/.test(String(type))) {
      exprs.push(`min(${q(name)})`, `max(${q(name)})`);
    }
  }
  const sql = `SELECT ${exprs.join(', ')} FROM t`;
  let want;
  try {
    want = (await con.runAndReadAll(sql.replace('FROM t', `FROM read_parquet('${p}')`))).getRows()[0].map(norm);
  } catch (e) {
    console.log(`duckdb refuses ${file}: ${String(e).slice(0, 100)}`);
    continue;
  }
  let got = runQuiver(['sql', '--table', `t=${p}`, sql]);
  if (got.code !== 0 && /cannot take halffloat/.test(got.err)) {
    // The SQL engine does not aggregate float16 (a known limit, not the
    // reader's): counts only.
    const counts = exprs.filter((e) => e.startsWith('count('));
    const sql2 = `SELECT ${counts.join(', ')} FROM t`;
    want = (await con.runAndReadAll(sql2.replace('FROM t', `FROM read_parquet('${p}')`))).getRows()[0].map(norm);
    exprs.splice(0, exprs.length, ...counts);
    got = runQuiver(['sql', '--table', `t=${p}`, sql2]);
  }
  if (got.code !== 0) {
    console.log(`DIFF ${file}: quiver sql failed: ${got.err.trim().slice(0, 200)}`);
    failures++;
    continue;
  }
  const values = oneRow(got.out).map(norm);
  const diffs = [];
  for (let i = 0; i < want.length; i++) if (values[i] !== want[i]) diffs.push(`${exprs[i]}: quiver ${values[i]}, duckdb ${want[i]}`);
  if (diffs.length) {
    console.log(`DIFF ${file}: ${diffs.slice(0, 4).join('; ')}`);
    failures++;
  } else {
    equal++;
  }
}
const badDir = path.join(root, 'bad_data');
let badClean = 0;
for (const file of readdirSync(badDir).filter((f) => f.endsWith('.parquet')).sort()) {
  const r = runQuiver(['cat', path.join(badDir, file)]);
  if (r.signal || r.code === null || r.code > 1) {
    console.log(`CRASH bad_data/${file}: ${r.signal || r.code}`);
    failures++;
  } else {
    badClean++;
  }
}
console.log(`parquet vs duckdb: ${equal} files equal, ${refused} refused cleanly, ${badClean} bad_data files without a crash, ${failures} differences`);
process.exit(failures ? 1 : 0);
