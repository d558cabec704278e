// Tests of the date and time functions of issue 37: values from Spark SQL's
// documented examples, NULL arguments and errors (date_functions.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

class DateFunctionsTest : public SqlTest {
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

TEST_F(DateFunctionsTest, DateFunctions) {
  // Spark's documented examples
  EXPECT_EQ(V("SELECT date_add('2016-07-30', 1)"), "2016-07-31");
  EXPECT_EQ(V("SELECT date_sub('2016-07-30', 1)"), "2016-07-29");
  EXPECT_EQ(V("SELECT datediff('2009-07-31', '2009-07-30')"), "1");
  EXPECT_EQ(V("SELECT datediff('2009-07-30', '2009-07-31')"), "-1");
  EXPECT_EQ(V("SELECT add_months('2016-08-31', 1)"), "2016-09-30");
  EXPECT_EQ(V("SELECT date_trunc('YEAR', '2015-03-05T09:32:05.359')"), "2015-01-01T00:00:00.000000");
  EXPECT_EQ(V("SELECT date_trunc('MM', '2015-03-05T09:32:05.359')"), "2015-03-01T00:00:00.000000");
  EXPECT_EQ(V("SELECT date_trunc('DD', '2015-03-05T09:32:05.359')"), "2015-03-05T00:00:00.000000");
  EXPECT_EQ(V("SELECT date_trunc('HOUR', '2015-03-05T09:32:05.359')"), "2015-03-05T09:00:00.000000");
  EXPECT_EQ(V("SELECT date_trunc('week', DATE '2024-03-10')"), "2024-03-04T00:00:00.000000");
  EXPECT_EQ(V("SELECT year('2016-07-30')"), "2016");
  EXPECT_EQ(V("SELECT month('2016-07-30')"), "7");
  EXPECT_EQ(V("SELECT day('2009-07-30')"), "30");
  EXPECT_EQ(V("SELECT dayofweek('2009-07-30')"), "5");
  EXPECT_EQ(V("SELECT dayofweek(DATE '2024-01-07')"), "1");
  EXPECT_EQ(V("SELECT quarter('2016-08-31')"), "3");
  EXPECT_EQ(V("SELECT dayofyear('2016-04-09')"), "100");
  EXPECT_EQ(V("SELECT hour('2009-07-30 12:58:59')"), "12");
  EXPECT_EQ(V("SELECT minute('2009-07-30 12:58:59')"), "58");
  EXPECT_EQ(V("SELECT second('2009-07-30 12:58:59')"), "59");
  EXPECT_EQ(V("SELECT to_date('2009-07-30 04:17:52')"), "2009-07-30");
  EXPECT_EQ(V("SELECT to_date('2016-12-31', 'yyyy-MM-dd')"), "2016-12-31");
  EXPECT_EQ(V("SELECT to_date('31/12/2016', 'dd/MM/yyyy')"), "2016-12-31");
  EXPECT_EQ(V("SELECT to_date('Dec 5 2026', 'MMM d yyyy')"), "2026-12-05");
  EXPECT_EQ(V("SELECT to_timestamp('2016-12-31 00:12:00')"), "2016-12-31T00:12:00.000000");
  EXPECT_EQ(V("SELECT to_timestamp('2016-12-31', 'yyyy-MM-dd')"), "2016-12-31T00:00:00.000000");
  EXPECT_EQ(V("SELECT to_timestamp('12/31/2016 01:02:03 PM', 'MM/dd/yyyy hh:mm:ss a')"), "2016-12-31T13:02:03.000000");
  EXPECT_EQ(V("SELECT date_format('2016-04-08', 'y')"), "2016");
  EXPECT_EQ(V("SELECT date_format(TIMESTAMP '2016-04-08 13:05:09.25', 'yyyy-MM-dd HH:mm:ss.SSS')"),
            "2016-04-08 13:05:09.250");
  EXPECT_EQ(V("SELECT date_format(DATE '2016-04-08', 'EEE, d MMM yy')"), "Fri, 8 Apr 16");
  EXPECT_EQ(V("SELECT date_format(TIMESTAMP '2016-04-08 00:30:00', 'hh:mm a ''at'' MMMM')"), "12:30 AM at April");
  EXPECT_EQ(V("SELECT EXTRACT(QUARTER FROM DATE '2024-05-01')"), "2");
  EXPECT_EQ(V("SELECT last_day('2009-01-12')"), "2009-01-31");
  EXPECT_EQ(V("SELECT last_day(TIMESTAMP '2024-02-03 10:00:00')"), "2024-02-29");
  EXPECT_EQ(V("SELECT make_date(2013, 7, 15)"), "2013-07-15");
  EXPECT_EQ(V("SELECT make_date(2019, 7, NULL)"), "null");
  EXPECT_EQ(State("SELECT make_date(2019, 13, 1)"), "22008");
  EXPECT_EQ(State("SELECT make_date(2023, 2, 29)"), "22008");
  // one value per statement
  EXPECT_EQ(V("SELECT current_date = current_date AND current_timestamp = now()"), "true");
  EXPECT_EQ(V("SELECT CAST(current_timestamp AS DATE) = current_date"), "true");
  EXPECT_EQ(V("SELECT current_date > DATE '2024-01-01'"), "true");
  // NULL in, NULL out
  EXPECT_EQ(V("SELECT date_add(NULL, 1)"), "null");
  EXPECT_EQ(V("SELECT datediff(DATE '2020-01-01', NULL)"), "null");
  EXPECT_EQ(V("SELECT date_trunc('month', NULL)"), "null");
  EXPECT_EQ(V("SELECT to_date(NULL, 'yyyy')"), "null");
  EXPECT_EQ(V("SELECT date_format(NULL, 'yyyy')"), "null");
  EXPECT_EQ(V("SELECT hour(NULL)"), "null");
  // errors
  EXPECT_EQ(State("SELECT to_date('2016-13-01', 'yyyy-MM-dd')"), "22007");
  EXPECT_EQ(State("SELECT to_date('2016-02-30', 'yyyy-MM-dd')"), "22007");
  EXPECT_EQ(State("SELECT to_date('x', 'yyyy-MM-dd')"), "22007");
  EXPECT_EQ(State("SELECT date_format(DATE '2016-01-01', 'yyyy-QQ')"), "22023");
  EXPECT_EQ(State("SELECT date_trunc('fortnight', DATE '2016-01-01')"), "22023");
  EXPECT_NE(V("SELECT date_add('2016-07-30', 1.5)").find("cannot take"), std::string::npos);
}

TEST_F(DateFunctionsTest, DateFunctionsOverColumns) {
  const std::string from =
      " FROM (VALUES (CAST('2024-01-31' AS DATE), 1, '2024-01-31 10:00:00'), (CAST('1969-12-31' AS DATE), 2, NULL),"
      " (NULL, 3, '1999-12-31 23:59:59')) s(d, n, t) ";
  EXPECT_EQ(Rows(*Run("SELECT add_months(d, n)" + from + "ORDER BY n"), false),
            (std::vector<std::string>{"2024-02-29", "1970-02-28", "null"}));
  EXPECT_EQ(
      Rows(*Run("SELECT date_format(to_timestamp(t, 'yyyy-MM-dd HH:mm:ss'), 'dd.MM.yy HH')" + from + "ORDER BY n"),
           false),
      (std::vector<std::string>{"31.01.24 10", "null", "31.12.99 23"}));
  EXPECT_EQ(Rows(*Run("SELECT dayofweek(d), datediff(d, DATE '1970-01-01')" + from + "ORDER BY n"), false),
            (std::vector<std::string>{"4|19753", "4|-1", "null|null"}));
}

}  // namespace
}  // namespace quiver::sql
