// Parquet file tables scanned in place (sql/file_scan.h, issue 36 section
// 1 "Scans"): only the footers are read at planning; a statement reads
// only the column chunks of its columns, skips the row groups whose
// statistics exclude its filter, and decodes into its scan pool a row
// group at a time, so a file larger than the statement's memory limit
// scans under it. The files come from parquet_test_file.h (required INT64
// columns, known statistics); expected values are computed here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "quiver/formats/parquet/file_reader.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tests/parquet_test_file.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class FileScanTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    dir_ = fs::temp_directory_path() / ("quiver-file-scan-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // 1,000 rows in 10 row groups of 100: a = row (sorted), b = 2 * row,
    // c = row % 7.
    path_ = (dir_ / "t.parquet").string();
    WriteInt64Parquet(path_, {"a", "b", "c"}, 1000, 100,
                      [](int64_t r, size_t c) { return c == 0 ? r : (c == 1 ? 2 * r : r % 7); });
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  // Registers `path` as table `name` the way `quiver sql --table` does.
  std::shared_ptr<const FileTableSource> Register(const std::string& name, const std::string& path) {
    FileTableOptions o;
    o.format = FileFormat::kParquet;
    auto info = LoadFileTable(name, {path}, o, pool_.get());
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) return nullptr;
    auto source = info->file_source;
    EXPECT_NE(source, nullptr);
    EXPECT_OK(catalog_->RegisterFileTable(name, std::move(*info)));
    return source;
  }
  V Query(const std::string& sql, ExecuteOptions o) {
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, false) : V{};
  }
  V Query(const std::string& sql) { return Query(sql, Options()); }
  fs::path dir_;
  std::string path_;
};

TEST_F(FileScanTest, PlanningReadsOnlyTheFooter) {
  const int64_t held = pool_->held_bytes();  // the fixture's in-memory tables
  auto src = Register("pq", path_);
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->num_rows(), 1000);
  EXPECT_EQ(src->num_row_groups(), 10);
  EXPECT_EQ(src->column_chunks_read(), 0);
  EXPECT_EQ(src->row_groups_read(), 0);
  EXPECT_EQ(pool_->held_bytes(), held);  // the footer's bytes were released
}

TEST_F(FileScanTest, ProjectionReadsOnlyTheColumnsTheQueryReads) {
  auto src = Register("pq", path_);
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(Query("SELECT sum(b) FROM pq"), (V{"999000"}));
  EXPECT_EQ(src->row_groups_read(), 10);
  EXPECT_EQ(src->column_chunks_read(), 10);  // b's chunks only, of 30
  const int64_t one_column = src->bytes_read();
  EXPECT_GT(one_column, 10 * 100 * 8);  // values and page headers
  EXPECT_LT(one_column, 10 * 100 * 8 + 10 * 64);
  // count(*) reads no column chunk at all
  EXPECT_EQ(Query("SELECT count(*) FROM pq"), (V{"1000"}));
  EXPECT_EQ(src->column_chunks_read(), 10);
  EXPECT_EQ(Query("SELECT sum(a), max(c) FROM pq WHERE c = 6"), (V{"70929|6"}));
  EXPECT_EQ(src->column_chunks_read(), 30);
}

