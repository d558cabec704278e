// quiver/compression/codec.cc — LZ4_FRAME and ZSTD over liblz4 / libzstd,
// each with contexts created once per Codec and reused.
//
// Decompression is exact: the input must decode to exactly output.size()
// bytes. Both decoders are bounded by the output span (they never write past
// it) and report Invalid with the byte counts otherwise. Input may hold
// several frames back to back; after the last frame, fewer than 8 zero bytes
// (alignment padding) are tolerated, anything else is Invalid.
#include "quiver/compression/codec.h"

#include <lz4frame.h>
#include <lz4hc.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound, ZSTD_BLOCKSIZE_MAX (exported by libzstd 1.5)
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

namespace quiver {

std::string_view CompressionTypeName(CompressionType type) {
  switch (type) {
    case CompressionType::kNone: return "none";
    case CompressionType::kLz4Frame: return "lz4";
    case CompressionType::kZstd: return "zstd";
  }
  return "unknown";
}

Result<CompressionType> ParseCompressionType(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "none") return CompressionType::kNone;
  if (lower == "lz4" || lower == "lz4_frame") return CompressionType::kLz4Frame;
  if (lower == "zstd") return CompressionType::kZstd;
  return Status::Invalid("unknown compression '" + std::string(name) + "' (expected none, lz4, lz4_frame or zstd)");
}

int Codec::MinLevel(CompressionType type) {
  switch (type) {
    case CompressionType::kLz4Frame: return -1;
    case CompressionType::kZstd: return ZSTD_minCLevel();
    case CompressionType::kNone: break;
  }
  return 0;
}

int Codec::MaxLevel(CompressionType type) {
  switch (type) {
    case CompressionType::kLz4Frame: return LZ4HC_CLEVEL_MAX;
    case CompressionType::kZstd: return ZSTD_maxCLevel();
    case CompressionType::kNone: break;
  }
  return 0;
}

int Codec::DefaultLevel(CompressionType type) {
  switch (type) {
    case CompressionType::kLz4Frame: return 0;
    case CompressionType::kZstd: return 3;
    case CompressionType::kNone: break;
  }
  return 0;
}

namespace {

// Trailing bytes after the last complete frame that are tolerated: fewer than
// 8 zero bytes (padding to the IPC body's 8-byte alignment).
bool IsTolerablePadding(std::span<const uint8_t> rest) {
  return rest.size() < 8 && std::all_of(rest.begin(), rest.end(), [](uint8_t b) { return b == 0; });
}

Status SizeMismatch(std::string_view codec, size_t produced, size_t expected) {
  return Status::Invalid(std::string(codec) + " data decompressed to " + std::to_string(produced) +
                         " bytes, expected " + std::to_string(expected));
}

Status TooLarge(std::string_view codec, size_t expected) {
  return Status::Invalid(std::string(codec) + " data decompresses to more than the expected " +
                         std::to_string(expected) + " bytes");
}

/// a + b, or INT64_MAX when that overflows (bounds only grow).
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_add_overflow(a, b, &out) ? INT64_MAX : out;
}
int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_mul_overflow(a, b, &out) ? INT64_MAX : out;
}

// ------------------------------------------------------------- LZ4_FRAME --

