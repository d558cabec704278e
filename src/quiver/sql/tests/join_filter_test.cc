// Join filter pushdown (sql/execution/join_filter.h): a finished hash-join
// build's key range (and, for a narrow range, the key bitmap) filters the
// probe side's scan. Every case runs with join filters on and off and must
// give the same rows; the counters (ExecuteOptions::join_filter_counters)
// and a Parquet table's row-group counters show what the scans skipped.
// Expected counts are computed from the tables' definitions here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "quiver/sql/execution/join_filter.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tests/parquet_test_file.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

constexpr int64_t kFactRows = 100000;
constexpr int64_t kFactBatchRows = 4096;  // 25 batches; key = row / 100, so 40.96 keys a batch
constexpr int64_t kFactBatches = (kFactRows + kFactBatchRows - 1) / kFactBatchRows;

// The fact batches holding at least one row whose key is in `keys`.
int64_t BatchesWithKeys(const std::function<bool(int64_t)>& keys) {
  int64_t n = 0;
  for (int64_t b = 0; b < kFactBatches; ++b) {
    bool any = false;
    for (int64_t r = b * kFactBatchRows; r < std::min(kFactRows, (b + 1) * kFactBatchRows) && !any; ++r)
      any = keys(r / 100);
    n += any ? 1 : 0;
  }
  return n;
}

class JoinFilterTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    MemoryPool* p = pool_.get();
    const int32_t day0 = static_cast<int32_t>(Days(2000, 1, 1));
    {
      // fact(k int32, v int64, dt date32): sorted by k, 100 rows per key.
      std::vector<std::optional<int32_t>> k, dt;
      std::vector<std::optional<int64_t>> v;
      for (int64_t r = 0; r < kFactRows; ++r) {
        k.emplace_back(static_cast<int32_t>(r / 100));
        v.emplace_back(r);
        dt.emplace_back(day0 + static_cast<int32_t>(r / 100));
      }
      auto schema = std::make_shared<Schema>();
      schema->fields = {field("k", int32(), true), field("v", int64(), true), field("dt", date32(), true)};
      auto b = Batch(schema, {Int32Array(p, k), Int64Array(p, v), PrimitiveArray<int32_t>(p, date32(), dt)});
      ASSERT_OK(catalog_->RegisterBatches("fact", schema, Split(b, kFactBatchRows)));
    }
    {
      // dim(k int64, attr int32, dt date32, name utf8): keys 0..999, one NULL key.
      std::vector<std::optional<int64_t>> k;
      std::vector<std::optional<int32_t>> attr, dt;
      std::vector<std::optional<std::string>> name;
      for (int64_t i = 0; i < 1000; ++i) {
        k.emplace_back(i);
        attr.emplace_back(static_cast<int32_t>(i));
        dt.emplace_back(day0 + static_cast<int32_t>(i));
        name.emplace_back("n" + std::to_string(i % 10));
      }
      k.emplace_back(std::nullopt);
      attr.emplace_back(15);
      dt.emplace_back(std::nullopt);
      name.emplace_back("null key");
      auto schema = std::make_shared<Schema>();
      schema->fields = {field("k", int64(), true), field("attr", int32(), true), field("dt", date32(), true),
                        field("name", utf8(), true)};
      auto b = Batch(schema, {Int64Array(p, k), Int32Array(p, attr), PrimitiveArray<int32_t>(p, date32(), dt),
                              StringArray(p, name, false)});
      ASSERT_OK(catalog_->RegisterBatches("dim", schema, Split(b, 300)));
    }
    {
      // wide(k int32, pad utf8): 20,000 rows of 400 bytes, keys 0..499 40 times each.
      std::vector<std::optional<int32_t>> k;
      std::vector<std::optional<std::string>> pad;
      for (int64_t i = 0; i < 20000; ++i) {
        k.emplace_back(static_cast<int32_t>(i % 500));
        pad.emplace_back(std::string(400, static_cast<char>('a' + i % 26)));
      }
      auto schema = std::make_shared<Schema>();
      schema->fields = {field("k", int32(), true), field("pad", utf8(), true)};
      auto b = Batch(schema, {Int32Array(p, k), StringArray(p, pad, false)});
      ASSERT_OK(catalog_->RegisterBatches("wide", schema, Split(b, 1000)));
    }
  }

  struct Outcome {
    V rows;
    int64_t published = 0, checked = 0, dropped = 0, batches_dropped = 0;
  };
  Outcome Query(const std::string& sql, bool filters, int threads = 1, int64_t limit_bytes = -1) {
    ExecuteOptions o;
    o.pool = pool_.get();
    o.threads = threads;
    o.join_filters = filters;
    o.memory_limit_bytes = limit_bytes;
    if (limit_bytes > 0) {
      o.max_batch_rows = 1024;
      o.spilled_files = std::make_shared<std::atomic<int64_t>>(0);
      o.spilled_bytes = std::make_shared<std::atomic<int64_t>>(0);
    }
    auto counters = std::make_shared<JoinFilterCounters>();
    o.join_filter_counters = counters;
    Outcome out;
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    if (r.ok()) out.rows = Rows(*r);
    if (limit_bytes > 0) spilled_files_ = o.spilled_files->load();
    out.published = counters->published.load();
    out.checked = counters->rows_checked.load();
    out.dropped = counters->rows_dropped.load();
    out.batches_dropped = counters->batches_dropped.load();
    return out;
  }
  // The query with filters on, checked against the run without them.
  Outcome Checked(const std::string& sql, int threads = 1) {
    Outcome off = Query(sql, false, threads);
    EXPECT_EQ(off.published, 0) << sql;
    EXPECT_EQ(off.checked, 0) << sql;
    Outcome on = Query(sql, true, threads);
    EXPECT_EQ(on.rows, off.rows) << sql;
    return on;
  }
  int64_t spilled_files_ = 0;
};

