// The differential SQL fuzzer (issue 38): random queries over small random
// tables, answered by DuckDB (PostgreSQL's NULL order and integer division)
// and written as a sqllogictest script (src/quiver/sql/tests/slt_runner.h)
// that quiver's runner then checks (tests/slt/fuzz_vs_duckdb.sh). The same
// generator wrote the committed tests/slt/gen_*.slt files.
//   --seed S        the PRNG seed (same seed, same script)
//   --count N       queries to write (those DuckDB refuses are replaced)
//   --construct C   expr | logic_in | case_cast | string | aggregate | join |
//                   setop | values | distinct_ilike | correlated (not in
//                   all: correlated subqueries and LATERAL) | all (a mix)
//   --out FILE      where the script goes
// Expressions: unary and binary operators over INTEGER, BIGINT,
// DECIMAL(8,2), DOUBLE and VARCHAR columns and literals, comparisons, AND /
// OR / NOT, IN lists with constants and columns on either side (NOT IN,
// NULL items), BETWEEN, IS [NOT] NULL, LIKE, CASE (searched and simple),
// COALESCE, NULLIF, casts, concat / ||, string functions, abs / round;
// NULLs in every column. Left out where PostgreSQL and DuckDB answer
// differently by design: division or modulo by zero (DuckDB: NULL;
// PostgreSQL: an error), so divisors are NULLIF(x, 0); round() of a DOUBLE
// (half even in PostgreSQL, half away from zero in DuckDB); casts of
// doubles to text or integers; non-ASCII text.
// Needs @duckdb/node-api in bench/node_modules (bench/install-duckdb.sh).
import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../bench/package.json', import.meta.url));
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    if (dflt !== undefined) return dflt;
    throw new Error(`missing ${name}`);
  }
  return process.argv[i + 1];
}
const seed0 = Number(arg('--seed', '38'));
const count = Number(arg('--count', '200'));
const construct = arg('--construct', 'all');
const out = arg('--out');

// mulberry32
let state = seed0 >>> 0;
function rnd() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const chance = (p) => rnd() < p;

// ---- tables ------------------------------------------------------------------
const WORDS = ['a', 'b', 'ab', 'abc', 'B', 'xyz', '', ' a ', 'a%b', 'x_y', 'hello', 'Z'];
function maybeNull(v, p = 0.2) { return chance(p) ? 'NULL' : v; }
function tableScript() {
  const stmts = [];
  stmts.push('CREATE TABLE t1(a INTEGER, b BIGINT, c DECIMAL(8,2), d DOUBLE, s VARCHAR)');
  const rows1 = [];
  const n1 = int(6, 14);
  for (let r = 0; r < n1; r++) {
    rows1.push(`(${maybeNull(int(-5, 20))}, ${maybeNull(int(-3, 30))}, ${maybeNull((int(-500, 2500) / 100).toFixed(2))}, ` +
      `${maybeNull((int(-20, 40) / 4).toString())}, ${maybeNull(`'${pick(WORDS)}'`)})`);
  }
  stmts.push(`INSERT INTO t1 VALUES ${rows1.join(', ')}`);
  stmts.push('CREATE TABLE t2(a INTEGER, b INTEGER, s VARCHAR)');
  const rows2 = [];
  const n2 = int(4, 10);
  for (let r = 0; r < n2; r++)
    rows2.push(`(${maybeNull(int(-5, 20))}, ${maybeNull(int(0, 5))}, ${maybeNull(`'${pick(WORDS)}'`)})`);
  stmts.push(`INSERT INTO t2 VALUES ${rows2.join(', ')}`);
  return stmts;
}

// ---- expressions -------------------------------------------------------------
// types: i (integer), n (decimal), f (double), s (text), b (boolean)
let cols = { i: ['a', 'b'], n: ['c'], f: ['d'], s: ['s'] };
function lit(t) {
  switch (t) {
    case 'i': return chance(0.1) ? 'NULL' : String(int(-10, 30));
    case 'n': return chance(0.1) ? 'NULL' : (int(-3000, 3000) / 100).toFixed(pick([1, 2]));
    case 'f': return `${int(-40, 40) / 4}::DOUBLE`;
    case 's': return chance(0.1) ? 'NULL' : `'${pick(WORDS)}'`;
    case 'b': return pick(['TRUE', 'FALSE', 'NULL']);
  }
}
function leaf(t) { return cols[t] && chance(0.7) ? pick(cols[t]) : lit(t); }

