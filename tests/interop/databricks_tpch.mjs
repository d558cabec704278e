#!/usr/bin/env node
// The real Databricks SQL Node.js client (@databricks/sql 2.1.0) runs three
// TPC-H-shaped joins and the 22 TPC-H queries against `quiver serve --tpch 0.01` (CloudFetch, LZ4, several
// chunks) and must read the same rows as quiver's own client
// (`quiver query --format jsonl`) for each: same row count, and equal
// values row by row once both sides are sorted by the query's unique key.
//
//   node tests/interop/databricks_tpch.mjs --quiver build/release/quiver [--keep]
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
const args = { quiver: path.join(HERE, '../../build/release/quiver'), keep: false, scale: '0.01' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--quiver') args.quiver = process.argv[++i];
  else if (a === '--scale') args.scale = process.argv[++i];
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
  if (npm.error) { console.log('databricks tpch interop: npm is not installed: skipped'); process.exit(77); }
  console.error(`databricks tpch interop: ${e.message}; run scripts/install-interop.sh`);
  process.exit(1);
}

// Three joins; `key` lists the columns that identify a row (unique in the result).
const QUERIES = [
  {
    name: 'orders JOIN lineitem, o_orderdate < 1993-01-01',
    sql: "SELECT o.o_orderkey, o.o_orderdate, o.o_totalprice, l.l_linenumber, l.l_partkey, l.l_quantity, " +
      "l.l_extendedprice, l.l_shipdate, l.l_returnflag FROM orders o JOIN lineitem l ON o.o_orderkey = l.l_orderkey " +
      "WHERE o.o_orderdate < DATE '1993-01-01'",
    key: ['o_orderkey', 'l_linenumber'],
  },
  {
    name: 'customer JOIN orders JOIN lineitem (TPC-H Q3 shape)',
    sql: "SELECT c.c_custkey, c.c_name, o.o_orderkey, o.o_orderdate, o.o_shippriority, l.l_linenumber, " +
      "l.l_extendedprice, l.l_discount FROM customer c JOIN orders o ON c.c_custkey = o.o_custkey " +
      "JOIN lineitem l ON o.o_orderkey = l.l_orderkey WHERE c.c_mktsegment = 'BUILDING' " +
      "AND o.o_orderdate < DATE '1995-03-15' AND l.l_shipdate > DATE '1995-03-15'",
    key: ['o_orderkey', 'l_linenumber'],
  },
  {
    name: 'region JOIN nation JOIN supplier JOIN partsupp (TPC-H Q2/Q5 shape)',
    sql: "SELECT r.r_name, n.n_name, s.s_suppkey, s.s_name, s.s_acctbal, ps.ps_partkey, ps.ps_supplycost " +
      "FROM region r JOIN nation n ON r.r_regionkey = n.n_regionkey JOIN supplier s ON n.n_nationkey = s.s_nationkey " +
      "JOIN partsupp ps ON s.s_suppkey = ps.ps_suppkey WHERE r.r_name = 'ASIA'",
    key: ['s_suppkey', 'ps_partkey'],
  },
];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-databricks-tpch-'));
let server;
let failures = 0;
let passes = 0;

function serve(token) {
  return new Promise((resolve, reject) => {
    const child = spawn(args.quiver, ['serve', '--port', '0', '--cert-dir', tmp, '--tpch', args.scale,
      '--tpch-dir', path.join(tmp, 'tpch'), '--chunk-bytes', String(256 << 10), '--inline-threshold-bytes', String(64 << 10)],
    { env: { ...process.env, QUIVER_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
    server = child;
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`quiver serve did not start: ${out} ${err}`)), 120000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        resolve({
          port: Number(/^port: (\d+)$/m.exec(out)[1]),
          certPath: /^certificate: (.*)$/m.exec(out)[1],
          rpcPath: /^path: (.*)$/m.exec(out)[1],
          url: /^quiver serve: listening on (.*)$/m.exec(out)[1],
        });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => { clearTimeout(timer); if (!out.includes('ready\n')) reject(new Error(`quiver serve exited ${code}: ${err}`)); });
  });
}

