// Tests of the analytical SQL of quiver/sql: aggregation (SQL NULL
// semantics, empty inputs, DISTINCT), ORDER BY / top-N, expressions,
// subqueries unnested into joins, CTEs and derived tables, runtime SQL
// errors with their SQLSTATE, operator memory limits; and a differential
// test of GROUP BY against a naive evaluator over NULL-heavy random data.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "quiver/columnar/validate.h"
#include "quiver/join/tests/join_test_util.h"
#include "quiver/sql/engine.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::sql {
namespace {

using join::testing::Batch;
using join::testing::Cell;
using join::testing::Int32Array;
using join::testing::Int64Array;
using join::testing::PrimitiveArray;
using join::testing::Split;
using join::testing::StringArray;

ArrayDataPtr Money(MemoryPool* pool, const std::vector<std::optional<int64_t>>& cents) {
  std::vector<std::optional<__int128>> x;
  for (const auto& c : cents) x.push_back(c ? std::optional<__int128>(*c) : std::nullopt);
  return PrimitiveArray<__int128>(pool, decimal(128, 15, 2), x);
}

class AnalyticsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = MemoryPool::MakeRoot({"sql-analytics-test"});
    catalog_ = std::make_shared<Catalog>();
    // s(id, grp, qty, price, day)
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("id", int64()), field("grp", utf8()), field("qty", int32()),
                      field("price", decimal(128, 15, 2)), field("day", date32())};
    const int32_t d1 = 8796, d2 = 8824, d3 = 9296;  // 1994-01-31, 1994-02-28, 1995-06-15
    std::vector<ArrayDataPtr> cols = {
        Int64Array(pool_.get(), {1, 2, 3, 4, 5, 6, 7, 8}),
        StringArray(pool_.get(), {"a", "a", "b", "b", "b", std::nullopt, "c", "a"}, false),
        Int32Array(pool_.get(), {1, 2, std::nullopt, 4, 5, 6, 7, 8}),
        Money(pool_.get(), {150, 225, 300, std::nullopt, 510, 600, 775, 10}),
        PrimitiveArray<int32_t>(pool_.get(), date32(), {d1, d2, std::nullopt, d3, d3, d3, d3, d3})};
    ASSERT_OK(catalog_->RegisterBatches("s", schema, Split(Batch(schema, cols), 3)));
    ASSERT_OK(catalog_->RegisterBatches("e", schema, {}));
    engine_ = std::make_unique<Engine>(catalog_);
  }

  ExecuteOptions Options() {
    ExecuteOptions o;
    o.pool = pool_.get();
    o.max_batch_rows = 3;
    return o;
  }

  Result<std::vector<std::string>> Rows(const std::string& sql, ExecuteOptions o) {
    QUIVER_ASSIGN_OR_RETURN(auto stream, engine_->Execute(sql, o));
    std::vector<std::string> rows;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(auto b, stream->Next());
      if (!b) break;
      EXPECT_OK(ValidateBatch(*b, ValidationLevel::kFull));
      for (int64_t r = 0; r < b->num_rows; ++r) {
        std::string s;
        for (size_t c = 0; c < b->columns.size(); ++c) {
          if (c) s += '|';
          s += Cell(*b->columns[c], r);
        }
        rows.push_back(s);
      }
    }
    return rows;
  }
  Result<std::vector<std::string>> Rows(const std::string& sql) { return Rows(sql, Options()); }

  void Expect(const std::string& sql, const std::vector<std::string>& want) {
    auto got = Rows(sql);
    ASSERT_TRUE(got.ok()) << sql << ": " << got.status().ToString();
    EXPECT_EQ(*got, want) << sql;
  }

  std::shared_ptr<MemoryPool> pool_;
  std::shared_ptr<Catalog> catalog_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(AnalyticsTest, AggregatesSkipNullsAndEmptyInputGivesOneRow) {
  Expect("SELECT count(*), count(qty), sum(qty), min(qty), max(qty), sum(price), min(grp), max(day) FROM s",
         {"8|7|33|1|8|25.70|a|1995-06-15"});
  auto avg = Rows("SELECT avg(qty), avg(price) FROM s");
  ASSERT_OK(avg);
  ASSERT_EQ(avg->size(), 1u);
  EXPECT_NEAR(std::stod((*avg)[0].substr(0, (*avg)[0].find('|'))), 33.0 / 7, 1e-12);
  EXPECT_NEAR(std::stod((*avg)[0].substr((*avg)[0].find('|') + 1)), 25.70 / 7, 1e-12);
  Expect("SELECT count(*), count(qty), sum(qty), min(price), avg(qty) FROM e", {"0|0|null|null|null"});
  Expect("SELECT count(*) FROM s WHERE id > 100", {"0"});
  Expect("SELECT grp, count(*) FROM e GROUP BY grp", {});
  Expect("SELECT grp, count(*) FROM s WHERE id > 100 GROUP BY grp", {});
}

