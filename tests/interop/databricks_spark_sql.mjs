#!/usr/bin/env node
// Issue 37's constructs through the real Databricks SQL Node.js client
// (@databricks/sql 2.1.0) against `quiver serve` (spark dialect, the server's
// default): window functions, set operations, grouping sets, GROUP BY ALL,
// HAVING on an alias, the Spark function library, IS DISTINCT FROM, ILIKE,
// VALUES, USING / NATURAL joins, EXISTS / IN under OR and in the SELECT
// list, correlated subqueries, Spark's `/`, `div`, NULL order and column
// names, division by zero and INT overflow as errors, and the INT / BIGINT
// column types the driver is told. Each statement's expected columns and rows
// are worked out by hand from the inputs written in it (Spark's documented
// semantics: NULLS FIRST ascending, every match replaced by regexp_replace,
// ...), not taken from quiver.
//
//   node tests/interop/databricks_spark_sql.mjs --quiver build/release/quiver [--keep]
//
// Exit status: 0 all passed, 1 a failure (or node_modules missing), 77 when
// npm is not installed (CTest SKIP_RETURN_CODE).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const args = { quiver: path.join(HERE, '../../build/release/quiver'), keep: false };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--quiver') args.quiver = process.argv[++i];
  else if (a === '--keep') args.keep = true;
  else { console.error(`unknown argument ${a}`); process.exit(1); }
}

let DBSQLClient;
try {
  ({ DBSQLClient } = require('@databricks/sql'));
  const version = require('@databricks/sql/package.json').version;
  if (version !== '2.1.0') throw new Error(`@databricks/sql ${version} installed, 2.1.0 expected`);
} catch (e) {
  const npm = spawnSync('npm', ['--version']);
  if (npm.error) { console.log('databricks spark sql interop: npm is not installed: skipped'); process.exit(77); }
  console.error(`databricks spark sql interop: ${e.message}; run scripts/install-interop.sh`);
  process.exit(1);
}

// t: k = 1 has 10, 20, 20; k = 2 has 5 and NULL; k = 3 has 7.
const T = 'WITH t(k, v) AS (VALUES (1, 10), (1, 20), (1, 20), (2, 5), (2, NULL), (3, 7)) ';

