// Window functions side by side with DuckDB (issue 37's measures):
// row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC)
// and a running sum over lineitem, each folded to one row (max / sum) so
// that neither side spends the time printing. DuckDB runs in process on a
// table loaded before the timing; quiver runs as `quiver sql` over the IPC
// file (its time includes process start and opening the file). Medians of
// --rounds runs at every thread count of --threads; the ratio is
// quiver / DuckDB (below 1: quiver faster). The answers must agree.
// Usage: node bench/window_vs_duckdb.mjs --quiver BIN --lineitem FILE.arrow
//        --csv FILE.csv [--rounds 5] [--threads 1,2] [--memory-limit 64MiB]
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(new URL('./package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
const argv = process.argv;
const arg = (n, d) => { const i = argv.indexOf(n); return i >= 0 && i + 1 < argv.length ? argv[i + 1] : d; };
const quiver = arg('--quiver'), lineitem = arg('--lineitem'), csv = arg('--csv');
const rounds = Number(arg('--rounds', '5'));
const threads = arg('--threads', '1,2').split(',');
const limit = arg('--memory-limit', '');
const queries = {
  row_number: `SELECT max(rn), sum(rn) FROM (SELECT row_number() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS rn FROM lineitem) t`,
  running_sum: `SELECT max(s) FROM (SELECT sum(l_quantity) OVER (PARTITION BY l_orderkey ORDER BY l_linenumber) AS s FROM lineitem) t`,
};
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const th of threads) {
  const inst = await DuckDBInstance.create(':memory:', { threads: th });
  const conn = await inst.connect();
  await conn.run(`CREATE TABLE lineitem AS SELECT * FROM read_csv('${csv}', header = true, columns = {
    'l_orderkey': 'BIGINT', 'l_partkey': 'BIGINT', 'l_suppkey': 'BIGINT', 'l_linenumber': 'INTEGER',
    'l_quantity': 'DECIMAL(15,2)', 'l_extendedprice': 'DECIMAL(15,2)', 'l_discount': 'DECIMAL(15,2)',
    'l_tax': 'DECIMAL(15,2)', 'l_returnflag': 'VARCHAR', 'l_linestatus': 'VARCHAR', 'l_shipdate': 'DATE',
    'l_commitdate': 'DATE', 'l_receiptdate': 'DATE', 'l_shipinstruct': 'VARCHAR', 'l_shipmode': 'VARCHAR',
    'l_comment': 'VARCHAR'})`);
  for (const [name, sql] of Object.entries(queries)) {
    const d = [], q = [];
    let dAnswer = '', qAnswer = '';
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      dAnswer = (await conn.runAndReadAll(sql)).getRows()[0].map(String).join(',');
      d.push((performance.now() - t) / 1000);
      const args = ['sql', '--format', 'csv', '--threads', th, '--table', `lineitem=${lineitem}`];
      if (limit) args.push('--statement-memory-limit', limit);
      args.push(sql);
      t = performance.now();
      const p = spawnSync(quiver, args, { encoding: 'utf8' });
      q.push((performance.now() - t) / 1000);
      if (p.status !== 0) { console.log(`${name}: quiver failed: ${p.stderr}`); process.exit(1); }
      qAnswer = p.stdout.trim().split('\n')[1];
    }
    const agree = qAnswer.split(',').map(Number).join(',') === dAnswer.split(',').map(Number).join(',');
    console.log(`${name} threads=${th}${limit ? ` limit=${limit}` : ''}: quiver ${median(q).toFixed(3)} s, ` +
      `duckdb ${median(d).toFixed(3)} s, ratio ${(median(q) / median(d)).toFixed(2)}` +
      `${agree ? '' : ` ANSWERS DIFFER: quiver ${qAnswer} duckdb ${dAnswer}`}`);
  }
}
