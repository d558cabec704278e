// Value normalisation and comparison shared by the interop tests.
//
// Two kinds of comparison happen in this suite:
//  - same library, two inputs (a peer's read of quiver's output against the
//    same peer's read of the original): `canonGeneric` maps each value to a
//    plain, comparable form without needing the column type;
//  - a JS library's values against `quiver cat --format jsonl`: `canonTyped`
//    maps both sides to one form using a type hint per column (`typeHint`,
//    derived from flechette's schema of the same bytes).
import assert from 'node:assert/strict';
import { Type } from '@uwdata/flechette';

// ---------------------------------------------------------------- JSON lines

// JSON.parse loses int64 values beyond 2^53; quiver prints them as bare
// numbers. Lines with a run of 16+ digits go through this small parser, which
// returns a BigInt for integer literals outside the safe range.
function parseJsonBig(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++; const o = {}; ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) {
        ws(); const k = str(); ws();
        if (text[i++] !== ':') throw new SyntaxError(`expected ':' at ${i - 1}`);
        o[k] = value(); ws();
        const d = text[i++];
        if (d === '}') return o;
        if (d !== ',') throw new SyntaxError(`expected ',' or '}' at ${i - 1}`);
      }
    }
    if (c === '[') {
      i++; const a = []; ws();
      if (text[i] === ']') { i++; return a; }
      for (;;) {
        a.push(value()); ws();
        const d = text[i++];
        if (d === ']') return a;
        if (d !== ',') throw new SyntaxError(`expected ',' or ']' at ${i - 1}`);
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) throw new SyntaxError(`unexpected '${c}' at ${i}`);
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const str = () => {
    const start = i;
    if (text[i++] !== '"') throw new SyntaxError(`expected string at ${start}`);
    while (text[i] !== '"') { if (text[i] === '\\') i++; i++; if (i > text.length) throw new SyntaxError('open string'); }
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const v = value(); ws();
  if (i !== text.length) throw new SyntaxError(`trailing characters at ${i}`);
  return v;
}

/** Parses JSON-lines text into an array of row objects (int64-exact). */
export function parseJsonLines(text) {
  const rows = [];
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    rows.push(/\d{16}/.test(line) ? parseJsonBig(line) : JSON.parse(line));
  }
  return rows;
}

/** Turns row objects into { name: values[] } given the column order. */
export function rowsToColumns(rows, names) {
  const cols = {};
  for (const n of names) cols[n] = new Array(rows.length);
  rows.forEach((r, i) => { for (const n of names) cols[n][i] = r[n]; });
  return cols;
}

// ------------------------------------------------------------------- hints

/** A compact type description from a flechette DataType. */
export function typeHint(t) {
  switch (t.typeId) {
    case Type.Dictionary: return typeHint(t.dictionary);
    case Type.Int: return { kind: 'int', bits: t.bitWidth, signed: t.signed };
    case Type.Float: return { kind: t.precision === 1 ? 'float32' : t.precision === 0 ? 'float16' : 'float' };
    case Type.Bool: return { kind: 'bool' };
    case Type.Utf8: case Type.LargeUtf8: case 24 /* Utf8View */: return { kind: 'string' };
    case Type.Binary: case Type.LargeBinary: case Type.FixedSizeBinary: case 23 /* BinaryView */:
      return { kind: 'binary' };
    case Type.Date: return { kind: 'date' };
    case Type.Timestamp: return { kind: 'timestamp' };
    case Type.List: case Type.LargeList: case Type.FixedSizeList: case 25: case 26:
      return { kind: 'list', child: typeHint(t.children[0].type) };
    case Type.Struct:
      return { kind: 'struct', fields: t.children.map(f => [f.name, typeHint(f.type)]) };
    case Type.Null: return { kind: 'null' };
    default: return { kind: 'other' };
  }
}

// --------------------------------------------------------------- canonical

const ISO = /^(-?\d{4,})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?)?(Z|[+-]\d\d:?\d\d)?$/;

/** Milliseconds since the epoch (fractional below 1 ms) of an ISO date/time text. */
export function isoToMs(s) {
  const m = ISO.exec(s);
  if (!m) return `unparsed:${s}`;
  const [, y, mo, d, h = '0', mi = '0', se = '0', frac = '', tz] = m;
  const dt = new Date(0);
  dt.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  dt.setUTCHours(Number(h), Number(mi), Number(se), 0);
  let ms = dt.getTime() + (frac ? Number(frac.padEnd(9, '0')) / 1e6 : 0);
  if (tz && tz !== 'Z') {
    const sign = tz[0] === '-' ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60000;
  }
  return ms;
}

