// Compares quiver's answers to the 99 TPC-DS queries with DuckDB's on the
// same data (tests/tpcds/tpcds_vs_duckdb.sh prepares it):
//   --quiver BIN        the quiver binary
//   --tables-dir DIR    the 24 tables as Arrow IPC (`quiver gen tpcds`)
//   --csv-dir DIR       the same tables as CSV (`quiver cat --format csv`)
//   --queries-dir DIR   NN.sql, the query texts (tests/tpcds/queries)
//   --only LIST         run only these queries (comma-separated numbers)
//   --timeout-s N       a quiver run longer than this is 'slow' (default 60)
//                       for queries not in --expect; those in it get
//                       --expected-timeout-s (default 120: a loaded machine
//                       must not fail them)
//   --expect FILE       queries (one number a line, # comments) that must be
//                       equal: exit 1 when one is not
//   --threads N         quiver's --threads
// DuckDB loads the CSV files with the Arrow files' column types (`quiver
// schema`) and PostgreSQL's NULL order (quiver's default), runs each query,
// and the results are compared by tests/tpch/result_compare.mjs's rules.
// One line per query: equal / not-implemented (quiver's message) / error /
// differs (first rows of each) / slow, with both times; then a summary.
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { parseCsv, text, rowsEqual, compareResults } from '../tpch/result_compare.mjs';

const require = createRequire(new URL('../../bench/package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));

const has = (name) => process.argv.includes(name);
function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    if (fallback !== undefined) return fallback;
    throw new Error(`missing ${name}`);
  }
  return process.argv[i + 1];
}
const quiver = arg('--quiver');
const tablesDir = arg('--tables-dir');
const csvDir = arg('--csv-dir');
const queriesDir = arg('--queries-dir');
const timeoutS = Number(arg('--timeout-s', '60'));
const expectedTimeoutS = Number(arg('--expected-timeout-s', '120'));
const threads = arg('--threads', '');
const only = has('--only') ? new Set(arg('--only').split(',').map(Number)) : null;
const expected = has('--expect')
  ? readFileSync(arg('--expect'), 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter((l) => l).map(Number)
  : [];

// Column types of an Arrow file, as DuckDB types.
function duckTypes(path) {
  const r = spawnSync(quiver, ['schema', path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`quiver schema ${path}: ${r.stderr}`);
  const cols = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^(\w+): (\w+(?:\[\w+\])?(?:\(\d+, \d+\))?)/.exec(line);
    if (!m || m[1] === 'format') continue;
    const t = m[2];
    let d;
    if (t === 'int32') d = 'INTEGER';
    else if (t === 'int64') d = 'BIGINT';
    else if (t === 'utf8') d = 'VARCHAR';
    else if (t.startsWith('date32')) d = 'DATE';
    else if (t.startsWith('decimal128')) d = `DECIMAL${t.slice('decimal128'.length).replace(' ', '')}`;
    else throw new Error(`${path}: column ${m[1]} of type ${t}`);
    cols[m[1]] = d;
  }
  return cols;
}

const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const conn = await instance.connect();
// PostgreSQL's NULL order (quiver's): NULLS LAST for ASC, FIRST for DESC.
await conn.run("SET default_null_order = 'nulls_last_on_asc_first_on_desc'");
const tables = readdirSync(tablesDir).filter((f) => f.endsWith('.arrow')).map((f) => f.slice(0, -6)).sort();
for (const table of tables) {
  const cols = duckTypes(join(tablesDir, `${table}.arrow`));
  const spec = '{' + Object.entries(cols).map(([c, t]) => `'${c}': '${t}'`).join(', ') + '}';
  const path = join(csvDir, `${table}.csv`).replaceAll("'", "''");
  await conn.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${path}', header = true, delim = ',',
                  quote = '"', escape = '"', columns = ${spec})`);
}

const files = readdirSync(queriesDir).filter((f) => /^\d+\.sql$/.test(f)).sort();
const counts = { equal: 0, 'not-implemented': 0, error: 0, differs: 0, slow: 0, 'duckdb-error': 0 };
const equal = [];
const tableArgs = ['--tables', tablesDir];
for (const f of files) {
  const n = Number(f.slice(0, -4));
  if (only && !only.has(n)) continue;
  const name = `q${String(n).padStart(2, '0')}`;
  const sql = readFileSync(join(queriesDir, f), 'utf8');
  const args = ['sql', '--format', 'csv', ...tableArgs];
  if (threads) args.push('--threads', threads);
  args.push(sql);
  const limitS = expected.includes(n) ? Math.max(timeoutS, expectedTimeoutS) : timeoutS;
  const t0 = performance.now();
  const r = spawnSync(quiver, args, { encoding: 'utf8', maxBuffer: 1 << 28, timeout: limitS * 1000 });
  const quiverS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  let theirs;
  try {
    theirs = (await conn.runAndReadAll(sql)).getRows().map((row) => row.map(text));
  } catch (e) {
    counts['duckdb-error']++;
    console.log(`${name}: duckdb-error ${e.message.split('\n')[0]}`);
    continue;
  }
  const duckS = (performance.now() - t1) / 1000;
  const times = `quiver ${quiverS.toFixed(2)} s, duckdb ${duckS.toFixed(2)} s`;
  let verdict, detail = '';
  if (r.error && r.error.code === 'ETIMEDOUT') {
    verdict = 'slow';
    detail = `over ${limitS} s`;
  } else if (r.status !== 0) {
    const msg = (r.stderr || '').trim().split('\n')[0];
    verdict = /NotImplemented|not supported|0A000/.test(msg) ? 'not-implemented' : 'error';
    detail = msg;
  } else {
    const mine = parseCsv(r.stdout).slice(1);
    const c = compareResults(mine, theirs);
    if (c.ok) {
      verdict = 'equal';
      detail = `${mine.length} rows ${c.how}`;
    } else {
      verdict = 'differs';
      detail = `quiver ${mine.length} rows, DuckDB ${theirs.length} rows`;
      // The first rows that differ, with their positions.
      for (let i = 0, shown = 0; i < Math.max(mine.length, theirs.length) && shown < 3; i++) {
        if (mine[i] && theirs[i] && rowsEqual(mine[i], theirs[i])) continue;
        detail += `\n    row ${i} quiver: ${JSON.stringify(mine[i])}\n    row ${i} duckdb: ${JSON.stringify(theirs[i])}`;
        shown++;
      }
    }
  }
  counts[verdict]++;
  if (verdict === 'equal') equal.push(n);
  console.log(`${name}: ${verdict} (${times}) ${detail}`);
}
console.log(`summary: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`equal: ${equal.join(' ')}`);
let failed = 0;
for (const n of expected) {
  if (only && !only.has(n)) continue;
  if (!equal.includes(n)) {
    console.log(`q${String(n).padStart(2, '0')} is in the expected-equal list but is not equal to DuckDB's answer`);
    failed++;
  }
}
const extra = equal.filter((n) => !expected.includes(n));
if (expected.length && extra.length) console.log(`equal but not yet in the expected list: ${extra.join(' ')}`);
process.exit(failed ? 1 : 0);