TEST_F(AnalyticsTest, GroupByHavingDistinctAndOrdinals) {
  Expect("SELECT grp, count(*), sum(qty) FROM s GROUP BY grp ORDER BY grp", {"a|3|11", "b|3|9", "c|1|7", "null|1|6"});
  Expect("SELECT grp, sum(qty) AS t FROM s GROUP BY 1 HAVING sum(qty) > 7 ORDER BY t DESC", {"a|11", "b|9"});
  Expect("SELECT count(DISTINCT grp), count(DISTINCT qty % 2), sum(DISTINCT qty % 3) FROM s", {"3|2|3"});
  Expect("SELECT DISTINCT grp FROM s ORDER BY grp NULLS FIRST", {"null", "a", "b", "c"});
  Expect("SELECT qty % 2 AS parity, count(*) FROM s WHERE qty IS NOT NULL GROUP BY qty % 2 ORDER BY 1", {"0|4", "1|3"});
  Expect("SELECT extract(year FROM day) AS y, count(*) FROM s GROUP BY y ORDER BY y", {"1994|2", "1995|5", "null|1"});
}

TEST_F(AnalyticsTest, OrderByNullsAndTopN) {
  Expect("SELECT id, qty FROM s ORDER BY qty DESC LIMIT 3", {"3|null", "8|8", "7|7"});
  Expect("SELECT id, qty FROM s ORDER BY qty LIMIT 2", {"1|1", "2|2"});
  Expect("SELECT id, qty FROM s ORDER BY qty NULLS FIRST LIMIT 2", {"3|null", "1|1"});
  Expect("SELECT id FROM s ORDER BY price LIMIT 2 OFFSET 1", {"1", "2"});
  Expect("SELECT id FROM s ORDER BY grp DESC, id LIMIT 4", {"6", "7", "3", "4"});
  Expect("SELECT id FROM s ORDER BY id LIMIT 0", {});
  Expect("SELECT id FROM s ORDER BY id OFFSET 6", {"7", "8"});
}

TEST_F(AnalyticsTest, Expressions) {
  Expect(
      "SELECT id, qty * price, price / 4, CASE WHEN qty > 4 THEN 'big' WHEN qty IS NULL THEN 'none' ELSE 'small' "
      "END, COALESCE(grp, '?'), upper(grp) || '-' || substring('abcdef' FROM 2 FOR 3), day + 30, NULLIF(qty, 2) "
      "FROM s WHERE id <= 3 ORDER BY id",
      {"1|1.50|0.375000000000|small|a|A-bcd|1994-03-02|1", "2|4.50|0.562500000000|small|a|A-bcd|1994-03-30|null",
       "3|null|0.750000000000|none|b|B-bcd|null|null"});
  Expect(
      "SELECT DATE '1994-01-31' + INTERVAL '1' MONTH, DATE '1996-02-29' - INTERVAL '1' YEAR, "
      "DATE '1994-03-01' - DATE '1994-01-01', DATE '1994-01-01' + INTERVAL '90' DAY",
      {"1994-02-28|1995-02-28|59|1994-04-01"});
  Expect(
      "SELECT 'a_c' LIKE 'a\\_c' ESCAPE '\\', 'abc' LIKE 'a\\_c' ESCAPE '\\', 'abc' LIKE 'a_c', "
      "'abc' NOT LIKE '%b%', 'ab' LIKE '%', '' LIKE '_'",
      {"true|false|true|false|true|false"});
  Expect(
      "SELECT 7 / 2, -7 % 3, 7.0 / 2, 2 * 3.5, 1e0 / 4, 10 - 2.25, CAST('12.345' AS DECIMAL(10,2)), "
      "CAST(3 AS DOUBLE), CAST(12.5 AS VARCHAR), length('héllo'), trim('  x  ')",
      {"3|-1|3.500000000000|7.0|0.25|7.75|12.35|3|12.5|5|x"});
  // An int32 key against a decimal: compared exactly.
  Expect("SELECT id FROM s WHERE qty = 4.00 OR price = 6 ORDER BY id", {"4", "6"});
  // Searched and simple CASE; the THEN branch that would divide by zero is not taken.
  Expect(
      "SELECT id, CASE qty WHEN 1 THEN 'one' WHEN 2 THEN 'two' END, CASE WHEN qty > 7 THEN 0 ELSE 100 / qty END "
      "FROM s WHERE id IN (1, 2, 8) ORDER BY id",
      {"1|one|100", "2|two|50", "8|null|0"});
  Expect("SELECT id FROM s WHERE grp IN ('a', 'c') AND qty BETWEEN 2 AND 7 AND grp IS NOT NULL ORDER BY id",
         {"2", "7"});
}

// + - * over NULL-free decimal columns read the values' low words in place
// and check the high words in the same loop; a batch with a value wider
// than 64 bits (10^20, 2^63) is computed again exactly, and a result past
// the type still fails.
TEST_F(AnalyticsTest, DecimalArithmeticWiderThan64BitsIsExact) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("x", decimal(128, 38, 0))};
  const __int128 e20 = static_cast<__int128>(10000000000) * 10000000000;
  const __int128 two63 = static_cast<__int128>(1) << 63;
  ASSERT_OK(catalog_->RegisterBatches(
      "w", schema,
      Split(join::testing::Batch(
                schema, {PrimitiveArray<__int128>(pool_.get(), decimal(128, 38, 0), {3, e20, -5, two63, -two63, 7})}),
            3)));
  Expect("SELECT x * 2, x + x, x - 1, 2 * x FROM w",
         {"6|6|2|6", "200000000000000000000|200000000000000000000|99999999999999999999|200000000000000000000",
          "-10|-10|-6|-10", "18446744073709551616|18446744073709551616|9223372036854775807|18446744073709551616",
          "-18446744073709551616|-18446744073709551616|-9223372036854775809|-18446744073709551616", "14|14|6|14"});
  auto overflow = Rows("SELECT x * x * x FROM w");
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().ToString().find("out of range"), std::string::npos) << overflow.status().ToString();
}

