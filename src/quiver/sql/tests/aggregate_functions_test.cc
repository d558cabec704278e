// Tests of issue 37's aggregate functions (binder/bind_aggregate.cc,
// execution/aggregate_*.cc) on small inputs: values from DuckDB's answers
// (postgres dialect) and Spark's documented examples (spark dialect),
// GROUP BY and without, NULL and empty input, DISTINCT, wrong argument
// types. Many threads, many groups and spilling: aggregate_parallel_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

class AggregateFunctionsTest : public SqlTest {
 protected:
  /// The one row of `sql` ("c1|c2|..."), or its error text.
  std::string V(const std::string& sql, SqlDialect dialect = SqlDialect::kPostgres) {
    ExecuteOptions o = Options();
    o.dialect = dialect;
    auto r = Run(sql, o);
    if (!r.ok()) return "error: " + r.status().ToString();
    auto rows = Rows(*r);
    return rows.size() == 1 ? rows[0] : "rows: " + std::to_string(rows.size());
  }
  std::string Spark(const std::string& sql) { return V(sql, SqlDialect::kSpark); }
  /// Every row of `sql` in output order.
  std::vector<std::string> Ordered(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, false) : std::vector<std::string>{};
  }
};

const char* const kOneToFour = " FROM (VALUES (1), (2), (3), (4)) t(x)";

// DuckDB: stddev(x), stddev_samp, stddev_pop, variance, var_samp, var_pop.
TEST_F(AggregateFunctionsTest, VarianceFamilyEqualsDuckDB) {
  EXPECT_EQ(V(std::string("SELECT stddev(x), stddev_samp(x), stddev_pop(x), variance(x), var_samp(x), var_pop(x), "
                          "std(x)") +
              kOneToFour),
            "1.2909944487358056|1.2909944487358056|1.118033988749895|1.6666666666666667|1.6666666666666667|1.25|"
            "1.2909944487358056");
  EXPECT_EQ(V("SELECT var_pop(x), stddev_pop(x), var_samp(x) FROM (VALUES (2.0), (4.0), (4.0), (4.0), (5.0), "
              "(5.0), (7.0), (9.0)) t(x)"),
            "4|2|4.571428571428571");
  // DECIMAL in, DOUBLE out (the decimals converted exactly rounded).
  EXPECT_EQ(V("SELECT stddev(x), variance(x) FROM (VALUES (CAST(1.5 AS DECIMAL(10,2))), (2.25), (7.75)) t(x)"),
            "3.412599204907212|11.645833333333334");
  EXPECT_EQ(Columns(std::string("SELECT stddev(x), var_pop(CAST(x AS DECIMAL(10,2)))") + kOneToFour),
            (std::vector<std::string>{"stddev: double", "var_pop: double"}));
  // One row: the sample forms NULL, the population forms 0.
  EXPECT_EQ(V("SELECT stddev_samp(x), stddev_pop(x), var_samp(x), var_pop(x) FROM (VALUES (5)) t(x)"), "null|0|null|0");
  // No rows, and only NULLs: NULL.
  EXPECT_EQ(
      V(std::string("SELECT stddev_samp(x), stddev_pop(x), var_samp(x), var_pop(x)") + kOneToFour + " WHERE x > 10"),
      "null|null|null|null");
  EXPECT_EQ(V("SELECT stddev(x), var_pop(x) FROM (VALUES (CAST(NULL AS DOUBLE)), (NULL)) t(x)"), "null|null");
  // Welford keeps its precision where the textbook sum-of-squares loses it.
  EXPECT_EQ(V("SELECT var_samp(x) FROM (VALUES (1e9 + 4), (1e9 + 7), (1e9 + 13), (1e9 + 16)) t(x)"), "30");
  // DISTINCT
  EXPECT_EQ(V("SELECT var_samp(DISTINCT x), stddev_pop(DISTINCT x) FROM (VALUES (1), (1), (2), (4)) t(x)"),
            "2.333333333333333|1.247219128924647");
}

TEST_F(AggregateFunctionsTest, VarianceFamilyGrouped) {
  EXPECT_EQ(Ordered("SELECT g, var_samp(x), stddev_pop(x), count_if(x > 2), bool_and(x > 1), bool_or(x > 3) FROM "
                    "(VALUES (1, 1.5), (1, 2.5), (1, NULL), (2, 3.0), (3, NULL)) t(g, x) GROUP BY g ORDER BY g"),
            (std::vector<std::string>{"1|0.5|0.5|1|true|false", "2|null|0|1|true|false", "3|null|null|0|null|null"}));
}

