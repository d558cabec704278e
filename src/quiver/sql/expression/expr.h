// quiver/sql/expression/expr.h — bound SQL expressions: typed trees over
// column references, constants and function calls, evaluated a batch at a
// time (evaluate.h). The binder builds them with logical column ids; the
// physical planner rewrites the ids into positions of the operator's input
// batch (BindColumns) before execution.
//
// Thread safety: an Expr is immutable once built and shared
// (std::shared_ptr<const Expr>); evaluation keeps no state in it, except the
// run-once result of an uncorrelated scalar subquery (ScalarSubquery, which
// locks).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/sql/expression/vector.h"

namespace quiver::sql {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// Scalar functions and operators (the registry, function_registry.h,
/// maps SQL names to these and binds their types).
enum class Fn : uint8_t {
  // arithmetic
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kNeg,
  // comparison
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  // logic (three-valued)
  kAnd,
  kOr,
  kNot,
  kIsNull,
  kIsNotNull,
  // membership / patterns
  kInList,  ///< args[0] IN (args[1..]); constant lists are hashed
  kLike,    ///< args: value, pattern[, escape]; `negated` for NOT LIKE
  // conditional
  kCoalesce,
  kNullIf,
  // conversion
  kCast,  ///< args[0] to `type`
  // dates
  kAddDays,    ///< date + int days
  kAddMonths,  ///< date + int months (clamped to the month's end)
  kDateDiff,   ///< date - date = days (int64)
  kExtractYear,
  kExtractMonth,
  kExtractDay,
  // strings
  kSubstring,  ///< args: s, start (1-based)[, count]; characters (UTF-8)
  kUpper,
  kLower,
  kLength,
  kTrim,
  kLTrim,
  kRTrim,
  kConcat,
  // numbers
  kAbs,
  kRound,
  kFloor,  ///< floor(x): integers unchanged, otherwise DOUBLE
  kCeil,   ///< ceil(x) / ceiling(x): integers unchanged, otherwise DOUBLE
  kSqrt,   ///< DOUBLE; a negative argument is 2201F
  kLn,     ///< natural logarithm, DOUBLE; x <= 0 is 2201E
  kExp,    ///< e^x, DOUBLE
  kPower,  ///< power(x, y) / pow(x, y), DOUBLE
  // math (issue 37, Spark's library; arithmetic.cc)
  kLog10,      ///< log10(x), DOUBLE; x <= 0 is 2201E
  kLog2,       ///< log2(x), DOUBLE; x <= 0 is 2201E
  kLog,        ///< log(base, x) = ln(x) / ln(base), DOUBLE; 2201E a base or x <= 0, 22012 base 1
  kCbrt,       ///< cbrt(x): the cube root, DOUBLE
  kSign,       ///< sign(x) as a DOUBLE -1, 0, 1, NaN giving 0 (DuckDB; the binder casts it to BIGINT)
  kSparkSign,  ///< sign(x) / signum(x) in the spark dialect: DOUBLE -1, 0, 1, NaN giving NaN (Spark)
  kBround,     ///< bround(x[, d]): round half to even (Spark); types as kRound
  kPmod,       ///< pmod(a, b): the remainder of a / b, in [0, |b|) for b > 0 (Spark); types as kMod
  // strings (issue 37; string_edit.cc, regexp.cc)
  kReplace,        ///< replace(s, from[, to]): every occurrence; to defaults to ''
  kSplitPart,      ///< split_part(s, delimiter, n): n-th field (1-based; negative from the end)
  kRegexpLike,     ///< s ~ p / rlike / regexp_like(s, p[, flags]); `negated` for !~
  kRegexpReplace,  ///< regexp_replace(s, p, replacement[, flags]); 'g' every match
  kRegexpExtract,  ///< regexp_extract(s, p[, group]) (Spark: group 1 by default, '' without a match)
  kLpad,           ///< lpad(s, n[, pad]) to n characters (truncates to n)
  kRpad,           ///< rpad(s, n[, pad])
  kInstr,          ///< instr(s, sub) / strpos / position(sub IN s): 1-based character, 0 when absent
  kConcatWs,       ///< concat_ws(sep, ...): NULL arguments skipped
  kLeft,           ///< left(s, n): first n characters (n < 0: all but the last -n)
  kRight,          ///< right(s, n): last n characters (n < 0: all but the first -n)
  kInitcap,        ///< initcap(s): first letter of each space-separated word upper, the rest lower
  // strings of Spark's library (issue 37; string_chars.cc)
  kLocate,     ///< locate(sub, s[, start]) / position(sub, s[, start]) (Spark): 1-based; 0 absent, start < 1 or NULL
  kRepeat,     ///< repeat(s, n): s n times ('' for n <= 0); 54000 past 2^26 bytes
  kReverse,    ///< reverse(s): the characters in reverse order
  kTranslate,  ///< translate(s, from, to): characters of from replaced by those of to (removed past its end)
  kAscii,      ///< ascii(s): the code point of s's first character (0 for '')
  kChr,        ///< chr(n): the character of code point n (PostgreSQL, DuckDB); 22023 for no code point
  kSparkChr,   ///< chr(n) / char(n) in the spark dialect: '' for n < 0, else the character n mod 256
  kDecode,     ///< decode(x, k1, v1, ..., [default]) (Spark): bound as CASE, NULL matching NULL
  // conditional (issue 37)
  kGreatest,  ///< greatest(...): the largest non-NULL argument (NULL when all are)
  kLeast,     ///< least(...)
  kNvl2,      ///< nvl2(a, b, c): bound as CASE WHEN a IS NOT NULL THEN b ELSE c END
  kIf,        ///< if(cond, a, b): bound as CASE WHEN cond THEN a ELSE b END
  // dates and times (issue 37; date_functions.cc)
  kDateTrunc,       ///< date_trunc(unit, ts) -> TIMESTAMP
  kExtractQuarter,  ///< quarter(ts) 1..4
  kDayOfWeek,       ///< dayofweek(ts): 1 Sunday .. 7 Saturday (Spark)
  kDayOfYear,       ///< dayofyear(ts) 1..366
  kExtractHour,     ///< hour(ts)
  kExtractMinute,   ///< minute(ts)
  kExtractSecond,   ///< second(ts): whole seconds
  kToDate,          ///< to_date(s, pattern) (one argument: a cast)
  kToTimestamp,     ///< to_timestamp(s, pattern) (one argument: a cast)
  kDateFormat,      ///< date_format(ts, pattern) -> VARCHAR
  kLastDay,         ///< last_day(d): the last day of d's month, DATE
  kMakeDate,        ///< make_date(year, month, day) -> DATE (22008 when no such day)
  kTruncDate,       ///< trunc(d, unit) -> DATE (Spark): year, quarter, month, week; NULL for another unit
  kWeekOfYear,      ///< weekofyear(d): the ISO 8601 week (1..53)
  kNextDay,         ///< next_day(d, day name) -> DATE: the first later day of that name (22023 another name)
  kMonthsBetween,   ///< months_between(a, b[, round_off]) -> DOUBLE (Spark's: 31-day months)
  kUnixTimestamp,   ///< unix_timestamp(ts) / (s, pattern): whole seconds since the epoch, BIGINT
  kFromUnixtime,    ///< from_unixtime(seconds, pattern) -> VARCHAR
  // bound as other calls (never evaluated)
  kSparkDateAdd,    ///< date_add(d, n): DATE + n days
  kSparkDateSub,    ///< date_sub(d, n): DATE - n days
  kSparkDateDiff,   ///< datediff(end, start): days, BIGINT
  kSparkAddMonths,  ///< add_months(d, n): DATE, clamped to the month's end
  // conversion by other rules (issue 37; kernels.h CastRules)
  kSparkCast,     ///< args[0] to `type` by Spark SQL's ANSI rules (spark_cast.h)
  kTryCast,       ///< try_cast: as kCast, NULL where it fails
  kSparkTryCast,  ///< try_cast in the spark dialect: as kSparkCast, NULL where it fails
  // internal: built by the binder only, never by name (order_key.cc)
  kOrderedValue,  ///< (x, key1, flags1, ...): x's text behind its keys' order-preserving bytes
};

/// SQL spelling of a function for messages and EXPLAIN-like output.
const char* FnName(Fn fn);

/// An uncorrelated scalar subquery, run once per statement the first time
/// it is evaluated (its plan is built by the engine; see engine.cc).
class ScalarSubquery {
 public:
  using Runner = std::function<Result<Value>()>;
  explicit ScalarSubquery(Runner runner) : runner_(std::move(runner)) {}
  /// The value (runs the subquery on first use; later calls return the
  /// same value or error). Thread-safe.
  Result<Value> Get();

