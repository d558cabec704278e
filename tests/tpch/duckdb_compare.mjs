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
// --write-parquet DIR (instead of --results-dir): writes the eight tables,
// as loaded, to DIR/<table>.parquet with DuckDB (COMPRESSION from
// --compression, default zstd; ROW_GROUP_SIZE from --row-group-size,
// default 100000) and exits.
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { parseCsv, text, rowsEqual, sameAsMultisets } from './result_compare.mjs';

const require = createRequire(new URL('../../bench/package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
}
const csvDir = arg('--csv-dir');
const randomIndex = process.argv.indexOf('--random');
const randomCount = randomIndex >= 0 ? Number(process.argv[randomIndex + 1]) : 0;
const parquetDir = process.argv.includes('--write-parquet') ? arg('--write-parquet') : null;
const resultsDir = randomCount || parquetDir ? null : arg('--results-dir');

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
// PostgreSQL's NULL order (quiver's): NULLS LAST for ASC, FIRST for DESC.
await conn.run("SET default_null_order = 'nulls_last_on_asc_first_on_desc'");
for (const [table, cols] of Object.entries(schemas)) {
  const spec = '{' + Object.entries(cols).map(([c, t]) => `'${c}': '${t}'`).join(', ') + '}';
  const path = join(csvDir, `${table}.csv`).replaceAll("'", "''");
  await conn.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${path}', header = true, delim = ',',
                  quote = '"', escape = '"', columns = ${spec})`);
}
if (parquetDir) {
  const codec = process.argv.includes('--compression') ? arg('--compression') : 'zstd';
  const rows = process.argv.includes('--row-group-size') ? Number(arg('--row-group-size')) : 100000;
  for (const table of Object.keys(schemas)) {
    const out = join(parquetDir, `${table}.parquet`).replaceAll("'", "''");
    await conn.run(`COPY ${table} TO '${out}' (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE ${rows})`);
  }
  process.exit(0);
}

let failed = 0;

// --random N --quiver BIN --tables-dir DIR: N random queries over the TPC-H
// schema (joins along foreign keys, filters, GROUP BY, aggregates with and
// without DISTINCT, ORDER BY, LIMIT), each through `quiver sql` and DuckDB.
if (randomCount) {
  const { spawnSync } = await import('node:child_process');
  const quiver = arg('--quiver');
  const tablesDir = arg('--tables-dir');
  let seed = Number(process.argv.includes('--seed') ? arg('--seed') : 1);
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const bases = [
    { from: 'lineitem', cols: 'l' }, { from: 'orders', cols: 'o' }, { from: 'customer', cols: 'c' },
    { from: 'lineitem, orders WHERE l_orderkey = o_orderkey', cols: 'lo' },
    { from: 'orders, customer WHERE o_custkey = c_custkey', cols: 'oc' },
    { from: 'customer, nation WHERE c_nationkey = n_nationkey', cols: 'cn' },
    { from: 'lineitem, part WHERE l_partkey = p_partkey', cols: 'lp' },
    { from: 'lineitem LEFT JOIN supplier ON l_suppkey = s_suppkey AND s_acctbal > 0', cols: 'ls' },
  ];
  const preds = {
    l: ["l_quantity < 20", "l_discount BETWEEN 0.02 AND 0.05", "l_shipmode IN ('AIR', 'MAIL')", "l_returnflag = 'R'",
      "l_shipdate >= DATE '1995-01-01'", "l_comment LIKE '%fur%'", "l_tax * 100 > 4", "l_commitdate < l_receiptdate"],
    o: ["o_orderdate < DATE '1994-06-01' + INTERVAL '3' MONTH", "o_orderpriority LIKE '1%'", "o_totalprice > 100000",
      "o_orderstatus <> 'F'", "o_comment NOT LIKE '%special%'"],
    c: ["c_acctbal > 1000", "c_mktsegment IN ('BUILDING', 'MACHINERY')", "substring(c_phone FROM 1 FOR 2) > '20'"],
    n: ["n_regionkey IN (1, 2)", "n_name < 'K'"],
    p: ["p_size BETWEEN 10 AND 30", "p_brand = 'Brand#23'", "p_type LIKE '%BRASS'"],
    s: ["s_acctbal < 5000"],
  };
  const groups = {
    l: ['l_returnflag', 'l_linestatus', 'l_shipmode', 'extract(year FROM l_shipdate)'],
    o: ['o_orderstatus', 'o_orderpriority', 'extract(year FROM o_orderdate)'],
    c: ['c_mktsegment'], n: ['n_name'], p: ['p_brand', 'p_size % 5'], s: ['s_nationkey % 3'],
  };
  const values = { l: ['l_quantity', 'l_extendedprice * (1 - l_discount)', 'l_discount'], o: ['o_totalprice', 'o_shippriority'],
    c: ['c_acctbal'], n: ['n_nationkey'], p: ['p_retailprice', 'p_size'], s: ['s_acctbal'] };
  for (let q = 0; q < randomCount; q++) {
    const base = pick(bases);
    const letters = [...base.cols];
    const where = [];
    for (let k = Math.floor(rnd() * 3); k > 0; k--) where.push(pick(preds[pick(letters)]));
    const g = [];
    for (let k = Math.floor(rnd() * 3); k > 0; k--) { const x = pick(groups[pick(letters)]); if (!g.includes(x)) g.push(x); }
    const aggs = ['count(*)'];
    for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
      const v = pick(values[pick(letters)]);
      aggs.push(pick([`sum(${v})`, `min(${v})`, `max(${v})`, `avg(${v})`, `count(DISTINCT ${v})`,
        `sum(CASE WHEN ${v} > 10 THEN 1 ELSE 0 END)`]));
    }
    let sql = `SELECT ${[...g, ...aggs].join(', ')} FROM ${base.from}`;
    if (where.length) sql += (base.from.includes(' WHERE ') ? ' AND ' : ' WHERE ') + where.join(' AND ');
    if (g.length) {
      sql += ` GROUP BY ${g.join(', ')}`;
      if (rnd() < 0.3) sql += ' HAVING count(*) > 2';
      sql += ` ORDER BY ${g.map((_, i) => `${i + 1}${rnd() < 0.5 ? ' DESC' : ''}`).join(', ')}`;
      if (rnd() < 0.4) sql += ` LIMIT ${1 + Math.floor(rnd() * 5)}`;
    }
    const args = ['sql', '--format', 'csv'];
    const cycle = (arg('--threads-cycle') || '').split(',').filter((x) => x);
    if (cycle.length) args.push('--threads', cycle[q % cycle.length]);
    for (const t of ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'])
      args.push('--table', `${t}=${join(tablesDir, t + '.arrow')}`);
    args.push(sql);
    const r = spawnSync(quiver, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
    let theirs;
    try {
      theirs = (await conn.runAndReadAll(sql)).getRows().map((row) => row.map(text));
    } catch (e) {
      console.log(`random ${q}: DuckDB refused (${e.message}): ${sql}`);
      failed++;
      continue;
    }
    if (r.status !== 0) { console.log(`random ${q}: FAIL quiver: ${r.stderr.trim()}\n  ${sql}`); failed++; continue; }
    const mine = parseCsv(r.stdout).slice(1);
    const ok = mine.length === theirs.length && mine.every((row, i) => rowsEqual(row, theirs[i]));
    if (!ok) {
      failed++;
      console.log(`random ${q}: FAIL ${mine.length} vs ${theirs.length} rows\n  ${sql}`);
      for (let i = 0; i < 3 && i < Math.max(mine.length, theirs.length); i++)
        console.log(`  quiver: ${JSON.stringify(mine[i])}\n  duckdb: ${JSON.stringify(theirs[i])}`);
    }
  }
  console.log(`${randomCount - failed}/${randomCount} random queries agree with DuckDB`);
  process.exit(failed ? 1 : 0);
}
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
    ok = sameAsMultisets(mine, theirs);
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
