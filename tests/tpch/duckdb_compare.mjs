// Compares quiver's answers to the 22 TPC-H queries with DuckDB's on the
// same data (tests/tpch/tpch_vs_duckdb.sh prepares both):
//   --csv-dir DIR      the eight tables as CSV (`quiver cat --format csv`)
//   --results-dir DIR  qNN.sql (the query) and qNN.csv (quiver's result, CSV
//                      with a header) for each query
// DuckDB loads the tables with quiver's column types (the 2-decimal money
// columns as DECIMAL(15,2)), runs each qNN.sql and compares row by row:
// numbers equal to 1e-9 relative (or 1e-9 absolute near zero), everything
// else as text. Rows are compared in order; where that fails only because
// of ties in the ORDER BY, as multisets. Prints one line per query and
// exits 1 when any query differs or fails.
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../bench/package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
}
const csvDir = arg('--csv-dir');
const resultsDir = arg('--results-dir');

const D = 'DECIMAL(15,2)';
const schemas = {
  region: { r_regionkey: 'BIGINT', r_name: 'VARCHAR', r_comment: 'VARCHAR' },
  nation: { n_nationkey: 'BIGINT', n_name: 'VARCHAR', n_regionkey: 'BIGINT', n_comment: 'VARCHAR' },
  supplier: { s_suppkey: 'BIGINT', s_name: 'VARCHAR', s_address: 'VARCHAR', s_nationkey: 'BIGINT', s_phone: 'VARCHAR',
    s_acctbal: D, s_comment: 'VARCHAR' },
  customer: { c_custkey: 'BIGINT', c_name: 'VARCHAR', c_address: 'VARCHAR', c_nationkey: 'BIGINT', c_phone: 'VARCHAR',
    c_acctbal: D, c_mktsegment: 'VARCHAR', c_comment: 'VARCHAR' },
  part: { p_partkey: 'BIGINT', p_name: 'VARCHAR', p_mfgr: 'VARCHAR', p_brand: 'VARCHAR', p_type: 'VARCHAR',
    p_size: 'INTEGER', p_container: 'VARCHAR', p_retailprice: D, p_comment: 'VARCHAR' },
  partsupp: { ps_partkey: 'BIGINT', ps_suppkey: 'BIGINT', ps_availqty: 'INTEGER', ps_supplycost: D,
    ps_comment: 'VARCHAR' },
  orders: { o_orderkey: 'BIGINT', o_custkey: 'BIGINT', o_orderstatus: 'VARCHAR', o_totalprice: D, o_orderdate: 'DATE',
    o_orderpriority: 'VARCHAR', o_clerk: 'VARCHAR', o_shippriority: 'INTEGER', o_comment: 'VARCHAR' },
  lineitem: { l_orderkey: 'BIGINT', l_partkey: 'BIGINT', l_suppkey: 'BIGINT', l_linenumber: 'INTEGER',
    l_quantity: D, l_extendedprice: D, l_discount: D, l_tax: D, l_returnflag: 'VARCHAR', l_linestatus: 'VARCHAR',
    l_shipdate: 'DATE', l_commitdate: 'DATE', l_receiptdate: 'DATE', l_shipinstruct: 'VARCHAR', l_shipmode: 'VARCHAR',
    l_comment: 'VARCHAR' },
};

const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const conn = await instance.connect();
for (const [table, cols] of Object.entries(schemas)) {
  const spec = '{' + Object.entries(cols).map(([c, t]) => `'${c}': '${t}'`).join(', ') + '}';
  const path = join(csvDir, `${table}.csv`).replaceAll("'", "''");
  await conn.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${path}', header = true, delim = ',',
                  quote = '"', escape = '"', columns = ${spec})`);
}

// Minimal RFC 4180 CSV parser (quiver cat / sql --format csv output).
function parseCsv(text) {
  const rows = [];
  let row = [], field = '', quoted = false, i = 0, any = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') { field += '"'; i += 2; continue; }
        quoted = false; i++; continue;
      }
      field += c; i++; continue;
    }
    if (c === '"') { quoted = true; any = true; i++; continue; }
    if (c === ',') { row.push(field); field = ''; any = true; i++; continue; }
    if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field); rows.push(row); row = []; field = ''; any = false; i++; continue;
    }
    field += c; any = true; i++;
  }
  if (any || field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

function text(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object' && 'toString' in v) return v.toString();
  return String(v);
}

function same(a, b) {
  if (a === b) return true;
  const x = Number(a), y = Number(b);
  if (a.trim() !== '' && b.trim() !== '' && Number.isFinite(x) && Number.isFinite(y)) {
    const d = Math.abs(x - y);
    return d <= 1e-9 * Math.max(Math.abs(x), Math.abs(y)) || d <= 1e-9;
  }
  return false;
}

const rowsEqual = (r, s) => r.length === s.length && r.every((v, i) => same(v, s[i]));
let failed = 0;
const files = readdirSync(resultsDir).filter((f) => /^q\d+\.sql$/.test(f)).sort();
for (const f of files) {
  const name = f.replace('.sql', '');
  const sql = readFileSync(join(resultsDir, f), 'utf8');
  let mine;
  try {
    mine = parseCsv(readFileSync(join(resultsDir, `${name}.csv`), 'utf8')).slice(1);
  } catch (e) {
    console.log(`${name}: FAIL quiver produced no result (${e.message})`);
    failed++;
    continue;
  }
  const reader = await conn.runAndReadAll(sql);
  const theirs = reader.getRows().map((r) => r.map(text));
  let ok = mine.length === theirs.length && mine.every((r, i) => rowsEqual(r, theirs[i]));
  let how = 'in order';
  if (!ok && mine.length === theirs.length) {
    const key = (r) => r.map((v) => (Number.isFinite(Number(v)) && v.trim() !== '' ? Number(v).toPrecision(9) : v)).join('\u0001');
    const a = mine.map(key).sort(), b = theirs.map(key).sort();
    ok = a.every((v, i) => v === b[i]);
    how = 'as multisets (ties in ORDER BY)';
  }
  if (ok) {
    console.log(`${name}: ok, ${mine.length} rows equal ${how}`);
  } else {
    failed++;
    console.log(`${name}: FAIL quiver ${mine.length} rows, DuckDB ${theirs.length} rows`);
    for (let i = 0; i < Math.max(mine.length, theirs.length) && i < 5; i++)
      console.log(`  quiver: ${JSON.stringify(mine[i])}\n  duckdb: ${JSON.stringify(theirs[i])}`);
  }
}
console.log(`${files.length - failed}/${files.length} TPC-H queries agree with DuckDB`);
process.exit(failed ? 1 : 0);
