// Window functions and GROUPING SETS / ROLLUP / CUBE through `quiver sql`,
// each result compared with DuckDB's on the same TPC-H tables
// (tests/window/window_vs_duckdb.sh prepares them):
//   --csv-dir DIR      the tables as CSV (`quiver cat --format csv`)
//   --tables-dir DIR   the same tables as quiver's IPC files
//   --quiver BIN       the quiver binary
//   --threads-cycle L  thread counts to cycle through (e.g. 1,2)
//   --memory-limit M   also run every query under this statement limit
//                      (spilling on), expecting the same answer
//   --random N --seed S  N random window / grouping-sets queries after the
//                      fixed ones (seeded)
// Results are compared as multisets of rows (every query's window ORDER
// BY is total where the answer depends on it): numbers equal to 1e-9
// relative, everything else as text. One line per failure, a summary line,
// exit 1 when any query differs.
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../bench/package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));

const argv = process.argv;
function arg(name, dflt) {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) {
    if (dflt !== undefined) return dflt;
    throw new Error(`missing ${name}`);
  }
  return argv[i + 1];
}
const csvDir = arg('--csv-dir');
const tablesDir = arg('--tables-dir');
const quiver = arg('--quiver');
const threads = arg('--threads-cycle', '1').split(',').filter((x) => x);
const memoryLimit = arg('--memory-limit', '');
const randomCount = Number(arg('--random', '0'));
let seed = Number(arg('--seed', '1'));

const D = 'DECIMAL(15,2)';
const schemas = {
  orders: { o_orderkey: 'BIGINT', o_custkey: 'BIGINT', o_orderstatus: 'VARCHAR', o_totalprice: D, o_orderdate: 'DATE',
    o_orderpriority: 'VARCHAR', o_clerk: 'VARCHAR', o_shippriority: 'INTEGER', o_comment: 'VARCHAR' },
  lineitem: { l_orderkey: 'BIGINT', l_partkey: 'BIGINT', l_suppkey: 'BIGINT', l_linenumber: 'INTEGER',
    l_quantity: D, l_extendedprice: D, l_discount: D, l_tax: D, l_returnflag: 'VARCHAR', l_linestatus: 'VARCHAR',
    l_shipdate: 'DATE', l_commitdate: 'DATE', l_receiptdate: 'DATE', l_shipinstruct: 'VARCHAR', l_shipmode: 'VARCHAR',
    l_comment: 'VARCHAR' },
};

