// CAST in the spark dialect (expression/spark_cast.h): Spark SQL's ANSI-mode
// rules, with the expected values of Spark's own documentation and tests
// (docs/sql-ref-ansi-compliance.md, sql-tests ansi/cast.sql.out,
// DateTimeUtils.stringToDate / stringToTimestamp, Cast.scala); the postgres
// dialect's answers unchanged beside them; try_cast in both.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/spark_cast.h"
#include "quiver/sql/expression/temporal.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

int32_t Days(int64_t y, unsigned m, unsigned d) { return static_cast<int32_t>(DaysFromCivil(y, m, d)); }
int64_t Micros(int64_t y, unsigned m, unsigned d, int64_t h, int64_t mi, int64_t s, int64_t us = 0) {
  return static_cast<int64_t>(DaysFromCivil(y, m, d)) * 86400000000LL + ((h * 60 + mi) * 60 + s) * 1000000 + us;
}

TEST(SparkCastRules, StringToDateFollowsStringToDate) {
  int32_t d = 0;
  for (const char* s : {"2015-03-18", "2015-03-18 ", " 2015-03-18", " 2015-03-18 ", "2015-03-18 123142",
                        "2015-03-18T123123", "2015-03-18T", "2015-3-18", "\t2015-03-18 12:03:17\n"}) {
    ASSERT_TRUE(ParseSparkDate(s, &d)) << s;
    EXPECT_EQ(d, Days(2015, 3, 18)) << s;
  }
  ASSERT_TRUE(ParseSparkDate("2015", &d));
  EXPECT_EQ(d, Days(2015, 1, 1));
  ASSERT_TRUE(ParseSparkDate("2015-03", &d));
  EXPECT_EQ(d, Days(2015, 3, 1));
  ASSERT_TRUE(ParseSparkDate("-0044-03-15", &d));
  EXPECT_EQ(d, Days(-44, 3, 15));
  for (const char* s : {"2015-03-18X", "2015/03/18", "2015.03.18", "20150318", "2015-031-8", "015-03-18", "2015 x",
                        "2015-03 x", "2026-02-30", "2015-13-01", "", "  ", "a"})
    EXPECT_FALSE(ParseSparkDate(s, &d)) << s;
}

TEST(SparkCastRules, StringToTimestampFollowsStringToTimestamp) {
  int64_t us = 0;
  using R = SparkTimestampText;
  auto ok = [&](const char* s, int64_t want) {
    EXPECT_EQ(ParseSparkTimestamp(s, &us), R::kOk) << s;
    EXPECT_EQ(us, want) << s;
  };
  ok("2022-01-01 00:00:00", Micros(2022, 1, 1, 0, 0, 0));
  ok("2015", Micros(2015, 1, 1, 0, 0, 0));
  ok("2015-03", Micros(2015, 3, 1, 0, 0, 0));
  ok("2015-03-18", Micros(2015, 3, 18, 0, 0, 0));
  ok("2015-03-18 12:03", Micros(2015, 3, 18, 12, 3, 0));
  ok("2015-03-18T12:03:17", Micros(2015, 3, 18, 12, 3, 17));
  ok(" 2015-03-18 1:2:3 ", Micros(2015, 3, 18, 1, 2, 3));
  ok("2015-03-18 12:03:17.123", Micros(2015, 3, 18, 12, 3, 17, 123000));
  ok("2015-03-18 12:03:17.123456789", Micros(2015, 3, 18, 12, 3, 17, 123456));  // digits past 6 dropped
  ok("2015-03-18T12:03:17Z", Micros(2015, 3, 18, 12, 3, 17));
  ok("2015-03-18T12:03:17.123Z", Micros(2015, 3, 18, 12, 3, 17, 123000));
  ok("2015-03-18 12:03:17+07:30", Micros(2015, 3, 18, 4, 33, 17));
  ok("2015-03-18T12:03:17-1:0", Micros(2015, 3, 18, 13, 3, 17));  // Spark's "-h:m" repair
  ok("2015-03-18T12:03:17.456-0130", Micros(2015, 3, 18, 13, 33, 17, 456000));
  ok("2015-03-18 12:03:17 UTC", Micros(2015, 3, 18, 12, 3, 17));
  ok("2015-03-18 12:03:17 GMT+01:00", Micros(2015, 3, 18, 11, 3, 17));
  for (const char* s :
       {"a", "", "2015-03-18 25:00:00", "2015-03-18 12:60", "2015-03-18T", "2015-03-18 12:", "2015-03-18X12:00",
        "2015/03/18 12:00:00", "2015-03-18 12:03:17 +19:00", "2015-03-18 12:03:17 nowhere"})
    EXPECT_EQ(ParseSparkTimestamp(s, &us), R::kMalformed) << s;
  EXPECT_EQ(ParseSparkTimestamp("2015-03-18 12:03:17 Europe/Paris", &us), R::kUnsupported);
  EXPECT_EQ(ParseSparkTimestamp("2015-03-18 12:03:17 PST", &us), R::kUnsupported);
  EXPECT_EQ(ParseSparkTimestamp("12:03:17", &us), R::kUnsupported);
}