function expr(t, depth) {
  if (depth <= 0 || chance(0.25)) return t === 'b' ? pred(0) : leaf(t);
  const d = depth - 1;
  switch (t) {
    case 'i': return pick([
      () => `(${expr('i', d)} ${pick(['+', '-', '*'])} ${expr('i', d)})`,
      () => `(${expr('i', d)} ${pick(['/', '%'])} NULLIF(${expr('i', d)}, 0))`,
      () => `(- ${expr('i', d)})`,
      () => `abs(${expr('i', d)})`,
      () => `CASE WHEN ${pred(d)} THEN ${expr('i', d)} ELSE ${expr('i', d)} END`,
      () => `COALESCE(${expr('i', d)}, ${expr('i', d)})`,
      () => `NULLIF(${expr('i', d)}, ${expr('i', d)})`,
      () => `CAST(${expr('n', d)} AS INTEGER)`,
      () => `length(${expr('s', d)})`,
    ])();
    case 'n': return pick([
      () => `(${expr('n', d)} ${pick(['+', '-'])} ${expr(pick(['n', 'i']), d)})`,
      () => `(${expr('n', d)} * ${expr('i', d)})`,
      // DuckDB rounds a decimal literal to 0 at negative digits (round(-5.68,
      // -1) is 0 there, -10 in PostgreSQL); through a cast it is right.
      () => `round(CAST(${expr('n', d)} AS DECIMAL(12,2)), ${pick([-1, 0, 1])})`,
      () => `abs(${expr('n', d)})`,
      () => `CAST(${expr('i', d)} AS DECIMAL(10,2))`,
      () => `CASE WHEN ${pred(d)} THEN ${expr('n', d)} ELSE ${expr('i', d)} END`,
      () => `COALESCE(${expr('n', d)}, ${expr('n', d)})`,
    ])();
    case 'f': return pick([
      () => `(${expr('f', d)} ${pick(['+', '-', '*'])} ${expr(pick(['f', 'i']), d)})`,
      () => `CAST(${expr(pick(['i', 'n']), d)} AS DOUBLE)`,
      () => `abs(${expr('f', d)})`,
      () => `(- ${expr('f', d)})`,
    ])();
    case 's': return pick([
      () => `concat(${expr('s', d)}, ${expr(pick(['s', 'i']), d)})`,
      () => `(${expr('s', d)} || ${expr('s', d)})`,
      () => `${pick(['upper', 'lower', 'trim', 'ltrim', 'rtrim'])}(${expr('s', d)})`,
      () => `substring(${expr('s', d)}, ${int(0, 3)}, ${int(0, 3)})`,
      () => `CASE ${expr('i', d)} WHEN ${lit('i')} THEN ${expr('s', d)} WHEN ${lit('i')} THEN ${lit('s')} ELSE ${expr('s', d)} END`,
      () => `CAST(${expr(pick(['i', 'n']), d)} AS VARCHAR)`,
      () => `COALESCE(${expr('s', d)}, ${lit('s')})`,
    ])();
    case 'b': return pred(depth);
  }
}

function inList(d) {
  const t = pick(['i', 'i', 'n', 's']);
  const items = [];
  const k = int(1, 4);
  for (let j = 0; j < k; j++) items.push(chance(0.5) ? leaf(t) : expr(t, Math.min(d, 1)));
  const probe = chance(0.4) ? lit(t) : expr(t, Math.min(d, 1));
  return `${probe} ${chance(0.3) ? 'NOT IN' : 'IN'} (${items.join(', ')})`;
}