// An LZ4 block of n compressed bytes decodes to at most about 255 * n bytes
// (each match-length extension byte adds 255); the constant covers a block's
// token, offset and last literals.
constexpr int64_t kLz4MaxRatio = 255;
constexpr int64_t kLz4RatioSlack = 64;

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// The most bytes LZ4 frame data can decompress to, from its frame headers
/// and block sizes alone (no decoding): per frame, the header's content size
/// when present, else per block its size (uncompressed blocks) or
/// min(block maximum, 255:1 of its size); skippable frames add nothing.
/// Where the framing does not parse, the coarse 255:1 bound of the whole
/// input (the decoder then reports the corruption).
int64_t Lz4FrameBound(std::span<const uint8_t> in) {
  const int64_t coarse = SaturatingAdd(SaturatingMul(static_cast<int64_t>(in.size()), kLz4MaxRatio), kLz4RatioSlack);
  size_t pos = 0;
  int64_t total = 0;
  bool any_frame = false;
  while (pos < in.size()) {
    const std::span<const uint8_t> rest = in.subspan(pos);
    if (any_frame && IsTolerablePadding(rest)) break;
    if (rest.size() < 4) return coarse;
    const uint32_t magic = Load32(rest.data());
    if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {  // skippable frame
      if (rest.size() < 8) return coarse;
      const uint64_t skip = Load32(rest.data() + 4);
      if (skip > rest.size() - 8) return coarse;
      pos += 8 + static_cast<size_t>(skip);
      any_frame = true;
      continue;
    }
    if (magic != 0x184D2204u || rest.size() < 7) return coarse;
    const uint8_t flg = rest[4];
    const uint8_t bd = rest[5];
    const bool block_checksum = flg & 0x10;
    const bool has_content_size = flg & 0x08;
    const bool content_checksum = flg & 0x04;
    const bool has_dict_id = flg & 0x01;
    const int block_id = (bd >> 4) & 7;
    if ((flg >> 6) != 1 || block_id < 4) return coarse;
    const int64_t block_max = int64_t{1} << (8 + 2 * block_id);  // 64 KiB .. 4 MiB
    size_t header = 7 + (has_content_size ? 8 : 0) + (has_dict_id ? 4 : 0);
    if (rest.size() < header) return coarse;
    uint64_t content_size = 0;
    if (has_content_size) std::memcpy(&content_size, rest.data() + 6, 8);
    size_t at = header;
    int64_t frame_bound = 0;
    for (;;) {
      if (rest.size() - at < 4) return coarse;
      const uint32_t word = Load32(rest.data() + at);
      at += 4;
      if (word == 0) break;  // end mark
      const bool raw = word & 0x80000000u;
      const size_t size = word & 0x7FFFFFFFu;
      if (size > rest.size() - at) return coarse;
      at += size;
      if (block_checksum) {
        if (rest.size() - at < 4) return coarse;
        at += 4;
      }
      const int64_t n = static_cast<int64_t>(size);
      frame_bound = SaturatingAdd(
          frame_bound, raw ? n : std::min(block_max, SaturatingAdd(SaturatingMul(n, kLz4MaxRatio), kLz4RatioSlack)));
    }
    if (content_checksum) {
      if (rest.size() - at < 4) return coarse;
      at += 4;
    }
    if (has_content_size) {
      // liblz4 checks the content size at the frame's end: exact.
      frame_bound = std::min<uint64_t>(static_cast<uint64_t>(frame_bound), content_size);
    }
    total = SaturatingAdd(total, frame_bound);
    pos += at;
    any_frame = true;
  }
  return total;
}

struct Lz4CctxDeleter {
  void operator()(LZ4F_cctx* c) const { LZ4F_freeCompressionContext(c); }
};
struct Lz4DctxDeleter {
  void operator()(LZ4F_dctx* d) const { LZ4F_freeDecompressionContext(d); }
};

class Lz4FrameCodec final : public Codec {
 public:
  Lz4FrameCodec(int level, std::unique_ptr<LZ4F_cctx, Lz4CctxDeleter> cctx,
                std::unique_ptr<LZ4F_dctx, Lz4DctxDeleter> dctx)
      : level_(level), cctx_(std::move(cctx)), dctx_(std::move(dctx)) {
    prefs_.compressionLevel = level;
    prefs_.autoFlush = 1;  // no internal staging copy: blocks go straight to output
  }

