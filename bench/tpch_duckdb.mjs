// The DuckDB side of bench/compare_tpch.sh and `quiver bench tpch`: loads the
// TPC-H tables present as CSV files exported by `quiver cat --format csv` (DuckDB can't
// read quiver's Arrow IPC files without its arrow extension, and there is no
// network to install it), with explicit types matching quiver's schema, then
// times each query (the statement plus reading its whole result with
// runAndReadAll; the row count is read from the materialized chunks) for each
// thread count, and prints one JSON object per (query, threads):
//   {"query", "threads", "rows", "times_s", "median_s", "peak_rss_growth_bytes",
//    "duckdb_version"}
// plus one {"load_s"} line. Loading is outside the timing.
// peak_rss_growth_bytes: the largest growth of this process's resident set
// over a round of the query (sampled every 2 ms while DuckDB runs it on its
// own threads) above the resident set just before that round: DuckDB's
// working memory for the query, beside the loaded tables (its allocator may
// keep pages between rounds, so this is a lower bound).
//
// With --schema FILE ({table: {column: DuckDB type}}, as `quiver bench
// tpch|tpcds` write it) the tables and types are those of FILE instead of
// TPC-H's below (`quiver bench tpcds` loads the 24 TPC-DS tables so).
// A query DuckDB refuses is answered {"query", "error"}.
// With --parquet-dir DIR the tables are Parquet files DIR/<table>.parquet
// read in place in every round (views over read_parquet): written by
// quiver before (no --csv-dir), or with --write-parquet CODEC
// [--row-group-size N] written here from the loaded CSV tables first
// (COPY ... (FORMAT parquet)), which are then dropped.
// Usage: node bench/tpch_duckdb.mjs --csv-dir DIR [--schema FILE] --queries FILE
//          [--threads 1,2] [--rounds 3]
//        node bench/tpch_duckdb.mjs --csv-dir DIR --stdin [--threads 1,2] [--rounds 3]
//          [--parquet-dir DIR [--write-parquet CODEC] [--row-group-size N]]
// FILE holds one "NAME<TAB>SQL" line per query (the same SQL quiver runs).
// With --stdin the tables are loaded, {"ready": true} is printed, then each
// {"threads", "name", "sql"} JSON line read from stdin is timed and answered with
// its JSON line at once (`quiver bench tpch` alternates the engines query
// by query this way, so both see the host in the same state); EOF ends it.
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryUsage } from 'node:process';
import { DuckDBInstance } from '@duckdb/node-api';

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const dir = arg('--csv-dir');
const queriesFile = arg('--queries');
const fromStdin = process.argv.includes('--stdin');
const parquetDir = arg('--parquet-dir');
const writeParquet = arg('--write-parquet');
if ((!dir && !parquetDir) || (!queriesFile && !fromStdin)) {
  throw new Error('usage: tpch_duckdb.mjs (--csv-dir DIR | --parquet-dir DIR) (--queries FILE | --stdin) [--threads 1,2] [--rounds 3]');
}
const threadList = arg('--threads', '1,2').split(',').map(Number);
const rounds = Number(arg('--rounds', '3'));
const queries = fromStdin ? [] : readFileSync(queriesFile, 'utf8').split('\n').filter((l) => l.trim())
  .map((l) => { const t = l.indexOf('\t'); return { name: l.slice(0, t), sql: l.slice(t + 1) }; });

// Types as `quiver sql "DESCRIBE t"` reports them: int64 -> BIGINT, int32 ->
// INTEGER, decimal128(15, 2) -> DECIMAL(15,2), date32 -> DATE, utf8 -> VARCHAR.
const D = 'DECIMAL(15,2)';
const schemaFile = arg('--schema');
const schemas = schemaFile ? JSON.parse(readFileSync(schemaFile, 'utf8')) : {
  region: { r_regionkey: 'BIGINT', r_name: 'VARCHAR', r_comment: 'VARCHAR' },
  nation: { n_nationkey: 'BIGINT', n_name: 'VARCHAR', n_regionkey: 'BIGINT', n_comment: 'VARCHAR' },
  supplier: { s_suppkey: 'BIGINT', s_name: 'VARCHAR', s_address: 'VARCHAR', s_nationkey: 'BIGINT', s_phone: 'VARCHAR',
    s_acctbal: D, s_comment: 'VARCHAR' },
  part: { p_partkey: 'BIGINT', p_name: 'VARCHAR', p_mfgr: 'VARCHAR', p_brand: 'VARCHAR', p_type: 'VARCHAR',
    p_size: 'INTEGER', p_container: 'VARCHAR', p_retailprice: D, p_comment: 'VARCHAR' },
  partsupp: { ps_partkey: 'BIGINT', ps_suppkey: 'BIGINT', ps_availqty: 'INTEGER', ps_supplycost: D,
    ps_comment: 'VARCHAR' },
  customer: { c_custkey: 'BIGINT', c_name: 'VARCHAR', c_address: 'VARCHAR', c_nationkey: 'BIGINT',
    c_phone: 'VARCHAR', c_acctbal: D, c_mktsegment: 'VARCHAR', c_comment: 'VARCHAR' },
  orders: { o_orderkey: 'BIGINT', o_custkey: 'BIGINT', o_orderstatus: 'VARCHAR', o_totalprice: D,
    o_orderdate: 'DATE', o_orderpriority: 'VARCHAR', o_clerk: 'VARCHAR', o_shippriority: 'INTEGER',
    o_comment: 'VARCHAR' },
  lineitem: { l_orderkey: 'BIGINT', l_partkey: 'BIGINT', l_suppkey: 'BIGINT', l_linenumber: 'INTEGER',
    l_quantity: D, l_extendedprice: D, l_discount: D, l_tax: D, l_returnflag: 'VARCHAR',
    l_linestatus: 'VARCHAR', l_shipdate: 'DATE', l_commitdate: 'DATE', l_receiptdate: 'DATE',
    l_shipinstruct: 'VARCHAR', l_shipmode: 'VARCHAR', l_comment: 'VARCHAR' },
};