// Spark's documented examples (spark dialect; `FROM VALUES ... AS tab(col)`
// written `FROM (VALUES ...) AS tab(col)`, which the grammar reads).
TEST_F(AggregateFunctionsTest, SparkExamples) {
  EXPECT_EQ(Spark("SELECT stddev(col) FROM (VALUES (1), (2), (3)) AS tab(col)"), "1");
  EXPECT_EQ(Spark("SELECT stddev_pop(col) FROM (VALUES (1), (2), (3)) AS tab(col)"), "0.816496580927726");
  EXPECT_EQ(Spark("SELECT stddev_samp(col) FROM (VALUES (1), (2), (3)) AS tab(col)"), "1");
  EXPECT_EQ(Spark("SELECT var_pop(col) FROM (VALUES (1), (2), (3)) AS tab(col)"), "0.6666666666666666");
  EXPECT_EQ(Spark("SELECT var_samp(col) FROM (VALUES (1), (2), (3)) AS tab(col)"), "1");
  EXPECT_EQ(Spark("SELECT variance(col) FROM (VALUES (1), (2), (3)) AS tab(col)"), "1");
  EXPECT_EQ(Spark("SELECT count_if(col % 2 = 0) FROM (VALUES (NULL), (0), (1), (2), (3)) AS tab(col)"), "2");
  EXPECT_EQ(Spark("SELECT count_if(col IS NULL) FROM (VALUES (NULL), (0), (1), (2), (3)) AS tab(col)"), "1");
  EXPECT_EQ(Spark("SELECT bool_and(col) FROM (VALUES (true), (true), (true)) AS tab(col)"), "true");
  EXPECT_EQ(Spark("SELECT bool_and(col) FROM (VALUES (NULL), (true), (true)) AS tab(col)"), "true");
  EXPECT_EQ(Spark("SELECT bool_and(col) FROM (VALUES (true), (false), (true)) AS tab(col)"), "false");
  EXPECT_EQ(Spark("SELECT every(col) FROM (VALUES (true), (false), (true)) AS tab(col)"), "false");
  EXPECT_EQ(Spark("SELECT bool_or(col) FROM (VALUES (true), (false), (false)) AS tab(col)"), "true");
  EXPECT_EQ(Spark("SELECT bool_or(col) FROM (VALUES (NULL), (true), (false)) AS tab(col)"), "true");
  EXPECT_EQ(Spark("SELECT bool_or(col) FROM (VALUES (false), (false), (NULL)) AS tab(col)"), "false");
  // some / any: reserved words of the grammar, read as bool_or where they
  // are called (not after a comparison or LIKE: x = ANY (...)).
  EXPECT_EQ(Spark("SELECT some(col), any(col), `some`(col) FROM (VALUES (NULL), (true), (false)) AS tab(col)"),
            "true|true|true");
  EXPECT_EQ(Spark("SELECT Any (col) FROM (VALUES (false), (false)) AS tab(col)"), "false");
  EXPECT_EQ(Spark("SELECT first(col) FROM (VALUES (10), (5), (20)) AS tab(col)"), "10");
  EXPECT_EQ(Spark("SELECT first(col) FROM (VALUES (NULL), (5), (20)) AS tab(col)"), "null");
  EXPECT_EQ(Spark("SELECT first(col, true) FROM (VALUES (NULL), (5), (20)) AS tab(col)"), "5");
  EXPECT_EQ(Spark("SELECT first_value(col, true) FROM (VALUES (NULL), (5), (20)) AS tab(col)"), "5");
  EXPECT_EQ(Spark("SELECT last(col) FROM (VALUES (10), (5), (20)) AS tab(col)"), "20");
  EXPECT_EQ(Spark("SELECT last(col) FROM (VALUES (10), (5), (NULL)) AS tab(col)"), "null");
  EXPECT_EQ(Spark("SELECT last(col, true) FROM (VALUES (10), (5), (NULL)) AS tab(col)"), "5");
  EXPECT_EQ(Spark("SELECT last_value(col) FROM (VALUES (10), (5), (20)) AS tab(col)"), "20");
  EXPECT_EQ(Spark("SELECT any_value(col) FROM (VALUES (10), (5), (20)) AS tab(col)"), "10");
  EXPECT_EQ(Spark("SELECT any_value(col) FROM (VALUES (NULL), (5), (20)) AS tab(col)"), "null");
  EXPECT_EQ(Spark("SELECT any_value(col, true) FROM (VALUES (NULL), (5), (20)) AS tab(col)"), "5");
}

