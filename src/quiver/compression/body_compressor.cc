#include "quiver/compression/body_compressor.h"

#include <cstring>

#include "quiver/base/bit_util.h"

namespace quiver {

std::string_view OutputPolicyName(OutputPolicy policy) {
  switch (policy) {
    case OutputPolicy::kKeep: return "keep";
    case OutputPolicy::kShrinkIfHalves: return "shrink-if-halves";
    case OutputPolicy::kExact: return "exact";
  }
  return "unknown";
}

Result<OutputPolicy> ParseOutputPolicy(std::string_view name) {
  for (auto p : {OutputPolicy::kKeep, OutputPolicy::kShrinkIfHalves, OutputPolicy::kExact}) {
    if (name == OutputPolicyName(p)) return p;
  }
  return Status::Invalid("unknown compression output policy '" + std::string(name) +
                         "' (expected keep, shrink-if-halves or exact)");
}

BufferCompressor::BufferCompressor(BodyCompressionOptions options, std::unique_ptr<Codec> codec,
                                   MemoryPool* output_pool, MemoryPool* scratch_pool)
    : options_(options),
      codec_(std::move(codec)),
      output_pool_(output_pool),
      scratch_pool_(scratch_pool ? scratch_pool : output_pool) {}

BufferCompressor::~BufferCompressor() = default;

Result<std::unique_ptr<BufferCompressor>> BufferCompressor::Make(const BodyCompressionOptions& options,
                                                                 MemoryPool* output_pool, MemoryPool* scratch_pool) {
  if (output_pool == nullptr) return Status::Invalid("BufferCompressor needs an output pool");
  if (options.codec == CompressionType::kNone) {
    return Status::Invalid("BufferCompressor needs a codec (lz4 or zstd), got none");
  }
  if (!(options.min_space_saving >= 0 && options.min_space_saving < 1)) {
    return Status::Invalid("min_space_saving " + std::to_string(options.min_space_saving) + " is outside [0, 1)");
  }
  QUIVER_ASSIGN_OR_RETURN(auto codec, Codec::Make(options.codec, options.level));
  BodyCompressionOptions resolved = options;
  resolved.level = codec->level();
  return std::unique_ptr<BufferCompressor>(new BufferCompressor(resolved, std::move(codec), output_pool, scratch_pool));
}

CompressionType BufferCompressor::codec() const { return codec_->type(); }
int BufferCompressor::level() const { return codec_->level(); }

bool BufferCompressor::SavesEnough(int64_t input_bytes, int64_t output_bytes) const {
  if (output_bytes >= input_bytes) return false;
  const double saving = 1.0 - static_cast<double>(output_bytes) / static_cast<double>(input_bytes);
  return saving >= options_.min_space_saving;
}

Result<CompressedRegion> BufferCompressor::Compress(const std::shared_ptr<Buffer>& input) {
  CompressedRegion region;
  const int64_t n = input ? input->size() : 0;
  if (n == 0) {
    region.bytes = input;
    return region;  // zero-length region
  }
  const int64_t bound = codec_->MaxCompressedBytes(n);
  const int64_t work_bytes = kRegionPrefixBytes + bound;

  // The buffer the codec writes into: a fresh bound-sized one (keep,
  // shrink-if-halves) or the reusable scratch (exact).
  std::shared_ptr<Buffer> work;
  if (options_.output_policy == OutputPolicy::kExact) {
    if (scratch_ == nullptr || scratch_->capacity_bytes() < work_bytes) {
      scratch_.reset();  // release the small one before taking the big one
      // 16-byte alignment (outputs are only copied out, never read typed)
      // lets glibc shrink the block in place with realloc.
      QUIVER_ASSIGN_OR_RETURN(scratch_, Buffer::Allocate(scratch_pool_, work_bytes, 16));
    }
    work = scratch_;
  } else {
    QUIVER_ASSIGN_OR_RETURN(work, Buffer::Allocate(output_pool_, work_bytes));
  }
  uint8_t* out = work->mutable_data();
  QUIVER_ASSIGN_OR_RETURN(int64_t written,
                          codec_->Compress(input->span(), {out + kRegionPrefixBytes, static_cast<size_t>(bound)}));
  if (!SavesEnough(n, written)) {
    return CompressedRegion::StoredRaw(input);  // `work` (if not the scratch) is released here
  }
  EncodeRegionPrefix(n, out);
  const int64_t region_bytes = kRegionPrefixBytes + written;
  region.prefix_in_bytes = true;

  switch (options_.output_policy) {
    case OutputPolicy::kKeep:
      QUIVER_RETURN_NOT_OK(work->Resize(region_bytes, /*shrink_to_fit=*/false));
      region.bytes = std::move(work);
      return region;
    case OutputPolicy::kShrinkIfHalves: {
      QUIVER_RETURN_NOT_OK(work->Resize(region_bytes, /*shrink_to_fit=*/false));
      const int64_t granted = GrantedBytes(output_pool_->rounding(), region_bytes);
      if (granted <= work->capacity_bytes() / 2) {
        auto copy = Buffer::CopyOf(output_pool_, work->span());
        if (copy.ok()) {
          region.bytes = std::move(copy).value();
          return region;  // the big buffer is released here
        }
        // No memory for the smaller buffer: keep the big one; the output is
        // complete, so only the saving is given up.
      }
      region.bytes = std::move(work);
      return region;
    }
    case OutputPolicy::kExact: {
      if (region_bytes * 2 >= work->capacity_bytes()) {
        // A poorly compressible buffer: copying would cost a memcpy of most
        // of the scratch plus fresh pages for the copy. Hand the scratch
        // over instead, shrunk to the output's size (in place where the
        // allocator can: glibc realloc, jemalloc xallocx, munmap of an mmap
        // tail; otherwise the allocator moves it), and make a new scratch on
        // the next call.
        if (!work->Resize(region_bytes, /*shrink_to_fit=*/true).ok()) {
          QUIVER_RETURN_NOT_OK(work->Resize(region_bytes, /*shrink_to_fit=*/false));
        }
        region.bytes = std::move(work);
        scratch_.reset();
        return region;
      }
      auto exact = Buffer::Allocate(output_pool_, region_bytes);
      if (exact.ok()) {
        std::memcpy((*exact)->mutable_data(), out, static_cast<size_t>(region_bytes));
        region.bytes = std::move(exact).value();
        return region;
      }
      // No memory for the exact buffer: the scratch becomes the output's
      // buffer and a new scratch is made on the next call.
      QUIVER_RETURN_NOT_OK(work->Resize(region_bytes, /*shrink_to_fit=*/false));
      region.bytes = std::move(work);
      scratch_.reset();
      return region;
    }
  }
  return Status::Invalid("unknown output policy");
}

}  // namespace quiver
