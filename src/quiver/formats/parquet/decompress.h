// quiver/formats/parquet/decompress.h — the page codecs Parquet names
// (parquet-format Compression.md): SNAPPY (raw snappy), GZIP (RFC 1952;
// several concatenated members allowed), BROTLI, ZSTD (one or more frames),
// LZ4_RAW (one LZ4 block) and the deprecated LZ4 (Hadoop framing: blocks of
// [u32 BE uncompressed size][u32 BE compressed size][LZ4 block]; files some
// writers labelled LZ4 hold a bare LZ4 block or an LZ4 frame, accepted too).
// LZO is NotImplemented.
//
// The output is a caller buffer sized from the page header's uncompressed
// size; a codec must fill it exactly: producing fewer or more bytes is
// Invalid (never a worst-case bound, never a resize). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "quiver/base/status.h"

namespace quiver::parquet {

/// Decompresses `in` with `codec` (a parquet.thrift CompressionCodec value)
/// into exactly `out.size()` bytes. Errors: Invalid when the input is
/// corrupt or decodes to a different size (saying both sizes);
/// NotImplemented for LZO and unknown codecs (naming them).
Status Decompress(int32_t codec, std::span<const uint8_t> in, std::span<uint8_t> out);

}  // namespace quiver::parquet
