#include "quiver/compression/codec.h"
#include "quiver/testing/status_assertions.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <zstd.h>

#include <random>
#include <string>
#include <vector>

namespace quiver {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Compressible(size_t n) {
  Bytes out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>((i / 7) % 13 + (i % 3 == 0 ? 'a' : 'A'));
  return out;
}

Bytes Random(size_t n, uint32_t seed = 42) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

std::unique_ptr<Codec> MakeCodec(CompressionType type, int level = Codec::kUseDefaultLevel) {
  Result<std::unique_ptr<Codec>> codec = Codec::Make(type, level);
  EXPECT_OK(codec);
  return codec.ok() ? std::move(codec).value() : nullptr;
}

Bytes CompressAll(Codec* codec, const Bytes& input) {
  Bytes out(static_cast<size_t>(codec->MaxCompressedBytes(static_cast<int64_t>(input.size()))));
  Result<int64_t> n = codec->Compress(input, out);
  EXPECT_OK(n);
  out.resize(n.ok() ? static_cast<size_t>(*n) : 0);
  return out;
}

// Decompresses into exactly `expected_bytes`, with a canary region past the
// output span that must stay untouched.
Status DecompressChecked(Codec* codec, const Bytes& input, size_t expected_bytes, Bytes* output = nullptr) {
  constexpr size_t kCanary = 4096;
  Bytes space(expected_bytes + kCanary, 0xEE);
  Status st = codec->Decompress(input, std::span<uint8_t>(space.data(), expected_bytes));
  for (size_t i = expected_bytes; i < space.size(); ++i) {
    EXPECT_EQ(space[i], 0xEE) << "wrote past the output at byte " << i;
    if (space[i] != 0xEE) break;
  }
  if (output != nullptr) output->assign(space.begin(), space.begin() + expected_bytes);
  return st;
}

class CodecTest : public ::testing::TestWithParam<CompressionType> {
 protected:
  void SetUp() override {
    codec_ = MakeCodec(GetParam());
    ASSERT_NE(codec_, nullptr);
  }
  std::unique_ptr<Codec> codec_;
};

TEST_P(CodecTest, RoundTripSizes) {
  for (size_t n :
       {size_t{0}, size_t{1}, size_t{100}, size_t{65535}, size_t{65537}, size_t{1} << 20, (size_t{3} << 20) + 17}) {
    for (bool random : {false, true}) {
      SCOPED_TRACE(std::to_string(n) + (random ? " random" : " compressible"));
      const Bytes input = random ? Random(n) : Compressible(n);
      const Bytes compressed = CompressAll(codec_.get(), input);
      EXPECT_LE(static_cast<int64_t>(compressed.size()), codec_->MaxCompressedBytes(static_cast<int64_t>(n)));
      if (!random && n >= 65535) {
        EXPECT_LT(compressed.size(), n / 4);
      }
      Bytes output;
      Status st = DecompressChecked(codec_.get(), compressed, n, &output);
      ASSERT_OK(st);
      EXPECT_EQ(output, input);
    }
  }
}

TEST_P(CodecTest, WrongExpectedSize) {
  const Bytes input = Compressible(200000);
  const Bytes compressed = CompressAll(codec_.get(), input);
  Status small = DecompressChecked(codec_.get(), compressed, input.size() - 1);
  ASSERT_TRUE(small.IsInvalid()) << small.ToString();
  EXPECT_NE(small.message().find("more than the expected 199999 bytes"), std::string::npos) << small.ToString();
  Status tiny = DecompressChecked(codec_.get(), compressed, 10);
  EXPECT_TRUE(tiny.IsInvalid()) << tiny.ToString();
  Status large = DecompressChecked(codec_.get(), compressed, input.size() + 1);
  ASSERT_TRUE(large.IsInvalid()) << large.ToString();
  EXPECT_NE(large.message().find("decompressed to 200000 bytes, expected 200001"), std::string::npos)
      << large.ToString();
  // The codec is still usable after errors.
  EXPECT_OK(DecompressChecked(codec_.get(), compressed, input.size()));
}

TEST_P(CodecTest, EmptyInput) {
  EXPECT_OK(codec_->Decompress({}, {}));
  Bytes out(5);
  EXPECT_TRUE(codec_->Decompress({}, out).IsInvalid());
}

TEST_P(CodecTest, MultipleFramesBackToBack) {
  const Bytes a = Compressible(70000);
  const Bytes b = Random(3000, 7);
  Bytes joined = CompressAll(codec_.get(), a);
  const Bytes cb = CompressAll(codec_.get(), b);
  joined.insert(joined.end(), cb.begin(), cb.end());
  Bytes output;
  Status st = DecompressChecked(codec_.get(), joined, a.size() + b.size(), &output);
  ASSERT_OK(st);
  Bytes expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(output, expected);
  EXPECT_TRUE(DecompressChecked(codec_.get(), joined, a.size()).IsInvalid());
}

TEST_P(CodecTest, TrailingBytes) {
  const Bytes input = Compressible(1000);
  Bytes compressed = CompressAll(codec_.get(), input);
  Bytes padded = compressed;
  padded.resize(padded.size() + 7, 0);
  EXPECT_OK(DecompressChecked(codec_.get(), padded, input.size())) << "< 8 zero bytes";
  padded.push_back(0);
  EXPECT_TRUE(DecompressChecked(codec_.get(), padded, input.size()).IsInvalid());
  Bytes junk = compressed;
  junk.push_back('x');
  EXPECT_TRUE(DecompressChecked(codec_.get(), junk, input.size()).IsInvalid());
}

TEST_P(CodecTest, CorruptInputNeverCrashes) {
  const Bytes input = Compressible(100000);
  const Bytes compressed = CompressAll(codec_.get(), input);
  // Every truncation is an error.
  for (size_t len = 0; len < compressed.size(); len += (len < 64 ? 1 : 97)) {
    Bytes cut(compressed.begin(), compressed.begin() + len);
    Status st = DecompressChecked(codec_.get(), cut, input.size());
    EXPECT_TRUE(st.IsInvalid()) << "length " << len << ": " << st.ToString();
  }
  // Flipped bytes: a clean error, or (without checksums) possibly other data
  // of the right size; never a crash or a write past the output.
  for (size_t pos = 0; pos < compressed.size(); pos += (pos < 64 ? 1 : 61)) {
    Bytes bad = compressed;
    bad[pos] ^= 0x5A;
    Status st = DecompressChecked(codec_.get(), bad, input.size());
    EXPECT_TRUE(st.ok() || st.IsInvalid()) << st.ToString();
  }
  for (uint32_t seed = 0; seed < 50; ++seed) {
    Status st = DecompressChecked(codec_.get(), Random(1 + seed * 37, seed), 1000);
    EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  }
  EXPECT_OK(DecompressChecked(codec_.get(), compressed, input.size()));
}

TEST_P(CodecTest, OutputTooSmall) {
  const Bytes input = Random(10000);
  Bytes out(100);
  Result<int64_t> n = codec_->Compress(input, out);
  ASSERT_RAISES(Invalid, n);
  EXPECT_NE(n.status().message().find("output too small"), std::string::npos) << n.status().ToString();
}

TEST_P(CodecTest, LevelRange) {
  const CompressionType type = GetParam();
  const int min = Codec::MinLevel(type);
  const int max = Codec::MaxLevel(type);
  for (int level : {min, Codec::DefaultLevel(type), max}) {
    std::unique_ptr<Codec> codec = MakeCodec(type, level);
    ASSERT_NE(codec, nullptr);
    EXPECT_EQ(codec->level(), level);
    const Bytes input = Compressible(5000);
    Bytes output;
    ASSERT_TRUE(DecompressChecked(codec.get(), CompressAll(codec.get(), input), input.size(), &output).ok());
    EXPECT_EQ(output, input);
  }
  std::string range = "[";  // appended piecewise: GCC 12 warns falsely on "[" + string
  range += std::to_string(min);
  range += ", ";
  range += std::to_string(max);
  range += "]";
  for (int level : {min - 1, max + 1}) {
    Result<std::unique_ptr<Codec>> codec = Codec::Make(type, level);
    ASSERT_RAISES(Invalid, codec);
    EXPECT_EQ(codec.status().message(), std::string(CompressionTypeName(type)) + " compression level " +
                                            std::to_string(level) + " is outside the valid range " + range);
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, CodecTest, ::testing::Values(CompressionType::kLz4Frame, CompressionType::kZstd),
                         [](const auto& info) { return std::string(CompressionTypeName(info.param)); });

TEST(CodecLevelsTest, DocumentedRanges) {
  EXPECT_EQ(Codec::MinLevel(CompressionType::kLz4Frame), -1);
  EXPECT_EQ(Codec::MaxLevel(CompressionType::kLz4Frame), 12);
  EXPECT_EQ(Codec::DefaultLevel(CompressionType::kLz4Frame), 0);
  EXPECT_EQ(Codec::MinLevel(CompressionType::kZstd), ZSTD_minCLevel());
  EXPECT_EQ(Codec::MaxLevel(CompressionType::kZstd), ZSTD_maxCLevel());
  EXPECT_EQ(Codec::DefaultLevel(CompressionType::kZstd), 3);
  Result<std::unique_ptr<Codec>> none = Codec::Make(CompressionType::kNone);
  ASSERT_RAISES(Invalid, none);
  Result<std::unique_ptr<Codec>> bad = Codec::Make(CompressionType::kZstd, 23);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[-131072, 22]"), std::string::npos) << bad.status().ToString();
}

TEST(CompressionTypeTest, NamesAndParsing) {
  EXPECT_EQ(CompressionTypeName(CompressionType::kNone), "none");
  EXPECT_EQ(CompressionTypeName(CompressionType::kLz4Frame), "lz4");
  EXPECT_EQ(CompressionTypeName(CompressionType::kZstd), "zstd");
  struct Case {
    const char* name;
    CompressionType type;
  };
  for (Case c : {Case{"none", CompressionType::kNone}, Case{"NONE", CompressionType::kNone},
                 Case{"lz4", CompressionType::kLz4Frame}, Case{"LZ4_FRAME", CompressionType::kLz4Frame},
                 Case{"Zstd", CompressionType::kZstd}}) {
    Result<CompressionType> parsed = ParseCompressionType(c.name);
    ASSERT_OK(parsed) << c.name;
    EXPECT_EQ(*parsed, c.type);
  }
  Result<CompressionType> bad = ParseCompressionType("snappy");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(), "Invalid: unknown compression 'snappy' (expected none, lz4, lz4_frame or zstd)");
}

// ---- frames made by other writers ----

Bytes Lz4Frame(const Bytes& input, const LZ4F_preferences_t& prefs) {
  Bytes out(LZ4F_compressFrameBound(input.size(), &prefs));
  const size_t n = LZ4F_compressFrame(out.data(), out.size(), input.data(), input.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(n)) << LZ4F_getErrorName(n);
  out.resize(LZ4F_isError(n) ? 0 : n);
  return out;
}

TEST(Lz4FrameTest, DecodesChecksumsLinkedBlocksAndContentSize) {
  std::unique_ptr<Codec> codec = MakeCodec(CompressionType::kLz4Frame);
  Bytes input = Compressible(600000);
  const Bytes noise = Random(100000, 9);
  input.insert(input.end(), noise.begin(), noise.end());
  for (LZ4F_blockMode_t mode : {LZ4F_blockLinked, LZ4F_blockIndependent}) {
    for (LZ4F_blockSizeID_t block : {LZ4F_max64KB, LZ4F_max256KB, LZ4F_max4MB}) {
      for (int level : {0, 9}) {
        SCOPED_TRACE(std::to_string(mode) + "/" + std::to_string(block) + "/" + std::to_string(level));
        LZ4F_preferences_t prefs{};
        prefs.frameInfo.blockMode = mode;
        prefs.frameInfo.blockSizeID = block;
        prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
        prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
        prefs.frameInfo.contentSize = input.size();
        prefs.compressionLevel = level;
        const Bytes frame = Lz4Frame(input, prefs);
        Bytes output;
        Status st = DecompressChecked(codec.get(), frame, input.size(), &output);
        ASSERT_OK(st);
        EXPECT_EQ(output, input);
        EXPECT_TRUE(DecompressChecked(codec.get(), frame, input.size() - 1).IsInvalid());
        EXPECT_TRUE(DecompressChecked(codec.get(), frame, input.size() + 1).IsInvalid());
      }
    }
  }
}

TEST(Lz4FrameTest, ChecksumMismatchIsInvalid) {
  std::unique_ptr<Codec> codec = MakeCodec(CompressionType::kLz4Frame);
  const Bytes input = Compressible(100000);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  Bytes frame = Lz4Frame(input, prefs);
  frame[frame.size() - 2] ^= 1;  // inside the content checksum
  Status st = DecompressChecked(codec.get(), frame, input.size());
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find("corrupt LZ4 frame"), std::string::npos) << st.ToString();

  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  frame = Lz4Frame(input, prefs);
  frame[frame.size() / 2] ^= 0x10;  // inside a block: its checksum no longer matches
  EXPECT_TRUE(DecompressChecked(codec.get(), frame, input.size()).IsInvalid());
}