// quiver's own client, rows as JSON objects.
function quiverQuery(srv, token, sql) {
  const r = spawnSync(args.quiver, ['query', '--server', srv.url, '--ca-cert', srv.certPath, '--format', 'jsonl', '--quiet', sql],
    { env: { ...process.env, QUIVER_TOKEN: token }, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`quiver query failed (${r.status}): ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
}

// Value equality between the Node client's value and quiver's JSON value.
function same(actual, expected) {
  if (actual === null || actual === undefined) return expected === null || expected === undefined;
  if (expected === null || expected === undefined) return false;
  if (typeof actual === 'bigint') return actual === BigInt(expected);
  if (actual instanceof Date) return typeof expected === 'string' && actual.toISOString().slice(0, 10) === expected.slice(0, 10);
  if (typeof actual === 'number') {
    const want = Number(expected);
    // DECIMAL arrives as a JS number (the client converts it): last-bit rounding allowed.
    return want === actual || Math.abs(want - actual) <= Math.abs(want) * 4 * Number.EPSILON;
  }
  return String(actual) === String(expected);
}

const keyOf = (row, key) => key.map((k) => String(row[k])).join('\u0001');
function sortByKey(rows, key) {
  const keyed = rows.map((r) => [key.map((k) => Number(r[k])), r]);
  keyed.sort((a, b) => { for (let i = 0; i < key.length; i++) { if (a[0][i] !== b[0][i]) return a[0][i] - b[0][i]; } return 0; });
  return keyed.map((x) => x[1]);
}

async function main() {
  const token = 'tok-' + Math.random().toString(36).slice(2);
  const srv = await serve(token);
  const client = new DBSQLClient();
  await client.connect({ host: '127.0.0.1', port: srv.port, path: srv.rpcPath, token, customCaCert: fs.readFileSync(srv.certPath) });
  const session = await client.openSession();
  for (const q of QUERIES) {
    const t0 = Date.now();
    try {
      const op = await session.executeStatement(q.sql, {});
      const actual = sortByKey(await op.fetchAll(), q.key);
      await op.close();
      const expected = sortByKey(quiverQuery(srv, token, q.sql), q.key);
      if (expected.length === 0) throw new Error('quiver query returned no rows');
      if (actual.length !== expected.length) throw new Error(`${actual.length} rows from @databricks/sql, ${expected.length} from quiver query`);
      const seen = new Set();
      for (let r = 0; r < expected.length; r++) {
        const k = keyOf(expected[r], q.key);
        if (seen.has(k)) throw new Error(`key ${q.key} not unique: ${k}`);
        seen.add(k);
        const cols = Object.keys(expected[r]);
        if (JSON.stringify(Object.keys(actual[r])) !== JSON.stringify(cols)) throw new Error(`row ${r}: columns ${Object.keys(actual[r])}, expected ${cols}`);
        for (const c of cols) {
          if (!same(actual[r][c], expected[r][c])) {
            const got = actual[r][c] instanceof Date ? actual[r][c].toISOString() : String(actual[r][c]);
            throw new Error(`row ${r} (key ${k}) column '${c}': @databricks/sql ${got}, quiver query ${JSON.stringify(expected[r][c])}`);
          }
        }
      }
      passes++;
      console.log(`ok   ${q.name}: ${actual.length} rows equal (${Date.now() - t0} ms)`);
    } catch (e) {
      failures++;
      console.log(`FAIL ${q.name}: ${e.stack || e}`);
    }
  }
  // The 22 TPC-H queries (the SQL quiver runs for `quiver sql --tpch-query N`):
  // the driver's rows equal quiver query's, in order (or as multisets where
  // ORDER BY leaves ties).
  const canon = (row) => Object.keys(row).map((c) => {
    const v = row[c];
    if (v === null || v === undefined) return 'null';
    if (v instanceof Date) return v.toISOString().slice(0, 10);
    const n = Number(v);
    return typeof v !== 'boolean' && String(v).trim() !== '' && Number.isFinite(n) ? n.toPrecision(9) : String(v).slice(0, 10);
  }).join('\u0001');
  for (let n = 1; n <= 22; n++) {
    const t0 = Date.now();
    const name = `TPC-H Q${n}`;
    try {
      const sql = spawnSync(args.quiver, ['sql', '--tpch-query', String(n), '--print-sql'], { encoding: 'utf8' }).stdout;
      const op = await session.executeStatement(sql, {});
      const actual = await op.fetchAll();
      await op.close();
      const expected = quiverQuery(srv, token, sql);
      if (actual.length !== expected.length) throw new Error(`${actual.length} rows from @databricks/sql, ${expected.length} from quiver query`);
      let inOrder = true;
      for (let r = 0; r < expected.length && inOrder; r++) {
        const cols = Object.keys(expected[r]);
        if (JSON.stringify(Object.keys(actual[r])) !== JSON.stringify(cols)) throw new Error(`row ${r}: columns ${Object.keys(actual[r])}, expected ${cols}`);
        inOrder = cols.every((c) => same(actual[r][c], expected[r][c]));
      }
      if (!inOrder) {
        const a = actual.map(canon).sort(), b = expected.map(canon).sort();
        const bad = a.findIndex((x, i) => x !== b[i]);
        if (bad >= 0) throw new Error(`rows differ: @databricks/sql ${a[bad]} vs quiver query ${b[bad]}`);
      }
      passes++;
      console.log(`ok   ${name}: ${actual.length} rows equal${inOrder ? '' : ' (as multisets)'} (${Date.now() - t0} ms)`);
    } catch (e) {
      failures++;
      console.log(`FAIL ${name}: ${e.stack || e}`);
    }
  }
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
console.log(`databricks tpch interop: ${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
