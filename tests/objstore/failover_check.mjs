#!/usr/bin/env node
// Issue 39, section 3f of tests/objstore/run.sh (failover_cases.sh): the
// real @databricks/sql 2.1.0 driver reads a large result through HAProxy
// with CloudFetch while failover_cases.sh SIGKILLs the server that runs
// the statement. This side only reads and reports; the killing is the
// script's, which it coordinates through files in --signal-dir:
//   executed   written (epoch ms) once ExecuteStatement has returned the
//              handle (no direct results: maxRows null, so the handle
//              comes back at once, before the statement is FINISHED);
//   fetching   written once the first --pause-after-rows rows are read
//              (when given); the reader then waits for
//   killed     (written by the script) before it reads on: a kill after
//              FINISHED, mid-fetch, at a known point.
// It never keeps rows: it folds each one into aggregates that any order of
// reading gives alike (failover_check.py computes the same ones):
//   rows, distinct (count of distinct values of the first column, the key),
//   and per column: numbers as the sum of round(100 x value) (exact for
//   integers and 2-digit decimals), dates as the sum of days since
//   1970-01-01, strings as the sum of their lengths.
// Prints one JSON line: the aggregates, the epoch ms at which ExecuteStatement
// returned, the first row came and the reading ended. Exit 0 when it read to
// the end, 1 on a driver error (the error in the line).
//
// --race: no driver API but raw Thrift (the driver's own TCLIService code,
// as stateless_check.mjs): ExecuteStatement on --owner PORT:PID, SIGKILL of
// that server at once, then, once its heartbeat is surely stale (the kill
// time plus --lease-ms plus 300 ms, without asking any server meanwhile),
// --per-server GetOperationStatus calls to EACH of the --server ports sent
// at the same instant (one connection each); then polls until FINISHED and
// counts the rows of every link to the end. The caller checks that of the
// servers exactly one ran it again (their /metrics failover reruns).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../interop/package.json'));
const a = { fetchRows: 100000, pauseAfterRows: 0, race: false, servers: [], perServer: 3, leaseMs: 5000, signalDir: '' };
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i];
  if (k === '--race') { a.race = true; continue; }
  const v = process.argv[++i];
  if (k === '--port') a.port = Number(v);
  else if (k === '--path') a.path = v;
  else if (k === '--ca') a.ca = v;
  else if (k === '--token') a.token = v;
  else if (k === '--sql') a.sql = v;
  else if (k === '--signal-dir') a.signalDir = v;
  else if (k === '--fetch-rows') a.fetchRows = Number(v);
  else if (k === '--pause-after-rows') a.pauseAfterRows = Number(v);
  else if (k === '--owner') a.owner = v.split(':').map(Number);
  else if (k === '--server') a.servers.push(Number(v));
  else if (k === '--per-server') a.perServer = Number(v);
  else if (k === '--lease-ms') a.leaseMs = Number(v);
  else { console.error(`unknown argument ${k}`); process.exit(2); }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const signal = (name) => fs.writeFileSync(path.join(a.signalDir, name), `${Date.now()}\n`);
const ca = fs.readFileSync(a.ca);
if (require('@databricks/sql/package.json').version !== '2.1.0') {
  console.error('@databricks/sql 2.1.0 expected; run scripts/install-interop.sh');
  process.exit(1);
}

if (a.race) await race();
else await read();

async function read() {
  const { DBSQLClient } = require('@databricks/sql');
  const out = { rows: 0, distinct: 0, sums: {}, exec_ms: 0, first_row_ms: 0, end_ms: 0, fetch_calls: 0 };
  const keys = new Set();
  let names = null;
  const sums = [];
  let client;
  try {
    client = new DBSQLClient();
    await client.connect({ host: '127.0.0.1', port: a.port, path: a.path, token: a.token, customCaCert: ca });
    const session = await client.openSession();
    const op = await session.executeStatement(a.sql, { runAsync: true, maxRows: null });
    out.exec_ms = Date.now();
    out.op = String(op.id).replaceAll('-', '');
    if (a.signalDir) signal('executed');
    let paused = false;
    while (await op.hasMoreRows()) {
      const part = await op.fetchChunk({ maxRows: a.fetchRows });
      out.fetch_calls++;
      if (!part.length) continue;
      if (!out.first_row_ms) out.first_row_ms = Date.now();
      if (!names) {
        names = Object.keys(part[0]);
        for (let c = 0; c < names.length; c++) sums.push(0n);
      }
      for (const row of part) {
        const k = row[names[0]];
        keys.add(typeof k === 'bigint' ? k : Number(k));
        for (let c = 0; c < names.length; c++) sums[c] += fold(row[names[c]]);
      }
      out.rows += part.length;
      if (a.pauseAfterRows && !paused && out.rows >= a.pauseAfterRows) {
        paused = true;
        signal('fetching');
        const killed = path.join(a.signalDir, 'killed');
        for (let i = 0; i < 600 && !fs.existsSync(killed); i++) await sleep(50);
        out.resumed_ms = Date.now();
      }
    }
    out.end_ms = Date.now();
    await op.close();
    await session.close();
    await client.close();
  } catch (e) {
    out.error = String(e && e.message ? e.message : e);
  }
  out.distinct = keys.size;
  if (names) for (let c = 0; c < names.length; c++) out.sums[names[c]] = sums[c].toString();
  console.log(JSON.stringify(out));
  process.exit(out.error ? 1 : 0);
}