  static Result<std::unique_ptr<Codec>> Make(int level) {
    LZ4F_cctx* cctx = nullptr;
    LZ4F_dctx* dctx = nullptr;
    if (LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION))) {
      return Status::OutOfMemory("cannot create an LZ4 frame compression context");
    }
    std::unique_ptr<LZ4F_cctx, Lz4CctxDeleter> cctx_owner(cctx);
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
      return Status::OutOfMemory("cannot create an LZ4 frame decompression context");
    }
    std::unique_ptr<LZ4F_dctx, Lz4DctxDeleter> dctx_owner(dctx);
    return std::unique_ptr<Codec>(std::make_unique<Lz4FrameCodec>(level, std::move(cctx_owner), std::move(dctx_owner)));
  }

  CompressionType type() const override { return CompressionType::kLz4Frame; }
  int level() const override { return level_; }

  int64_t MaxCompressedBytes(int64_t input_bytes) const override {
    return static_cast<int64_t>(
        LZ4F_compressFrameBound(static_cast<size_t>(std::max<int64_t>(input_bytes, 0)), &prefs_));
  }

  Result<int64_t> Compress(std::span<const uint8_t> input, std::span<uint8_t> output) override {
    uint8_t* dst = output.data();
    size_t capacity = output.size();
    size_t n = LZ4F_compressBegin(cctx_.get(), dst, capacity, &prefs_);
    if (LZ4F_isError(n)) return CompressError("frame header", n, input.size(), output.size());
    size_t written = n;
    n = LZ4F_compressUpdate(cctx_.get(), dst + written, capacity - written, input.data(), input.size(), nullptr);
    if (LZ4F_isError(n)) return CompressError("blocks", n, input.size(), output.size());
    written += n;
    n = LZ4F_compressEnd(cctx_.get(), dst + written, capacity - written, nullptr);
    if (LZ4F_isError(n)) return CompressError("frame end", n, input.size(), output.size());
    written += n;
    return static_cast<int64_t>(written);
  }

  int64_t MaxDecompressedBytes(std::span<const uint8_t> input) const override { return Lz4FrameBound(input); }

  Status Decompress(std::span<const uint8_t> input, std::span<uint8_t> output) override {
    // A context left mid-frame by an earlier error must start clean.
    LZ4F_resetDecompressionContext(dctx_.get());
    // liblz4 does pointer arithmetic on its buffers: never hand it null.
    uint8_t empty_output;
    uint8_t* const out_base = output.empty() ? &empty_output : output.data();
    size_t in_pos = 0;
    size_t out_pos = 0;
    size_t hint = 0;  // 0 = at a frame boundary
    bool decoded_a_frame = false;
    while (in_pos < input.size()) {
      if (hint == 0 && decoded_a_frame && IsTolerablePadding(input.subspan(in_pos))) break;
      size_t src_size = input.size() - in_pos;
      size_t dst_size = output.size() - out_pos;
      hint = LZ4F_decompress(dctx_.get(), out_base + out_pos, &dst_size, input.data() + in_pos, &src_size, nullptr);
      if (LZ4F_isError(hint)) {
        LZ4F_resetDecompressionContext(dctx_.get());
        return Status::Invalid("corrupt LZ4 frame data near input byte " + std::to_string(in_pos) + " of " +
                               std::to_string(input.size()) + ": " + LZ4F_getErrorName(hint));
      }
      in_pos += src_size;
      out_pos += dst_size;
      if (hint == 0) decoded_a_frame = true;
      if (src_size == 0 && dst_size == 0) {
        // No progress: only possible when the output is full and the frame
        // still has bytes to produce.
        LZ4F_resetDecompressionContext(dctx_.get());
        if (out_pos == output.size()) return TooLarge("LZ4 frame", output.size());
        return Status::Invalid("LZ4 frame decoder made no progress at input byte " + std::to_string(in_pos));
      }
    }
    if (hint != 0) {
      LZ4F_resetDecompressionContext(dctx_.get());
      if (out_pos == output.size()) return TooLarge("LZ4 frame", output.size());
      return Status::Invalid("truncated LZ4 frame: input ends inside a frame after " + std::to_string(out_pos) +
                             " decompressed bytes (expected " + std::to_string(output.size()) + ")");
    }
    if (out_pos != output.size()) return SizeMismatch("LZ4 frame", out_pos, output.size());
    return Status::OK();
  }

 private:
  Status CompressError(std::string_view stage, size_t code, size_t input_bytes, size_t output_bytes) const {
    const std::string_view name = LZ4F_getErrorName(code);
    if (name.find("dstMaxSize_tooSmall") != std::string_view::npos) {
      return Status::Invalid("LZ4 frame compression: output too small (" + std::to_string(output_bytes) +
                             " bytes for " + std::to_string(input_bytes) + " input bytes; bound " +
                             std::to_string(MaxCompressedBytes(static_cast<int64_t>(input_bytes))) + ")");
    }
    return Status::Invalid("LZ4 frame compression failed (" + std::string(stage) + "): " + std::string(name));
  }

  int level_;
  LZ4F_preferences_t prefs_{};
  std::unique_ptr<LZ4F_cctx, Lz4CctxDeleter> cctx_;
  std::unique_ptr<LZ4F_dctx, Lz4DctxDeleter> dctx_;
};

