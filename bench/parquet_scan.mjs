// Scans of a Parquet lineitem file (issue 36 "Measure"), DuckDB and quiver
// side by side in one run, medians of --runs (default 3), at 1 and 2
// threads:
//   full      SELECT of four sums (l_quantity, l_extendedprice, l_discount,
//             l_tax) over every row, for each file given (snappy, zstd);
//   filtered  count(*) and sum(l_extendedprice) of one month of l_shipdate
//             over a copy of lineitem sorted by l_shipdate (the row groups
//             outside the month are pruned by their statistics; quiver's
//             stderr says how many it read and pruned).
// quiver runs as a process (`quiver sql --table l=FILE`), DuckDB in-process,
// so quiver's time holds its process start-up and footer read: the run
// also times `SELECT count(*) FROM l` (start-up plus the footer, no column
// chunk read) and prints the ratio both ways: duckdb/quiver over the whole
// process, and duckdb/(quiver - start-up); and quiver's own in-process time
// of the statement (`quiver sql --timing`: from opening the table, footer
// read included, to the last row out), the measure comparable to DuckDB's
// in-process query; and the same warm (`--repeat`: the statement run again
// in one process, the runs after the first: memory touched once, as
// DuckDB's is after its first query). Wall times and CPU times
// (user + system of every thread: quiver's from bash's time, DuckDB's
// from process.cpuUsage around its query), medians each; on a loaded
// machine the wall times measure the load, the CPU times the work. Prints
// both answers (they must be equal) and quiver's statement pool peak.
//   page index  the filtered scan over lineitem written by quiver in ONE row
//             group sorted by l_shipdate (a page index on every column
//             chunk): quiver with its pages pruned, quiver with
//             --no-page-index (row-group statistics only: nothing pruned),
//             and DuckDB over the same file; quiver's stderr says the pages
//             read and pruned.
// Usage:
//   node bench/parquet_scan.mjs --prepare-one-group DIR QUIVER_BINARY
//     writes DIR/lineitem_one_group_by_shipdate.parquet (quiver gen tpch
//     --scale 1, then quiver sql -o ... ORDER BY l_shipdate, one row group).
//   node bench/parquet_scan.mjs --prepare DIR QUIVER_BINARY
//     writes DIR/lineitem_{snappy,zstd,by_shipdate}.parquet with DuckDB's
//     COPY ... (FORMAT parquet, COMPRESSION snappy|zstd) (default row
//     groups, 122,880 rows) from `quiver gen tpch --scale 1` read as CSV
//     (DECIMAL(15,2) money columns, as tests/tpch/duckdb_compare.mjs).
//   node bench/parquet_scan.mjs QUIVER_BINARY DIR [--runs N] [--only page-index]
//     the scans over those files (those present; --only page-index: the
//     page-index cases only).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(new URL('./package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
const quote = (s) => s.replaceAll("'", "''");
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];

if (process.argv[2] === '--prepare') {
  const [dir, quiver] = process.argv.slice(3);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, 'tpch1');
  const gen = spawnSync(quiver, ['gen', 'tpch', '--scale', '1', '-o', tmp], { encoding: 'utf8' });
  if (gen.status !== 0) throw new Error(`quiver gen failed: ${gen.stderr}`);
  const csv = join(dir, 'lineitem.csv');
  const cat = spawnSync('sh', ['-c', `"$0" cat --format csv "$1" > "$2"`, quiver, join(tmp, 'lineitem.arrow'), csv],
    { encoding: 'utf8' });
  if (cat.status !== 0) throw new Error(`quiver cat failed: ${cat.stderr}`);
  const D = 'DECIMAL(15,2)';
  const cols = { l_orderkey: 'BIGINT', l_partkey: 'BIGINT', l_suppkey: 'BIGINT', l_linenumber: 'INTEGER',
    l_quantity: D, l_extendedprice: D, l_discount: D, l_tax: D, l_returnflag: 'VARCHAR', l_linestatus: 'VARCHAR',
    l_shipdate: 'DATE', l_commitdate: 'DATE', l_receiptdate: 'DATE', l_shipinstruct: 'VARCHAR',
    l_shipmode: 'VARCHAR', l_comment: 'VARCHAR' };
  const spec = '{' + Object.entries(cols).map(([c, t]) => `'${c}': '${t}'`).join(', ') + '}';
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await db.connect();
  await conn.run(`CREATE TABLE lineitem AS SELECT * FROM read_csv('${quote(csv)}', header = true, delim = ',',
                  quote = '"', escape = '"', columns = ${spec})`);
  for (const codec of ['snappy', 'zstd']) {
    await conn.run(`COPY lineitem TO '${quote(join(dir, `lineitem_${codec}.parquet`))}' (FORMAT parquet, COMPRESSION ${codec})`);
  }
  await conn.run(`COPY (SELECT * FROM lineitem ORDER BY l_shipdate) TO '${quote(join(dir, 'lineitem_by_shipdate.parquet'))}'
                  (FORMAT parquet, COMPRESSION snappy)`);
  rmSync(tmp, { recursive: true, force: true });
  rmSync(csv, { force: true });
  process.exit(0);
}

