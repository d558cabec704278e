// Tests of quiver/sql/statement_complexity.h and the engine's bounds on
// deep statements (issue 35 #1): the inputs that crashed the server get
// 54001 quickly, statements under the limits still answer, the binder
// bounds its own recursion, planning has a deadline (57014).
#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

#include "quiver/sql/statement_complexity.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

// CPU seconds of this process (every thread): the bounds below are on the
// work a statement costs, which other processes on a loaded host (ctest -j,
// sanitizer builds) do not change, where wall time would.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string Chain(const std::string& head, const std::string& op, int terms) {
  std::string s = head;
  for (int i = 1; i < terms; ++i) s += op + "1";
  return s;
}

std::string Repeat(const std::string& s, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += s;
  return out;
}

std::string Case(int whens) {
  std::string s = "CASE";
  for (int i = 0; i < whens; ++i) s += " WHEN k = " + std::to_string(i) + " THEN " + std::to_string(i * 2);
  return s + " ELSE -1 END";
}

std::string Nested(int depth, const std::string& inner) {
  return std::string(static_cast<size_t>(depth), '(') + inner + std::string(static_cast<size_t>(depth), ')');
}

TEST(StatementComplexity, CountsNestingChainsAndCaseBranches) {
  EXPECT_OK(CheckStatementComplexity("SELECT a + b * c FROM t WHERE (x = 1 AND y = 2) OR z IN (1, 2)"));
  // Depth: one level for the statement, one per operator of the term.
  ComplexityLimits l;
  l.max_expression_depth = 4;
  EXPECT_OK(CheckStatementComplexity("SELECT a+1+1+1 FROM t", l));
  Status st = CheckStatementComplexity("SELECT a+1+1+1+1 FROM t", l);
  EXPECT_EQ(st.sql_state(), "54001") << st.ToString();
  EXPECT_NE(st.message().find("depth 5 (line 1, column 15), past the limit of 4 (max_expression_depth)"),
            std::string::npos)
      << st.ToString();
  // Commas, AND, OR, WHEN and clause keywords end a term.
  EXPECT_OK(CheckStatementComplexity("SELECT a+1+1, b+1+1 FROM t WHERE c+1+1 = 2 AND d+1+1 = 3", l));
  // Parentheses add a level each, plus the operators of the outer term.
  EXPECT_EQ(CheckStatementComplexity("SELECT 1+(1+(1+1))", l).sql_state(), "54001");
  l = ComplexityLimits();
  l.max_nesting_depth = 3;
  EXPECT_OK(CheckStatementComplexity("SELECT (((1)))", l));
  st = CheckStatementComplexity("SELECT f(CASE WHEN ((1)) THEN 1 END)", l);
  EXPECT_NE(st.message().find("parentheses, brackets and CASE nest 4 (line 1, column 21), past the limit of 3 "
                              "(max_nesting_depth)"),
            std::string::npos)
      << st.ToString();
  l = ComplexityLimits();
  l.max_case_branches = 2;
  EXPECT_OK(CheckStatementComplexity("SELECT CASE WHEN a THEN 1 WHEN b THEN 2 END, CASE WHEN c THEN 3 END", l));
  st = CheckStatementComplexity("SELECT CASE WHEN a THEN 1 WHEN b THEN 2 WHEN c THEN 3 END", l);
  EXPECT_NE(st.message().find("a CASE has WHEN branches 3"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("(max_case_branches)"), std::string::npos) << st.ToString();
}

TEST(StatementComplexity, QuotedTextAndCommentsDoNotCount) {
  const std::string parens(20000, '(');
  const std::string pluses = Chain("1", "+", 20000);
  for (const std::string& s :
       {"SELECT '" + parens + pluses + "'", "SELECT E'\\'" + parens + "'", "SELECT \"" + parens + "\" FROM t",
        "SELECT `" + parens + pluses + "` FROM t", "SELECT 1 -- " + parens + "\n",
        "SELECT /* /* */ " + parens + " */ 1", "SELECT $x$" + parens + pluses + "$x$", "SELECT $$" + pluses + "$$"}) {
    EXPECT_OK(CheckStatementComplexity(s)) << s.substr(0, 40);
  }
  // The same text outside quotes does count.
  EXPECT_EQ(CheckStatementComplexity("SELECT " + parens).sql_state(), "54001");
  EXPECT_EQ(CheckStatementComplexity("SELECT " + pluses).sql_state(), "54001");
  // Scientific notation is a number, not an operator.
  ComplexityLimits l;
  l.max_expression_depth = 2;
  EXPECT_OK(CheckStatementComplexity("SELECT 1e-5, 2.5E+3, x+1", l));
}

// The inputs that crashed `quiver serve` (issue 35 #1) fail with 54001,
// each within a second.
TEST_F(SqlTest, DeepStatementsGetStatementTooComplexQuickly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"SELECT " + Chain("k", "+", 50000) + " FROM t1", "max_expression_depth"},
      {"SELECT " + Chain("k", "*", 20000) + " FROM t1", "max_expression_depth"},
      {"SELECT " + Chain("k", "-", 4000) + " FROM t1", "max_expression_depth"},
      {"SELECT " + Chain("s", "||", 6000) + " FROM t1", "max_expression_depth"},
      {"SELECT " + Case(30000) + " FROM t1", "max_case_branches"},
      {"SELECT " + Nested(10000, "k") + " FROM t1", "max_nesting_depth"},
      {"SELECT k FROM t1 WHERE " + Nested(10000, "k = 1"), "max_nesting_depth"},
      {"SELECT " + Repeat("- ", 20000) + "k FROM t1", "max_expression_depth"},
  };
  for (const auto& [sql, limit] : cases) {
    const double start = ProcessCpuSeconds();
    auto r = engine_->Execute(sql, Options());
    const double s = ProcessCpuSeconds() - start;
    ASSERT_FALSE(r.ok()) << sql.substr(0, 60);
    EXPECT_EQ(r.status().sql_state(), "54001") << r.status().ToString();
    EXPECT_NE(r.status().message().find("statement too complex"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find(limit), std::string::npos) << r.status().ToString();
    EXPECT_LT(s, 1.0) << sql.substr(0, 60);
  }
}

