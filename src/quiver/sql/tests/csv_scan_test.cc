// CSV file tables scanned in place (sql/csv_scan.h; issue 36 §2): a file
// split into tiny byte ranges parsed on 4 threads gives the rows the
// serial parse gives (as sets, and in order under ORDER BY), with quoted
// fields holding line ends across the split points; an error names the
// file's line on any number of threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "quiver/sql/csv_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

std::string Text(int rows, int bad_row = -1) {
  std::string t = "id,note,price\n";
  for (int i = 0; i < rows; ++i) {
    t += (i == bad_row ? std::string("x") : std::to_string(i)) + ",";
    t += i % 3 == 0 ? "\"line\nbreak, \"\"q\"\"\r\n\"" : i % 3 == 1 ? "plain" : "\"\"";
    t += "," + std::to_string(i % 10) + ".5" + (i % 5 == 0 ? "\r\n" : "\n");
    if (i % 11 == 0) t += "\n";
  }
  t.pop_back();  // no line end after the last row
  return t;
}

class CsvScanTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    dir_ = fs::temp_directory_path() / ("quiver-csv-scan-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Status Register(const std::string& name, const std::string& text, int64_t range_bytes) {
    const std::string path = (dir_ / (name + ".csv")).string();
    std::ofstream(path, std::ios::binary) << text;
    FileTableOptions o;
    o.format = FileFormat::kCsv;
    o.hive_partitioning = false;
    o.csv_range_bytes = range_bytes;
    o.csv.sample_rows = 4;
    QUIVER_ASSIGN_OR_RETURN(auto info, LoadFileTable(name, {path}, o, pool_.get()));
    if (!info.csv_source) return Status::Invalid("not a CSV file table");
    return catalog_->RegisterFileTable(name, std::move(info));
  }
  Result<V> Query(const std::string& sql, int threads, bool sorted) {
    ExecuteOptions o = Options();
    o.threads = threads;
    QUIVER_ASSIGN_OR_RETURN(auto batches, Run(sql, o));
    return Rows(batches, sorted);
  }
  fs::path dir_;
};

TEST_F(CsvScanTest, ParallelRangesEqualTheSerialParse) {
  ASSERT_OK(Register("serial", Text(300), int64_t{16} << 20));  // one range
  ASSERT_OK(Register("split", Text(300), 23));                  // ~ 300 ranges
  ASSERT_OK_AND_ASSIGN(V want, Query("SELECT id, note, price FROM serial ORDER BY id", 1, false));
  ASSERT_EQ(want.size(), 300u);
  EXPECT_EQ(want[0], "0|line\nbreak, \"q\"\r\n|0.5");
  EXPECT_EQ(want[1], "1|plain|1.5");
  EXPECT_EQ(want[2], "2||2.5");
  for (int threads : {1, 2, 4}) {
    ASSERT_OK_AND_ASSIGN(V ordered, Query("SELECT id, note, price FROM split ORDER BY id", threads, false));
    EXPECT_EQ(ordered, want) << threads;
    ASSERT_OK_AND_ASSIGN(V set, Query("SELECT id, note, price FROM split", threads, true));
    std::vector<std::string> sorted_want = want;
    std::sort(sorted_want.begin(), sorted_want.end());
    EXPECT_EQ(set, sorted_want) << threads;
    ASSERT_OK_AND_ASSIGN(V agg,
                         Query("SELECT count(*), CAST(sum(price) AS BIGINT), count(note) FROM split", threads, false));
    EXPECT_EQ(agg, (V{"300|1500|300"})) << threads;
  }
}

TEST_F(CsvScanTest, AnErrorNamesTheFilesLineOnEveryThreadCount) {
  const std::string text = Text(200, 150);
  const size_t at = text.find("\nx,");
  ASSERT_NE(at, std::string::npos);
  int64_t line = 2;  // the header's line end, then every line end before the bad row
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n' ? 1 : 0;
  ASSERT_OK(Register("bad", text, 41));
  for (int threads : {1, 4}) {
    auto r = Query("SELECT sum(id) FROM bad", threads, false);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("bad.csv: line " + std::to_string(line) + ", column 1 ('id'): 'x'"),
              std::string::npos)
        << r.status().ToString();
  }
}

}  // namespace
}  // namespace quiver::sql
