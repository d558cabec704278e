// Untrusted bytes: the Arrow fuzz / crash regression corpus (arrow-testing
// data/arrow-ipc-stream/*, arrow-ipc-file/*, arrow-ipc-tensor-stream/*,
// forward-compatibility/schema_v6.arrow; also the real-world files and peer
// samples of /work/shared/data), and byte-removal / byte-flip
// sweeps over valid streams (gold files and streams written by quiver,
// compressed and not).
//
// The bar (arrow-testing READMEs; design notes "Fuzz every parser of
// untrusted bytes under a capped pool, then fully validate"): every input
// is read under a pool capped at 256 MiB with full validation; the result is
// OK or a clean error Status, never a crash or a hang; every batch returned
// passes ValidateBatch(kFull); nothing stays charged to the pool once the
// batches and the reader are gone. Each corpus case must finish in < 5 s.
//
// Built as its own executable, quiver_fuzz_corpus_tests, labelled "fuzz" so
// that the ASan/UBSan build runs it (make asan-test: ctest -L fuzz...).
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <random>

#include "cross_test_support.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/sanitizers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::cross_test {
namespace {

constexpr int64_t kPoolLimitBytes = int64_t{256} << 20;

/// A sequential source over bytes held in memory (for OpenStream).
class MemoryInputStream : public ipc::InputStream {
 public:
  explicit MemoryInputStream(std::shared_ptr<Buffer> bytes) : bytes_(std::move(bytes)) {}
  Result<int64_t> Read(std::span<uint8_t> out) override {
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(out.size()), bytes_->size() - pos_);
    if (n > 0) std::memcpy(out.data(), bytes_->data() + pos_, static_cast<size_t>(n));
    pos_ += n;
    return n;
  }
  int64_t position() const { return pos_; }

 private:
  std::shared_ptr<Buffer> bytes_;
  int64_t pos_ = 0;
};

enum class ReadPath { kBuffer, kSequential };

/// What reading one input gave.
struct ReadOutcome {
  Status status;  ///< OK, or the first error (Open or Next)
  int64_t num_batches = 0;
  int64_t num_rows = 0;
  int64_t held_after_bytes = -1;  ///< pool held once batches and reader are gone
  int64_t peak_bytes = 0;
  std::vector<std::string> validation_errors;  ///< batches that failed ValidateBatch(kFull)
};

/// Reads `bytes` completely under a fresh pool capped at kPoolLimitBytes,
/// validating every batch returned; keeps the batches alive until the end
/// (as a consumer would), then drops everything and reads the pool.
ReadOutcome ReadUntrusted(const std::shared_ptr<Buffer>& bytes, ReadPath path,
                          std::vector<RecordBatchPtr>* keep_batches = nullptr) {
  auto pool = MemoryPool::MakeRoot({.name = "fuzz", .limit_bytes = kPoolLimitBytes});
  ReadOutcome out;
  {
    ipc::ReadOptions ro;
    ro.pool = pool.get();
    ro.validation = ValidationLevel::kFull;
    Result<std::unique_ptr<ipc::RecordBatchReader>> reader =
        path == ReadPath::kBuffer ? ipc::RecordBatchReader::Open(bytes, ro)
                                  : ipc::RecordBatchReader::OpenStream(std::make_unique<MemoryInputStream>(bytes), ro);
    std::vector<RecordBatchPtr> batches;
    if (!reader.ok()) {
      out.status = reader.status();
    } else {
      for (;;) {
        auto next = (*reader)->Next();
        if (!next.ok()) {
          out.status = next.status();
          break;
        }
        if (*next == nullptr) break;
        const RecordBatchPtr& batch = *next;
        Status valid = ValidateBatch(*batch, ValidationLevel::kFull);
        if (!valid.ok()) {
          out.validation_errors.push_back("batch " + std::to_string(out.num_batches) + ": " + valid.ToString());
        }
        ++out.num_batches;
        out.num_rows += batch->num_rows;
        batches.push_back(batch);
        if (out.num_batches > 1000000) {
          out.status = Status::Invalid("test: more than 1e6 batches, runaway reader");
          break;
        }
      }
    }
    if (keep_batches) *keep_batches = batches;
  }
  out.peak_bytes = pool->peak_bytes();
  if (!keep_batches) out.held_after_bytes = pool->held_bytes();
  return out;
}

/// `text` with bytes outside printable ASCII as \xNN (error messages may
/// quote names taken from fuzzed input; test XML output must stay valid).
std::string Printable(std::string_view text, size_t max_chars = 300) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : text) {
    if (out.size() >= max_chars) break;
    if (ch >= 0x20 && ch < 0x7F) {
      out.push_back(static_cast<char>(ch));
    } else {
      out += "\\x";
      out.push_back(hex[ch >> 4]);
      out.push_back(hex[ch & 15]);
    }
  }
  return out;
}

