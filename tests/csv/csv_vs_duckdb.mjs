// quiver's CSV reader vs DuckDB's read_csv over the same files (driven by
// tests/csv/csv_vs_duckdb.sh): quiver reads lineitem.csv.gz and
// orders.csv.zst, DuckDB the plain .csv files with its own sniffing; the
// column types and each query's rows must be equal (numbers within 1e-9
// relative); then small dialect cases (blank lines, quotes, empty and
// header-only files) read whole by both. Prints "csv vs duckdb: ... equal"
// or FAIL lines.
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../bench/package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
}
const dir = arg('--dir');
const quiver = arg('--quiver');
const quiverFiles = { lineitem: 'lineitem.csv.gz', orders: 'orders.csv.zst' };

const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const conn = await instance.connect();
for (const t of Object.keys(quiverFiles)) {
  const path = join(dir, `${t}.csv`).replaceAll("'", "''");
  await conn.run(`CREATE TABLE ${t} AS SELECT * FROM read_csv('${path}')`);
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
// Lines of quiver's CSV output (no field of these queries holds a comma,
// quote or newline).
function quiverRows(sql) {
  const args = ['sql', '--format', 'csv'];
  for (const [t, f] of Object.entries(quiverFiles)) args.push('--table', `${t}=${join(dir, f)}`);
  args.push(sql);
  const r = spawnSync(quiver, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`quiver failed: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l !== '').slice(1).map((l) => l.split(','));
}

let failed = 0;
// Types: DuckDB's inferred SQL types mapped to Arrow, against `quiver schema`.
const arrowOf = { BIGINT: 'int64', DOUBLE: 'double', DATE: 'date32[day]', VARCHAR: 'utf8', BOOLEAN: 'bool',
  TIMESTAMP: 'timestamp[us]' };
for (const [t, f] of Object.entries(quiverFiles)) {
  const theirs = (await conn.runAndReadAll(`DESCRIBE ${t}`)).getRows()
    .map((r) => `${r[0]}: ${arrowOf[r[1]] ?? r[1]}`).join('\n');
  const r = spawnSync(quiver, ['schema', join(dir, f)], { encoding: 'utf8' });
  const ours = r.stdout.split('\n').slice(1).filter((l) => l !== '').join('\n');
  if (ours !== theirs) {
    console.log(`FAIL types of ${t}:\nquiver:\n${ours}\nduckdb:\n${theirs}`);
    failed++;
  }
}

const queries = [
  `SELECT count(*), sum(l_orderkey), sum(l_partkey), sum(l_suppkey), sum(l_linenumber), sum(l_quantity),
     sum(l_extendedprice), sum(l_discount), sum(l_tax), min(l_shipdate), max(l_commitdate), max(l_receiptdate),
     count(DISTINCT l_comment), count(DISTINCT l_shipinstruct), count(DISTINCT l_shipmode) FROM lineitem`,
  `SELECT count(*), sum(o_orderkey), sum(o_custkey), sum(o_totalprice), min(o_orderdate), max(o_orderdate),
     count(DISTINCT o_comment), count(DISTINCT o_clerk), sum(o_shippriority) FROM orders`,
  `SELECT l_returnflag, l_linestatus, count(*), sum(l_quantity), sum(l_extendedprice * (1 - l_discount))
     FROM lineitem WHERE l_shipdate <= DATE '1998-09-02' GROUP BY 1, 2 ORDER BY 1, 2`,
  `SELECT o_orderpriority, o_orderstatus, count(*), sum(l_quantity), max(l_comment) FROM orders
     JOIN lineitem ON o_orderkey = l_orderkey GROUP BY 1, 2 ORDER BY 1, 2`,
  `SELECT max(length(l_comment)), max(o_comment), min(o_comment) FROM lineitem JOIN orders ON l_orderkey = o_orderkey
     WHERE l_shipmode = 'AIR'`,
];
for (const [qi, sql] of queries.entries()) {
  const theirs = (await conn.runAndReadAll(sql)).getRows().map((row) => row.map(text));
  let ours;
  try {
    ours = quiverRows(sql);
  } catch (e) {
    console.log(`FAIL query ${qi}: ${e.message}`);
    failed++;
    continue;
  }
  const equal = ours.length === theirs.length &&
    ours.every((r, i) => r.length === theirs[i].length && r.every((v, j) => same(v, theirs[i][j])));
  if (!equal) {
    console.log(`FAIL query ${qi}: ${sql}\nquiver: ${JSON.stringify(ours)}\nduckdb: ${JSON.stringify(theirs)}`);
    failed++;
  }
}
// Dialect cases: small texts whose shape is the question (blank lines in
// one column, '90s, the quote that wraps fields, header-only and empty
// files); names, types and every value (NULL apart from '') must equal
// DuckDB's read_csv of the same bytes.
const dialectCases = {
  'blank_one_column.csv': 'v\n1\n\n3\n\n\n5\n\n',
  'blank_crlf.csv': 'v\r\n1\r\n\r\n3\r\n\r\n',
  'blank_text.csv': 'a\n\n\n',
  'blank_leading.csv': '\n\nv\n1\n\n3\n\n',
  'blank_two_columns.csv': 'a,b\n1,2\n\n3,4\n',
  'apostrophe.csv': "id,era\n1,'90s\n2,'80s\n3,modern\n",
  'apostrophe_one_column.csv': "x\n'90s\n'80s'\n",
  'single_quoted.csv': "a,b\n'x',1\n'y',2\n",
  'double_quoted_header.csv': 'a,"b,c"\n1,"2,3"\n',
  'both_quotes.csv': "a,b\n'x',\"y\"\n'z',\"w\"\n",
  'header_only.csv': 'a,b,c\n',
  'one_row_numbers.csv': '1,2,3\n',
  'one_row_duplicate_names.csv': 'a,a\n',
  'one_row_with_empty.csv': 'x,\n',
  'empty.csv': '',
  'one_column_commas.csv': 'name\nSmith, John\nDoe, Jane\nX\n',
  'blank_only.csv': '\n\n\n',
  'blank_only_one.csv': '\n',
  'blank_only_crlf.csv': '\r\n\r\n\r\n',
  'blank_only_bom.csv': '\uFEFF\n\n',
  'header_then_blank_crlf.csv': 'a\r\n\r\n\r\n',
  'header_number_then_blank.csv': '1\n\n\n',
  'header_names_spaces.csv': '" x ",y \n1,2\n',
  'space_line.csv': '\n \n',
};
const { writeFileSync } = await import('node:fs');
for (const [name, body] of Object.entries(dialectCases)) {
  const path = join(dir, name);
  writeFileSync(path, body);
  const r = await conn.runAndReadAll(`SELECT * FROM read_csv('${path.replaceAll("'", "''")}')`);
  const theirs = {
    names: r.columnNames(),
    types: r.columnTypes().map((t) => arrowOf[t.toString()] ?? t.toString()),
    rows: r.getRowsJson().map((row) => row.map((v) => (v === null ? 'NULL' : String(v)))),
  };
  const schema = spawnSync(quiver, ['schema', path], { encoding: 'utf8' });
  const cat = spawnSync(quiver, ['cat', path, '--format', 'jsonl'], { encoding: 'utf8' });
  if (schema.status !== 0 || cat.status !== 0) {
    console.log(`FAIL ${name}: quiver failed: ${schema.stderr}${cat.stderr}`);
    failed++;
    continue;
  }
  const fields = schema.stdout.split('\n').slice(1).filter((l) => l !== '').map((l) => l.split(': '));
  const ours = {
    names: fields.map((f) => f[0]),
    types: fields.map((f) => f[1]),
    rows: cat.stdout.split('\n').filter((l) => l !== '').map((l) => {
      const o = JSON.parse(l);
      return fields.map((f) => f[0]).map((n) => (o[n] === null || o[n] === undefined ? 'NULL' : String(o[n])));
    }),
  };
  if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
    console.log(`FAIL ${name} (${JSON.stringify(body)}):\nquiver: ${JSON.stringify(ours)}\nduckdb: ${JSON.stringify(theirs)}`);
    failed++;
  }
}
if (failed) {
  console.log(`csv vs duckdb: ${failed} FAIL`);
  process.exit(1);
}
console.log(`csv vs duckdb: types of 2 tables, ${queries.length} queries and ${Object.keys(dialectCases).length} ` +
  'dialect cases equal');
