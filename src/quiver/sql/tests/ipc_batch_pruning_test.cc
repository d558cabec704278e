// IPC batch pruning (sql/ipc_batch_pruning.h, ipc/column_ranges.h): the
// column ranges quiver's writer records per record batch let a scan skip
// the batches a join filter's key range or a WHERE conjunct excludes,
// before reading them. Every query runs with join filters on and off and
// must give the same rows; the join filter counters count the rows the
// scan read (a skipped batch is never checked).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "quiver/ipc/column_ranges.h"
#include "quiver/ipc/writer.h"
#include "quiver/sql/execution/join_filter.h"
#include "quiver/sql/ipc_batch_pruning.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;
using P = parquet::StatsPredicate;

constexpr int64_t kRows = 10000;
constexpr int64_t kBatchRows = 1000;

// fact's k: row / 10, except batch 5 (all NULL) and the odd rows of batch 7.
std::optional<int32_t> KeyOf(int64_t r) {
  if (r / kBatchRows == 5 || (r / kBatchRows == 7 && r % 2 == 1)) return std::nullopt;
  return static_cast<int32_t>(r / 10);
}

class IpcBatchPruningTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    MemoryPool* p = pool_.get();
    dir_ = fs::temp_directory_path() / ("quiver-ipc-pruning-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::vector<std::optional<int32_t>> k;
    std::vector<std::optional<int64_t>> v;
    for (int64_t r = 0; r < kRows; ++r) {
      k.push_back(KeyOf(r));
      v.emplace_back(r);
    }
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("k", int32(), true), field("v", int64(), true)};
    auto batch = Batch(schema, {Int32Array(p, k), Int64Array(p, v)});
    for (bool ranges : {true, false}) {
      const std::string path = (dir_ / (ranges ? "fact.arrow" : "plain.arrow")).string();
      auto sink = ipc::OpenOutputFile(path);
      ASSERT_OK(sink);
      ipc::WriteOptions wo;
      wo.pool = p;
      wo.column_ranges = ranges;
      ASSERT_OK(ipc::WriteTable(sink->get(), schema, {batch}, ipc::IpcFormat::kFile, wo, kBatchRows));
      ASSERT_OK((*sink)->Commit());
      ASSERT_OK(catalog_->RegisterPath(ranges ? "fact" : "plain", path, p));
    }
    // dim(k int64, attr int32): keys 0..999 and one NULL key.
    std::vector<std::optional<int64_t>> dk;
    std::vector<std::optional<int32_t>> attr;
    for (int64_t i = 0; i < 1000; ++i) {
      dk.emplace_back(i);
      attr.emplace_back(static_cast<int32_t>(i));
    }
    dk.emplace_back(std::nullopt);
    attr.emplace_back(15);
    auto dschema = std::make_shared<Schema>();
    dschema->fields = {field("k", int64(), true), field("attr", int32(), true)};
    ASSERT_OK(catalog_->RegisterBatches("dim", dschema,
                                        Split(Batch(dschema, {Int64Array(p, dk), Int32Array(p, attr)}), 300)));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  struct Outcome {
    V rows;
    int64_t checked = 0;
  };
  Outcome Query(const std::string& sql, bool filters, int threads) {
    ExecuteOptions o;
    o.pool = pool_.get();
    o.threads = threads;
    o.join_filters = filters;
    auto counters = std::make_shared<JoinFilterCounters>();
    o.join_filter_counters = counters;
    Outcome out;
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    if (r.ok()) out.rows = Rows(*r);
    out.checked = counters->rows_checked.load();
    return out;
  }
  // The rows with join filters on (equal to those without), and the rows
  // the filtered scan read, at one and two threads.
  Outcome Checked(const std::string& sql) {
    Outcome first;
    for (int threads : {1, 2}) {
      const Outcome off = Query(sql, false, threads);
      const Outcome on = Query(sql, true, threads);
      EXPECT_EQ(on.rows, off.rows) << sql;
      if (threads == 1) first = on;
      EXPECT_EQ(on.rows, first.rows) << sql;
      EXPECT_EQ(on.checked, first.checked) << sql;
    }
    return first;
  }
  // count(*) and sum(v) of fact's rows whose key passes `keep`.
  static std::string CountSum(const std::function<bool(int32_t)>& keep) {
    int64_t n = 0, sum = 0;
    for (int64_t r = 0; r < kRows; ++r) {
      const auto k = KeyOf(r);
      if (k && keep(*k)) {
        ++n;
        sum += r;
      }
    }
    return std::to_string(n) + "|" + (n == 0 ? std::string("null") : std::to_string(sum));
  }

  fs::path dir_;
};

