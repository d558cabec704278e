import fs from 'node:fs';
import pl from 'nodejs-polars';
const n = 3000;
const r = [...Array(n).keys()];
let df = pl.DataFrame({
  i32: pl.Series('i32', r.map(i => i % 5 === 0 ? null : i * 7 - 100), pl.Int32),
  i64: pl.Series('i64', r.map(i => i * 1000003), pl.Int64),
  u16: pl.Series('u16', r.map(i => i % 65536), pl.UInt16),
  f32: pl.Series('f32', r.map(i => i * 0.25), pl.Float32),
  f64: pl.Series('f64', r.map(i => i % 7 === 3 ? null : i / 7), pl.Float64),
  b: pl.Series('b', r.map(i => i % 3 === 2 ? null : i % 2 === 0), pl.Bool),
  s: pl.Series('s', r.map(i => i % 11 === 0 ? null : `s-${i % 97}-ü`), pl.Utf8),
  cat: pl.Series('cat', r.map(i => i % 13 === 0 ? null : ['a','bb','ccc'][i % 3]), pl.Categorical),
  day: pl.Series('day', r.map(i => new Date(Date.UTC(2000, 0, 1 + i))), pl.Date),
  ts: pl.Series('ts', r.map(i => new Date(Date.UTC(2020, 0, 1, 0, 0, 0, i * 1001))), pl.Datetime('ms')),
  lst: pl.Series('lst', r.map(i => [i, i+1]), pl.List(pl.Int32)),
});
console.log(df.dtypes.map(String));
console.log(df.row(1));
for (const c of ['uncompressed','lz4','zstd']) {
  fs.writeFileSync(`/tmp/pl_${c}.file`, df.writeIPC({compression: c}));
  fs.writeFileSync(`/tmp/pl_${c}.stream`, df.writeIPCStream({compression: c}));
}