TEST(ZstdTest, UnknownContentSizeAndChecksums) {
  std::unique_ptr<Codec> codec = MakeCodec(CompressionType::kZstd);
  const Bytes input = Compressible(500000);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ASSERT_NE(cctx, nullptr);
  ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0)));
  ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)));
  Bytes frame(ZSTD_compressBound(input.size()));
  const size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), input.data(), input.size());
  ZSTD_freeCCtx(cctx);
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  frame.resize(n);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);

  Bytes output;
  Status st = DecompressChecked(codec.get(), frame, input.size(), &output);
  ASSERT_OK(st);
  EXPECT_EQ(output, input);

  Status small = DecompressChecked(codec.get(), frame, input.size() - 1);
  EXPECT_TRUE(small.IsInvalid()) << small.ToString();
  EXPECT_NE(small.message().find("more than"), std::string::npos) << small.ToString();
  Status large = DecompressChecked(codec.get(), frame, input.size() + 100);
  EXPECT_TRUE(large.IsInvalid()) << large.ToString();

  Bytes bad = frame;
  bad[bad.size() - 1] ^= 1;  // the XXH64 checksum
  EXPECT_TRUE(DecompressChecked(codec.get(), bad, input.size()).IsInvalid());

  for (size_t len = 0; len < frame.size(); len += 13) {
    Bytes cut(frame.begin(), frame.begin() + len);
    EXPECT_TRUE(DecompressChecked(codec.get(), cut, input.size()).IsInvalid()) << len;
  }
  EXPECT_OK(DecompressChecked(codec.get(), frame, input.size()));
}