// Load with all the threads asked for (loading is not timed against quiver);
// each timing set then runs under SET threads = N.
const instance = await DuckDBInstance.create(':memory:', { threads: String(Math.max(...threadList)) });
const conn = await instance.connect();
const t0 = performance.now();
for (const [table, cols] of Object.entries(dir ? schemas : {})) {
  if (!existsSync(join(dir, `${table}.csv`))) continue;  // the tables the caller exported
  const spec = '{' + Object.entries(cols).map(([c, t]) => `'${c}': '${t}'`).join(', ') + '}';
  const path = join(dir, `${table}.csv`).replaceAll("'", "''");
  await conn.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${path}', header = true,
                  delim = ',', quote = '"', escape = '"', columns = ${spec})`);
}
await conn.run('CHECKPOINT');
if (parquetDir) {
  const rowGroup = Number(arg('--row-group-size', '122880'));
  const tables = writeParquet
    ? (await conn.runAndReadAll('SELECT table_name FROM duckdb_tables()')).getRows().map((r) => r[0]) : [];
  for (const table of tables) {
    const out = join(parquetDir, `${table}.parquet`).replaceAll("'", "''");
    await conn.run(`COPY ${table} TO '${out}' (FORMAT parquet, COMPRESSION ${writeParquet}, ROW_GROUP_SIZE ${rowGroup})`);
    await conn.run(`DROP TABLE ${table}`);
  }
  for (const f of readdirSync(parquetDir).filter((n) => n.endsWith('.parquet'))) {
    const path = join(parquetDir, f).replaceAll("'", "''");
    await conn.run(`CREATE VIEW ${f.slice(0, -'.parquet'.length)} AS SELECT * FROM read_parquet('${path}')`);
  }
}
console.log(JSON.stringify({ load_s: (performance.now() - t0) / 1000 }));

const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
let sampledPeak = 0;
const sampler = setInterval(() => { sampledPeak = Math.max(sampledPeak, memoryUsage.rss()); }, 2);
let currentThreads = 0;
async function timeQuery(threads, q) {
  if (threads !== currentThreads) {
    await conn.run(`SET threads = ${threads}`);
    currentThreads = threads;
  }
  const times = [];
  let rows = null;
  let growth = 0;
  for (let r = 0; r < rounds; r++) {
    const before = memoryUsage.rss();
    sampledPeak = before;
    const a = performance.now();
    const reader = await conn.runAndReadAll(q.sql);
    const n = reader.currentRowCount;
    times.push((performance.now() - a) / 1000);
    growth = Math.max(growth, Math.max(sampledPeak, memoryUsage.rss()) - before);
    if (rows !== null && rows !== n) throw new Error(`${q.name}: DuckDB row counts differ between rounds`);
    rows = n;
  }
  console.log(JSON.stringify({ query: q.name, threads, rows, times_s: times, median_s: median(times),
    peak_rss_growth_bytes: growth, duckdb_version: version }));
}
if (fromStdin) {
  console.log(JSON.stringify({ ready: true }));
  const { createInterface } = await import('node:readline');
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { threads, name, sql } = JSON.parse(line);
    try {
      await timeQuery(Number(threads), { name, sql });
    } catch (e) {
      console.log(JSON.stringify({ query: name, threads: Number(threads), error: String(e.message || e) }));
    }
  }
} else {
  for (const threads of threadList) {
    for (const q of queries) await timeQuery(threads, q);
  }
}
clearInterval(sampler);