TEST(SparkCastRules, DoubleAndTimestampTextAsSparkPrintsThem) {
  EXPECT_EQ(FormatSparkDouble(1.0e10), "1.0E10");
  EXPECT_EQ(FormatSparkDouble(0.1), "0.1");
  EXPECT_EQ(FormatSparkDouble(1.0), "1.0");
  EXPECT_EQ(FormatSparkDouble(100.0), "100.0");
  EXPECT_EQ(FormatSparkDouble(1234567.0), "1234567.0");
  EXPECT_EQ(FormatSparkDouble(1.0e7), "1.0E7");
  EXPECT_EQ(FormatSparkDouble(0.001), "0.001");
  EXPECT_EQ(FormatSparkDouble(1.0e-4), "1.0E-4");
  EXPECT_EQ(FormatSparkDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatSparkDouble(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatSparkDouble(123456789.125), "1.23456789125E8");
  EXPECT_EQ(FormatSparkDouble(-0.0), "-0.0");
  EXPECT_EQ(FormatSparkDouble(std::nan("")), "NaN");
  EXPECT_EQ(FormatSparkDouble(-HUGE_VAL), "-Infinity");
  EXPECT_EQ(FormatSparkTimestamp(Micros(2022, 1, 1, 0, 0, 0)), "2022-01-01 00:00:00");
  EXPECT_EQ(FormatSparkTimestamp(Micros(2022, 1, 1, 0, 0, 0, 500000)), "2022-01-01 00:00:00.5");
  EXPECT_EQ(FormatSparkTimestamp(Micros(1969, 12, 31, 23, 59, 59, 120)), "1969-12-31 23:59:59.00012");
}

class SparkCastTest : public SqlTest {
 protected:
  ExecuteOptions Spark() {
    ExecuteOptions o = Options();
    o.dialect = SqlDialect::kSpark;
    return o;
  }
  V Rows(const std::string& sql, bool spark = true) {
    auto r = Run(sql, spark ? Spark() : Options());
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? SqlTest::Rows(*r, false) : V{};
  }
  // The SQLSTATE of the error `sql` gives ("" when it runs).
  std::string State(const std::string& sql, bool spark = true) {
    auto r = Run(sql, spark ? Spark() : Options());
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? "" : r.status().sql_state();
  }
};

// numeric -> integer truncates toward zero in spark, rounds in postgres;
// the column path (VALUES rows) as well as constant folding.
TEST_F(SparkCastTest, NumberToIntegerTruncatesInSparkAndRoundsInPostgres) {
  EXPECT_EQ(Rows("SELECT CAST(3.7 AS INT), CAST(-3.7 AS INT), CAST(2.5 AS BIGINT), CAST(-0.5 AS INT)"),
            (V{"3|-3|2|0"}));
  EXPECT_EQ(Rows("SELECT CAST(3.7 AS INT), CAST(-3.7 AS INT), CAST(2.5 AS BIGINT)", false), (V{"4|-4|3"}));
  EXPECT_EQ(Rows("SELECT CAST(x AS INT), CAST(CAST(x AS DOUBLE) AS INT) FROM (VALUES (3.7), (-3.7), (9.99)) v(x)"),
            (V{"3|3", "-3|-3", "9|9"}));
  EXPECT_EQ(Rows("SELECT CAST(x AS INT) FROM (VALUES (3.7), (-3.7)) v(x)", false), (V{"4", "-4"}));
  // out of range: CAST_OVERFLOW, 22003 (Spark's example CAST(2147483648L AS INT))
  EXPECT_EQ(State("SELECT CAST(2147483648 AS INT)"), "22003");
  EXPECT_EQ(State("SELECT CAST(x AS INT) FROM (VALUES (1.0E10)) v(x)"), "22003");
  EXPECT_EQ(State("SELECT CAST(CAST('NaN' AS DOUBLE) AS INT)"), "22003");
  EXPECT_EQ(Rows("SELECT CAST(2147483647.9 AS INT), CAST(-2147483648.9 AS INT)"), (V{"2147483647|-2147483648"}));
}

// text -> numbers (sql-tests ansi/cast.sql): trimmed; anything but
// [+-]digits is CAST_INVALID_INPUT (22018) for integers.
TEST_F(SparkCastTest, TextToNumbersIsTrimmedAndStrict) {
  EXPECT_EQ(Rows("SELECT CAST(' 1' AS INT), CAST(' 1\t' AS INT), CAST('+12' AS BIGINT), CAST('-2147483648' AS INT)"),
            (V{"1|1|12|-2147483648"}));
  EXPECT_EQ(Rows("SELECT CAST('9223372036854775807' AS BIGINT)"), (V{"9223372036854775807"}));
  for (const char* s :
       {"'1.23'", "'-4.56'", "'abc'", "''", "'123.a'", "'1e3'", "'2147483648'", "'-2147483649'", "'1中文'", "'+'"})
    EXPECT_EQ(State(std::string("SELECT CAST(") + s + " AS INT)"), "22018") << s;
  EXPECT_EQ(State("SELECT CAST('9223372036854775808' AS BIGINT)"), "22018");
  // postgres keeps its own rules: 22P02 for malformed text
  EXPECT_EQ(State("SELECT CAST('abc' AS INTEGER)", false), "22P02");
  // DECIMAL: BigDecimal text, rounded half up; too wide 22003
  EXPECT_EQ(Rows("SELECT CAST('23.45' AS DECIMAL(4, 2)), CAST(' 1e2 ' AS DECIMAL(5, 1)), CAST('.5' AS DECIMAL(3, 1))"),
            (V{"23.45|100.0|0.5"}));
  EXPECT_EQ(State("SELECT CAST('123.45' AS DECIMAL(4, 2))"), "22003");
  EXPECT_EQ(State("SELECT CAST('xyz' AS DECIMAL(4, 2))"), "22018");
  // DOUBLE: Java's syntax plus inf / nan in any case
  EXPECT_EQ(Rows("SELECT CAST(' 1 ' AS DOUBLE) = 1, CAST('-INF' AS DOUBLE) < 0, CAST('1.5d' AS DOUBLE) = 1.5"),
            (V{"true|true|true"}));
  EXPECT_EQ(State("SELECT CAST('abc' AS DOUBLE)"), "22018");
  EXPECT_EQ(State("SELECT CAST(x AS DOUBLE) FROM (VALUES ('1'), ('1.5.2')) v(x)"), "22018");
}

// CAST(x AS DECIMAL) without (p,s): DECIMAL(10,0) in spark, (38,10) in postgres.
TEST_F(SparkCastTest, DecimalWithoutPrecisionIsDecimal10_0) {
  EXPECT_EQ(Rows("SELECT CAST('1.0 ' AS DECIMAL), CAST(1.5 AS DECIMAL), CAST(-2.5 AS DEC)"), (V{"1|2|-3"}));
  EXPECT_EQ(Rows("SELECT CAST(1.5 AS DECIMAL)", false), (V{"1.5000000000"}));
  EXPECT_EQ(State("SELECT CAST(12345678901 AS DECIMAL)"), "22003");
  // DOUBLE -> DECIMAL: the double's shortest text, half up (2.675 -> 2.68)
  EXPECT_EQ(Rows("SELECT CAST(CAST(2.675 AS DOUBLE) AS DECIMAL(5, 2))"), (V{"2.68"}));
  EXPECT_EQ(Rows("SELECT CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(5, 2)) IS NULL"), (V{"true"}));
}

TEST_F(SparkCastTest, TextToBooleanTakesSparksWords) {
  EXPECT_EQ(Rows("SELECT CAST('\t\t true \n\r ' AS BOOLEAN), CAST('\t\n false \t\r' AS BOOLEAN), "
                 "CAST('Y' AS BOOLEAN), CAST('no' AS BOOLEAN), CAST('1' AS BOOLEAN), CAST('0' AS BOOLEAN)"),
            (V{"true|false|true|false|true|false"}));
  EXPECT_EQ(State("SELECT CAST('\t\n xyz \t\r' AS BOOLEAN)"), "22018");
  EXPECT_EQ(State("SELECT CAST('on' AS BOOLEAN)"), "22018");  // PostgreSQL's word, not Spark's
  EXPECT_EQ(Rows("SELECT CAST('on' AS BOOLEAN)", false), (V{"true"}));
}

TEST_F(SparkCastTest, TextToDateAndTimestamp) {
  EXPECT_EQ(Rows("SELECT CAST(CAST('2022-01-01' AS DATE) AS STRING), CAST(CAST('2015' AS DATE) AS STRING), "
                 "CAST(CAST(' 2015-3-18 12:03:17 ' AS DATE) AS STRING)"),
            (V{"2022-01-01|2015-01-01|2015-03-18"}));
  EXPECT_EQ(State("SELECT CAST('a' AS DATE)"), "22018");
  EXPECT_EQ(State("SELECT CAST('2026-02-30' AS DATE)"), "22018");
  EXPECT_EQ(State("SELECT CAST(x AS DATE) FROM (VALUES ('2015-03-18'), ('2015/03/18')) v(x)"), "22018");
  // postgres: unchanged (its date input takes '/' between the parts)
  EXPECT_EQ(Rows("SELECT CAST(CAST('2015/03/18' AS DATE) AS VARCHAR)", false), (V{"2015-03-18"}));
  EXPECT_EQ(Rows("SELECT CAST(CAST('2022-01-01 00:00:00' AS TIMESTAMP) AS STRING), "
                 "CAST(CAST('2015-03-18T12:03:17.5+01:00' AS TIMESTAMP) AS STRING)"),
            (V{"2022-01-01 00:00:00|2015-03-18 11:03:17.5"}));
  EXPECT_EQ(State("SELECT CAST('a' AS TIMESTAMP)"), "22018");
  EXPECT_EQ(State("SELECT CAST('2015-03-18 12:03:17 Europe/Paris' AS TIMESTAMP)"), "0A000");
  // to_date(s) / to_timestamp(s) without a pattern are Spark's CAST
  EXPECT_EQ(Rows("SELECT CAST(to_date('2009-07-30 04:17:52') AS STRING), "
                 "CAST(to_timestamp('2016-12-31 00:12:00') AS STRING)"),
            (V{"2009-07-30|2016-12-31 00:12:00"}));
  EXPECT_EQ(State("SELECT to_date('abc')"), "22018");
}

TEST_F(SparkCastTest, NumbersAndTimesToText) {
  EXPECT_EQ(Rows("SELECT CAST(1.0E10 AS STRING), CAST(CAST(0.1 AS DOUBLE) AS STRING), CAST(CAST(1 AS DOUBLE) AS "
                 "STRING), CAST(CAST(1.50 AS DECIMAL(4, 2)) AS STRING), CAST(true AS STRING)"),
            (V{"1.0E10|0.1|1.0|1.50|true"}));
  EXPECT_EQ(Rows("SELECT CAST(TIMESTAMP '2022-01-01 10:00:00.25' AS STRING)"), (V{"2022-01-01 10:00:00.25"}));
  EXPECT_EQ(Rows("SELECT CAST(TIMESTAMP '2022-01-01 10:00:00.25' AS VARCHAR)", false),
            (V{"2022-01-01 10:00:00.250000"}));
}

// Spark's ANSI table: no DATE / TIMESTAMP <-> number, no BOOLEAN <-> DATE
// (DATATYPE_MISMATCH, 42K09), for try_cast too.
TEST_F(SparkCastTest, PairsSparkCannotCastAreRefusedWhenBound) {
  EXPECT_EQ(State("SELECT CAST(DATE '2020-01-01' AS INT)"), "42K09");
  EXPECT_EQ(State("SELECT CAST(1 AS DATE)"), "42K09");
  EXPECT_EQ(State("SELECT CAST(TIMESTAMP '2020-01-01 00:00:00' AS DOUBLE)"), "42K09");
  EXPECT_EQ(State("SELECT CAST(true AS TIMESTAMP)"), "42K09");
  EXPECT_EQ(State("SELECT try_cast(DATE '2020-01-01' AS INT)"), "42K09");
  EXPECT_EQ(Rows("SELECT CAST(CAST(TIMESTAMP '2020-01-01 23:00:00' AS DATE) AS STRING), CAST(1 AS BOOLEAN), "
                 "CAST(false AS INT)"),
            (V{"2020-01-01|true|0"}));
}

// try_cast (Spark, DuckDB): NULL where the value does not convert.
TEST_F(SparkCastTest, TryCastGivesNullInBothDialects) {
  EXPECT_EQ(Rows("SELECT try_cast('abc' AS INT), try_cast('12' AS INT), TRY_CAST(2147483648 AS INT), "
                 "try_cast('2026-02-30' AS DATE)"),
            (V{"null|12|null|null"}));
  EXPECT_EQ(Rows("SELECT try_cast(x AS INT) FROM (VALUES ('1'), ('x'), (' 3 ')) v(x)"), (V{"1", "null", "3"}));
  EXPECT_EQ(Rows("SELECT try_cast('abc' AS INTEGER), try_cast('12' AS INTEGER), try_cast(3.7 AS INTEGER)", false),
            (V{"null|12|4"}));
  EXPECT_EQ(Rows("SELECT try_cast(x AS INTEGER) FROM (VALUES ('1'), ('x')) v(x)", false), (V{"1", "null"}));
  // a column named try_cast, or try_cast in a string, is left alone
  EXPECT_EQ(Rows("SELECT 'try_cast(1 AS INT)', try_cast FROM (VALUES (5)) v(try_cast)"), (V{"try_cast(1 AS INT)|5"}));
}

}  // namespace
}  // namespace quiver::sql
