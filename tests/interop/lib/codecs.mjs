// Registers LZ4_FRAME and ZSTD codecs with flechette (it ships none) and,
// for decoding only, with apache-arrow.
//  - LZ4_FRAME: lz4-napi (handles block checksums and linked blocks);
//  - ZSTD: fzstd to decode (copied with .slice() so typed-array views over
//    the result are 8-byte aligned), zstd-codec (wasm) to encode.
import { createRequire } from 'node:module';
import { CompressionType, setCompressionCodec } from '@uwdata/flechette';
import { compressionRegistry, CompressionType as ArrowJsCompressionType } from 'apache-arrow';
import * as fzstd from 'fzstd';
import lz4 from 'lz4-napi';

const require = createRequire(import.meta.url);

const lz4Decode = (data) =>
  new Uint8Array(lz4.decompressFrameSync(Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
const zstdDecode = (data) => fzstd.decompress(data).slice();

let ready = null;

/** Resolves once the codecs are registered with flechette and apache-arrow (idempotent). */
export function registerCodecs() {
  if (ready) return ready;
  ready = (async () => {
    setCompressionCodec(CompressionType.LZ4_FRAME, {
      encode: (data) => new Uint8Array(lz4.compressFrameSync(Buffer.from(data))),
      decode: lz4Decode,
    });
    const { ZstdCodec } = require('zstd-codec');
    const simple = await new Promise((resolve) => ZstdCodec.run((zstd) => resolve(new zstd.Simple())));
    setCompressionCodec(CompressionType.ZSTD, {
      encode: (data) => simple.compress(data, 3),
      decode: zstdDecode,
    });
    // apache-arrow: decode only (it is used as a reader, never as a writer).
    compressionRegistry.set(ArrowJsCompressionType.LZ4_FRAME, { decode: lz4Decode });
    compressionRegistry.set(ArrowJsCompressionType.ZSTD, { decode: zstdDecode });
  })();
  return ready;
}
