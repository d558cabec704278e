#!/usr/bin/env node
// The real @databricks/sql 2.1.0 driver through HAProxy in front of three
// stateless `quiver serve` processes (tests/objstore/run.sh): runs SQL,
// reads it chunk by chunk, SIGKILLs one server after the first chunk (when
// --kill-pid is given), and requires every row exactly once, equal to
// `quiver sql --format jsonl` of the same statement (--expected FILE).
// Prints one JSON line with what it saw; exit 0 on success, 1 on a mismatch.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../interop/package.json'));
const a = { killPid: 0, chunkRows: 5000, noClose: false, cancelAfterMs: 0, killOwner: '' };
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i];
  const v = process.argv[++i];
  if (k === '--port') a.port = Number(v);
  else if (k === '--path') a.path = v;
  else if (k === '--ca') a.ca = v;
  else if (k === '--token') a.token = v;
  else if (k === '--sql') a.sql = v;
  else if (k === '--expected') a.expected = v;
  else if (k === '--kill-pid') a.killPid = Number(v);
  else if (k === '--chunk-rows') a.chunkRows = Number(v);
  else if (k === '--no-close') a.noClose = v === '1';
  else if (k === '--cancel-after-ms') a.cancelAfterMs = Number(v);
  else if (k === '--go') a.go = v;
  else if (k === '--kill-owner') a.killOwner = v;
  else { console.error(`unknown argument ${k}`); process.exit(2); }
}
const { DBSQLClient } = require('@databricks/sql');
if (require('@databricks/sql/package.json').version !== '2.1.0') {
  console.error('@databricks/sql 2.1.0 expected; run scripts/install-interop.sh');
  process.exit(1);
}

// One value read by the driver against quiver's JSON text of it.
function equal(got, want) {
  if (got === null || got === undefined) return want === null || want === undefined;
  if (want === null || want === undefined) return false;
  if (typeof got === 'bigint') return got === BigInt(want);
  if (got instanceof Date) return typeof want === 'string' && got.toISOString().startsWith(want.replace(/Z$/, ''));
  if (typeof got === 'number') {
    const w = Number(want);
    return w === got || Math.abs(w - got) <= Math.abs(w) * 4 * Number.EPSILON;
  }
  return String(got) === String(want);
}

if (a.cancelAfterMs) {
  // CancelOperation through the balancer (most likely to a server that does
  // not run the statement). The driver itself refuses every later call on a
  // cancelled operation (and sends no CloseOperation), so the caller checks
  // the store; this waits for the file --go before closing the session.
  const c = new DBSQLClient();
  await c.connect({ host: '127.0.0.1', port: a.port, path: a.path, token: a.token, customCaCert: fs.readFileSync(a.ca) });
  const s = await c.openSession();
  const op = await s.executeStatement(a.sql, { runAsync: true });
  await new Promise((r) => setTimeout(r, a.cancelAfterMs));
  const st = await op.cancel();
  console.log(`cancelled ${JSON.stringify(st)}`);
  while (!fs.existsSync(a.go)) await new Promise((r) => setTimeout(r, 100));
  await s.close();
  await c.close();
  console.log('session closed');
  process.exit(0);
}
const expected = fs.readFileSync(a.expected, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
const client = new DBSQLClient();
await client.connect({ host: '127.0.0.1', port: a.port, path: a.path, token: a.token, customCaCert: fs.readFileSync(a.ca) });
const session = await client.openSession();
// With --kill-owner, no direct results (maxRows null, a driver option):
// ExecuteStatement then returns the handle at once instead of waiting up to
// the server's fetch wait for the result, so the owner dies with the handle
// already out (an owner dying while ExecuteStatement is in flight is
// HAProxy's to retry: a new statement on another server).
const op = await session.executeStatement(a.sql, a.killOwner ? { runAsync: true, maxRows: null } : { runAsync: true });
const rows = [];
let chunks = 0;
let killed = false;
// Issue 39 (--kill-owner PORT:PID,...): finds the server running the
// statement (its /metrics says running > 0) and SIGKILLs it before the
// statement is FINISHED; the driver then polls the same handle on the
// servers left and must still read every row once.
let ownerKilled = false;
let killedPort = 0;
const probeErrors = [];
let probes = 0;
const t0 = Date.now();
function running(port) {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/metrics', ca: fs.readFileSync(a.ca),
      headers: { Authorization: `Bearer ${a.token}` } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => {
        const m = body.match(/^service .* running=(\d+)/m);
        resolve(m ? Number(m[1]) : 0);
      });
    });
    req.on('error', (e) => {
      probeErrors.push(`${port}: ${e.message}`);
      resolve(0);
    });
  });
}
if (a.killOwner) {
  const servers = a.killOwner.split(',').map((x) => x.split(':').map(Number));
  for (let i = 0; i < 200 && !ownerKilled; i++) {
    for (const [port, pid] of servers) {
      probes++;
      if (await running(port) > 0) {
        process.kill(pid, 'SIGKILL');
        ownerKilled = true;
        killedPort = port;
        break;
      }
    }
    if (!ownerKilled) await new Promise((r) => setTimeout(r, 25));
  }
}
const killMs = Date.now() - t0;
let firstRowMs = 0;
while (await op.hasMoreRows()) {
  const part = await op.fetchChunk({ maxRows: a.chunkRows });
  if (!firstRowMs && part.length) firstRowMs = Date.now() - t0;
  rows.push(...part);
  chunks++;
  if (a.noClose) {
    // Leaves the operation and session open (the expiry check).
    console.log(JSON.stringify({ rows: rows.length, left_open: true }));
    process.exit(0);
  }
  if (a.killPid && !killed && rows.length > 0) {
    process.kill(a.killPid, 'SIGKILL');
    killed = true;
  }
}
await op.close();
await session.close();
await client.close();

let bad = '';
if (rows.length !== expected.length) bad = `rows: got ${rows.length}, expected ${expected.length}`;
for (let i = 0; !bad && i < rows.length; i++) {
  for (const [k, v] of Object.entries(expected[i])) {
    if (!equal(rows[i][k], v)) {
      bad = `row ${i} column ${k}: got ${rows[i][k]}, expected ${JSON.stringify(v)}`;
      break;
    }
  }
}
const extra = a.killOwner ? { owner_killed: ownerKilled, killed_port: killedPort, kill_ms: killMs, first_row_ms: firstRowMs, probes, probe_errors: probeErrors.slice(0, 3) } : {};
console.log(JSON.stringify({ rows: rows.length, fetch_calls: chunks, killed, ...extra, ok: !bad, error: bad || undefined }));
process.exit(bad ? 1 : 0);
