// WHERE terms of a materialized WITH query's references pushed into the
// query (sql/planner/cte_filters.h): when every reference is filtered,
// the query computes only the rows one of them keeps. Each case is
// checked against the same statement with the WITH query written out
// twice (two queries named once each: inlined, filters pushed as usual),
// and EXPLAIN shows where the filter went.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class CteFilterTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    // sales(month int32, item int32, qty int64): 12 months x 50 items x 2.
    std::vector<std::optional<int32_t>> month, item;
    std::vector<std::optional<int64_t>> qty;
    for (int m = 1; m <= 12; ++m)
      for (int i = 0; i < 50; ++i)
        for (int k = 0; k < 2; ++k) {
          month.emplace_back(m);
          item.emplace_back(i);
          qty.emplace_back(m * 1000 + i * 10 + k);
        }
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("month", int32(), true), field("item", int32(), true), field("qty", int64(), true)};
    auto b =
        Batch(schema, {Int32Array(pool_.get(), month), Int32Array(pool_.get(), item), Int64Array(pool_.get(), qty)});
    ASSERT_OK(catalog_->RegisterBatches("sales", schema, Split(b, 128)));
  }
  V Query(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : V{};
  }
  // The EXPLAIN lines of `sql` that name the sales scan.
  V SalesScans(const std::string& sql) {
    V out;
    for (const auto& line : Query("EXPLAIN " + sql))
      if (line.find("Scan sales") != std::string::npos) out.push_back(line.substr(line.find("Scan sales")));
    return out;
  }
};

constexpr const char* kBody = "SELECT item, month, sum(qty) s, count(*) c FROM sales GROUP BY item, month";

TEST_F(CteFilterTest, EveryReferenceFilteredPushesTheirOrIntoTheQuery) {
  const std::string shared = std::string("WITH inv AS (") + kBody +
                             ") SELECT a.item, a.s, b.s, b.c FROM inv a, inv b WHERE a.item = b.item AND "
                             "a.month = 1 AND b.month = 2 AND a.item < 3";
  const std::string inlined = std::string("WITH inv1 AS (") + kBody + "), inv2 AS (" + kBody +
                              ") SELECT a.item, a.s, b.s, b.c FROM inv1 a, inv2 b WHERE a.item = b.item AND "
                              "a.month = 1 AND b.month = 2 AND a.item < 3";
  const V want = {"0|2001|4001|2", "1|2021|4021|2", "2|2041|4041|2"};
  EXPECT_EQ(Query(shared), want);
  EXPECT_EQ(Query(inlined), want);
  // The WITH query reads months 1 and 2 only (a.item < 3 is one
  // reference's, so not every reference keeps it: it stays above).
  const V scans = SalesScans(shared);
  ASSERT_FALSE(scans.empty());
  for (const auto& s : scans) {
    EXPECT_NE(s.find("filters=1"), std::string::npos) << s;
    EXPECT_NE(s.find("OR"), std::string::npos) << s;
  }
}

TEST_F(CteFilterTest, AReferenceWithoutFilterOrInsideAScalarSubqueryKeepsTheQueryWhole) {
  // b reads every month: nothing can be pushed.
  const std::string unfiltered = std::string("WITH inv AS (") + kBody +
                                 ") SELECT count(*), sum(b.s) FROM inv a, inv b WHERE a.item = b.item AND a.month = 3";
  // 50 items x 12 months of b: sum of 2 x (1000 m + 10 i) + 1
  EXPECT_EQ(Query(unfiltered), V({"600|" + std::to_string(2000 * 78 * 50 + 20 * 1225 * 12 + 600)}));
  for (const auto& s : SalesScans(unfiltered)) EXPECT_NE(s.find("filters=0"), std::string::npos) << s;
  // A reference in a scalar subquery is not in the statement's plan tree:
  // the query stays whole for it (its max is over every month).
  const std::string scalar = std::string("WITH inv AS (") + kBody +
                             ") SELECT a.item, a.s, (SELECT max(s) FROM inv WHERE month = 12) FROM inv a WHERE "
                             "a.month = 1 AND a.item = 4";
  EXPECT_EQ(Query(scalar), V({"4|2081|24981"}));
}

}  // namespace
}  // namespace quiver::sql
