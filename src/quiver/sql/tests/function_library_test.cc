// Tests of the Spark function library a Databricks client sends (issue 37):
// math (bround, log10 / log2 / log, cbrt, sign / signum, pmod), dates
// (trunc, weekofyear, next_day, months_between, unix_timestamp,
// from_unixtime), strings (locate / position, repeat, reverse, translate,
// ascii, chr / char, decode) and count(DISTINCT a, b, ...). Expected
// values in the spark dialect are the examples of Spark's / Databricks'
// function documentation (and what its definition gives for NULL and
// out-of-domain arguments); in the postgres dialect DuckDB's answers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

class FunctionLibraryTest : public SqlTest {
 protected:
  /// The rows of `sql` in `dialect` joined by ';' (columns by '|'), or its
  /// error text.
  std::string Answer(const std::string& sql, SqlDialect dialect) {
    ExecuteOptions o = Options();
    o.dialect = dialect;
    auto r = Run(sql, o);
    if (!r.ok()) return "error: " + r.status().ToString();
    std::string all;
    for (const auto& row : Rows(*r, /*sorted=*/false)) all += (all.empty() ? "" : ";") + row;
    return all;
  }
  std::string Spark(const std::string& sql) { return Answer(sql, SqlDialect::kSpark); }
  std::string Pg(const std::string& sql) { return Answer(sql, SqlDialect::kPostgres); }
  /// The SQLSTATE `sql` fails with in `dialect` ("ok" when it runs).
  std::string State(const std::string& sql, SqlDialect dialect = SqlDialect::kPostgres) {
    ExecuteOptions o = Options();
    o.dialect = dialect;
    auto r = Run(sql, o);
    return r.ok() ? "ok" : r.status().sql_state();
  }
  /// The result column types of `sql` in `dialect`, joined by ','.
  std::string Types(const std::string& sql, SqlDialect dialect) {
    ExecuteOptions o = Options();
    o.dialect = dialect;
    auto stream = engine_->Execute(sql, o);
    if (!stream.ok()) return "error: " + stream.status().ToString();
    std::string out;
    for (const auto& f : (*stream)->schema()->fields) out += (out.empty() ? "" : ",") + f->type->ToString();
    return out;
  }
};

// bround: Databricks' examples (bround(2.5, 0) = 2, bround(3.5, 0) = 4,
// bround(2.6, 0) = 3, bround(2.25, 1) = 2.2, bround(13.5, -1) = 10) and
// Spark's (bround(25, -1) = 20); the same in both dialects.
TEST_F(FunctionLibraryTest, BroundRoundsHalfToEven) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT bround(2.5, 0), bround(3.5, 0), bround(2.6, 0), bround(2.25, 1), bround(13.5, -1)", d),
              "2|4|3|2.2|10");
    EXPECT_EQ(Answer("SELECT bround(25, -1), bround(35, -1), bround(-2.5), bround(-3.5), bround(7)", d),
              "20|40|-2|-4|7");
    EXPECT_EQ(Answer("SELECT round(2.5, 0), round(-2.5)", d), "3|-3");  // round: half away from zero
    EXPECT_EQ(
        Answer("SELECT bround(CAST(2.5 AS DOUBLE)), bround(CAST(3.5 AS DOUBLE)), bround(CAST(-0.125 AS DOUBLE), 2)", d),
        "2|4|-0.12");
    EXPECT_EQ(
        Answer("SELECT bround(NULL), bround(2.5, NULL), bround(x, 1) FROM (VALUES (0.05), (0.15), (NULL)) t(x)", d),
        "null|null|0.0;null|null|0.2;null|null|null");
  }
  EXPECT_EQ(State("SELECT bround(x, x) FROM (VALUES (1)) t(x)"), "0A000");
  EXPECT_NE(Pg("SELECT bround('a')").find("cannot take"), std::string::npos);
}

