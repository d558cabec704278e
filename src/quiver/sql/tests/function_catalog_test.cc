// Tests of quiver/sql/expression/function_catalog.h: the catalogue does not
// drift from the code (every name the registry and the binder accept is
// catalogued, every catalogued name is one they accept), every documented
// example gives its stated result through the engine, and SHOW FUNCTIONS
// answers from it.
#include "quiver/sql/expression/function_catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "quiver/sql/binder/binder_internal.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

// The names the binder reads itself before the registry (bind_expression.cc).
const std::set<std::string_view> kSpecialForms = {"cast",         "try_cast",          "extract", "date_part",
                                                  "current_date", "current_timestamp", "now"};
// GROUPING SETS' functions (bind_grouping_sets.cc).
const std::set<std::string_view> kGroupingFunctions = {"grouping", "grouping_id"};

bool Catalogued(std::string_view name, FunctionKind kind) {
  for (const FunctionDoc* d : FindFunctionDocs(name))
    if (d->kind == kind) return true;
  return false;
}

TEST(FunctionCatalog, EveryNameTheCodeAcceptsIsCatalogued) {
  for (const FunctionEntry& f : ScalarFunctions())
    EXPECT_TRUE(Catalogued(f.name, FunctionKind::kScalar)) << "scalar function " << f.name;
  for (std::string_view name : AggregateNames())
    EXPECT_TRUE(Catalogued(name, FunctionKind::kAggregate)) << "aggregate " << name;
  const std::set<std::string_view> window_aggregates = {"count", "sum", "avg", "min", "max"};
  for (std::string_view name : WindowFunctionNames()) {
    const FunctionKind kind = window_aggregates.count(name) ? FunctionKind::kAggregate : FunctionKind::kWindow;
    EXPECT_TRUE(Catalogued(name, kind)) << "window function " << name;
  }
  for (std::string_view name : kSpecialForms) EXPECT_TRUE(Catalogued(name, FunctionKind::kScalar)) << name;
}

TEST(FunctionCatalog, EveryCataloguedNameIsOneTheCodeAccepts) {
  const auto aggregates = AggregateNames();
  const auto windows = WindowFunctionNames();
  auto has = [](const std::vector<std::string_view>& v, std::string_view n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  for (const FunctionDoc& d : FunctionCatalog()) {
    std::vector<std::string_view> names = AliasesOf(d);
    names.push_back(d.name);
    for (std::string_view n : names) {
      switch (d.kind) {
        case FunctionKind::kScalar: EXPECT_TRUE(LookupFunction(n) != nullptr || kSpecialForms.count(n)) << n; break;
        case FunctionKind::kAggregate: EXPECT_TRUE(has(aggregates, n) || kGroupingFunctions.count(n)) << n; break;
        case FunctionKind::kWindow: EXPECT_TRUE(has(windows, n)) << n; break;
      }
    }
  }
}

TEST(FunctionCatalog, EveryEntryIsDocumentedAndSorted) {
  std::string last;
  for (const FunctionDoc& d : FunctionCatalog()) {
    EXPECT_GE(std::string(d.name), last);
    last = std::string(d.name);
    EXPECT_FALSE(d.signature.empty()) << d.name;
    EXPECT_FALSE(d.summary.empty()) << d.name;
    EXPECT_FALSE(d.nulls.empty()) << d.name;
    EXPECT_FALSE(d.examples[0].sql.empty()) << d.name;
  }
  const auto names = FunctionNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_TRUE(FindFunctionDocs("nope").empty());
  EXPECT_EQ(FindFunctionDocs("first_value").size(), 2u);  // the aggregate and the window function
}

class FunctionCatalogSqlTest : public SqlTest {};

// The documented examples as tests: each gives its stated result.
TEST_F(FunctionCatalogSqlTest, ExamplesGiveTheirResults) {
  int run = 0;
  for (const FunctionDoc& d : FunctionCatalog()) {
    for (const FunctionExample& ex : d.examples) {
      if (ex.sql.empty()) continue;
      auto out = Run(std::string(ex.sql));
      ASSERT_OK(out) << d.name << ": " << ex.sql;
      std::string got;
      for (const auto& row : Rows(*out, /*sorted=*/false)) got += (got.empty() ? "" : "\n") + row;
      EXPECT_EQ(got, ex.result) << d.name << ": " << ex.sql;
      ++run;
    }
  }
  EXPECT_GT(run, 100);
}

TEST_F(FunctionCatalogSqlTest, ShowFunctions) {
  EXPECT_EQ(Columns("SHOW FUNCTIONS"), (std::vector<std::string>{"function: utf8 not null"}));
  auto all = Run("SHOW FUNCTIONS");
  ASSERT_OK(all);
  std::vector<std::string> expected = FunctionNames();
  EXPECT_EQ(Rows(*all, /*sorted=*/false), expected);
  EXPECT_EQ(Rows(*Run("SHOW ALL FUNCTIONS"), false), expected);
  EXPECT_EQ(Rows(*Run("show system functions;"), false), expected);
  // Spark's patterns: '*' any run, '|' alternatives, any case.
  EXPECT_EQ(Rows(*Run("SHOW FUNCTIONS LIKE 'date_*|NOW'"), false),
            (std::vector<std::string>{"date_add", "date_format", "date_part", "date_sub", "date_trunc", "now"}));
  EXPECT_EQ(Rows(*Run("SHOW FUNCTIONS 'ln'"), false), (std::vector<std::string>{"ln"}));
  EXPECT_EQ(Rows(*Run("SHOW FUNCTIONS IN default LIKE 'row_*'"), false), (std::vector<std::string>{"row_number"}));
  EXPECT_TRUE(Rows(*Run("SHOW USER FUNCTIONS"), false).empty());
  EXPECT_EQ(Columns("SHOW USER FUNCTIONS"), (std::vector<std::string>{"function: utf8 not null"}));
  auto other = Run("SHOW FUNCTIONS FROM sales");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().sql_state(), "3F000");
}

}  // namespace
}  // namespace quiver::sql
