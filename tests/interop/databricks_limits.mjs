#!/usr/bin/env node
// Issue 19 against `quiver serve --tpch 0.01` with its DEFAULT options (only
// port, certificate directory and token given), driven by the real
// Databricks SQL Node.js client (@databricks/sql 2.1.0):
//   - the 3-value-key join (`lineitem a JOIN lineitem b ON a.l_returnflag =
//     b.l_returnflag`, ~1.2 billion rows) runs unfetched: the server stays
//     alive and its RSS bounded (backpressure); CancelOperation and
//     CloseOperation return within 1 s and the statement stops (the
//     server's CPU goes idle within 1 s);
//   - an OR chain just under the default statement text cap (1 MiB) is
//     planned inside the statement's budget: it succeeds, RSS bounded; one
//     over the cap is refused (54000);
//   - the server still answers afterwards.
//
//   node tests/interop/databricks_limits.mjs --quiver build/release/quiver [--keep]
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
  if (npm.error) { console.log('databricks limits: npm is not installed: skipped'); process.exit(77); }
  console.error(`databricks limits: ${e.message}; run scripts/install-interop.sh`);
  process.exit(1);
}

const MiB = 1 << 20;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-databricks-limits-'));
let server;
let failures = 0;
let passes = 0;

function serve(token) {
  return new Promise((resolve, reject) => {
    const child = spawn(args.quiver, ['serve', '--port', '0', '--cert-dir', tmp, '--tpch', '0.01', '--tpch-dir', path.join(tmp, 'tpch')],
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
          pid: child.pid,
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

function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}
function cpuSeconds(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;  // utime + stime, clock ticks of 1/100 s
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function alive() { return server.exitCode === null && server.signalCode === null; }

// Samples the server's RSS every 50 ms while fn runs; returns [fn's value, peak RSS].
async function withPeakRss(pid, fn) {
  let peak = rssBytes(pid);
  const timer = setInterval(() => { try { peak = Math.max(peak, rssBytes(pid)); } catch (e) { /* exited */ } }, 50);
  try {
    const v = await fn();
    return [v, Math.max(peak, rssBytes(pid))];
  } finally {
    clearInterval(timer);
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

const JOIN = 'SELECT a.l_orderkey, b.l_orderkey FROM lineitem a JOIN lineitem b ON a.l_returnflag = b.l_returnflag';

// Runs the join unfetched for a while, then ends it with `end` ('cancel' or
// 'close'); checks RSS, the RPC's time and that the server's CPU goes idle.
async function runAndEnd(session, srv, end, baseline) {
  const [op, peak] = await withPeakRss(srv.pid, async () => {
    const o = await session.executeStatement(JOIN, { runAsync: true, maxRows: 10 });
    await sleep(3000);
    return o;
  });
  if (!alive()) throw new Error('the server died running the join');
  const grew = (peak - baseline) / MiB;
  console.log(`     join unfetched for 3 s: server RSS peak +${grew.toFixed(0)} MiB over its idle level`);
  if (grew > 1024) throw new Error(`RSS grew by ${grew.toFixed(0)} MiB running one unfetched join`);
  const cpuBefore = cpuSeconds(srv.pid);
  const t0 = Date.now();
  if (end === 'cancel') await op.cancel();
  await op.close();
  const rpcMs = Date.now() - t0;
  console.log(`     ${end === 'cancel' ? 'CancelOperation + CloseOperation' : 'CloseOperation'} returned in ${rpcMs} ms`);
  if (rpcMs > 1000) throw new Error(`${end} took ${rpcMs} ms`);
  // The statement stops: from 1 s after the RPC, the server idles.
  await sleep(1000);
  const c0 = cpuSeconds(srv.pid);
  await sleep(1000);
  const idleCpu = cpuSeconds(srv.pid) - c0;
  console.log(`     server CPU in the second after: ${idleCpu.toFixed(2)} s (${(c0 - cpuBefore).toFixed(2)} s during the RPC and the first second)`);
  if (idleCpu > 0.3) throw new Error(`the server still burns CPU after ${end}: ${idleCpu.toFixed(2)} s in 1 s`);
}

async function main() {
  const token = 'tok-' + Math.random().toString(36).slice(2);
  const srv = await serve(token);
  const client = new DBSQLClient();
  await client.connect({ host: '127.0.0.1', port: srv.port, path: srv.rpcPath, token, customCaCert: fs.readFileSync(srv.certPath) });
  const session = await client.openSession();
  const query = async (sql) => {
    const op = await session.executeStatement(sql);
    const rows = await op.fetchAll();
    await op.close();
    return rows;
  };
  await query('SELECT count(*) AS n FROM lineitem');
  await sleep(300);
  const baseline = rssBytes(srv.pid);
  console.log(`     server RSS idle: ${(baseline / MiB).toFixed(0)} MiB`);

  await check('3-value-key join under default options: alive, RSS bounded, CancelOperation stops it within 1 s', async () => {
    await runAndEnd(session, srv, 'cancel', baseline);
  });
  await check('3-value-key join under default options: CloseOperation stops it within 1 s', async () => {
    await runAndEnd(session, srv, 'close', baseline);
  });
  await check('an OR chain just under the statement text cap is planned inside its budget', async () => {
    let sql = 'SELECT count(*) AS n FROM region WHERE r_regionkey = 0';
    for (let i = 1; sql.length + 40 < MiB; i++) sql += ` OR r_regionkey = ${i}`;
    const before = rssBytes(srv.pid);
    const [rows, peak] = await withPeakRss(srv.pid, () => query(sql));
    if (Number(rows[0].n) !== 5) throw new Error(`count ${JSON.stringify(rows)}`);
    const grew = (peak - before) / MiB;
    console.log(`     ${sql.length} bytes of OR chain: server RSS peak +${grew.toFixed(0)} MiB`);
    // The planning estimate (quiver/sql/engine.h) is 256 bytes per byte of text.
    if (grew > 300) throw new Error(`planning took ${grew.toFixed(0)} MiB of RSS`);
    let error;
    try {
      await query(sql + ' OR r_regionkey = 1'.repeat(64));
    } catch (e) {
      error = e;
    }
    if (!error || !/at most 1048576/.test(error.message)) throw new Error(`over the cap: ${error && error.message}`);
  });
  await check('the server still answers', async () => {
    if (!alive()) throw new Error('server exited');
    const rows = await query('SELECT count(*) AS n FROM orders');
    if (Number(rows[0].n) !== 15000) throw new Error(JSON.stringify(rows));
  });
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
console.log(`databricks limits: ${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
