import fs from 'node:fs';
import perspective from '@finos/perspective';
const b = fs.readFileSync('/work/shared/data/peer-samples/fl_none.stream');
const tb = await perspective.table(b.buffer.slice(b.byteOffset, b.byteOffset+b.byteLength));
const v = await tb.view();
for (const c of ['lz4', 'zstd', null]) {
  try { const ab = await v.to_arrow({compression: c}); console.log(c, ab.byteLength); fs.writeFileSync('/tmp/psp_' + c + '.arrow', new Uint8Array(ab)); } catch (e) { console.log(c, 'err', e.message ?? e); }
}
process.exit(0)
