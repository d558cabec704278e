// Output policies of the BufferCompressor (issue: memory-lean compression):
// (a) a much smaller output moves to a buffer of its size and the big one is
//     released; (b) shrink-if-halves does not copy an output that would not
//     at least halve its buffer; (c) with no memory for the right-sized
//     buffer the output stays where it is and the call succeeds; plus level
//     validation and identical bytes across policies.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "quiver/base/bit_util.h"
#include "quiver/compression/body_compressor.h"
#include "quiver/memory/allocator.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

std::shared_ptr<Buffer> Zeros(MemoryPool* pool, int64_t n) {
  auto b = *Buffer::AllocateZeroed(pool, n);
  return b;
}

// Bytes that compress to roughly 70-80% of their size: random low nibbles.
std::shared_ptr<Buffer> Noisy(MemoryPool* pool, int64_t n) {
  auto b = *Buffer::Allocate(pool, n);
  std::mt19937 rng(7);
  for (int64_t i = 0; i < n; ++i) b->mutable_data()[i] = static_cast<uint8_t>(rng() & 0x3F);
  return b;
}

struct Rig {
  std::shared_ptr<MemoryPool> root = MemoryPool::MakeRoot({});
  std::shared_ptr<MemoryPool> inputs = root->MakeChild({"inputs"});
  std::shared_ptr<MemoryPool> outputs;
  std::unique_ptr<BufferCompressor> compressor;
  Rig(OutputPolicy policy, CompressionType codec = CompressionType::kZstd,
      RoundingPolicy rounding = RoundingPolicy::kPowerOfTwo, int64_t limit = -1) {
    outputs = root->MakeChild({"outputs", limit, rounding});
    BodyCompressionOptions o;
    o.codec = codec;
    o.output_policy = policy;
    compressor = *BufferCompressor::Make(o, outputs.get());
  }
};

int64_t Bound(CompressionType codec, int64_t n) {
  auto c = *Codec::Make(codec);
  return c->MaxCompressedBytes(n);
}

class EveryCodec : public ::testing::TestWithParam<CompressionType> {};

TEST_P(EveryCodec, KeepHoldsTheWorstCaseBuffer) {
  Rig rig(OutputPolicy::kKeep, GetParam());
  auto in = Zeros(rig.inputs.get(), 1 << 20);
  auto region = *rig.compressor->Compress(in);
  ASSERT_TRUE(region.prefix_in_bytes);
  EXPECT_LT(region.region_bytes(), 20000);
  const int64_t big = GrantedBytes(RoundingPolicy::kPowerOfTwo, 8 + Bound(GetParam(), 1 << 20));
  EXPECT_EQ(region.held_bytes(), big);
  EXPECT_EQ(rig.outputs->held_bytes(), big);
}

TEST_P(EveryCodec, SmallOutputMovesToItsOwnSizeAndTheBigBufferIsReleased) {
  for (OutputPolicy policy : {OutputPolicy::kShrinkIfHalves, OutputPolicy::kExact}) {
    Rig rig(policy, GetParam());
    auto in = Zeros(rig.inputs.get(), 1 << 20);
    auto region = *rig.compressor->Compress(in);
    ASSERT_TRUE(region.prefix_in_bytes);
    const int64_t own = GrantedBytes(RoundingPolicy::kPowerOfTwo, region.region_bytes());
    EXPECT_EQ(region.held_bytes(), own) << OutputPolicyName(policy);
    rig.compressor->ReleaseScratch();
    EXPECT_EQ(rig.outputs->held_bytes(), own) << OutputPolicyName(policy);  // the big buffer is gone
    const int64_t big = GrantedBytes(RoundingPolicy::kPowerOfTwo, 8 + Bound(GetParam(), 1 << 20));
    EXPECT_LT(own * 10, big);
    // The prefix is the uncompressed length.
    EXPECT_EQ(bit_util::LoadLE<int64_t>(region.bytes->data()), 1 << 20);
  }
}

TEST(BodyCompressor, ShrinkIfHalvesKeepsAnOutputThatWouldNotHalveItsBuffer) {
  Rig rig(OutputPolicy::kShrinkIfHalves, CompressionType::kZstd, RoundingPolicy::kExact);
  auto in = Noisy(rig.inputs.get(), 1 << 20);
  rig.outputs->ResetPeak();
  auto region = *rig.compressor->Compress(in);
  ASSERT_TRUE(region.prefix_in_bytes);
  const int64_t big = 8 + Bound(CompressionType::kZstd, 1 << 20);
  ASSERT_GT(region.region_bytes() * 2, big) << "the input must compress to more than half";
  EXPECT_EQ(region.held_bytes(), big);        // not copied
  EXPECT_EQ(rig.outputs->peak_bytes(), big);  // so the peak did not grow
}

