// nodejs-polars side of the IPC throughput comparison (bench/compare_polars.sh).
// Reads FILE once, then per round: writeIPC (or writeIPCStream) of the
// DataFrame into a Buffer with the codec, and readIPC of that Buffer.
// Medians over rounds after 2 warm-up rounds. Prints one JSON object.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const require = createRequire(new URL('../tests/interop/package.json', import.meta.url));
const pl = require('nodejs-polars');

const [file, codec = 'zstd', format = 'stream', roundsArg = '15'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const df = pl.readIPC(readFileSync(file));
const compression = codec === 'none' ? 'uncompressed' : codec;
const median = (v) => { const s = [...v].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const write = () => format === 'stream' ? df.writeIPCStream(null, { compression }) : df.writeIPC(null, { compression });
const read = (buf) => format === 'stream' ? pl.readIPCStream(buf) : pl.readIPC(buf);
const ws = [], rs = [];
let bytes = 0, rows = 0;
for (let r = 0; r < rounds + 2; ++r) {
  const t0 = process.hrtime.bigint();
  const buf = write();
  const t1 = process.hrtime.bigint();
  const back = read(buf);
  const t2 = process.hrtime.bigint();
  bytes = buf.length; rows = back.height;
  if (r >= 2) { ws.push(Number(t1 - t0) / 1e9); rs.push(Number(t2 - t1) / 1e9); }
}
console.log(JSON.stringify({ impl: 'nodejs-polars', file, codec, format, rows, ipc_bytes: bytes,
  write_median_s: median(ws), read_median_s: median(rs), rounds }));
