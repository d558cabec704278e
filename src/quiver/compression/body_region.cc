// quiver/compression/body_region.cc — see body_region.h.
#include "quiver/compression/body_region.h"

#include <algorithm>
#include <span>
#include <string>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/memory/memory_pool.h"

namespace quiver {

void EncodeRegionPrefix(int64_t uncompressed_bytes, uint8_t* out) {
  bit_util::StoreLE<int64_t>(out, uncompressed_bytes);
}

Result<DecodedRegion> DecodeRegion(const std::shared_ptr<Buffer>& body, int64_t offset, int64_t length, Codec& codec,
                                   const RegionLimits& limits, MemoryPool* pool, std::string_view where) {
  const std::string at(where);
  const std::string codec_name(CompressionTypeName(codec.type()));
  if (length < kRegionPrefixBytes) {
    return Status::Invalid(at + ": compressed region of " + std::to_string(length) +
                           " bytes is shorter than its 8-byte length prefix");
  }
  const int64_t declared = bit_util::LoadLE<int64_t>(body->data() + offset);
  const int64_t compressed = length - kRegionPrefixBytes;
  DecodedRegion out;
  if (declared == kRawRegionPrefix) {
    out.bytes = Buffer::Slice(body, offset + kRegionPrefixBytes, compressed);
    return out;
  }
  if (declared < 0) {
    return Status::Invalid(at + ": negative uncompressed length " + std::to_string(declared));
  }
  if (declared > limits.max_decompressed_bytes) {
    return Status::Invalid(at + ": uncompressed length " + std::to_string(declared) + " exceeds the limit of " +
                           std::to_string(limits.max_decompressed_bytes) + " bytes");
  }
  int64_t ratio_cap;
  if (CheckedMul(std::max<int64_t>(compressed, 1), limits.max_compression_ratio, &ratio_cap) && declared > ratio_cap) {
    return Status::Invalid(at + ": uncompressed length " + std::to_string(declared) + " is over " +
                           std::to_string(limits.max_compression_ratio) + " times the compressed " +
                           std::to_string(compressed) + " bytes");
  }
  // What this codec's framing can produce at most (issue 10 item 3): a
  // lying prefix is Invalid here, before the pool is asked.
  const std::span<const uint8_t> frames(body->data() + offset + kRegionPrefixBytes, static_cast<size_t>(compressed));
  const int64_t bound = codec.MaxDecompressedBytes(frames);
  if (declared > bound) {
    return Status::Invalid(at + ": uncompressed length " + std::to_string(declared) + " is more than the " +
                           std::to_string(compressed) + " compressed bytes of " + codec_name +
                           " data can produce (at most " + std::to_string(bound) + " bytes)");
  }
  // Refuse early, naming the pool, when a limit leaves no room (Allocate
  // below still reserves first; this only words the common case).
  const int64_t room = pool->AvailableBytes();
  if (room >= 0 && declared > room) {
    return pool->OutOfMemoryError(at + ": decompressing " + std::to_string(compressed) + " bytes of " + codec_name,
                                  declared);
  }
  auto alloc = Buffer::Allocate(pool, declared);
  if (!alloc.ok()) return alloc.status().WithContext(at);
  out.bytes = std::move(alloc).value();
  Status st = codec.Decompress(frames, {out.bytes->mutable_data(), static_cast<size_t>(declared)});
  if (!st.ok()) return st.WithContext(at + " (" + codec_name + ")");
  out.decompressed = true;
  return out;
}

}  // namespace quiver