if (process.argv[2] === '--prepare-one-group') {
  const [dir, quiver] = process.argv.slice(3);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, 'tpch1-arrow');
  const gen = spawnSync(quiver, ['gen', 'tpch', '--scale', '1', '-o', tmp], { encoding: 'utf8' });
  if (gen.status !== 0) throw new Error(`quiver gen failed: ${gen.stderr}`);
  const out = join(dir, 'lineitem_one_group_by_shipdate.parquet');
  const q = spawnSync(quiver, ['sql', '--table', `l=${join(tmp, 'lineitem.arrow')}`, '-o', out,
    '--row-group-rows', '100000000', '--row-group-bytes', '1099511627776',
    'SELECT * FROM l ORDER BY l_shipdate'], { encoding: 'utf8' });
  if (q.status !== 0) throw new Error(`quiver sql -o failed: ${q.stderr}`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}

const [quiver, dir] = process.argv.slice(2);
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : '';
const runs = process.argv.includes('--runs') ? Number(process.argv[process.argv.indexOf('--runs') + 1]) : 3;
const full = (t) => `SELECT sum(l_quantity), sum(l_extendedprice), sum(l_discount), sum(l_tax) FROM ${t}`;
const filtered = (t) => `SELECT count(*), sum(l_extendedprice) FROM ${t} ` +
  `WHERE l_shipdate >= DATE '1995-03-01' AND l_shipdate < DATE '1995-04-01'`;
const oneGroup = 'lineitem_one_group_by_shipdate.parquet';
const cases = [
  ['full snappy', 'lineitem_snappy.parquet', full, []],
  ['full zstd', 'lineitem_zstd.parquet', full, []],
  ['filtered (by shipdate)', 'lineitem_by_shipdate.parquet', filtered, []],
  ['page index: filtered, one row group (pages pruned)', oneGroup, filtered, [], 'page-index'],
  ['page index: filtered, one row group (--no-page-index)', oneGroup, filtered, ['--no-page-index'], 'page-index'],
].filter((c) => (!only || c[4] === only) && existsSync(join(dir, c[1])));

