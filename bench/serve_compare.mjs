#!/usr/bin/env node
// `quiver serve` measured from outside, so that two builds (e.g. before and
// after the HTTP layer change of issue 19) compare side by side with the
// same client (the real @databricks/sql Node driver, from tests/interop):
//   - small-query latency: the 5-row query (SELECT * FROM region), median
//     and p90 of N runs on one session (execute + fetch + close);
//   - idle connections: C TLS connections opened and held (no request), the
//     server's RSS before/after, and the 5-row query's median while they
//     are held;
//   - RSS after a burst: 12 concurrent `SELECT * FROM lineitem` fetched by
//     the driver, RSS 2 s after they all ended vs after the first one.
// One line of JSON per run on stdout.
//
//   node bench/serve_compare.mjs --quiver BIN [--label L] [--allocator A] [--runs 30] [--idle 256] [--scale 0.01]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../tests/interop/package.json'));
const { DBSQLClient } = require('@databricks/sql');
const args = { quiver: '', label: '', allocator: '', runs: 30, idle: 256, scale: '0.01' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--quiver') args.quiver = process.argv[++i];
  else if (a === '--label') args.label = process.argv[++i];
  else if (a === '--allocator') args.allocator = process.argv[++i];
  else if (a === '--runs') args.runs = Number(process.argv[++i]);
  else if (a === '--idle') args.idle = Number(process.argv[++i]);
  else if (a === '--scale') args.scale = process.argv[++i];
  else { console.error(`unknown argument ${a}`); process.exit(2); }
}
const MiB = 1 << 20;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-serve-compare-'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rss = (pid) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const p90 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length * 0.9)]; };

const token = 'tok-' + Math.random().toString(36).slice(2);
const pre = args.allocator ? ['--allocator', args.allocator] : [];
const child = spawn(args.quiver, [...pre, 'serve', '--port', '0', '--cert-dir', tmp, '--tpch', args.scale, '--tpch-dir', path.join(tmp, 'tpch')],
  { env: { ...process.env, QUIVER_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
const srv = await new Promise((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    if (out.includes('ready\n')) {
      resolve({ port: Number(/^port: (\d+)$/m.exec(out)[1]), cert: /^certificate: (.*)$/m.exec(out)[1], rpcPath: /^path: (.*)$/m.exec(out)[1] });
    }
  });
  child.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
});
const result = { label: args.label, allocator: args.allocator || 'default' };
let phase = 'connect';
try {
  const client = new DBSQLClient({ logger: { log: () => {} } });
  await client.connect({ host: '127.0.0.1', port: srv.port, path: srv.rpcPath, token, customCaCert: fs.readFileSync(srv.cert) });
  const session = await client.openSession();
  const run = async (sql) => { const op = await session.executeStatement(sql); const rows = await op.fetchAll(); await op.close(); return rows; };
  const latency = async (n) => {
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const rows = await run('SELECT * FROM region');
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (rows.length !== 5) throw new Error('region rows');
    }
    return ms;
  };
  phase = 'latency';
  await latency(3);  // warm up
  const lat = await latency(args.runs);
  result.small_query_ms_median = +median(lat).toFixed(1);
  result.small_query_ms_p90 = +p90(lat).toFixed(1);
  phase = 'idle';
  // Idle TLS connections, held.
  await sleep(300);
  const before = rss(child.pid);
  const sockets = [];
  await Promise.all(Array.from({ length: args.idle }, () => new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port: srv.port, ca: fs.readFileSync(srv.cert), servername: 'localhost', rejectUnauthorized: false }, () => resolve());
    s.on('error', () => resolve());
    sockets.push(s);
  })));
  await sleep(500);
  result.idle_connections = sockets.filter((s) => !s.destroyed).length;
  result.idle_rss_increase_mib = +((rss(child.pid) - before) / MiB).toFixed(1);
  const held = await latency(Math.max(5, Math.floor(args.runs / 3)));
  result.small_query_ms_median_with_idle = +median(held).toFixed(1);
  for (const s of sockets) s.destroy();
  await sleep(500);
  phase = 'burst';
  // RSS after a burst of 12 large statements.
  await run('SELECT * FROM lineitem');
  await sleep(2000);
  const afterFirst = rss(child.pid);
  await Promise.all(Array.from({ length: 12 }, () => run('SELECT * FROM lineitem')));
  await sleep(2000);
  result.rss_after_first_mib = +(afterFirst / MiB).toFixed(1);
  result.rss_after_burst_mib = +(rss(child.pid) / MiB).toFixed(1);
  await session.close();
  await client.close();
} catch (e) {
  result.error = `${phase}: ${e.message}`;
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(JSON.stringify(result));
