// General unnesting of correlated subqueries and LATERAL
// (binder/bind_dependent_join.cc): scalar subqueries that are not a single
// aggregate, correlated conditions other than equality under an aggregate,
// ORDER BY ... LIMIT per outer row, LATERAL and LEFT JOIN LATERAL, NULLs in
// the correlated columns, empty inner sides and 21000. The values are
// worked out from the tables below; tests/slt/issue37_correlated.slt checks
// more shapes against DuckDB.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class DependentJoinTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    MemoryPool* p = pool_.get();
    // nation(n_key, n_name, n_region)
    auto ns = std::make_shared<Schema>();
    ns->fields = {field("n_key", int32(), true), field("n_name", utf8(), true), field("n_region", int32(), true)};
    ASSERT_OK(catalog_->RegisterBatches(
        "nation", ns,
        {Batch(ns, {Int32Array(p, {1, 2, 3, 4, std::nullopt}), StringArray(p, {"a", "b", "c", "d", "e"}),
                    Int32Array(p, {0, 1, 1, std::nullopt, 2})})}));
    // region(r_key, r_name)
    auto rs = std::make_shared<Schema>();
    rs->fields = {field("r_key", int32(), true), field("r_name", utf8(), true)};
    ASSERT_OK(catalog_->RegisterBatches("region", rs,
                                        {Batch(rs, {Int32Array(p, {0, 1, 2}), StringArray(p, {"r0", "r1", "r2"})})}));
    // cust(c_key, c_nation, c_bal, c_name): nation 1 has three customers.
    auto cs = std::make_shared<Schema>();
    cs->fields = {field("c_key", int32(), true), field("c_nation", int32(), true), field("c_bal", int32(), true),
                  field("c_name", utf8(), true)};
    ASSERT_OK(catalog_->RegisterBatches(
        "cust", cs,
        Split(Batch(cs, {Int32Array(p, {1, 2, 3, 4, 5, 6}), Int32Array(p, {1, 1, 2, std::nullopt, 3, 1}),
                         Int32Array(p, {100, 300, 50, 70, std::nullopt, 200}),
                         StringArray(p, {"x1", "x2", "x3", "x4", "x5", "x6"})}),
              2)));
  }
  V Query(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : V{};
  }
};

TEST_F(DependentJoinTest, ScalarSubqueryOfOneColumnNotAnAggregate) {
  EXPECT_EQ(Query("SELECT n_name, (SELECT r_name FROM region WHERE r_key = n_region) FROM nation"),
            V({"a|r0", "b|r1", "c|r1", "d|null", "e|r2"}));
}

TEST_F(DependentJoinTest, OrderByLimitPerOuterRow) {
  EXPECT_EQ(
      Query("SELECT n_name, (SELECT c_name FROM cust WHERE c_nation = n_key ORDER BY c_bal DESC LIMIT 1) FROM nation"),
      V({"a|x2", "b|x3", "c|x5", "d|null", "e|null"}));
  // LEFT JOIN LATERAL: two rows per nation at most, NULLs for none.
  EXPECT_EQ(Query("SELECT n_name, x.c_name FROM nation LEFT JOIN LATERAL (SELECT c_name FROM cust WHERE c_nation = "
                  "n_key ORDER BY c_bal LIMIT 2) x ON true"),
            V({"a|x1", "a|x6", "b|x3", "c|x5", "d|null", "e|null"}));
  // OFFSET: the second and third.
  EXPECT_EQ(Query("SELECT n_name, x.c_name FROM nation, LATERAL (SELECT c_name FROM cust WHERE c_nation = n_key "
                  "ORDER BY c_bal LIMIT 2 OFFSET 1) x"),
            V({"a|x2", "a|x6"}));
}