// quiver under bash's `time`: its wall time here, its CPU time (user +
// system, all threads, to the millisecond; /usr/bin/time prints 10 ms
// steps) from time's last stderr line.
function runQuiver(file, threads, text, extra = []) {
  const t0 = performance.now();
  const q = spawnSync('bash', ['-c', 'TIMEFORMAT="cpu %3U %3S"; time "$@"', 'bash', quiver, 'sql', '--table',
    `l=${file}`, '--threads', String(threads), '--format', 'csv', '--timing', ...extra, text], { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (q.status !== 0) throw new Error(`quiver failed: ${q.stderr}`);
  const cpu = q.stderr.match(/cpu ([0-9.]+) ([0-9.]+)\s*$/);
  const engine = q.stderr.match(/timing: wall ([0-9.]+) ms, cpu ([0-9.]+) ms/);
  return { ms, cpuMs: cpu ? 1000 * (Number(cpu[1]) + Number(cpu[2])) : NaN,
    engineMs: engine ? Number(engine[1]) : NaN, engineCpuMs: engine ? Number(engine[2]) : NaN,
    answer: q.stdout.trim().split('\n').slice(-1)[0], stderr: q.stderr };
}

for (const threads of [1, 2]) {
  const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await db.connect();
  for (const [name, base, sql, extra] of cases) {
    const file = join(dir, base);
    if (!existsSync(file)) throw new Error(`${file} missing: run with --prepare ${dir} first`);
    const duck = [], mine = [], startup = [], duckCpu = [], myCpu = [], startupCpu = [], engine = [], engineCpu = [];
    let duckAnswer = '', myAnswer = '', peak = '', groups = '';
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await conn.runAndReadAll(sql(`'${quote(file)}'`));
      duck.push(performance.now() - t0);
      const c1 = process.cpuUsage(c0);
      duckCpu.push((c1.user + c1.system) / 1000);
      duckAnswer = r.getRows()[0].map(String).join(',');
      const q = runQuiver(file, threads, sql('l'), extra);
      mine.push(q.ms);
      myCpu.push(q.cpuMs);
      engine.push(q.engineMs);
      engineCpu.push(q.engineCpuMs);
      myAnswer = q.answer;
      peak = (q.stderr.match(/statement pool peak [^ ]+ [^ (]+/) || [''])[0];
      groups = (q.stderr.match(/parquet [0-9]+ row groups read, [0-9]+ pruned(, pages [0-9]+ read, [0-9]+ pruned)?/) ||
        [''])[0];
      const st = runQuiver(file, threads, 'SELECT count(*) FROM l');
      startup.push(st.ms);
      startupCpu.push(st.cpuMs);
    }
    // quiver warm, as DuckDB is: one process runs the statement runs + 1
    // times (--repeat), the runs after the first measured (its memory
    // touched once already, the file's footer read anew each run).
    const warm = runQuiver(file, threads, sql('l'), [...extra, '--repeat', String(runs + 1)]);
    const warmRuns = [...warm.stderr.matchAll(/timing \(run ([0-9]+) of [0-9]+\): wall ([0-9.]+) ms, cpu ([0-9.]+) ms/g)]
      .filter((x) => Number(x[1]) > 1);
    const w = median(warmRuns.map((x) => Number(x[2]))), wc = median(warmRuns.map((x) => Number(x[3])));
    const d = median(duck), m = median(mine), s = median(startup);
    const dc = median(duckCpu), mc = median(myCpu), sc = median(startupCpu);
    const e = median(engine), ec = median(engineCpu);
    console.log(`${name}, threads=${threads}: wall duckdb ${d.toFixed(0)} ms, quiver ${m.toFixed(0)} ms ` +
      `(start-up and footer ${s.toFixed(0)} ms), duckdb/quiver ${(d / m).toFixed(2)}, ` +
      `duckdb/(quiver - start-up) ${(d / (m - s)).toFixed(2)}; cpu duckdb ${dc.toFixed(0)} ms, quiver ` +
      `${mc.toFixed(0)} ms (start-up ${sc.toFixed(0)} ms), duckdb/quiver ${(dc / mc).toFixed(2)}, ` +
      `duckdb/(quiver - start-up) ${(dc / (mc - sc)).toFixed(2)}; in-process (quiver sql --timing: tables opened ` +
      `to last row) wall ${e.toFixed(0)} ms, cpu ${ec.toFixed(0)} ms, duckdb/quiver wall ${(d / e).toFixed(2)}, ` +
      `cpu ${(dc / ec).toFixed(2)}; in-process warm (--repeat, runs after the first) wall ${w.toFixed(0)} ms, ` +
      `cpu ${wc.toFixed(0)} ms, duckdb/quiver wall ${(d / w).toFixed(2)}, cpu ${(dc / wc).toFixed(2)}; quiver ${peak}${groups ? `, ${groups}` : ''}; ` +
      `answers ${duckAnswer === myAnswer ? 'equal' : `DIFFER: duckdb ${duckAnswer}, quiver ${myAnswer}`}`);
  }
}
