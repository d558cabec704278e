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
  /// The SQLSTATE of the error `sql` fails with ("ok" when it runs).
  std::string State(const std::string& sql) {
    auto r = Run(sql);
    return r.ok() ? "ok" : r.status().sql_state();
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

TEST_F(FunctionsTest, StringFunctions) {
  EXPECT_EQ(V("SELECT replace('ABCabc', 'abc', 'DEF')"), "ABCDEF");
  EXPECT_EQ(V("SELECT replace('abcabc', 'b')"), "acac");
  EXPECT_EQ(V("SELECT replace('abc', '', 'x')"), "abc");
  EXPECT_EQ(V("SELECT split_part('11.12.13', '.', 3)"), "13");
  EXPECT_EQ(V("SELECT split_part('a,b,c', ',', -1)"), "c");
  EXPECT_EQ(V("SELECT split_part('a,b,c', ',', 4)"), "");
  EXPECT_EQ(V("SELECT split_part('a,b,c', '', 1)"), "a,b,c");
  EXPECT_EQ(V("SELECT lpad('hi', 5, '*-')"), "*-*hi");
  EXPECT_EQ(V("SELECT lpad('hi', 1, '*-')"), "h");
  EXPECT_EQ(V("SELECT rpad('hi', 5, 'ab')"), "hiaba");
  EXPECT_EQ(V("SELECT lpad('7', 3, '0')"), "007");
  EXPECT_EQ(V("SELECT lpad(7, 3, '0')"), "007");
  EXPECT_EQ(V("SELECT rpad('hé', 4)"), "hé  ");
  EXPECT_EQ(V("SELECT lpad('hi', -1, 'x')"), "");
  EXPECT_EQ(V("SELECT instr('SparkSQL', 'SQL')"), "6");
  EXPECT_EQ(V("SELECT instr('héllo', 'l')"), "3");
  EXPECT_EQ(V("SELECT instr('abc', 'z')"), "0");
  EXPECT_EQ(V("SELECT strpos('abc', 'c')"), "3");
  EXPECT_EQ(V("SELECT position('c' IN 'abc')"), "3");
  EXPECT_EQ(V("SELECT concat_ws(' ', 'Spark', 'SQL')"), "Spark SQL");
  EXPECT_EQ(V("SELECT concat_ws('-', 'a', NULL, 'b', 1)"), "a-b-1");
  EXPECT_EQ(V("SELECT concat_ws(NULL, 'a')"), "null");
  EXPECT_EQ(V("SELECT left('Spark SQL', 3)"), "Spa");
  EXPECT_EQ(V("SELECT right('Spark SQL', 3)"), "SQL");
  EXPECT_EQ(V("SELECT left('hello', -1)"), "hell");
  EXPECT_EQ(V("SELECT right('hello', -1)"), "ello");
  EXPECT_EQ(V("SELECT left('héllo', 2)"), "hé");
  EXPECT_EQ(V("SELECT initcap('sPark sql')"), "Spark Sql");
  // regular expressions (RE2)
  EXPECT_EQ(V("SELECT regexp_replace('100-200', '(\\d+)', 'num')"), "num-200");
  EXPECT_EQ(V("SELECT regexp_replace('100-200', '(\\d+)', 'num', 'g')"), "num-num");
  EXPECT_EQ(V("SELECT regexp_replace('abc', '(b)', '[\\1]')"), "a[b]c");
  EXPECT_EQ(V("SELECT regexp_replace('abc', '(b)', '<$1>')"), "a<b>c");
  EXPECT_EQ(V("SELECT regexp_replace('ABC', 'b', 'x', 'gi')"), "AxC");
  EXPECT_EQ(V("SELECT regexp_extract('100-200', '(\\d+)-(\\d+)', 1)"), "100");
  EXPECT_EQ(V("SELECT regexp_extract('100-200', '(\\d+)-(\\d+)', 2)"), "200");
  EXPECT_EQ(V("SELECT regexp_extract('100-200', '(\\d+)-(\\d+)')"), "100");
  EXPECT_EQ(V("SELECT regexp_extract('100-200', '(\\d+)-(\\d+)', 0)"), "100-200");
  EXPECT_EQ(V("SELECT regexp_extract('foo', '(\\d+)', 1)"), "");
  EXPECT_EQ(V("SELECT regexp_extract('ab', '(a)|(x)', 2)"), "");
  EXPECT_EQ(V("SELECT '%SystemDrive%\\Users\\John' ~ '%SystemDrive%\\\\Users.*'"), "true");
  EXPECT_EQ(V("SELECT rlike('abc', '^b')"), "false");
  EXPECT_EQ(V("SELECT 'abc' !~ 'b'"), "false");
  EXPECT_EQ(V("SELECT 'ABC' ~* 'b'"), "true");
  EXPECT_EQ(V("SELECT 'ABC' ~ 'b'"), "false");
  EXPECT_EQ(V("SELECT regexp_like('ABC', 'b', 'i')"), "true");
  // NULL in, NULL out
  EXPECT_EQ(V("SELECT replace(NULL, 'a', 'b')"), "null");
  EXPECT_EQ(V("SELECT split_part('a', NULL, 1)"), "null");
  EXPECT_EQ(V("SELECT lpad('a', NULL)"), "null");
  EXPECT_EQ(V("SELECT instr(NULL, 'a')"), "null");
  EXPECT_EQ(V("SELECT regexp_replace('a', NULL, 'b')"), "null");
  EXPECT_EQ(V("SELECT NULL ~ 'a'"), "null");
  EXPECT_EQ(V("SELECT initcap(NULL)"), "null");
  EXPECT_EQ(V("SELECT left(NULL, 1)"), "null");
  // errors
  EXPECT_NE(V("SELECT split_part('a', ',', 0)").find("must not be zero"), std::string::npos);
  EXPECT_EQ(State("SELECT split_part('a', ',', 0)"), "22023");
  EXPECT_EQ(State("SELECT regexp_replace('a', '(', 'b')"), "2201B");
  EXPECT_NE(V("SELECT 'a' ~ '(a'").find("invalid regular expression"), std::string::npos);
  EXPECT_EQ(State("SELECT regexp_extract('a', '(a)', 2)"), "22023");
  EXPECT_NE(V("SELECT regexp_replace('a', 'a', 'b', 'z')").find("flag 'z'"), std::string::npos);
  EXPECT_EQ(State("SELECT lpad('a', 1000000000)"), "54000");
  EXPECT_NE(V("SELECT left('a', 'b')").find("cannot take"), std::string::npos);
}

TEST_F(FunctionsTest, StringFunctionsOverColumns) {
  const std::string s =
      " FROM (VALUES ('a1b22', '[0-9]+', 1), ('xyz', 'y', 2), (NULL, 'a', 3), ('q', NULL, 4)) s(v, p, n) ";
  EXPECT_EQ(Rows(*Run("SELECT regexp_replace(v, p, '#', 'g')" + s + "ORDER BY n"), false),
            (std::vector<std::string>{"a#b#", "x#z", "null", "null"}));
  EXPECT_EQ(Rows(*Run("SELECT v ~ p" + s + "ORDER BY n"), false),
            (std::vector<std::string>{"true", "true", "null", "null"}));
  EXPECT_EQ(Rows(*Run("SELECT lpad(v, n + 2, '*')" + s + "ORDER BY n"), false),
            (std::vector<std::string>{"a1b", "*xyz", "null", "*****q"}));
  EXPECT_EQ(Rows(*Run("SELECT count(*)" + s + "WHERE v RLIKE '[0-9]'")), (std::vector<std::string>{"1"}));
  EXPECT_EQ(Rows(*Run("SELECT count(*)" + s + "WHERE v NOT RLIKE '[0-9]'")), (std::vector<std::string>{"2"}));
}

TEST_F(FunctionsTest, GreatestLeastAndConditionals) {
  EXPECT_EQ(V("SELECT greatest(10, 9, 2, 4, 3)"), "10");
  EXPECT_EQ(V("SELECT least(10, 9, 2, 4, 3)"), "2");
  EXPECT_EQ(V("SELECT greatest(1, NULL, 3)"), "3");
  EXPECT_EQ(V("SELECT greatest(NULL, NULL)"), "null");
  EXPECT_EQ(V("SELECT least(1, 2.5)"), "1.0");
  EXPECT_EQ(V("SELECT greatest('a', 'b')"), "b");
  EXPECT_EQ(V("SELECT greatest(DATE '2020-01-01', DATE '2021-01-01')"), "2021-01-01");
  EXPECT_EQ(V("SELECT greatest(1.5::double, 'NaN'::double)"), "NaN");
  EXPECT_EQ(State("SELECT greatest(1, 'x')"), "22P02");
  EXPECT_EQ(V("SELECT nvl2(NULL, 2, 1)"), "1");
  EXPECT_EQ(V("SELECT nvl2(0, 2, 1)"), "2");
  EXPECT_EQ(V("SELECT if(1 < 2, 'a', 'b')"), "a");
  EXPECT_EQ(V("SELECT if(NULL, 'a', 'b')"), "b");
  EXPECT_NE(V("SELECT if(1, 'a', 'b')").find("must be boolean"), std::string::npos);
}

// Spark's regexp_replace replaces every match (its docs: regexp_replace(
// '100-200', '(\\d+)', 'num') is 'num-num'); its fourth argument is a
// position, not flags. Spark's current_date() / current_timestamp() take
// parentheses, in both dialects.
TEST_F(FunctionsTest, SparkRegexpReplaceAndCurrentDateCalls) {
  auto spark = [&](const std::string& sql) {
    ExecuteOptions o = Options();
    o.dialect = SqlDialect::kSpark;
    auto r = Run(sql, o);
    if (!r.ok()) return "error: " + r.status().ToString();
    auto rows = Rows(*r);
    return rows.size() == 1 ? rows[0] : "rows: " + std::to_string(rows.size());
  };
  // Spark's documented example: the SQL text '(\\d+)', whose value is (\d+).
  EXPECT_EQ(spark("SELECT regexp_replace('100-200', '(\\\\d+)', 'num')"), "num-num");
  EXPECT_EQ(spark("SELECT regexp_replace('a1b22c', '[0-9]+', '#')"), "a#b#c");
  EXPECT_EQ(spark("SELECT regexp_replace('abcb', '(b)', '<$1>', 1)"), "a<b>c<b>");
  EXPECT_EQ(spark("SELECT regexp_replace(NULL, 'b', 'x')"), "null");
  EXPECT_NE(spark("SELECT regexp_replace('abcb', 'b', 'x', 3)").find("position other than the constant 1"),
            std::string::npos);
  EXPECT_EQ(V("SELECT regexp_replace('a1b22c', '[0-9]+', '#')"), "a#b22c");  // postgres: the first only
  for (const char* sql :
       {"SELECT current_date() = current_date", "SELECT current_date ( ) = CURRENT_DATE",
        "SELECT current_timestamp() = current_timestamp", "SELECT date_add(current_date(), 1) > current_date()"}) {
    EXPECT_EQ(spark(sql), "true") << sql;
    EXPECT_EQ(V(sql), "true") << sql;
  }
  // Inside strings and quoted names the words are left alone.
  EXPECT_EQ(spark("SELECT 'current_date()'"), "current_date()");
}

// Spark's substr positions (its docs: substr('Spark SQL', 5, 1) is 'k',
// substr('Spark SQL', -3) is 'SQL'; 0 is the first character, a negative
// length gives '') and concat (NULL when an argument is), against
// PostgreSQL's in the postgres dialect.
TEST_F(FunctionsTest, SparkSubstrPositionsAndConcatNulls) {
  auto spark = [&](const std::string& sql) {
    ExecuteOptions o = Options();
    o.dialect = SqlDialect::kSpark;
    auto r = Run(sql, o);
    if (!r.ok()) return "error: " + r.status().ToString();
    auto rows = Rows(*r, /*sorted=*/false);
    std::string all;
    for (const auto& row : rows) all += (all.empty() ? "" : ";") + row;
    return all;
  };
  EXPECT_EQ(spark("SELECT substr('Spark SQL', 5), substr('Spark SQL', -3), substr('Spark SQL', 5, 1)"), "k SQL|SQL|k");
  EXPECT_EQ(spark("SELECT substr('Spark SQL', 0, 2), substr('Spark SQL', -5, 3), substr('Spark SQL', -20, 13)"),
            "Sp|k S|Sp");
  EXPECT_EQ(spark("SELECT substring('héllo', -4, 2), substr('abc', 2, -1), substr('abc', 9)"), "él||");
  EXPECT_EQ(spark("SELECT substr(s, p, n) FROM (VALUES (1, 'Spark SQL', -3, 2), (2, 'abc', 0, 1), (3, 'abc', NULL, 1), "
                  "(4, NULL, 1, 1), (5, 'abc', 2, NULL), (6, 'abc', -1, 5)) t(i, s, p, n) ORDER BY i"),
            "SQ;a;null;null;null;c");
  EXPECT_EQ(V("SELECT substr('Spark SQL', 0, 2)"), "S");  // postgres: positions 0 and 1
  EXPECT_EQ(V("SELECT substr('Spark SQL', -3)"), "Spark SQL");
  EXPECT_EQ(State("SELECT substr('abc', 2, -1)"), "22011");
  EXPECT_EQ(spark("SELECT concat('Spark', 'SQL'), concat('a', NULL), concat('a', 1, DATE '2024-01-02'), 'a' || NULL"),
            "SparkSQL|null|a12024-01-02|null");
  EXPECT_EQ(V("SELECT concat('a', NULL, 'b')"), "ab");  // postgres: NULL arguments skipped
  // A value's text is Spark's in the spark dialect: a DOUBLE keeps its .0
  // (CAST(1.0E0 AS STRING) is '1.0'), as concat and || do in Spark.
  EXPECT_EQ(spark("SELECT concat('x', exp(0)), 'x' || CAST(2 AS DOUBLE), concat('y', CAST(1.5E10 AS DOUBLE)), "
                  "lpad(CAST(1 AS DOUBLE), 5, '*')"),
            "x1.0|x2.0|y1.5E10|**1.0");
  // postgres dialect: PostgreSQL's text (DuckDB writes 1.0 and 2.0).
  EXPECT_EQ(V("SELECT concat('x', exp(0)), 'x' || CAST(2 AS DOUBLE)"), "x1|x2");
  // Spark's left / right: '' for n <= 0 (postgres: all but the last / first -n).
  EXPECT_EQ(spark("SELECT left('Spark SQL', 3), left('Spark SQL', -2), right('Spark SQL', 0), right('abc', -1), "
                  "left(NULL, 1), left('abc', NULL)"),
            "Spa||||null|null");
  EXPECT_EQ(V("SELECT left('Spark SQL', -2), right('abc', -1)"), "Spark S|bc");
}

// upper / lower / initcap map every code point (Unicode's simple
// mappings), not ASCII letters only: lower('ÄΒΓ') is 'äβγ' in both
// dialects, as DuckDB, PostgreSQL and Spark answer it.
TEST_F(FunctionsTest, CaseMappingIsUnicode) {
  EXPECT_EQ(V("SELECT lower('ÄB'), upper('äb'), lower('ΑΒΓ'), upper('éa'), upper('привет')"), "äb|ÄB|αβγ|ÉA|ПРИВЕТ");
  EXPECT_EQ(V("SELECT initcap('élan ÉLAN sPark')"), "Élan Élan Spark");
  EXPECT_EQ(V("SELECT upper('ß'), lower('İ'), upper(NULL), lower('')"), "ß|i|null|");  // one-to-one mappings only
  EXPECT_EQ(V("SELECT 'ÄRGER' ILIKE 'är%'"), "true");
  // Bytes that are not UTF-8 pass unchanged (a file's text is validated
  // elsewhere; a mapping never drops a byte).
  EXPECT_EQ(V("SELECT length(upper('abc'))"), "3");
}

}  // namespace
}  // namespace quiver::sql