/// A clean error is one of the documented codes with a message.
::testing::AssertionResult IsCleanOutcome(const ReadOutcome& o) {
  if (!o.validation_errors.empty()) {
    return ::testing::AssertionFailure() << "a returned batch fails ValidateBatch(kFull): " << o.validation_errors[0];
  }
  if (o.held_after_bytes != 0) {
    return ::testing::AssertionFailure() << o.held_after_bytes << " bytes still charged after the read ("
                                         << o.status.ToString() << ")";
  }
  if (!o.status.ok()) {
    const StatusCode c = o.status.code();
    if (c != StatusCode::kInvalid && c != StatusCode::kNotImplemented && c != StatusCode::kOutOfMemory &&
        c != StatusCode::kEndOfStream && c != StatusCode::kIOError) {
      return ::testing::AssertionFailure() << "unexpected error code: " << o.status.ToString();
    }
    if (o.status.message().empty()) return ::testing::AssertionFailure() << "error without a message";
  }
  return ::testing::AssertionSuccess();
}

std::shared_ptr<Buffer> OwnedBytes(std::vector<uint8_t> bytes) {
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  const uint8_t* data = owner->data();
  const auto size = static_cast<int64_t>(owner->size());
  return Buffer::Wrap(data, size, std::move(owner));
}

std::vector<uint8_t> FileBytes(const fs::path& path) {
  auto mapped = ipc::MapFile(path.string());
  EXPECT_OK(mapped) << path;
  if (!mapped.ok()) return {};
  return {(*mapped)->data(), (*mapped)->data() + (*mapped)->size()};
}

// ---- the corpus --------------------------------------------------------------

struct CorpusCase {
  std::string name;
  fs::path path;
};

std::ostream& operator<<(std::ostream& os, const CorpusCase& c) { return os << c.path.string(); }

std::vector<CorpusCase> ListCorpus() {
  std::vector<CorpusCase> out;
  auto add_folder = [&](const std::string& folder, const std::string& label) {
    for (const auto& p : ListFiles(ArrowTestingData() / folder, [](const fs::path& p) {
           const std::string n = p.filename().string();
           return n.rfind("README", 0) != 0 && !EndsWith(n, ".md");
         })) {
      std::string n = p.filename().string();
      for (const std::string drop : {"clusterfuzz-testcase-", "arrow-ipc-stream-fuzz-", "arrow-ipc-file-fuzz-",
                                     "arrow-ipc-tensor-stream-fuzz-"}) {
        if (auto at = n.find(drop); at != std::string::npos) n.erase(at, drop.size());
      }
      out.push_back({TestNameOf(label + "_" + n), p});
    }
  };
  add_folder("arrow-ipc-stream", "stream");
  add_folder("arrow-ipc-file", "file");
  add_folder("arrow-ipc-tensor-stream", "tensor_stream");
  const fs::path v6 = ArrowTestingData() / "forward-compatibility" / "schema_v6.arrow";
  out.push_back({"forward_compatibility_schema_v6", v6});
  // Files from other writers are untrusted input too; here they run under
  // the sanitizers (e.g. the vega 3.2.1 footer, whose Blocks sit 4 bytes off
  // 8-byte alignment from the footer's start).
  for (const auto& dir : ListDirs(RealWorldDir())) {
    for (const auto& p : ListFiles(dir, [](const fs::path& p) { return p.extension() == ".arrow"; })) {
      out.push_back({TestNameOf("real_world_" + dir.filename().string() + "_" + p.stem().string()), p});
    }
  }
  for (const auto& p : ListFiles(PeerSamplesDir())) {
    out.push_back({TestNameOf("peer_" + p.filename().string()), p});
  }
  // Names must be unique for gtest.
  std::map<std::string, int> seen;
  for (auto& c : out) {
    if (int n = seen[c.name]++; n > 0) c.name += "_" + std::to_string(n);
  }
  return out;
}

std::string CorpusCaseName(const ::testing::TestParamInfo<CorpusCase>& info) { return info.param.name; }

class FuzzCorpusTest : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(FuzzCorpusTest, ReadsCleanlyUnderCappedPool) {
  const CorpusCase& c = GetParam();
  ASSERT_TRUE(fs::is_regular_file(c.path)) << c.path;
  // A private copy (aligned heap memory, like a loaded stream), and the
  // mapping itself (file offsets as they are on disk).
  auto mapped = ipc::MapFile(c.path.string());
  ASSERT_OK(mapped);
  auto copy = OwnedBytes(FileBytes(c.path));