// DuckDB: first / last take NULLs, any_value skips them (postgres dialect).
TEST_F(AggregateFunctionsTest, PicksOfEveryTypeWithNulls) {
  EXPECT_EQ(V("SELECT first(x), last(x), any_value(x) FROM (VALUES (NULL), (2), (3), (NULL)) t(x)"), "null|null|2");
  EXPECT_EQ(V("SELECT first(x, true), last(x, true) FROM (VALUES (NULL), (2), (3), (NULL)) t(x)"), "2|3");
  EXPECT_EQ(V("SELECT first(s), last(s), any_value(s), first(d), last(b), any_value(f) FROM (VALUES ('abc', DATE "
              "'2024-02-29', true, 1.5), ('', NULL, false, NULL), ('xyz', DATE '1999-01-01', NULL, 2.5)) t(s, d, "
              "b, f)"),
            "abc|xyz|abc|2024-02-29|null|1.5");
  EXPECT_EQ(V("SELECT first(CAST(x AS DECIMAL(12,3))), last(CAST(x AS BIGINT)) FROM (VALUES (1.25), (7)) t(x)"),
            "1.250|7");
  // last() of strings that shrink and grow: each value whole.
  EXPECT_EQ(Ordered("SELECT g, last(s), first(s) FROM (VALUES (1, 'long value'), (1, 'ab'), (2, 'x'), (1, "
                    "'longer value!'), (2, NULL), (2, 'yz')) t(g, s) GROUP BY g ORDER BY g"),
            (std::vector<std::string>{"1|longer value!|long value", "2|yz|x"}));
  EXPECT_EQ(V("SELECT first(x), last(x), any_value(x) FROM (VALUES (1)) t(x) WHERE x > 1"), "null|null|null");
  EXPECT_EQ(Columns("SELECT any_value(s), first(CAST(1 AS INTEGER)) FROM (VALUES ('a')) t(s)"),
            (std::vector<std::string>{"any_value: utf8", "first: int32"}));
}

TEST_F(AggregateFunctionsTest, CountIfAndBooleans) {
  // Empty input: count_if is 0 (Spark; DuckDB's is NULL), bool_and / bool_or NULL.
  EXPECT_EQ(V("SELECT count_if(x > 1), bool_and(x > 1), bool_or(x > 1), every(x > 0) FROM (VALUES (1)) t(x) WHERE "
              "x > 5"),
            "0|null|null|null");
  EXPECT_EQ(V("SELECT count_if(DISTINCT x > 1), count_if(x > 1) FROM (VALUES (1), (1), (2), (4)) t(x)"), "1|2");
  EXPECT_EQ(V("SELECT count_if(NULL), bool_and(NULL), bool_or(NULL) FROM (VALUES (1)) t(x)"), "0|null|null");
  // count_if in a correlated scalar subquery is 0 for an outer row without matches (as count).
  EXPECT_EQ(Ordered("SELECT x, (SELECT count_if(y > 0) FROM (VALUES (1, 5), (1, -1)) u(k, y) WHERE k = x) FROM "
                    "(VALUES (1), (2)) t(x) ORDER BY x"),
            (std::vector<std::string>{"1|1", "2|0"}));
}

TEST_F(AggregateFunctionsTest, WrongArgumentsAreErrors) {
  EXPECT_NE(V("SELECT stddev('a')").find("stddev() cannot take VARCHAR"), std::string::npos) << V("SELECT stddev('a')");
  EXPECT_NE(V("SELECT count_if(1)").find("count_if() cannot take INTEGER (it takes BOOLEAN)"), std::string::npos);
  EXPECT_NE(V("SELECT bool_and(1)").find("bool_and() cannot take"), std::string::npos);
  EXPECT_NE(V("SELECT bool_or('t')").find("bool_or() cannot take VARCHAR"), std::string::npos);
  EXPECT_NE(V("SELECT var_pop(DATE '2024-01-01')").find("var_pop() cannot take DATE"), std::string::npos);
  EXPECT_NE(V("SELECT first(x, x > 1) FROM (VALUES (1)) t(x)").find("must be a constant true or false"),
            std::string::npos);
  EXPECT_NE(V("SELECT stddev(1, 2)").find("stddev() takes one argument"), std::string::npos);
  EXPECT_NE(V("SELECT last(1, true, true)").find("takes one or two arguments"), std::string::npos);
  EXPECT_TRUE(Run("SELECT stddev('a')").status().IsInvalid());
  EXPECT_NE(V("SELECT x FROM (VALUES (1)) t(x) WHERE var_pop(x) > 0").find("not allowed in WHERE"), std::string::npos);
}

