// Tests of the function library of issue 37: values from the functions'
// documented examples (Spark SQL / PostgreSQL), NULL arguments and errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

class FunctionsTest : public SqlTest {
 protected:
  /// The one value of a one-row, one-column `sql`, or its error text.
  std::string V(const std::string& sql) {
    auto r = Run(sql);
    if (!r.ok()) return "error: " + r.status().ToString();
    auto rows = Rows(*r);
    return rows.size() == 1 ? rows[0] : "rows: " + std::to_string(rows.size());
  }
};

TEST_F(FunctionsTest, MathFunctions) {
  EXPECT_EQ(V("SELECT floor(-0.1)"), "-1");
  EXPECT_EQ(V("SELECT floor(5)"), "5");
  EXPECT_EQ(V("SELECT ceil(-0.1)"), "-0");
  EXPECT_EQ(V("SELECT ceiling(5.2)"), "6");
  EXPECT_EQ(V("SELECT sqrt(4)"), "2");
  EXPECT_EQ(V("SELECT power(2, 3)"), "8");
  EXPECT_EQ(V("SELECT pow(2.0, -1)"), "0.5");
  EXPECT_EQ(V("SELECT exp(0)"), "1");
  EXPECT_EQ(V("SELECT ln(1)"), "0");
  EXPECT_EQ(V("SELECT mod(2, 1.8)"), "0.2");
  EXPECT_EQ(V("SELECT mod(7, 3)"), "1");
  // NULL in, NULL out
  EXPECT_EQ(V("SELECT sqrt(NULL)"), "null");
  EXPECT_EQ(V("SELECT power(2, NULL)"), "null");
  EXPECT_EQ(V("SELECT floor(NULL)"), "null");
  // errors
  EXPECT_NE(V("SELECT sqrt(-1)").find("square root of a negative number"), std::string::npos);
  EXPECT_NE(V("SELECT ln(0)").find("logarithm of zero"), std::string::npos);
  EXPECT_NE(V("SELECT sqrt('a')").find("cannot take"), std::string::npos);
}

TEST_F(FunctionsTest, ConditionalFunctions) {
  EXPECT_EQ(V("SELECT ifnull(NULL, 2)"), "2");
  EXPECT_EQ(V("SELECT nvl(NULL, 'b')"), "b");
  EXPECT_EQ(V("SELECT nvl(1, 2)"), "1");
  EXPECT_EQ(V("SELECT ifnull(NULL, NULL)"), "null");
}

}  // namespace
}  // namespace quiver::sql