  for (ReadPath path : {ReadPath::kBuffer, ReadPath::kSequential}) {
    for (const auto& bytes : {*mapped, copy}) {
      const char* label = path == ReadPath::kBuffer ? "Open" : "OpenStream";
      SCOPED_TRACE(label);
      const auto start = std::chrono::steady_clock::now();
      ReadOutcome o = ReadUntrusted(bytes, path);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_TRUE(IsCleanOutcome(o));
      EXPECT_LT(seconds, 5.0) << "reading took " << seconds << " s";
      EXPECT_LE(o.peak_bytes, kPoolLimitBytes);
      if (bytes == copy) {
        RecordProperty(std::string(label) + "_outcome", o.status.ok()
                                                            ? "ok: " + std::to_string(o.num_batches) + " batches, " +
                                                                  std::to_string(o.num_rows) + " rows"
                                                            : Printable(o.status.ToString()));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, FuzzCorpusTest, ::testing::ValuesIn(ListCorpus()), CorpusCaseName);

TEST(FuzzCorpus, CorpusIsPresent) {
  const auto cases = ListCorpus();
  // 64 stream + 44 file + 2 tensor-stream inputs + schema_v6 in this subset,
  // + 3 real-world files + 13 peer samples.
  EXPECT_GE(cases.size(), 127u);
}

// Issue 10 item 5: ../shared/data/bad-inputs/union-child-length-overflow.arrows
// declares a sparse-union child of length INT64_MAX. Validation used to
// reach BytesForBits(INT64_MAX), whose "+ 7" overflowed (undefined
// behaviour; UBSan aborts this test in the debug-asan build with the old
// code). Now every path reports a clean Invalid naming the length.
TEST(FuzzCorpus, UnionChildLengthOverflowIsACleanError) {
  const fs::path bad = SharedDir() / "data" / "bad-inputs" / "union-child-length-overflow.arrows";
  ASSERT_TRUE(fs::is_regular_file(bad)) << bad;
  auto bytes = OwnedBytes(FileBytes(bad));
  for (ReadPath path : {ReadPath::kBuffer, ReadPath::kSequential}) {
    SCOPED_TRACE(path == ReadPath::kBuffer ? "Open" : "OpenStream");
    ReadOutcome o = ReadUntrusted(bytes, path);
    ASSERT_FALSE(o.status.ok()) << "the overflowing union child was accepted";
    EXPECT_TRUE(o.status.IsInvalid()) << o.status.ToString();
    EXPECT_NE(o.status.message().find("9223372036854775807"), std::string::npos) << o.status.ToString();
    EXPECT_EQ(o.held_after_bytes, 0);
    EXPECT_EQ(o.num_batches, 0);
  }
}

TEST(FuzzCorpus, FutureMetadataVersionIsRejected) {
  const fs::path v6 = ArrowTestingData() / "forward-compatibility" / "schema_v6.arrow";
  auto bytes = ipc::MapFile(v6.string());
  ASSERT_OK(bytes);
  for (ReadPath path : {ReadPath::kBuffer, ReadPath::kSequential}) {
    ReadOutcome o = ReadUntrusted(*bytes, path);
    ASSERT_FALSE(o.status.ok()) << "schema_v6.arrow was accepted";
    EXPECT_TRUE(o.status.IsNotImplemented() || o.status.IsInvalid()) << o.status.ToString();
    std::string lower = o.status.message();
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    EXPECT_NE(lower.find("metadata version"), std::string::npos) << o.status.ToString();
    EXPECT_EQ(o.held_after_bytes, 0);
  }
}

// ---- byte mutations of valid streams -----------------------------------------

/// A small batch written by quiver: int32 with nulls, utf8, list<int32>,
/// dictionary<int32, utf8>, 40 rows (a few hundred bytes per buffer set).
std::vector<uint8_t> QuiverWrittenStream(CompressionType codec, ipc::IpcFormat format = ipc::IpcFormat::kStream) {
  using namespace quiver::testing;
  auto pool = MemoryPool::MakeRoot({});
  std::vector<std::optional<int32_t>> ints, items, idx;
  std::vector<std::optional<std::string>> strs;
  std::vector<int32_t> offsets{0};
  for (int r = 0; r < 40; ++r) {
    ints.push_back(r % 7 == 3 ? std::nullopt : std::optional<int32_t>(r * 3));
    strs.push_back(r % 5 == 1 ? std::nullopt : std::optional<std::string>("value-" + std::to_string(r % 13)));
    for (int k = 0; k < r % 4; ++k) items.push_back(r + k);
    offsets.push_back(static_cast<int32_t>(items.size()));
    idx.push_back(r % 9 == 4 ? std::nullopt : std::optional<int32_t>(r % 3));
  }
  auto dict_indices = Int32Array(pool.get(), idx);
  auto dict = std::make_shared<ArrayData>(*dict_indices);
  dict->type = dictionary(int32(), utf8());
  dict->dictionary = StringArray(pool.get(), {"red", "green", "blue"});
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("i", int32()), field("s", utf8()), field("l", list(field("item", int32()))),
                    field("d", dictionary(int32(), utf8()), true, {}, 0)};
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 40;
  batch->columns = {Int32Array(pool.get(), ints), StringArray(pool.get(), strs),
                    ListArray(pool.get(), Int32Array(pool.get(), items), offsets), dict};
  ipc::BufferOutputStream sink;
  ipc::WriteOptions wo;
  wo.pool = pool.get();
  wo.compression = codec;
  // Two batches of 20 rows: a second record batch message after the first.
  Status st = ipc::WriteTable(&sink, schema, {batch}, format, wo, /*max_rows_per_batch=*/20);
  EXPECT_OK(st);
  return sink.bytes();
}

struct MutationInput {
  std::string label;
  std::vector<uint8_t> bytes;
};

std::vector<MutationInput> MutationInputs() {
  const fs::path gold = IntegrationDir();
  std::vector<MutationInput> in;
  for (const auto& rel :
       {"2.0.0-compression/generated_lz4.stream", "2.0.0-compression/generated_zstd.stream",
        "2.0.0-compression/generated_uncompressible_lz4.stream", "cpp-21.0.0/generated_dictionary.stream",
        "cpp-21.0.0/generated_null_trivial.stream", "0.14.1/generated_map.stream"}) {
    in.push_back({rel, FileBytes(gold / rel)});
  }
  in.push_back({"quiver stream, uncompressed", QuiverWrittenStream(CompressionType::kNone)});
  in.push_back({"quiver stream, lz4", QuiverWrittenStream(CompressionType::kLz4Frame)});
  in.push_back({"quiver stream, zstd", QuiverWrittenStream(CompressionType::kZstd)});
  in.push_back({"quiver file, zstd", QuiverWrittenStream(CompressionType::kZstd, ipc::IpcFormat::kFile)});
  return in;
}

constexpr bool kSanitized = testing::kAddressSanitizer;

/// Positions to mutate: every byte, except that under ASan (about 30x
/// slower per read) inputs over 2 KiB take every third byte — a stride
/// prime to 8, so every offset within the 8-byte-aligned IPC fields is still
/// hit — to keep the sweeps under a minute in total.
std::vector<size_t> Positions(size_t size) {
  const size_t stride = kSanitized && size > 2048 ? 3 : 1;
  std::vector<size_t> out;
  for (size_t i = 0; i < size; i += stride) out.push_back(i);
  return out;
}

void SweepMutations(const std::function<std::vector<uint8_t>(const std::vector<uint8_t>&, size_t)>& mutate,
                    const char* what) {
  for (const auto& input : MutationInputs()) {
    SCOPED_TRACE(input.label);
    ASSERT_FALSE(input.bytes.empty());
    // The unmutated input reads OK.
    ReadOutcome base = ReadUntrusted(OwnedBytes(input.bytes), ReadPath::kBuffer);
    ASSERT_OK(base.status);
    int64_t ok = 0, errors = 0, failures = 0;
    for (size_t pos : Positions(input.bytes.size())) {
      auto mutated = OwnedBytes(mutate(input.bytes, pos));
      for (ReadPath path : {ReadPath::kBuffer, ReadPath::kSequential}) {
        // Only streams have a sequential reading.
        if (path == ReadPath::kSequential && input.label.find("file") != std::string::npos) continue;
        ReadOutcome o = ReadUntrusted(mutated, path);
        auto clean = IsCleanOutcome(o);
        if (!clean) {
          if (++failures <= 5) {
            ADD_FAILURE() << what << " at byte " << pos << " (" << (path == ReadPath::kBuffer ? "Open" : "OpenStream")
                          << "): " << clean.message();
          }
          continue;
        }
        (o.status.ok() ? ok : errors)++;
      }
    }
    EXPECT_EQ(failures, 0) << what << ": " << failures << " unclean reads";
    std::cout << "[ sweep    ] " << what << " over " << input.label << " (" << input.bytes.size() << " B, "
              << Positions(input.bytes.size()).size() << " positions): " << ok << " read OK, " << errors
              << " clean errors" << std::endl;
  }
}

TEST(ByteMutation, RemovingAnyByteReadsCleanly) {
  SweepMutations(
      [](const std::vector<uint8_t>& in, size_t pos) {
        std::vector<uint8_t> out = in;
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(pos));
        return out;
      },
      "byte removal");
}

TEST(ByteMutation, FlippingAnyByteReadsCleanly) {
  SweepMutations(
      [](const std::vector<uint8_t>& in, size_t pos) {
        std::vector<uint8_t> out = in;
        out[pos] ^= 0xFF;
        return out;
      },
      "byte flip");
}

TEST(ByteMutation, TruncationReadsCleanly) {
  for (const auto& input : MutationInputs()) {
    SCOPED_TRACE(input.label);
    // Every other length (the removal sweep already cuts at every position).
    for (size_t len = 0; len < input.bytes.size(); len += kSanitized ? 4 : 2) {
      std::vector<uint8_t> prefix(input.bytes.begin(), input.bytes.begin() + static_cast<std::ptrdiff_t>(len));
      auto bytes = OwnedBytes(std::move(prefix));
      for (ReadPath path : {ReadPath::kBuffer, ReadPath::kSequential}) {
        ReadOutcome o = ReadUntrusted(bytes, path);
        ASSERT_TRUE(IsCleanOutcome(o)) << "truncated to " << len << " bytes";
      }
    }
  }
}

// ---- the end-of-stream marker ------------------------------------------------

/// Garbage after the end-of-stream marker is never read: the stream reads
/// exactly as without it.
TEST(EndOfStream, BytesAfterTheMarkerAreIgnored) {
  const fs::path gold = IntegrationDir();
  std::vector<MutationInput> inputs = {
      {"quiver stream, uncompressed", QuiverWrittenStream(CompressionType::kNone)},
      {"quiver stream, zstd", QuiverWrittenStream(CompressionType::kZstd)},
      {"cpp-21.0.0/generated_primitive.stream", FileBytes(gold / "cpp-21.0.0/generated_primitive.stream")},
      {"2.0.0-compression/generated_lz4.stream", FileBytes(gold / "2.0.0-compression/generated_lz4.stream")},
      // Legacy framing: the marker is a bare zero int32.
      {"0.14.1/generated_primitive.stream", FileBytes(gold / "0.14.1/generated_primitive.stream")}};
  std::mt19937 rng(20240611);
  for (const auto& input : inputs) {
    SCOPED_TRACE(input.label);
    ASSERT_GE(input.bytes.size(), 8u);
    const uint8_t* end = input.bytes.data() + input.bytes.size();
    const bool modern_eos = std::memcmp(end - 8, "\xFF\xFF\xFF\xFF\x00\x00\x00\x00", 8) == 0;
    const bool legacy_eos = std::memcmp(end - 4, "\x00\x00\x00\x00", 4) == 0;
    ASSERT_TRUE(modern_eos || legacy_eos) << "the input does not end with an end-of-stream marker";

    std::vector<RecordBatchPtr> expected;
    ReadOutcome base = ReadUntrusted(OwnedBytes(input.bytes), ReadPath::kBuffer, &expected);
    ASSERT_OK(base.status);

    std::vector<std::vector<uint8_t>> tails;
    tails.push_back(std::vector<uint8_t>(64, 0xFF));  // continuation markers with absurd lengths
    {
      std::vector<uint8_t> noise(4096);
      for (auto& b : noise) b = static_cast<uint8_t>(rng());
      tails.push_back(noise);
    }
    // A whole second stream after the marker.
    tails.push_back(QuiverWrittenStream(CompressionType::kNone));
    tails.push_back({0x01});

    for (size_t t = 0; t < tails.size(); ++t) {
      std::vector<uint8_t> bytes = input.bytes;
      bytes.insert(bytes.end(), tails[t].begin(), tails[t].end());
      auto buffer = OwnedBytes(std::move(bytes));
      for (ReadPath path : {ReadPath::kBuffer, ReadPath::kSequential}) {
        SCOPED_TRACE("tail " + std::to_string(t) + (path == ReadPath::kBuffer ? " Open" : " OpenStream"));
        std::vector<RecordBatchPtr> got;
        ReadOutcome o = ReadUntrusted(buffer, path, &got);
        ASSERT_OK(o.status);
        ASSERT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_OK(CompareBatches(*expected[i], *got[i], ExactCompare()));
        }
      }
    }
  }
}

}  // namespace
}  // namespace quiver::cross_test
