// Set operations (UNION [ALL], INTERSECT [ALL], EXCEPT [ALL]) and VALUES
// lists (binder/bind_setop.cc, execution/union_all.cc): multiset semantics,
// NULLs equal, type unification, names, ORDER BY / LIMIT over the whole,
// and the errors; IS [NOT] DISTINCT FROM and [NOT] ILIKE. The differential
// checks against DuckDB are tests/slt/gen_setop.slt, gen_values.slt and
// gen_distinct_ilike.slt.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class SetOpTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int32(), true), field("s", utf8(), true)};
    // a: 1 a, 2 b, 2 b, 2 b, NULL NULL, NULL NULL ; b: 2 b, NULL NULL, 3 c
    ASSERT_OK(catalog_->RegisterBatches(
        "a", schema,
        Split(Batch(schema, {Int32Array(pool_.get(), {1, 2, 2, 2, std::nullopt, std::nullopt}),
                             StringArray(pool_.get(), {"a", "b", "b", "b", std::nullopt, std::nullopt})}),
              4)));
    auto schema_b = std::make_shared<Schema>();
    schema_b->fields = {field("y", int64(), true), field("t", utf8(), true)};
    ASSERT_OK(catalog_->RegisterBatches("b", schema_b,
                                        Split(Batch(schema_b, {Int64Array(pool_.get(), {2, std::nullopt, 3}),
                                                               StringArray(pool_.get(), {"b", std::nullopt, "c"})}),
                                              2)));
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

TEST_F(SetOpTest, UnionAllKeepsEveryRowAndUnionRemovesDuplicatesWithNullsEqual) {
  EXPECT_EQ(Query("SELECT x, s FROM a UNION ALL SELECT y, t FROM b"),
            (V{"1|a", "2|b", "2|b", "2|b", "2|b", "3|c", "null|null", "null|null", "null|null"}));
  EXPECT_EQ(Query("SELECT x, s FROM a UNION SELECT y, t FROM b"), (V{"1|a", "2|b", "3|c", "null|null"}));
  // three branches, flattened; the one UNION (distinct) at the end applies to all
  EXPECT_EQ(Query("SELECT x FROM a UNION ALL SELECT y FROM b UNION ALL SELECT 7"),
            (V{"1", "2", "2", "2", "2", "3", "7", "null", "null", "null"}));
  EXPECT_EQ(Query("SELECT x FROM a UNION ALL SELECT y FROM b UNION SELECT 7"), (V{"1", "2", "3", "7", "null"}));
}

TEST_F(SetOpTest, IntersectAndExceptWithAndWithoutAll) {
  EXPECT_EQ(Query("SELECT x, s FROM a INTERSECT SELECT y, t FROM b"), (V{"2|b", "null|null"}));
  EXPECT_EQ(Query("SELECT x, s FROM a EXCEPT SELECT y, t FROM b"), (V{"1|a"}));
  // ALL: min(m, n) and max(m - n, 0) copies
  EXPECT_EQ(Query("SELECT x, s FROM a INTERSECT ALL SELECT x, s FROM a WHERE x = 2 OR x IS NULL"),
            (V{"2|b", "2|b", "2|b", "null|null", "null|null"}));
  EXPECT_EQ(Query("SELECT x, s FROM a EXCEPT ALL SELECT y, t FROM b"), (V{"1|a", "2|b", "2|b", "null|null"}));
  EXPECT_EQ(Query("SELECT y, t FROM b EXCEPT ALL SELECT x, s FROM a"), (V{"3|c"}));
  // INTERSECT binds tighter than UNION; parentheses group
  EXPECT_EQ(Query("SELECT 1 UNION SELECT 2 INTERSECT SELECT 3"), (V{"1"}));
  EXPECT_EQ(Query("(SELECT 1 UNION SELECT 2) INTERSECT SELECT 2"), (V{"2"}));
  EXPECT_EQ(Query("SELECT x FROM a EXCEPT (SELECT y FROM b EXCEPT SELECT 2)"), (V{"1", "2"}));
}