// EXISTS reads no select list: a list of columns (SELECT *) becomes one NULL,
// so the subquery's scan keeps only the columns its join and filters use
// (TPC-H Q21: 3 of lineitem's 16); a list that decides whether a row exists
// (an aggregate gives one row even over none) is kept.
TEST_F(AnalyticsTest, ExistsReadsOnlyTheColumnsItsJoinUses) {
  Expect("SELECT id FROM s WHERE EXISTS (SELECT * FROM s s2 WHERE s2.grp = s.grp AND s2.id <> s.id) ORDER BY id",
         {"1", "2", "3", "4", "5", "8"});
  Expect(
      "SELECT id FROM s WHERE NOT EXISTS (SELECT *, id FROM s s2 WHERE s2.grp = s.grp AND s2.id <> s.id) ORDER BY id",
      {"6", "7"});
  Expect("SELECT count(*) FROM s WHERE EXISTS (SELECT count(*) FROM s s2 WHERE s2.id > 100)", {"8"});
  Expect("SELECT count(*) FROM s WHERE EXISTS (SELECT DISTINCT grp FROM s s2 WHERE s2.id > 100)", {"0"});
  auto plan = Rows("EXPLAIN SELECT id FROM s WHERE EXISTS (SELECT * FROM s s2 WHERE s2.grp = s.grp AND s2.id <> s.id)");
  ASSERT_OK(plan);
  std::string text;
  for (const auto& line : *plan) text += line + "\n";
  // The subquery side carries the NULL, grp and id, not s2's 5 columns too.
  EXPECT_NE(text.find("    Project 3 "), std::string::npos) << text;
}

TEST_F(AnalyticsTest, SubqueriesAreUnnested) {
  // Correlated scalar subquery in the SELECT list (a NULL key matches nothing).
  Expect("SELECT id, (SELECT max(qty) FROM s s2 WHERE s2.grp = s.grp) FROM s ORDER BY id",
         {"1|8", "2|8", "3|5", "4|5", "5|5", "6|null", "7|7", "8|8"});
  // count() of no rows is 0, not NULL (the count bug).
  Expect("SELECT id, (SELECT count(*) FROM s s2 WHERE s2.qty = s.id) FROM s ORDER BY id",
         {"1|1", "2|1", "3|0", "4|1", "5|1", "6|1", "7|1", "8|1"});
  // Correlated scalar subquery in WHERE.
  Expect("SELECT id FROM s WHERE qty >= (SELECT avg(qty) FROM s s2 WHERE s2.grp = s.grp) ORDER BY id", {"5", "7", "8"});
  Expect("SELECT id FROM s WHERE qty IN (SELECT id FROM s WHERE grp = 'a') ORDER BY id", {"1", "2", "8"});
  Expect("SELECT id FROM s WHERE id NOT IN (SELECT qty FROM s)", {});  // the set holds a NULL
  Expect("SELECT id FROM s WHERE id NOT IN (SELECT qty FROM s WHERE qty IS NOT NULL)", {"3"});
  Expect("SELECT id FROM s a WHERE EXISTS (SELECT 1 FROM s b WHERE b.grp = a.grp AND b.id <> a.id) ORDER BY id",
         {"1", "2", "3", "4", "5", "8"});
  Expect("SELECT id FROM s a WHERE NOT EXISTS (SELECT 1 FROM s b WHERE b.grp = a.grp AND b.id <> a.id) ORDER BY id",
         {"6", "7"});
  Expect("SELECT id FROM s WHERE EXISTS (SELECT 1 FROM e) ORDER BY id", {});
  Expect("SELECT count(*) FROM s WHERE NOT EXISTS (SELECT 1 FROM e)", {"8"});
  Expect("SELECT id FROM s WHERE qty > (SELECT avg(qty) FROM s) + 2 ORDER BY id", {"7", "8"});
  // CTE referenced twice; derived table with column aliases.
  Expect(
      "WITH g AS (SELECT grp, sum(qty) AS t FROM s GROUP BY grp) SELECT a.grp FROM g a, g b WHERE a.t = b.t + 2 "
      "ORDER BY 1",
      {"a", "b"});
  Expect("SELECT x FROM (SELECT id * 2 FROM s WHERE id < 3) AS d (x) ORDER BY x", {"2", "4"});
  // LEFT JOIN with a residual ON condition; comma-separated FROM with a cross product.
  Expect(
      "SELECT a.id, b.id FROM s a LEFT JOIN s b ON a.grp = b.grp AND b.qty > a.qty WHERE a.id IN (1, 6) "
      "ORDER BY 1, 2",
      {"1|2", "1|8", "6|null"});
  Expect("SELECT count(*) FROM s a, s b WHERE a.id < b.id", {"28"});
  // RIGHT and FULL joins with a residual ON condition.
  Expect(
      "SELECT a.id, b.id FROM s a RIGHT JOIN s b ON a.grp = b.grp AND a.qty > b.qty WHERE b.id IN (1, 2, 6) "
      "ORDER BY 2, 1",
      {"2|1", "8|1", "8|2", "null|6"});
  Expect(
      "SELECT a.id, b.id FROM (SELECT * FROM s WHERE id <= 3) a FULL JOIN (SELECT * FROM s WHERE id >= 2 AND "
      "id <= 5) b ON a.grp = b.grp AND a.id < b.id ORDER BY 1, 2",
      {"1|2", "2|null", "3|4", "3|5", "null|3"});
  Expect("SELECT 1, 'x' AS y", {"1|x"});
}