TEST_F(JoinFilterTest, AKeyRangeDropsTheProbeRowsAndBatchesOutsideIt) {
  const std::string sql =
      "SELECT count(*), sum(v), min(f.k), max(f.k) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr BETWEEN 10 AND "
      "19";
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    const Outcome on = Checked(sql, threads);
    // keys 10..19: rows 1000..1999, sum 1,499,500
    EXPECT_EQ(on.rows, V({"1000|1499500|10|19"}));
    EXPECT_EQ(on.published, 1);
    EXPECT_EQ(on.checked, kFactRows);
    EXPECT_EQ(on.dropped, kFactRows - 1000);
    // batch 0 holds keys 0..40; the 24 others are dropped whole
    EXPECT_EQ(on.batches_dropped, kFactBatches - BatchesWithKeys([](int64_t k) { return k >= 10 && k <= 19; }));
    EXPECT_EQ(on.batches_dropped, 24);
  }
}

TEST_F(JoinFilterTest, ANarrowKeySetFiltersByItsBitmap) {
  // keys 0, 100, ..., 900: the range [0, 900] keeps nearly everything, the
  // bitmap only their 10 x 100 rows.
  const std::string sql = "SELECT count(*), sum(v) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr % 100 = 0";
  const Outcome on = Checked(sql);
  int64_t sum = 0;
  for (int64_t r = 0; r < kFactRows; ++r)
    if ((r / 100) % 100 == 0) sum += r;
  EXPECT_EQ(on.rows, V({"1000|" + std::to_string(sum)}));
  EXPECT_EQ(on.dropped, kFactRows - 1000);
  EXPECT_EQ(on.batches_dropped, kFactBatches - BatchesWithKeys([](int64_t k) { return k % 100 == 0; }));
  EXPECT_EQ(on.batches_dropped, 15);
}

TEST_F(JoinFilterTest, SemiJoinsDateKeysAndEmptyBuildsFilterToo) {
  // IN (subquery): a semi join; its keys 500..509.
  Outcome on = Checked(
      "SELECT count(*), sum(v) FROM fact WHERE k IN (SELECT k FROM dim WHERE attr >= 500 AND "
      "attr < 510)");
  EXPECT_EQ(on.rows, V({"1000|" + std::to_string((50000 + 50999) * 1000 / 2)}));
  EXPECT_EQ(on.published, 1);
  EXPECT_EQ(on.dropped, kFactRows - 1000);
  // DATE keys: days 2000-01-01 + 990..999.
  on = Checked("SELECT count(*), min(f.k) FROM fact f JOIN dim d ON f.dt = d.dt WHERE d.attr >= 990");
  EXPECT_EQ(on.rows, V({"1000|990"}));
  EXPECT_EQ(on.dropped, kFactRows - 1000);
  // No build row: every probe batch goes.
  on = Checked("SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr < 0");
  EXPECT_EQ(on.rows, V({"0"}));
  EXPECT_EQ(on.published, 1);
  EXPECT_EQ(on.batches_dropped, kFactBatches);
  // The build's one NULL key (attr 15) matches nothing, as without filters.
  on = Checked("SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr = 15");
  EXPECT_EQ(on.rows, V({"100"}));
  EXPECT_EQ(on.dropped, kFactRows - 100);
}