TEST_F(DependentJoinTest, NonEqualityUnderAnAggregate) {
  // c2 only: 300 > avg(100); c6: 200 > avg(100, 300) is false.
  EXPECT_EQ(Query("SELECT count(*) FROM cust c WHERE c_bal > (SELECT avg(c_bal) FROM cust c2 WHERE c2.c_nation = "
                  "c.c_nation AND c2.c_key < c.c_key)"),
            V({"1"}));
  // count(*) is 0, not NULL, for the nations without such customers and
  // for the NULL key.
  EXPECT_EQ(Query("SELECT n_name, (SELECT count(*) FROM cust WHERE c_nation = n_key AND c_bal > n_key * 100) FROM "
                  "nation"),
            V({"a|2", "b|0", "c|0", "d|0", "e|0"}));
  // In a grouped query: the subquery reads the group column.
  EXPECT_EQ(Query("SELECT n_region, (SELECT count(*) FROM cust WHERE c_nation < n_region) FROM nation GROUP BY "
                  "n_region"),
            V({"0|0", "1|0", "2|3", "null|0"}));
  // Under OR in WHERE.
  EXPECT_EQ(Query("SELECT n_name FROM nation WHERE n_key = 4 OR (SELECT max(c_bal) FROM cust WHERE c_nation = n_key "
                  "AND c_bal > n_key * 50) > 100"),
            V({"a", "d"}));
}

TEST_F(DependentJoinTest, LateralAggregateCountsZeroForNone) {
  EXPECT_EQ(Query("SELECT n_name, x.cnt FROM nation, LATERAL (SELECT count(*) AS cnt FROM cust WHERE c_nation = "
                  "n_key) x"),
            V({"a|3", "b|1", "c|1", "d|0", "e|0"}));
  EXPECT_EQ(Query("SELECT n_name, x.s, x.m FROM nation JOIN LATERAL (SELECT sum(c_bal) AS s, max(c_name) AS m FROM "
                  "cust WHERE c_nation = n_key) x ON n_region = 1"),
            V({"b|50|x3", "c|null|x5"}));
}

TEST_F(DependentJoinTest, OuterColumnsInTheSelectList) {
  EXPECT_EQ(Query("SELECT n_name, (SELECT max(c_bal) + n_key FROM cust WHERE c_nation = n_key) FROM nation"),
            V({"a|301", "b|52", "c|null", "d|null", "e|null"}));
}

TEST_F(DependentJoinTest, TwoLevelsOfCorrelation) {
  // A customer above its nation's smallest balance: nation 1 only.
  EXPECT_EQ(Query("SELECT n_name FROM nation WHERE EXISTS (SELECT 1 FROM cust WHERE c_nation = n_key AND c_bal > "
                  "(SELECT min(c_bal) FROM cust c3 WHERE c3.c_nation = n_key))"),
            V({"a"}));
}

TEST_F(DependentJoinTest, LimitAndHavingPerOuterRow) {
  // LIMIT / OFFSET bound each outer row's rows, not all of them at once.
  EXPECT_EQ(Query("SELECT n_name FROM nation WHERE EXISTS (SELECT 1 FROM cust WHERE c_nation = n_key LIMIT 1)"),
            V({"a", "b", "c"}));
  EXPECT_EQ(Query("SELECT n_name FROM nation WHERE EXISTS (SELECT 1 FROM cust WHERE c_nation = n_key ORDER BY c_bal "
                  "LIMIT 1 OFFSET 1)"),
            V({"a"}));
  // HAVING over an aggregate without GROUP BY: no row where it fails, so
  // NULL, not count 0.
  EXPECT_EQ(Query("SELECT n_name FROM nation WHERE (SELECT count(*) FROM cust WHERE c_nation = n_key HAVING count(*) "
                  "> 1) IS NOT NULL"),
            V({"a"}));
  EXPECT_EQ(Query("SELECT n_name, (SELECT count(*) FROM cust WHERE c_nation = n_key HAVING count(*) = 0) FROM nation"),
            V({"a|null", "b|null", "c|null", "d|0", "e|0"}));
}