// DuckDB: median / percentile_cont interpolate (DOUBLE); percentile_disc
// takes a value (the argument's type), counting the fraction exactly.
TEST_F(AggregateFunctionsTest, PercentilesEqualDuckDB) {
  EXPECT_EQ(V("SELECT median(x), percentile_cont(0.25) WITHIN GROUP (ORDER BY x), percentile_disc(0.25) WITHIN "
              "GROUP (ORDER BY x), percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC), percentile_disc(0.25) "
              "WITHIN GROUP (ORDER BY x DESC) FROM (VALUES (1), (2), (3), (4), (10)) t(x)"),
            "3|2|2|4|4");
  const std::string ten = " FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) t(x)";
  EXPECT_EQ(V("SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY x), percentile_disc(CAST(0.3 AS DOUBLE)) WITHIN "
              "GROUP (ORDER BY x), percentile_cont(0.3) WITHIN GROUP (ORDER BY x)" +
              ten),
            "2|2|2.6999999999999997");
  EXPECT_EQ(V("SELECT median(x), median(d), percentile_disc(0.5) WITHIN GROUP (ORDER BY s), percentile_disc(0.5) "
              "WITHIN GROUP (ORDER BY d), percentile_disc(0.9) WITHIN GROUP (ORDER BY dt) FROM (VALUES (1.5, "
              "CAST(2.25 AS DECIMAL(10,2)), 'b', DATE '2024-01-01'), (NULL, NULL, NULL, NULL), (3.0, 1.10, 'a', DATE "
              "'2023-05-06'), (-2.0, 7.77, 'c', DATE '2025-12-31')) t(x, d, s, dt)"),
            "1.5|2.25|b|2.25|2025-12-31");
  EXPECT_EQ(V("SELECT median(x), percentile_cont(0) WITHIN GROUP (ORDER BY x), percentile_cont(1) WITHIN GROUP "
              "(ORDER BY x), percentile_disc(0) WITHIN GROUP (ORDER BY x), percentile_disc(1) WITHIN GROUP (ORDER BY "
              "x) FROM (VALUES (5), (NULL)) t(x)"),
            "5|5|5|5|5");
  EXPECT_EQ(V("SELECT median(x), percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (5)) t(x) WHERE x > 5"),
            "null|null");
  EXPECT_EQ(Ordered("SELECT g, median(x), percentile_disc(0.5) WITHIN GROUP (ORDER BY x), quantile_cont(x, 0.75), "
                    "quantile_disc(x, 0.75) FROM (VALUES (1, 1), (1, 2), (2, 5), (2, NULL), (3, NULL), (1, 4), (2, "
                    "7), (2, 9)) t(g, x) GROUP BY g ORDER BY g"),
            (std::vector<std::string>{"1|2|2|3|4", "2|7|7|8|9", "3|null|null|null|null"}));
  EXPECT_EQ(V("SELECT median(DISTINCT x), median(x) FROM (VALUES (1), (1), (1), (5)) t(x)"), "3|1");
  // NaN sorts after every number (as DuckDB).
  EXPECT_EQ(V("SELECT median(x) FROM (VALUES (1.0), (CAST('nan' AS DOUBLE)), (2.0)) t(x)"), "2");
  EXPECT_EQ(
      Columns("SELECT median(CAST(1 AS BIGINT)), percentile_disc(0.5) WITHIN GROUP (ORDER BY CAST(1 AS "
              "BIGINT)), percentile_approx(CAST(1.5 AS DECIMAL(9,1)), 0.5)"),
      (std::vector<std::string>{"median: double", "percentile_disc: int64", "percentile_approx: decimal128(9, 1)"}));
}