// A WITH query named more than once runs once and every reference reads
// its result (EXPLAIN: CteScan); one named once is inlined, as before. Each statement gives the rows of its textually
// inlined twin at 1, 2 and 4 threads, and the pool is back at its baseline
// after each.
TEST_F(AnalyticsTest, WithQueriesNamedTwiceAreMaterializedOnce) {
  const std::string g = "(SELECT grp, sum(qty) AS t, count(*) AS n FROM s GROUP BY grp)";
  const std::string d = "(SELECT id, qty FROM s WHERE id % 2 = 0)";
  struct Case {
    std::string with_sql, inlined_sql;
  };
  const std::vector<Case> cases = {
      // A self-join of the query (some columns read by neither reference).
      {"WITH g AS " + g + " SELECT a.grp, b.grp FROM g a, g b WHERE a.t = b.t + 2 ORDER BY 1, 2",
       "SELECT a.grp, b.grp FROM " + g + " a, " + g + " b WHERE a.t = b.t + 2 ORDER BY 1, 2"},
      // TPC-H Q15's shape: in FROM and in an uncorrelated scalar subquery.
      {"WITH g AS " + g + " SELECT grp, t FROM g WHERE t = (SELECT max(t) FROM g) ORDER BY 1",
       "SELECT grp, t FROM " + g + " x WHERE t = (SELECT max(t) FROM " + g + " y) ORDER BY 1"},
      // In FROM and in IN / correlated subqueries (decorrelated into joins).
      {"WITH d AS " + d + " SELECT id FROM d WHERE qty IN (SELECT id FROM d) ORDER BY 1",
       "SELECT id FROM " + d + " x WHERE qty IN (SELECT id FROM " + d + " y) ORDER BY 1"},
      {"WITH d AS " + d +
           " SELECT s.id FROM s WHERE s.qty >= (SELECT avg(d.qty) FROM d WHERE d.id = s.id) AND "
           "EXISTS (SELECT 1 FROM d WHERE d.id = s.id + 2) ORDER BY 1",
       "SELECT s.id FROM s WHERE s.qty >= (SELECT avg(x.qty) FROM " + d +
           " x WHERE x.id = s.id) AND "
           "EXISTS (SELECT 1 FROM " +
           d + " y WHERE y.id = s.id + 2) ORDER BY 1"},
      // A WITH query over another, each named twice; column aliases per reference.
      {"WITH d AS " + d +
           ", e2 AS (SELECT a.id AS i, b.qty AS q FROM d a, d b WHERE a.id = b.id) "
           "SELECT x.i, y.w FROM e2 x, e2 AS y (v, w) WHERE x.i = y.v ORDER BY 1",
       "SELECT x.i, y.w FROM (SELECT a.id AS i, b.qty AS q FROM " + d + " a, " + d +
           " b WHERE a.id = b.id) x, "
           "(SELECT a.id, b.qty FROM " +
           d + " a, " + d + " b WHERE a.id = b.id) AS y (v, w) WHERE x.i = y.v ORDER BY 1"},
      // ORDER BY ... LIMIT inside, and an empty result.
      {"WITH top AS (SELECT id FROM s ORDER BY price DESC NULLS LAST LIMIT 3) "
       "SELECT a.id FROM top a WHERE a.id IN (SELECT id FROM top) ORDER BY 1",
       "SELECT id FROM (SELECT id FROM s ORDER BY price DESC NULLS LAST LIMIT 3) a ORDER BY 1"},
      {"WITH z AS (SELECT id FROM s WHERE id > 100) SELECT count(*), (SELECT count(*) FROM z) FROM z", "SELECT 0, 0"},
  };
  const int64_t baseline = pool_->held_bytes();
  for (const auto& c : cases) {
    auto want = Rows(c.inlined_sql);
    ASSERT_OK(want) << c.inlined_sql;
    ASSERT_FALSE(want->empty() && c.inlined_sql.find("count") != std::string::npos) << c.inlined_sql;
    for (int threads : {1, 2, 4}) {
      ExecuteOptions o = Options();
      o.threads = threads;
      auto got = Rows(c.with_sql, o);
      ASSERT_OK(got) << c.with_sql << " threads=" << threads;
      EXPECT_EQ(*got, *want) << c.with_sql << " threads=" << threads;
      EXPECT_EQ(pool_->held_bytes(), baseline) << c.with_sql;
    }
    auto plan = Rows("EXPLAIN " + c.with_sql);
    ASSERT_OK(plan);
    std::string text;
    for (const auto& line : *plan) text += line + "\n";
    EXPECT_NE(text.find("CteScan"), std::string::npos) << c.with_sql << "\n" << text;
  }
  // Both references of the self-join name one query (one id).
  auto plan = Rows("EXPLAIN " + cases[0].with_sql);
  ASSERT_OK(plan);
  int refs = 0;
  for (const auto& line : *plan) refs += line.find("CteScan g #0") != std::string::npos;
  EXPECT_EQ(refs, 2);
  // Named once: inlined.
  auto once = Rows("EXPLAIN WITH d AS (SELECT id, qty FROM s) SELECT id FROM d WHERE qty = 4");
  ASSERT_OK(once);
  std::string text;
  for (const auto& line : *once) text += line + "\n";
  EXPECT_EQ(text.find("CteScan"), std::string::npos) << text;
  Expect("WITH d AS (SELECT id, qty FROM s) SELECT id FROM d WHERE qty = 4", {"4"});
  // An error inside says which WITH query, keeps its SQLSTATE, and frees everything.
  for (int threads : {1, 2}) {
    ExecuteOptions o = Options();
    o.threads = threads;
    auto err = Rows("WITH bad AS (SELECT id / (qty - qty) AS x FROM s) SELECT count(*) FROM bad a, bad b", o);
    ASSERT_FALSE(err.ok());
    EXPECT_EQ(err.status().sql_state(), "22012") << err.status().ToString();
    EXPECT_NE(err.status().message().find("WITH query 'bad'"), std::string::npos) << err.status().ToString();
    EXPECT_EQ(pool_->held_bytes(), baseline);
  }
}