// ------------------------------------------------------------------ ZSTD --

struct ZstdCctxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDctxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

class ZstdCodec final : public Codec {
 public:
  ZstdCodec(int level, std::unique_ptr<ZSTD_CCtx, ZstdCctxDeleter> cctx,
            std::unique_ptr<ZSTD_DCtx, ZstdDctxDeleter> dctx)
      : level_(level), cctx_(std::move(cctx)), dctx_(std::move(dctx)) {}

  static Result<std::unique_ptr<Codec>> Make(int level) {
    std::unique_ptr<ZSTD_CCtx, ZstdCctxDeleter> cctx(ZSTD_createCCtx());
    if (cctx == nullptr) return Status::OutOfMemory("cannot create a ZSTD compression context");
    std::unique_ptr<ZSTD_DCtx, ZstdDctxDeleter> dctx(ZSTD_createDCtx());
    if (dctx == nullptr) return Status::OutOfMemory("cannot create a ZSTD decompression context");
    return std::unique_ptr<Codec>(std::make_unique<ZstdCodec>(level, std::move(cctx), std::move(dctx)));
  }

  CompressionType type() const override { return CompressionType::kZstd; }
  int level() const override { return level_; }

  int64_t MaxCompressedBytes(int64_t input_bytes) const override {
    return static_cast<int64_t>(ZSTD_compressBound(static_cast<size_t>(std::max<int64_t>(input_bytes, 0))));
  }

