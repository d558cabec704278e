// The one body-region rule (body_region.h): a table of regions, each with
// its expected outcome — length < 8, -1 (raw), negative, over the ratio,
// over the maximum, over the codec's bound, over the pool's room, ok — plus
// the encode side writing the prefix the decode side reads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "quiver/compression/body_compressor.h"
#include "quiver/compression/body_region.h"

namespace quiver {
namespace {

// A body holding one region: `prefix` (8 bytes, unless `cut` shortens the
// region) then `payload`.
std::shared_ptr<Buffer> Body(MemoryPool* pool, int64_t prefix, const std::vector<uint8_t>& payload) {
  auto b = *Buffer::Allocate(pool, kRegionPrefixBytes + static_cast<int64_t>(payload.size()));
  EncodeRegionPrefix(prefix, b->mutable_data());
  if (!payload.empty()) std::memcpy(b->mutable_data() + kRegionPrefixBytes, payload.data(), payload.size());
  return b;
}

std::vector<uint8_t> Compressed(Codec& codec, const std::vector<uint8_t>& input) {
  std::vector<uint8_t> out(static_cast<size_t>(codec.MaxCompressedBytes(static_cast<int64_t>(input.size()))));
  auto n = codec.Compress(input, out);
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  out.resize(static_cast<size_t>(*n));
  return out;
}

enum class Outcome { kOk, kRaw, kInvalid, kOutOfMemory };

struct RegionCase {
  std::string name;
  int64_t prefix;           // what the region's prefix says
  bool compressed_payload;  // payload = the frame of 4096 zero bytes (else 5 raw bytes)
  int64_t length_override;  // region length to decode; -1 = the whole body
  RegionLimits limits;
  int64_t pool_limit;  // -1 = none
  Outcome outcome;
  std::string message;  // a part of the error text ("" for ok / raw)
};

TEST(BodyRegionTest, TableOfRegionRules) {
  auto codec = *Codec::Make(CompressionType::kZstd);
  const std::vector<uint8_t> zeros(4096, 0);
  const std::vector<uint8_t> frame = Compressed(*codec, zeros);
  const std::vector<uint8_t> raw = {1, 2, 3, 4, 5};
  const RegionLimits defaults;
  const RegionLimits small_max{1000, 100000};
  const RegionLimits small_ratio{int64_t{1} << 30, 2};
  const std::vector<RegionCase> cases = {
      {"shorter than the prefix", 4096, true, 7, defaults, -1, Outcome::kInvalid,
       "here: compressed region of 7 bytes is shorter than its 8-byte length prefix"},
      {"stored raw (-1)", kRawRegionPrefix, false, -1, defaults, -1, Outcome::kRaw, ""},
      {"raw with nothing after the prefix", kRawRegionPrefix, false, 8, defaults, -1, Outcome::kRaw, ""},
      {"negative", -2, true, -1, defaults, -1, Outcome::kInvalid, "here: negative uncompressed length -2"},
      {"over the maximum", 4096, true, -1, small_max, -1, Outcome::kInvalid,
       "here: uncompressed length 4096 exceeds the limit of 1000 bytes"},
      {"over the ratio", 4096, true, -1, small_ratio, -1, Outcome::kInvalid,
       "here: uncompressed length 4096 is over 2 times the compressed"},
      {"over what the frame can produce", int64_t{1} << 40, true, -1, RegionLimits{int64_t{1} << 50, int64_t{1} << 40},
       -1, Outcome::kInvalid, "zstd data can produce (at most"},
      {"over the pool's room", 4096, true, -1, defaults, 1024, Outcome::kOutOfMemory, "here: decompressing"},
      {"ok", 4096, true, -1, defaults, -1, Outcome::kOk, ""},
      {"ok at exactly the pool's room", 4096, true, -1, defaults, 4096, Outcome::kOk, ""},
      {"prefix smaller than the content", 100, true, -1, defaults, -1, Outcome::kInvalid, "here (zstd)"},
  };
  for (const RegionCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto bodies = MemoryPool::MakeRoot({"bodies"});
    auto pool = MemoryPool::MakeRoot({"decoded", c.pool_limit});
    auto body = Body(bodies.get(), c.prefix, c.compressed_payload ? frame : raw);
    const int64_t length = c.length_override >= 0 ? c.length_override : body->size();
    {
      auto r = DecodeRegion(body, 0, length, *codec, c.limits, pool.get(), "here");
      switch (c.outcome) {
        case Outcome::kOk:
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          EXPECT_TRUE(r->decompressed);
          ASSERT_EQ(r->bytes->size(), 4096);
          EXPECT_EQ(0, std::memcmp(r->bytes->data(), zeros.data(), zeros.size()));
          EXPECT_EQ(pool->held_bytes(), r->bytes->capacity_bytes());
          break;
        case Outcome::kRaw:
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          EXPECT_FALSE(r->decompressed);
          EXPECT_EQ(r->bytes->size(), length - kRegionPrefixBytes);
          EXPECT_EQ(r->bytes->data(), body->data() + kRegionPrefixBytes);  // shared, not copied
          EXPECT_EQ(pool->held_bytes(), 0);
          break;
        case Outcome::kInvalid:
        case Outcome::kOutOfMemory:
          ASSERT_FALSE(r.ok());
          EXPECT_EQ(r.status().IsOutOfMemory(), c.outcome == Outcome::kOutOfMemory) << r.status().ToString();
          EXPECT_EQ(r.status().IsInvalid(), c.outcome == Outcome::kInvalid) << r.status().ToString();
          EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().ToString();
          break;
      }
    }
    EXPECT_EQ(pool->held_bytes(), 0);  // nothing stays allocated once the result is gone
  }
}

TEST(BodyRegionTest, OutOfMemoryNamesThePoolAndItsRoom) {
  auto codec = *Codec::Make(CompressionType::kZstd);
  const std::vector<uint8_t> frame = Compressed(*codec, std::vector<uint8_t>(4096, 0));
  auto bodies = MemoryPool::MakeRoot({"bodies"});
  auto root = MemoryPool::MakeRoot({"root", 1024});
  auto child = root->MakeChild({"child"});
  auto body = Body(bodies.get(), 4096, frame);
  auto r = DecodeRegion(body, 0, body->size(), *codec, RegionLimits{}, child.get(), "here");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "here: decompressing " + std::to_string(frame.size()) +
                                      " bytes of zstd needs 4096 bytes but pool 'root' has 1024 bytes available "
                                      "(held 0 of limit 1024)");
}

TEST(BodyRegionTest, EncodedPrefixesDecode) {
  auto pool = MemoryPool::MakeRoot({"p"});
  BodyCompressionOptions o;
  o.codec = CompressionType::kLz4Frame;
  auto compressor = *BufferCompressor::Make(o, pool.get());
  auto input = *Buffer::AllocateZeroed(pool.get(), 10000);
  auto region = *compressor->Compress(input);
  ASSERT_TRUE(region.prefix_in_bytes);
  auto codec = *Codec::Make(CompressionType::kLz4Frame);
  auto decoded = DecodeRegion(region.bytes, 0, region.bytes->size(), *codec, RegionLimits{}, pool.get(), "x");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->bytes->size(), 10000);

  const CompressedRegion raw = CompressedRegion::StoredRaw(input);
  EXPECT_TRUE(raw.raw);
  EXPECT_EQ(raw.region_bytes(), kRegionPrefixBytes + 10000);
  EXPECT_EQ(raw.held_bytes(), 0);
}

}  // namespace
}  // namespace quiver
