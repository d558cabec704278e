// The CSV writer against DuckDB (issue 36: tables written back): what
// `quiver sql -o x.csv[.gz|.zst]`, `quiver convert in.parquet out.csv`
// write, DuckDB's read_csv reads with the same values quiver computed.
//  - a hand-written table of hostile strings (the delimiter, quotes, CR and
//    LF inside fields, an empty string beside a NULL, a leading space,
//    UTF-8) through `quiver convert in.csv out.csv`: DuckDB reads every
//    field as written (the empty string as DuckDB reads its own COPY's `""`);
//  - TPC-H lineitem at scale 0.01 with NULLs, written by `quiver sql -o`
//    plain, gzip and zstd: DuckDB's count, sums of the DECIMAL and integer
//    columns, min / max of the dates and count of NULLs equal quiver's over
//    the Arrow tables;
//  - the same lineitem converted to Parquet and back out to CSV by
//    `quiver convert`: the same figures again.
// Usage: node tests/formats/csv_writer_vs_duckdb.mjs QUIVER_BINARY
// Prints "csv writer vs duckdb: N files equal, 0 differences"; exit 1 on any
// difference, 77 without @duckdb/node-api.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const [quiver] = process.argv.slice(2);
const require = createRequire(new URL('../../bench/package.json', import.meta.url));
let duckdb;
try {
  duckdb = require('@duckdb/node-api');
} catch {
  console.log('csv writer vs duckdb: @duckdb/node-api (bench/install-duckdb.sh) missing: skipped');
  process.exit(77);
}
const db = await duckdb.DuckDBInstance.create(':memory:');
const con = await db.connect();
const dir = mkdtempSync(path.join(os.tmpdir(), 'quiver-csvwrite-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function run(args) {
  const r = spawnSync(quiver, args, { encoding: 'utf8', timeout: 120000, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`quiver ${args.join(' ')}: ${r.status} ${r.stderr}`);
  return r.stdout;
}
const rows = async (sql) => (await con.runAndReadAll(sql)).getRows();
const lit = (s) => "'" + s.replaceAll("'", "''") + "'";
let files = 0, differences = 0;
function check(what, got, want) {
  const g = JSON.stringify(got, (k, v) => (typeof v === 'bigint' ? v.toString() : v));
  const w = JSON.stringify(want, (k, v) => (typeof v === 'bigint' ? v.toString() : v));
  if (g !== w) {
    differences++;
    console.log(`DIFFERENT ${what}:\n  duckdb ${g}\n  quiver ${w}`);
  }
}

// 1. Hostile strings.
const hostile = [
  ['1', 'plain'],
  ['2', 'a,b'],
  ['3', 'say "hi"'],
  ['4', 'two\nlines'],
  ['5', 'cr\rhere'],
  ['6', ' leading space'],
  ['7', 'ünïcödé ✓'],
  ['8', ''],    // the empty string
  ['9', null],  // NULL
];
const field = (v) => (v === null ? '' : '"' + v.replaceAll('"', '""') + '"');
writeFileSync(path.join(dir, 'in.csv'), 'id,s\n' + hostile.map(([i, s]) => `${i},${field(s)}\n`).join(''));
run(['convert', path.join(dir, 'in.csv'), path.join(dir, 'hostile.csv')]);
{
  const got = await rows(`SELECT id, s FROM read_csv(${lit(path.join(dir, 'hostile.csv'))}, header = true,
                          columns = {'id': 'INTEGER', 's': 'VARCHAR'}, allow_quoted_nulls = false) ORDER BY id`);
  check('hostile strings', got.map(([i, s]) => [Number(i), s]), hostile.map(([i, s]) => [Number(i), s]));
  files++;
}

// 2. lineitem with NULLs, plain / gzip / zstd.
const tpch = path.join(dir, 'tpch');
run(['gen', 'tpch', '--scale', '0.01', '-o', tpch]);
const select = `SELECT l_orderkey, l_linenumber, l_quantity, l_extendedprice, l_discount, l_shipdate,
  CASE WHEN l_linenumber = 3 THEN NULL ELSE l_comment END AS l_comment,
  CASE WHEN l_linenumber = 2 THEN NULL ELSE l_extendedprice END AS maybe_price FROM lineitem`;
const figures = `SELECT count(*) AS n, sum(l_orderkey) AS k, sum(l_quantity) AS q, sum(l_extendedprice) AS p,
  sum(l_discount) AS d, min(l_shipdate) AS d0, max(l_shipdate) AS d1, count(l_comment) AS c,
  sum(length(l_comment)) AS cl, count(maybe_price) AS mp, sum(maybe_price) AS smp FROM t`;
const want = run(['sql', '--tables', tpch, '--format', 'csv', `WITH t AS (${select}) ${figures}`]).trim().split('\n')[1];
const duckFigures = async (file) => {
  const [r] = await rows(`WITH t AS (SELECT * FROM read_csv(${lit(file)}, header = true,
      types = {'l_quantity': 'DECIMAL(15,2)', 'l_extendedprice': 'DECIMAL(15,2)', 'l_discount': 'DECIMAL(15,2)',
               'maybe_price': 'DECIMAL(15,2)'})) ${figures}`);
  return r.map((v) => (v === null ? '' : String(v))).join(',');
};
for (const name of ['li.csv', 'li.csv.gz', 'li.csv.zst']) {
  const file = path.join(dir, name);
  run(['sql', '--tables', tpch, '-o', file, select]);
  check(name, await duckFigures(file), want);
  // quiver reads its own file back alike (its reader infers DOUBLE for the
  // money columns, as DuckDB's read_csv does: cast back to DECIMAL(15,2)).
  const money = ['l_quantity', 'l_extendedprice', 'l_discount', 'maybe_price'];
  const cast = `SELECT l_orderkey, l_shipdate, l_comment, ${money.map((c) => `CAST(${c} AS DECIMAL(15,2)) AS ${c}`)
    .join(', ')} FROM r`;
  const back = run(['sql', '--table', `r=${file}`, '--format', 'csv', `WITH t AS (${cast}) ${figures}`])
    .trim().split('\n')[1];
  check(`${name} read back by quiver`, back, want);
  files++;
}

// 3. Parquet in, CSV out.
const pq = path.join(dir, 'li.parquet');
run(['sql', '--tables', tpch, '-o', pq, select]);
run(['convert', pq, path.join(dir, 'from_parquet.csv.zst')]);
check('parquet -> csv.zst', await duckFigures(path.join(dir, 'from_parquet.csv.zst')), want);
files++;

// A CSV output with an IPC codec is a usage error that leaves no file.
{
  const r = spawnSync(quiver, ['sql', '--tables', tpch, '--compression', 'lz4', '-o', path.join(dir, 'bad.csv'),
    'SELECT 1 AS x'], { encoding: 'utf8' });
  if (r.status === 0 || existsSync(path.join(dir, 'bad.csv'))) {
    differences++;
    console.log('DIFFERENT: --compression lz4 with a .csv output was accepted');
  }
}

console.log(`csv writer vs duckdb: ${files} files equal, ${differences} differences`);
process.exit(differences ? 1 : 0);
