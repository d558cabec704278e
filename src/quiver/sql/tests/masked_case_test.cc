// `CASE WHEN c THEN x [ELSE NULL] END` (sql/expression/evaluate.cc): x's
// values kept, NULL wherever c is false or NULL (or x is NULL), computed
// without gathering branches (TPC-DS Q59's seven CASE sums). Answers are
// checked against values computed here and against the general CASE.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class MaskedCaseTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    MemoryPool* p = pool_.get();
    // t(day utf8, price decimal, n int64, b bool): 100 rows in 7-row
    // slices (arrays with offsets); day NULL every 11th row, price NULL
    // every 13th, b NULL every 5th.
    static const char* kDays[] = {"Sunday", "Monday", "Tuesday"};
    std::vector<std::optional<std::string>> day;
    std::vector<std::optional<double>> price, b;
    std::vector<std::optional<int64_t>> n;
    for (int64_t r = 0; r < kRows; ++r) {
      day.push_back(r % 11 == 0 ? std::nullopt : std::optional<std::string>(kDays[r % 3]));
      price.push_back(r % 13 == 0 ? std::nullopt : std::optional<double>(static_cast<double>(r) + 0.25));
      n.emplace_back(r);
      b.push_back(r % 5 == 0 ? std::nullopt : std::optional<double>(static_cast<double>(r % 2)));
    }
    auto schema = std::make_shared<Schema>();
    auto prices = Decimals(p, price);
    schema->fields = {field("day", utf8(), true), field("price", prices->type, true), field("n", int64(), true),
                      field("b", boolean(), true)};
    auto batch = Batch(schema, {StringArray(p, day, false), prices, Int64Array(p, n), Bools(p, b)});
    ASSERT_OK(catalog_->RegisterBatches("t", schema, Split(batch, 7)));
  }
  static constexpr int64_t kRows = 100;
};

TEST_F(MaskedCaseTest, ValuesWhereTheConditionHoldsElseNull) {
  // Expected from the definitions: day 'Monday' is r % 3 == 1 and r % 11 != 0.
  int64_t count = 0, sum_n = 0;
  double sum_price = 0;
  int64_t price_count = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    if (r % 3 != 1 || r % 11 == 0) continue;
    ++count;
    sum_n += r;
    if (r % 13 != 0) {
      ++price_count;
      sum_price += static_cast<double>(r) + 0.25;
    }
  }
  auto rows =
      Run("SELECT count(CASE WHEN day = 'Monday' THEN n ELSE NULL END), sum(CASE WHEN day = 'Monday' THEN n END), "
          "count(CASE WHEN day = 'Monday' THEN price ELSE NULL END), sum(CASE WHEN day = 'Monday' THEN price ELSE "
          "NULL END) FROM t");
  ASSERT_OK(rows);
  char want[128];
  std::snprintf(want, sizeof want, "%lld|%lld|%lld|%.2f", static_cast<long long>(count), static_cast<long long>(sum_n),
                static_cast<long long>(price_count), sum_price);
  EXPECT_EQ(Rows(*rows), V({want}));
  // Row by row, against the general CASE (two WHENs are not the masked shape).
  auto masked = Run("SELECT n, CASE WHEN b THEN price ELSE NULL END, CASE WHEN day = 'Sunday' THEN day END FROM t");
  auto general =
      Run("SELECT n, CASE WHEN b THEN price WHEN n < 0 THEN price END, CASE WHEN day = 'Sunday' THEN day WHEN n < 0 "
          "THEN 'x' END FROM t");
  ASSERT_OK(masked);
  ASSERT_OK(general);
  EXPECT_EQ(Rows(*masked), Rows(*general));
  // Spot checks: b NULL (r = 5), b false (r = 2), b true with price NULL (r = 39), both set (r = 3).
  auto some = Run(
      "SELECT n, CASE WHEN b THEN price ELSE NULL END, CASE WHEN day = 'Sunday' THEN day END FROM t WHERE n IN (2, 3, "
      "5, 6, 33, 39) ORDER BY n");
  ASSERT_OK(some);
  EXPECT_EQ(Rows(*some, false),
            V({"2|null|null", "3|3.25|Sunday", "5|null|null", "6|null|Sunday", "33|33.25|null", "39|null|Sunday"}));
}

}  // namespace
}  // namespace quiver::sql
