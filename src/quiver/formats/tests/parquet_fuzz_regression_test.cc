// Inputs the Parquet fuzz target (fuzz/parquet_read_fuzz.cc) crashed on or
// reported undefined behaviour for, read the way it reads them (from
// memory, every row group and column, validated), each a clean read or a
// clean error now. `make test` runs these under ASan + UBSan (preset fuzz).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "quiver/columnar/validate.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/metadata_writer.h"
#include "quiver/formats/source.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::parquet {
namespace {

namespace fs = std::filesystem;

/// Rows read from `path` as the fuzz target reads it (from memory).
Result<int64_t> ReadAllRows(const fs::path& path, MemoryPool* pool) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::CopyOf(pool, bytes));
  auto source = std::make_shared<formats::MemorySource>(data, path.filename().string());
  QUIVER_ASSIGN_OR_RETURN(auto reader, FileReader::Open(source, pool));
  int64_t rows = 0;
  for (int g = 0; g < reader->num_row_groups(); ++g) {
    QUIVER_ASSIGN_OR_RETURN(auto batch, reader->ReadRowGroup(g, {}, pool));
    QUIVER_RETURN_NOT_OK(ValidateBatch(*batch, ValidationLevel::kFull));
    rows += batch->num_rows;
  }
  return rows;
}

class ParquetFuzzRegression : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = ::quiver::testing::SharedDataDir() / "parquet-testing" / "data";
    if (!fs::exists(data_ / "page_v2_empty_compressed.parquet")) GTEST_SKIP() << "no parquet-testing data in " << data_;
    pool_ = MemoryPool::MakeRoot({"parquet-fuzz-regression", int64_t{256} << 20});
  }
  fs::path data_;
  std::shared_ptr<MemoryPool> pool_;
};

// A v2 data page of 10 NULLs and no value bytes: the PLAIN decoder copied 0
// bytes to the not yet allocated (null) values buffer (UBSan: null pointer
// passed to memcpy).
TEST_F(ParquetFuzzRegression, AllNullV2PageDecodesNoValues) {
  ASSERT_OK_AND_ASSIGN(auto rows, ReadAllRows(data_ / "page_v2_empty_compressed.parquet", pool_.get()));
  EXPECT_EQ(rows, 10);
  EXPECT_EQ(pool_->held_bytes(), 0);
}

// Every file of parquet-testing's bad_data/ (the fuzz target's seeds) ends
// in an error or a validated read, never a crash, with every byte back.
TEST_F(ParquetFuzzRegression, BadDataFilesEndCleanly) {
  int files = 0, errors = 0;
  for (const auto& entry : fs::directory_iterator(data_.parent_path() / "bad_data")) {
    if (entry.path().extension() != ".parquet") continue;
    ++files;
    auto rows = ReadAllRows(entry.path(), pool_.get());
    if (!rows.ok()) {
      ++errors;
      EXPECT_FALSE(rows.status().message().empty()) << entry.path();
    }
    EXPECT_EQ(pool_->held_bytes(), 0) << entry.path();
  }
  EXPECT_GE(files, 8);
  EXPECT_GE(errors, 6);
}

// A flipped bit in a footer (found by a tester: one bit turned a file into
// "0 row groups, 0 rows", another a row group into 0 rows, both read
// without an error) must be an error: FileMetaData's required fields and
// its num_rows against the row groups' sum are checked.
TEST(ParquetFooterChecks, AMissingRequiredFieldOrARowCountMismatchIsAnError) {
  FileMetaData md;
  md.version = 2;
  md.schema.resize(1);
  md.schema[0].name = "schema";
  md.schema[0].num_children = 0;
  md.num_rows = 10;
  md.row_groups.resize(2);
  md.row_groups[0].num_rows = 4;
  md.row_groups[1].num_rows = 6;
  const std::string good = EncodeFileMetaData(md, false);
  auto decoded = DecodeFileMetaData({reinterpret_cast<const uint8_t*>(good.data()), good.size()});
  ASSERT_OK(decoded.status());
  EXPECT_EQ(decoded->num_rows, 10);
  md.row_groups[1].num_rows = 0;
  const std::string lost = EncodeFileMetaData(md, false);
  auto mismatch = DecodeFileMetaData({reinterpret_cast<const uint8_t*>(lost.data()), lost.size()});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("num_rows is 10 but its 2 row groups hold 4"), std::string::npos)
      << mismatch.status().ToString();
  // Only field 1 (version = 2: compact header 0x15, zigzag 0x04), then STOP.
  const uint8_t only_version[] = {0x15, 0x04, 0x00};
  auto missing = DecodeFileMetaData(only_version);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("required field 2 (schema) is missing"), std::string::npos)
      << missing.status().ToString();
}

}  // namespace
}  // namespace quiver::parquet
