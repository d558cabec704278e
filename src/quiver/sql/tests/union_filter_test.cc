// WHERE terms over a UNION [ALL]'s columns pushed into each branch
// (sql/planner/join_order.h PushFilter): each branch's expression is
// substituted for the column, a branch whose constant makes the term
// FALSE is dropped, and the rest moves on down (below GROUP BY, onto the
// scans). TPC-DS 4, 11 and 74's year_total: sale_type = 's' AND
// dyear = 2001 keeps one branch and one year of it. EXPLAIN shows where
// the terms went; the answers are checked by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class UnionFilterTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    // ss(month int32, item int32, qty int64): months 1-3 x items 0-3,
    // qty = 100 month + item, and (NULL, 9, 7). ws(month int64, ...):
    // qty = 1000 month + item, and (NULL, 9, 5).
    for (int t = 0; t < 2; ++t) {
      std::vector<std::optional<int32_t>> month32, item;
      std::vector<std::optional<int64_t>> month64, qty;
      for (int m = 1; m <= 3; ++m)
        for (int i = 0; i < 4; ++i) {
          month32.emplace_back(m);
          month64.emplace_back(m);
          item.emplace_back(i);
          qty.emplace_back((t == 0 ? 100 : 1000) * m + i);
        }
      month32.emplace_back(std::nullopt);
      month64.emplace_back(std::nullopt);
      item.emplace_back(9);
      qty.emplace_back(t == 0 ? 7 : 5);
      auto schema = std::make_shared<Schema>();
      schema->fields = {field("month", t == 0 ? int32() : int64(), true), field("item", int32(), true),
                        field("qty", int64(), true)};
      auto b = Batch(schema, {t == 0 ? Int32Array(pool_.get(), month32) : Int64Array(pool_.get(), month64),
                              Int32Array(pool_.get(), item), Int64Array(pool_.get(), qty)});
      ASSERT_OK(catalog_->RegisterBatches(t == 0 ? "ss" : "ws", schema, Split(b, 5)));
    }
  }
  V Query(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : V{};
  }
  // The EXPLAIN lines of `sql` that scan a table, from "Scan".
  V Scans(const std::string& sql) {
    V out;
    for (const auto& line : Query("EXPLAIN " + sql))
      if (line.find("Scan ") != std::string::npos) out.push_back(line.substr(line.find("Scan ")));
    return out;
  }
  static bool Has(const V& lines, const std::string& text) {
    for (const auto& l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

// Two channels' per-month aggregates, each with its constant channel.
constexpr const char* kYear =
    "(SELECT 's' ch, month, item, sum(qty) t FROM ss GROUP BY month, item UNION ALL "
    "SELECT 'w' ch, month, item, sum(qty) t FROM ws GROUP BY month, item)";

TEST_F(UnionFilterTest, ABranchEmptiedByItsConstantIsDroppedAndTheRestReachTheScan) {
  const std::string sql = std::string("SELECT ch, month, item, t FROM ") + kYear + " u WHERE ch = 'w' AND month = 2";
  EXPECT_EQ(Query(sql), V({"w|2|0|2000", "w|2|1|2001", "w|2|2|2002", "w|2|3|2003"}));
  const V scans = Scans(sql);
  EXPECT_FALSE(Has(scans, "Scan ss")) << ::testing::PrintToString(scans);
  EXPECT_TRUE(Has(scans, "Scan ws filters=1")) << ::testing::PrintToString(scans);
  // The other order of the terms, and the other branch: its month is cast
  // to BIGINT (the union's type), so month = 2 stays above the cast in
  // the branch; the answer is the same.
  const std::string ss =
      std::string("SELECT ch, month, item, t FROM ") + kYear + " u WHERE month = 2 AND ch = 's' AND item < 2";
  EXPECT_EQ(Query(ss), V({"s|2|0|200", "s|2|1|201"}));
  EXPECT_FALSE(Has(Scans(ss), "Scan ws"));
  // Every branch emptied.
  EXPECT_EQ(Query(std::string("SELECT count(*) FROM ") + kYear + " u WHERE ch = 'x'"), V({"0"}));
  EXPECT_EQ(Query(std::string("SELECT count(*) FROM ") + kYear + " u WHERE NOT (ch = 's') AND ch <> 'w'"), V({"0"}));
}

TEST_F(UnionFilterTest, NullsKeepTheirMeaningInEachBranch) {
  EXPECT_EQ(Query(std::string("SELECT count(*), sum(t) FROM ") + kYear + " u WHERE month IS NULL"), V({"2|12"}));
  // ws's 13 groups (24018 + 5) and ss's NULL month group (7).
  EXPECT_EQ(Query(std::string("SELECT count(*), sum(t) FROM ") + kYear + " u WHERE ch <> 's' OR month IS NULL"),
            V({"14|24030"}));
  // A branch whose channel is NULL: ch = 'w' is NULL there, no row.
  const std::string nulls =
      "SELECT count(*), sum(t) FROM (SELECT NULL ch, month, sum(qty) t FROM ss GROUP BY month UNION ALL "
      "SELECT 'w', month, sum(qty) FROM ws GROUP BY month) u WHERE ch = 'w'";
  EXPECT_EQ(Query(nulls), V({"4|24023"}));
  const std::string null_is =
      "SELECT count(*), sum(t) FROM (SELECT CAST(NULL AS VARCHAR) ch, month, sum(qty) t FROM ss GROUP BY month "
      "UNION ALL SELECT 'w', month, sum(qty) FROM ws GROUP BY month) u WHERE ch IS NULL";
  EXPECT_EQ(Query(null_is), V({"4|2425"}));
}

TEST_F(UnionFilterTest, ASubqueryTermStaysAboveTheUnion) {
  const std::string sql =
      std::string("SELECT count(*), sum(t) FROM ") + kYear + " u WHERE month = (SELECT max(month) FROM ss)";
  EXPECT_EQ(Query(sql), V({"8|13212"}));
  for (const auto& s : Scans(sql)) EXPECT_NE(s.find("filters=0"), std::string::npos) << s;
}

TEST_F(UnionFilterTest, UnionDistinctPushesTheTermThroughItsGroupingIntoEachBranch) {
  const std::string sql =
      "SELECT ch, month FROM (SELECT 's' ch, month FROM ss UNION SELECT 'w', month FROM ws) u "
      "WHERE ch = 's' AND month >= 2";
  EXPECT_EQ(Query(sql), V({"s|2", "s|3"}));
  EXPECT_FALSE(Has(Scans(sql), "Scan ws"));
  const std::string all =
      "SELECT ch, month FROM (SELECT 's' ch, month FROM ss UNION ALL SELECT 'w', month FROM ws) u "
      "WHERE ch = 's' AND month = 3";
  EXPECT_EQ(Query(all), V({"s|3", "s|3", "s|3", "s|3"}));
}

TEST_F(UnionFilterTest, IntersectAndExceptKeepTheirAnswers) {
  EXPECT_EQ(Query("SELECT month FROM (SELECT month FROM ss INTERSECT SELECT month FROM ws) u WHERE month >= 2"),
            V({"2", "3"}));
  EXPECT_EQ(Query("SELECT item FROM (SELECT item FROM ss EXCEPT SELECT item FROM ws WHERE item < 2) u "
                  "WHERE item >= 1"),
            V({"2", "3", "9"}));
  EXPECT_EQ(Query("SELECT item FROM (SELECT item FROM ss EXCEPT ALL SELECT item FROM ws WHERE month = 1) u "
                  "WHERE item >= 3"),
            V({"3", "3", "9"}));
}

TEST_F(UnionFilterTest, AWithQueryNamedTwiceGetsTheOrOfItsReferencesTermsInEachBranch) {
  // TPC-DS 4's shape: each reference keeps one channel and one item; a.t
  // > 101 reads an aggregate, so only its item goes below the GROUP BY.
  const std::string sql = std::string("WITH yt AS ") + kYear +
                          " SELECT a.month, a.t, b.t FROM yt a, yt b WHERE a.month = b.month AND a.ch = 's' AND "
                          "a.item = 1 AND b.ch = 'w' AND b.item = 2 AND a.t > 101";
  EXPECT_EQ(Query(sql), V({"2|201|2002", "3|301|3002"}));
  const V scans = Scans(sql);
  EXPECT_TRUE(Has(scans, "Scan ss filters=1")) << ::testing::PrintToString(scans);
  EXPECT_TRUE(Has(scans, "Scan ws filters=1")) << ::testing::PrintToString(scans);
}

}  // namespace
}  // namespace quiver::sql