// log10 / log2 / log(base, x) / ln: Spark's examples (log10(10) = 1.0,
// log2(2) = 1.0, log(10, 100) = 2.0, ln(1) = 0.0); Spark's are NULL for an
// argument <= 0 and its log(x) is ln(x). The postgres dialect: DuckDB's
// (log(x) is log10(x); 2201E for x <= 0, 22012 for base 1).
TEST_F(FunctionLibraryTest, Logarithms) {
  EXPECT_EQ(Spark("SELECT log10(10), log2(2), log(10, 100), ln(1), log(1)"), "1|1|2|0|0");
  EXPECT_EQ(Spark("SELECT log(100) = ln(100), log(2, 8), log10(1000), log2(1024)"), "true|3|3|10");
  EXPECT_EQ(Spark("SELECT ln(0), log10(-1), log2(0), log(0, 5), log(2, -1), log(-3)"), "null|null|null|null|null|null");
  EXPECT_EQ(Spark("SELECT ln(x), log(10, x) FROM (VALUES (1), (0), (-5), (NULL), (100)) t(x)"),
            "0|0;null|null;null|null;null|null;4.605170185988092|2");
  EXPECT_EQ(Pg("SELECT log(100), log(2, 8), log10(1000), log2(8), log(NULL, 2), log10(NULL)"), "2|3|3|3|null|null");
  EXPECT_EQ(State("SELECT log10(0)"), "2201E");
  EXPECT_EQ(State("SELECT log10(-1)"), "2201E");
  EXPECT_EQ(State("SELECT log2(x) FROM (VALUES (4), (0)) t(x)"), "2201E");
  EXPECT_EQ(State("SELECT log(0, 8)"), "2201E");
  EXPECT_EQ(State("SELECT log(2, 0)"), "2201E");
  EXPECT_EQ(State("SELECT log(1, 8)"), "22012");
  EXPECT_EQ(State("SELECT ln(0)"), "2201E");
  EXPECT_EQ(State("SELECT log(1, 2, 3)"), "0A000");
  EXPECT_NE(Pg("SELECT log10('x')").find("cannot take"), std::string::npos);
  EXPECT_NE(Spark("SELECT ln('x')").find("cannot take"), std::string::npos);
}

// cbrt (Spark: cbrt(27.0) = 3.0; DuckDB: cbrt(-8.0) = -2), sign / signum
// (Spark: sign(40) = 1.0, a DOUBLE; DuckDB: sign(-3) = -1, an integer, and
// 0 for NaN).
TEST_F(FunctionLibraryTest, CbrtAndSign) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT cbrt(27.0), cbrt(-8.0), cbrt(0), cbrt(NULL)", d), "3|-2|0|null");
    EXPECT_EQ(Answer("SELECT sign(40), signum(40), sign(-3), sign(2.5), sign(0), sign(-0.001), sign(NULL)", d),
              "1|1|-1|1|0|-1|null");
  }
  EXPECT_EQ(Types("SELECT sign(40), signum(-2.5)", SqlDialect::kSpark), "double,double");
  EXPECT_EQ(Types("SELECT sign(40), signum(-2.5)", SqlDialect::kPostgres), "int64,int64");
  EXPECT_EQ(Spark("SELECT sign(CAST('NaN' AS DOUBLE))"), "NaN");
  EXPECT_EQ(Pg("SELECT sign(CAST('NaN' AS DOUBLE))"), "0");
  EXPECT_EQ(Pg("SELECT sign(x) FROM (VALUES (-7), (0), (9), (NULL)) t(x)"), "-1;0;1;null");
  EXPECT_NE(Pg("SELECT cbrt('x')").find("cannot take"), std::string::npos);
}

// pmod: Spark's examples (pmod(10, 3) = 1, pmod(-10, 3) = 2) and its
// definition (r = a % b; r < 0 ? (r + b) % b : r), in both dialects;
// division by zero is 22012 (Spark's ANSI mode).
TEST_F(FunctionLibraryTest, Pmod) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT pmod(10, 3), pmod(-10, 3), pmod(-7, -3), pmod(7, -3), pmod(0, 5)", d), "1|2|-1|1|0");
    EXPECT_EQ(
        Answer("SELECT pmod(7.5, 2), pmod(-7.5, 2), pmod(CAST(-10 AS DOUBLE), 3), pmod(NULL, 3), pmod(3, NULL)", d),
        "1.5|0.5|2|null|null");
    EXPECT_EQ(Answer("SELECT pmod(a, b) FROM (VALUES (-1, 4), (9223372036854775807, 10), (-9223372036854775807, 2)) "
                     "t(a, b)",
                     d),
              "3;7;1");
    EXPECT_EQ(State("SELECT pmod(10, 0)", d), "22012");
    EXPECT_EQ(State("SELECT pmod(a, b) FROM (VALUES (1, 1), (1, 0)) t(a, b)", d), "22012");
  }
  EXPECT_EQ(State("SELECT pmod('a', 1)"), "22P02");  // as mod('a', 1)
  EXPECT_NE(Pg("SELECT pmod(DATE '2020-01-01', 1)").find("cannot take"), std::string::npos);
}

