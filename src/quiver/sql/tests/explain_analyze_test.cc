// EXPLAIN ANALYZE (sql/explain.h): the statement runs, and each operator of
// the plan shows the rows it returned beside its estimate; the counts are
// checked against what the data holds, at one and two threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class ExplainAnalyzeTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    // t(k int64, g int64): k = 0..99, g = k % 4; u(g int64, name): g = 0..2.
    std::vector<std::optional<int64_t>> k, g, ug;
    for (int64_t i = 0; i < 100; ++i) {
      k.emplace_back(i);
      g.emplace_back(i % 4);
    }
    for (int64_t i = 0; i < 3; ++i) ug.emplace_back(i);
    auto t = std::make_shared<Schema>();
    t->fields = {field("k", int64(), true), field("g", int64(), true)};
    ASSERT_OK(catalog_->RegisterBatches("t", t,
                                        Split(Batch(t, {Int64Array(pool_.get(), k), Int64Array(pool_.get(), g)}), 7)));
    auto u = std::make_shared<Schema>();
    u->fields = {field("g", int64(), true)};
    ASSERT_OK(catalog_->RegisterBatches("u", u, {Batch(u, {Int64Array(pool_.get(), ug)})}));
  }
  // The plan's lines, in order, indentation kept.
  V Plan(const std::string& sql, int threads = 1, bool join_filters = true) {
    ExecuteOptions o = Options();
    o.threads = threads;
    o.join_filters = join_filters;
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, /*sorted=*/false) : V{};
  }
  // The `rows=` of the first line holding `op`, or -1.
  static int64_t RowsOf(const V& plan, const std::string& op) {
    for (const auto& line : plan) {
      if (line.find(op) == std::string::npos) continue;
      const size_t at = line.find(" rows=");
      return at == std::string::npos ? -1 : std::stoll(line.substr(at + 6));
    }
    return -2;  // no such operator
  }
};

TEST_F(ExplainAnalyzeTest, EveryOperatorShowsTheRowsItReturned) {
  const std::string sql =
      "EXPLAIN ANALYZE SELECT t.g, count(*) FROM t JOIN u ON t.g = u.g WHERE t.k < 60 GROUP BY t.g ORDER BY t.g";
  for (int threads : {1, 2}) {
    const V plan = Plan(sql, threads, /*join_filters=*/false);
    ASSERT_GE(plan.size(), 6u) << threads;
    // k < 60: 60 rows; their g in u (0..2): 45; 3 groups.
    EXPECT_EQ(RowsOf(plan, "Scan t "), 60) << threads;
    EXPECT_EQ(RowsOf(plan, "Scan u "), 3) << threads;
    EXPECT_EQ(RowsOf(plan, "Join inner"), 45) << threads;
    EXPECT_EQ(RowsOf(plan, "Aggregate"), 3) << threads;
    EXPECT_EQ(RowsOf(plan, "Sort"), 3) << threads;
    EXPECT_EQ(plan.back().rfind("result rows=3 time=", 0), 0u) << plan.back();
    EXPECT_NE(plan.front().find("est="), std::string::npos);
  }
  // With u's key range (0..2) filtering t's scan, the scan returns fewer
  // rows (a batch where under a quarter would go passes whole).
  const V filtered = Plan(sql);
  EXPECT_GE(RowsOf(filtered, "Scan t "), 45);
  EXPECT_LT(RowsOf(filtered, "Scan t "), 60);
  EXPECT_EQ(RowsOf(filtered, "Join inner"), 45);
}

TEST_F(ExplainAnalyzeTest, AScanWhoseFiltersTheAggregateEvaluatesSaysSo) {
  const V plan = Plan("EXPLAIN ANALYZE SELECT count(*) FROM t WHERE k >= 90");
  const auto scan = std::find_if(plan.begin(), plan.end(),
                                 [](const std::string& l) { return l.find("Scan t") != std::string::npos; });
  ASSERT_NE(scan, plan.end());
  EXPECT_NE(scan->find("rows=100 (before its filters"), std::string::npos) << *scan;
  EXPECT_EQ(RowsOf(plan, "Aggregate"), 1);
  EXPECT_EQ(plan.back().rfind("result rows=1 ", 0), 0u) << plan.back();
}

TEST_F(ExplainAnalyzeTest, PlainExplainAndAnalyzeFalseDoNotRun) {
  for (const char* sql : {"EXPLAIN SELECT count(*) FROM t", "EXPLAIN (ANALYZE false) SELECT count(*) FROM t",
                          "EXPLAIN (ANALYZE 0) SELECT count(*) FROM t"}) {
    const V plan = Plan(sql);
    ASSERT_EQ(plan.size(), 3u) << sql;
    for (const auto& line : plan) EXPECT_EQ(line.find("rows="), std::string::npos) << sql << ": " << line;
  }
  const V on = Plan("EXPLAIN (ANALYZE on) SELECT count(*) FROM t");
  EXPECT_EQ(RowsOf(on, "Aggregate"), 1);
}

TEST_F(ExplainAnalyzeTest, TheStatementsErrorIsReturned) {
  auto r = Run("EXPLAIN ANALYZE SELECT k / (k - k) FROM t");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("division by zero"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace quiver::sql