// Just under the limits, statements answer, and bind in linear time.
TEST_F(SqlTest, StatementsJustUnderTheLimitsAnswer) {
  // 998 operators in the term: depth 999 with the statement's level.
  auto r = Run("SELECT id, " + Chain("id", "+", 999) + " AS v FROM t1 WHERE id < 3 ORDER BY id");
  ASSERT_OK(r.status());
  EXPECT_EQ(Rows(*r), (std::vector<std::string>{"0|998", "1|999", "2|1000"}));
  r = Run("SELECT " + Chain("1000", "-", 500) + " AS v");  // left-associative: 1000 - 499
  ASSERT_OK(r.status());
  EXPECT_EQ(Rows(*r), (std::vector<std::string>{"501"}));
  r = Run("SELECT id, " + Case(4000) + " AS c FROM t1 WHERE id < 2 ORDER BY id");
  ASSERT_OK(r.status());
  EXPECT_EQ(Rows(*r).size(), 2u);
  r = Run("SELECT " + Nested(250, "id + 1") + " AS v FROM t1 WHERE id = 5");
  ASSERT_OK(r.status());
  EXPECT_EQ(Rows(*r), (std::vector<std::string>{"6"}));
  // Many long terms: binding is linear in the text (20 x 900 operators).
  std::string many = "SELECT ";
  for (int c = 0; c < 20; ++c) many += (c ? ", " : "") + Chain("id", "+", 900);
  const double start = ProcessCpuSeconds();
  r = Run(many + " FROM t1 WHERE id = 0");
  ASSERT_OK(r.status());
  EXPECT_LT(ProcessCpuSeconds() - start, 5.0);
  EXPECT_EQ(Rows(*r), (std::vector<std::string>{std::string("899") + [] {
              std::string s;
              for (int i = 1; i < 20; ++i) s += "|899";
              return s;
            }()}));
}

// With the pre-scan off, the binder's own depth bound answers (54001) and
// nothing overflows: parsing and binding run on a 64 MiB stack.
TEST_F(SqlTest, BinderBoundsItsRecursionWhenThePreScanIsOff) {
  ExecuteOptions o = Options();
  o.complexity.max_expression_depth = 0;
  o.complexity.max_nesting_depth = 0;
  o.complexity.max_case_branches = 0;
  auto r = engine_->Execute("SELECT " + Chain("k", "+", 6000) + " FROM t1", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().sql_state(), "54001") << r.status().ToString();
  EXPECT_NE(r.status().message().find("deeper than 4000 levels"), std::string::npos) << r.status().ToString();
}

TEST_F(SqlTest, PlanningHasADeadline) {
  ExecuteOptions o = Options();
  o.planning_timeout_ms = 1;
  std::string many = "SELECT ";
  for (int c = 0; c < 40; ++c) many += (c ? ", " : "") + Chain("id", "+", 900);
  auto r = engine_->Execute(many + " FROM t1", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().ToString();
  EXPECT_EQ(r.status().sql_state(), "57014") << r.status().ToString();
  EXPECT_NE(r.status().message().find("limit of 1 ms (planning_timeout_ms)"), std::string::npos)
      << r.status().ToString();
  o.planning_timeout_ms = 60000;
  EXPECT_OK(engine_->Execute("SELECT id + 1 FROM t1", o).status());
}

}  // namespace
}  // namespace quiver::sql