// A semi / anti join whose columns all come from one input of a fan-out
// inner join runs on that input, below the join (TPC-H Q18's IN on orders),
// and gives the same rows as above it.
TEST_F(AnalyticsTest, SemiAndAntiJoinsMoveBelowFanOutJoins) {
  const std::string in_sql =
      "SELECT a.id, b.id FROM s a, s b WHERE a.grp = b.grp AND a.id IN (SELECT qty FROM s WHERE qty > 6) "
      "ORDER BY 1, 2";
  Expect(in_sql, {"7|7", "8|1", "8|2", "8|8"});
  Expect(
      "SELECT a.id, b.id FROM s a, s b WHERE a.grp = b.grp AND a.id NOT IN (SELECT qty FROM s WHERE qty > 2) "
      "ORDER BY 1, 2",
      {"1|1", "1|2", "1|8", "2|1", "2|2", "2|8", "3|3", "3|4", "3|5"});
  Expect(
      "SELECT a.id, b.id FROM s a, s b WHERE a.grp = b.grp AND NOT EXISTS (SELECT 1 FROM s c WHERE c.qty = a.id "
      "AND c.price > 5.00) ORDER BY 1, 2",
      {"1|1", "1|2", "1|8", "2|1", "2|2", "2|8", "3|3", "3|4", "3|5", "4|3", "4|4", "4|5", "8|1", "8|2", "8|8"});
  // A residual reading the other input keeps the semi join above.
  Expect(
      "SELECT a.id, b.id FROM s a, s b WHERE a.grp = b.grp AND EXISTS (SELECT 1 FROM s c WHERE c.id = a.id AND "
      "c.qty > b.qty) ORDER BY 1, 2",
      {"2|1", "5|4", "8|1", "8|2"});
  auto plan = Rows("EXPLAIN " + in_sql);
  ASSERT_OK(plan);
  auto depth = [&](const std::string& what) {
    for (const auto& line : *plan)
      if (line.find(what) != std::string::npos) return static_cast<int>(line.find_first_not_of(' '));
    return -1;
  };
  ASSERT_GE(depth("Join inner"), 0);
  EXPECT_GT(depth("Join semi"), depth("Join inner")) << ::testing::PrintToString(*plan);
}

// A correlated aggregate subquery whose outer keys come from a few rows
// aggregates only the rows with those keys (a semi join below its
// aggregate), with the same answers, the count bug included.
TEST_F(AnalyticsTest, CorrelatedAggregatesReadOnlyTheOuterKeys) {
  const std::string sql =
      "SELECT id, (SELECT count(*) FROM s s2 WHERE s2.grp = s.grp), (SELECT max(qty) FROM s s3 WHERE s3.grp = "
      "s.grp) FROM s WHERE id = 7 OR id = 3 OR id = 6 ORDER BY id";
  Expect(sql, {"3|3|5", "6|0|null", "7|1|7"});
  Expect("SELECT id FROM s WHERE id = 8 AND qty >= (SELECT avg(qty) FROM s s2 WHERE s2.grp = s.grp)", {"8"});
  Expect("SELECT id FROM s WHERE id = 1 AND qty >= (SELECT avg(qty) FROM s s2 WHERE s2.grp = s.grp)", {});
  auto plan = Rows("EXPLAIN SELECT id FROM s WHERE id = 8 AND qty >= (SELECT avg(qty) FROM s s2 WHERE s2.grp = s.grp)");
  ASSERT_OK(plan);
  bool semi_below_aggregate = false;
  int aggregate_depth = -1;
  for (const auto& line : *plan) {
    const auto depth = static_cast<int>(line.find_first_not_of(' '));
    if (line.find("Aggregate groups=1") != std::string::npos) aggregate_depth = depth;
    if (aggregate_depth >= 0 && depth > aggregate_depth && line.find("Join semi") != std::string::npos)
      semi_below_aggregate = true;
  }
  EXPECT_TRUE(semi_below_aggregate) << ::testing::PrintToString(*plan);
}

