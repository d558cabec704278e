// One 10,000-row table written by other Arrow implementations
// (/work/shared/data/peer-samples, see its README): id = 0..9999,
// x = id * 0.5, s = "row-" + (id % 100); column types differ by writer
// (id int32 or float64; s dictionary<int32, utf8>, large_utf8 or utf8_view).
//
// The valid samples (flechette fl_*, nodejs-polars pl_*, Arrow JS js_none)
// must read with exactly those values. The Arrow JS compressed samples
// (js_lz4, js_zstd, js_zstd.arrow_file, js_dict_zstd) are invalid — their
// 8-byte prefix holds the compressed length, not the uncompressed one — and
// must be rejected with an error naming the buffer and the size mismatch,
// never read as wrong data.
#include <iostream>
#include <regex>
#include <set>

#include "cross_test_support.h"
#include "quiver/columnar/value_format.h"

namespace quiver::cross_test {
namespace {

std::string StringCell(const ArrayData& a, int64_t row) {
  if (a.type->id == TypeId::kDictionary) {
    const int64_t index = DictionaryIndexAt(a, row);
    return std::string(BinaryValueAt(*a.dictionary, index));
  }
  return std::string(BinaryValueAt(a, row));
}

double NumberCell(const ArrayData& a, int64_t row) {
  switch (a.type->id) {
    case TypeId::kFloat32: return a.GetValues<float>(1)[a.offset + row];
    case TypeId::kFloat64: return a.GetValues<double>(1)[a.offset + row];
    default: return static_cast<double>(IntegerValueAt(a, row));
  }
}

struct PeerCase {
  std::string file;
  TypeId id_type;
  TypeId s_type;  ///< kDictionary (int32 -> utf8), kLargeUtf8 or kUtf8View
  CompressionType codec;
};
std::ostream& operator<<(std::ostream& os, const PeerCase& c) { return os << c.file; }

class PeerSampleTest : public ::testing::TestWithParam<PeerCase> {};

TEST_P(PeerSampleTest, ReadsTheTable) {
  const PeerCase& c = GetParam();
  auto pool = MemoryPool::MakeRoot({.name = "peer"});
  {
    ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(PeerSamplesDir() / c.file, pool.get()));
    EXPECT_EQ(t.format, EndsWith(c.file, ".arrow_file") ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream);
    EXPECT_EQ(t.last_codec, c.codec);
    ASSERT_EQ(t.schema->num_fields(), 3);
    EXPECT_EQ(t.schema->fields[0]->name, "id");
    EXPECT_EQ(t.schema->fields[1]->name, "x");
    EXPECT_EQ(t.schema->fields[2]->name, "s");
    EXPECT_EQ(t.schema->fields[0]->type->id, c.id_type);
    EXPECT_EQ(t.schema->fields[1]->type->id, TypeId::kFloat64);
    const auto& s_type = t.schema->fields[2]->type;
    ASSERT_EQ(s_type->id, c.s_type) << s_type->ToString();
    if (s_type->id == TypeId::kDictionary) {
      EXPECT_EQ(s_type->value_type->id, TypeId::kUtf8);
    }
    EXPECT_EQ(t.num_rows(), 10000);

    int64_t id = 0, mismatches = 0;
    for (const auto& b : t.batches) {
      EXPECT_OK(ValidateBatch(*b, ValidationLevel::kFull));
      const ArrayData& ids = *b->columns[0];
      const ArrayData& xs = *b->columns[1];
      const ArrayData& ss = *b->columns[2];
      for (int64_t r = 0; r < b->num_rows; ++r, ++id) {
        const bool any_null = IsLogicalNull(ids, r) || IsLogicalNull(xs, r) || IsLogicalNull(ss, r);
        const std::string want_s = "row-" + std::to_string(id % 100);
        if (any_null || NumberCell(ids, r) != static_cast<double>(id) ||
            NumberCell(xs, r) != static_cast<double>(id) * 0.5 || StringCell(ss, r) != want_s) {
          if (++mismatches <= 3) {
            ADD_FAILURE() << "row " << id << ": id " << NumberCell(ids, r) << ", x " << NumberCell(xs, r) << ", s '"
                          << StringCell(ss, r) << "' (null: " << any_null << ")";
          }
        }
      }
    }
    EXPECT_EQ(id, 10000);
    EXPECT_EQ(mismatches, 0);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Valid, PeerSampleTest,
    ::testing::Values(PeerCase{"fl_none.stream", TypeId::kInt32, TypeId::kDictionary, CompressionType::kNone},
                      PeerCase{"fl_lz4.stream", TypeId::kInt32, TypeId::kDictionary, CompressionType::kLz4Frame},
                      PeerCase{"fl_zstd.stream", TypeId::kInt32, TypeId::kDictionary, CompressionType::kZstd},
                      PeerCase{"fl_zstd.arrow_file", TypeId::kInt32, TypeId::kDictionary, CompressionType::kZstd},
                      PeerCase{"js_none.stream", TypeId::kInt32, TypeId::kDictionary, CompressionType::kNone},
                      PeerCase{"pl_uncompressed.stream", TypeId::kFloat64, TypeId::kLargeUtf8, CompressionType::kNone},
                      PeerCase{"pl_zstd.stream", TypeId::kFloat64, TypeId::kLargeUtf8, CompressionType::kZstd},
                      PeerCase{"pl_zstd.arrow_file", TypeId::kFloat64, TypeId::kUtf8View, CompressionType::kZstd}),
    [](const ::testing::TestParamInfo<PeerCase>& i) { return TestNameOf(i.param.file); });

/// fl_zstd_small: a 10-row utf8 column whose offsets buffer is stored raw
/// (-1) with 4 padding bytes inside its length; values "row-" + (i % 3)
/// (cross-checked with flechette 2.6.0).
TEST(PeerSample, FlechetteSmallRawOffsets) {
  auto pool = MemoryPool::MakeRoot({});
  ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(PeerSamplesDir() / "fl_zstd_small.stream", pool.get()));
  ASSERT_EQ(t.schema->num_fields(), 1);
  EXPECT_EQ(t.schema->fields[0]->type->id, TypeId::kUtf8);
  EXPECT_EQ(t.last_codec, CompressionType::kZstd);
  ASSERT_EQ(t.num_rows(), 10);
  int64_t row = 0;
  for (const auto& b : t.batches) {
    for (int64_t r = 0; r < b->num_rows; ++r, ++row) {
      EXPECT_EQ(StringCell(*b->columns[0], r), "row-" + std::to_string(row % 3)) << "row " << row;
    }
  }
}

TEST(PeerSample, EverySampleIsCovered) {
  std::set<std::string> covered = {
      "fl_none.stream",         "fl_lz4.stream",      "fl_zstd.stream",     "fl_zstd.arrow_file",   "js_none.stream",
      "pl_uncompressed.stream", "pl_zstd.stream",     "pl_zstd.arrow_file", "fl_zstd_small.stream", "js_lz4.stream",
      "js_zstd.stream",         "js_zstd.arrow_file", "js_dict_zstd.stream"};
  for (const auto& f : ListFiles(PeerSamplesDir())) {
    EXPECT_TRUE(covered.count(f.filename().string())) << "sample without a test: " << f;
  }
}

// ---- the invalid Arrow JS compressed samples -----------------------------------

class InvalidPeerSampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InvalidPeerSampleTest, IsRejectedNamingBufferAndSize) {
  const std::string file = GetParam();
  auto pool = MemoryPool::MakeRoot({.name = "peer", .limit_bytes = int64_t{256} << 20});
  Status error;
  int64_t batches_before_error = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto bytes, ipc::MapFile((PeerSamplesDir() / file).string()));
    ipc::ReadOptions ro;
    ro.pool = pool.get();
    auto reader = ipc::RecordBatchReader::Open(bytes, ro);
    if (!reader.ok()) {
      error = reader.status();
    } else {
      for (;;) {
        auto next = (*reader)->Next();
        if (!next.ok()) {
          error = next.status();
          break;
        }
        if (*next == nullptr) break;
        ++batches_before_error;
      }
    }
  }
  ASSERT_FALSE(error.ok()) << file << " was read without an error";
  EXPECT_TRUE(error.IsInvalid()) << error.ToString();
  // The first compressed buffer is already wrong: no data may come out.
  EXPECT_EQ(batches_before_error, 0);
  const std::string& m = error.message();
  EXPECT_TRUE(std::regex_search(m, std::regex("buffer [0-9]+"))) << "no buffer named: " << m;
  EXPECT_TRUE(std::regex_search(m, std::regex("expected [0-9]+ bytes"))) << "no expected size: " << m;
  EXPECT_TRUE(std::regex_search(m, std::regex("message [0-9]+"))) << "no message index: " << m;
  std::cout << "[ rejected ] " << file << ": " << m << std::endl;
  EXPECT_EQ(pool->held_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(ArrowJs, InvalidPeerSampleTest,
                         ::testing::Values("js_lz4.stream", "js_zstd.stream", "js_zstd.arrow_file",
                                           "js_dict_zstd.stream"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return TestNameOf(i.param); });

}  // namespace
}  // namespace quiver::cross_test