// trunc(date, unit): Databricks' examples (trunc('2019-08-04', 'week') =
// 2019-07-29, 'quarter' 2019-07-01, trunc('2009-02-12', 'MM') = 2009-02-01,
// trunc('2015-10-27', 'YEAR') = 2015-01-01, 'JAHR' NULL); units below a
// week are NULL too (Spark's TruncDate).
TEST_F(FunctionLibraryTest, TruncDate) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT trunc('2019-08-04', 'week'), trunc('2019-08-04', 'quarter'), trunc('2009-02-12', 'MM'), "
                     "trunc('2015-10-27', 'YEAR'), trunc('2015-10-27', 'JAHR')",
                     d),
              "2019-07-29|2019-07-01|2009-02-01|2015-01-01|null");
    EXPECT_EQ(Answer("SELECT trunc(DATE '2015-10-27', 'yy'), trunc(DATE '2015-10-27', 'Mon'), trunc(DATE '2015-10-27', "
                     "'yyyy'), trunc(DATE '2015-10-27', 'month'), trunc(DATE '2015-10-27', 'day')",
                     d),
              "2015-01-01|2015-10-01|2015-01-01|2015-10-01|null");
    EXPECT_EQ(Answer("SELECT trunc(TIMESTAMP '2015-10-27 23:59:59', 'MM'), trunc(NULL, 'MM'), trunc(DATE '2015-10-27', "
                     "NULL), trunc(DATE '1969-12-31', 'week')",
                     d),
              "2015-10-01|null|null|1969-12-29");
    EXPECT_EQ(Answer("SELECT trunc(x, u) FROM (VALUES (DATE '2020-05-17', 'QUARTER'), (DATE '2020-05-17', 'x'), "
                     "(NULL, 'year')) t(x, u)",
                     d),
              "2020-04-01;null;null");
  }
  EXPECT_EQ(State("SELECT trunc(2.5, 'MM')"), "0A000");
  EXPECT_EQ(State("SELECT trunc('x', 'MM')"), "22007");
}

// weekofyear: Spark's example (weekofyear('2008-02-20') = 8) and ISO
// 8601's weeks as DuckDB answers them (2021-01-01 is in week 53 of 2020).
TEST_F(FunctionLibraryTest, WeekOfYear) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT weekofyear('2008-02-20'), weekofyear(DATE '2021-01-01'), weekofyear(DATE '2021-01-04'), "
                     "weekofyear(TIMESTAMP '2019-12-30 12:00:00'), weekofyear(NULL)",
                     d),
              "8|53|1|1|null");
    EXPECT_EQ(Answer("SELECT EXTRACT(WEEK FROM DATE '2008-02-20'), date_part('week', DATE '1969-12-31')", d), "8|1");
  }
}

// next_day: Databricks' example (next_day('2015-01-14', 'TU') = 2015-01-20);
// the day is strictly later (2015-01-14 is a Wednesday); an unknown name is
// an error in ANSI mode (22023).
TEST_F(FunctionLibraryTest, NextDay) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT next_day('2015-01-14', 'TU'), next_day('2015-01-14', 'wednesday'), next_day(DATE "
                     "'2015-01-14', 'Thu'), next_day(TIMESTAMP '2015-01-17 08:00:00', 'SU'), next_day(NULL, 'MO')",
                     d),
              "2015-01-20|2015-01-21|2015-01-15|2015-01-18|null");
    EXPECT_EQ(State("SELECT next_day('2015-01-14', 'xx')", d), "22023");
    EXPECT_EQ(State("SELECT next_day(DATE '2015-01-14', n) FROM (VALUES ('MO'), ('Mond')) t(n)", d), "22023");
  }
  EXPECT_EQ(Pg("SELECT next_day(DATE '2015-01-14', n) FROM (VALUES ('FR'), (NULL)) t(n)"), "2015-01-16;null");
}

