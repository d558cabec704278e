// Integer typing in the spark dialect (function_registry.h): Spark SQL's
// ANSI mode keeps INT op INT an INT and makes its overflow an error
// (ARITHMETIC_OVERFLOW, SQLSTATE 22003). Expected values and types are those
// Spark and Databricks document: the "ANSI compliance" page (SELECT
// 2147483647 + 1 and abs(-2147483648) are integer overflows), the ANSI_MODE
// page (unary minus, +, -, * and % raise errors on overflow), the sum and avg
// function pages (sum of an integral type is BIGINT and raises
// ARITHMETIC_OVERFLOW; avg of one is DOUBLE) and the literal rules (an
// integral literal is INT when it fits, else BIGINT); and the implicit
// casts of Spark's ANSI type coercion (Databricks' "SQL data type rules").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/expression/vector.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class SparkTypingTest : public SqlTest {
 protected:
  ExecuteOptions Dialect(bool spark) {
    ExecuteOptions o = Options();
    if (spark) o.dialect = SqlDialect::kSpark;
    return o;
  }
  V Rows(const std::string& sql, bool spark = true) {
    auto r = Run(sql, Dialect(spark));
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? SqlTest::Rows(*r, false) : V{};
  }
  // The result's column types, as SQL names ("INTEGER", "BIGINT", ...).
  V Types(const std::string& sql, bool spark = true) {
    V out;
    auto stream = engine_->Execute(sql, Dialect(spark));
    EXPECT_TRUE(stream.ok()) << sql << ": " << stream.status().ToString();
    if (!stream.ok()) return out;
    for (const auto& f : (*stream)->schema()->fields) out.push_back(SqlTypeName(*f->type));
    return out;
  }
  // The error `sql` gives: its SQLSTATE, and its message in *message.
  std::string State(const std::string& sql, std::string* message = nullptr) {
    auto r = Run(sql, Dialect(true));
    EXPECT_FALSE(r.ok()) << sql;
    if (r.ok()) return "";
    if (message) *message = r.status().message();
    return r.status().sql_state();
  }
};

// ANSI compliance page: SELECT 2147483647 + 1 and SELECT abs(-2147483648)
// are integer overflows; in Spark an integral literal is INT when it fits.
TEST_F(SparkTypingTest, IntegerArithmeticOverflowsAtIntegersRange) {
  std::string message;
  EXPECT_EQ(State("SELECT 2147483647 + 1", &message), "22003");
  EXPECT_NE(message.find("ARITHMETIC_OVERFLOW"), std::string::npos) << message;
  EXPECT_EQ(State("SELECT abs(-2147483648)"), "22003");
  EXPECT_EQ(State("SELECT CAST(2147483647 AS INT) + 1"), "22003");
  EXPECT_EQ(State("SELECT -2147483648 - 1"), "22003");
  EXPECT_EQ(State("SELECT 100000 * 100000"), "22003");
  // the column path (VALUES rows) as well as constant folding
  EXPECT_EQ(State("SELECT x + 1 FROM (VALUES (1), (2147483647)) v(x)"), "22003");
  EXPECT_EQ(State("SELECT x * x FROM (VALUES (2), (65536)) v(x)"), "22003");
  EXPECT_EQ(State("SELECT -x FROM (VALUES (1), (-2147483648)) v(x)"), "22003");
  // up to the limit it is an INT
  EXPECT_EQ(Rows("SELECT 2147483646 + 1, -2147483647 - 1, 46340 * 46340, abs(-2147483647), -(-5), 7 % 3, mod(-7, 3)"),
            (V{"2147483647|-2147483648|2147395600|2147483647|5|1|-1"}));
  EXPECT_EQ(Types("SELECT 1 + 1, 2 - 1, 3 * 2, -4, abs(-5), 7 % 3, mod(7, 3), 1"),
            (V{"INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER"}));
  EXPECT_EQ(Rows("SELECT x + 1, x * 2 FROM (VALUES (1), (NULL), (1073741823)) v(x)"),
            (V{"2|2", "null|null", "1073741824|2147483646"}));
  EXPECT_EQ(Types("SELECT x + 1 FROM (VALUES (1)) v(x)"), (V{"INTEGER"}));
}