 private:
  std::mutex mutex_;
  Runner runner_;
  bool done_ = false;
  Status status_;
  Value value_;
};

struct Expr {
  enum class Kind : uint8_t {
    kColumn,    ///< `column`: a logical column id, or a batch position once bound
    kConstant,  ///< `value`
    kCall,      ///< `fn` over `args`
    kCase,      ///< args: when1, then1, ..., whenN, thenN, else
    kSubquery,  ///< `subquery`: an uncorrelated scalar subquery
  };
  Kind kind = Kind::kConstant;
  DataTypePtr type;  ///< the result type (canonical; boolean for predicates)
  int column = -1;
  Value value;
  Fn fn = Fn::kAdd;
  bool negated = false;  ///< kLike: NOT LIKE; kInList: NOT IN
  std::vector<ExprPtr> args;
  std::shared_ptr<ScalarSubquery> subquery;
  /// kInList with constant items: their hashed form (built when bound).
  std::shared_ptr<const void> aux;
  int location = -1;  ///< byte offset in the statement (messages)

  static ExprPtr Column(int column, DataTypePtr type, int location = -1);
  static ExprPtr Constant(Value v, int location = -1);
  static ExprPtr Call(Fn fn, std::vector<ExprPtr> args, DataTypePtr type, int location = -1);
};

/// Structural equality (kind, type, column, value, fn, args); subqueries
/// are equal only when they are the same object.
bool ExprEquals(const Expr& a, const Expr& b);
/// Calls `f` on every column reference's id in `e`.
void VisitColumns(const Expr& e, const std::function<void(int)>& f);
/// A copy of `e` with every column reference's id replaced by `map(id)`
/// (an error from `map` stops the rewrite).
Result<ExprPtr> RewriteColumns(const ExprPtr& e, const std::function<Result<int>(int)>& map);
/// A copy of `e` in which every subtree for which `f` returns non-null is
/// replaced by what it returns (top-down: replaced subtrees are not visited).
ExprPtr Transform(const ExprPtr& e, const std::function<ExprPtr(const ExprPtr&)>& f);
/// True when `e` is a constant expression (no columns, no subquery).
bool IsConstantExpr(const Expr& e);
/// Splits an AND tree into its conjuncts.
void SplitConjuncts(const ExprPtr& e, std::vector<ExprPtr>* out);
/// The AND of `terms` (TRUE when empty).
ExprPtr MakeAnd(const std::vector<ExprPtr>& terms);
/// Short human text of an expression (for messages).
std::string ExprToString(const Expr& e);
/// True when evaluating `e` can fail on some rows (division, cast,
/// overflowing arithmetic): CASE evaluates such branches only on the rows
/// that take them.
bool MayFail(const Expr& e);

}  // namespace quiver::sql
