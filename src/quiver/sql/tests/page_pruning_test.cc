// Page pruning of Parquet file tables by the page index (issue 36 section
// 1 "Scans"; formats/parquet/page_filter.h): the scan reads only the pages
// whose ColumnIndex may hold a row of the filter, trims the rows of pages
// that overlap the kept ranges in part (columns whose page boundaries
// differ included), and answers exactly as without pruning. The files are
// written by quiver's writer with small pages, so page counts are known.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "quiver/formats/parquet/file_writer.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tests/sql_test_fixture.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/shared_data.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class PagePruningTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    dir_ = fs::temp_directory_path() / ("quiver-page-pruning-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  // 10,000 rows in one row group, PLAIN, pages of 4,000 value bytes:
  // a = row (int64, sorted: 20 pages of 500 rows), b = 2 * row (the same
  // pages), s = 'v' + row % 13, NULL every 7th row (strings: pages of
  // other sizes, so boundaries differ from a's).
  std::string WriteSorted() {
    const int64_t n = 10000;
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("a", int64(), false), field("b", int64(), false), field("s", utf8())};
    std::vector<std::optional<int64_t>> a(n), b(n);
    std::vector<std::optional<std::string>> s(n);
    for (int64_t i = 0; i < n; ++i) {
      a[static_cast<size_t>(i)] = i;
      b[static_cast<size_t>(i)] = 2 * i;
      if (i % 7 != 0) s[static_cast<size_t>(i)] = "v" + std::to_string(i % 13);
    }
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema;
    batch->num_rows = n;
    batch->columns = {::quiver::testing::Int64Array(pool_.get(), a), ::quiver::testing::Int64Array(pool_.get(), b),
                      ::quiver::testing::StringArray(pool_.get(), s)};
    parquet::WriterOptions o;
    o.pool = pool_.get();
    o.codec = static_cast<int32_t>(parquet::Codec::kUncompressed);
    o.dictionary = false;
    o.data_page_bytes = 4000;
    o.row_group_rows = n;
    const std::string path = (dir_ / "sorted.parquet").string();
    auto st = parquet::WriteParquetFile(path, schema, {batch}, o);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    return path;
  }
  std::shared_ptr<const FileTableSource> Register(const std::string& name, const std::string& path) {
    FileTableOptions o;
    o.format = FileFormat::kParquet;
    auto info = LoadFileTable(name, {path}, o, pool_.get());
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) return nullptr;
    auto source = info->file_source;
    EXPECT_OK(catalog_->RegisterFileTable(name, std::move(*info)));
    return source;
  }
  V Query(const std::string& sql) {
    auto r = Run(sql, Options());
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, false) : V{};
  }
  // The answer with the page index, checked equal to the one without.
  V Both(const std::shared_ptr<const FileTableSource>& src, const std::string& sql) {
    src->UsePageIndex(false);
    const V off = Query(sql);
    src->UsePageIndex(true);
    const V on = Query(sql);
    EXPECT_EQ(on, off) << sql;
    return on;
  }
  fs::path dir_;
};

TEST_F(PagePruningTest, ASortedColumnReadsOnlyThePagesOfItsRange) {
  auto src = Register("t", WriteSorted());
  ASSERT_NE(src, nullptr);
  // a in [2250, 3300): a's and b's pages 4, 5 and 6 (rows 2000..3499) of 20.
  EXPECT_EQ(Query("SELECT count(*), sum(b), min(a), max(a) FROM t WHERE a >= 2250 AND a < 3300"),
            (V{"1050|5826450|2250|3299"}));
  EXPECT_EQ(src->row_groups_read(), 1);
  EXPECT_EQ(src->row_groups_pruned(), 0);
  EXPECT_EQ(src->pages_read(), 6);
  EXPECT_EQ(src->pages_pruned(), 34);
  // The same without the page index: every page, the same answer.
  src->UsePageIndex(false);
  EXPECT_EQ(Query("SELECT count(*), sum(b), min(a), max(a) FROM t WHERE a >= 2250 AND a < 3300"),
            (V{"1050|5826450|2250|3299"}));
  EXPECT_EQ(src->pages_read(), 6);
  EXPECT_EQ(src->pages_pruned(), 34);
  EXPECT_EQ(src->row_groups_read(), 2);
  src->UsePageIndex(true);
  // Nothing matches: the row group is pruned by its pages.
  EXPECT_EQ(Query("SELECT count(*) FROM t WHERE a = 20000"), (V{"0"}));
  EXPECT_EQ(src->row_groups_pruned(), 1);
}