function pred(depth) {
  const d = Math.max(depth - 1, 0);
  const t = pick(['i', 'i', 'n', 's', 'f']);
  const forms = [
    () => `${expr(t, d)} ${pick(['=', '<>', '<', '<=', '>', '>='])} ${expr(t === 'n' ? pick(['n', 'i']) : t, d)}`,
    () => inList(d),
    () => `${expr(t, d)} IS ${chance(0.5) ? 'NOT ' : ''}NULL`,
    () => `${expr('i', d)} ${chance(0.3) ? 'NOT ' : ''}BETWEEN ${expr('i', d)} AND ${expr('i', d)}`,
    () => `${expr('s', d)} ${chance(0.3) ? 'NOT ' : ''}LIKE '${pick(['a%', '%b%', '_', '%', 'a_c', ''])}'`,
  ];
  if (depth > 0) {
    forms.push(() => `(${pred(d)} ${pick(['AND', 'OR'])} ${pred(d)})`);
    forms.push(() => `NOT (${pred(d)})`);
  }
  return pick(forms)();
}

function typedExpr(d) {
  const t = pick(['i', 'i', 'n', 'f', 's', 'b']);
  return expr(t, d);
}

// ---- queries -----------------------------------------------------------------
function query(kind) {
  cols = { i: ['a', 'b'], n: ['c'], f: ['d'], s: ['s'] };
  switch (kind) {
    case 'expr': return `SELECT ${typedExpr(2)}, ${typedExpr(2)} FROM t1${chance(0.5) ? ` WHERE ${pred(2)}` : ''}`;
    case 'logic_in': return `SELECT a, ${pick([inList(1), pred(2)])} FROM t1${chance(0.6) ? ` WHERE ${inList(1)}` : ''}`;
    case 'case_cast': return `SELECT ${pick([
      `CASE WHEN ${pred(1)} THEN ${expr('i', 1)} WHEN ${pred(1)} THEN ${lit('i')} END`,
      `CASE ${expr('s', 1)} WHEN ${lit('s')} THEN ${expr('n', 1)} ELSE ${expr('i', 1)} END`,
      `CAST(${expr(pick(['i', 'n']), 1)} AS ${pick(['INTEGER', 'BIGINT', 'DECIMAL(12,3)', 'DOUBLE', 'VARCHAR'])})`,
      `CAST(${expr('b', 1)} AS VARCHAR)`,
      `COALESCE(${expr('i', 1)}, ${lit('i')})`])}, ${typedExpr(1)} FROM t1`;
    case 'string': return `SELECT ${expr('s', 2)}, ${expr('s', 1)} FROM t1${chance(0.4) ? ` WHERE ${pred(1)}` : ''}`;
    case 'aggregate': {
      const g = pick(['a % 3', 's', 'b > 5', 'c > 0', 'length(s)']);
      const agg = () => pick([`count(*)`, `count(${typedExpr(1)})`, `sum(${expr(pick(['i', 'n']), 1)})`,
        `min(${expr(pick(['i', 'n', 's']), 1)})`, `max(${expr(pick(['i', 'n', 's']), 1)})`,
        `count(DISTINCT ${expr(pick(['i', 's']), 1)})`, `avg(${expr('i', 1)})`]);
      return `SELECT ${g}, ${agg()}, ${agg()} FROM t1${chance(0.4) ? ` WHERE ${pred(1)}` : ''} GROUP BY ${g}` +
        (chance(0.3) ? ` HAVING ${pick(['count(*) > 1', 'sum(a) IS NOT NULL', 'max(s) > \'a\''])}` : '');
    }
    case 'setop': {
      // Two or three SELECTs of (integer, text) columns under UNION [ALL],
      // INTERSECT [ALL] and EXCEPT [ALL], nested in parentheses, with
      // ORDER BY / LIMIT over the whole now and then.
      const branch = () => {
        const t = pick(['t1', 't2']);
        const ic = pick(['a', 'b', 'a % 3', 'NULL', String(int(-2, 20)), 'b + 1']);
        const sc = pick(['s', 'NULL', lit('s'), 'upper(s)']);
        const where = chance(0.4) ? ` WHERE ${pick(['a > 5', 'b IS NOT NULL', 's IS NULL', 'a % 2 = 0', 'b < 10'])}` : '';
        return `SELECT ${ic}, ${sc} FROM ${t}${where}`;
      };
      const op = () => pick(['UNION', 'UNION ALL', 'INTERSECT', 'INTERSECT ALL', 'EXCEPT', 'EXCEPT ALL']);
      let q = `${branch()} ${op()} ${branch()}`;
      if (chance(0.4)) q = chance(0.5) ? `(${q}) ${op()} ${branch()}` : `${branch()} ${op()} (${q})`;
      if (chance(0.3)) q += ` ORDER BY 1${chance(0.5) ? ' DESC' : ''}, 2 LIMIT ${int(1, 5)}`;
      if (chance(0.2)) q = `SELECT count(*), count(DISTINCT x) FROM (${q}) AS u(x, y)`;
      return q;
    }
    case 'distinct_ilike': {
      const p = () => {
        const t = pick(['i', 'i', 'n', 's']);
        return pick([
          `${expr(t, 1)} IS ${chance(0.5) ? 'NOT ' : ''}DISTINCT FROM ${chance(0.2) ? 'NULL' : expr(t === 'n' ? 'i' : t, 1)}`,
          `${expr('s', 1)} ${chance(0.3) ? 'NOT ' : ''}ILIKE '${pick(['A%', '%B%', 'HELLO', '_', 'z', 'a%B', '%'])}'`]);
      };
      if (chance(0.2)) {
        cols = { i: ['t1.a', 't1.b', 't2.a', 't2.b'], n: ['t1.c'], f: ['t1.d'], s: ['t1.s', 't2.s'] };
        return `SELECT t1.a, t2.s FROM t1 JOIN t2 ON ${pick(['t1.a IS NOT DISTINCT FROM t2.a', 't1.s IS NOT DISTINCT FROM t2.s'])}`;
      }
      return `SELECT a, ${p()}, ${p()} FROM t1${chance(0.4) ? ` WHERE ${p()}` : ''}`;
    }
    case 'values': {
      const row = () => `(${pick(['NULL', String(int(-5, 5)), '2.5'])}, ${pick(['NULL', lit('s')])})`;
      // the first row's x is a number: a column NULL in every row is untyped
      const rows = [`(${int(-5, 5)}, ${pick(['NULL', lit('s')])})`, row(), row()].slice(0, int(1, 3)).join(', ');
      return pick([`SELECT * FROM (VALUES ${rows}) AS v(x, y)${chance(0.5) ? ' WHERE x IS NOT NULL' : ''}`,
        `VALUES ${rows}`, `SELECT x, count(*) FROM (VALUES ${rows}) v(x, y) GROUP BY x`,
        `SELECT t1.a, v.y FROM t1 JOIN (VALUES ${rows}) AS v(x, y) ON t1.a = v.x`]);
    }
    case 'correlated': {
      // Correlated subqueries and LATERAL (binder/bind_dependent_join.cc):
      // equality and other correlations, aggregates, ORDER BY ... LIMIT per
      // outer row (ordered by the value read: ties give equal values).
      const op = () => pick(['=', '<', '>', '<>', '=']);
      const corr = () => `t2.${pick(['a', 'b'])} ${op()} t1.${pick(['a', 'b'])}`;
      const where = () => corr() + (chance(0.4) ? ` AND ${pick(['t2.s IS NOT NULL', 't2.b > t1.a - 3', 't2.a % 2 = 0', 't2.s < t1.s'])}` : '');
      const agg = () => pick(['count(*)', 'count(t2.b)', 'sum(t2.b)', 'min(t2.s)', 'max(t2.a)', 'avg(t2.b)']);
      return pick([
        () => `SELECT t1.a, (SELECT ${agg()} FROM t2 WHERE ${where()}) FROM t1`,
        () => `SELECT t1.a, (SELECT t2.b FROM t2 WHERE ${where()} ORDER BY t2.b${chance(0.5) ? ' DESC' : ''} LIMIT 1) FROM t1`,
        () => `SELECT t1.a, x.v FROM t1, LATERAL (SELECT ${agg()} AS v FROM t2 WHERE ${where()}) x`,
        () => `SELECT t1.a, x.v FROM t1 LEFT JOIN LATERAL (SELECT t2.b AS v FROM t2 WHERE ${where()} ORDER BY t2.b LIMIT ${int(1, 3)}) x ON true`,
        () => `SELECT t1.a FROM t1 WHERE ${chance(0.5) ? 'NOT ' : ''}EXISTS (SELECT 1 FROM t2 WHERE ${where()})`,
        () => `SELECT t1.a FROM t1 WHERE t1.b ${pick(['>', '<=', '='])} (SELECT ${pick(['avg(t2.b)', 'max(t2.a)', 'count(*)'])} FROM t2 WHERE ${where()})`,
        () => `SELECT t1.a FROM t1 WHERE t1.b IN (SELECT t2.a FROM t2 WHERE ${where()})`,
        () => `SELECT t1.s, (SELECT count(*) FROM t2 WHERE ${corr()} AND t2.s = t1.s) FROM t1`,
        // mark joins over the general unnesting: EXISTS / IN as values,
        // NOT IN (a NULL in a row's set: unknown), a subquery in an
        // aggregate's argument
        () => `SELECT t1.a, EXISTS (SELECT 1 FROM t2 WHERE ${where()} ORDER BY t2.b LIMIT 1 OFFSET 1) FROM t1`,
        () => `SELECT t1.a, t1.b IN (SELECT t2.a FROM t2 WHERE ${where()} ORDER BY t2.a LIMIT ${int(1, 3)}) FROM t1`,
        () => `SELECT t1.a FROM t1 WHERE t1.a < 0 OR ${chance(0.5) ? 'NOT ' : ''}t1.b IN (SELECT t2.a + t1.a - t1.a FROM t2 WHERE ${where()})`,
        () => `SELECT t1.a FROM t1 WHERE t1.b NOT IN (SELECT t2.a FROM t2 WHERE ${where()} ORDER BY t2.a LIMIT ${int(1, 3)})`,
        () => `SELECT t1.s, ${pick(['sum', 'max', 'count'])}((SELECT ${pick(['count(*)', 'sum(t2.b)', 'max(t2.a)'])} FROM t2 WHERE ${where()})) FROM t1 GROUP BY t1.s`,
        // outer columns inside a derived table or WITH query of the
        // subquery, a WITH query read twice, ROLLUP per outer row
        () => `SELECT t1.a, (SELECT ${pick(['count(*)', 'sum(v)', 'max(v)'])} FROM (SELECT t2.b AS v FROM t2 WHERE ${where()}) d) FROM t1`,
        () => `SELECT t1.a, (SELECT max(n) FROM (SELECT t2.a, count(*) AS n FROM t2 WHERE ${where()} GROUP BY t2.a) d) FROM t1`,
        () => `SELECT t1.a FROM t1 WHERE ${chance(0.5) ? 'NOT ' : ''}EXISTS (SELECT 1 FROM (SELECT t2.b FROM t2 WHERE ${where()}) d)`,
        () => `SELECT t1.a, (WITH w AS (SELECT t2.b AS v FROM t2 WHERE ${where()}) SELECT count(*) FROM w x${chance(0.5) ? ', w y WHERE x.v < y.v' : ''}) FROM t1`,
        () => `SELECT t1.a, x.k, x.n FROM t1, LATERAL (SELECT t2.a AS k, count(*) AS n FROM t2 WHERE ${where()} GROUP BY ${pick(['ROLLUP (t2.a)', 'CUBE (t2.a)', 'GROUPING SETS ((t2.a), ())'])}) x`,
      ])();
    }
    case 'join': {
      cols = { i: ['t1.a', 't1.b', 't2.a', 't2.b'], n: ['t1.c'], f: ['t1.d'], s: ['t1.s', 't2.s'] };
      const on = pick(['t1.a = t2.a', 't1.b = t2.b', 't1.s = t2.s', 't1.a = t2.a AND t1.b > t2.b', 't1.a + 1 = t2.b']);
      return `SELECT ${expr('i', 1)}, ${expr(pick(['s', 'n']), 1)} FROM t1 ${pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN'])} ` +
        `t2 ON ${on}${chance(0.5) ? ` WHERE ${pred(1)}` : ''}`;
    }
  }
  throw new Error(`unknown construct ${kind}`);
}