  Result<int64_t> Compress(std::span<const uint8_t> input, std::span<uint8_t> output) override {
    const size_t n = ZSTD_compressCCtx(cctx_.get(), output.data(), output.size(), input.data(), input.size(), level_);
    if (ZSTD_isError(n)) {
      if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall) {
        return Status::Invalid("ZSTD compression: output too small (" + std::to_string(output.size()) + " bytes for " +
                               std::to_string(input.size()) + " input bytes; bound " +
                               std::to_string(ZSTD_compressBound(input.size())) + ")");
      }
      return Status::Invalid(std::string("ZSTD compression failed: ") + ZSTD_getErrorName(n));
    }
    return static_cast<int64_t>(n);
  }

  /// Per frame: the header's content size when present, else
  /// ZSTD_decompressBound of the frame (blocks x 128 KiB); skippable frames
  /// add nothing. Where the framing does not parse, the coarse bound of
  /// 128 KiB per 4 input bytes (an RLE block); the decoder then reports the
  /// corruption.
  int64_t MaxDecompressedBytes(std::span<const uint8_t> input) const override {
    const int64_t coarse = SaturatingMul(static_cast<int64_t>(input.size() / 4 + 1), ZSTD_BLOCKSIZE_MAX);
    size_t pos = 0;
    int64_t total = 0;
    bool any_frame = false;
    while (pos < input.size()) {
      const std::span<const uint8_t> rest = input.subspan(pos);
      if (any_frame && IsTolerablePadding(rest)) break;
      const size_t frame_bytes = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
      if (ZSTD_isError(frame_bytes) || frame_bytes == 0) return coarse;
      const unsigned long long content = ZSTD_getFrameContentSize(rest.data(), frame_bytes);
      unsigned long long bound = content;
      if (content == ZSTD_CONTENTSIZE_ERROR) {
        return coarse;
      } else if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
        bound = ZSTD_decompressBound(rest.data(), frame_bytes);
        if (bound == ZSTD_CONTENTSIZE_ERROR) return coarse;
      }
      total = SaturatingAdd(
          total, bound > static_cast<unsigned long long>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bound));
      pos += frame_bytes;
      any_frame = true;
    }
    return total;
  }

  Status Decompress(std::span<const uint8_t> input, std::span<uint8_t> output) override {
    size_t in_pos = 0;
    size_t out_pos = 0;
    bool decoded_a_frame = false;
    while (in_pos < input.size()) {
      const std::span<const uint8_t> rest = input.subspan(in_pos);
      if (decoded_a_frame && IsTolerablePadding(rest)) break;
      const size_t frame_bytes = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
      if (ZSTD_isError(frame_bytes)) {
        return Status::Invalid("corrupt ZSTD data at input byte " + std::to_string(in_pos) + " of " +
                               std::to_string(input.size()) + ": " + ZSTD_getErrorName(frame_bytes));
      }
      const std::span<const uint8_t> frame = rest.first(frame_bytes);
      const std::span<uint8_t> room = output.subspan(out_pos);
      const unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
      if (content == ZSTD_CONTENTSIZE_ERROR) {
        return Status::Invalid("corrupt ZSTD frame header at input byte " + std::to_string(in_pos));
      }
      size_t produced = 0;
      if (content != ZSTD_CONTENTSIZE_UNKNOWN) {
        if (content > room.size()) return TooLarge("ZSTD", output.size());
        produced =
            ZSTD_decompressDCtx(dctx_.get(), room.data(), static_cast<size_t>(content), frame.data(), frame.size());
        if (ZSTD_isError(produced)) {
          return Status::Invalid("corrupt ZSTD frame at input byte " + std::to_string(in_pos) + ": " +
                                 ZSTD_getErrorName(produced));
        }
      } else {
        QUIVER_ASSIGN_OR_RETURN(produced, DecompressUnknownSize(frame, room, output.size()));
      }
      in_pos += frame_bytes;
      out_pos += produced;
      decoded_a_frame = true;
    }
    if (out_pos != output.size()) return SizeMismatch("ZSTD", out_pos, output.size());
    return Status::OK();
  }

 private:
  // Streams one frame without a declared content size into `room`; returns
  // the bytes produced. Invalid when the frame would produce more than fits.
  Result<size_t> DecompressUnknownSize(std::span<const uint8_t> frame, std::span<uint8_t> room, size_t expected_total) {
    ZSTD_DCtx_reset(dctx_.get(), ZSTD_reset_session_only);
    ZSTD_inBuffer in{frame.data(), frame.size(), 0};
    ZSTD_outBuffer out{room.data(), room.size(), 0};
    while (true) {
      const size_t in_before = in.pos;
      const size_t out_before = out.pos;
      const size_t ret = ZSTD_decompressStream(dctx_.get(), &out, &in);
      if (ZSTD_isError(ret)) {
        ZSTD_DCtx_reset(dctx_.get(), ZSTD_reset_session_only);
        return Status::Invalid(std::string("corrupt ZSTD frame: ") + ZSTD_getErrorName(ret));
      }
      if (ret == 0) return out.pos;  // frame complete
      if (in.pos == in_before && out.pos == out_before) {
        ZSTD_DCtx_reset(dctx_.get(), ZSTD_reset_session_only);
        // Stuck with a full output: the frame holds more bytes than fit.
        if (out.pos == out.size) return TooLarge("ZSTD", expected_total);
        return Status::Invalid("truncated ZSTD frame: input ends inside a frame");
      }
    }
  }

  int level_;
  std::unique_ptr<ZSTD_CCtx, ZstdCctxDeleter> cctx_;
  std::unique_ptr<ZSTD_DCtx, ZstdDctxDeleter> dctx_;
};

}  // namespace

Result<std::unique_ptr<Codec>> Codec::Make(CompressionType type, int level) {
  if (type != CompressionType::kLz4Frame && type != CompressionType::kZstd) {
    return Status::Invalid("no codec for compression type '" + std::string(CompressionTypeName(type)) + "'");
  }
  if (level == kUseDefaultLevel) level = DefaultLevel(type);
  if (level < MinLevel(type) || level > MaxLevel(type)) {
    return Status::Invalid(std::string(CompressionTypeName(type)) + " compression level " + std::to_string(level) +
                           " is outside the valid range [" + std::to_string(MinLevel(type)) + ", " +
                           std::to_string(MaxLevel(type)) + "]");
  }
  if (type == CompressionType::kLz4Frame) return Lz4FrameCodec::Make(level);
  return ZstdCodec::Make(level);
}

}  // namespace quiver
