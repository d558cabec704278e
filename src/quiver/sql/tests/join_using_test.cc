// JOIN ... USING / NATURAL JOIN (binder/bind_join.cc), GROUP BY ALL and
// HAVING on an output alias (binder.cc; issue 37): output columns, names
// and errors. The values are checked against DuckDB's in
// tests/slt/issue37_using_group_by_all.slt.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class JoinUsingTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    auto sl = std::make_shared<Schema>();
    sl->fields = {field("k", int32(), true), field("a", int32(), true)};
    ASSERT_OK(catalog_->RegisterBatches("l", sl,
                                        {Batch(sl, {Int32Array(pool_.get(), {1, 2, 3, std::nullopt}),
                                                    Int32Array(pool_.get(), {10, 20, std::nullopt, 40})})}));
    auto sr = std::make_shared<Schema>();
    sr->fields = {field("k", int64(), true), field("b", int32(), true)};
    ASSERT_OK(catalog_->RegisterBatches(
        "r", sr, {Batch(sr, {Int64Array(pool_.get(), {2, 3, 4}), Int32Array(pool_.get(), {200, 300, 400})})}));
  }
  V Query(const std::string& sql, bool sorted = true) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, sorted) : V{};
  }
  std::string ErrorOf(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? "" : r.status().ToString();
  }
};

TEST_F(JoinUsingTest, UsingMergesTheKeysIntoOneColumnFirst) {
  EXPECT_EQ(Query("SELECT * FROM l JOIN r USING (k)"), (V{"2|20|200", "3|null|300"}));
  EXPECT_EQ(Query("SELECT * FROM l LEFT JOIN r USING (k)"), (V{"1|10|null", "2|20|200", "3|null|300", "null|40|null"}));
  // FULL: COALESCE(l.k, r.k); the sides' keys stay reachable qualified
  EXPECT_EQ(Query("SELECT k, l.k, r.k FROM l FULL JOIN r USING (k)"),
            (V{"1|1|null", "2|2|2", "3|3|3", "4|null|4", "null|null|null"}));
  EXPECT_EQ(Query("SELECT k FROM l RIGHT JOIN r USING (k)"), (V{"2", "3", "4"}));
  EXPECT_EQ(Query("SELECT l.* FROM l JOIN r USING (k)"), (V{"2|20", "3|null"}));
  EXPECT_EQ(Query("SELECT * FROM l NATURAL JOIN r"), (V{"2|20|200", "3|null|300"}));
  // chained: the merged key of the first join is the second's left key
  EXPECT_EQ(Query("SELECT * FROM l JOIN r USING (k) JOIN l AS m USING (k)"), (V{"2|20|200|20", "3|null|300|null"}));
  EXPECT_NE(ErrorOf("SELECT * FROM l JOIN r USING (b)").find("does not exist in left table"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT * FROM l JOIN r USING (k, k)").find("more than once"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT * FROM l JOIN r ON l.k = r.k JOIN r AS s USING (k)").find("more than once in left"),
            std::string::npos);
}

TEST_F(JoinUsingTest, GroupByAllAndHavingOnAnAlias) {
  EXPECT_EQ(Query("SELECT k % 2 AS p, count(*) AS n FROM l GROUP BY ALL"), (V{"0|1", "1|2", "null|1"}));
  EXPECT_EQ(Query("SELECT count(*) AS n FROM l GROUP BY ALL"), (V{"4"}));
  EXPECT_EQ(Query("select k % 2 as p, sum(a) as s from l group by all having s > 15 order by p", false),
            (V{"0|20", "null|40"}));
  EXPECT_EQ(Query("SELECT k, sum(a) AS s FROM l GROUP BY ALL HAVING s IS NULL"), (V{"3|null"}));
  // GROUP BY ALL k: PostgreSQL's set quantifier, not GROUP BY ALL
  EXPECT_EQ(Query("SELECT k, count(*) FROM l GROUP BY ALL k HAVING k > 2"), (V{"3|1"}));
}

}  // namespace
}  // namespace quiver::sql