// ---- rendering (slt_runner.h's rules) ----------------------------------------
function fmt3(x) {
  // C's %.3f: the exact binary value, ties to even. toFixed rounds the
  // exact value too, but ties away from zero; a tie is a double whose exact
  // expansion ends in a 5 at the fourth decimal (toFixed(20) shows every
  // digit of such a value). x * 2000 alone cannot tell: -50.7975 is the
  // double -50.79749999999999943..., and x * 2000 rounds to -101595.
  const y = x * 2000;
  let s;
  if (/^\d+\.\d{3}50*$/.test(Math.abs(x).toFixed(20)) && Number.isInteger(y) && Math.abs(y) % 2 === 1) {
    const n = (y - Math.sign(y)) / 2;  // toward zero
    const k = Math.abs(n) % 2 === 0 ? n : n + Math.sign(y);
    s = (k / 1000).toFixed(3);
  } else {
    s = x.toFixed(3);
  }
  return s === '-0.000' ? '0.000' : s;
}
function typeLetter(t) {
  const s = t.toString();
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT)$/.test(s)) return 'I';
  if (/^(DECIMAL|DOUBLE|FLOAT)/.test(s)) return 'R';
  return 'T';
}
function render(v, letter) {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return letter === 'R' ? fmt3(Number(v)) : v.toString();
  if (typeof v === 'number') {
    if (letter === 'I') return String(Math.trunc(v));
    if (letter === 'R') return fmt3(v);
    return String(v);
  }
  if (typeof v === 'object' && 'scale' in v && 'value' in v) {  // DuckDBDecimalValue
    const neg = v.value < 0n;
    let digits = (neg ? -v.value : v.value).toString().padStart(v.scale + 1, '0');
    const text = (neg ? '-' : '') + (v.scale ? digits.slice(0, -v.scale) + '.' + digits.slice(-v.scale) : digits);
    if (letter === 'R') return fmt3(parseFloat(text));
    if (letter === 'I') return (neg ? '-' : '') + digits.slice(0, digits.length - v.scale);
    return text;
  }
  let s = String(v);
  if (s === '') return '(empty)';
  return s.replace(/[^ -~]/g, '@');
}