TEST_F(AggregateFunctionsTest, PercentileSparkExamples) {
  const std::string two = " FROM (VALUES (0), (10)) AS tab(col)";
  EXPECT_EQ(Spark("SELECT median(col)" + two), "5");
  EXPECT_EQ(Spark("SELECT percentile(col, 0.3)" + two), "3");
  EXPECT_EQ(Spark("SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY col)" + two), "2.5");
  EXPECT_EQ(Spark("SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY col)" + two), "0");
  EXPECT_EQ(Spark("SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY col DESC)" + two), "7.5");
  EXPECT_EQ(Spark("SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY col DESC)" + two), "10");
  // percentile_approx(col, array(0.5, 0.4, 0.1), 100) is [1, 1, 0] (one fraction a call here; exact).
  const std::string four = " FROM (VALUES (0), (1), (2), (10)) AS tab(col)";
  EXPECT_EQ(Spark("SELECT percentile_approx(col, 0.5, 100), percentile_approx(col, 0.4, 100), "
                  "approx_percentile(col, 0.1)" +
                  four),
            "1|1|0");
}

TEST_F(AggregateFunctionsTest, PercentileErrors) {
  auto error = [&](const std::string& sql) {
    auto r = Run(sql);
    return r.ok() ? std::string("ok") : r.status().ToString();
  };
  EXPECT_NE(error("SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1)) t(x)")
                .find("fraction must be between 0 and 1, not 1.5"),
            std::string::npos);
  EXPECT_NE(error("SELECT percentile(x, -0.1) FROM (VALUES (1)) t(x)").find("between 0 and 1"), std::string::npos);
  EXPECT_NE(error("SELECT percentile(x, x) FROM (VALUES (1)) t(x)").find("fraction must be a numeric constant"),
            std::string::npos);
  EXPECT_NE(error("SELECT median('a')").find("median() cannot take VARCHAR"), std::string::npos);
  EXPECT_NE(error("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM (VALUES ('a')) t(s)")
                .find("percentile_cont() cannot take VARCHAR"),
            std::string::npos);
  EXPECT_NE(error("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY b) FROM (VALUES (true)) t(b)")
                .find("cannot take BOOLEAN"),
            std::string::npos);
  EXPECT_NE(error("SELECT percentile_cont(x, 0.5) FROM (VALUES (1)) t(x)").find("needs WITHIN GROUP"),
            std::string::npos);
  EXPECT_NE(error("SELECT median(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1)) t(x)").find("takes no WITHIN GROUP"),
            std::string::npos);
  EXPECT_NE(error("SELECT percentile_approx(x, 0.5, 0) FROM (VALUES (1)) t(x)").find("positive integer constant"),
            std::string::npos);
  EXPECT_NE(error("SELECT percentile(x) FROM (VALUES (1)) t(x)").find("takes a value and a fraction"),
            std::string::npos);
}

// DuckDB: string_agg / listagg (',' without a separator), ORDER BY the value.
TEST_F(AggregateFunctionsTest, StringAggEqualsDuckDB) {
  EXPECT_EQ(V("SELECT string_agg(s, ', ' ORDER BY s), string_agg(s ORDER BY s DESC), string_agg(DISTINCT s, '|' "
              "ORDER BY s), listagg(s, '-' ORDER BY s) FROM (VALUES ('b'), ('a'), (NULL), ('c'), ('a')) t(s)"),
            "a, a, b, c|c,b,a,a|a|b|c|a-a-b-c");
  EXPECT_EQ(V("SELECT string_agg(s, ',') FROM (VALUES ('x')) t(s) WHERE s <> 'x'"), "null");
  EXPECT_EQ(Ordered("SELECT g, string_agg(s, '' ORDER BY s) FROM (VALUES (1, 'q'), (2, NULL), (1, 'p'), (1, '')) "
                    "t(g, s) GROUP BY g ORDER BY g"),
            (std::vector<std::string>{"1|pq", "2|null"}));
  // Unordered: as the aggregate saw the rows (one thread: the input's order).
  EXPECT_EQ(V("SELECT string_agg(x, ';'), group_concat(d) FROM (VALUES (3, DATE '2024-01-02'), (10, NULL), (2, DATE "
              "'1999-12-31')) t(x, d)"),
            "3;10;2|2024-01-02,1999-12-31");
  EXPECT_EQ(Columns("SELECT string_agg(s, ',') FROM (VALUES ('a')) t(s)"),
            (std::vector<std::string>{"string_agg: utf8"}));
  auto error = [&](const std::string& sql) {
    auto r = Run(sql);
    return r.ok() ? std::string("ok") : r.status().ToString();
  };
  EXPECT_NE(error("SELECT string_agg(s, 1) FROM (VALUES ('b')) t(s)").find("separator must be a constant string"),
            std::string::npos);
  EXPECT_NE(error("SELECT string_agg(s, s) FROM (VALUES ('b')) t(s)").find("separator must be a constant string"),
            std::string::npos);
  // DISTINCT with ORDER BY another expression: PostgreSQL's 42P10.
  auto distinct = Run("SELECT string_agg(DISTINCT s, ',' ORDER BY k) FROM (VALUES ('b', 1)) t(s, k)");
  ASSERT_FALSE(distinct.ok());
  EXPECT_NE(distinct.status().message().find("ORDER BY expressions must appear in the argument list"),
            std::string::npos)
      << distinct.status().ToString();
  EXPECT_EQ(distinct.status().sql_state(), "42P10");
}