// months_between: Spark's examples (months_between('1997-02-28 10:30:00',
// '1996-10-30') = 3.94959677, with round_off false 3.9495967741935485) and
// its rules (equal days of the month, or both months' last days: whole).
TEST_F(FunctionLibraryTest, MonthsBetween) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT months_between('1997-02-28 10:30:00', '1996-10-30'), months_between('1996-10-30', "
                     "'1997-02-28 10:30:00')",
                     d),
              "3.94959677|-3.94959677");
    EXPECT_EQ(Answer("SELECT months_between('1997-02-28 10:30:00', '1996-10-30', false)", d), "3.9495967741935485");
    EXPECT_EQ(Answer("SELECT months_between(TIMESTAMP '2024-03-15 10:00:00', DATE '2024-01-15'), months_between(DATE "
                     "'2024-03-31', DATE '2024-02-29'), months_between(DATE '2024-01-01', DATE '2024-01-01')",
                     d),
              "2|1|0");
    EXPECT_EQ(Answer("SELECT months_between(NULL, DATE '2024-01-01'), months_between(DATE '2024-01-01', DATE "
                     "'2023-12-01', NULL)",
                     d),
              "null|null");
  }
  EXPECT_NE(Pg("SELECT months_between(DATE '2024-01-01', DATE '2023-12-01', 1)").find("BOOLEAN"), std::string::npos);
}

// unix_timestamp / to_unix_timestamp / from_unixtime: Databricks' examples
// (unix_timestamp('2016-04-08', 'yyyy-MM-dd'), whose documented value is in
// the docs' session time zone: 1460073600 in UTC, quiver's;
// from_unixtime(0) = '1970-01-01 00:00:00' under SET TIMEZONE 'UTC').
TEST_F(FunctionLibraryTest, UnixTime) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT unix_timestamp('2016-04-08', 'yyyy-MM-dd'), to_unix_timestamp('2016-04-08', "
                     "'yyyy-MM-dd'), unix_timestamp('2016-04-08 00:00:01'), unix_timestamp(DATE '1970-01-02')",
                     d),
              "1460073600|1460073600|1460073601|86400");
    EXPECT_EQ(Answer("SELECT unix_timestamp(TIMESTAMP '1969-12-31 23:59:59.5'), unix_timestamp(NULL), "
                     "unix_timestamp('2016', NULL), unix_timestamp() = unix_timestamp(current_timestamp), "
                     "unix_timestamp() > 1700000000",
                     d),
              "-1|null|null|true|true");
    EXPECT_EQ(State("SELECT unix_timestamp('not-a-timestamp', 'yyyy-MM-dd')", d), "22007");
    EXPECT_EQ(State("SELECT unix_timestamp('2016', 'yyyy-qq')", d), "22023");
    EXPECT_EQ(Answer("SELECT from_unixtime(0, 'yyyy-MM-dd HH:mm:ss'), from_unixtime(0), from_unixtime(1460073600, "
                     "'dd/MM/yyyy'), from_unixtime(-1), from_unixtime(NULL), from_unixtime(1, NULL)",
                     d),
              "1970-01-01 00:00:00|1970-01-01 00:00:00|08/04/2016|1969-12-31 23:59:59|null|null");
    EXPECT_EQ(Answer("SELECT from_unixtime(s) FROM (VALUES (86400), (NULL)) t(s)", d), "1970-01-02 00:00:00;null");
    EXPECT_EQ(State("SELECT from_unixtime(1, 'q')", d), "22023");
    EXPECT_EQ(State("SELECT from_unixtime(9223372036854775807)", d), "22008");
  }
  EXPECT_NE(Pg("SELECT from_unixtime('x')").find("BIGINT"), std::string::npos);
}