// ---- main --------------------------------------------------------------------
const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
const conn = await instance.connect();
await conn.run("SET default_null_order = 'nulls_last_on_asc_first_on_desc'");
await conn.run('SET integer_division = true');
const kinds = construct === 'all' ? ['expr', 'logic_in', 'case_cast', 'string', 'aggregate', 'join', 'setop', 'values',
  'distinct_ilike']
  : [construct];
const lines = [
  `# Generated by tests/slt/fuzz_vs_duckdb.mjs --seed ${seed0} --count ${count} --construct ${construct}:`,
  '# random queries over small random tables; the expected values are DuckDB\'s',
  '# (PostgreSQL NULL order, integer division). Do not edit: generate again.',
  '',
];
let written = 0, refused = 0, tables = 0;
while (written < count) {
  // A fresh pair of tables every 25 queries.
  if (written % 25 === 0 && tables <= written / 25) {
    tables++;
    await conn.run('DROP TABLE IF EXISTS t1');
    await conn.run('DROP TABLE IF EXISTS t2');
    if (written > 0) lines.push('statement ok', 'DROP TABLE t1', '', 'statement ok', 'DROP TABLE t2', '');
    for (const s of tableScript()) {
      await conn.run(s);
      lines.push('statement ok', s, '');
    }
  }
  const kind = pick(kinds);
  const sql = query(kind);
  let reader;
  try {
    reader = await conn.runAndReadAll(sql);
  } catch (e) {
    refused++;
    continue;
  }
  const letters = reader.columnTypes().map(typeLetter).join('');
  const rows = reader.getRows().map((row) => row.map((v, i) => render(v, letters[i])));
  rows.sort((x, y) => { const a = x.join('\t'), b = y.join('\t'); return a < b ? -1 : a > b ? 1 : 0; });
  const values = rows.flat();
  lines.push(`query ${letters} rowsort`, sql, '----');
  if (values.length > 12) {
    const hash = createHash('md5').update(values.map((v) => v + '\n').join('')).digest('hex');
    lines.push(`${values.length} values hashing to ${hash}`);
  } else {
    for (const row of rows) lines.push(row.join('\t'));
  }
  lines.push('');
  written++;
}
writeFileSync(out, lines.join('\n'));
console.log(`${written} queries written to ${out} (${refused} refused by DuckDB and replaced), seed ${seed0}`);
