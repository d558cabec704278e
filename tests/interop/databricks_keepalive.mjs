#!/usr/bin/env node
// Issue 35 #10: the real Databricks SQL Node.js client (@databricks/sql
// 2.1.0) against `quiver serve` with its default options, pausing its event
// loop synchronously between fetches (as the driver does itself while it
// converts a large batch) for longer than the header deadline of a new
// connection (--header-timeout-s, 10 s). The driver reuses its pooled
// keep-alive socket for the next RPC without noticing that the server
// closed it meanwhile ("socket hang up"), so the server must keep an idle
// keep-alive connection open longer (--keep-alive-timeout-s, 120 s).
//
//   node tests/interop/databricks_keepalive.mjs --quiver build/release/quiver [--pause-s 12]
//
// Exit status: 0 passed, 1 a failure (or node_modules missing), 77 when npm
// is not installed (CTest SKIP_RETURN_CODE).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const args = { quiver: path.join(HERE, '../../build/release/quiver'), pauseS: 12, extra: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--quiver') args.quiver = process.argv[++i];
  else if (a === '--pause-s') args.pauseS = Number(process.argv[++i]);
  else if (a === '--serve-arg') args.extra.push(process.argv[++i]);
  else { console.error(`unknown argument ${a}`); process.exit(1); }
}

let DBSQLClient;
try {
  ({ DBSQLClient } = require('@databricks/sql'));
  const version = require('@databricks/sql/package.json').version;
  if (version !== '2.1.0') throw new Error(`@databricks/sql ${version} installed, 2.1.0 expected`);
} catch (e) {
  const npm = spawnSync('npm', ['--version']);
  if (npm.error) { console.log('databricks keep-alive: npm is not installed: skipped'); process.exit(77); }
  console.error(`databricks keep-alive: ${e.message}; run scripts/install-interop.sh`);
  process.exit(1);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-keepalive-'));
let server;

function quiver(...a) {
  const r = spawnSync(args.quiver, a, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`quiver ${a.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

// Starts `quiver serve` (default options apart from the table); resolves once it printed "ready".
function serve(extra, token) {
  return new Promise((resolve, reject) => {
    const child = spawn(args.quiver, ['serve', '--port', '0', '--cert-dir', tmp, ...extra], {
      env: { ...process.env, QUIVER_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`quiver serve did not start: ${out} ${err}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) {
        clearTimeout(timer);
        resolve({
          child,
          port: Number(/^port: (\d+)$/m.exec(out)[1]),
          certPath: /^certificate: (.*)$/m.exec(out)[1],
          rpcPath: /^path: (.*)$/m.exec(out)[1],
          stderr: () => err,
        });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => { clearTimeout(timer); if (!out.includes('ready\n')) reject(new Error(`quiver serve exited ${code}: ${err}`)); });
  });
}

// Blocks the event loop (no timers, no socket events) for `ms`, as a
// synchronous conversion of a large batch does.
function blockEventLoop(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

async function main() {
  const rows = 120000;
  const lineitem = path.join(tmp, 'lineitem.arrows');
  quiver('gen', 'lineitem', '--rows', String(rows), '-o', lineitem);
  const token = 'tok-' + Math.random().toString(36).slice(2);
  // Default options but small chunks and pages (256 KiB, 2 links a page),
  // so that a modest result takes several FetchResults; the connection
  // deadlines are the defaults.
  server = await serve(['--table', `lineitem=${lineitem}`, '--chunk-bytes', '262144', '--max-links-per-fetch', '2',
    ...args.extra], token);
  const client = new DBSQLClient();
  await client.connect({
    host: '127.0.0.1', port: server.port, path: server.rpcPath, token,
    customCaCert: fs.readFileSync(server.certPath),
  });
  const session = await client.openSession();
  const [{ n, keys }] = await (async () => {
    const op = await session.executeStatement('SELECT count(*) AS n, sum(l_orderkey) AS keys FROM lineitem');
    const r = await op.fetchAll();
    await op.close();
    return r;
  })();
  if (Number(n) !== rows) throw new Error(`count(*) = ${n}, expected ${rows}`);
  // Two results read page by page: CloudFetch links (LZ4 chunks) and
  // inline Arrow batches; one pause, before the first FetchResults after
  // their first pages.
  const modes = [['CloudFetch', { useCloudFetch: true }], ['inline', { useCloudFetch: false }]];
  const reads = [];
  for (const [name, options] of modes) {
    const op = await session.executeStatement('SELECT l_orderkey, l_partkey FROM lineitem', { ...options, maxRows: 10000 });
    const first = await op.fetchChunk({ maxRows: 10000 });
    reads.push({ name, op, got: first.length, sum: first.reduce((s, r) => s + Number(r.l_orderkey), 0) });
  }
  // The pause happens where the driver's own conversion of a batch puts
  // it: just before its next FetchResults goes out, so that no socket event
  // is processed in between (the driver then takes its pooled socket at
  // once; FetchResults is not among the calls it retries).
  const { default: ThriftHttpConnection } = require('@databricks/sql/dist/connection/connections/ThriftHttpConnection');
  const write = ThriftHttpConnection.prototype.write;
  let paused = 0;
  ThriftHttpConnection.prototype.write = function (data, ...rest) {
    if (paused === 0 && Buffer.from(data).includes('FetchResults')) {
      paused++;
      const t0 = Date.now();
      blockEventLoop(args.pauseS * 1000);
      console.log(`paused the event loop ${((Date.now() - t0) / 1000).toFixed(1)} s before an RPC`);
    }
    return write.call(this, data, ...rest);
  };
  for (const read of reads) {
    const t1 = Date.now();
    do {
      const chunk = await read.op.fetchChunk({ maxRows: 10000 });
      read.got += chunk.length;
      for (const r of chunk) read.sum += Number(r.l_orderkey);
    } while (await read.op.hasMoreRows());
    await read.op.close();
    if (read.got !== rows || read.sum !== Number(keys)) {
      throw new Error(`${read.name}: ${read.got} rows, sum ${read.sum}; expected ${rows}, ${keys}`);
    }
    console.log(`ok   ${read.name}: ${read.got} rows after the pause (${Date.now() - t1} ms)`);
  }
  if (paused !== 1) throw new Error(`paused ${paused} times, expected once`);
  await session.close();
  await client.close();
}

const t = Date.now();
main().then(
  () => { console.log(`passed (${((Date.now() - t) / 1000).toFixed(1)} s)`); },
  (e) => { console.log(`FAIL ${e.stack || e}`); process.exitCode = 1; },
).finally(() => {
  if (server) server.child.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
});