// locate / position: Databricks' examples (locate('bar', 'abcbarbar') = 4,
// locate('bar', 'abcbarbar', 5) = 7, position('bar', 'abcbarbar'[, 5]),
// position('bar' IN 'abcbarbar') = 4); a start < 1 or NULL gives 0, an
// empty sub is found at 1 (Spark's StringLocate / UTF8String.indexOf).
TEST_F(FunctionLibraryTest, LocateAndPosition) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(
        Answer("SELECT locate('bar', 'abcbarbar'), locate('bar', 'abcbarbar', 5), position('bar' IN 'abcbarbar'), "
               "locate('bar', 'abcbarbar', 0), locate('', 'abc', 3), locate('bar', 'abcbarbar', NULL)",
               d),
        "4|7|4|0|1|0");
    EXPECT_EQ(Answer("SELECT locate(NULL, 'abc'), locate('a', NULL), locate('é', 'héé', 3), locate('z', 'abc'), "
                     "locate('c', 'abc', 9), locate(2, 123)",
                     d),
              "null|null|3|0|0|2");
    EXPECT_EQ(Answer("SELECT locate(sub, s, p) FROM (VALUES ('b', 'abcb', 3), ('b', NULL, 1), ('b', 'abcb', NULL)) "
                     "t(sub, s, p)",
                     d),
              "4;null;0");
  }
  EXPECT_EQ(Spark("SELECT position('bar', 'abcbarbar'), position('bar', 'abcbarbar', 5), POSITION ( 'a' , 'cba' ), "
                  "position('b' IN concat('a', 'b'))"),
            "4|7|3|2");
  // The rewrite leaves strings, names and the IN form alone.
  EXPECT_EQ(Spark("SELECT 'position(1, 2)', position('x,y' IN 'ax,y'), t.position FROM (VALUES (1)) t(position)"),
            "position(1, 2)|2|1");
}

// repeat, reverse, translate: Spark's examples (repeat('123', 2) =
// '123123', reverse('Spark SQL') = 'LQS krapS', translate('AaBbCc', 'abc',
// '123') = 'A1B2C3') and DuckDB's answers (translate with a shorter `to`
// removes, a repeated `from` character keeps its first place).
TEST_F(FunctionLibraryTest, RepeatReverseTranslate) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT repeat('123', 2), repeat('a', 0), repeat('a', -1), repeat(NULL, 2), repeat('ab', NULL), "
                     "repeat('é', 3)",
                     d),
              "123123|||null|null|ééé");
    EXPECT_EQ(State("SELECT repeat('x', 100000000)", d), "54000");
    EXPECT_EQ(Answer("SELECT reverse('Spark SQL'), reverse('héllo'), reverse(''), reverse(NULL), reverse(123)", d),
              "LQS krapS|olléh||null|321");
    EXPECT_EQ(
        Answer("SELECT translate('AaBbCc', 'abc', '123'), translate('AaBbCc', 'abc', '12'), translate('abca', "
               "'aa', 'xy'), translate('héllo', 'él', 'ex'), translate(NULL, 'a', 'b'), translate('a', 'a', NULL)",
               d),
        "A1B2C3|A1B2C|xbcx|hexxo|null|null");
    EXPECT_EQ(Answer("SELECT translate(s, 'ab', 'b') FROM (VALUES ('abc'), (''), (NULL)) t(s)", d), "bc;;null");
  }
}

// ascii (Databricks: ascii('234') = 50, ascii('') = 0; DuckDB: ascii('é') =
// 233), chr / char (Databricks: chr(65) = 'A'; Spark: '' below 0, n mod
// 256 above 255; DuckDB: the code point, an error for none).
TEST_F(FunctionLibraryTest, AsciiAndChr) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT ascii('234'), ascii(''), ascii(2), ascii('é'), ascii(NULL)", d), "50|0|50|233|null");
    EXPECT_EQ(Answer("SELECT chr(65), chr(233), chr(NULL), chr(x) FROM (VALUES (97)) t(x)", d), "A|é|null|a");
  }
  EXPECT_EQ(Spark("SELECT chr(-1), chr(321), char(65), chr(256 + 233), 'x' || char(66)"), "|A|A|é|xB");
  EXPECT_EQ(Spark("SELECT CAST('q' AS CHAR(1)), CAST('r' AS char (1)), 'a'::char(1)"), "q|r|a");
  EXPECT_EQ(Pg("SELECT chr(321), chr(128512)"), "Ł|😀");
  EXPECT_EQ(State("SELECT chr(-1)"), "22023");
  EXPECT_EQ(State("SELECT chr(1114112)"), "22023");
  EXPECT_EQ(State("SELECT chr(55296)"), "22023");
  EXPECT_NE(Pg("SELECT chr('a')").find("cannot take"), std::string::npos);
}