TEST_F(JoinFilterTest, ABatchLosingFewRowsGoesOnWhole) {
  // keys 0..998: fact's last batch (rows 98,304..99,999, keys 983..999)
  // would lose its 100 rows of key 999, 6% of it: not worth gathering its
  // columns for, so it goes on whole and the join drops them.
  Outcome on = Checked("SELECT count(*), sum(v) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr < 999");
  EXPECT_EQ(on.rows,
            V({std::to_string(kFactRows - 100) + "|" + std::to_string((kFactRows - 100) * (kFactRows - 101) / 2)}));
  EXPECT_EQ(on.checked, kFactRows);
  EXPECT_EQ(on.dropped, 0);
  // keys 0..899: batch 21 (rows 86,016..90,111) loses 112 rows and goes
  // on whole; batches 22..24 lose every row and are dropped.
  on = Checked("SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k WHERE d.attr < 900");
  EXPECT_EQ(on.rows, V({"90000"}));
  EXPECT_EQ(on.batches_dropped, 3);
  EXPECT_EQ(on.dropped, kFactRows - 22 * kFactBatchRows);
}

TEST_F(JoinFilterTest, FiltersPassGroupByRenamesAndOtherJoinsButNotLimitsOrPreservedSides) {
  // Below GROUP BY k, through a rename, under a second join.
  Outcome on = Checked(
      "SELECT count(*), sum(s) FROM (SELECT k AS key, sum(v) s FROM fact GROUP BY k) a JOIN dim d ON a.key = d.k "
      "JOIN dim e ON e.k = d.k WHERE d.attr < 5");
  EXPECT_EQ(on.rows, V({"5|" + std::to_string(499 * 500 / 2)}));
  EXPECT_EQ(on.published, 2);
  // fact's rows with k >= 5 (dim d's NULL key, which e's keys exclude, is
  // 1 of its batch's 101 rows: the batch goes on whole, see below)
  EXPECT_EQ(on.checked, kFactRows + 1001);
  EXPECT_EQ(on.dropped, kFactRows - 500);
  // LIMIT under the join: the rows it picks must not change. (The 250
  // rows build, and their key 0..2 filter dim's scan instead.)
  on = Checked("SELECT count(*) FROM (SELECT * FROM fact LIMIT 250) f JOIN dim d ON f.k = d.k WHERE d.attr >= 1");
  EXPECT_EQ(on.rows, V({"150"}));
  EXPECT_EQ(on.checked, 1001);
  EXPECT_EQ(on.dropped, 1001 - 3);
  // LEFT join: the probe side is preserved.
  on = Checked("SELECT count(*), count(d.k) FROM fact f LEFT JOIN dim d ON f.k = d.k AND d.attr < 3");
  EXPECT_EQ(on.rows, V({std::to_string(kFactRows) + "|300"}));
  EXPECT_EQ(on.published, 0);
  // A window over the probe side reads the other rows of its partition.
  on = Checked(
      "SELECT count(*), sum(n) FROM (SELECT k, count(*) OVER () n FROM fact) f JOIN dim d ON f.k = d.k WHERE "
      "d.attr = 7");
  EXPECT_EQ(on.rows, V({"100|" + std::to_string(100 * kFactRows)}));
  EXPECT_EQ(on.published, 0);
}

TEST_F(JoinFilterTest, ASpillingBuildStillPublishesItsRange) {
  // A build side too large for 6 MiB (wide: 20,000 rows of 400 bytes): a
  // grace hash join. Its keys 0..499 (each 40 times) filter the probe side.
  const std::string sql = "SELECT count(*), sum(v), max(w.pad) FROM fact f JOIN wide w ON f.k = w.k";
  const Outcome off = Query(sql, false, 2, 6 << 20);
  EXPECT_GT(spilled_files_, 0);
  const Outcome on = Query(sql, true, 2, 6 << 20);
  EXPECT_GT(spilled_files_, 0);
  EXPECT_EQ(on.rows, off.rows);
  // rows 0..49,999 join 40 build rows each
  EXPECT_EQ(on.rows, V({"2000000|" + std::to_string(int64_t{49999} * 50000 / 2 * 40) + "|" + std::string(400, 'z')}));
  EXPECT_EQ(on.published, 1);
  EXPECT_EQ(on.dropped, kFactRows / 2);
}