// With a BIGINT (a literal past INT's range, or a cast) the result is a
// BIGINT and 2147483647 + 1 fits.
TEST_F(SparkTypingTest, BigintOperandMakesTheResultBigint) {
  EXPECT_EQ(Rows("SELECT CAST(2147483647 AS BIGINT) + 1, 2147483648 - 1, 2147483647 * CAST(2 AS BIGINT)"),
            (V{"2147483648|2147483647|4294967294"}));
  EXPECT_EQ(Types("SELECT CAST(1 AS BIGINT) + 1, 1 - 2147483648, 2147483648"), (V{"BIGINT", "BIGINT", "BIGINT"}));
  EXPECT_EQ(State("SELECT 9223372036854775807 + 1"), "22003");
  // `/` of integers stays DOUBLE and `div` BIGINT
  EXPECT_EQ(Types("SELECT 7 / 2, 7 div 2"), (V{"DOUBLE", "BIGINT"}));
}

// sum of an integral type is BIGINT (a BIGINT sum past its range is
// ARITHMETIC_OVERFLOW), avg DOUBLE; min / max keep INT.
TEST_F(SparkTypingTest, AggregatesOfIntegers) {
  EXPECT_EQ(Types("SELECT sum(x), avg(x), min(x), max(x), count(x) FROM (VALUES (1), (2)) v(x)"),
            (V{"BIGINT", "DOUBLE", "INTEGER", "INTEGER", "BIGINT"}));
  EXPECT_EQ(Rows("SELECT sum(x), avg(x) FROM (VALUES (2147483647), (2147483647)) v(x)"), (V{"4294967294|2147483647"}));
  EXPECT_EQ(Types("SELECT sum(x) FROM (VALUES (CAST(1 AS BIGINT))) v(x)"), (V{"BIGINT"}));
  EXPECT_EQ(State("SELECT sum(x) FROM (VALUES (9223372036854775807), (1)) v(x)"), "22003");
  // postgres (DuckDB's hugeint / PostgreSQL's numeric): exact past BIGINT
  EXPECT_EQ(Rows("SELECT sum(x) FROM (VALUES (9223372036854775807), (1)) v(x)", false), (V{"9223372036854775808"}));
}

// CASE / COALESCE over INTs stay INT; with a BIGINT they are BIGINT.
TEST_F(SparkTypingTest, ConditionalsOverIntegers) {
  EXPECT_EQ(Types("SELECT CASE WHEN true THEN 1 ELSE 2 END, coalesce(NULL, 1), "
                  "coalesce(1, CAST(2 AS BIGINT)), greatest(1, 2)"),
            (V{"INTEGER", "INTEGER", "BIGINT", "INTEGER"}));
}

