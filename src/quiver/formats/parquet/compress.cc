#include "quiver/formats/parquet/compress.h"

#include <snappy-c.h>
#include <zstd.h>

#include "quiver/formats/parquet/metadata.h"

namespace quiver::parquet {

bool WriterSupportsCodec(int32_t codec) {
  return codec == static_cast<int32_t>(Codec::kUncompressed) || codec == static_cast<int32_t>(Codec::kSnappy) ||
         codec == static_cast<int32_t>(Codec::kZstd);
}

Result<std::span<const uint8_t>> CompressPage(int32_t codec, int zstd_level, std::span<const uint8_t> in,
                                              std::shared_ptr<Buffer>* scratch, MemoryPool* pool) {
  if (codec == static_cast<int32_t>(Codec::kUncompressed)) return in;
  if (!WriterSupportsCodec(codec)) {
    return Status::NotImplemented("Parquet writer: codec " + CodecName(codec) + " (SNAPPY, ZSTD or UNCOMPRESSED)");
  }
  const bool snappy = codec == static_cast<int32_t>(Codec::kSnappy);
  const size_t bound = snappy ? snappy_max_compressed_length(in.size()) : ZSTD_compressBound(in.size());
  if (!*scratch || (*scratch)->size() < static_cast<int64_t>(bound)) {
    if (*scratch) {
      QUIVER_RETURN_NOT_OK((*scratch)->Resize(static_cast<int64_t>(bound), /*shrink_to_fit=*/false));
    } else {
      QUIVER_ASSIGN_OR_RETURN(*scratch, Buffer::Allocate(pool, static_cast<int64_t>(bound)));
    }
  }
  uint8_t* out = (*scratch)->mutable_data();
  size_t n = bound;
  if (snappy) {
    if (snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(), reinterpret_cast<char*>(out), &n) !=
        SNAPPY_OK) {
      return Status::Invalid("Parquet writer: snappy failed on a page of " + std::to_string(in.size()) + " bytes");
    }
  } else {
    n = ZSTD_compress(out, bound, in.data(), in.size(), zstd_level);
    if (ZSTD_isError(n)) {
      return Status::Invalid(std::string("Parquet writer: zstd failed: ") + ZSTD_getErrorName(n));
    }
  }
  return std::span<const uint8_t>(out, n);
}

}  // namespace quiver::parquet