// Issue 10 item 3: MaxDecompressedBytes bounds what Decompress can produce,
// from the framing alone; it is never below the true size, exact where a
// frame declares its content size, and within the codec's expansion where
// none does.
TEST(MaxDecompressedBytesTest, Lz4FrameBoundsFromHeadersAndBlocks) {
  std::unique_ptr<Codec> codec = MakeCodec(CompressionType::kLz4Frame);
  Bytes input = Compressible(300000);
  const Bytes noise = Random(50000, 3);
  input.insert(input.end(), noise.begin(), noise.end());
  const auto n = static_cast<int64_t>(input.size());
  for (bool content_size : {false, true}) {
    for (LZ4F_blockSizeID_t block : {LZ4F_max64KB, LZ4F_max4MB}) {
      for (bool block_checksum : {false, true}) {
        SCOPED_TRACE(std::to_string(content_size) + "/" + std::to_string(block) + "/" + std::to_string(block_checksum));
        LZ4F_preferences_t prefs{};
        prefs.frameInfo.blockSizeID = block;
        prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
        prefs.frameInfo.blockChecksumFlag = block_checksum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
        prefs.frameInfo.contentSize = content_size ? input.size() : 0;
        const Bytes frame = Lz4Frame(input, prefs);
        const int64_t bound = codec->MaxDecompressedBytes(frame);
        if (content_size) {
          EXPECT_EQ(bound, n);
        } else {
          EXPECT_GE(bound, n);
          EXPECT_LE(bound, static_cast<int64_t>(frame.size()) * 255 + 64);
        }
        // Two frames back to back, then alignment padding: the sum.
        Bytes two = frame;
        two.insert(two.end(), frame.begin(), frame.end());
        two.insert(two.end(), 3, 0);
        EXPECT_EQ(codec->MaxDecompressedBytes(two), 2 * bound);
      }
    }
  }
  // quiver's own frames (the writer's), and constant data at LZ4's ratio.
  const Bytes zeros(1 << 20, 0);
  const Bytes frame = CompressAll(codec.get(), zeros);
  const int64_t bound = codec->MaxDecompressedBytes(frame);
  EXPECT_GE(bound, int64_t{1} << 20);
  EXPECT_LE(bound, static_cast<int64_t>(frame.size()) * 255 + 64);
  // Unparseable framing: the coarse 255:1 bound of the input.
  const Bytes junk = Random(16384, 5);
  EXPECT_EQ(codec->MaxDecompressedBytes(junk), 16384 * 255 + 64);
  EXPECT_EQ(codec->MaxDecompressedBytes({}), 0);
}

TEST(MaxDecompressedBytesTest, ZstdUsesContentSizeOrTheFrameBound) {
  std::unique_ptr<Codec> codec = MakeCodec(CompressionType::kZstd);
  const Bytes input = Compressible(500000);
  const Bytes framed = CompressAll(codec.get(), input);  // quiver writes the content size
  EXPECT_EQ(codec->MaxDecompressedBytes(framed), static_cast<int64_t>(input.size()));

  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ASSERT_NE(cctx, nullptr);
  ASSERT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0)));
  Bytes frame(ZSTD_compressBound(input.size()));
  const size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), input.data(), input.size());
  ZSTD_freeCCtx(cctx);
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  frame.resize(n);
  const int64_t bound = codec->MaxDecompressedBytes(frame);
  EXPECT_GE(bound, static_cast<int64_t>(input.size()));
  EXPECT_LE(bound, int64_t{128} << 10 << 3) << "500000 bytes are 4 blocks of at most 128 KiB";
  // Corrupt framing: the coarse bound (128 KiB per 4 input bytes).
  EXPECT_EQ(codec->MaxDecompressedBytes(Random(16, 1)), int64_t{5} * (128 << 10));
}

}  // namespace
}  // namespace quiver