// { name, sql, columns (null: not checked), rows }
const CASES = [
  {
    name: 'window functions: ranking, running sum, lag with default, first_value, ntile (NULLS FIRST ascending)',
    sql: T + 'SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v) AS rn, rank() OVER (PARTITION BY k ORDER BY v) AS rk, ' +
      'dense_rank() OVER (PARTITION BY k ORDER BY v) AS dr, sum(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN UNBOUNDED ' +
      'PRECEDING AND CURRENT ROW) AS run, lag(v, 1, -1) OVER (PARTITION BY k ORDER BY v) AS lg, first_value(v) OVER ' +
      '(PARTITION BY k ORDER BY v) AS fv, ntile(2) OVER (ORDER BY k, v) AS nt FROM t ORDER BY k, v',
    columns: ['k', 'v', 'rn', 'rk', 'dr', 'run', 'lg', 'fv', 'nt'],
    rows: [[1, 10, 1, 1, 1, 10, -1, 10, 1], [1, 20, 2, 2, 2, 30, 10, 10, 1], [1, 20, 3, 2, 2, 50, 20, 10, 1],
      [2, null, 1, 1, 1, null, -1, null, 2], [2, 5, 2, 2, 2, 5, null, null, 2], [3, 7, 1, 1, 1, 7, -1, 7, 2]],
  },
  {
    name: 'a window over a served table (TPC-H nation, Europe)',
    sql: "SELECT n_name, row_number() OVER (ORDER BY n_name DESC) AS rn, count(*) OVER (PARTITION BY n_regionkey) AS c " +
      'FROM nation WHERE n_regionkey = 3 ORDER BY n_name',
    columns: ['n_name', 'rn', 'c'],
    rows: [['FRANCE', 5, 5], ['GERMANY', 4, 5], ['ROMANIA', 3, 5], ['RUSSIA', 2, 5], ['UNITED KINGDOM', 1, 5]],
  },
  { name: "Spark's / and div", sql: 'SELECT 7 / 2 AS a, 7 div 2 AS b, -7 div 2 AS c', columns: ['a', 'b', 'c'], rows: [[3.5, 3, -3]] },
  {
    // Databricks' "SQL data type rules": the least common type of INT and STRING is BIGINT; a STRING
    // beside a DATE is cast to DATE (Spark's string-to-date: the time after the date is ignored).
    name: 'ANSI type coercion: a string beside a number or a date',
    sql: "SELECT 1 = '1' AS a, coalesce(5, '6') AS b, DATE '2015-03-18' = '2015-03-18 12:03:17' AS c, 2 IN ('1', '2') AS d",
    columns: ['a', 'b', 'c', 'd'],
    rows: [[true, 5, true, true]],
  },
  { name: 'UNION of an INT and a STRING is BIGINT', sql: "SELECT 1 AS x UNION ALL SELECT '2' ORDER BY x", columns: ['x'], rows: [[1], [2]] },
  { name: 'ORDER BY DESC puts NULLs last', sql: T + 'SELECT v FROM t ORDER BY v DESC', columns: ['v'], rows: [[20], [20], [10], [7], [5], [null]] },
  { name: 'ORDER BY ASC puts NULLs first', sql: T + 'SELECT v FROM t ORDER BY v', columns: ['v'], rows: [[null], [5], [7], [10], [20], [20]] },
  {
    name: "GROUP BY ALL and Spark's column names",
    sql: T + "SELECT k + 1, count(*), upper('x') FROM t GROUP BY ALL ORDER BY 1",
    columns: ['(k + 1)', 'count(1)', 'upper(x)'],
    rows: [[2, 3, 'X'], [3, 2, 'X'], [4, 1, 'X']],
  },
  { name: 'UNION', sql: T + 'SELECT k FROM t UNION SELECT 4 ORDER BY k', columns: ['k'], rows: [[1], [2], [3], [4]] },
  { name: 'UNION ALL', sql: T + 'SELECT k FROM t UNION ALL SELECT k FROM t WHERE k = 3 ORDER BY k', columns: ['k'], rows: [[1], [1], [1], [2], [2], [3], [3]] },
  { name: 'INTERSECT', sql: T + 'SELECT k FROM t INTERSECT SELECT k FROM t WHERE v > 6 ORDER BY k', columns: ['k'], rows: [[1], [3]] },
  { name: 'EXCEPT', sql: T + 'SELECT k FROM t EXCEPT SELECT k FROM t WHERE v > 6', columns: ['k'], rows: [[2]] },
  { name: 'INTERSECT ALL', sql: T + 'SELECT k FROM t INTERSECT ALL SELECT k FROM t WHERE v >= 10 ORDER BY k', columns: ['k'], rows: [[1], [1], [1]] },
  { name: 'EXCEPT ALL', sql: T + 'SELECT k FROM t EXCEPT ALL SELECT k FROM t WHERE v >= 20 ORDER BY k', columns: ['k'], rows: [[1], [2], [2], [3]] },
  {
    name: 'ROLLUP with grouping()',
    sql: T + 'SELECT k, sum(v) AS s, grouping(k) AS g FROM t GROUP BY ROLLUP(k) ORDER BY g, k',
    columns: ['k', 's', 'g'],
    rows: [[1, 50, 0], [2, 5, 0], [3, 7, 0], [null, 62, 1]],
  },
  {
    name: 'CUBE with grouping_id()',
    sql: T + 'SELECT k, v, count(*) AS n, grouping_id(k, v) AS gid FROM t WHERE k = 1 GROUP BY CUBE(k, v) ' +
      'ORDER BY k NULLS LAST, v NULLS LAST',
    columns: ['k', 'v', 'n', 'gid'],
    rows: [[1, 10, 1, 0], [1, 20, 2, 0], [1, null, 3, 1], [null, 10, 1, 2], [null, 20, 2, 2], [null, null, 3, 3]],
  },
  {
    name: 'GROUPING SETS',
    sql: T + 'SELECT k, count(*) AS n FROM t GROUP BY GROUPING SETS ((k), ()) ORDER BY k NULLS LAST',
    columns: ['k', 'n'],
    rows: [[1, 3], [2, 2], [3, 1], [null, 6]],
  },
  { name: 'HAVING on an output alias', sql: T + 'SELECT k, sum(v) AS s FROM t GROUP BY k HAVING s > 6 ORDER BY k', columns: ['k', 's'], rows: [[1, 50], [3, 7]] },
  {
    name: 'date functions',
    sql: "SELECT date_trunc('MONTH', DATE '2024-03-15') AS a, date_add(DATE '2024-01-31', 1) AS b, date_sub(DATE '2024-03-01', 1) AS c, " +
      "datediff(DATE '2024-03-01', DATE '2024-02-01') AS d, add_months(DATE '2024-01-31', 1) AS e, year(DATE '2024-03-15') AS f, " +
      "month(DATE '2024-03-15') AS g, to_date('2024-03-15') AS h, date_format(DATE '2024-03-15', 'yyyy/MM/dd') AS i, " +
      'current_date() IS NOT NULL AS j, current_timestamp() >= current_date() AS k',
    columns: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'],
    rows: [['2024-03-01', '2024-02-01', '2024-02-29', 29, '2024-02-29', 2024, 3, '2024-03-15', '2024/03/15', true, true]],
  },
  {
    name: 'string functions (regexp_replace replaces every match, concat with a NULL is NULL, substr from the end, Unicode lower)',
    sql: "SELECT replace('abcabc', 'b', 'X') AS a, split_part('a,b,c', ',', 2) AS b, regexp_replace('a1b22c', '[0-9]+', '#') AS c, " +
      "regexp_extract('foo123bar', '([a-z]+)([0-9]+)', 2) AS d, 'abc' rlike '^a.c$' AS e, lpad('7', 3, '0') AS f, " +
      "rpad('ab', 4, '-') AS g, instr('hello', 'll') AS h, concat_ws('-', 'a', NULL, 'c') AS i, left('hello', 2) AS j, " +
      "right('hello', 3) AS k, initcap('hello wORLD') AS l, concat('a', NULL) AS m, substr('Spark SQL', -3) AS n, " +
      "lower('ÄΒΓ') AS o",
    columns: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o'],
    rows: [['aXcaXc', 'b', 'a#b#c', '123', true, '007', 'ab--', 3, 'a-c', 'he', 'llo', 'Hello World', null, 'SQL', 'äβγ']],
  },
  {
    name: 'math and NULL functions',
    sql: "SELECT floor(-2.5) AS a, ceil(2.1) AS b, mod(7, 3) AS c, power(2, 10) AS d, sqrt(16) AS e, ln(1) AS f, " +
      "greatest(1, 5, 3) AS g, least(4, 2) AS h, ifnull(NULL, 1) AS i, nvl(NULL, 'x') AS j, nvl2(NULL, 'a', 'b') AS k, " +
      "if(1 > 2, 'y', 'n') AS l",
    columns: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'],
    rows: [[-3, 3, 1, 1024, 4, 0, 5, 2, 1, 'x', 'b', 'n']],
  },
  {
    // Spark's documented examples: bround(2.5, 0) = 2, pmod(-10, 3) = 2, log(10, 100) = 2, sign(-40) = -1.0,
    // trunc('2019-08-04', 'week') = 2019-07-29, weekofyear('2008-02-20') = 8, next_day('2015-01-14', 'TU') =
    // 2015-01-20, months_between('1997-02-28 10:30:00', '1996-10-30') = 3.94959677, from_unixtime(0) in UTC,
    // locate / position('bar', 'abcbarbar'[, 5]) = 4 / 7, repeat('123', 2), reverse('Spark SQL'),
    // translate('AaBbCc', 'abc', '123'), decode(5, 6, 'Spark', 5, 'SQL') = 'SQL', char(65) = 'A', ln(0) NULL;
    // count(DISTINCT k, v) over t: (1, 10), (1, 20), (2, 5), (3, 7).
    name: "Spark's function library: math, dates, strings, count(DISTINCT a, b)",
    sql: T + "SELECT bround(2.5, 0) AS a, pmod(-10, 3) AS b, log(10, 100) AS c, sign(-40) AS d, " +
      "trunc(DATE '2019-08-04', 'week') AS e, weekofyear(DATE '2008-02-20') AS f, next_day(DATE '2015-01-14', 'TU') AS g, " +
      "months_between(TIMESTAMP '1997-02-28 10:30:00', DATE '1996-10-30') AS h, from_unixtime(0) AS i, " +
      "locate('bar', 'abcbarbar', 5) AS j, position('bar', 'abcbarbar') AS k, repeat('123', 2) AS l, " +
      "reverse('Spark SQL') AS m, translate('AaBbCc', 'abc', '123') AS n, decode(5, 6, 'Spark', 5, 'SQL') AS o, " +
      'char(65) AS p, ln(0) AS q, count(DISTINCT k, v) AS r FROM t',
    columns: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r'],
    rows: [[2, 2, 2, -1, '2019-07-29', 8, '2015-01-20', 3.94959677, '1970-01-01 00:00:00', 7, 4, '123123', 'LQS krapS',
      'A1B2C3', 'SQL', 'A', null, 4]],
  },
  {
    // v's non-NULL values 10, 20, 20, 5, 7: mean 12.4, squared deviations 205.2, sample variance 51.3.
    name: 'aggregate functions',
    sql: T + 'SELECT variance(v) AS a, stddev(v) AS b, count_if(v > 6) AS c, bool_and(v > 4) AS d, bool_or(v > 15) AS e, ' +
      'median(v) AS f, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS g, percentile_disc(0.25) WITHIN GROUP (ORDER BY v) AS h, ' +
      'percentile_approx(v, 0.5) AS i, approx_count_distinct(v) AS j FROM t',
    columns: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'],
    rows: [[51.3, Math.sqrt(51.3), 4, true, true, 10, 10, 7, 10, 4]],
  },
  {
    name: 'listagg and string_agg, ordered',
    sql: "WITH s(k, x) AS (VALUES (1, 'b'), (1, 'a'), (2, NULL), (1, 'c')) SELECT listagg(x, '|') WITHIN GROUP (ORDER BY x) AS l, " +
      "string_agg(x, ',' ORDER BY x DESC) AS m FROM s",
    columns: ['l', 'm'],
    rows: [['a|b|c', 'c,b,a']],
  },
  {
    // Spark's NULL order: the NULL key first ascending, last descending.
    name: 'listagg ordered by another column, from an inline table',
    sql: "SELECT listagg(name, ',') WITHIN GROUP (ORDER BY id) AS a, listagg(name) WITHIN GROUP (ORDER BY id DESC) AS b " +
      "FROM VALUES (2, 'b'), (NULL, 'z'), (1, 'a'), (3, NULL) AS tab(id, name)",
    columns: ['a', 'b'],
    rows: [['z,a,b', 'baz']],
  },
  {
    name: "Spark's inline tables: bare rows, col1 names, a join",
    sql: 'SELECT col1, v.s FROM VALUES 3, 1, 2 JOIN VALUES (1, 10), (2, 20) AS v(k, s) ON col1 = v.k ORDER BY col1',
    columns: ['col1', 's'],
    rows: [[1, 10], [2, 20]],
  },
  {
    name: 'IS [NOT] DISTINCT FROM and ILIKE',
    sql: "SELECT NULL IS DISTINCT FROM 1 AS a, NULL IS NOT DISTINCT FROM NULL AS b, 'Hello' ILIKE 'h%' AS c, 1 IS DISTINCT FROM 1 AS d",
    columns: ['a', 'b', 'c', 'd'],
    rows: [[true, true, true, false]],
  },
  {
    name: 'JOIN ... USING over VALUES tables',
    sql: "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS x(k, s) JOIN (VALUES (2, 'B'), (3, 'C')) AS y(k, u) USING (k)",
    columns: ['k', 's', 'u'],
    rows: [[2, 'b', 'B']],
  },
  {
    name: 'NATURAL JOIN',
    sql: "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS x(k, s) NATURAL JOIN (VALUES (2, 'B'), (3, 'C')) AS y(k, u)",
    columns: ['k', 's', 'u'],
    rows: [[2, 'b', 'B']],
  },
  {
    name: 'EXISTS under OR',
    sql: T + 'SELECT k FROM (VALUES (1), (2), (3)) AS a(k) WHERE k = 1 OR EXISTS (SELECT 1 FROM t WHERE t.k = a.k AND t.v IS NULL) ORDER BY k',
    columns: ['k'],
    rows: [[1], [2]],
  },
  {
    name: 'IN (subquery) in the SELECT list',
    sql: T + 'SELECT k, k IN (SELECT k FROM t WHERE v > 6) AS hit FROM (VALUES (1), (2), (4)) AS a(k) ORDER BY k',
    columns: ['k', 'hit'],
    rows: [[1, true], [2, false], [4, false]],
  },
  {
    name: 'a correlated scalar subquery that is not an aggregate (ORDER BY ... LIMIT 1, NULLs last descending)',
    sql: T + 'SELECT a.k, (SELECT t.v FROM t WHERE t.k = a.k ORDER BY t.v DESC LIMIT 1) AS top FROM (VALUES (1), (2), (3)) AS a(k) ORDER BY a.k',
    columns: ['k', 'top'],
    rows: [[1, 20], [2, 5], [3, 7]],
  },
  {
    // k = 1: 20 is in {10, 20, 20}; k = 2: {5, NULL} makes NOT IN unknown; k = 3: {7}.
    name: 'NOT IN over a correlated subquery (NULL-aware)',
    sql: T + 'SELECT a.k FROM (VALUES (1), (2), (3)) AS a(k) WHERE 20 NOT IN (SELECT t.v FROM t WHERE t.k = a.k) ORDER BY a.k',
    columns: ['k'],
    rows: [[3]],
  },
];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-databricks-spark-'));
let server;
let failures = 0;
let passes = 0;

