// Reference tables built in JS with the peer writers.
import * as F from '@uwdata/flechette';
import pl from 'nodejs-polars';

/** A small deterministic PRNG (mulberry32), so every run builds the same bytes. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COLORS = ['red', 'green', 'blue', 'ünïcödé', 'a somewhat longer dictionary value'];

/**
 * The "rich" table: flechette-built, NUM_ROWS rows in batches of BATCH_ROWS,
 * every common type with nulls, int64/uint64 beyond 2^53, unicode and escapes,
 * a dictionary column, dates, timestamps, a list and a struct. Some columns
 * compress well, the random ones do not (so quiver stores some buffers raw).
 */
export function buildRichTable({ numRows = 5000, batchRows = 2000 } = {}) {
  const rnd = prng(42);
  const r = [...Array(numRows).keys()];
  const data = {
    i8: r.map(i => (i % 7 === 3 ? null : ((i * 37) % 256) - 128)),
    i16: r.map(i => ((i * 1000) % 65536) - 32768),
    i32: r.map(i => (i % 5 === 0 ? null : i * 123457 - 1500000)),
    i64: r.map(i => (i % 6 === 1 ? null : BigInt(i) * 3000000000000003n - 7500000000000000000n)),
    u8: r.map(i => (i * 11) % 256),
    u32: r.map(i => 4294967295 - i * 3),
    u64: r.map(i => 18446744073709551615n - BigInt(i) * 1234567890123n),
    f32: r.map(i => (i % 9 === 8 ? null : i * 0.25 - 100)),
    f64: r.map(i => (i % 4 === 2 ? null : i % 97 === 5 ? [NaN, Infinity, -Infinity, -0][i % 4] : rnd() * 1e6 - 5e5)),
    b: r.map(i => (i % 3 === 2 ? null : rnd() < 0.5)),
    s: r.map(i => (i % 8 === 7 ? null : i % 5 === 0 ? '' : `str-${i % 250}-é😀"\\\n\t`)),
    ls: r.map(i => `large-${(rnd() * 1e9) | 0}`),
    d: r.map(i => (i % 9 === 4 ? null : COLORS[i % COLORS.length])),
    allnull: r.map(() => null),
    day: r.map(i => (i % 10 === 9 ? null : Date.UTC(1960, 0, 1 + i * 17))),
    ts: r.map(i => Date.UTC(2001, 2, 3, 4, 5, 6, i * 7)),
    tsu: r.map(i => (i % 11 === 0 ? null : Date.UTC(2024, 1, 29, 12, 0, 0, i * 1003))),
    bin: r.map(i => (i % 6 === 0 ? null : Uint8Array.from({ length: i % 5 }, (_, k) => (i + k * 61) % 256))),
    lst: r.map(i => (i % 4 === 0 ? null : Array.from({ length: i % 4 }, (_, k) => (k === 1 && i % 3 === 0 ? null : k + i)))),
    st: r.map(i => (i % 13 === 0 ? null : { a: i % 10 === 1 ? null : i, b: `b${i % 17}` })),
  };
  const types = {
    i8: F.int8(), i16: F.int16(), i32: F.int32(), i64: F.int64(),
    u8: F.uint8(), u32: F.uint32(), u64: F.uint64(),
    f32: F.float32(), f64: F.float64(), b: F.bool(),
    s: F.utf8(), ls: F.largeUtf8(), d: F.dictionary(F.utf8()), allnull: F.int32(),
    day: F.dateDay(), ts: F.timestamp(F.TimeUnit.MILLISECOND),
    tsu: F.timestamp(F.TimeUnit.MICROSECOND, 'UTC'), bin: F.binary(),
    lst: F.list(F.int32()), st: F.struct({ a: F.int32(), b: F.utf8() }),
  };
  return F.tableFromArrays(data, { types, maxBatchRows: batchRows, useBigInt: true });
}

/** Columns of the rich table that perspective (no nested, binary or uint64 support) loads. */
export const PERSPECTIVE_COLUMNS = ['i8', 'i16', 'i32', 'i64', 'u8', 'f32', 'f64', 'b', 's', 'ls', 'd', 'day', 'ts', 'tsu'];

/** A nodejs-polars DataFrame of common types, with nulls and a categorical. */
export function buildPolarsFrame(numRows = 4000) {
  const rnd = prng(7);
  const r = [...Array(numRows).keys()];
  return pl.DataFrame([
    pl.Series('i32', r.map(i => (i % 5 === 0 ? null : i * 7 - 100)), pl.Int32),
    pl.Series('i64', r.map(i => (i % 9 === 0 ? null : i * 1000003 - 2 ** 40)), pl.Int64),
    pl.Series('u16', r.map(i => i % 65536), pl.UInt16),
    pl.Series('f32', r.map(i => i * 0.25), pl.Float32),
    pl.Series('f64', r.map(i => (i % 7 === 3 ? null : rnd() * 1000)), pl.Float64),
    pl.Series('b', r.map(i => (i % 3 === 2 ? null : i % 2 === 0)), pl.Bool),
    pl.Series('s', r.map(i => (i % 11 === 0 ? null : `s-${i % 97}-ü "q"`)), pl.Utf8),
    pl.Series('cat', r.map(i => (i % 13 === 0 ? null : ['a', 'bb', 'ccc'][i % 3])), pl.Categorical),
    pl.Series('day', r.map(i => (i % 17 === 0 ? null : new Date(Date.UTC(2000, 0, 1 + i)))), pl.Date),
    pl.Series('ts', r.map(i => new Date(Date.UTC(2020, 0, 1, 0, 0, 0, i * 1001))), pl.Datetime('ms')),
    pl.Series('lst', r.map(i => (i % 10 === 0 ? null : [i, i + 1, i % 3])), pl.List(pl.Int32)),
  ]);
}
