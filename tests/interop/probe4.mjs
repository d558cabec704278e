import fs from 'node:fs';
import * as F from '@uwdata/flechette';
import perspective from '@finos/perspective';
const t = F.tableFromIPC(fs.readFileSync('/tmp/rich.stream'), {useBigInt: true});
const names = t.schema.fields.map(f => f.name).filter(n => n !== 'st' && n !== 'lst');
const b = F.tableToIPC(t.select(names), {format:'stream'});
fs.writeFileSync('/tmp/core.stream', b);
try { const tb = await perspective.table(b.buffer.slice(b.byteOffset, b.byteOffset+b.byteLength)); console.log(await tb.schema()); const v = await tb.view(); const c = await v.to_columns(); for (const k in c) console.log(k, c[k].slice(0,5)); 
 const ab = await v.to_arrow(); console.log('to_arrow bytes', ab.byteLength); fs.writeFileSync('/tmp/psp.arrow', new Uint8Array(ab)); } catch(e) { console.log(' psp err', e.message ?? e); }
process.exit(0)
