#include "quiver/formats/parquet/decompress.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <string>

#include "quiver/formats/parquet/metadata.h"

namespace quiver::parquet {
namespace {

Status SizeMismatch(const char* codec, size_t got, size_t want) {
  return Status::Invalid(std::string(codec) + " page decompressed to " + std::to_string(got) +
                         " bytes, the header says " + std::to_string(want));
}

Status Snappy(std::span<const uint8_t> in, std::span<uint8_t> out) {
  size_t n = 0;
  const char* src = reinterpret_cast<const char*>(in.data());
  if (!snappy::GetUncompressedLength(src, in.size(), &n)) return Status::Invalid("SNAPPY: corrupt length header");
  if (n != out.size()) return SizeMismatch("SNAPPY", n, out.size());
  if (!snappy::RawUncompress(src, in.size(), reinterpret_cast<char*>(out.data()))) {
    return Status::Invalid("SNAPPY: corrupt data");
  }
  return Status::OK();
}

Status Gzip(std::span<const uint8_t> in, std::span<uint8_t> out) {
  size_t in_pos = 0, out_pos = 0;
  // One inflate per member (RFC 1952 allows several members back to back).
  while (in_pos < in.size()) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return Status::Invalid("GZIP: inflateInit2 failed");
    z.next_in = const_cast<Bytef*>(in.data() + in_pos);
    z.avail_in = static_cast<uInt>(in.size() - in_pos);
    z.next_out = out.data() + out_pos;
    z.avail_out = static_cast<uInt>(out.size() - out_pos);
    const int rc = inflate(&z, Z_FINISH);
    const size_t used_in = in.size() - in_pos - z.avail_in;
    const size_t produced = out.size() - out_pos - z.avail_out;
    inflateEnd(&z);
    if (rc == Z_BUF_ERROR && z.avail_out == 0) {
      return Status::Invalid("GZIP: page decompresses to more than the header's " + std::to_string(out.size()) +
                             " bytes");
    }
    if (rc != Z_STREAM_END) {
      return Status::Invalid(std::string("GZIP: corrupt data (") + (z.msg ? z.msg : "truncated") + ")");
    }
    in_pos += used_in;
    out_pos += produced;
    if (out_pos == out.size()) break;  // trailing bytes after the last member are ignored
    if (used_in == 0) break;
  }
  if (out_pos != out.size()) return SizeMismatch("GZIP", out_pos, out.size());
  return Status::OK();
}

Status Zstd(std::span<const uint8_t> in, std::span<uint8_t> out) {
  const size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) return Status::Invalid(std::string("ZSTD: ") + ZSTD_getErrorName(n));
  if (n != out.size()) return SizeMismatch("ZSTD", n, out.size());
  return Status::OK();
}

Status Brotli(std::span<const uint8_t> in, std::span<uint8_t> out) {
  size_t n = out.size();
  if (BrotliDecoderDecompress(in.size(), in.data(), &n, out.data()) != BROTLI_DECODER_RESULT_SUCCESS) {
    return Status::Invalid("BROTLI: corrupt data or larger than the header's " + std::to_string(out.size()) + " bytes");
  }
  if (n != out.size()) return SizeMismatch("BROTLI", n, out.size());
  return Status::OK();
}

Status Lz4Raw(std::span<const uint8_t> in, std::span<uint8_t> out) {
  if (in.size() > INT32_MAX || out.size() > INT32_MAX) return Status::Invalid("LZ4_RAW: page over 2 GiB");
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                    static_cast<int>(in.size()), static_cast<int>(out.size()));
  if (n < 0) return Status::Invalid("LZ4_RAW: corrupt data");
  if (static_cast<size_t>(n) != out.size()) return SizeMismatch("LZ4_RAW", static_cast<size_t>(n), out.size());
  return Status::OK();
}

uint32_t LoadBE32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

/// Hadoop's framing; false when the bytes do not parse as it exactly.
bool HadoopLz4(std::span<const uint8_t> in, std::span<uint8_t> out) {
  size_t in_pos = 0, out_pos = 0;
  while (in_pos < in.size()) {
    if (in.size() - in_pos < 8) return false;
    const uint32_t raw = LoadBE32(in.data() + in_pos), packed = LoadBE32(in.data() + in_pos + 4);
    in_pos += 8;
    if (packed > in.size() - in_pos || raw > out.size() - out_pos || packed > INT32_MAX || raw > INT32_MAX) {
      return false;
    }
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + in_pos),
                                      reinterpret_cast<char*>(out.data() + out_pos), static_cast<int>(packed),
                                      static_cast<int>(raw));
    if (n < 0 || static_cast<uint32_t>(n) != raw) return false;
    in_pos += packed;
    out_pos += raw;
  }
  return out_pos == out.size();
}

bool Lz4Frame(std::span<const uint8_t> in, std::span<uint8_t> out) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) return false;
  size_t in_pos = 0, out_pos = 0;
  bool ok = false;
  while (true) {
    size_t dst = out.size() - out_pos, src = in.size() - in_pos;
    const size_t rc = LZ4F_decompress(ctx, out.data() + out_pos, &dst, in.data() + in_pos, &src, nullptr);
    if (LZ4F_isError(rc)) break;
    in_pos += src;
    out_pos += dst;
    if (rc == 0) {
      ok = out_pos == out.size();
      break;
    }
    if (src == 0 && dst == 0) break;
  }
  LZ4F_freeDecompressionContext(ctx);
  return ok;
}

Status Lz4Hadoop(std::span<const uint8_t> in, std::span<uint8_t> out) {
  if (HadoopLz4(in, out)) return Status::OK();
  if (in.size() >= 4 && LoadBE32(in.data()) == 0x04224d18u && Lz4Frame(in, out)) return Status::OK();
  if (Lz4Raw(in, out).ok()) return Status::OK();
  return Status::Invalid("LZ4: the page is neither Hadoop-framed LZ4, an LZ4 frame nor an LZ4 block of " +
                         std::to_string(out.size()) + " bytes");
}

}  // namespace

Status Decompress(int32_t codec, std::span<const uint8_t> in, std::span<uint8_t> out) {
  switch (static_cast<Codec>(codec)) {
    case Codec::kUncompressed:
      if (in.size() != out.size()) return SizeMismatch("UNCOMPRESSED", in.size(), out.size());
      if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
      return Status::OK();
    case Codec::kSnappy: return Snappy(in, out);
    case Codec::kGzip: return Gzip(in, out);
    case Codec::kBrotli: return Brotli(in, out);
    case Codec::kZstd: return Zstd(in, out);
    case Codec::kLz4Raw: return Lz4Raw(in, out);
    case Codec::kLz4: return Lz4Hadoop(in, out);
    case Codec::kLzo: break;
  }
  return Status::NotImplemented("compression codec " + CodecName(codec));
}

}  // namespace quiver::parquet