const hex = (u8) => Array.from(u8, b => b.toString(16).padStart(2, '0')).join('').toUpperCase();
const isSeq = (v) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));

/** A type-free comparable form (for values from one library). */
export function canonGeneric(v) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'bigint': return `${v}n`;
    case 'number': case 'string': case 'boolean': return v;
  }
  if (v instanceof Date) return `Date(${v.getTime()})`;
  if (v instanceof Map) return Array.from(v, ([k, x]) => [canonGeneric(k), canonGeneric(x)]);
  if (isSeq(v)) return Array.from(v, canonGeneric);
  // apache-arrow hands out Vectors for list values and StructRow proxies.
  if (typeof v.toArray === 'function') return Array.from(v.toArray(), canonGeneric);
  if (typeof v.toJSON === 'function') return canonGeneric(v.toJSON());
  if (typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v)) o[k] = canonGeneric(v[k]);
    return o;
  }
  return String(v);
}

/**
 * A comparable form of one value of a column with the given hint. Works for
 * values from flechette, nodejs-polars, perspective and quiver's JSON lines.
 */
export function canonTyped(v, hint = { kind: 'other' }) {
  if (v === null || v === undefined) return null;
  switch (hint.kind) {
    case 'int':
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v).toString();
      return `not-an-int:${String(v)}`;
    case 'int-as-double': { // an integer that one side holds only as a (maybe signed) double
      if (typeof v !== 'bigint' && typeof v !== 'number') return `not-a-number:${String(v)}`;
      const x = Number(v);
      return hint.signed === false && x < 0 ? x + 2 ** hint.bits : x;
    }
    case 'float-json': { // a float that one side passed through JSON: NaN and ±Infinity became null
      const x = Number(v);
      return Number.isFinite(x) ? x : null;
    }
    case 'float': case 'float32': case 'float16': {
      const x = typeof v === 'string' ? Number(v) : Number(v); // "NaN", "Infinity", "-Infinity"
      return hint.kind === 'float32' ? Math.fround(x) : x;
    }
    case 'bool': return typeof v === 'boolean' ? v : `not-a-bool:${v}`;
    case 'string': return typeof v === 'string' ? v : `not-a-string:${canonGeneric(v)}`;
    case 'binary': return typeof v === 'string' ? v.toUpperCase() : hex(v);
    case 'date': case 'timestamp': {
      let ms;
      if (v instanceof Date) ms = v.getTime();
      else if (typeof v === 'string') ms = isoToMs(v);
      else if (typeof v === 'bigint') ms = Number(v);
      else ms = v;
      return typeof ms === 'number' ? Math.round(ms * 1000) / 1000 : ms; // microsecond grain
    }
    case 'list': return isSeq(v) ? Array.from(v, x => canonTyped(x, hint.child)) : `not-a-list:${v}`;
    case 'struct': {
      const o = {};
      for (const [k, h] of hint.fields) o[k] = canonTyped(v[k], h);
      return o;
    }
    default: return canonGeneric(v);
  }
}

// ---------------------------------------------------------------- compare

function same(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b); // NaN equals NaN; -0 differs from 0
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(k => same(a[k], b[k]));
}

const show = (v) => {
  const special = (x) => (typeof x === 'bigint' ? `${x}n`
    : typeof x === 'number' && (!Number.isFinite(x) || Object.is(x, -0)) ? `<${Object.is(x, -0) ? '-0' : x}>` : x);
  try { return JSON.stringify(v, (_, x) => special(x)); } catch { return String(v); }
};

/**
 * Asserts two { name: values[] } column sets hold the same values.
 * `canon(value, name)` maps each value; mismatches report the first few.
 */
export function assertColumnsEqual(actual, expected, { names, numRows, canon, label }) {
  for (const n of names) {
    assert.ok(n in actual, `${label}: column '${n}' missing on the actual side (has ${Object.keys(actual)})`);
    assert.ok(n in expected, `${label}: column '${n}' missing on the expected side`);
    assert.equal(actual[n].length, numRows, `${label}: column '${n}' has ${actual[n].length} values, expected ${numRows}`);
    assert.equal(expected[n].length, numRows, `${label}: expected column '${n}' has ${expected[n].length} values, expected ${numRows}`);
    const bad = [];
    let count = 0;
    for (let i = 0; i < numRows; i++) {
      const x = canon(actual[n][i], n), y = canon(expected[n][i], n);
      if (!same(x, y)) {
        count++;
        if (bad.length < 5) bad.push(`row ${i}: got ${show(x)} want ${show(y)}`);
      }
    }
    assert.equal(count, 0, `${label}: column '${n}': ${count} of ${numRows} values differ; ${bad.join('; ')}`);
  }
}