TEST_F(PagePruningTest, PagesOfDifferentBoundariesAreTrimmedAlike) {
  auto src = Register("t", WriteSorted());
  ASSERT_NE(src, nullptr);
  // s's pages end elsewhere than a's: the rows of the range come out of
  // every column, and only they.
  EXPECT_EQ(
      Both(src, "SELECT a, b, s FROM t WHERE a BETWEEN 4990 AND 5010 ORDER BY a"),
      (V{"4990|9980|v11",  "4991|9982|null", "4992|9984|v0",   "4993|9986|v1",    "4994|9988|v2",  "4995|9990|v3",
         "4996|9992|v4",   "4997|9994|v5",   "4998|9996|null", "4999|9998|v7",    "5000|10000|v8", "5001|10002|v9",
         "5002|10004|v10", "5003|10006|v11", "5004|10008|v12", "5005|10010|null", "5006|10012|v1", "5007|10014|v2",
         "5008|10016|v3",  "5009|10018|v4",  "5010|10020|v5"}));
  // Two ranges (an IN list), every column, aggregated and row by row.
  EXPECT_EQ(Both(src, "SELECT count(*), count(s), sum(b) FROM t WHERE a IN (10, 499, 500, 7777, 9999)"),
            (V{"5|4|37570"}));
  for (const char* sql : {"SELECT count(*), count(s), sum(a), min(s), max(s) FROM t WHERE a > 9321",
                          "SELECT count(*), count(s), sum(a) FROM t WHERE a <= 777 AND b >= 500",
                          "SELECT s, count(*), sum(a) FROM t WHERE a < 1500 GROUP BY s ORDER BY s",
                          "SELECT a, s FROM t WHERE a IN (0, 1, 3499, 3500, 3501, 9998) ORDER BY a"}) {
    const V on = Both(src, sql);
    EXPECT_FALSE(on.empty()) << sql;
  }
  // A filter on a column without min / max in its pages' favour (s: every
  // page may hold 'v5') prunes nothing; the answer holds.
  EXPECT_EQ(Both(src, "SELECT count(*) FROM t WHERE s = 'v5'"), (V{"659"}));
}

TEST_F(PagePruningTest, ParquetTestingTinyPagesAnswerAlikeWithAndWithoutTheIndex) {
  const fs::path file = ::quiver::testing::SharedDataDir() / "parquet-testing" / "data" / "alltypes_tiny_pages.parquet";
  if (!fs::exists(file)) GTEST_SKIP() << "no parquet-testing data";
  auto src = Register("tp", file.string());
  ASSERT_NE(src, nullptr);
  for (const char* sql : {
           "SELECT count(*), sum(int_col), min(string_col), max(date_string_col) FROM tp WHERE id BETWEEN 1000 AND "
           "1100",
           "SELECT id, bool_col, tinyint_col, float_col, string_col FROM tp WHERE id IN (7, 3000, 7299) ORDER BY id",
           "SELECT count(*), sum(id) FROM tp WHERE bigint_col = 50 AND id < 400",
           "SELECT count(*), sum(id) FROM tp WHERE month = 3",
           "SELECT count(*) FROM tp WHERE id > 7290",
       }) {
    const V on = Both(src, sql);
    EXPECT_FALSE(on.empty()) << sql;
  }
  EXPECT_GT(src->pages_pruned(), 0);
}

}  // namespace
}  // namespace quiver::sql