TEST_F(JoinFilterTest, ParquetRowGroupsOutsideTheRangeAreNotRead) {
  const fs::path dir = fs::temp_directory_path() / ("quiver-join-filter-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "pq.parquet").string();
  // 10,000 rows in 10 row groups: a = row / 10 (0..999, sorted), b = row.
  WriteInt64Parquet(path, {"a", "b"}, 10000, 1000, [](int64_t r, size_t c) { return c == 0 ? r / 10 : r; });
  FileTableOptions fo;
  fo.format = FileFormat::kParquet;
  auto info = LoadFileTable("pq", {path}, fo, pool_.get());
  ASSERT_OK(info);
  auto source = info->file_source;
  ASSERT_OK(catalog_->RegisterFileTable("pq", std::move(*info)));
  const std::string sql = "SELECT count(*), sum(b) FROM pq JOIN dim d ON pq.a = d.k WHERE d.attr BETWEEN 250 AND 260";
  const Outcome off = Query(sql, false);
  const int64_t read_off = source->row_groups_read(), pruned_off = source->row_groups_pruned();
  EXPECT_EQ(read_off, 10);
  EXPECT_EQ(pruned_off, 0);
  const Outcome on = Query(sql, true);
  EXPECT_EQ(on.rows, off.rows);
  // keys 250..260: rows 2500..2609, in row groups 2 only
  int64_t sum = 0;
  for (int64_t r = 2500; r < 2610; ++r) sum += r;
  EXPECT_EQ(on.rows, V({"110|" + std::to_string(sum)}));
  EXPECT_EQ(source->row_groups_read() - read_off, 1);
  EXPECT_EQ(source->row_groups_pruned() - pruned_off, 9);
  EXPECT_EQ(on.checked, 1000);
  EXPECT_EQ(on.dropped, 890);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(JoinKeyBoundsTest, RangesAndBitmapsAnswerExactly) {
  auto pool = MemoryPool::MakeRoot({"bounds"});
  auto keys = Int32Array(pool.get(), {5, std::nullopt, 9, 7, 5});
  JoinKeySummary s, t;
  s.Add(*keys);
  t.Add(*Int32Array(pool.get(), {std::nullopt}));
  s.Merge(t);
  ASSERT_TRUE(s.usable());
  JoinKeyBounds b = s.bounds();
  EXPECT_TRUE(b.any);
  EXPECT_EQ(b.min, 5);
  EXPECT_EQ(b.max, 9);
  AddKeyBitmap(&b, {keys});
  ASSERT_FALSE(b.bitmap.empty());  // 3 of 5 values present
  EXPECT_TRUE(b.MayMatch(5));
  EXPECT_FALSE(b.MayMatch(6));
  EXPECT_TRUE(b.MayMatch(7));
  EXPECT_FALSE(b.MayMatch(10));
  EXPECT_FALSE(b.MayMatch(4));
  std::vector<int64_t> sel;
  bool selected = false;
  auto probe = Int64Array(pool.get(), {4, 5, std::nullopt, 6, 9, INT64_MIN, INT64_MAX});
  EXPECT_EQ(SelectByJoinFilter(b, *probe, &sel, &selected), 5);
  EXPECT_TRUE(selected);
  EXPECT_EQ(sel, std::vector<int64_t>({1, 4}));
  // Every value present: the range alone.
  JoinKeyBounds dense = s.bounds();
  AddKeyBitmap(&dense, {Int32Array(pool.get(), {5, 6, 7, 8, 9})});
  EXPECT_TRUE(dense.bitmap.empty());
  // Nothing dropped: the selection stays unset.
  sel.clear();
  selected = false;
  EXPECT_EQ(SelectByJoinFilter(dense, *Int32Array(pool.get(), {5, 9, 6}), &sel, &selected), 0);
  EXPECT_FALSE(selected);
  // No key at all.
  JoinKeySummary none;
  EXPECT_FALSE(none.bounds().any);
  EXPECT_EQ(SelectByJoinFilter(none.bounds(), *Int32Array(pool.get(), {1, 2}), &sel, &selected), 2);
  EXPECT_TRUE(sel.empty());
}

}  // namespace
}  // namespace quiver::sql
