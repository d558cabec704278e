// quiver/sql/expression/function_catalog.cc — see function_catalog.h. The
// texts follow the kernels (kernels.h, the binder's aggregate and window
// binding) and docs/sql.md; the examples are run by function_catalog_test.cc.
#include "quiver/sql/expression/function_catalog.h"

#include <algorithm>

namespace quiver::sql {

namespace {

using K = FunctionKind;

constexpr std::string_view kNullIn = "NULL if any argument is NULL";
constexpr std::string_view kSkips = "ignores NULL values; NULL when a group has none";
constexpr std::string_view kTextCast =
    "a number, date, timestamp or boolean argument is cast to VARCHAR (Spark's implicit cast; PostgreSQL refuses "
    "most)";
constexpr std::string_view kBadDate = "22007 text that is not a date or timestamp";
constexpr std::string_view kSparkLogNull = "spark dialect: NULL for x <= 0, as Spark";

// clang-format off
constexpr FunctionDoc kDocs[] = {
    // ---- scalar: strings ----
    {"upper", "", K::kScalar, "upper(s VARCHAR) -> VARCHAR",
     "s with every letter upper-cased (Unicode's one-to-one mappings: upper('ß') stays 'ß')", kNullIn, "", kTextCast,
     {{"SELECT upper('abc é')", "ABC É"}, {"SELECT upper(NULL)", "null"}}},
    {"lower", "", K::kScalar, "lower(s VARCHAR) -> VARCHAR",
     "s with every letter lower-cased (Unicode's one-to-one mappings)", kNullIn, "", kTextCast,
     {{"SELECT lower('AbC')", "abc"}, {"SELECT lower('ÄΒΓ')", "äβγ"}}},
    {"length", "char_length, character_length", K::kScalar, "length(s VARCHAR) -> BIGINT",
     "the number of UTF-8 characters of s", kNullIn, "", "",
     {{"SELECT length('héllo')", "5"}, {"SELECT char_length('')", "0"}}},
    {"trim", "btrim", K::kScalar, "trim(s VARCHAR[, chars VARCHAR]) -> VARCHAR; TRIM([BOTH] [chars] FROM s)",
     "s without leading and trailing spaces (or characters of chars)", kNullIn, "", "",
     {{"SELECT trim('  a b  ')", "a b"}, {"SELECT btrim('xxaxx', 'x')", "a"}}},
    {"ltrim", "", K::kScalar, "ltrim(s VARCHAR[, chars VARCHAR]) -> VARCHAR; TRIM(LEADING [chars] FROM s)",
     "s without leading spaces (or characters of chars)", kNullIn, "", "", {{"SELECT ltrim('  a ')", "a "}, {}}},
    {"rtrim", "", K::kScalar, "rtrim(s VARCHAR[, chars VARCHAR]) -> VARCHAR; TRIM(TRAILING [chars] FROM s)",
     "s without trailing spaces (or characters of chars)", kNullIn, "", "", {{"SELECT rtrim('xaxx', 'x')", "xa"}, {}}},
    {"substring", "substr", K::kScalar,
     "substring(s VARCHAR, start BIGINT[, count BIGINT]) -> VARCHAR; substring(s FROM start [FOR count])",
     "the characters of s from the 1-based position start, count of them (all when omitted)", kNullIn,
     "22011 a negative count (postgres dialect)",
     "spark dialect: Spark's positions (start < 0 counts from the end, substr('Spark SQL', -3) is 'SQL'; 0 is the "
     "first character; a negative count gives '')",
     {{"SELECT substring('quiver', 2, 3)", "uiv"}, {"SELECT substr('quiver', 4)", "ver"}}},
    {"concat", "", K::kScalar, "concat(a VARCHAR, ...) -> VARCHAR", "the arguments joined (up to 64)",
     "skips NULL arguments (concat(NULL) is ''); the operator || gives NULL instead", "",
     "spark dialect: NULL when an argument is NULL, as Spark",
     {{"SELECT concat('a', NULL, 'b', 1)", "ab1"}, {"SELECT 'a' || NULL", "null"}}},
    {"concat_ws", "", K::kScalar, "concat_ws(sep VARCHAR, a VARCHAR, ...) -> VARCHAR",
     "the non-NULL arguments after sep joined by sep", "skips NULL arguments; NULL only when sep is NULL", "",
     "Spark also takes arrays: not supported", {{"SELECT concat_ws('-', 'a', NULL, 'b')", "a-b"}, {}}},
    {"replace", "", K::kScalar, "replace(s VARCHAR, from VARCHAR[, to VARCHAR]) -> VARCHAR",
     "every occurrence of from replaced by to (default ''); an empty from leaves s", kNullIn, "", "",
     {{"SELECT replace('banana', 'an', 'o')", "booa"}, {"SELECT replace('banana', 'a')", "bnn"}}},
    {"split_part", "", K::kScalar, "split_part(s VARCHAR, delimiter VARCHAR, n BIGINT) -> VARCHAR",
     "the n-th field of s (1-based; negative counts from the end); '' when out of range", kNullIn,
     "22023 n = 0", "DuckDB returns '' for n = 0",
     {{"SELECT split_part('a,b,c', ',', 2)", "b"}, {"SELECT split_part('a,b,c', ',', -1)", "c"}}},
    {"lpad", "", K::kScalar, "lpad(s VARCHAR, n BIGINT[, pad VARCHAR]) -> VARCHAR",
     "s padded on the left with repeats of pad (default ' ') to n characters, or cut to its first n", kNullIn,
     "54000 n over 67,108,864", "", {{"SELECT lpad('7', 3, '0')", "007"}, {"SELECT lpad('abcd', 2)", "ab"}}},
    {"rpad", "", K::kScalar, "rpad(s VARCHAR, n BIGINT[, pad VARCHAR]) -> VARCHAR",
     "s padded on the right with repeats of pad (default ' ') to n characters, or cut to its first n", kNullIn,
     "54000 n over 67,108,864", "", {{"SELECT rpad('ab', 4, 'xy')", "abxy"}, {}}},
    {"instr", "strpos, position", K::kScalar, "instr(s VARCHAR, sub VARCHAR) -> BIGINT; position(sub IN s)",
     "the 1-based character position of the first sub in s; 0 when absent", kNullIn, "", "",
     {{"SELECT instr('quiver', 'ver')", "4"}, {"SELECT position('z' IN 'quiver')", "0"}}},
    {"locate", "", K::kScalar, "locate(sub VARCHAR, s VARCHAR[, start BIGINT]) -> BIGINT",
     "the 1-based character position of the first sub in s at or after start (default 1); 0 when absent or start < 1",
     "NULL if sub or s is NULL; 0 for a NULL start (Spark)", "",
     "Spark's (an empty sub is found at 1); spark dialect: position(sub, s[, start]) is locate",
     {{"SELECT locate('bar', 'abcbarbar')", "4"}, {"SELECT locate('bar', 'abcbarbar', 5)", "7"}}},
    {"repeat", "", K::kScalar, "repeat(s VARCHAR, n BIGINT) -> VARCHAR", "s repeated n times ('' for n <= 0)", kNullIn,
     "54000 a result over 67,108,864 bytes", "", {{"SELECT repeat('123', 2)", "123123"}, {}}},
    {"reverse", "", K::kScalar, "reverse(s VARCHAR) -> VARCHAR", "the characters of s in reverse order", kNullIn, "",
     "Spark also reverses arrays: not supported", {{"SELECT reverse('Spark SQL')", "LQS krapS"}, {}}},
    {"translate", "", K::kScalar, "translate(s VARCHAR, from VARCHAR, to VARCHAR) -> VARCHAR",
     "each character of s found in from replaced by the character at its place in to, or removed when to is shorter",
     kNullIn, "", "", {{"SELECT translate('AaBbCc', 'abc', '123')", "A1B2C3"}, {"SELECT translate('abc', 'b', '')", "ac"}}},
    {"ascii", "", K::kScalar, "ascii(s VARCHAR) -> BIGINT", "the code point of the first character of s; 0 for ''",
     kNullIn, "", "", {{"SELECT ascii('234')", "50"}, {"SELECT ascii('')", "0"}}},
    {"chr", "char", K::kScalar, "chr(n BIGINT) -> VARCHAR",
     "the character of Unicode code point n (PostgreSQL, DuckDB)", kNullIn,
     "22023 n not a code point (postgres dialect)",
     "spark dialect: '' for n < 0, else the character n mod 256 (Latin-1), as Spark; char(n) is Spark's name",
     {{"SELECT chr(65)", "A"}, {"SELECT chr(233)", "é"}}},
    {"left", "", K::kScalar, "left(s VARCHAR, n BIGINT) -> VARCHAR",
     "the first n characters of s; negative n: all but the last -n", kNullIn, "",
     "spark dialect: '' for n <= 0, as Spark", {{"SELECT left('quiver', 2)", "qu"}, {"SELECT left('quiver', -2)", "quiv"}}},
    {"right", "", K::kScalar, "right(s VARCHAR, n BIGINT) -> VARCHAR",
     "the last n characters of s; negative n: all but the first -n", kNullIn, "",
     "spark dialect: '' for n <= 0, as Spark", {{"SELECT right('quiver', 3)", "ver"}, {}}},
    {"initcap", "", K::kScalar, "initcap(s VARCHAR) -> VARCHAR",
     "each white-space-separated word's first letter upper-cased, the rest lower-cased (Unicode's one-to-one "
     "mappings)", kNullIn, "",
     "PostgreSQL also starts a word after any non-alphanumeric character",
     {{"SELECT initcap('sPark sql')", "Spark Sql"}, {}}},
    {"regexp_like", "rlike, regexp, regexp_matches", K::kScalar,
     "regexp_like(s VARCHAR, pattern VARCHAR[, flags VARCHAR]) -> BOOLEAN; rlike(s, pattern); s RLIKE pattern; s ~ pattern",
     "whether the RE2 pattern matches anywhere in s", kNullIn,
     "2201B a pattern RE2 refuses; 22023 an unknown flag (flags: i, c)", "DuckDB's ~ matches the whole string",
     {{"SELECT regexp_like('quiver', 'v.r')", "true"}, {"SELECT rlike('quiver', '^v')", "false"}}},
    {"regexp_replace", "", K::kScalar,
     "regexp_replace(s VARCHAR, pattern VARCHAR, replacement VARCHAR[, flags VARCHAR]) -> VARCHAR",
     "the first match replaced (flag g: every match); \\1..\\9 or $1..$9 name groups", kNullIn,
     "2201B a pattern RE2 refuses; 22023 an unknown flag",
     "spark dialect: every match replaced, as Spark; a fourth argument is Spark's start position (only the "
     "constant 1; another is 0A000)",
     {{"SELECT regexp_replace('a1b22', '[0-9]+', '#', 'g')", "a#b#"}, {"SELECT regexp_replace('a1b22', '[0-9]+', '#')", "a#b22"}}},
    {"regexp_extract", "", K::kScalar, "regexp_extract(s VARCHAR, pattern VARCHAR[, group BIGINT]) -> VARCHAR",
     "group (default 1; 0 the whole match) of the first match; '' when nothing matches", kNullIn,
     "2201B a pattern RE2 refuses; 22023 a group outside 0..(groups in pattern)", "DuckDB's default group is 0",
     {{"SELECT regexp_extract('k=42', '([a-z])=([0-9]+)', 2)", "42"}, {"SELECT regexp_extract('abc', 'x(y)')", ""}}},
    // ---- scalar: conditionals ----
    {"coalesce", "", K::kScalar, "coalesce(a T, ...) -> T (the arguments' common type)",
     "the first non-NULL argument", "skips NULL arguments; NULL only when all are",
     "Invalid when the arguments have no common type; 22P02 / 22007 a string literal that does not convert", "",
     {{"SELECT coalesce(NULL, 2, 3)", "2"}, {}}},
    {"ifnull", "nvl", K::kScalar, "ifnull(a T, b T) -> T", "coalesce(a, b): a unless it is NULL, then b",
     "b when a is NULL", "as coalesce", "", {{"SELECT nvl(NULL, 'x')", "x"}, {}}},
    {"nullif", "", K::kScalar, "nullif(a T, b T) -> T", "NULL when a = b, else a",
     "a NULL a gives NULL; a NULL b gives a", "Invalid when a and b do not compare", "",
     {{"SELECT nullif(1, 1)", "null"}, {"SELECT nullif(1, 2)", "1"}}},
    {"decode", "", K::kScalar, "decode(x T, key1 T, value1 U, ...[, default U]) -> U",
     "the value of the first key equal to x (NULL matches NULL), else default (NULL when absent)",
     "a NULL x matches a NULL key", "Invalid when x and a key do not compare; 0A000 two arguments",
     "Spark's (and Oracle's); decode(binary, charset) and PostgreSQL's decode(text, format) are not supported",
     {{"SELECT decode(5, 6, 'Spark', 5, 'SQL', 4, 'rocks')", "SQL"},
      {"SELECT decode(NULL, 6, 'Spark', NULL, 'SQL', 4, 'rocks')", "SQL"}}},
    {"nvl2", "", K::kScalar, "nvl2(a, b T, c T) -> T", "b when a is not NULL, else c", "a NULL a gives c", "", "",
     {{"SELECT nvl2(NULL, 'set', 'unset')", "unset"}, {}}},
    {"if", "iff", K::kScalar, "if(cond BOOLEAN, a T, b T) -> T", "a when cond is true, else b",
     "a NULL cond gives b", "Invalid when cond is not BOOLEAN", "", {{"SELECT if(1 < 2, 'yes', 'no')", "yes"}, {}}},
    {"greatest", "", K::kScalar, "greatest(a T, ...) -> T", "the largest non-NULL argument (NaN above every number)",
     "skips NULL arguments; NULL only when all are",
     "Invalid when the types do not match; 22P02 a string literal that does not convert", "",
     {{"SELECT greatest(3, NULL, 7, 5)", "7"}, {}}},
    {"least", "", K::kScalar, "least(a T, ...) -> T", "the smallest non-NULL argument",
     "skips NULL arguments; NULL only when all are",
     "Invalid when the types do not match; 22P02 a string literal that does not convert", "",
     {{"SELECT least('b', 'a', 'c')", "a"}, {}}},
    // ---- scalar: numbers ----
    {"abs", "", K::kScalar, "abs(x NUMBER) -> BIGINT for an integer x, else the type of x", "the absolute value of x",
     kNullIn, "22003 abs of the smallest BIGINT", "", {{"SELECT abs(-4.5)", "4.5"}, {}}},
    {"round", "", K::kScalar, "round(x NUMBER[, digits INTEGER]) -> the type of x (DECIMAL(p+1, s'))",
     "x rounded half away from zero to digits places (default 0; negative rounds left of the point)", kNullIn, "",
     "", {{"SELECT round(2.345, 2)", "2.35"}, {"SELECT round(104.3, -1)", "100"}}},
    {"mod", "", K::kScalar, "mod(a NUMBER, b NUMBER) -> as a % b", "the remainder of a / b (sign of a)", kNullIn,
     "22012 b = 0 (integers and decimals)", "", {{"SELECT mod(-7, 3)", "-1"}, {}}},
    {"floor", "", K::kScalar, "floor(x NUMBER) -> x itself for an integer x, else DOUBLE",
     "the largest whole number not above x", kNullIn, "", "", {{"SELECT floor(-1.5)", "-2"}, {}}},
    {"ceil", "ceiling", K::kScalar, "ceil(x NUMBER) -> x itself for an integer x, else DOUBLE",
     "the smallest whole number not below x", kNullIn, "", "", {{"SELECT ceil(1.2)", "2"}, {}}},
    {"sqrt", "", K::kScalar, "sqrt(x NUMBER) -> DOUBLE", "the square root of x", kNullIn, "2201F x < 0", "",
     {{"SELECT sqrt(16)", "4"}, {}}},
    {"ln", "", K::kScalar, "ln(x NUMBER) -> DOUBLE", "the natural logarithm of x", kNullIn, "2201E x <= 0",
     kSparkLogNull, {{"SELECT ln(1)", "0"}, {}}},
    {"log10", "", K::kScalar, "log10(x NUMBER) -> DOUBLE", "the base-10 logarithm of x", kNullIn, "2201E x <= 0",
     kSparkLogNull, {{"SELECT log10(10)", "1"}, {}}},
    {"log2", "", K::kScalar, "log2(x NUMBER) -> DOUBLE", "the base-2 logarithm of x", kNullIn, "2201E x <= 0",
     kSparkLogNull, {{"SELECT log2(2)", "1"}, {}}},
    {"log", "", K::kScalar, "log(base NUMBER, x NUMBER) -> DOUBLE; log(x NUMBER) -> DOUBLE",
     "the logarithm of x to base (ln(x) / ln(base)); log(x): the base-10 logarithm (PostgreSQL, DuckDB)", kNullIn,
     "2201E base or x <= 0; 22012 base = 1 (Spark: Infinity or NaN)",
     "spark dialect: log(x) is ln(x), as Spark; NULL for an argument <= 0, as Spark",
     {{"SELECT log(10, 100)", "2"}, {"SELECT log(100)", "2"}}},
    {"cbrt", "", K::kScalar, "cbrt(x NUMBER) -> DOUBLE", "the cube root of x", kNullIn, "", "",
     {{"SELECT cbrt(27.0)", "3"}, {"SELECT cbrt(-8)", "-2"}}},
    {"sign", "signum", K::kScalar, "sign(x NUMBER) -> BIGINT (spark dialect: DOUBLE)",
     "-1, 0 or 1 as x is negative, zero or positive (NaN: 0)", kNullIn, "",
     "spark dialect: a DOUBLE, NaN for NaN, as Spark; DuckDB's is an integer (signum: Spark's name)",
     {{"SELECT sign(-40)", "-1"}, {"SELECT signum(0.5)", "1"}}},
    {"bround", "", K::kScalar, "bround(x NUMBER[, digits INTEGER]) -> as round",
     "x rounded half to even (banker's rounding) to digits places (default 0; negative rounds left of the point)",
     kNullIn, "0A000 digits not a constant", "Spark's; DuckDB's is round_even",
     {{"SELECT bround(2.5, 0)", "2"}, {"SELECT bround(2.25, 1)", "2.2"}}},
    {"pmod", "", K::kScalar, "pmod(a NUMBER, b NUMBER) -> as a % b",
     "the positive remainder of a / b: a % b, plus b when that is negative (Spark)", kNullIn,
     "22012 b = 0 (Spark's ANSI mode)", "Spark's; not in PostgreSQL or DuckDB",
     {{"SELECT pmod(10, 3)", "1"}, {"SELECT pmod(-10, 3)", "2"}}},
    {"exp", "", K::kScalar, "exp(x NUMBER) -> DOUBLE", "e raised to x", kNullIn, "", "", {{"SELECT exp(0)", "1"}, {}}},
    {"power", "pow", K::kScalar, "power(x NUMBER, y NUMBER) -> DOUBLE", "x raised to y", kNullIn, "", "",
     {{"SELECT power(2, 10)", "1024"}, {}}},
    // ---- scalar: dates and times ----
    {"date_trunc", "", K::kScalar, "date_trunc(unit VARCHAR, ts TIMESTAMP) -> TIMESTAMP",
     "ts truncated to unit: year, quarter, month, week (to Monday), day, hour, minute, second, millisecond, "
     "microsecond", kNullIn, "22023 another unit", "DuckDB returns a DATE for a DATE argument",
     {{"SELECT date_trunc('month', TIMESTAMP '2016-07-30 10:00:00')", "2016-07-01T00:00:00.000000"}, {}}},
    {"date_add", "", K::kScalar, "date_add(d DATE, n BIGINT) -> DATE", "d plus n days", kNullIn, kBadDate,
     "DuckDB's date_add takes an INTERVAL", {{"SELECT date_add(DATE '2016-07-30', 1)", "2016-07-31"}, {}}},
    {"date_sub", "", K::kScalar, "date_sub(d DATE, n BIGINT) -> DATE", "d minus n days", kNullIn, kBadDate, "",
     {{"SELECT date_sub('2016-07-30', 30)", "2016-06-30"}, {}}},
    {"datediff", "", K::kScalar, "datediff(end DATE, start DATE) -> BIGINT", "days from start to end", kNullIn,
     kBadDate, "Spark's argument order; DuckDB's datediff(part, start, end) takes a unit first",
     {{"SELECT datediff('2009-07-31', '2009-07-30')", "1"}, {}}},
    {"add_months", "", K::kScalar, "add_months(d DATE, n BIGINT) -> DATE",
     "d plus n months, clamped to the month's end", kNullIn, kBadDate, "",
     {{"SELECT add_months('2016-08-31', 1)", "2016-09-30"}, {}}},
    {"year", "", K::kScalar, "year(d DATE|TIMESTAMP) -> BIGINT", "the year of d", kNullIn, kBadDate, "",
     {{"SELECT year(DATE '2016-07-30')", "2016"}, {}}},
    {"quarter", "", K::kScalar, "quarter(d DATE|TIMESTAMP) -> BIGINT", "the quarter (1..4) of d", kNullIn,
     kBadDate, "", {{"SELECT quarter(DATE '2016-08-31')", "3"}, {}}},
    {"month", "", K::kScalar, "month(d DATE|TIMESTAMP) -> BIGINT", "the month (1..12) of d", kNullIn, kBadDate, "",
     {{"SELECT month(DATE '2016-07-30')", "7"}, {}}},
    {"day", "dayofmonth", K::kScalar, "day(d DATE|TIMESTAMP) -> BIGINT", "the day of the month of d", kNullIn,
     kBadDate, "", {{"SELECT dayofmonth(DATE '2016-07-30')", "30"}, {}}},
    {"dayofweek", "", K::kScalar, "dayofweek(d DATE|TIMESTAMP) -> BIGINT", "1 Sunday .. 7 Saturday", kNullIn,
     kBadDate, "DuckDB's is 0 Sunday .. 6 Saturday", {{"SELECT dayofweek(DATE '2009-07-30')", "5"}, {}}},
    {"dayofyear", "", K::kScalar, "dayofyear(d DATE|TIMESTAMP) -> BIGINT", "the day of the year (1..366) of d",
     kNullIn, kBadDate, "", {{"SELECT dayofyear(DATE '2016-04-09')", "100"}, {}}},
    {"hour", "", K::kScalar, "hour(ts TIMESTAMP) -> BIGINT", "the hour (0..23) of ts", kNullIn, kBadDate, "",
     {{"SELECT hour(TIMESTAMP '2009-07-30 12:58:59')", "12"}, {}}},
    {"minute", "", K::kScalar, "minute(ts TIMESTAMP) -> BIGINT", "the minute of ts", kNullIn, kBadDate, "",
     {{"SELECT minute(TIMESTAMP '2009-07-30 12:58:59')", "58"}, {}}},
    {"second", "", K::kScalar, "second(ts TIMESTAMP) -> BIGINT", "the whole seconds of ts", kNullIn, kBadDate, "",
     {{"SELECT second(TIMESTAMP '2009-07-30 12:58:59')", "59"}, {}}},
    {"to_date", "", K::kScalar, "to_date(s VARCHAR[, pattern VARCHAR]) -> DATE",
     "s read as a date (by Spark's datetime pattern when given)", kNullIn,
     "22007 text that does not match or names no day; 22023 an unknown pattern letter",
     "Spark without ANSI mode returns NULL instead of 22007",
     {{"SELECT to_date('2016-12-31')", "2016-12-31"}, {"SELECT to_date('31/12/2016', 'dd/MM/yyyy')", "2016-12-31"}}},
    {"to_timestamp", "", K::kScalar, "to_timestamp(s VARCHAR[, pattern VARCHAR]) -> TIMESTAMP",
     "s read as a timestamp (by Spark's datetime pattern when given)", kNullIn,
     "22007 text that does not match; 22023 an unknown pattern letter",
     "Spark without ANSI mode returns NULL instead of 22007",
     {{"SELECT to_timestamp('2016-12-31 00:12:00')", "2016-12-31T00:12:00.000000"}, {}}},
    {"date_format", "", K::kScalar, "date_format(ts TIMESTAMP, pattern VARCHAR) -> VARCHAR",
     "ts written by Spark's datetime pattern", kNullIn, "22023 an unknown pattern letter",
     "DuckDB's strftime takes % codes instead",
     {{"SELECT date_format(TIMESTAMP '2016-04-08 13:05:09.25', 'yyyy-MM-dd HH:mm:ss.SSS')", "2016-04-08 13:05:09.250"}, {}}},
    {"last_day", "", K::kScalar, "last_day(d DATE) -> DATE", "the last day of d's month", kNullIn, kBadDate, "",
     {{"SELECT last_day('2009-01-12')", "2009-01-31"}, {}}},
    {"make_date", "", K::kScalar, "make_date(year BIGINT, month BIGINT, day BIGINT) -> DATE", "that day", kNullIn,
     "22008 a year outside 1..9999 or a day the month lacks", "Spark without ANSI mode returns NULL",
     {{"SELECT make_date(2013, 7, 15)", "2013-07-15"}, {}}},
    {"trunc", "", K::kScalar, "trunc(d DATE, unit VARCHAR) -> DATE",
     "d truncated to unit: year (yyyy, yy), quarter, month (mm, mon), week (to Monday); any case", kNullIn,
     "0A000 a number (PostgreSQL's numeric trunc is not supported)", "Spark's; NULL for another unit, as Spark",
     {{"SELECT trunc('2019-08-04', 'week')", "2019-07-29"}, {"SELECT trunc('2015-10-27', 'JAHR')", "null"}}},
    {"weekofyear", "", K::kScalar, "weekofyear(d DATE|TIMESTAMP) -> BIGINT; EXTRACT(WEEK FROM d)",
     "the ISO 8601 week of d (1..53; weeks start on Monday, week 1 holds the year's first Thursday)", kNullIn,
     kBadDate, "", {{"SELECT weekofyear('2008-02-20')", "8"}, {"SELECT weekofyear(DATE '2021-01-01')", "53"}}},
    {"next_day", "", K::kScalar, "next_day(d DATE, day VARCHAR) -> DATE",
     "the first date later than d that falls on day (SU, SUN, SUNDAY, MO, ..., any case)", kNullIn,
     "22023 another day name (Spark's ANSI mode)", "Spark's; not in PostgreSQL or DuckDB",
     {{"SELECT next_day('2015-01-14', 'TU')", "2015-01-20"}, {}}},
    {"months_between", "", K::kScalar,
     "months_between(a TIMESTAMP, b TIMESTAMP[, round_off BOOLEAN]) -> DOUBLE",
     "the months from b to a: whole when the days of the month are equal or both the month's last, else counting "
     "31-day months; rounded to 8 digits unless round_off is false", kNullIn, kBadDate,
     "Spark's; not in PostgreSQL or DuckDB",
     {{"SELECT months_between('1997-02-28 10:30:00', '1996-10-30')", "3.94959677"},
      {"SELECT months_between(DATE '2024-03-31', DATE '2024-02-29')", "1"}}},
    {"unix_timestamp", "to_unix_timestamp", K::kScalar,
     "unix_timestamp([ts TIMESTAMP|DATE]) -> BIGINT; unix_timestamp(s VARCHAR[, pattern VARCHAR])",
     "the whole seconds from 1970-01-01 00:00:00 UTC to ts (the statement's start without arguments), s read by "
     "Spark's datetime pattern (default yyyy-MM-dd HH:mm:ss)", kNullIn,
     "22007 text that does not match; 22023 an unknown pattern letter",
     "Spark's; times are UTC (Spark's session time zone)",
     {{"SELECT unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "1460073600"},
      {"SELECT to_unix_timestamp(TIMESTAMP '1970-01-01 00:01:00')", "60"}}},
    {"from_unixtime", "", K::kScalar, "from_unixtime(seconds BIGINT[, pattern VARCHAR]) -> VARCHAR",
     "the time seconds after 1970-01-01 00:00:00 UTC written by Spark's datetime pattern (default yyyy-MM-dd "
     "HH:mm:ss)", kNullIn, "22023 an unknown pattern letter; 22008 seconds outside the timestamp range",
     "Spark's; times are UTC (Spark's session time zone)",
     {{"SELECT from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", "1970-01-01 00:00:00"},
      {"SELECT from_unixtime(1460073600)", "2016-04-08 00:00:00"}}},
    // ---- scalar: special forms ----
    {"cast", "", K::kScalar,
     "CAST(x AS type) -> type; x::type (INTEGER, BIGINT, DOUBLE, DECIMAL(p,s), VARCHAR, DATE, TIMESTAMP, BOOLEAN)",
     "x converted to type", "NULL in, NULL out",
     "22P02 text that is not a number; 22007 text that is not a date; 22003 a value out of the type's range; "
     "0A000 an unsupported pair of types",
     "spark dialect: Spark SQL's ANSI cast rules (a number to an integer truncates toward zero; text that is not a "
     "number is 22018); postgres dialect: PostgreSQL's", {{"SELECT CAST('42' AS BIGINT) + 1", "43"}, {"SELECT '2016-07-30'::date", "2016-07-30"}}},
    {"try_cast", "", K::kScalar, "try_cast(x AS type) -> type", "CAST, but NULL where the cast fails",
     "NULL in, NULL out; NULL for a value the type cannot hold", "", "the cast rules are the dialect's, as CAST's",
     {{"SELECT try_cast('x' AS BIGINT)", "null"}, {"SELECT try_cast('42' AS BIGINT)", "42"}}},
    {"extract", "date_part", K::kScalar,
     "EXTRACT(field FROM d DATE|TIMESTAMP) -> BIGINT; date_part('field', d) (field: YEAR, QUARTER, MONTH, DAY, DOY, "
     "WEEK (ISO 8601), HOUR, MINUTE, SECOND)", "the field of d", kNullIn, "0A000 another field", "",
     {{"SELECT EXTRACT(YEAR FROM DATE '2016-07-30')", "2016"}, {"SELECT date_part('doy', DATE '2016-02-01')", "32"}}},
    {"current_date", "", K::kScalar, "current_date -> DATE; current_date()",
     "the statement's start date in UTC, the same for every use in a statement", "no arguments", "", "",
     {{"SELECT current_date = CAST(current_timestamp AS DATE)", "true"}, {}}},
    {"current_timestamp", "now", K::kScalar, "current_timestamp -> TIMESTAMP; now()",
     "the statement's start in UTC, the same for every use in a statement", "no arguments", "", "",
     {{"SELECT now() = current_timestamp", "true"}, {}}},
    // ---- aggregates ----
    {"count", "", K::kAggregate,
     "count(*) -> BIGINT; count([DISTINCT] x) -> BIGINT; count(DISTINCT x, y, ...) -> BIGINT",
     "the rows (count(*)), the non-NULL values of x, or the distinct tuples of non-NULL values",
     "ignores NULL values (a tuple with a NULL); 0 for no rows", "",
     "count(DISTINCT x, y, ...) is Spark's; DuckDB and PostgreSQL take one argument",
     {{"SELECT count(*), count(x) FROM (VALUES (1), (NULL)) v(x)", "2|1"},
      {"SELECT count(DISTINCT x, y) FROM (VALUES (1, 'a'), (1, 'a'), (1, NULL), (2, 'a')) v(x, y)", "2"}}},
    {"sum", "", K::kAggregate, "sum([DISTINCT] x NUMBER) -> DECIMAL(38,s) for integers and decimals, DOUBLE for doubles",
     "the sum of the values", kSkips, "22003 overflow of DECIMAL(38)", "Spark's sum of BIGINT is a BIGINT",
     {{"SELECT sum(x) FROM (VALUES (1), (2), (NULL)) v(x)", "3"}, {}}},
    {"avg", "mean", K::kAggregate, "avg([DISTINCT] x NUMBER) -> DECIMAL for integers and decimals, DOUBLE for doubles",
     "the mean of the values", kSkips, "", "",
     {{"SELECT avg(x) FROM (VALUES (1.0), (2.0), (NULL)) v(x)", "1.5"}, {}}},
    {"min", "", K::kAggregate, "min(x T) -> T", "the smallest value", kSkips, "", "",
     {{"SELECT min(x) FROM (VALUES ('b'), ('a'), (NULL)) v(x)", "a"}, {}}},
    {"max", "", K::kAggregate, "max(x T) -> T", "the largest value", kSkips, "", "",
     {{"SELECT max(x) FROM (VALUES (1), (5), (NULL)) v(x)", "5"}, {}}},
    {"var_samp", "variance", K::kAggregate, "var_samp([DISTINCT] x NUMBER) -> DOUBLE",
     "the sample (n - 1) variance (Welford's update, Chan's merge)", "ignores NULL values; NULL for fewer than two",
     "Invalid for a non-numeric x", "DuckDB errors on infinite input; quiver gives NaN / infinity",
     {{"SELECT var_samp(x) FROM (VALUES (1), (2), (3)) v(x)", "1"}, {}}},
    {"var_pop", "", K::kAggregate, "var_pop([DISTINCT] x NUMBER) -> DOUBLE", "the population (n) variance", kSkips,
     "Invalid for a non-numeric x", "", {{"SELECT var_pop(x) FROM (VALUES (1), (3)) v(x)", "1"}, {}}},
    {"stddev_samp", "stddev, std", K::kAggregate, "stddev_samp([DISTINCT] x NUMBER) -> DOUBLE",
     "the square root of var_samp", "ignores NULL values; NULL for fewer than two", "Invalid for a non-numeric x", "",
     {{"SELECT stddev(x) FROM (VALUES (2), (4), (6)) v(x)", "2"}, {}}},
    {"stddev_pop", "", K::kAggregate, "stddev_pop([DISTINCT] x NUMBER) -> DOUBLE", "the square root of var_pop",
     kSkips, "Invalid for a non-numeric x", "", {{"SELECT stddev_pop(x) FROM (VALUES (1), (3)) v(x)", "1"}, {}}},
    {"count_if", "", K::kAggregate, "count_if(b BOOLEAN) -> BIGINT", "the rows where b is true",
     "ignores NULL values; 0 for no rows", "Invalid for a non-BOOLEAN b", "DuckDB's is NULL for no rows",
     {{"SELECT count_if(x > 1) FROM (VALUES (1), (2), (3), (NULL)) v(x)", "2"}, {}}},
    {"bool_and", "every", K::kAggregate, "bool_and(b BOOLEAN) -> BOOLEAN", "whether every value is true", kSkips,
     "Invalid for a non-BOOLEAN b", "", {{"SELECT bool_and(x > 0) FROM (VALUES (1), (2)) v(x)", "true"}, {}}},
    {"bool_or", "some, any", K::kAggregate, "bool_or(b BOOLEAN) -> BOOLEAN", "whether any value is true", kSkips,
     "Invalid for a non-BOOLEAN b", "some / any are reserved words of the grammar: quote them (\"some\"(b))",
     {{"SELECT bool_or(x > 1) FROM (VALUES (1), (2)) v(x)", "true"}, {}}},
    {"any_value", "", K::kAggregate, "any_value(x T[, ignore_nulls BOOLEAN]) -> T",
     "some row's value: the first the aggregate sees",
     "postgres dialect: ignores NULL values; spark dialect: a NULL is a value unless ignore_nulls is true", "", "",
     {{"SELECT any_value(x) FROM (VALUES (7), (7)) v(x)", "7"}, {}}},
    {"first", "first_value", K::kAggregate, "first(x T[, ignore_nulls BOOLEAN]) -> T",
     "the first row's value as the aggregate sees the rows (not fixed in parallel)",
     "a NULL is a value unless ignore_nulls is true", "0A000 with FILTER", "",
     {{"SELECT first(x, true) FROM (VALUES (NULL), (4)) v(x)", "4"}, {}}},
    {"last", "last_value", K::kAggregate, "last(x T[, ignore_nulls BOOLEAN]) -> T",
     "the last row's value as the aggregate sees the rows (not fixed in parallel)",
     "a NULL is a value unless ignore_nulls is true", "0A000 with FILTER", "",
     {{"SELECT last(x, true) FROM (VALUES (4), (NULL)) v(x)", "4"}, {}}},
    {"median", "", K::kAggregate, "median([DISTINCT] x NUMBER) -> DOUBLE", "percentile_cont(0.5) of x", kSkips,
     "Invalid for a non-numeric x", "DuckDB keeps a DECIMAL's type",
     {{"SELECT median(x) FROM (VALUES (1), (2), (10), (NULL)) v(x)", "2"}, {}}},
    {"percentile_cont", "percentile, quantile_cont", K::kAggregate,
     "percentile_cont(f DOUBLE) WITHIN GROUP (ORDER BY x NUMBER [DESC]) -> DOUBLE; percentile(x, f); quantile_cont(x, f)",
     "linear interpolation at (n - 1) f of the sorted values", kSkips,
     "Invalid for f not a numeric constant in [0, 1]; 0A000 a list of fractions", "DuckDB keeps a DECIMAL's type",
     {{"SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY x) FROM (VALUES (1), (2), (3), (4), (5)) v(x)", "2"},
      {"SELECT percentile(x, 0.5) FROM (VALUES (1), (2)) v(x)", "1.5"}}},
    {"percentile_disc", "percentile_approx, approx_percentile, quantile_disc", K::kAggregate,
     "percentile_disc(f DOUBLE) WITHIN GROUP (ORDER BY x T [DESC]) -> T; percentile_approx(x, f[, accuracy]); "
     "quantile_disc(x, f)",
     "the first value whose cumulative distribution reaches f (percentile_approx is exact here)", kSkips,
     "Invalid for f not a numeric constant in [0, 1] or an accuracy that is not a positive integer constant", "",
     {{"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1), (2), (3), (4)) v(x)", "2"},
      {"SELECT percentile_approx(x, 0.5) FROM (VALUES (0), (6), (7), (9), (10)) v(x)", "7"}}},
    {"string_agg", "listagg, group_concat", K::kAggregate,
     "string_agg([DISTINCT] x T[, sep VARCHAR] [ORDER BY key [ASC | DESC] [NULLS FIRST | LAST], ...]) -> VARCHAR; "
     "listagg(x[, sep]) [WITHIN GROUP (ORDER BY key [DESC], ...)]",
     "the values (as text) joined by sep (default ',' in the postgres dialect, '' in the spark dialect), in the "
     "order of the keys when given",
     kSkips, "42P10 DISTINCT with an order key other than the value",
     "Spark's default separator is ''; NULL keys sort as the dialect's ORDER BY",
     {{"SELECT string_agg(x, '-' ORDER BY x) FROM (VALUES ('b'), ('a'), (NULL)) v(x)", "a-b"},
      {"SELECT string_agg(x, ',' ORDER BY k DESC) FROM (VALUES ('a', 1), ('b', 3), ('c', 2)) v(x, k)", "b,c,a"}}},
    {"approx_count_distinct", "", K::kAggregate, "approx_count_distinct(x T[, rsd DOUBLE]) -> BIGINT",
     "the distinct values, estimated by a HyperLogLog sketch (default rsd 0.05)", "ignores NULL values; 0 for no rows",
     "Invalid for an rsd giving fewer than 2^4 or more than 2^16 registers",
     "DuckDB's estimates (another hash and estimator) differ beyond a few values",
     {{"SELECT approx_count_distinct(x) FROM (VALUES (1), (2), (2), (NULL)) v(x)", "2"}, {}}},
    {"grouping", "grouping_id", K::kAggregate, "grouping(col, ...) -> BIGINT (with GROUPING SETS, ROLLUP, CUBE)",
     "a bit per column, set when the row's grouping set does not group by it", "not applicable",
     "Invalid for an argument that is not a grouping column", "",
     {{"SELECT grouping(x) FROM (VALUES (1)) v(x) GROUP BY ROLLUP (x) ORDER BY 1", "0\n1"}, {}}},
    // ---- window functions (count, sum, avg, min and max also take OVER (...)) ----
    {"row_number", "", K::kWindow, "row_number() OVER (...) -> BIGINT", "the row's 1-based number in its partition",
     "no arguments", "", "", {{"SELECT row_number() OVER (ORDER BY x) FROM (VALUES (5), (3)) v(x) ORDER BY x", "1\n2"}, {}}},
    {"rank", "", K::kWindow, "rank() OVER (...) -> BIGINT", "1 + the rows before the row's peers (gaps after ties)",
     "no arguments", "", "",
     {{"SELECT rank() OVER (ORDER BY x) FROM (VALUES (1), (1), (2)) v(x) ORDER BY x", "1\n1\n3"}, {}}},
    {"dense_rank", "", K::kWindow, "dense_rank() OVER (...) -> BIGINT", "the rank without gaps after ties",
     "no arguments", "", "",
     {{"SELECT dense_rank() OVER (ORDER BY x) FROM (VALUES (1), (1), (2)) v(x) ORDER BY x", "1\n1\n2"}, {}}},
    {"percent_rank", "", K::kWindow, "percent_rank() OVER (...) -> DOUBLE", "(rank - 1) / (rows - 1); 0 for one row",
     "no arguments", "", "",
     {{"SELECT percent_rank() OVER (ORDER BY x) FROM (VALUES (1), (2), (3)) v(x) ORDER BY x", "0\n0.5\n1"}, {}}},
    {"cume_dist", "", K::kWindow, "cume_dist() OVER (...) -> DOUBLE",
     "the fraction of the partition's rows up to the row's last peer", "no arguments", "", "",
     {{"SELECT cume_dist() OVER (ORDER BY x) FROM (VALUES (1), (2)) v(x) ORDER BY x", "0.5\n1"}, {}}},
    {"ntile", "", K::kWindow, "ntile(n BIGINT) OVER (...) -> BIGINT", "the row's bucket (1..n) of n nearly equal ones",
     "Invalid for a NULL n", "Invalid for n < 1; 0A000 n not an integer constant", "",
     {{"SELECT ntile(2) OVER (ORDER BY x) FROM (VALUES (1), (2), (3)) v(x) ORDER BY x", "1\n1\n2"}, {}}},
    {"lag", "", K::kWindow, "lag(x T[, offset BIGINT[, default T]]) OVER (...) -> T",
     "x of the row offset (default 1) rows before, or default (NULL) past the partition's start",
     "a NULL x is returned as it is", "Invalid for a negative or NULL offset; 0A000 an offset not an integer constant",
     "", {{"SELECT lag(x, 1, 0) OVER (ORDER BY x) FROM (VALUES (1), (2)) v(x) ORDER BY x", "0\n1"}, {}}},
    {"lead", "", K::kWindow, "lead(x T[, offset BIGINT[, default T]]) OVER (...) -> T",
     "x of the row offset (default 1) rows after, or default (NULL) past the partition's end",
     "a NULL x is returned as it is", "Invalid for a negative or NULL offset; 0A000 an offset not an integer constant",
     "", {{"SELECT lead(x) OVER (ORDER BY x) FROM (VALUES (1), (2)) v(x) ORDER BY x", "2\nnull"}, {}}},
    {"first_value", "", K::kWindow, "first_value(x T) OVER (...) -> T", "x of the window frame's first row",
     "a NULL x is returned as it is", "", "Spark's first_value without OVER is the aggregate first",
     {{"SELECT first_value(x) OVER (ORDER BY x) FROM (VALUES (1), (2)) v(x) ORDER BY x", "1\n1"}, {}}},
    {"last_value", "", K::kWindow, "last_value(x T) OVER (...) -> T", "x of the window frame's last row",
     "a NULL x is returned as it is", "", "Spark's last_value without OVER is the aggregate last",
     {{"SELECT last_value(x) OVER (ORDER BY x) FROM (VALUES (1), (2)) v(x) ORDER BY x", "1\n2"}, {}}},
    {"nth_value", "", K::kWindow, "nth_value(x T, n BIGINT) OVER (...) -> T",
     "x of the window frame's n-th row; NULL when the frame is shorter", "a NULL x is returned as it is",
     "Invalid for n < 1 or NULL; 0A000 n not an integer constant", "",
     {{"SELECT nth_value(x, 2) OVER (ORDER BY x) FROM (VALUES (1), (2)) v(x) ORDER BY x", "null\n2"}, {}}},
};
// clang-format on

}  // namespace

std::string_view FunctionKindName(FunctionKind kind) {
  switch (kind) {
    case FunctionKind::kScalar: return "scalar";
    case FunctionKind::kAggregate: return "aggregate";
    case FunctionKind::kWindow: return "window";
  }
  return "scalar";
}

std::span<const FunctionDoc> FunctionCatalog() {
  static const std::vector<FunctionDoc> sorted = [] {
    std::vector<FunctionDoc> v(std::begin(kDocs), std::end(kDocs));
    std::stable_sort(v.begin(), v.end(), [](const FunctionDoc& a, const FunctionDoc& b) { return a.name < b.name; });
    return v;
  }();
  return sorted;
}

std::vector<std::string_view> AliasesOf(const FunctionDoc& doc) {
  std::vector<std::string_view> out;
  std::string_view rest = doc.aliases;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    if (!one.empty()) out.push_back(one);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<std::string> FunctionNames() {
  std::vector<std::string> names;
  for (const FunctionDoc& d : FunctionCatalog()) {
    names.emplace_back(d.name);
    for (std::string_view a : AliasesOf(d)) names.emplace_back(a);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<const FunctionDoc*> FindFunctionDocs(std::string_view name) {
  std::vector<const FunctionDoc*> out;
  for (const FunctionDoc& d : FunctionCatalog()) {
    bool match = d.name == name;
    for (std::string_view a : AliasesOf(d)) match = match || a == name;
    if (match) out.push_back(&d);
  }
  return out;
}

}  // namespace quiver::sql