// string_agg ordered by other expressions (DuckDB's answers; more in
// tests/slt/issue37_string_agg_order.slt): by another column, by several,
// a number by its value (10 after 9, not as text), NULL keys last
// ascending and first descending, as PostgreSQL.
TEST_F(AggregateFunctionsTest, StringAggOrderedByOtherExpressions) {
  const char* const kRows =
      " FROM (VALUES ('a', 3, 'x'), ('b', 1, 'y'), ('c', NULL, 'x'), ('d', 10, 'y'), ('e', 9, NULL))"
      " t(s, k, u)";
  EXPECT_EQ(V(std::string("SELECT string_agg(s, ',' ORDER BY k), string_agg(s, ',' ORDER BY k DESC), "
                          "string_agg(s, '' ORDER BY u, k DESC), string_agg(k, '-' ORDER BY k)") +
              kRows),
            "b,a,e,d,c|c,d,e,a,b|cadbe|1-3-9-10");
  EXPECT_EQ(V(std::string("SELECT string_agg(s, ',' ORDER BY k NULLS FIRST), string_agg(DISTINCT k, ',' ORDER BY k "
                          "DESC), string_agg(s, ',' ORDER BY -k) FILTER (WHERE u = 'x')") +
              kRows),
            "c,b,a,e,d|10,9,3,1|a,c");
  // Strings by bytes, a shorter prefix first; doubles by value.
  EXPECT_EQ(V("SELECT string_agg(s, ',' ORDER BY u) FROM (VALUES ('1', 'ab'), ('2', 'a'), ('3', 'b'), ('4', '')) "
              "t(s, u)"),
            "4,2,1,3");
  EXPECT_EQ(V("SELECT string_agg(s, ',' ORDER BY f DESC) FROM (VALUES ('p', -1.5), ('q', 2.25), ('r', -1e300), "
              "('s', 0.5)) t(s, f)"),
            "q,s,p,r");
  EXPECT_EQ(Ordered(std::string("SELECT u, string_agg(s, '/' ORDER BY k DESC) ") + kRows + " GROUP BY u ORDER BY u"),
            (std::vector<std::string>{"x|c/a", "y|d/b", "null|e"}));
}

// Spark: listagg(x) WITHIN GROUP (ORDER BY y), NULL keys first ascending
// and last descending (Spark's NULL order).
TEST_F(AggregateFunctionsTest, SparkListaggWithinGroupByAnotherColumn) {
  const char* const kRows = " FROM VALUES (2, 'b'), (NULL, 'z'), (1, 'a'), (3, NULL) AS tab(id, name)";
  EXPECT_EQ(Spark(std::string("SELECT listagg(name, ',') WITHIN GROUP (ORDER BY id)") + kRows), "z,a,b");
  EXPECT_EQ(Spark(std::string("SELECT listagg(name) WITHIN GROUP (ORDER BY id DESC)") + kRows), "baz");
  EXPECT_EQ(V("SELECT string_agg(name, ',' ORDER BY id) FROM (VALUES (2, 'b'), (NULL, 'z'), (1, 'a'), (3, NULL)) "
              "tab(id, name)"),
            "a,b,z");
}