// Spark's ANSI type coercion of a STRING beside another type (Databricks'
// "SQL data type rules": the least common type of INT and STRING is BIGINT,
// of DECIMAL and STRING DOUBLE; a STRING promotes to DATE and TIMESTAMP; the
// least common type gives comparison operands, CASE / COALESCE results and
// UNION columns; text that does not convert is an error, 22018).
TEST_F(SparkTypingTest, StringBesideANumberTakesTheLeastCommonType) {
  EXPECT_EQ(Rows("SELECT coalesce(5, '6'), coalesce(NULL, '6', 5), coalesce(CAST(1 AS DECIMAL), '6')"), (V{"5|6|1"}));
  EXPECT_EQ(Types("SELECT coalesce(5, '6'), coalesce(CAST(1 AS DECIMAL), '6'), coalesce(1, CAST(1 AS DOUBLE)), "
                  "coalesce(1, 2.5), coalesce(1, CAST(2 AS BIGINT))"),
            (V{"BIGINT", "DOUBLE", "DOUBLE", "DECIMAL(11,1)", "BIGINT"}));
  EXPECT_FALSE(Run("SELECT coalesce(1, DATE '2020-01-01')", Dialect(true)).ok());
  // comparisons and IN: the string is cast, literal or column
  EXPECT_EQ(Rows("SELECT 1 = '1', '2' > 1, 1 IN ('1', 2), 3 IN ('1', 2), CAST(1.5 AS DOUBLE) = '1.5'"),
            (V{"true|true|true|false|true"}));
  EXPECT_EQ(Rows("SELECT x = 1, x < 10 FROM (VALUES ('1'), (' 2 '), ('10')) v(x)"),
            (V{"true|true", "false|true", "false|false"}));
  EXPECT_EQ(State("SELECT 1 = 'a'"), "22018");
  EXPECT_EQ(State("SELECT x = 1 FROM (VALUES ('1'), ('a')) v(x)"), "22018");
  EXPECT_EQ(State("SELECT x IN (1, 2) FROM (VALUES ('1'), ('1.5')) v(x)"), "22018");
  // arithmetic: INT and STRING meet at BIGINT
  EXPECT_EQ(Rows("SELECT 5 + '6', x * 2 FROM (VALUES ('21')) v(x)"), (V{"11|42"}));
  EXPECT_EQ(Types("SELECT 5 + '6'"), (V{"BIGINT"}));
  // ANSI compliance page: substring's INT arguments take a string
  EXPECT_EQ(Rows("SELECT substring('hello', '1', 2), substr('hello', ' 2 ')"), (V{"he|ello"}));
  EXPECT_EQ(State("SELECT substring('hello', 'x', 2)"), "22018");
}

TEST_F(SparkTypingTest, StringBesideADateOrTimestampIsCastToIt) {
  // Spark's string-to-date rules: the time after the date is ignored
  EXPECT_EQ(Rows("SELECT DATE '2015-03-18' = '2015-03-18 12:03:17', DATE '2015-03-18' > '2015-3-1', "
                 "TIMESTAMP '2015-03-18 12:03:17' = '2015-03-18T12:03:17Z', '2015' < DATE '2015-01-02'"),
            (V{"true|true|true|true"}));
  EXPECT_EQ(Rows("SELECT d FROM (VALUES (DATE '2015-03-18'), (DATE '2016-01-01')) v(d) WHERE d IN ('2016-01-01', "
                 "'2017-01-01')"),
            (V{"2016-01-01"}));
  EXPECT_EQ(State("SELECT DATE '2015-03-18' = '2015/03/18'"), "22018");
  EXPECT_EQ(Types("SELECT coalesce(DATE '2015-03-18', '2016-01-01'), CASE WHEN true THEN '2015-01-01' ELSE "
                  "TIMESTAMP '2015-03-18 00:00:00' END"),
            (V{"DATE", "TIMESTAMP"}));
}

TEST_F(SparkTypingTest, UnionAndValuesColumnsTakeTheLeastCommonType) {
  EXPECT_EQ(Rows("SELECT 1 AS x UNION ALL SELECT '2' ORDER BY x"), (V{"1", "2"}));
  EXPECT_EQ(Types("SELECT 1 AS x UNION ALL SELECT '2'"), (V{"BIGINT"}));
  EXPECT_EQ(Types("SELECT * FROM (VALUES (1, 1), (2.5, CAST(2 AS DOUBLE))) v(a, b)"), (V{"DECIMAL(11,1)", "DOUBLE"}));
  EXPECT_EQ(Types("SELECT 1 UNION ALL SELECT CAST(2 AS BIGINT)"), (V{"BIGINT"}));
  EXPECT_EQ(State("SELECT 1 AS x UNION ALL SELECT 'a'"), "22018");
  // two strings stay strings
  EXPECT_EQ(Types("SELECT 'a' UNION ALL SELECT 'b'"), (V{"VARCHAR"}));
}

}  // namespace
}  // namespace quiver::sql
