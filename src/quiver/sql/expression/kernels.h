// quiver/sql/expression/kernels.h — the scalar kernels behind Evaluate (one
// per type family and function; internal to quiver/sql/expression).
// Each takes its evaluated arguments (Vecs of `rows` rows or constants)
// and returns a Vec of the call's result type (e.type). When every
// argument is constant the result is a constant.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "quiver/sql/expression/evaluate.h"

namespace quiver::sql::kernels {

Result<Vec> Arithmetic(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Compare(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Logic(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> InList(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Like(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> StringFunction(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Cast(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Temporal(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Conditional(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// replace, split_part, lpad / rpad, instr, concat_ws, left / right,
/// initcap (string_edit.cc).
Result<Vec> StringEdit(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// locate / position with a start, repeat, reverse, translate, ascii, chr
/// (string_chars.cc). Errors: 54000 a repeat past 2^26 bytes, 22023 a chr
/// of no code point (the postgres dialect's).
Result<Vec> StringChars(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// ~ / rlike / regexp_like, regexp_replace, regexp_extract (regexp.cc, RE2).
Result<Vec> Regexp(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// greatest / least over arguments of one type (greatest_least.cc).
Result<Vec> Extreme(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// date_trunc, quarter / dayofweek / dayofyear / weekofyear / hour / minute
/// / second, to_date / to_timestamp with a pattern, date_format, last_day,
/// make_date, trunc, next_day, months_between, unix_timestamp,
/// from_unixtime (date_functions.cc). Errors: 22007 text that does not
/// match its pattern, 22023 an unknown date_trunc unit, day name or pattern
/// letter, 22008 no such date.
Result<Vec> DateFunction(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// Fn::kOrderedValue (order_key.h's encoding; order_key.cc).
Result<Vec> OrderedValue(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// OK when `unit` is a date_trunc unit; else Invalid 22023 naming them.
Status CheckDateTruncUnit(std::string_view unit);
/// OK when `name` names a day of the week for next_day ('MO', 'MON',
/// 'MONDAY', ..., any case); else Invalid 22023 naming them.
Status CheckDayName(std::string_view name);
/// Spark's default pattern of unix_timestamp and from_unixtime.
inline constexpr std::string_view kDefaultDatetimePattern = "yyyy-MM-dd HH:mm:ss";
/// OK when `pattern` is a Spark datetime pattern quiver reads; else Invalid
/// 22023 naming the letter.
Status CheckDatetimePattern(std::string_view pattern);
/// A compiled regular expression (an RE2 object) for Expr::aux, built by the
/// binder when the pattern and flags are constants. `flags`: the letters of
/// regexp_replace / regexp_like ('i' case-insensitive, 'c' case-sensitive,
/// 'g' every match: accepted, used by the kernel). Errors: Invalid 2201B for
/// a pattern RE2 rejects (naming RE2's reason), 22023 for an unknown flag.
Result<std::shared_ptr<const void>> CompileRegex(std::string_view pattern, std::string_view flags);
/// Bytes of the UTF-8 character led by `lead` (1 for a stray byte).
inline int Utf8CharBytes(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}
/// The rules a cast follows: PostgreSQL's (Fn::kCast / kTryCast, cast.cc)
/// or Spark SQL's ANSI mode (Fn::kSparkCast / kSparkTryCast, spark_cast.h).
enum class CastRules : uint8_t { kPostgres, kSpark };
/// The rules of a cast call `fn` (kCast, kTryCast, kSparkCast, kSparkTryCast).
inline CastRules CastRulesOf(Fn fn) {
  return fn == Fn::kSparkCast || fn == Fn::kSparkTryCast ? CastRules::kSpark : CastRules::kPostgres;
}
/// Whether cast call `fn` gives NULL where the cast fails (try_cast).
inline bool IsTryCast(Fn fn) { return fn == Fn::kTryCast || fn == Fn::kSparkTryCast; }
/// Whether a failed cast's `st` is a data exception (SQLSTATE class 22:
/// malformed text, out of range), which try_cast turns into NULL; other
/// errors (a pair of types that cannot be cast) stay errors.
inline bool IsCastDataError(const Status& st) { return st.sql_state().rfind("22", 0) == 0; }
/// Cast of one value (constant folding, literals): same rules as Cast.
Result<Value> CastValue(const Value& v, const DataTypePtr& to, CastRules rules = CastRules::kPostgres);
/// Numeric text, [+-]digits[.digits][e[+-]digits] with blanks around, as an
/// unscaled value at `scale`, rounded half away from zero. False when it is
/// not a number, or (with *overflow set) when it does not fit 128 bits.
bool ParseExactText(std::string_view s, int scale, i128* out, bool* overflow);
/// The hashed item set of a constant IN list (Expr::aux), built by the binder.
std::shared_ptr<const void> MakeInSet(const DataTypePtr& probe_type, const std::vector<Value>& items);
/// The items a set of MakeInSet was built from, as given (NULLs included).
/// `aux`: an Expr::aux of a constant IN list. Valid while `aux` lives.
const std::vector<Value>& InSetItems(const void* aux);
/// Picks, for each row r, row index[r] of results[branch[r]] (CASE: each
/// branch evaluated over the rows that take it). Every result has `type`
/// (or is an untyped NULL constant).
Result<Vec> MergeBranches(const DataTypePtr& type, const std::vector<int32_t>& branch,
                          const std::vector<int64_t>& index, const std::vector<Vec>& results, int64_t rows,
                          MemoryPool* pool);

}  // namespace quiver::sql::kernels