const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const conn = await instance.connect();
await conn.run("SET default_null_order = 'nulls_last_on_asc_first_on_desc'");
for (const [table, cols] of Object.entries(schemas)) {
  const spec = '{' + Object.entries(cols).map(([c, t]) => `'${c}': '${t}'`).join(', ') + '}';
  const path = join(csvDir, `${table}.csv`).replaceAll("'", "''");
  await conn.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${path}', header = true, delim = ',',
                  quote = '"', escape = '"', columns = ${spec})`);
}

// NULLs in keys and values: a partition key, an order key and a value that
// are NULL on some rows.
const L = `(SELECT l_orderkey, l_linenumber, l_suppkey, l_partkey, l_quantity, l_extendedprice, l_discount,
  l_returnflag, l_linestatus, l_shipmode, l_shipdate,
  CASE WHEN l_linenumber = 3 THEN NULL ELSE l_suppkey % 7 END AS pk,
  CASE WHEN l_linenumber = 2 THEN NULL ELSE l_quantity END AS ok,
  CASE WHEN l_linenumber = 4 THEN NULL ELSE l_extendedprice END AS v,
  CAST(l_discount * 100 AS DOUBLE) AS f
  FROM lineitem WHERE l_orderkey < 3000) t`;
const K = 'l_orderkey, l_linenumber';  // unique: a total order

const fixed = [
  // ranking
  `SELECT ${K}, row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC, ${K}) FROM ${L}`,
  `SELECT ${K}, rank() OVER (PARTITION BY pk ORDER BY ok), dense_rank() OVER (PARTITION BY pk ORDER BY ok) FROM ${L}`,
  `SELECT ${K}, percent_rank() OVER (PARTITION BY pk ORDER BY ok DESC), cume_dist() OVER (PARTITION BY pk ORDER BY ok DESC) FROM ${L}`,
  `SELECT ${K}, ntile(4) OVER (PARTITION BY l_returnflag ORDER BY ${K}), ntile(1000) OVER (PARTITION BY pk ORDER BY ${K}) FROM ${L}`,
  `SELECT ${K}, rank() OVER (ORDER BY l_shipmode NULLS FIRST), rank() OVER (ORDER BY ok NULLS FIRST) FROM ${L}`,
  `SELECT ${K}, row_number() OVER (ORDER BY ${K}) FROM ${L}`,
  `SELECT ${K}, rank() OVER () , cume_dist() OVER (PARTITION BY pk) FROM ${L}`,
  // value functions
  `SELECT ${K}, lag(v) OVER (PARTITION BY pk ORDER BY ${K}), lead(v, 2) OVER (PARTITION BY pk ORDER BY ${K}) FROM ${L}`,
  `SELECT ${K}, lag(l_shipmode, 1, 'none') OVER (PARTITION BY l_suppkey ORDER BY ${K}), lead(ok, 3, 0) OVER (ORDER BY ${K}) FROM ${L}`,
  `SELECT ${K}, lag(l_shipdate, 0) OVER (ORDER BY ${K}), lead(f, 1, -1.5) OVER (PARTITION BY pk ORDER BY ${K}) FROM ${L}`,
  `SELECT ${K}, first_value(v) OVER (PARTITION BY pk ORDER BY ${K}), last_value(v) OVER (PARTITION BY pk ORDER BY ${K}) FROM ${L}`,
  `SELECT ${K}, last_value(l_shipmode) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
     nth_value(v, 3) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN 1 PRECEDING AND 5 FOLLOWING) FROM ${L}`,
  `SELECT ${K}, first_value(l_shipdate) OVER (PARTITION BY l_suppkey ORDER BY ${K} ROWS BETWEEN 2 FOLLOWING AND 4 FOLLOWING) FROM ${L}`,
  // aggregates over frames
  `SELECT ${K}, sum(v) OVER (PARTITION BY pk ORDER BY ${K}), count(v) OVER (PARTITION BY pk ORDER BY ${K}), count(*) OVER (PARTITION BY pk) FROM ${L}`,
  `SELECT ${K}, sum(l_quantity) OVER (PARTITION BY pk ORDER BY ok), avg(l_quantity) OVER (PARTITION BY pk ORDER BY ok) FROM ${L}`,
  `SELECT ${K}, sum(v) OVER (ORDER BY ${K} ROWS BETWEEN 3 PRECEDING AND 2 FOLLOWING), avg(v) OVER (ORDER BY ${K} ROWS 5 PRECEDING) FROM ${L}`,
  `SELECT ${K}, min(v) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN 4 PRECEDING AND 1 PRECEDING),
     max(l_shipmode) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN CURRENT ROW AND 7 FOLLOWING) FROM ${L}`,
  `SELECT ${K}, min(l_shipdate) OVER (PARTITION BY l_returnflag ORDER BY ${K} ROWS BETWEEN 10 PRECEDING AND 10 FOLLOWING),
     max(f) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) FROM ${L}`,
  `SELECT ${K}, sum(f) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), avg(f) OVER (PARTITION BY pk) FROM ${L}`,
  `SELECT ${K}, sum(l_linenumber) OVER (PARTITION BY pk ORDER BY ${K} ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM ${L}`,
  `SELECT ${K}, sum(l_quantity) OVER (PARTITION BY pk ORDER BY ok RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING),
     count(*) OVER (PARTITION BY pk ORDER BY ok RANGE BETWEEN 2.5 PRECEDING AND CURRENT ROW) FROM ${L}`,
  `SELECT ${K}, sum(v) OVER (PARTITION BY pk ORDER BY ok DESC RANGE BETWEEN 3 PRECEDING AND 1 FOLLOWING),
     min(l_linenumber) OVER (PARTITION BY pk ORDER BY ok DESC RANGE BETWEEN CURRENT ROW AND 4 FOLLOWING) FROM ${L}`,
  `SELECT ${K}, max(v) OVER (ORDER BY f RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING), count(f) OVER (ORDER BY f RANGE 2 PRECEDING) FROM ${L}`,
  `SELECT ${K}, sum(l_quantity) OVER (ORDER BY l_shipdate RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM ${L}`,
  `SELECT ${K}, count(*) OVER (PARTITION BY pk ORDER BY ok RANGE BETWEEN 3 FOLLOWING AND 6 FOLLOWING) FROM ${L}`,
  // several windows, named windows, windows over a grouped query, in expressions
  `SELECT ${K}, row_number() OVER w, sum(v) OVER w, rank() OVER (PARTITION BY l_returnflag ORDER BY v), lag(v) OVER w
     FROM ${L} WINDOW w AS (PARTITION BY pk ORDER BY ${K})`,
  `SELECT ${K}, sum(v) OVER (w ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM ${L} WINDOW w AS (PARTITION BY pk ORDER BY ${K})`,
  `SELECT l_suppkey, sum(l_quantity), rank() OVER (ORDER BY sum(l_quantity) DESC), sum(sum(l_quantity)) OVER (),
     100.0 * sum(l_quantity) / sum(sum(l_quantity)) OVER (PARTITION BY l_suppkey % 5) FROM lineitem GROUP BY l_suppkey`,
  `SELECT ${K}, v - lag(v) OVER (PARTITION BY pk ORDER BY ${K}), row_number() OVER (ORDER BY ${K}) * 2 FROM ${L}`,
  `SELECT * FROM (SELECT ${K}, row_number() OVER (PARTITION BY l_orderkey ORDER BY l_extendedprice DESC, l_linenumber) AS rn
     FROM ${L}) x WHERE rn <= 2`,
  `SELECT ${K}, row_number() OVER (PARTITION BY pk ORDER BY ${K}) FROM ${L} WHERE l_orderkey < 0`,
  `SELECT ${K}, sum(v) OVER (PARTITION BY l_shipdate ORDER BY ${K}) FROM ${L}`,
  // GROUPING SETS / ROLLUP / CUBE
  `SELECT l_returnflag, l_shipmode, sum(l_quantity), count(*), grouping(l_returnflag, l_shipmode) FROM lineitem
     GROUP BY ROLLUP (l_returnflag, l_shipmode)`,
  `SELECT l_returnflag, l_linestatus, avg(l_discount), min(l_shipdate), max(l_comment), grouping(l_linestatus) FROM lineitem
     GROUP BY CUBE (l_returnflag, l_linestatus)`,
  `SELECT l_returnflag, l_shipmode, count(*) FROM lineitem GROUP BY GROUPING SETS ((l_returnflag), (l_shipmode), (), (l_returnflag, l_shipmode))`,
  `SELECT l_returnflag, l_shipmode, count(DISTINCT l_suppkey), grouping(l_returnflag), grouping(l_shipmode) FROM lineitem
     GROUP BY l_returnflag, ROLLUP (l_shipmode) HAVING count(*) > 100`,
  `SELECT pk, l_returnflag, sum(v), count(v) FROM ${L} GROUP BY GROUPING SETS ((pk), (pk, l_returnflag), ())`,
  `SELECT extract(year FROM o_orderdate) AS y, o_orderpriority, sum(o_totalprice) FROM orders
     GROUP BY ROLLUP (extract(year FROM o_orderdate), o_orderpriority)`,
  `SELECT l_returnflag, sum(l_quantity), rank() OVER (ORDER BY sum(l_quantity)) FROM lineitem GROUP BY ROLLUP (l_returnflag)`,
];

const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
function randomWindowQuery() {
  const parts = ['', 'PARTITION BY pk', 'PARTITION BY l_returnflag', 'PARTITION BY l_suppkey % 13, l_shipmode'];
  const fns = [
    () => ['row_number()', true], () => ['rank()', false], () => ['dense_rank()', false],
    () => ['percent_rank()', false], () => ['cume_dist()', false], () => [`ntile(${1 + Math.floor(rnd() * 9)})`, true],
    () => [`lag(${pick(['v', 'l_shipmode', 'f'])}, ${Math.floor(rnd() * 4)})`, true],
    () => [`lead(${pick(['v', 'ok', 'l_shipdate'])}, ${1 + Math.floor(rnd() * 3)})`, true],
    () => [`first_value(${pick(['v', 'l_shipmode'])})`, true], () => [`last_value(${pick(['v', 'f'])})`, true],
    () => [`${pick(['sum', 'avg', 'min', 'max', 'count'])}(${pick(['v', 'l_quantity', 'f', 'l_linenumber'])})`, true],
    () => ['count(*)', false],
  ];
  const cols = [];
  for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
    const [fn, needsTotal] = pick(fns)();
    const part = pick(parts);
    let order = pick(['', 'ORDER BY ok', 'ORDER BY l_shipmode DESC', 'ORDER BY f NULLS FIRST']);
    let frame = '';
    if (needsTotal || rnd() < 0.5) order = `ORDER BY ${order ? order.slice(9) + ', ' : ''}${K}`;
    if (/^(sum|avg|min|max|count|first_value|last_value)/.test(fn) && rnd() < 0.7) {
      const a = Math.floor(rnd() * 5), b = Math.floor(rnd() * 5);
      frame = pick([`ROWS BETWEEN ${a} PRECEDING AND ${b} FOLLOWING`, `ROWS ${a} PRECEDING`,
        'ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW', `ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING`,
        `ROWS BETWEEN ${a + 1} FOLLOWING AND ${a + b + 1} FOLLOWING`]);
    }
    cols.push(`${fn} OVER (${part} ${order} ${frame})`);
  }
  return `SELECT ${K}, ${cols.join(', ')} FROM ${L}`;
}
function randomGroupingQuery() {
  const g = ['l_returnflag', 'l_linestatus', 'l_shipmode', 'pk'];
  const a = pick(g), b = pick(g.filter((x) => x !== a)), c = pick(g.filter((x) => x !== a && x !== b));
  const clause = pick([`ROLLUP (${a}, ${b}, ${c})`, `CUBE (${a}, ${b}), ${c}`, `GROUPING SETS ((${a}), (${b}, ${c}), ())`,
    `${a}, ROLLUP (${b}, ${c})`, `CUBE (${a}), GROUPING SETS ((${b}), (${c}))`]);
  const aggs = [];
  for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--)
    aggs.push(pick([`${pick(['sum', 'avg', 'min', 'max', 'count'])}(${pick(['v', 'l_quantity', 'f'])})`,
      `${pick(['min', 'max', 'count'])}(${pick(['l_shipdate', 'l_shipmode'])})`]));
  return `SELECT ${a}, ${b}, ${c}, ${aggs.join(', ')}, grouping(${a}, ${b}) FROM ${L} GROUP BY ${clause}`;
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
function parseCsv(textIn) {
  const rows = [];
  let row = [], field = '', quoted = false, i = 0, any = false;
  while (i < textIn.length) {
    const c = textIn[i];
    if (quoted) {
      if (c === '"') {
        if (textIn[i + 1] === '"') { field += '"'; i += 2; continue; }
        quoted = false; i++; continue;
      }
      field += c; i++; continue;
    }
    if (c === '"') { quoted = true; any = true; i++; continue; }
    if (c === ',') { row.push(field); field = ''; any = true; i++; continue; }
    if (c === '\n' || c === '\r') {
      if (c === '\r' && textIn[i + 1] === '\n') i++;
      row.push(field); rows.push(row); row = []; field = ''; any = false; i++; continue;
    }
    field += c; any = true; i++;
  }
  if (any || field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}
// Rows sorted by their text, so that equal multisets line up (the leading
// key columns decide the order; float columns differing in the last bits
// come after them).
const sortRows = (rows) => rows.map((r) => [r.join('\u0001'), r]).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
  .map((x) => x[1]);

function runQuiver(sql, th, limit) {
  const args = ['sql', '--format', 'csv', '--threads', th];
  if (limit) args.push('--statement-memory-limit', limit);
  for (const t of Object.keys(schemas)) args.push('--table', `${t}=${join(tablesDir, t + '.arrow')}`);
  args.push(sql);
  return spawnSync(quiver, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
}

const queries = [...fixed];
for (let q = 0; q < randomCount; q++) queries.push(q % 3 === 2 ? randomGroupingQuery() : randomWindowQuery());
let failed = 0, n = 0;
for (const [qi, sql] of queries.entries()) {
  const name = qi < fixed.length ? `fixed ${qi}` : `random ${qi - fixed.length}`;
  let theirs;
  try {
    theirs = sortRows((await conn.runAndReadAll(sql)).getRows().map((row) => row.map(text)));
  } catch (e) {
    console.log(`${name}: DuckDB refused (${e.message}): ${sql}`);
    failed++;
    continue;
  }
  const runs = [[threads[qi % threads.length], '']];
  if (memoryLimit) runs.push([threads[(qi + 1) % threads.length], memoryLimit]);
  for (const [th, limit] of runs) {
    n++;
    const r = runQuiver(sql, th, limit);
    const tag = `${name} (threads=${th}${limit ? `, limit ${limit}` : ''})`;
    if (r.status !== 0) { console.log(`${tag}: FAIL quiver: ${r.stderr.trim()}\n  ${sql}`); failed++; continue; }
    const mine = sortRows(parseCsv(r.stdout).slice(1));
    const ok = mine.length === theirs.length && mine.every((row, i) => row.length === theirs[i].length &&
      row.every((v, j) => same(v, theirs[i][j])));
    if (!ok) {
      failed++;
      console.log(`${tag}: FAIL ${mine.length} vs ${theirs.length} rows\n  ${sql}`);
      let shown = 0;
      for (let i = 0; i < Math.max(mine.length, theirs.length) && shown < 3; i++) {
        if (mine[i] && theirs[i] && mine[i].every((v, j) => same(v, theirs[i][j]))) continue;
        console.log(`  quiver: ${JSON.stringify(mine[i])}\n  duckdb: ${JSON.stringify(theirs[i])}`);
        shown++;
      }
    }
  }
}
console.log(`${n - failed}/${n} window and grouping-sets runs agree with DuckDB`);
process.exit(failed ? 1 : 0);