// decode: Databricks' examples (decode(5, 6, 'Spark', 5, 'SQL', 4,
// 'rocks') = 'SQL', decode(NULL, 6, 'Spark', NULL, 'SQL', 4, 'rocks') =
// 'SQL', decode(7, 6, 'Spark', 5, 'SQL', 'rocks') = 'rocks'); without a
// default, NULL.
TEST_F(FunctionLibraryTest, Decode) {
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT decode(5, 6, 'Spark', 5, 'SQL', 4, 'rocks'), decode(NULL, 6, 'Spark', NULL, 'SQL', 4, "
                     "'rocks'), decode(7, 6, 'Spark', 5, 'SQL', 'rocks'), decode(7, 6, 'a')",
                     d),
              "SQL|SQL|rocks|null");
    EXPECT_EQ(Answer("SELECT decode(x, 1, 'one', 2, 'two', NULL, 'none', 'other') FROM (VALUES (1), (2), (3), (NULL)) "
                     "t(x)",
                     d),
              "one;two;other;none");
    EXPECT_EQ(Answer("SELECT decode(x, 'a', 1, 'b', 2.5) FROM (VALUES ('b'), ('c')) t(x)", d), "2.5;null");
    EXPECT_EQ(State("SELECT decode(1, 2)", d), "0A000");
  }
  EXPECT_NE(State("SELECT decode(1, DATE '2020-01-01', 1)"), "ok");
}

// count(DISTINCT a, b): Spark's "the number of rows for which the supplied
// expressions are unique and non-null" (a tuple with a NULL is not
// counted); the values DuckDB gives for SELECT count(*) FROM (SELECT
// DISTINCT a, b ... WHERE a IS NOT NULL AND b IS NOT NULL).
TEST_F(FunctionLibraryTest, CountDistinctTuples) {
  const std::string t =
      "(VALUES (1, 1, 'x'), (1, 1, 'x'), (1, 1, NULL), (1, NULL, 'x'), (2, 2, 'x'), (2, 1, 'y'), (2, 1, 'x')) t(g, a, "
      "b)";
  for (SqlDialect d : {SqlDialect::kSpark, SqlDialect::kPostgres}) {
    EXPECT_EQ(Answer("SELECT count(DISTINCT a, b), count(DISTINCT a), count(DISTINCT b), count(*) FROM " + t, d),
              "3|2|2|7");
    EXPECT_EQ(Answer("SELECT g, count(DISTINCT a, b), count(DISTINCT b, a, g) FROM " + t + " GROUP BY g ORDER BY g", d),
              "1|1|1;2|3|3");
    EXPECT_EQ(Answer("SELECT count(DISTINCT a, b) FILTER (WHERE g = 2), count(DISTINCT a, NULL) FROM " + t, d), "3|0");
    EXPECT_EQ(Answer("SELECT count(DISTINCT a, b) FROM " + t + " WHERE g > 5", d), "0");
    // the key cannot confuse tuples whose texts concatenate alike
    EXPECT_EQ(Answer("SELECT count(DISTINCT s, u) FROM (VALUES ('a:b', 'c'), ('a', 'b:c'), ('1:a', ''), ('', '1:a'), "
                     "('a', 'b:c')) v(s, u)",
                     d),
              "4");
    EXPECT_EQ(Answer("SELECT count(DISTINCT d, x, s) FROM (VALUES (DATE '2020-01-01', 1.50, 'é'), (DATE '2020-01-01', "
                     "1.5, 'é'), (DATE '2020-01-02', 1.5, 'é')) v(d, x, s)",
                     d),
              "2");
  }
  EXPECT_NE(Pg("SELECT count(a, b) FROM " + t).find("takes one argument"), std::string::npos);
}

}  // namespace
}  // namespace quiver::sql