TEST_F(IpcBatchPruningTest, AJoinFilterRangeSkipsTheBatchesOutsideIt) {
  // keys 250..260: batch 2 only.
  const char* sql = "SELECT count(*), sum(v) FROM %s f JOIN dim d ON f.k = d.k WHERE d.attr BETWEEN 250 AND 260";
  char text[256];
  std::snprintf(text, sizeof text, sql, "fact");
  Outcome on = Checked(text);
  EXPECT_EQ(on.rows, V({CountSum([](int32_t k) { return k >= 250 && k <= 260; })}));
  EXPECT_EQ(on.rows, V({"110|" + std::to_string((2500 + 2609) * 110 / 2)}));
  EXPECT_EQ(on.checked, kBatchRows);
  // The same file without ranges: every batch read (and filtered by rows).
  std::snprintf(text, sizeof text, sql, "plain");
  const Outcome plain = Checked(text);
  EXPECT_EQ(plain.rows, on.rows);
  EXPECT_EQ(plain.checked, kRows);
}

TEST_F(IpcBatchPruningTest, AllNoneAndNullKeyBatches) {
  // No build row: every batch skipped unread.
  Outcome on = Checked("SELECT count(*), sum(v) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr < 0");
  EXPECT_EQ(on.rows, V({"0|null"}));
  EXPECT_EQ(on.checked, 0);
  // Every key: nothing skipped but batch 5, whose keys are all NULL.
  on = Checked("SELECT count(*), sum(v) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr >= 0");
  EXPECT_EQ(on.rows, V({CountSum([](int32_t) { return true; })}));
  EXPECT_EQ(on.checked, kRows - kBatchRows);
  // Batch 7 holds NULL keys among 700..799: read, its NULL rows dropped.
  on = Checked("SELECT count(*), sum(v) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr BETWEEN 700 AND 705");
  EXPECT_EQ(on.rows, V({CountSum([](int32_t k) { return k >= 700 && k <= 705; })}));
  EXPECT_EQ(on.rows.size(), 1u);
  EXPECT_EQ(on.rows[0].substr(0, 3), "30|");
  EXPECT_EQ(on.checked, kBatchRows);
  // The build's NULL key (attr 15) matches nothing; key 15's batch is read.
  on = Checked("SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr = 15");
  EXPECT_EQ(on.rows, V({"10"}));
  EXPECT_EQ(on.checked, kBatchRows);
}

TEST_F(IpcBatchPruningTest, WhereConjunctsPruneToo) {
  // Without a join: the scan's own conjuncts skip batches; answers as in
  // the file without ranges.
  for (const char* where : {"k = 950", "k BETWEEN 120 AND 480", "k IS NULL", "k IS NOT NULL", "k IN (3, 777, 2000)",
                            "k > 990", "k < 0", "k >= 0 AND v < 100"}) {
    SCOPED_TRACE(where);
    const auto with = Query(std::string("SELECT count(*), sum(v) FROM fact WHERE ") + where, true, 1);
    const auto without = Query(std::string("SELECT count(*), sum(v) FROM plain WHERE ") + where, true, 1);
    EXPECT_EQ(with.rows, without.rows);
  }
  EXPECT_EQ(Query("SELECT count(*) FROM fact WHERE k IS NULL", true, 1).rows, V({"1500"}));
  EXPECT_EQ(Query("SELECT count(*), sum(v) FROM fact WHERE k = 950", true, 2).rows,
            V({"10|" + std::to_string((9500 + 9509) * 10 / 2)}));
}