TEST(BodyCompressor, ExactHandsThePoorlyCompressedScratchOverShrunkToSize) {
  for (auto allocator : {AllocatorKind::kSystem, AllocatorKind::kJemalloc, AllocatorKind::kMmap}) {
    auto root = MemoryPool::MakeRoot({"root", -1, RoundingPolicy::kExact, *GetAllocator(allocator)});
    auto outputs = root->MakeChild({"outputs"});
    BodyCompressionOptions o;
    o.codec = CompressionType::kZstd;
    o.output_policy = OutputPolicy::kExact;
    auto compressor = *BufferCompressor::Make(o, outputs.get());
    auto in = Noisy(root.get(), 4 << 20);
    auto region = *compressor->Compress(in);
    ASSERT_TRUE(region.prefix_in_bytes);
    ASSERT_GT(region.region_bytes() * 2, 8 + Bound(CompressionType::kZstd, 4 << 20));
    EXPECT_EQ(compressor->scratch_bytes(), 0) << "the scratch became the output";
    EXPECT_EQ(region.held_bytes(), region.region_bytes()) << AllocatorKindName(allocator);
    EXPECT_EQ(outputs->held_bytes(), region.region_bytes()) << AllocatorKindName(allocator);
    // The next buffer gets a new scratch and the output stays intact.
    auto second = *compressor->Compress(in);
    EXPECT_EQ(std::memcmp(region.bytes->data(), second.bytes->data(), static_cast<size_t>(region.region_bytes())), 0);
  }
}

TEST_P(EveryCodec, NoMemoryForTheRightSizedBufferKeepsTheOutputAndSucceeds) {
  for (OutputPolicy policy : {OutputPolicy::kShrinkIfHalves, OutputPolicy::kExact}) {
    Rig rig(policy, GetParam());
    auto in = Zeros(rig.inputs.get(), 1 << 20);
    rig.outputs->InjectFailureAt(2);  // 1: the work buffer, 2: the right-sized copy
    auto region = rig.compressor->Compress(in);
    rig.outputs->InjectFailureAt(0);
    ASSERT_OK(region) << OutputPolicyName(policy);
    const int64_t big = GrantedBytes(RoundingPolicy::kPowerOfTwo, 8 + Bound(GetParam(), 1 << 20));
    EXPECT_EQ(region->held_bytes(), big) << OutputPolicyName(policy);
    // The output is complete and decodes.
    auto codec = *Codec::Make(GetParam());
    std::vector<uint8_t> back(1 << 20, 1);
    ASSERT_TRUE(codec
                    ->Decompress({region->bytes->data() + 8, static_cast<size_t>(region->region_bytes() - 8)},
                                 {back.data(), back.size()})
                    .ok());
    EXPECT_EQ(back, std::vector<uint8_t>(1 << 20, 0));
    // Everything goes back when the region goes.
    region = Status::Cancelled("dropped");
    rig.compressor->ReleaseScratch();
    EXPECT_EQ(rig.outputs->held_bytes(), 0);
  }
}

TEST_P(EveryCodec, PoliciesProduceIdenticalRegions) {
  auto pool = MemoryPool::MakeRoot({});
  std::vector<std::shared_ptr<Buffer>> inputs = {Zeros(pool.get(), 100000), Noisy(pool.get(), 300000),
                                                 Zeros(pool.get(), 0), Noisy(pool.get(), 17)};
  std::vector<std::vector<uint8_t>> reference;
  for (OutputPolicy policy : {OutputPolicy::kKeep, OutputPolicy::kShrinkIfHalves, OutputPolicy::kExact}) {
    Rig rig(policy, GetParam());
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto r = *rig.compressor->Compress(inputs[i]);
      std::vector<uint8_t> bytes;
      if (r.raw) {
        bytes.assign(8, 0xFF);
      }
      if (r.bytes) bytes.insert(bytes.end(), r.bytes->data(), r.bytes->data() + r.bytes->size());
      EXPECT_EQ(static_cast<int64_t>(bytes.size()), r.region_bytes());
      if (policy == OutputPolicy::kKeep) {
        reference.push_back(bytes);
      } else {
        EXPECT_EQ(bytes, reference[i]) << OutputPolicyName(policy) << " input " << i;
      }
    }
  }
  EXPECT_TRUE(reference[2].empty());         // a zero-length buffer stays a zero-length region
  EXPECT_EQ(reference[3].size(), 8u + 17u);  // 17 noisy bytes do not compress: -1 + raw
}

INSTANTIATE_TEST_SUITE_P(Codecs, EveryCodec, ::testing::Values(CompressionType::kZstd, CompressionType::kLz4Frame));

TEST(BodyCompressor, OptionsAreCheckedWhenMade) {
  auto pool = MemoryPool::MakeRoot({});
  BodyCompressionOptions o;
  o.codec = CompressionType::kZstd;
  o.level = 23;
  auto r = BufferCompressor::Make(o, pool.get());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("22]"), std::string::npos) << r.status().ToString();
  o.level = Codec::kUseDefaultLevel;
  o.min_space_saving = 1.5;
  EXPECT_FALSE(BufferCompressor::Make(o, pool.get()).ok());
  o.min_space_saving = 0;
  o.codec = CompressionType::kNone;
  EXPECT_FALSE(BufferCompressor::Make(o, pool.get()).ok());
  o.codec = CompressionType::kZstd;
  EXPECT_EQ((*BufferCompressor::Make(o, pool.get()))->level(), 3);
  EXPECT_EQ(*ParseOutputPolicy("shrink-if-halves"), OutputPolicy::kShrinkIfHalves);
  EXPECT_FALSE(ParseOutputPolicy("tight").ok());
}

}  // namespace
}  // namespace quiver
