// The names of SELECT items without an alias (binder/spark_column_name.h):
// under the spark dialect the expression's text as Spark prints it, as a
// Databricks warehouse names the result's columns; under postgres,
// PostgreSQL's names. Expected texts follow Spark SQL's
// toPrettySQL(Expression.sql) (checked against its documented examples:
// `count(1)`, `(a + b)`, `CAST(x AS INT)`).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

class SparkColumnNameTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    // t(a int64, s utf8): a = 0..9, s = "b" for every row.
    std::vector<std::optional<int64_t>> a;
    std::vector<std::optional<std::string>> s;
    for (int64_t i = 0; i < 10; ++i) {
      a.emplace_back(i);
      s.emplace_back("b");
    }
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("a", int64(), true), field("s", utf8(), true)};
    ASSERT_OK(catalog_->RegisterBatches(
        "t", schema, {Batch(schema, {Int64Array(pool_.get(), a), StringArray(pool_.get(), s, false)})}));
  }
  // The result's column names under `dialect`.
  std::vector<std::string> Names(const std::string& sql, SqlDialect dialect) {
    ExecuteOptions o = Options();
    o.dialect = dialect;
    std::vector<std::string> out;
    auto stream = engine_->Execute(sql, o);
    EXPECT_TRUE(stream.ok()) << sql << ": " << stream.status().ToString();
    if (!stream.ok()) return out;
    for (const auto& f : (*stream)->schema()->fields) out.push_back(f->name);
    return out;
  }
};

TEST_F(SparkColumnNameTest, ExpressionsAreNamedAfterTheirSparkText) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a", "a"},
      {"t.a", "a"},
      {"a + 1", "(a + 1)"},
      {"-a", "(- a)"},
      {"upper(s)", "upper(s)"},
      {"UPPER(s)", "upper(s)"},
      {"coalesce(s, 'x')", "coalesce(s, x)"},
      {"greatest(1, 5, 3)", "greatest(1, 5, 3)"},
      {"CAST(a AS INT)", "CAST(a AS INT)"},
      {"CAST(a AS STRING)", "CAST(a AS STRING)"},
      {"CAST(a AS DECIMAL(10,2))", "CAST(a AS DECIMAL(10,2))"},
      {"CASE WHEN a > 1 THEN 1 END", "CASE WHEN (a > 1) THEN 1 END"},
      {"CASE WHEN a > 1 THEN 'x' ELSE 'y' END", "CASE WHEN (a > 1) THEN x ELSE y END"},
      {"a IS NULL", "(a IS NULL)"},
      {"a IS NOT NULL", "(a IS NOT NULL)"},
      {"a > 1 AND a < 5 AND s = 'b'", "(((a > 1) AND (a < 5)) AND (s = b))"},
      {"NOT a > 1", "(NOT (a > 1))"},
      {"a IN (1, 2)", "(a IN (1, 2))"},
      {"a BETWEEN 1 AND 3", "(a BETWEEN 1 AND 3)"},
      {"s LIKE 'a%'", "s LIKE a%"},
      {"DATE '2024-01-01'", "DATE '2024-01-01'"},
      {"1.5", "1.5"},
      {"NULL", "NULL"},
      {"true", "true"},
      {"s || 'x'", "concat(s, x)"},
  };
  for (const auto& [expr, name] : cases) {
    const auto names = Names("SELECT " + expr + " FROM t", SqlDialect::kSpark);
    ASSERT_EQ(names.size(), 1u) << expr;
    EXPECT_EQ(names[0], name) << expr;
  }
}

TEST_F(SparkColumnNameTest, AggregatesAsSparkNamesThem) {
  EXPECT_EQ(Names("SELECT count(*), count(a), count(DISTINCT a), sum(a), avg(a + 1) FROM t", SqlDialect::kSpark),
            (std::vector<std::string>{"count(1)", "count(a)", "count(DISTINCT a)", "sum(a)", "avg((a + 1))"}));
  // An alias always wins.
  EXPECT_EQ(Names("SELECT count(*) AS n, max(a) + 1 AS b FROM t", SqlDialect::kSpark),
            (std::vector<std::string>{"n", "b"}));
}

TEST_F(SparkColumnNameTest, PostgresKeepsPostgresNames) {
  EXPECT_EQ(Names("SELECT a + 1, upper(s), count(*), greatest(1, 2), least(1, 2), CAST(a AS INT) FROM t GROUP BY a, s",
                  SqlDialect::kPostgres),
            (std::vector<std::string>{"?column?", "upper", "count", "greatest", "least", "a"}));
}

TEST_F(SparkColumnNameTest, ASubqueryColumnIsReferencedByItsSparkName) {
  ExecuteOptions o = Options();
  o.dialect = SqlDialect::kSpark;
  auto r = Run("SELECT `(a + 1)` FROM (SELECT a + 1 FROM t) WHERE `(a + 1)` = 3", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Rows(*r).size(), 1u);
}

}  // namespace
}  // namespace quiver::sql