TEST(ColumnRangesTest, EncodeDecodeAndMatch) {
  auto pool = MemoryPool::MakeRoot({"ranges"});
  MemoryPool* p = pool.get();
  auto schema = std::make_shared<Schema>();
  auto all_null = Int32Array(p, {std::nullopt, std::nullopt, std::nullopt});
  std::vector<ArrayDataPtr> cols = {Int32Array(p, {5, std::nullopt, -9, 7}),
                                    Int64Array(p, {INT64_MIN, 3, INT64_MAX, 0}),
                                    StringArray(p, {"a", "b", "c", "d"}, false), Int32Array(p, {1, 2, 3, 4}),
                                    PrimitiveArray<int32_t>(p, date32(), {10957, 10958, 10956, 10960})};
  // A slice: rows 1..3 of column 3 (2, 3, 4).
  auto sliced = std::make_shared<ArrayData>(*cols[3]);
  sliced->offset = 1;
  sliced->length = 3;
  cols[3] = sliced;
  const std::string text = ipc::EncodeColumnRanges(cols);
  EXPECT_EQ(text,
            "0:-9:7:1;1:" + std::to_string(INT64_MIN) + ":" + std::to_string(INT64_MAX) + ":0;3:2:4:0;4:10956:10960:0");
  EXPECT_EQ(ipc::EncodeColumnRanges({all_null}), "0:::1");
  EXPECT_EQ(ipc::EncodeColumnRanges({Int32Array(p, {})}), "");
  auto decoded = ipc::DecodeColumnRanges(text);
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->size(), 4u);
  EXPECT_EQ((*decoded)[0].column, 0);
  EXPECT_EQ((*decoded)[0].min, -9);
  EXPECT_EQ((*decoded)[0].max, 7);
  EXPECT_TRUE((*decoded)[0].has_nulls);
  EXPECT_EQ((*decoded)[1].min, INT64_MIN);
  EXPECT_EQ((*decoded)[2].column, 3);
  auto nulls = ipc::DecodeColumnRanges("0:::1");
  ASSERT_TRUE(nulls.has_value());
  EXPECT_FALSE((*nulls)[0].any);
  for (const char* bad : {"x", "0:1:2", "0:2:1:0", "0:1::0", "0:1:2:2", "-1:1:2:0", "0:::0", "0:a:2:0", "0:1:2:0;x"})
    EXPECT_FALSE(ipc::DecodeColumnRanges(bad).has_value()) << bad;

  // Predicates against "k in [10, 20] with NULLs" (column 0) and column 1 all NULL.
  const KeyValueMetadata md = {{"other", "x"}, {std::string(ipc::kColumnRangesMetadataKey), "0:10:20:1;1:::1"}};
  auto may = [&](P::Op op, std::vector<int64_t> vs, int field = 0) {
    P pred{field, op, {}};
    for (int64_t v : vs) pred.values.push_back(parquet::StatsValue::Int(v));
    return BatchRangesMayMatch(md, std::vector<P>{pred});
  };
  EXPECT_TRUE(may(P::Op::kEq, {10}));
  EXPECT_FALSE(may(P::Op::kEq, {21}));
  EXPECT_FALSE(may(P::Op::kLt, {10}));
  EXPECT_TRUE(may(P::Op::kLe, {10}));
  EXPECT_FALSE(may(P::Op::kGt, {20}));
  EXPECT_TRUE(may(P::Op::kGe, {20}));
  EXPECT_TRUE(may(P::Op::kIn, {1, 15}));
  EXPECT_FALSE(may(P::Op::kIn, {1, 25}));
  EXPECT_TRUE(may(P::Op::kIsNull, {}));
  EXPECT_TRUE(may(P::Op::kIsNotNull, {}));
  EXPECT_FALSE(may(P::Op::kIsNotNull, {}, 1));
  EXPECT_FALSE(may(P::Op::kGe, {0}, 1));  // all NULL: no comparison holds
  EXPECT_TRUE(may(P::Op::kEq, {99}, 2));  // no range for column 2
  // A non-integer constant, no ranges, malformed ranges: may match.
  EXPECT_TRUE(BatchRangesMayMatch(md, std::vector<P>{P{0, P::Op::kEq, {parquet::StatsValue::Double(99.5)}}}));
  EXPECT_TRUE(BatchRangesMayMatch({}, std::vector<P>{P{0, P::Op::kEq, {parquet::StatsValue::Int(99)}}}));
  EXPECT_TRUE(BatchRangesMayMatch({{std::string(ipc::kColumnRangesMetadataKey), "junk"}},
                                  std::vector<P>{P{0, P::Op::kEq, {parquet::StatsValue::Int(99)}}}));
}

}  // namespace
}  // namespace quiver::sql
