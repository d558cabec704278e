// Readers over the peer Arrow implementations. Each returns
//   { numRows, names, columns: { name: values[] } }
// with values as that library hands them out (compare them with the same
// library's read of another input, or through canonTyped against quiver).
import { tableFromIPC } from '@uwdata/flechette';
import pl from 'nodejs-polars';
import perspective from '@finos/perspective';
import { tableFromIPC as arrowJsTableFromIPC } from 'apache-arrow';

const ARROW_FILE_MAGIC = Buffer.from('ARROW1');

/** True when the bytes are an IPC file (magic at both ends), false for a stream. */
export function isIpcFile(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return b.length >= 12 && b.subarray(0, 6).equals(ARROW_FILE_MAGIC) &&
    b.subarray(b.length - 6).equals(ARROW_FILE_MAGIC);
}

/** flechette 2.6.0 (needs registerFlechetteCodecs() for compressed input). */
export function readFlechette(bytes) {
  const t = tableFromIPC(bytes, { useBigInt: true });
  const names = t.schema.fields.map(f => f.name);
  const columns = {};
  for (const n of names) columns[n] = Array.from(t.getChild(n).toArray());
  return { numRows: t.numRows, names, columns, schema: t.schema };
}

/** nodejs-polars 0.26.1: readIPC for files, readIPCStream for streams. */
export function readPolars(bytes) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const df = isIpcFile(bytes) ? pl.readIPC(buf) : pl.readIPCStream(buf);
  const names = df.columns;
  const columns = {};
  // nodejs-polars hands no Binary values to JS ("DataType Binary is not
  // supported for JS conversion"): such columns are listed in `unreadable`
  // with the error, so a test can say which values went unchecked.
  const unreadable = {};
  for (const n of names) {
    try {
      columns[n] = df.getColumn(n).toArray();
    } catch (err) {
      unreadable[n] = String(err?.message ?? err);
    }
  }
  return { numRows: df.height, names, columns, unreadable };
}

/** @finos/perspective 3.8.0 (Arrow C++ in WebAssembly): table -> view -> to_columns. */
export async function readPerspective(bytes) {
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const table = await perspective.table(ab);
  try {
    const view = await table.view();
    try {
      const columns = await view.to_columns();
      const numRows = await table.size();
      return { numRows, names: Object.keys(columns), columns };
    } finally {
      await view.delete();
    }
  } finally {
    await table.delete();
  }
}

/**
 * apache-arrow 21.2.0 (Arrow JS), used as a reader only: its writer puts the
 * compressed length in the 8-byte prefix (see shared/data/README.md). Its
 * reader ignores that prefix, so it reads valid compressed input once the
 * codecs are registered (registerArrowJsCodecs).
 */
export function readArrowJs(bytes) {
  const t = arrowJsTableFromIPC(bytes);
  const names = t.schema.fields.map(f => f.name);
  const columns = {};
  for (const n of names) {
    const v = t.getChild(n);
    columns[n] = Array.from(v);
  }
  return { numRows: t.numRows, names, columns };
}

export const READERS = {
  flechette: readFlechette,
  polars: readPolars,
  perspective: readPerspective,
  'apache-arrow': readArrowJs,
};
