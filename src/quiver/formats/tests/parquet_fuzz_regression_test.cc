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

}  // namespace
}  // namespace quiver::parquet
