// Parse of an SF1 lineitem.csv (issue 36 "Measure", CSV), DuckDB's
// read_csv and quiver side by side in one run, medians of --runs (default
// 3), at 1 and 2 threads: "narrow", SELECT sum(l_quantity), count(*) over
// every row (both infer l_quantity as DOUBLE), and "wide", an exact
// aggregate of five columns of four types (BIGINT, DOUBLE, DATE, VARCHAR):
// the parse of every field, and the conversion of those columns. quiver runs as a process (`quiver sql
// --table l=FILE`), DuckDB in-process; quiver's time holds its start-up,
// measured alone as `quiver sql "SELECT 1"` and printed beside. CPU times
// (user + system of every thread: quiver's from /usr/bin/time, DuckDB's
// from process.cpuUsage around its query) are the figures to compare on a
// loaded machine; wall times measure the load too. Prints both answers
// (they must be equal), quiver's statement pool peak (its scan pool:
// bounded, the file is never held) and its peak RSS.
// Usage:
//   node bench/csv_parse.mjs --prepare DIR QUIVER_BINARY [--scale S]
//     writes DIR/lineitem.csv (`quiver gen tpch` then `quiver cat --format csv`).
//   node bench/csv_parse.mjs QUIVER_BINARY DIR [--runs N] [--threads 1,2] [--file lineitem.csv]
//     --file: another file in DIR, e.g. lineitem.csv.zst (pzstd's frames or zstd's one
//     frame); DuckDB's read_csv reads the same file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(new URL('./package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
const quote = (s) => s.replaceAll("'", "''");
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);

if (process.argv[2] === '--prepare') {
  const [dir, quiver] = process.argv.slice(3);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, 'tpch');
  const gen = spawnSync(quiver, ['gen', 'tpch', '--scale', arg('--scale', '1'), '-o', tmp], { encoding: 'utf8' });
  if (gen.status !== 0) throw new Error(`quiver gen failed: ${gen.stderr}`);
  const cat = spawnSync('sh', ['-c', `"$0" cat --format csv "$1" > "$2"`, quiver, join(tmp, 'lineitem.arrow'),
    join(dir, 'lineitem.csv')], { encoding: 'utf8' });
  if (cat.status !== 0) throw new Error(`quiver cat failed: ${cat.stderr}`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}

const [quiver, dir] = process.argv.slice(2);
const runs = Number(arg('--runs', '3'));
const threadList = arg('--threads', '1,2').split(',').map(Number);
const file = join(dir, arg('--file', 'lineitem.csv'));
if (!existsSync(file)) throw new Error(`${file} missing: run with --prepare ${dir} first`);
const cases = [
  ['narrow', (t) => `SELECT sum(l_quantity), count(*) FROM ${t}`],
  ['wide', (t) => `SELECT count(*), sum(l_orderkey), max(l_extendedprice), max(l_shipdate), max(l_comment) FROM ${t}`],
];
const norm = (v) => (v !== '' && !Number.isNaN(Number(v)) ? String(Number(v)) : String(v));

function runQuiver(args) {
  const t0 = performance.now();
  const q = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S rss %M', quiver, 'sql', ...args], { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (q.status !== 0) throw new Error(`quiver failed: ${q.stderr}`);
  const m = q.stderr.match(/cpu ([0-9.]+) ([0-9.]+) rss ([0-9]+)\s*$/);
  return { ms, cpuMs: m ? 1000 * (Number(m[1]) + Number(m[2])) : NaN, rssKiB: m ? Number(m[3]) : NaN,
    answer: q.stdout.trim().split('\n').slice(-1)[0], stderr: q.stderr };
}

console.log(`${file}: ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB; runs ${runs}`);
for (const threads of threadList) {
  const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await db.connect();
  for (const [name, sql] of cases) {
    const duck = [], mine = [], startup = [], duckCpu = [], myCpu = [], startupCpu = [], rss = [];
    let duckAnswer = '', myAnswer = '', peak = '';
    for (let i = 0; i < runs; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const r = await conn.runAndReadAll(sql(`read_csv('${quote(file)}')`));
      duck.push(performance.now() - t0);
      const c1 = process.cpuUsage(c0);
      duckCpu.push((c1.user + c1.system) / 1000);
      duckAnswer = r.getRows()[0].map((v) => norm(String(v))).join(',');
      const q = runQuiver(['--table', `l=${file}`, '--threads', String(threads), '--format', 'csv', sql('l')]);
      mine.push(q.ms);
      myCpu.push(q.cpuMs);
      rss.push(q.rssKiB);
      myAnswer = q.answer.split(',').map(norm).join(',');
      peak = (q.stderr.match(/statement pool peak [^ ]+ [^ (]+ \([^)]*\)/) || [''])[0];
      const st = runQuiver(['--threads', String(threads), '--format', 'csv', 'SELECT 1']);
      startup.push(st.ms);
      startupCpu.push(st.cpuMs);
    }
    const d = median(duck), m = median(mine), s = median(startup);
    const dc = median(duckCpu), mc = median(myCpu), sc = median(startupCpu);
    console.log(`${name}, threads=${threads}: wall duckdb ${d.toFixed(0)} ms, quiver ${m.toFixed(0)} ms (start-up ` +
      `${s.toFixed(0)} ms), duckdb/quiver ${(d / m).toFixed(2)}; cpu duckdb ${dc.toFixed(0)} ms, quiver ` +
      `${mc.toFixed(0)} ms (start-up ${sc.toFixed(0)} ms), duckdb/quiver ${(dc / mc).toFixed(2)}, ` +
      `duckdb/(quiver - start-up) ${(dc / (mc - sc)).toFixed(2)}; quiver ${peak}, peak RSS ` +
      `${(median(rss) / 1024).toFixed(0)} MiB; answers ${duckAnswer === myAnswer ? 'equal' :
        `DIFFER: duckdb ${duckAnswer}, quiver ${myAnswer}`} (${myAnswer})`);
  }
}