function serve(token) {
  return new Promise((resolve, reject) => {
    const child = spawn(args.quiver, ['serve', '--port', '0', '--cert-dir', tmp, '--tpch', '0.001', '--tpch-dir', path.join(tmp, 'tpch')],
      { env: { ...process.env, QUIVER_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
    server = child;
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`quiver serve did not start: ${out} ${err}`)), 120000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        resolve({ port: Number(/^port: (\d+)$/m.exec(out)[1]), certPath: /^certificate: (.*)$/m.exec(out)[1], rpcPath: /^path: (.*)$/m.exec(out)[1] });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => { clearTimeout(timer); if (!out.includes('ready\n')) reject(new Error(`quiver serve exited ${code}: ${err}`)); });
  });
}

// The driver's value as text: a DATE (midnight UTC) as YYYY-MM-DD, a
// TIMESTAMP as ISO 8601, BIGINT (bigint or number) and the rest as String().
function text(v) {
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return String(v);
}

function same(actual, expected) {
  if (expected === null) return actual === null || actual === undefined;
  if (actual === null || actual === undefined) return false;
  if (typeof expected === 'number') {
    const n = Number(actual);
    return n === expected || Math.abs(n - expected) <= Math.abs(expected) * 1e-12;
  }
  if (typeof expected === 'boolean') return actual === expected;
  return text(actual) === expected;
}

