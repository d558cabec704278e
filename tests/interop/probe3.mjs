import fs from 'node:fs';
import pl from 'nodejs-polars';
import perspective from '@finos/perspective';
const b = fs.readFileSync('/tmp/rich.stream');
try { const df = pl.readIPCStream(b); console.log(df.dtypes.map(String)); console.log(df.row(1), df.row(4)); const c = df.getColumn('day'); console.log(c.toArray().slice(0,3), df.getColumn('i64').toArray().slice(0,3), df.getColumn('lst').toArray().slice(0,3), df.getColumn('tsu').toArray().slice(0,2)); } catch (e) { console.log('polars err', e.message); }
try { const tb = await perspective.table(b.buffer.slice(b.byteOffset, b.byteOffset+b.byteLength)); console.log(await tb.schema()); const v = await tb.view(); const c = await v.to_columns(); for (const k in c) console.log(k, c[k].slice(0,5)); } catch(e) { console.log(' psp err', e.message ?? e); }
process.exit(0)