// One value's share of its column's sum (see the top of this file).
function fold(v) {
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'bigint') return v * 100n;
  if (typeof v === 'number') return BigInt(Math.round(v * 100));
  if (v instanceof Date) return BigInt(Math.round(v.getTime() / 86400000));
  return BigInt(String(v).length);
}

async function race() {
  const sqlRequire = createRequire(require.resolve('@databricks/sql'));
  const thrift = sqlRequire('thrift');
  const Int64 = sqlRequire('node-int64');
  const TCLIService = require('@databricks/sql/thrift/TCLIService');
  const T = require('@databricks/sql/thrift/TCLIService_types');
  const client = (port) => {
    const conn = thrift.createHttpConnection('127.0.0.1', port, {
      https: true, path: a.path, headers: { Authorization: `Bearer ${a.token}` }, nodeOptions: { ca },
      transport: thrift.TBufferedTransport, protocol: thrift.TBinaryProtocol,
    });
    conn.on('error', () => {});
    return thrift.createHttpClient(TCLIService, conn);
  };
  const problems = [];
  const [ownerPort, ownerPid] = a.owner;
  const owner = client(ownerPort);
  const open = await owner.OpenSession(new T.TOpenSessionReq({ client_protocol: T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V8 }));
  const ex = await owner.ExecuteStatement(new T.TExecuteStatementReq({
    sessionHandle: open.sessionHandle, statement: a.sql, runAsync: true, canDownloadResult: true, canDecompressLZ4Result: true,
  }));
  if (ex.status.statusCode !== T.TStatusCode.SUCCESS_STATUS) problems.push(`ExecuteStatement: ${ex.status.errorMessage}`);
  const op = ex.operationHandle;
  process.kill(ownerPid, 'SIGKILL');
  const killMs = Date.now();
  await sleep(a.leaseMs + 300);
  // Every call on its own connection, all sent before any answer is read.
  const racers = [];
  for (const port of a.servers) for (let i = 0; i < a.perServer; i++) racers.push({ port, c: client(port) });
  const sentMs = Date.now();
  const answers = await Promise.all(racers.map(({ c }) => c.GetOperationStatus(new T.TGetOperationStatusReq({ operationHandle: op }))));
  const answeredMs = Date.now();
  const states = answers.map((r) => r.operationState);
  for (const [i, r] of answers.entries()) {
    if (r.status.statusCode !== T.TStatusCode.SUCCESS_STATUS || r.operationState === T.TOperationState.ERROR_STATE) {
      problems.push(`racer ${i} (port ${racers[i].port}): status ${r.status.statusCode} state ${r.operationState} ${r.errorMessage || r.status.errorMessage || ''}`);
    }
  }
  const any = client(a.servers[0]);
  let state = -1;
  for (let i = 0; i < 1200 && state !== T.TOperationState.FINISHED_STATE; i++) {
    const st = await any.GetOperationStatus(new T.TGetOperationStatusReq({ operationHandle: op }));
    state = st.operationState;
    if (state === T.TOperationState.ERROR_STATE) { problems.push(`statement failed: ${st.errorMessage}`); break; }
    if (state !== T.TOperationState.FINISHED_STATE) await sleep(100);
  }
  const finishedMs = Date.now();
  let rows = 0;
  let more = state === T.TOperationState.FINISHED_STATE;
  // One seqid sequence over the servers, as a driver's one client through a
  // balancer sends: a fresh client per call repeats its first seqid, which
  // the servers take for a retried FETCH_NEXT and answer with the same page.
  const fetchers = a.servers.map(client);
  let seqid = 1000;
  for (let i = 0; more && i < 100000; i++) {
    const f = fetchers[i % fetchers.length];
    f._seqid = seqid++;
    const r = await f.FetchResults(new T.TFetchResultsReq({
      operationHandle: op, orientation: i === 0 ? T.TFetchOrientation.FETCH_FIRST : T.TFetchOrientation.FETCH_NEXT,
      maxRows: new Int64(1000000),
    }));
    if (r.status.statusCode !== T.TStatusCode.SUCCESS_STATUS) { problems.push(`FetchResults: ${r.status.errorMessage}`); break; }
    const links = (r.results && r.results.resultLinks) || [];
    for (const l of links) rows += Number(l.rowCount.toString());
    more = r.hasMoreRows;
  }
  await any.CloseOperation(new T.TCloseOperationReq({ operationHandle: op }));
  await any.CloseSession(new T.TCloseSessionReq({ sessionHandle: open.sessionHandle }));
  console.log(JSON.stringify({
    op: Buffer.from(op.operationId.guid).toString('hex'), racers: racers.length, states, rows,
    race_sent_after_kill_ms: sentMs - killMs, race_answered_ms: answeredMs - sentMs, finished_after_kill_ms: finishedMs - killMs,
    problems,
  }));
  process.exit(problems.length ? 1 : 0);
}
