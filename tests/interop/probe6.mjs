import fs from 'node:fs';
import * as F from '@uwdata/flechette';
const t = F.tableFromArrays({ f: [NaN, Infinity, -Infinity, -0, 1e300, 5e-324, 0.1, null], f32: [NaN, Infinity, -0, 0.1, 3.4e38, 1e-45, 16777217, null],
  bin: [new Uint8Array([0,1,255]), new Uint8Array([]), null, new Uint8Array([34,92]), null, null, null, null],
  dm: [Date.UTC(1969,11,31,23,59,59,999), 0, -86400000*365*100, null, 1, 2, 3, 4] },
  { types: { f: F.float64(), f32: F.float32(), bin: F.binary(), dm: F.timestamp(F.TimeUnit.NANOSECOND) } });
fs.writeFileSync('/tmp/special.stream', F.tableToIPC(t, {format:'stream'}));
console.log(t.toArray());