TEST_F(FileScanTest, RowGroupStatisticsPruneTheFilter) {
  auto src = Register("pq", path_);
  ASSERT_NE(src, nullptr);
  // a in [250, 420): row groups 2, 3 and 4; sum(b) = 2 * (250 + ... + 419)
  EXPECT_EQ(Query("SELECT count(*), sum(b) FROM pq WHERE a >= 250 AND a < 420"), (V{"170|113730"}));
  EXPECT_EQ(src->row_groups_read(), 3);
  EXPECT_EQ(src->row_groups_pruned(), 7);
  // BETWEEN, constants on the left, IN, an aggregate that takes the filter
  EXPECT_EQ(Query("SELECT count(*) FROM pq WHERE a BETWEEN 150 AND 199"), (V{"50"}));
  EXPECT_EQ(src->row_groups_read(), 4);
  EXPECT_EQ(Query("SELECT count(*) FROM pq WHERE 905 <= a"), (V{"95"}));
  EXPECT_EQ(src->row_groups_read(), 5);
  EXPECT_EQ(Query("SELECT a FROM pq WHERE a IN (5, 905, 5000) ORDER BY a"), (V{"5", "905"}));
  EXPECT_EQ(src->row_groups_read(), 7);
  EXPECT_EQ(Query("SELECT c, count(*) FROM pq WHERE b > 1990 GROUP BY c ORDER BY c"), (V{"2|1", "3|1", "4|1", "5|1"}));
  EXPECT_EQ(src->row_groups_read(), 8);
  // nothing can match: no row group read, the aggregate of no rows
  EXPECT_EQ(Query("SELECT count(*), sum(a) FROM pq WHERE a = 2000"), (V{"0|null"}));
  EXPECT_EQ(src->row_groups_read(), 8);
  EXPECT_EQ(src->row_groups_pruned(), 7 + 9 + 9 + 8 + 9 + 10);
  // a filter statistics cannot decide (c's ranges overlap every group) and
  // an OR prune nothing; the answers stay right
  EXPECT_EQ(Query("SELECT count(*) FROM pq WHERE c = 3 OR a = 1"), (V{"144"}));
  EXPECT_EQ(src->row_groups_read(), 18);
  EXPECT_EQ(Query("SELECT count(*) FROM pq WHERE a < 2.5"), (V{"3"}));  // not exact in BIGINT: not pruned
  EXPECT_EQ(src->row_groups_read(), 28);
}

TEST_F(FileScanTest, ParallelScansEqualSerialOnes) {
  auto src = Register("pq", path_);
  ASSERT_NE(src, nullptr);
  for (int threads : {1, 2, 4}) {
    ExecuteOptions o = Options();
    o.threads = threads;
    EXPECT_EQ(Query("SELECT c, count(*), sum(a), min(b) FROM pq WHERE a >= 100 GROUP BY c ORDER BY c", o),
              (V{"0|128|70336|210", "1|128|70464|212", "2|129|70692|200", "3|129|70821|202", "4|129|70950|204",
                 "5|129|71079|206", "6|128|70208|208"}))
        << threads;
    EXPECT_EQ(Query("SELECT a FROM pq WHERE a > 995 ORDER BY a", o), (V{"996", "997", "998", "999"})) << threads;
  }
}

TEST_F(FileScanTest, RowGroupsAreHandedOutInSlicesNumberedInStorageOrder) {
  auto src = Register("pq", path_);
  ASSERT_NE(src, nullptr);
  auto table = catalog_->GetTable("pq");
  ASSERT_OK(table);
  // Slices of 30 rows: 30, 30, 30 and 10 of each 100-row group, 40 in all,
  // taken by 3 threads at once (several row groups open together).
  auto scan = catalog_->OpenSharedScan(*table, pool_.get(), std::vector<int>{0, 1}, 30);
  ASSERT_OK(scan);
  std::mutex mutex;
  std::map<int64_t, RecordBatchPtr> slices;
  std::vector<int64_t> ends;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      while (true) {
        int64_t seq = -1;
        auto b = (*scan)->Next(&seq);
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_TRUE(b.ok()) << b.status().ToString();
        if (!b.ok() || !*b) {
          ends.push_back(seq);
          return;
        }
        EXPECT_TRUE(slices.emplace(seq, *b).second) << "morsel " << seq << " handed out twice";
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ends, (std::vector<int64_t>{40, 40, 40}));
  ASSERT_EQ(slices.size(), 40u);
  int64_t row = 0;
  for (const auto& [seq, b] : slices) {
    EXPECT_EQ(b->num_rows, seq % 4 == 3 ? 10 : 30) << seq;
    const auto* a = reinterpret_cast<const int64_t*>(b->columns[0]->buffers[1]->data()) + b->columns[0]->offset;
    const auto* bb = reinterpret_cast<const int64_t*>(b->columns[1]->buffers[1]->data()) + b->columns[1]->offset;
    for (int64_t i = 0; i < b->num_rows; ++i, ++row) {
      ASSERT_EQ(a[i], row) << "morsel " << seq;
      ASSERT_EQ(bb[i], 2 * row) << "morsel " << seq;
    }
    EXPECT_EQ(b->columns[2], nullptr);  // not asked for
  }
  EXPECT_EQ(row, 1000);
  EXPECT_EQ(src->row_groups_read(), 10);
  EXPECT_EQ(src->column_chunks_read(), 20);
}

