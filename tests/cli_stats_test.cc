// `quiver stats` shows the codec level quiver's writer recorded in each
// record batch message's custom metadata (ipc::kCompressionLevelMetadataKey):
// the CLI parses it from the pairs the reader hands through
// (BatchBodyStats::message_metadata); the reader does not. Inputs are written
// here, some with the key or its value patched in the bytes.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cross_test_support.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::cross_test {
namespace {

class CliStatsTest : public ScratchDirTest {
 protected:
  CliStatsTest() : ScratchDirTest("quiver_cli_stats") {}

  /// Writes a two-batch stream of one int64 column at `level`.
  std::string WriteStream(CompressionType codec, int level) {
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int64(), false)};
    std::vector<std::optional<int64_t>> values;
    for (int64_t i = 0; i < 4096; ++i) values.push_back(i % 17);
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema;
    batch->num_rows = 4096;
    batch->columns = {::quiver::testing::Int64Array(pool_.get(), values)};
    ipc::BufferOutputStream sink;
    ipc::WriteOptions wo;
    wo.pool = pool_.get();
    wo.compression = codec;
    wo.level = level;
    EXPECT_OK(ipc::WriteTable(&sink, schema, {batch, batch}, ipc::IpcFormat::kStream, wo));
    const auto& b = sink.bytes();
    return std::string(b.begin(), b.end());
  }

  /// `quiver stats` on `bytes`: exit code and stdout (stderr appended).
  std::pair<int, std::string> Stats(const std::string& bytes) {
    const fs::path in = dir_ / "in.arrows", out = dir_ / "out.txt";
    {
      std::ofstream f(in, std::ios::binary | std::ios::trunc);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const std::string cmd =
        ShellQuote(QUIVER_BINARY) + " stats " + ShellQuote(in.string()) + " >" + ShellQuote(out.string()) + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream f(out, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return {(rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1, ss.str()};
  }

  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({});
};

TEST_F(CliStatsTest, ShowsTheRecordedLevel) {
  auto [rc, out] = Stats(WriteStream(CompressionType::kZstd, 7));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec zstd level 7, metadata "), 2) << out;
  std::tie(rc, out) = Stats(WriteStream(CompressionType::kZstd, -5));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec zstd level -5, metadata "), 2) << out;
  std::tie(rc, out) = Stats(WriteStream(CompressionType::kLz4Frame, Codec::kUseDefaultLevel));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec lz4 level 0, metadata "), 2) << out;
  // Uncompressed batches carry no level.
  std::tie(rc, out) = Stats(WriteStream(CompressionType::kNone, Codec::kUseDefaultLevel));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec none, metadata "), 2) << out;
  EXPECT_EQ(Count(out, " level "), 0) << out;
}

TEST_F(CliStatsTest, NoLevelWithoutAValidValueUnderTheKey) {
  const std::string key(ipc::kCompressionLevelMetadataKey);
  const std::string written = WriteStream(CompressionType::kZstd, 7);
  // The value is the flatbuffer string "7" (uint32 length 1, '7', NUL),
  // placed just before the key string (the builder grows downwards).
  const std::string value(
      "\x01\x00\x00\x00"
      "7\x00",
      6);
  auto patch_value = [&](char c) {
    std::string bytes = written;
    int patched = 0;
    for (size_t k = bytes.find(key); k != std::string::npos; k = bytes.find(key, k + 1)) {
      const size_t from = k >= 32 ? k - 32 : 0;
      const size_t v = bytes.rfind(value, k);
      if (v != std::string::npos && v >= from) {
        bytes[v + 4] = c;
        ++patched;
      }
    }
    EXPECT_EQ(patched, 2);
    return bytes;
  };
  // A value that is no number: the batch reads, without a level.
  auto [rc, out] = Stats(patch_value('x'));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec zstd, metadata "), 2) << out;
  // Another number of the same width: shown as it is.
  std::tie(rc, out) = Stats(patch_value('9'));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec zstd level 9, metadata "), 2) << out;
  // Another key: not quiver's, not shown.
  std::string bytes = written;
  int renamed = 0;
  for (size_t k = bytes.find(key); k != std::string::npos; k = bytes.find(key, k + 1)) {
    bytes[k + key.size() - 1] = 'X';
    ++renamed;
  }
  EXPECT_EQ(renamed, 2);
  std::tie(rc, out) = Stats(bytes);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(Count(out, ", codec zstd, metadata "), 2) << out;
  EXPECT_EQ(Count(out, " level "), 0) << out;
}

}  // namespace
}  // namespace quiver::cross_test