async function main() {
  const token = 'tok-' + Math.random().toString(36).slice(2);
  const srv = await serve(token);
  const client = new DBSQLClient();
  await client.connect({ host: '127.0.0.1', port: srv.port, path: srv.rpcPath, token, customCaCert: fs.readFileSync(srv.certPath) });
  const session = await client.openSession();
  for (const c of CASES) {
    try {
      const op = await session.executeStatement(c.sql, {});
      const rows = await op.fetchAll();
      await op.close();
      if (rows.length !== c.rows.length) throw new Error(`${rows.length} rows, expected ${c.rows.length}: ${JSON.stringify(rows.map((r) => Object.values(r).map(text)))}`);
      rows.forEach((row, r) => {
        const names = Object.keys(row);
        if (c.columns && JSON.stringify(names) !== JSON.stringify(c.columns)) throw new Error(`columns ${JSON.stringify(names)}, expected ${JSON.stringify(c.columns)}`);
        const values = Object.values(row);
        c.rows[r].forEach((want, i) => {
          if (!same(values[i], want)) throw new Error(`row ${r} column '${names[i]}': ${values[i] === null ? 'NULL' : text(values[i])}, expected ${want === null ? 'NULL' : want}`);
        });
      });
      passes++;
      console.log(`ok   ${c.name}`);
    } catch (e) {
      failures++;
      console.log(`FAIL ${c.name}: ${e.message || e}\n     ${c.sql}`);
    }
  }
  // ANSI mode: division by zero is an error, and the session goes on. (The
  // server's TStatus carries SQLSTATE 22012; the driver's StatusError keeps
  // only the message and the status code, 3 = ERROR_STATUS.)
  try {
    const op = await session.executeStatement('SELECT 1 / 0 AS x', {});
    await op.fetchAll();
    failures++;
    console.log('FAIL division by zero: no error');
  } catch (e) {
    const said = `${e.message} (code ${e.code})`;
    if (/division by zero/i.test(said) && e.code === 3) {
      passes++;
      console.log('ok   division by zero is an error');
    } else {
      failures++;
      console.log(`FAIL division by zero: ${said}`);
    }
  }
  // ANSI mode: INT + INT is an INT, and past INT's range an overflow error
  // (Spark's "ANSI compliance" page: SELECT 2147483647 + 1 raises
  // ARITHMETIC_OVERFLOW, SQLSTATE 22003). A constant's overflow fails the
  // statement (ERROR_STATUS); a column's is found while the rows are made,
  // and the driver's fetch reports it.
  for (const [sql, statusCode] of [['SELECT 2147483647 + 1 AS x', 3], ['SELECT abs(-2147483648) AS x', 3],
    ['SELECT k * 1073741824 AS x FROM (VALUES (1), (2)) AS t(k)', undefined]]) {
    try {
      const op = await session.executeStatement(sql, {});
      await op.fetchAll();
      failures++;
      console.log(`FAIL integer overflow: no error for ${sql}`);
    } catch (e) {
      const said = `${e.message} (code ${e.code})`;
      if (/ARITHMETIC_OVERFLOW/.test(said) && e.code === statusCode) {
        passes++;
        console.log(`ok   integer overflow is an error: ${sql}`);
      } else {
        failures++;
        console.log(`FAIL integer overflow: ${said}`);
      }
    }
  }
  // The column types the driver is told (TTableSchema): an integral literal
  // is INT, INT op INT is INT, with a BIGINT it is BIGINT, sum of INTs BIGINT,
  // avg DOUBLE (Spark's literal rules and the sum / avg function pages).
  {
    const { TTypeId } = require('@databricks/sql/thrift/TCLIService_types');
    const sql = T + 'SELECT 1 AS a, k + 1 AS b, -k AS c, k * CAST(2 AS BIGINT) AS d, sum(k) AS e, avg(k) AS f, ' +
      '2147483648 AS g FROM t GROUP BY k ORDER BY k LIMIT 1';
    const want = 'a:INT_TYPE,b:INT_TYPE,c:INT_TYPE,d:BIGINT_TYPE,e:BIGINT_TYPE,f:DOUBLE_TYPE,g:BIGINT_TYPE';
    try {
      const op = await session.executeStatement(sql, {});
      const schema = await op.getSchema();
      const rows = await op.fetchAll();
      await op.close();
      const got = schema.columns.map((c) => `${c.columnName}:${TTypeId[c.typeDesc.types[0].primitiveEntry.type]}`).join();
      const values = rows.map((r) => Object.values(r).map(Number).join()).join(';');
      if (got === want && values === '1,2,-1,2,3,1,2147483648') {
        passes++;
        console.log('ok   INT and BIGINT column types');
      } else {
        failures++;
        console.log(`FAIL INT and BIGINT column types: ${got} (expected ${want}), rows ${values}`);
      }
    } catch (e) {
      failures++;
      console.log(`FAIL INT and BIGINT column types: ${e.message || e}\n     ${sql}`);
    }
  }
  const op = await session.executeStatement('SELECT 1 AS one', {});
  const after = await op.fetchAll();
  await op.close();
  if (after.length === 1 && Number(after[0].one) === 1) passes++;
  else { failures++; console.log(`FAIL the session after an error: ${JSON.stringify(after)}`); }
  await session.close();
  await client.close();
}

try {
  await main();
} catch (e) {
  failures++;
  console.log(`FAIL setup: ${e.stack || e}`);
} finally {
  if (server) {
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode !== null ? r() : server.on('exit', r)));
  }
  if (!args.keep && failures === 0) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`outputs kept in ${tmp}`);
}
console.log(`databricks spark sql interop: ${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