// Join order by dynamic programming over connected subsets (least sum of
// estimated intermediate rows): the filtered relation and its neighbour
// join first, the unfiltered one last (the greedy order started from the
// largest relation).
TEST_F(AnalyticsTest, JoinOrderJoinsTheFilteredRelationsFirst) {
  const std::string sql = "SELECT a.id, b.id, c.id FROM s a, s b, s c WHERE a.qty = b.id AND b.qty = c.id AND c.id = 7";
  Expect(sql, {"7|7|7"});
  auto plan = Rows("EXPLAIN " + sql);
  ASSERT_OK(plan);
  int deepest = -1;
  size_t at = 0;
  for (size_t i = 0; i < plan->size(); ++i) {
    const std::string& line = (*plan)[i];
    const auto depth = static_cast<int>(line.find_first_not_of(' '));
    if (line.find("Join inner") != std::string::npos && depth > deepest) {
      deepest = depth;
      at = i;
    }
  }
  ASSERT_GE(deepest, 0);
  ASSERT_LT(at + 2, plan->size());
  const std::string children = (*plan)[at + 1] + (*plan)[at + 2];
  EXPECT_NE(children.find("filters=1"), std::string::npos) << ::testing::PrintToString(*plan);
}

// Short string keys are packed into 64 bits per row: NULL and '' stay two
// groups, and so do tuples that differ only in which column holds a value.
TEST_F(AnalyticsTest, ShortStringGroupKeysKeepNullEmptyAndPositionApart) {
  Expect("SELECT CASE WHEN id < 3 THEN '' ELSE grp END AS k, count(*) FROM s GROUP BY 1 ORDER BY 1",
         {"|2", "a|1", "b|3", "c|1", "null|1"});
  Expect(
      "SELECT CASE WHEN id < 5 THEN grp ELSE '' END AS x, CASE WHEN id < 5 THEN '' ELSE grp END AS y, count(*) "
      "FROM s GROUP BY 1, 2 ORDER BY 1, 2",
      {"|a|1", "|b|1", "|c|1", "|null|1", "a||2", "b||2"});
}

// GROUP BY over fixed-width keys where a NULL key comes before another
// key: the NULL keeps its column's width in the group's key, and the keys
// after it come out as they went in (they came out NULL or shifted).
TEST_F(AnalyticsTest, ANullGroupKeyKeepsTheKeysAfterIt) {
  Expect(
      "SELECT CASE WHEN id % 3 = 0 THEN NULL ELSE id % 2 END AS k, id % 5 AS x, count(*) FROM s "
      "GROUP BY 1, 2 ORDER BY 1, 2",
      {"0|2|1", "0|3|1", "0|4|1", "1|0|1", "1|1|1", "1|2|1", "null|1|1", "null|3|1"});
  Expect("SELECT qty, day, price, count(*) FROM s WHERE id IN (3, 4, 6) GROUP BY qty, day, price ORDER BY 1",
         {"4|1995-06-15|null|1", "6|1995-06-15|6.00|1", "null|null|3.00|1"});
  for (int threads : {1, 2, 4}) {
    ExecuteOptions o = Options();
    o.threads = threads;
    auto got = Rows(
        "SELECT id % 2 = 0, CASE WHEN id > 4 THEN NULL ELSE id END, id, count(*) FROM s GROUP BY 1, 2, 3 "
        "ORDER BY 3",
        o);
    ASSERT_OK(got);
    EXPECT_EQ(*got, (std::vector<std::string>{"false|1|1|1", "true|2|2|1", "false|3|3|1", "true|4|4|1",
                                              "false|null|5|1", "true|null|6|1", "false|null|7|1", "true|null|8|1"}));
  }
}

struct RuntimeErrorCase {
  std::string sql;
  const char* sql_state;
  std::string message;
};

TEST_F(AnalyticsTest, RuntimeErrorsCarryTheirSqlState) {
  const std::vector<RuntimeErrorCase> cases = {
      {"SELECT qty / (id - id) FROM s", "22012", "division by zero"},
      {"SELECT CAST('x1' AS INTEGER)", "22P02", "invalid input syntax for type INTEGER"},
      {"SELECT CAST(grp AS DATE) FROM s", "22007", "invalid input syntax for type DATE"},
      {"SELECT (SELECT id FROM s)", "21000", "more than one row returned by a subquery"},
      {"SELECT 9223372036854775807 + id FROM s", "22003", "numeric value out of range"},
      {"SELECT CAST(price * 10000000000000 AS DECIMAL(15,2)) FROM s", "22003", "numeric value out of range"},
      {"SELECT nope FROM s", "42703", "no column named 'nope'"},
      {"SELECT 1 FROM nope", "42P01", "no table named 'nope'"},
  };
  for (const auto& c : cases) {
    auto r = Rows(c.sql);
    ASSERT_FALSE(r.ok()) << c.sql;
    EXPECT_EQ(r.status().sql_state(), c.sql_state) << c.sql << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.sql << ": " << r.status().ToString();
  }
}

