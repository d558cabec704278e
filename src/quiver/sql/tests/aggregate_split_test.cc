// Aggregates in two phases (binder/bind_aggregate_split.cc): the plans
// (EXPLAIN) and their answers over NULL-heavy data against the same
// aggregates written without ROLLUP / DISTINCT. tests/slt/
// issue37_aggregate_split.slt has values worked out by DuckDB.
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql::testing {
namespace {

class AggregateSplitTest : public SqlTest {
 protected:
  std::vector<std::string> Query(const std::string& sql, int threads = 1) {
    ExecuteOptions o = Options();
    o.threads = threads;
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : std::vector<std::string>{};
  }
  // The EXPLAIN lines of `sql`, each trimmed of its indentation and of what
  // follows the operator's name.
  std::vector<std::string> Operators(const std::string& sql) {
    auto r = Run("EXPLAIN " + sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    std::vector<std::string> ops;
    if (!r.ok()) return ops;
    for (std::string line : Rows(*r, /*sorted=*/false)) {
      line.erase(0, line.find_first_not_of(' '));
      ops.push_back(line.substr(0, line.find(' ')));
    }
    return ops;
  }
};

TEST_F(AggregateSplitTest, RollupAggregatesTheFinestSetBeforeTheExpand) {
  EXPECT_EQ(Operators("SELECT k, s, sum(d), count(*), avg(f) FROM t1 GROUP BY ROLLUP (k, s)"),
            (std::vector<std::string>{"Project", "Project", "Aggregate", "Expand", "Aggregate", "Scan"}));
  // Variance does not decompose (nor DISTINCT in a ROLLUP): one aggregate over the expand.
  EXPECT_EQ(Operators("SELECT k, stddev(f) FROM t1 GROUP BY ROLLUP (k, s)"),
            (std::vector<std::string>{"Project", "Aggregate", "Expand", "Scan"}));
  EXPECT_EQ(Operators("SELECT k, count(DISTINCT s), sum(d) FROM t1 GROUP BY ROLLUP (k, s)"),
            (std::vector<std::string>{"Project", "Aggregate", "Expand", "Scan"}));
}

TEST_F(AggregateSplitTest, RollupEqualsItsSetsOneByOne) {
  const std::string aggs =
      "count(*), count(f), sum(d), round(avg(d), 9), min(s), max(dt), sum(k), bool_or(b), count_if(b), max(f)";
  const auto rollup = Query("SELECT k, s, " + aggs + " FROM t1 GROUP BY ROLLUP (k, s)");
  const auto sets = Query("SELECT k, s, " + aggs + " FROM t1 GROUP BY k, s UNION ALL SELECT k, NULL, " + aggs +
                          " FROM t1 GROUP BY k UNION ALL SELECT NULL, NULL, " + aggs + " FROM t1");
  ASSERT_GT(rollup.size(), 10u);
  EXPECT_EQ(rollup, sets);
  EXPECT_EQ(Query("SELECT k, s, " + aggs + " FROM t1 GROUP BY ROLLUP (k, s)", 2), sets);
  // No input rows: the grand total alone (count 0, sum NULL), as
  // PostgreSQL and DuckDB answer, at 1 and 2 threads.
  EXPECT_EQ(Query("SELECT k, count(*), sum(d) FROM t1 WHERE id < 0 GROUP BY ROLLUP (k)"),
            (std::vector<std::string>{"null|0|null"}));
  EXPECT_EQ(Query("SELECT k, count(*), sum(d) FROM t1 WHERE id < 0 GROUP BY ROLLUP (k)", 2),
            (std::vector<std::string>{"null|0|null"}));
  // One-phase (variance), and a GROUP BY without the empty set: no row.
  EXPECT_EQ(Query("SELECT k, count(*), var_pop(f) FROM t1 WHERE id < 0 GROUP BY CUBE (k, s)"),
            (std::vector<std::string>{"null|0|null"}));
  EXPECT_EQ(Query("SELECT k, count(*) FROM t1 WHERE id < 0 GROUP BY k, ROLLUP (s)"), std::vector<std::string>{});
}

TEST_F(AggregateSplitTest, DistinctBesideOtherAggregatesGroupsByItsArgumentFirst) {
  EXPECT_EQ(Operators("SELECT k, count(DISTINCT s), count(s), sum(d) FROM t1 GROUP BY k"),
            (std::vector<std::string>{"Project", "Project", "Aggregate", "Aggregate", "Scan"}));
  // DISTINCT over two arguments: one aggregate with its distinct sets.
  EXPECT_EQ(Operators("SELECT k, count(DISTINCT s), count(DISTINCT d) FROM t1 GROUP BY k"),
            (std::vector<std::string>{"Project", "Aggregate", "Scan"}));
  const auto split =
      Query("SELECT k, count(DISTINCT s), max(DISTINCT s), count(s), count(*), sum(d) FROM t1 GROUP BY k");
  const auto joined = Query(
      "SELECT a.k, coalesce(b.n, 0), b.m, a.c, a.r, a.sd FROM (SELECT k, count(s) c, count(*) r, sum(d) sd FROM t1 "
      "GROUP BY k) a LEFT JOIN (SELECT k, count(s) n, max(s) m FROM (SELECT DISTINCT k, s FROM t1) x GROUP BY k) b "
      "ON a.k IS NOT DISTINCT FROM b.k");
  ASSERT_GT(split.size(), 3u);
  EXPECT_EQ(split, joined);
  EXPECT_EQ(Query("SELECT k, count(DISTINCT s), max(DISTINCT s), count(s), count(*), sum(d) FROM t1 GROUP BY k", 2),
            joined);
  // Without GROUP BY, also over no rows: counts 0, sums NULL.
  EXPECT_EQ(Query("SELECT count(DISTINCT s), count(*), sum(d), avg(f) FROM t1 WHERE id < 0"),
            (std::vector<std::string>{"0|0|null|null"}));
}

}  // namespace
}  // namespace quiver::sql::testing