TEST_F(DependentJoinTest, MoreThanOneRowIs21000) {
  auto r = Run("SELECT n_name, (SELECT c_name FROM cust WHERE c_nation = n_key) FROM nation");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().sql_state(), "21000") << r.status().ToString();
  EXPECT_NE(r.status().message().find("more than one row returned by a subquery used as an expression"),
            std::string::npos)
      << r.status().ToString();
  // One row per nation at most: no error.
  EXPECT_EQ(Query("SELECT n_name, (SELECT c_name FROM cust WHERE c_nation = n_key AND c_bal > 250) FROM nation"),
            V({"a|x2", "b|null", "c|null", "d|null", "e|null"}));
}

// A lookup correlated by equalities only is grouped by its key
// (bind_scalar_lookup.cc): 21000 only where an outer row asks for a key of
// several rows. region 1 is n_region of nations b and c; nation keys 1..4
// and NULL; customers of nation 1: three.
TEST_F(DependentJoinTest, KeyedLookupChecksOnlyTheKeysAsked) {
  EXPECT_EQ(Query("SELECT n_name, (SELECT c_name FROM cust WHERE c_nation = n_key) FROM nation WHERE n_key <> 1"),
            V({"b|x3", "c|x5", "d|null"}));
  // Grouped outer query: the join goes after its aggregate.
  EXPECT_EQ(Query("SELECT n_region, count(*), (SELECT r_name FROM region WHERE r_key = n_region) FROM nation GROUP "
                  "BY n_region"),
            V({"0|1|r0", "1|2|r1", "2|1|r2", "null|1|null"}));
  EXPECT_EQ(Query("SELECT c_nation, (SELECT n_name FROM nation WHERE n_region = c_nation) FROM cust WHERE c_nation = "
                  "2 GROUP BY c_nation"),
            V({"2|e"}));
  for (const char* sql :
       {"SELECT c_nation, (SELECT n_name FROM nation WHERE n_region = c_nation) FROM cust GROUP BY "
        "c_nation",
        "SELECT c_key FROM cust WHERE c_name > (SELECT n_name FROM nation WHERE n_region = c_nation)"}) {
    auto r = Run(sql);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().sql_state(), "21000") << sql << ": " << r.status().ToString();
  }
}

// RIGHT and FULL joins inside the subquery whose ON reads the outer column
// (DuckDB 1.5 refuses them): both sides carry D; a FULL join's row has the
// D of the side that has it. cust c_bal > n_key * 60 on the region of
// c_nation: for nation a (n_key 1) customers 1, 2, 6 meet region 1; FULL:
// those 3 pairs, customers 3, 4, 5 alone, regions 0 and 2 alone (8 rows, 5
// regions); RIGHT: the pairs and regions 0 and 2 (5). n_key NULL (e): no
// pair: 6 customers and 3 regions alone.
TEST_F(DependentJoinTest, RightAndFullJoinsInsideTheSubquery) {
  const std::string on = "ON c.c_nation = r.r_key AND c.c_bal > n_key * 60";
  EXPECT_EQ(Query("SELECT n_name, (SELECT count(*) FROM cust c FULL JOIN region r " + on +
                  "), (SELECT count(r.r_key) FROM cust c FULL JOIN region r " + on +
                  "), (SELECT count(*) FROM cust c RIGHT JOIN region r " + on + ") FROM nation ORDER BY n_name"),
            V({"a|8|5|5", "b|8|4|4", "c|8|4|4", "d|8|3|3", "e|9|3|3"}));
  EXPECT_EQ(Query("SELECT n_name, x.k, x.r FROM nation, LATERAL (SELECT c.c_key AS k, r.r_key AS r FROM cust c FULL "
                  "JOIN region r " +
                  on + ") x WHERE n_key = 4"),
            V({"d|1|null", "d|2|1", "d|3|null", "d|4|null", "d|5|null", "d|6|null", "d|null|0", "d|null|2"}));
}