TEST_F(AnalyticsTest, OperatorsOverTheLimitNameThemselvesAndReturnThePool) {
  // 50,000 groups of 8-byte keys: the aggregation's pages pass a 256 KiB limit.
  std::vector<std::optional<int64_t>> k(50000);
  for (int64_t i = 0; i < 50000; ++i) k[static_cast<size_t>(i)] = i;
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("k", int64())};
  ASSERT_OK(catalog_->RegisterBatches("big", schema, {Batch(schema, {Int64Array(pool_.get(), k)})}));
  const int64_t baseline = pool_->held_bytes();
  for (auto mode : {join::MemoryMode::kOnHeap, join::MemoryMode::kOffHeap}) {
    ExecuteOptions o = Options();
    o.memory_mode = mode;
    o.memory_limit_bytes = 256 << 10;
    auto agg = Rows("SELECT k, count(*) FROM big GROUP BY k", o);
    ASSERT_RAISES(OutOfMemory, agg);
    EXPECT_NE(agg.status().message().find("hash aggregate"), std::string::npos) << agg.status().ToString();
    EXPECT_EQ(agg.status().sql_state(), "53200");
    EXPECT_EQ(pool_->held_bytes(), baseline);
    o.memory_limit_bytes = 64 << 20;
    auto ok = Rows("SELECT count(*) FROM (SELECT k, count(*) FROM big GROUP BY k) AS g", o);
    ASSERT_OK(ok);
    EXPECT_EQ(*ok, std::vector<std::string>{"50000"});
    // A top-N keeps only the limit's rows: it fits where a full sort would not.
    o.memory_limit_bytes = 1536 << 10;
    auto top = Rows("SELECT k FROM big ORDER BY k DESC LIMIT 3", o);
    ASSERT_OK(top);
    EXPECT_EQ(*top, (std::vector<std::string>{"49999", "49998", "49997"}));
    EXPECT_EQ(pool_->held_bytes(), baseline);
  }
}

// A small outer side against a large subquery builds the outer side (the
// semi / anti join marks the outer rows the subquery's rows match).
TEST_F(AnalyticsTest, SemiAndAntiJoinsBuildTheSmallOuterSide) {
  std::vector<std::optional<int64_t>> k(50000);
  for (int64_t i = 0; i < 50000; ++i) k[static_cast<size_t>(i)] = i;
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("k", int64())};
  ASSERT_OK(catalog_->RegisterBatches("big", schema, Split(Batch(schema, {Int64Array(pool_.get(), k)}), 4)));
  Expect("SELECT id FROM s WHERE EXISTS (SELECT 1 FROM big WHERE big.k = s.qty * 1000) ORDER BY id",
         {"1", "2", "4", "5", "6", "7", "8"});
  Expect(
      "SELECT id FROM s WHERE EXISTS (SELECT 1 FROM big WHERE big.k = s.qty * 1000 + s.id AND big.k - s.id > 5000) "
      "ORDER BY id",
      {"6", "7", "8"});
  Expect("SELECT id FROM s WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = s.id * 10000) ORDER BY id",
         {"5", "6", "7", "8"});
  Expect("SELECT id FROM s WHERE qty IN (SELECT k FROM big WHERE k < 5) ORDER BY id", {"1", "2", "4"});
  Expect("SELECT count(*) FROM s WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = s.qty AND big.k <> 4)",
         {"2"});  // qty 4 and the NULL qty
}

