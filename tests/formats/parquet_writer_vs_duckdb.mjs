// The Parquet writer against DuckDB (issue 36 §1, "Writer"): files quiver
// writes are read by DuckDB, and every value DuckDB reads equals what
// quiver's own reader reads from the same file (`quiver cat --format jsonl`).
//  - arrow-testing's integration files (every flat type: booleans, signed
//    and unsigned integers, floats, binary, utf8, fixed-size binary, dates,
//    times, timestamps of every unit with and without time zones, decimal128
//    and decimal256, dictionary arrays, no rows, no batches), each converted
//    with `quiver convert` under SNAPPY, ZSTD and none, with dictionary pages
//    and PLAIN only, and in row groups of 7 rows;
//  - a table of TPC-H lineitem (scale 0.01) with NULLs written by
//    `quiver sql -o FILE.parquet`;
//  - the same back to Arrow IPC and again to Parquet (convert in.parquet out.arrow);
//  - TPC-H lineitem at scale 0.05 converted to Parquet: DuckDB's count and
//    sums equal quiver's over the Arrow file; the file sizes beside DuckDB's
//    own COPY of the same table (printed, not asserted); and the same in
//    one row group with a page index on every column chunk: DuckDB reads it
//    alike, and a filtered month answers alike with and without page pruning.
// DuckDB's parquet_metadata() checks the encodings, codecs and row groups; bad
// options and unsupported columns are clear errors that leave no file.
// Usage: node tests/formats/parquet_writer_vs_duckdb.mjs QUIVER_BINARY SHARED_DIR
// Prints "parquet writer vs duckdb: N files equal, 0 differences"; exit 1 on
// any difference, 77 without @duckdb/node-api or the shared data.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const [quiver, shared] = process.argv.slice(2);
const require = createRequire(new URL('../../bench/package.json', import.meta.url));
let duckdb;
try {
  duckdb = require('@duckdb/node-api');
} catch {
  console.log('parquet writer vs duckdb: @duckdb/node-api (bench/install-duckdb.sh) missing: skipped');
  process.exit(77);
}
const integration = path.join(shared, 'arrow-testing/data/arrow-ipc-stream/integration/1.0.0-littleendian');
if (!existsSync(integration)) {
  console.log(`parquet writer vs duckdb: ${integration} missing: skipped`);
  process.exit(77);
}
const db = await duckdb.DuckDBInstance.create(':memory:');
const con = await db.connect();
const dir = mkdtempSync(path.join(os.tmpdir(), 'quiver-pqwrite-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

function run(args) {
  const r = spawnSync(quiver, args, { encoding: 'utf8', timeout: 120000, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`quiver ${args.join(' ')}: ${r.status} ${r.stderr}`);
  return r.stdout;
}
const rows = async (sql) => (await con.runAndReadAll(sql)).getRows();
const q = (name) => '"' + name.replaceAll('"', '""') + '"';

// JSON with every number kept as its text (uint64 and decimals exactly).
function parseJsonKeepNumbers(line) {
  let out = '', inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (inString) {
      out += c;
      if (c === '\\') out += line[++i];
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (/[-0-9]/.test(c)) {
      let j = i;
      while (j < line.length && /[-+0-9.eE]/.test(line[j])) j++;
      out += '"' + line.slice(i, j) + '"';
      i = j - 1;
    } else {
      out += c;
    }
  }
  return JSON.parse(out);
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
function days(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
// "HH:MM:SS[.f]" -> nanoseconds (BigInt).
function timeNs(text) {
  const m = /^(\d\d):(\d\d):(\d\d)(?:\.(\d+))?/.exec(text);
  const frac = BigInt(((m[4] || '') + '000000000').slice(0, 9));
  return (BigInt(m[1]) * 3600n + BigInt(m[2]) * 60n + BigInt(m[3])) * 1000000000n + frac;
}
// "YYYY-MM-DDTHH:MM:SS[.f][Z]" (quiver) or "YYYY-MM-DD HH:MM:SS[.f][+00]" -> ns since the epoch.
function timestampNs(text) {
  const m = /^(-?\d+)-(\d\d)-(\d\d)[T ](.*)$/.exec(text);
  return BigInt(days(Number(m[1]), Number(m[2]), Number(m[3]))) * 86400000000000n + timeNs(m[4]);
}
const floorDiv = (a, b) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
const unitNs = { TIMESTAMP_S: 1000000000n, TIMESTAMP_MS: 1000000n, TIMESTAMP: 1000n, 'TIMESTAMP WITH TIME ZONE': 1000n, TIMESTAMP_NS: 1n };

// DuckDB's value of a column as text we compare, and quiver's value mapped the same way.
function duckExpr(name, type) {
  if (type === 'BLOB') return `hex(${q(name)})`;
  if (type === 'DATE') return `CAST(${q(name)} - DATE '1970-01-01' AS VARCHAR)`;
  if (type in unitNs) {
    const f = { TIMESTAMP_S: 'epoch', TIMESTAMP_MS: 'epoch_ms', TIMESTAMP_NS: 'epoch_ns' }[type] || 'epoch_us';
    // DuckDB reads INT64's extremes as +-infinity.
    return `CASE WHEN isinf(${q(name)}) THEN CAST(${q(name)} AS VARCHAR) ELSE CAST(${f}(${q(name)}) AS VARCHAR) END`;
  }
  return `CAST(${q(name)} AS VARCHAR)`;
}
function same(type, duck, ours) {
  if (duck === null || ours === null || ours === undefined) return duck === null && (ours === null || ours === undefined);
  if (type === 'DATE') {
    const m = /^(-?\d+)-(\d\d)-(\d\d)$/.exec(ours);
    return m && String(days(Number(m[1]), Number(m[2]), Number(m[3]))) === duck;
  }
  if (type in unitNs) {
    const ns = timestampNs(ours);
    if (duck === 'infinity' || duck === '-infinity') return ns === (duck[0] === '-' ? -1n : 1n) * 9223372036854775807n;
    // DuckDB truncates nanoseconds to its microseconds toward zero: floor or truncation.
    return String(floorDiv(ns, unitNs[type])) === duck || String(ns / unitNs[type]) === duck;
  }
  if (type === 'TIME_NS') return timeNs(ours) === timeNs(duck);
  if (type.startsWith('TIME')) return floorDiv(timeNs(ours), 1000n) === floorDiv(timeNs(duck), 1000n);
  if (type === 'FLOAT' || type === 'DOUBLE') {
    const a = Number(duck), b = Number(ours);
    if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
    return Math.abs(a - b) <= (type === 'FLOAT' ? 1e-6 : 1e-12) * Math.max(1, Math.abs(a));
  }
  return duck === String(ours);
}

let equal = 0, failures = 0, skipped = 0;
async function compareFile(file, expect) {
  const cols = await rows(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
  const ourRows = run(['cat', '--format', 'jsonl', file]).split('\n').filter((l) => l.length).map(parseJsonKeepNumbers);
  const duckRows = cols.length ? await rows(`SELECT ${cols.map(([n, t]) => duckExpr(n, t)).join(', ')} FROM read_parquet('${file}')`) : [];
  // DuckDB reads DECIMAL of precision > 38 as DOUBLE and, for a FIXED_LEN_BYTE_ARRAY
  // width not a multiple of 8 (the minimal width the spec asks for, as Arrow
  // writes too), scales it wrongly (duckdb/duckdb pull request 25058): such
  // columns are left out of the comparison (quiver's reading is checked by the
  // unit tests), and counted.
  const widths = new Map((await rows(`SELECT name, type_length FROM parquet_schema('${file}')`)).map((r) => [r[0], Number(r[1])]));
  const skip = new Set(cols.filter(([n, t]) => t === 'DOUBLE' && widths.get(n) % 8 !== 0 && widths.get(n) > 16).map(([n]) => n));
  skipped += skip.size;
  const problems = [];
  if (duckRows.length !== ourRows.length) problems.push(`rows: duckdb ${duckRows.length}, quiver ${ourRows.length}`);
  for (let r = 0; r < Math.min(duckRows.length, ourRows.length) && problems.length < 5; r++) {
    cols.forEach(([name, type], c) => {
      if (!skip.has(name) && !same(type, duckRows[r][c], ourRows[r][name])) {
        problems.push(`row ${r} ${name} (${type}): duckdb ${duckRows[r][c]}, quiver ${ourRows[r][name]}`);
      }
    });
  }
  const meta = await rows(`SELECT row_group_id, compression, encodings FROM parquet_metadata('${file}')`);
  const groups = new Set(meta.map((m) => m[0])).size;
  if (expect.rowGroups !== undefined && groups !== expect.rowGroups) problems.push(`row groups ${groups}, expected ${expect.rowGroups}`);
  for (const [, codec, enc] of meta) {
    if (codec !== expect.codec) problems.push(`codec ${codec}, expected ${expect.codec}`);
    if (expect.plain && /DICTIONARY/.test(enc)) problems.push(`encodings ${enc} with --no-parquet-dictionary`);
  }
  if (expect.someDictionary && !meta.some((m) => /RLE_DICTIONARY/.test(m[2]))) problems.push('no dictionary-encoded chunk');
  const label = `${path.basename(file)}: ${ourRows.length} rows x ${cols.length} columns, ${groups} row groups` +
    (skip.size ? ` (${skip.size} DECIMAL(>38) columns DuckDB misreads left out)` : '');
  if (problems.length) {
    failures++;
    console.log(`DIFF ${label}\n  ${problems.join('\n  ')}`);
  } else {
    equal++;
    console.log(`ok   ${label}`);
  }
}

// 1. arrow-testing's integration files, every codec, dictionary and PLAIN, small row groups.
const variants = [
  { tag: 'snappy', args: [], codec: 'SNAPPY', someDictionary: true },
  { tag: 'zstd', args: ['--parquet-compression', 'zstd'], codec: 'ZSTD', someDictionary: true },
  { tag: 'none-plain', args: ['--parquet-compression', 'none', '--no-parquet-dictionary'], codec: 'UNCOMPRESSED', plain: true },
  { tag: 'rg7', args: ['--row-group-rows', '7'], codec: 'SNAPPY', someDictionary: true, rowGroupsOf: 7 },
];
const files = ['primitive', 'datetime', 'decimal', 'decimal256', 'dictionary', 'primitive_zerolength', 'primitive_no_batches'];
for (const f of files) {
  for (const v of variants) {
    const out = path.join(dir, `${f}-${v.tag}.parquet`);
    run(['convert', path.join(integration, `generated_${f}.arrow_file`), out, ...v.args]);
    const n = Number((await rows(`SELECT count(*) FROM read_parquet('${out}')`))[0][0]);
    const expect = { codec: v.codec, plain: v.plain, someDictionary: v.someDictionary && n > 0 };
    if (v.rowGroupsOf) expect.rowGroups = Math.ceil(n / v.rowGroupsOf);
    await compareFile(out, expect);
  }
}

// 2. A TPC-H-derived table with NULLs and several row groups, written by `quiver sql -o`.
const tpch01 = path.join(dir, 'tpch01');
run(['gen', 'tpch', '--scale', '0.01', '-o', tpch01]);
const typed = path.join(dir, 'typed.parquet');
run(['sql', '--table', `l=${tpch01}/lineitem.arrow`, '-o', typed, '--row-group-rows', '20000', '--parquet-compression', 'zstd',
  `SELECT l_orderkey * 10 + l_linenumber AS id, CASE WHEN l_linenumber = 3 THEN NULL ELSE l_linenumber % 2 = 0 END AS b,
     CASE WHEN l_linenumber = 2 THEN NULL ELSE CAST(l_partkey AS INTEGER) END AS i32, l_orderkey AS i64,
     CAST(l_tax AS REAL) AS f32, CAST(l_extendedprice AS DOUBLE) AS f64, l_returnflag AS flag,
     CASE WHEN l_linenumber = 4 THEN NULL ELSE l_comment END AS comment, l_shipdate AS d,
     CAST(l_shipdate AS TIMESTAMP) AS ts, l_extendedprice AS price, CAST(l_discount AS DECIMAL(4,2)) AS disc,
     CAST(l_extendedprice AS DECIMAL(30,4)) AS wide FROM l`]);
await compareFile(typed, { codec: 'ZSTD', rowGroups: 4, someDictionary: true });
// ... and back: Parquet -> Arrow IPC -> Parquet, DuckDB's sums of both Parquet files equal.
const back = path.join(dir, 'typed-back.arrow'), again = path.join(dir, 'typed-again.parquet');
run(['convert', typed, back]);
run(['convert', back, again, '--row-group-rows', '60036']);
await compareFile(again, { codec: 'SNAPPY', rowGroups: 1, someDictionary: true });
const sums = 'SELECT count(*), count(b), sum(i32), round(sum(f64), 2), count(DISTINCT comment), sum(price), min(ts), max(d) FROM ';
const [a, b] = [typed, again].map(async (f) => (await rows(sums + `read_parquet('${f}')`))[0].map(String).join(' | '));
if ((await a) === (await b)) {
  equal++;
  console.log(`ok   parquet -> arrow -> parquet: ${await a}`);
} else {
  failures++;
  console.log(`DIFF parquet -> arrow -> parquet: ${await a} vs ${await b}`);
}

// 3. TPC-H lineitem at scale 0.05 converted: DuckDB's aggregates equal quiver's over the Arrow file.
const tpch = path.join(dir, 'tpch');
run(['gen', 'tpch', '--scale', '0.05', '-o', tpch]);
const agg = 'SELECT count(*), sum(l_quantity), sum(l_extendedprice), sum(l_discount), min(l_shipdate), max(l_shipdate), ' +
  'count(DISTINCT l_comment), sum(l_orderkey) FROM lineitem';
const fromQuiver = run(['sql', '--table', `lineitem=${tpch}/lineitem.arrow`, '--format', 'csv', agg]).trim().split('\n')[1].split(',');
for (const codec of ['snappy', 'zstd']) {
  const ours = path.join(dir, `lineitem-${codec}.parquet`);
  run(['convert', `${tpch}/lineitem.arrow`, ours, '--parquet-compression', codec]);
  const got = (await rows(agg.replace('FROM lineitem', `FROM read_parquet('${ours}')`)))[0].map((v) => String(v));
  const theirs = path.join(dir, `lineitem-duckdb-${codec}.parquet`);
  await con.run(`COPY (SELECT * FROM read_parquet('${ours}')) TO '${theirs}' (FORMAT parquet, COMPRESSION ${codec === 'none' ? 'uncompressed' : codec}, ROW_GROUP_SIZE 122880)`);
  const ok = got.length === fromQuiver.length && got.every((v, i) => Number(v) === Number(fromQuiver[i]) || v === fromQuiver[i]);
  const sizes = `quiver ${statSync(ours).size} B, DuckDB COPY ${statSync(theirs).size} B`;
  if (ok) {
    equal++;
    console.log(`ok   lineitem SF 0.05 ${codec}: ${got.join(' | ')} (${sizes})`);
  } else {
    failures++;
    console.log(`DIFF lineitem SF 0.05 ${codec}: duckdb ${got.join(' | ')}; quiver ${fromQuiver.join(' | ')}`);
  }
}

// 3b. The same lineitem in ONE row group (many pages, a page index on every
// column chunk): DuckDB reads every value alike (the aggregates), and a
// month of l_shipdate answers alike from DuckDB, from quiver with its pages
// pruned and from quiver with --no-page-index.
{
  const one = path.join(dir, 'lineitem-one-group.parquet');
  run(['sql', '--table', `l=${tpch}/lineitem.arrow`, '-o', one, '--row-group-rows', '1000000',
    'SELECT * FROM l ORDER BY l_shipdate, l_orderkey, l_linenumber']);
  const got = (await rows(agg.replace('FROM lineitem', `FROM read_parquet('${one}')`)))[0].map((v) => String(v));
  const stats = run(['stats', one]);
  const indexed = /page index on 16 of 16 column chunks \(([0-9]+) pages\)/.exec(stats);
  const month = 'SELECT count(*), sum(l_extendedprice), min(l_orderkey), sum(l_quantity) FROM l ' +
    "WHERE l_shipdate >= DATE '1995-03-01' AND l_shipdate < DATE '1995-04-01'";
  const duck = (await rows(month.replace('FROM l', `FROM read_parquet('${one}')`)))[0].map(String).join(',');
  const pruned = spawnSync(quiver, ['sql', '--table', `l=${one}`, '--format', 'csv', month], { encoding: 'utf8' });
  const unpruned = run(['sql', '--table', `l=${one}`, '--format', 'csv', '--no-page-index', month]);
  const line = (out) => out.trim().split('\n')[1];
  const pages = /pages ([0-9]+) read, ([0-9]+) pruned/.exec(pruned.stderr);
  const ok = got.every((v, i) => Number(v) === Number(fromQuiver[i]) || v === fromQuiver[i]) && indexed &&
    Number(indexed[1]) > 16 && pages && Number(pages[2]) > 0 && line(pruned.stdout) === line(unpruned) &&
    line(unpruned).split(',').every((v, i) => Number(v) === Number(duck.split(',')[i]) || v === duck.split(',')[i]);
  if (ok) {
    equal++;
    console.log(`ok   lineitem SF 0.05 one row group: ${indexed[1]} pages indexed; a month: duckdb ${duck}, ` +
      `quiver ${line(pruned.stdout)} (pages ${pages[1]} read, ${pages[2]} pruned)`);
  } else {
    failures++;
    console.log(`DIFF lineitem one row group: duckdb ${got.join(' | ')} / ${duck}; quiver ${fromQuiver.join(' | ')} / ` +
      `${line(pruned.stdout)} (${pruned.stderr.trim()}) / ${line(unpruned)}; stats ${indexed ? indexed[0] : 'no index'}`);
  }
}

// 4. Bad options and columns the writer does not write: clear errors, no file left.
for (const [args, code, text] of [
  [['--parquet-compression', 'gzip'], 2, "Parquet compression 'gzip' (expected snappy, zstd or none)"],
  [['--row-group-rows', '0'], 1, '--row-group-rows 0: expected >= 1'],
  [['--compression', 'zstd'], 2, 'a Parquet output takes --parquet-compression'],
  [['--in', 'nested'], 1, "NotImplemented: Parquet writer: column 'list_nullable' of type list<item: int32>"],
]) {
  const input = args[0] === '--in' ? `generated_${args[1]}.arrow_file` : 'generated_primitive.arrow_file';
  const out = path.join(dir, 'refused.parquet');
  const r = spawnSync(quiver, ['convert', path.join(integration, input), out, ...(args[0] === '--in' ? [] : args)],
    { encoding: 'utf8' });
  if (r.status === code && r.stderr.includes(text) && !existsSync(out)) {
    equal++;
    console.log(`ok   refused: ${r.stderr.trim()}`);
  } else {
    failures++;
    console.log(`DIFF convert ${args.join(' ')}: exit ${r.status}, ${r.stderr.trim()}, file left: ${existsSync(out)}`);
  }
}

console.log(`parquet writer vs duckdb: ${equal} files equal, ${skipped} columns left out, ${failures} differences`);
process.exit(failures ? 1 : 0);