// Outer columns read inside a derived table or a WITH query of the
// subquery (they were "no column named ..."): nation a's customers have
// balances 100, 300, 200; b's 50; c's NULL; d and e (n_key NULL) none.
TEST_F(DependentJoinTest, DerivedTablesAndWithQueriesReadingOuterColumns) {
  EXPECT_EQ(Query("SELECT n_name, (SELECT sum(b) FROM (SELECT c_bal AS b FROM cust WHERE c_nation = n_key) t), "
                  "(SELECT count(*) FROM (SELECT c_bal AS b FROM cust WHERE c_nation = n_key) t) FROM nation"),
            V({"a|600|3", "b|50|1", "c|null|1", "d|null|0", "e|null|0"}));
  // Grouped inside the derived table: the largest balance per nation.
  EXPECT_EQ(Query("SELECT n_name, (SELECT max(b) FROM (SELECT c_key, max(c_bal) AS b FROM cust WHERE c_nation = "
                  "n_key GROUP BY c_key) t) FROM nation"),
            V({"a|300", "b|50", "c|null", "d|null", "e|null"}));
  // A WITH query read twice is bound at each reference: pairs x < y.
  EXPECT_EQ(Query("SELECT n_name, (WITH t AS (SELECT c_bal AS b FROM cust WHERE c_nation = n_key) SELECT count(*) "
                  "FROM t x, t y WHERE x.b < y.b) FROM nation"),
            V({"a|3", "b|0", "c|0", "d|0", "e|0"}));
  // Several rows for one outer row is still 21000.
  auto r = Run("SELECT n_name, (SELECT b FROM (SELECT c_bal AS b FROM cust WHERE c_nation = n_key) t) FROM nation");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().sql_state(), "21000") << r.status().ToString();
  // A derived table naming a FROM item beside it (not LATERAL) is still an
  // unknown column.
  auto bad = Run("SELECT n_name FROM nation, (SELECT c_key FROM cust WHERE c_nation = n_key) t");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().sql_state(), "42703") << bad.status().ToString();
}

// GROUPING SETS / ROLLUP over outer columns: D is a grouping key of every
// set, and an outer row without rows still gets the empty set's row
// (count 0), as over an empty table.
TEST_F(DependentJoinTest, RollupPerOuterRow) {
  EXPECT_EQ(Query("SELECT n_name, x.c, x.n FROM nation, LATERAL (SELECT c_name AS c, count(*) AS n FROM cust WHERE "
                  "c_nation = n_key GROUP BY ROLLUP (c_name)) x"),
            V({"a|null|3", "a|x1|1", "a|x2|1", "a|x6|1", "b|null|1", "b|x3|1", "c|null|1", "c|x5|1", "d|null|0",
               "e|null|0"}));
  // The totals' sums: NULL where there is no balance.
  EXPECT_EQ(Query("SELECT n_name, (SELECT sum(c_bal) FROM cust WHERE c_nation = n_key GROUP BY ROLLUP (c_name) "
                  "ORDER BY 1 DESC LIMIT 1) FROM nation"),
            V({"a|600", "b|50", "c|null", "d|null", "e|null"}));
  // grouping() of the empty set is 1 also for an outer row without rows (as
  // over an empty table; DuckDB 1.x's correlated answer is NULL there).
  EXPECT_EQ(Query("SELECT n_name, x.c, x.g FROM nation, LATERAL (SELECT c_name AS c, grouping(c_name) AS g FROM cust "
                  "WHERE c_nation = n_key AND c_key < 3 GROUP BY GROUPING SETS ((c_name), ())) x"),
            V({"a|null|1", "a|x1|0", "a|x2|0", "b|null|1", "c|null|1", "d|null|1", "e|null|1"}));
}

}  // namespace
}  // namespace quiver::sql