// Spark's documented examples of listagg / string_agg ('' without a
// separator in the spark dialect) and approx_count_distinct.
TEST_F(AggregateFunctionsTest, StringAggAndApproxCountDistinctSparkExamples) {
  EXPECT_EQ(Spark("SELECT listagg(col) FROM (VALUES ('a'), ('b'), ('c')) AS tab(col)"), "abc");
  EXPECT_EQ(Spark("SELECT listagg(col) WITHIN GROUP (ORDER BY col DESC) FROM (VALUES ('a'), ('b'), ('c')) AS "
                  "tab(col)"),
            "cba");
  EXPECT_EQ(Spark("SELECT listagg(col) FROM (VALUES ('a'), (NULL), ('b')) AS tab(col)"), "ab");
  EXPECT_EQ(Spark("SELECT listagg(col) FROM (VALUES ('a'), ('a')) AS tab(col)"), "aa");
  EXPECT_EQ(Spark("SELECT listagg(DISTINCT col) FROM (VALUES ('a'), ('a'), ('b')) AS tab(col)"), "ab");
  EXPECT_EQ(Spark("SELECT listagg(col, ', ') FROM (VALUES ('a'), ('b'), ('c')) AS tab(col)"), "a, b, c");
  EXPECT_EQ(Spark("SELECT string_agg(col) FROM (VALUES (CAST(NULL AS VARCHAR)), (NULL)) AS tab(col)"), "null");
  EXPECT_EQ(Spark("SELECT approx_count_distinct(col1) FROM (VALUES (1), (1), (2), (2), (3)) tab(col1)"), "3");
}

// HyperLogLog: exact for a few values, within its error for many; the
// relative error chooses the registers (Spark's rule).
TEST_F(AggregateFunctionsTest, ApproxCountDistinct) {
  EXPECT_EQ(V("SELECT approx_count_distinct(x), approx_count_distinct(s), approx_count_distinct(f), "
              "approx_count_distinct(d) FROM (VALUES (1, 'a', 0.0, CAST(1.5 AS DECIMAL(5,2))), (1, 'b', -0.0, 1.5), "
              "(NULL, NULL, NULL, NULL), (2, 'a', CAST('nan' AS DOUBLE), 2.5), (3, 'c', CAST('nan' AS DOUBLE), "
              "NULL)) t(x, s, f, d)"),
            "3|3|2|2");
  EXPECT_EQ(V("SELECT approx_count_distinct(x) FROM (VALUES (1)) t(x) WHERE x > 1"), "0");
  // 20,000 distinct values (each twice): within 3 standard errors.
  auto r =
      Run("SELECT approx_count_distinct(k), approx_count_distinct(k, 0.01), approx_count_distinct(CAST(k AS "
          "VARCHAR), 0.1), count(DISTINCT k) FROM (SELECT (t1.id * 1681 + u.id * 41 + v.id) % 20000 AS k FROM t1, t1 "
          "u, t1 v) q");
  ASSERT_OK(r);
  auto rows = Rows(*r);
  ASSERT_EQ(rows.size(), 1u);
  std::vector<double> got;
  std::string cell;
  for (char ch : rows[0] + "|") {
    if (ch == '|') {
      got.push_back(std::stod(cell));
      cell.clear();
    } else {
      cell += ch;
    }
  }
  const double truth = got[3];
  EXPECT_NEAR(got[0], truth, truth * 3 * 1.04 / std::sqrt(512.0));    // p = 9
  EXPECT_NEAR(got[1], truth, truth * 3 * 1.04 / std::sqrt(16384.0));  // p = 14
  EXPECT_NEAR(got[2], truth, truth * 3 * 1.04 / std::sqrt(128.0));    // p = 7
  auto error = [&](const std::string& sql) {
    auto e = Run(sql);
    return e.ok() ? std::string("ok") : e.status().ToString();
  };
  EXPECT_NE(error("SELECT approx_count_distinct(1, 0.5)").find("at least 4 index bits"), std::string::npos);
  EXPECT_NE(error("SELECT approx_count_distinct(1, 0.001)").find("at most 16 index bits"), std::string::npos);
  EXPECT_NE(error("SELECT approx_count_distinct(x, x) FROM (VALUES (0.1)) t(x)").find("must be a numeric constant"),
            std::string::npos);
}

}  // namespace
}  // namespace quiver::sql