TEST_F(SetOpTest, TypesUnifyAndNamesComeFromTheFirstBranch) {
  EXPECT_EQ(Columns("SELECT x AS first, s FROM a UNION SELECT y, t FROM b"), (V{"first: int64", "s: utf8"}));
  EXPECT_EQ(Query("SELECT 1 UNION ALL SELECT 2.5"), (V{"1.0", "2.5"}));
  EXPECT_EQ(Query("SELECT NULL UNION SELECT NULL"), (V{"null"}));
  EXPECT_EQ(Query("SELECT NULL, 1 INTERSECT SELECT NULL, 1"), (V{"null|1"}));
  EXPECT_NE(ErrorOf("SELECT 1 UNION SELECT 1, 2").find("same number of columns"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT x FROM a UNION SELECT s FROM a").find("cannot be matched"), std::string::npos);
}

TEST_F(SetOpTest, OrderByAndLimitApplyToTheWholeResult) {
  EXPECT_EQ(Query("SELECT x FROM a UNION SELECT y FROM b ORDER BY x DESC", false), (V{"null", "3", "2", "1"}));
  EXPECT_EQ(Query("SELECT x AS v FROM a UNION SELECT y FROM b ORDER BY 1 LIMIT 2 OFFSET 1", false), (V{"2", "3"}));
  EXPECT_EQ(Query("SELECT x, s FROM a UNION ALL SELECT y, t FROM b ORDER BY s NULLS FIRST, x LIMIT 3", false),
            (V{"null|null", "null|null", "null|null"}));
  EXPECT_EQ(Query("SELECT x FROM a UNION SELECT y FROM b ORDER BY -x NULLS LAST", false), (V{"3", "2", "1", "null"}));
  // a branch's own ORDER BY / LIMIT, in parentheses
  EXPECT_EQ(Query("(SELECT x FROM a ORDER BY x LIMIT 1) UNION ALL (SELECT y FROM b ORDER BY y DESC LIMIT 1)"),
            (V{"1", "null"}));
  EXPECT_NE(ErrorOf("SELECT x FROM a UNION SELECT y FROM b ORDER BY 3").find("not in select list"), std::string::npos);
  // in subqueries, IN and WITH
  EXPECT_EQ(Query("SELECT count(*) FROM (SELECT x FROM a UNION SELECT y FROM b) u"), (V{"4"}));
  EXPECT_EQ(Query("SELECT x FROM a WHERE x IN (SELECT 1 UNION SELECT 3)"), (V{"1"}));
  EXPECT_EQ(Query("WITH w AS (SELECT y FROM b UNION ALL SELECT 5) SELECT sum(y) FROM w"), (V{"10"}));
}

TEST_F(SetOpTest, ValuesListsAsTablesAndStatements) {
  EXPECT_EQ(Query("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(x, y)"), (V{"1|a", "2|b"}));
  EXPECT_EQ(Columns("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(x, y)"), (V{"x: int32", "y: utf8"}));
  EXPECT_EQ(Columns("VALUES (1, 'a'), (NULL, NULL)"), (V{"column1: int32", "column2: utf8"}));
  EXPECT_EQ(Query("VALUES (1), (2.5), (NULL) ORDER BY 1 DESC", false), (V{"null", "2.5", "1.0"}));
  EXPECT_EQ(Query("SELECT column1 + 1 FROM (VALUES (1), (2))"), (V{"2", "3"}));
  EXPECT_EQ(Query("SELECT a.s FROM a JOIN (VALUES (1), (3)) v(k) ON a.x = v.k"), (V{"a"}));
  EXPECT_NE(ErrorOf("VALUES (1), (1, 2)").find("same length"), std::string::npos);
}

TEST_F(SetOpTest, IsDistinctFromTreatsNullsAsValuesAndIlikeIgnoresCase) {
  EXPECT_EQ(Query("SELECT 'a' IS DISTINCT FROM NULL, NULL IS NOT DISTINCT FROM NULL, 1 IS DISTINCT FROM 1, 'Hello' "
                  "ILIKE 'h%', 'Hello' NOT ILIKE 'H_LLO'"),
            (V{"true|true|false|true|false"}));
  // never NULL; compares across integer widths
  EXPECT_EQ(Query("SELECT x, x IS DISTINCT FROM 2, x IS NOT DISTINCT FROM NULL FROM a UNION ALL SELECT y, y IS "
                  "DISTINCT FROM 2, y IS NOT DISTINCT FROM NULL FROM b"),
            (V{"1|true|false", "2|false|false", "2|false|false", "2|false|false", "2|false|false", "3|true|false",
               "null|true|true", "null|true|true", "null|true|true"}));
  EXPECT_EQ(Query("SELECT a.x, b.y FROM a JOIN b ON a.x IS NOT DISTINCT FROM b.y WHERE a.s IS DISTINCT FROM 'b'"),
            (V{"null|null", "null|null"}));
  EXPECT_EQ(Query("SELECT s FROM a WHERE s ILIKE 'B' UNION SELECT t FROM b WHERE t NOT ILIKE '%B%'"), (V{"b", "c"}));
  EXPECT_EQ(Query("SELECT 'A_x' ILIKE 'a!_%' ESCAPE '!', 'Abx' ILIKE 'a!_%' ESCAPE '!'"), (V{"true|false"}));
  EXPECT_NE(ErrorOf("SELECT 1 IS DISTINCT FROM 'a' || 'b'").find("invalid input syntax"), std::string::npos);
}

// The spark dialect (dialect.h): integer `/` is DOUBLE, `div` truncates,
// NULLs sort first ascending and last descending; SET dialect reports.
TEST_F(SetOpTest, SparkDialectDivisionAndNullOrder) {
  ExecuteOptions o = Options();
  o.dialect = SqlDialect::kSpark;
  auto rows = [&](const std::string& sql) {
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, false) : V{};
  };
  EXPECT_EQ(rows("SELECT 7 / 2, 7 div 2, -7 DIV 2, 1 + 7 div 2"), (V{"3.5|3|-3|4"}));
  EXPECT_EQ(rows("SELECT x FROM a UNION SELECT y FROM b ORDER BY x"), (V{"null", "1", "2", "3"}));
  EXPECT_EQ(rows("SELECT x FROM a UNION SELECT y FROM b ORDER BY x DESC"), (V{"3", "2", "1", "null"}));
  EXPECT_FALSE(Run("SELECT 7 / 0", o).ok());
  EXPECT_FALSE(Run("SELECT 7 div 0", o).ok());
  // postgres (the default): integer division, NULLs last ascending
  EXPECT_EQ(Query("SELECT 7 / 2", false), (V{"3"}));
  EXPECT_EQ(Query("SELECT x FROM a UNION SELECT y FROM b ORDER BY x", false), (V{"1", "2", "3", "null"}));
  SqlDialect got = SqlDialect::kPostgres;
  o.set_dialect = [&](SqlDialect d) { got = d; };
  EXPECT_EQ(rows("SET dialect = spark"), V{});
  EXPECT_EQ(got, SqlDialect::kSpark);
  EXPECT_FALSE(Run("SET dialect = mysql", o).ok());
}

}  // namespace
}  // namespace quiver::sql
