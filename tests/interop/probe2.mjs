import fs from 'node:fs';
import * as F from '@uwdata/flechette';
const n = 25;
const rows = [...Array(n).keys()];
const t = F.tableFromArrays({
  i8: rows.map(i => (i % 7 === 3 ? null : ((i * 37) % 256) - 128)),
  i16: rows.map(i => i * 1000 - 12000),
  i32: rows.map(i => (i % 5 === 0 ? null : i * 123457 - 1500000)),
  i64: rows.map(i => (i % 6 === 1 ? null : BigInt(i) * 3000000000000000n - 30000000000000000n)),
  u8: rows.map(i => (i * 11) % 256),
  u32: rows.map(i => 4294967295 - i),
  f32: rows.map(i => i * 0.25 - 1),
  f64: rows.map(i => (i % 4 === 2 ? null : i / 3)),
  b: rows.map(i => (i % 3 === 2 ? null : i % 2 === 0)),
  s: rows.map(i => (i % 8 === 7 ? null : i % 5 === 0 ? '' : `str-${i}-é😀"\\`)),
  ls: rows.map(i => `large-${i}`),
  d: rows.map(i => (i % 9 === 4 ? null : ['red', 'green', 'blue', 'ünï'][i % 4])),
  day: rows.map(i => (i % 10 === 9 ? null : Date.UTC(2020, 0, 1 + i * 17))),
  ts: rows.map(i => Date.UTC(2001, 2, 3, 4, 5, 6, i)),
  tsu: rows.map(i => Date.UTC(2024, 1, 29, 12, 0, i)),
  lst: rows.map(i => (i % 4 === 0 ? null : [...Array(i % 3).keys()].map(k => k + i))),
  st: rows.map(i => ({ a: i, b: `b${i}` })),
}, { types: {
  i8: F.int8(), i16: F.int16(), i32: F.int32(), i64: F.int64(), u8: F.uint8(), u32: F.uint32(),
  f32: F.float32(), f64: F.float64(), b: F.bool(), s: F.utf8(), ls: F.largeUtf8(), d: F.dictionary(F.utf8()),
  day: F.dateDay(), ts: F.timestamp(F.TimeUnit.MILLISECOND), tsu: F.timestamp(F.TimeUnit.MICROSECOND, 'UTC'),
  lst: F.list(F.int32()), st: F.struct({a: F.int32(), b: F.utf8()}),
}, maxBatchRows: 10, useBigInt: true });
fs.writeFileSync('/tmp/rich.stream', F.tableToIPC(t, {format: 'stream'}));
console.log(t.get(1), t.get(4));