// GROUP BY over NULL-heavy random data against a naive evaluator.
TEST_F(AnalyticsTest, GroupByMatchesANaiveEvaluator) {
  std::mt19937_64 rng(99);
  const int64_t n = 600;
  std::vector<std::optional<int64_t>> k1(n), v(n);
  std::vector<std::optional<std::string>> k2(n);
  for (int64_t i = 0; i < n; ++i) {
    if (rng() % 4) k1[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 5) - 1;
    if (rng() % 3) k2[static_cast<size_t>(i)] = std::string(1, static_cast<char>('p' + rng() % 3));
    if (rng() % 3) v[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 200) - 50;
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("k1", int64()), field("k2", utf8()), field("v", int64())};
  auto batch =
      Batch(schema, {Int64Array(pool_.get(), k1), StringArray(pool_.get(), k2, false), Int64Array(pool_.get(), v)});
  ASSERT_OK(catalog_->RegisterBatches("r", schema, Split(batch, 7)));
  for (int round = 0; round < 40; ++round) {
    const int64_t lo = static_cast<int64_t>(rng() % 260) - 60;
    const bool by_k2 = round % 2 == 0;
    const std::string sql =
        std::string("SELECT k1, ") + (by_k2 ? "k2" : "'-'") +
        ", count(*), count(v), sum(v), min(v), max(v), count(DISTINCT v % 7) FROM r WHERE v IS NULL "
        "OR v >= " +
        std::to_string(lo) + " GROUP BY k1" + (by_k2 ? ", k2" : "") + " ORDER BY 1, 2";
    struct Acc {
      int64_t rows = 0, count = 0, sum = 0, mn = 0, mx = 0;
      std::set<int64_t> distinct;
    };
    std::map<std::pair<std::optional<int64_t>, std::optional<std::string>>, Acc> ref;
    for (int64_t i = 0; i < n; ++i) {
      const auto& x = v[static_cast<size_t>(i)];
      if (x && *x < lo) continue;
      Acc& a = ref[{k1[static_cast<size_t>(i)], by_k2 ? k2[static_cast<size_t>(i)] : std::optional<std::string>("-")}];
      ++a.rows;
      if (!x) continue;
      a.mn = a.count ? std::min(a.mn, *x) : *x;
      a.mx = a.count ? std::max(a.mx, *x) : *x;
      ++a.count;
      a.sum += *x;
      a.distinct.insert(*x % 7);
    }
    // SQL order: NULLS LAST within ascending keys.
    std::vector<std::pair<std::pair<std::optional<int64_t>, std::optional<std::string>>, Acc>> sorted(ref.begin(),
                                                                                                      ref.end());
    auto less_opt = [](const auto& a, const auto& b) {
      if (a.has_value() != b.has_value()) return a.has_value();
      return a.has_value() && *a < *b;
    };
    std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& x, const auto& y) {
      if (x.first.first != y.first.first) return less_opt(x.first.first, y.first.first);
      return less_opt(x.first.second, y.first.second);
    });
    std::vector<std::string> want;
    for (const auto& [key, a] : sorted) {
      const std::string kk1 = key.first ? std::to_string(*key.first) : "null";
      const std::string kk2 = key.second ? *key.second : "null";
      const bool any = a.count > 0;
      want.push_back(kk1 + "|" + kk2 + "|" + std::to_string(a.rows) + "|" + std::to_string(a.count) + "|" +
                     (any ? std::to_string(a.sum) : "null") + "|" + (any ? std::to_string(a.mn) : "null") + "|" +
                     (any ? std::to_string(a.mx) : "null") + "|" + std::to_string(a.distinct.size()));
    }
    Expect(sql, want);
  }
}

// DISTINCT aggregates over one argument against a naive evaluator, with
// NULL keys and arguments, grouped and global, empty input, at 1, 2 and 4
// threads; 3,000 rows in 40 batches, so that every worker sees some.
TEST_F(AnalyticsTest, DistinctAggregatesOverOneArgumentMatchANaiveEvaluator) {
  std::mt19937_64 rng(7);
  const int64_t n = 3000;
  std::vector<std::optional<int64_t>> k(n), v(n);
  for (int64_t i = 0; i < n; ++i) {
    if (rng() % 5) k[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 6);
    if (rng() % 4) v[static_cast<size_t>(i)] = static_cast<int64_t>(rng() % 90) - 30;
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("k", int64()), field("v", int64())};
  ASSERT_OK(catalog_->RegisterBatches(
      "dv", schema, Split(Batch(schema, {Int64Array(pool_.get(), k), Int64Array(pool_.get(), v)}), 40)));
  // key (nullopt: the NULL group) -> the distinct non-NULL values of v % 11.
  std::map<std::optional<int64_t>, std::set<int64_t>> ref;
  std::set<int64_t> all;
  for (int64_t i = 0; i < n; ++i) {
    auto& d = ref[k[static_cast<size_t>(i)]];
    if (const auto& x = v[static_cast<size_t>(i)]) {
      d.insert(*x % 11);
      all.insert(*x % 11);
    }
  }
  auto row = [](const std::set<int64_t>& d) {
    if (d.empty()) return std::string("0|null|null|null");
    int64_t sum = 0;
    for (int64_t x : d) sum += x;
    return std::to_string(d.size()) + "|" + std::to_string(sum) + "|" + std::to_string(*d.begin()) + "|" +
           std::to_string(*d.rbegin());
  };
  std::vector<std::string> grouped;
  for (const auto& [key, d] : ref)
    if (key) grouped.push_back(std::to_string(*key) + "|" + row(d));
  if (ref.count(std::nullopt)) grouped.push_back("null|" + row(ref[std::nullopt]));  // NULLS LAST
  const std::string aggs = "count(DISTINCT v % 11), sum(DISTINCT v % 11), min(DISTINCT v % 11), max(DISTINCT v % 11)";
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(threads);
    ExecuteOptions o = Options();
    o.threads = threads;
    auto got = Rows("SELECT k, " + aggs + " FROM dv GROUP BY k ORDER BY k", o);
    ASSERT_OK(got);
    EXPECT_EQ(*got, grouped);
    got = Rows("SELECT " + aggs + " FROM dv", o);
    ASSERT_OK(got);
    EXPECT_EQ(*got, std::vector<std::string>{row(all)});
    got = Rows("SELECT " + aggs + " FROM dv WHERE k > 100", o);
    ASSERT_OK(got);
    EXPECT_EQ(*got, std::vector<std::string>{row({})});
    got = Rows("SELECT k, " + aggs + " FROM dv WHERE k > 100 GROUP BY k", o);
    ASSERT_OK(got);
    EXPECT_TRUE(got->empty());
  }
}

}  // namespace
}  // namespace quiver::sql
