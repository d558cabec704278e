#!/usr/bin/env node
// The real Databricks SQL Node.js client (@databricks/sql 2.1.0, installed by
// scripts/install-interop.sh into tests/interop/node_modules): connect to
// `quiver serve`, run one statement, fetchAll, and print one JSON line:
//   {"rows", "seconds", "peak_rss_increase", "rss_baseline", "max_rss", "version"}
// peak_rss_increase = process.resourceUsage().maxRSS (the process's peak) -
// the resident bytes just before executing (after connecting). seconds covers
// executeStatement + fetchAll. Used by `quiver bench fetch`.
//
//   QUIVER_TOKEN=... node bench/databricks_fetchall.mjs --port P --path /sql/... --ca-cert cert.pem --sql "SELECT ..."
//
// Exit status: 0 done, 1 an error, 77 when @databricks/sql is not installed.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../tests/interop/package.json'));
const args = { host: '127.0.0.1' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const key = a.replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
  if (['port', 'path', 'caCert', 'sql', 'host'].includes(key)) args[key] = process.argv[++i];
  else { console.error(`unknown argument ${a}`); process.exit(1); }
}

let DBSQLClient, version;
try {
  ({ DBSQLClient } = require('@databricks/sql'));
  version = require('@databricks/sql/package.json').version;
} catch (e) {
  console.error(`databricks_fetchall: ${e.message}; run scripts/install-interop.sh`);
  process.exit(77);
}

try {
  const client = new DBSQLClient();
  await client.connect({
    host: args.host,
    port: Number(args.port),
    path: args.path,
    token: process.env.QUIVER_TOKEN,
    customCaCert: fs.readFileSync(args.caCert),
  });
  const session = await client.openSession();
  if (global.gc) global.gc();
  const rssBaseline = process.memoryUsage().rss;
  const t0 = process.hrtime.bigint();
  const op = await session.executeStatement(args.sql);
  const rows = await op.fetchAll();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const maxRss = process.resourceUsage().maxRSS * 1024;  // KiB -> bytes
  const n = rows.length;
  await op.close();
  await session.close();
  await client.close();
  console.log(JSON.stringify({ rows: n, seconds, peak_rss_increase: maxRss - rssBaseline, rss_baseline: rssBaseline,
    max_rss: maxRss, version }));
} catch (e) {
  console.error(`databricks_fetchall: ${e.stack || e}`);
  process.exit(1);
}
