// The Parquet reader against DuckDB over apache/parquet-testing (issue 36):
// every file of data/ that quiver reads has DuckDB's row count and, per
// flat column, DuckDB's count of non-NULL values (definition levels),
// minimum and maximum of its numeric and date/time columns; per nested
// column (lists, structs, maps, any depth) its non-NULL count through
// `quiver sql` and every row's value equal as JSON
// (`quiver cat --format jsonl` against DuckDB's to_json, numbers to 6
// digits, dates and times as text); every file quiver refuses is refused
// with a clean error naming the file (NotImplemented for what the reader
// leaves out, listed at the end; Invalid for what is corrupt),
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

// A JSON value made comparable: numbers (and strings that are numbers,
// as quiver writes decimals) rounded to 6 significant digits, times with
// ' ' for 'T' and no trailing fraction zeros or 'Z', objects' keys sorted.
function canon(v) {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(canon);
  if (typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[canon(k)] = canon(v[k]);
    return o;
  }
  if (typeof v === 'number') return Number(v.toPrecision(6));
  if (typeof v === 'string') {
    const n = Number(v);
    if (v.trim() !== '' && Number.isFinite(n) && !/^-?\d{4,}-/.test(v)) return Number(n.toPrecision(6));
    if (/^-?\d{4,}-\d\d-\d\d[T ]/.test(v)) return v.replace('T', ' ').replace(/Z$/, '').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
    return v;
  }
  return v;
}
const isNested = (type) => /\[\]|STRUCT|MAP|UNION/.test(String(type));

let equal = 0, refused = 0, failures = 0, nestedEqual = 0;
const refusedList = [];
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
      refusedList.push(`${file}: ${cat.err.trim().replace(/^.*?error: /, '').replace(`${p}: `, '').slice(0, 200)}`);
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
  const nestedCols = cols.filter(([, type]) => isNested(type)).map(([name]) => name);
  if (nestedCols.length) {
    // Nested columns: every row's value, quiver's JSON lines against DuckDB's to_json.
    const js = runQuiver(['cat', '--format', 'jsonl', p]);
    let mine = [];
    if (js.code === 0) mine = js.out.split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
    let theirs;
    try {
      const sel = nestedCols.map((c) => `to_json(${q(c)})::VARCHAR`).join(', ');
      theirs = (await con.runAndReadAll(`SELECT ${sel} FROM read_parquet('${p}')`)).getRows();
    } catch (e) {
      console.log(`duckdb refuses ${file}: ${String(e).slice(0, 100)}`);
      continue;
    }
    const diffs = [];
    if (js.code !== 0) diffs.push(`quiver cat --format jsonl failed: ${js.err.trim().slice(0, 200)}`);
    else if (mine.length !== theirs.length) diffs.push(`rows: quiver ${mine.length}, duckdb ${theirs.length}`);
    for (let r = 0; r < Math.min(mine.length, theirs.length) && diffs.length < 3; r++) {
      nestedCols.forEach((c, i) => {
        const a = JSON.stringify(canon(mine[r][c]));
        const b = JSON.stringify(canon(theirs[r][i] === null ? null : JSON.parse(theirs[r][i])));
        if (a !== b && diffs.length < 3) diffs.push(`row ${r} ${c}: quiver ${a.slice(0, 120)}, duckdb ${b.slice(0, 120)}`);
      });
    }
    if (diffs.length) {
      console.log(`DIFF ${file}: ${diffs.join('; ')}`);
      failures++;
      continue;
    }
    nestedEqual++;
  }
  for (const [name, type] of cols) {
    exprs.push(`count(${q(name)})`);  // nested ones too: their NULLs through SQL
    if (isNested(type)) continue;
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
if (refusedList.length) console.log(`refused (NotImplemented or Invalid):\n  ${refusedList.join('\n  ')}`);
console.log(`parquet vs duckdb: ${equal} files equal (${nestedEqual} with nested columns, every value), ${refused} refused cleanly, ${badClean} bad_data files without a crash, ${failures} differences`);
process.exit(failures ? 1 : 0);
