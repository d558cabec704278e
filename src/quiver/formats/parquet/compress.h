// quiver/formats/parquet/compress.h — page compression for the writer
// (parquet-format Compression.md), the writing side of decompress.h:
// UNCOMPRESSED, SNAPPY (raw snappy, Debian's libsnappy) and ZSTD (one
// frame).
//
// The compressed bytes go into a caller scratch buffer (from its pool)
// grown to the codec's bound when needed and reused page after page; the
// caller copies out only the bytes the page holds (never keeps a
// worst-case-sized buffer per page). Pure apart from the scratch buffer;
// thread-safe for distinct scratch buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

/// True for the codecs the writer produces (UNCOMPRESSED, SNAPPY, ZSTD).
bool WriterSupportsCodec(int32_t codec);

/// Compresses `in` with `codec` (ZSTD at `zstd_level`) into `*scratch`
/// (allocated from `pool` or grown when smaller than the bound) and
/// returns the compressed bytes, a view into `*scratch` valid until its
/// next use. UNCOMPRESSED returns `in` itself. Errors: NotImplemented for
/// other codecs (naming them), Invalid when the codec fails, OutOfMemory.
Result<std::span<const uint8_t>> CompressPage(int32_t codec, int zstd_level, std::span<const uint8_t> in,
                                              std::shared_ptr<Buffer>* scratch, MemoryPool* pool);

}  // namespace quiver::parquet