TEST_F(FileScanTest, SqlPathsAndGlobsScanInPlace) {
  fs::create_directories(dir_ / "g");
  for (int f = 0; f < 3; ++f) {
    WriteInt64Parquet((dir_ / "g" / ("p" + std::to_string(f) + ".parquet")).string(), {"x"}, 50, 20,
                      [f](int64_t r, size_t) { return f * 100 + r; });
  }
  ExecuteOptions o = Options();
  o.file_tables = true;
  EXPECT_EQ(Query("SELECT count(*), sum(x) FROM '" + (dir_ / "g").string() + "/*.parquet' WHERE x >= 240", o),
            (V{"10|2445"}));
  EXPECT_EQ(Query("SELECT count(*), sum(a) FROM read_parquet('" + path_ + "') WHERE a < 10", o), (V{"10|45"}));
}

TEST_F(FileScanTest, ACorruptRowGroupIsAnErrorNamingIt) {
  // row group 3's chunk of b: its page header overwritten
  auto reader = parquet::FileReader::Open(*formats::LocalFileSource::Open(path_), pool_.get());
  ASSERT_TRUE(reader.ok());
  const int64_t at = (*reader)->metadata().row_groups[3].columns[1].meta_data->data_page_offset;
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at);
    const std::string junk(6, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto src = Register("pq", path_);
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(Query("SELECT sum(a) FROM pq"), (V{"499500"}));  // b is not read
  auto r = Run("SELECT sum(b) FROM pq", Options());
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().ToString();
  EXPECT_NE(msg.find("t.parquet"), std::string::npos) << msg;
  EXPECT_NE(msg.find("row group 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'b'"), std::string::npos) << msg;
}

TEST_F(FileScanTest, AFileLargerThanTheMemoryLimitScansUnderIt) {
  // 6.4 M rows of one INT64 column: a 51 MB file, 50 row groups.
  const std::string big = (dir_ / "big.parquet").string();
  const int64_t rows = 6400 * 1000;
  WriteInt64Parquet(big, {"v"}, rows, 128 * 1000, [](int64_t r, size_t) { return r; });
  ASSERT_GT(fs::file_size(big), 50u * 1000 * 1000);
  constexpr int64_t kLimit = 16 << 20;
  // Loading the file whole (as file tables did before) cannot fit.
  auto limited = MemoryPool::MakeRoot({"limited", kLimit});
  auto whole = parquet::ReadParquetFile(big, limited.get());
  ASSERT_FALSE(whole.ok());
  EXPECT_TRUE(whole.status().IsOutOfMemory()) << whole.status().ToString();
  auto src = Register("big", big);
  ASSERT_NE(src, nullptr);
  for (int threads : {1, 2}) {
    ExecuteOptions o = Options();
    o.threads = threads;
    o.memory_limit_bytes = kLimit;
    pool_->ResetPeak();
    EXPECT_EQ(Query("SELECT sum(v), count(*) FROM big", o), (V{std::to_string(rows * (rows - 1) / 2) + "|6400000"}));
    EXPECT_LT(pool_->peak_bytes(), kLimit);
    EXPECT_GT(pool_->peak_bytes(), 1000 * 1000);  // a row group was decoded into the statement's pool
  }
}

}  // namespace
}  // namespace quiver::sql
