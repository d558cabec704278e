#!/usr/bin/env node
// Raw Thrift calls (the @databricks/sql 2.1.0 driver's own TCLIService code
// and Thrift library) against HAProxy and each of the three servers behind
// it (tests/objstore/run.sh), for what the driver's API cannot show:
//   retry   a FETCH_NEXT without startRowOffset (as the driver sends it)
//           answered by one server, then re-sent with the same bytes (same
//           Thrift seqid) to another, as a balancer does when a reply is
//           lost: the same page again; the next seqid goes on after it, and
//           every row comes once.
//   close   CloseSession through HAProxy: every server then refuses the
//           session's handle (GetInfo, ExecuteStatement) and its
//           operation's handle (GetOperationStatus, FetchResults).
// Prints one JSON line; exit 0 when every check holds, 1 otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../interop/package.json'));
const a = { ports: [] };
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i];
  const v = process.argv[++i];
  if (k === '--balancer') a.balancer = Number(v);
  else if (k === '--server') a.ports.push(Number(v));
  else if (k === '--path') a.path = v;
  else if (k === '--ca') a.ca = v;
  else if (k === '--token') a.token = v;
  else if (k === '--sql') a.sql = v;
  else if (k === '--rows') a.rows = Number(v);
  else { console.error(`unknown argument ${k}`); process.exit(2); }
}
const sqlRequire = createRequire(require.resolve('@databricks/sql'));
const thrift = sqlRequire('thrift');
const Int64 = sqlRequire('node-int64');
const TCLIService = require('@databricks/sql/thrift/TCLIService');
const T = require('@databricks/sql/thrift/TCLIService_types');
const ca = fs.readFileSync(a.ca);

function client(port) {
  const conn = thrift.createHttpConnection('127.0.0.1', port, {
    https: true,
    path: a.path,
    headers: { Authorization: `Bearer ${a.token}` },
    nodeOptions: { ca },
    transport: thrift.TBufferedTransport,
    protocol: thrift.TBinaryProtocol,
  });
  conn.on('error', (e) => console.error(`connection to ${port}: ${e}`));
  return thrift.createHttpClient(TCLIService, conn);
}
// The next call of `c` carries Thrift seqid `seqid`.
function withSeqid(c, seqid) {
  c._seqid = seqid - 1;
  return c;
}

const problems = [];
const check = (ok, what) => { if (!ok) problems.push(what); };
const bal = client(a.balancer);
const servers = a.ports.map(client);

const open = await bal.OpenSession(new T.TOpenSessionReq({ client_protocol: T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V8 }));
const session = open.sessionHandle;
const ex = await bal.ExecuteStatement(new T.TExecuteStatementReq({
  sessionHandle: session, statement: a.sql, runAsync: true, canDownloadResult: true, canDecompressLZ4Result: true,
}));
check(ex.status.statusCode === T.TStatusCode.SUCCESS_STATUS, `ExecuteStatement: ${ex.status.errorMessage}`);
const op = ex.operationHandle;
let state = -1;
for (let i = 0; i < 600 && state !== T.TOperationState.FINISHED_STATE; i++) {
  const st = await bal.GetOperationStatus(new T.TGetOperationStatusReq({ operationHandle: op }));
  state = st.operationState;
  if (state === T.TOperationState.ERROR_STATE) { problems.push(`statement failed: ${st.errorMessage}`); break; }
  if (state !== T.TOperationState.FINISHED_STATE) await new Promise((r) => setTimeout(r, 100));
}

// --- retry ---
async function fetch(c, first) {
  const r = await c.FetchResults(new T.TFetchResultsReq({
    operationHandle: op,
    orientation: first ? T.TFetchOrientation.FETCH_FIRST : T.TFetchOrientation.FETCH_NEXT,
    maxRows: new Int64(100000),
  }));
  check(r.status.statusCode === T.TStatusCode.SUCCESS_STATUS, `FetchResults: ${r.status.errorMessage}`);
  const links = (r.results && r.results.resultLinks) || [];
  return {
    starts: links.map((l) => Number(l.startRowOffset.toString())),
    rows: links.reduce((s, l) => s + Number(l.rowCount.toString()), 0),
    more: r.hasMoreRows,
  };
}
let seqid = 5000;
const p1 = await fetch(withSeqid(servers[0], ++seqid), true);
const lost = ++seqid;
const p2 = await fetch(withSeqid(servers[1], lost), false);  // its reply "lost" ...
const again = await fetch(withSeqid(servers[2], lost), false);  // ... the same bytes to another server
check(p2.starts.length > 0 && p2.starts[0] === p1.rows, `page 2 starts at ${p2.starts[0]}, expected ${p1.rows}`);
check(JSON.stringify(again.starts) === JSON.stringify(p2.starts),
  `the retried FETCH_NEXT got rows ${again.starts[0]}.. instead of page 2's ${p2.starts[0]}..`);
let next = p1.rows + p2.rows;
let more = again.more;
let pages = 2;
for (let i = 0; more && i < 10000; i++, pages++) {
  const p = await fetch(withSeqid(servers[i % servers.length], ++seqid), false);
  if (p.starts.length) check(p.starts[0] === next, `page ${pages + 1} starts at ${p.starts[0]}, expected ${next}`);
  next += p.rows;
  more = p.more;
}
check(next === a.rows, `rows: ${next}, expected ${a.rows}`);

// --- close ---
const info = (c) => c.GetInfo(new T.TGetInfoReq({ sessionHandle: session, infoType: T.TGetInfoType.CLI_SERVER_NAME }));
for (const [i, c] of servers.entries()) {
  const r = await info(c);
  check(r.status.statusCode === T.TStatusCode.SUCCESS_STATUS, `before close: server ${i + 1} GetInfo ${r.status.statusCode}`);
}
const closed = await bal.CloseSession(new T.TCloseSessionReq({ sessionHandle: session }));
check(closed.status.statusCode === T.TStatusCode.SUCCESS_STATUS, `CloseSession: ${closed.status.errorMessage}`);
const refused = [];
for (const [i, c] of servers.entries()) {
  const calls = {
    GetInfo: await info(c),
    ExecuteStatement: await c.ExecuteStatement(new T.TExecuteStatementReq({ sessionHandle: session, statement: 'SELECT 1' })),
    GetOperationStatus: await c.GetOperationStatus(new T.TGetOperationStatusReq({ operationHandle: op })),
    FetchResults: await c.FetchResults(new T.TFetchResultsReq({
      operationHandle: op, orientation: T.TFetchOrientation.FETCH_NEXT, maxRows: new Int64(1000) })),
  };
  for (const [name, r] of Object.entries(calls)) {
    if (r.status.statusCode === T.TStatusCode.INVALID_HANDLE_STATUS) refused.push(`s${i + 1}.${name}`);
    else problems.push(`after CloseSession: server ${i + 1} ${name} answered status ${r.status.statusCode}`);
  }
}
console.log(JSON.stringify({ pages, rows: next, retried_page_start: again.starts[0], refused: refused.length, problems }));
process.exit(problems.length ? 1 : 0);
