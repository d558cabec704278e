// A WHERE term holding an uncorrelated scalar subquery (bind_subquery.cc
// ApplySubqueryConjunct) goes as deep into the join tree as its columns
// allow, as the terms without subqueries do: TPC-DS 6's `d_month_seq =
// (SELECT DISTINCT d_month_seq ...)` filters date_dim's scan, not the join
// of store_sales with every other table. EXPLAIN shows where it went; the
// answers are computed from the tables' definitions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class SubqueryTermPushdownTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    MemoryPool* p = pool_.get();
    // sales(month, item, qty): 12 months x 50 items; qty = 1000 m + i.
    std::vector<std::optional<int32_t>> month, item;
    std::vector<std::optional<int64_t>> qty;
    for (int m = 1; m <= 12; ++m)
      for (int i = 0; i < 50; ++i) {
        month.emplace_back(m);
        item.emplace_back(i);
        qty.emplace_back(m * 1000 + i);
      }
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("month", int32(), true), field("item", int32(), true), field("qty", int64(), true)};
    ASSERT_OK(catalog_->RegisterBatches(
        "sales", schema, Split(Batch(schema, {Int32Array(p, month), Int32Array(p, item), Int64Array(p, qty)}), 128)));
    // months(m, quarter): 1..12.
    std::vector<std::optional<int32_t>> m, quarter;
    for (int k = 1; k <= 12; ++k) {
      m.emplace_back(k);
      quarter.emplace_back((k - 1) / 3 + 1);
    }
    auto ms = std::make_shared<Schema>();
    ms->fields = {field("m", int32(), true), field("quarter", int32(), true)};
    ASSERT_OK(catalog_->RegisterBatches("months", ms, {Batch(ms, {Int32Array(p, m), Int32Array(p, quarter)})}));
  }
  V Query(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : V{};
  }
  // The EXPLAIN line of the months scan.
  std::string MonthsScan(const std::string& sql) {
    for (const auto& line : Query("EXPLAIN " + sql))
      if (line.find("Scan months") != std::string::npos) return line.substr(line.find("Scan months"));
    return "";
  }
};

TEST_F(SubqueryTermPushdownTest, AnUncorrelatedSubqueryTermFiltersItsTablesScan) {
  // quarter = the quarter of month 5 (2): months 4..6.
  const std::string sql =
      "SELECT count(*), sum(qty) FROM sales s, months d WHERE s.month = d.m AND d.quarter = (SELECT quarter FROM "
      "months WHERE m = 5)";
  int64_t sum = 0;
  for (int m = 4; m <= 6; ++m)
    for (int i = 0; i < 50; ++i) sum += m * 1000 + i;
  EXPECT_EQ(Query(sql), V({"150|" + std::to_string(sum)}));
  const std::string scan = MonthsScan(sql);
  EXPECT_NE(scan.find("filters=1"), std::string::npos) << scan;
  EXPECT_NE(scan.find("(subquery)"), std::string::npos) << scan;
}

TEST_F(SubqueryTermPushdownTest, BesideACorrelatedSubqueryAsInTpcds6) {
  // Items above their month's average item (24.5: items 25..49) in
  // quarter 2 by the subquery; the correlated term stays above its join.
  const std::string sql =
      "SELECT count(*), sum(qty) FROM sales s, months d WHERE s.month = d.m AND d.quarter = (SELECT DISTINCT "
      "quarter FROM months WHERE m BETWEEN 4 AND 6) AND s.item > (SELECT avg(t.item) FROM sales t WHERE t.month = "
      "s.month)";
  int64_t sum = 0;
  for (int m = 4; m <= 6; ++m)
    for (int i = 25; i < 50; ++i) sum += m * 1000 + i;
  EXPECT_EQ(Query(sql), V({"75|" + std::to_string(sum)}));
  EXPECT_NE(MonthsScan(sql).find("filters=1"), std::string::npos);
  // A subquery of more than one row is still an error.
  auto r =
      Run("SELECT count(*) FROM sales s, months d WHERE s.month = d.m AND d.quarter = (SELECT quarter FROM months "
          "WHERE m < 5)");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace quiver::sql
