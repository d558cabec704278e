// A WHERE condition straight over an inner equi-join runs as the join's
// residual (planner/physical_planner.cc, join/hash_join.h
// HashJoinOptions::residual): checked on the matched pairs before their
// other columns are gathered. Its answers against the same condition
// evaluated above a LIMIT (which keeps it out of the join), over NULL-heavy
// tables with duplicate keys, fixed- and variable-width columns, at one and
// two threads, in five-row output batches.
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql::testing {
namespace {

class JoinResidualTest : public SqlTest {
 protected:
  std::vector<std::string> Query(const std::string& sql, int threads) {
    ExecuteOptions o = Options();
    o.threads = threads;
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : std::vector<std::string>{};
  }
};

TEST_F(JoinResidualTest, AnswersAsTheFilterAboveTheJoin) {
  // x: the join's pairs, kept from the filter by the LIMIT.
  const std::string x =
      "(SELECT t1.id, t1.s, t1.f, t1.d, t1.b, t2.k AS k2, t2.s AS s2, t2.v FROM t1 JOIN t2 ON t1.k = t2.k "
      "LIMIT 100000000) x";
  const std::vector<std::pair<std::string, std::string>> cases = {
      // columns of both sides, fixed width
      {"SELECT t1.id, t2.v, t1.d FROM t1 JOIN t2 ON t1.k = t2.k WHERE t1.id < t2.v",
       "SELECT id, v, d FROM " + x + " WHERE id < v"},
      // strings of both sides (variable-width output), OR with NULLs
      {"SELECT t1.s, t2.s, t1.f FROM t1 JOIN t2 ON t1.k = t2.k WHERE t1.s < t2.s OR t1.f > 0.5",
       "SELECT s, s2, f FROM " + x + " WHERE s < s2 OR f > 0.5"},
      // several conditions, a function
      {"SELECT t1.id, t2.k, t2.s FROM t1 JOIN t2 ON t1.k = t2.k WHERE t1.id + t2.v > 20 AND length(t2.s) >= 2 AND "
       "t1.b",
       "SELECT id, k2, s2 FROM " + x + " WHERE id + v > 20 AND length(s2) >= 2 AND b"},
      // no pair passes
      {"SELECT t1.id, t2.v FROM t1 JOIN t2 ON t1.k = t2.k WHERE t1.id > t2.v + 1000000",
       "SELECT id, v FROM " + x + " WHERE id > v + 1000000"},
  };
  for (const auto& [folded, above] : cases) {
    const auto want = Query(above, 1);
    EXPECT_EQ(Query(folded, 1), want) << folded;
    EXPECT_EQ(Query(folded, 2), want) << folded;
  }
  EXPECT_GT(Query(cases[0].second, 1).size(), 5u);
  EXPECT_TRUE(Query(cases[3].second, 1).empty());
}

}  // namespace
}  // namespace quiver::sql::testing
