// Scan of a Parquet lineitem file (issue 36 "Measure"): SELECT of four sums
// (l_quantity, l_extendedprice, l_discount, l_tax), DuckDB and quiver side
// by side in one run, medians of 3, at 1 and 2 threads; quiver as a process
// (`quiver sql --table l=FILE`, start-up and footer included), DuckDB
// in-process. Prints both answers (they must be equal) and quiver's
// statement pool peak.
// Usage: node bench/parquet_scan.mjs QUIVER_BINARY LINEITEM_PARQUET
// (a file: DuckDB's COPY lineitem TO 'lineitem.parquet' (FORMAT parquet,
// COMPRESSION snappy) over `quiver gen tpch --scale 1` read as CSV, see
// tests/tpch/duckdb_compare.mjs --write-parquet)
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';

const [quiver, file] = process.argv.slice(2);
const require = createRequire(new URL('./package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
const sql = (t) => `SELECT sum(l_quantity), sum(l_extendedprice), sum(l_discount), sum(l_tax) FROM ${t}`;
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const threads of [1, 2]) {
  const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await db.connect();
  const duck = [], mine = [];
  let duckAnswer = '', myAnswer = '', peak = '';
  for (let i = 0; i < 3; i++) {
    let t0 = performance.now();
    const r = await conn.runAndReadAll(sql(`'${file.replaceAll("'", "''")}'`));
    duck.push(performance.now() - t0);
    duckAnswer = r.getRows()[0].map(String).join(',');
    t0 = performance.now();
    const q = spawnSync(quiver, ['sql', '--table', `l=${file}`, '--threads', String(threads), '--format', 'csv', sql('l')],
      { encoding: 'utf8' });
    mine.push(performance.now() - t0);
    if (q.status !== 0) throw new Error(`quiver failed: ${q.stderr}`);
    myAnswer = q.stdout.trim().split('\n').slice(-1)[0];
    peak = (q.stderr.match(/statement pool peak [^ ]+ [^ (]+/) || [''])[0];
  }
  console.log(`threads=${threads}: duckdb ${median(duck).toFixed(0)} ms, quiver ${median(mine).toFixed(0)} ms, ` +
    `duckdb/quiver ${(median(duck) / median(mine)).toFixed(2)}; quiver ${peak}; ` +
    `answers ${duckAnswer === myAnswer ? 'equal' : `DIFFER: duckdb ${duckAnswer}, quiver ${myAnswer}`}`);
}
