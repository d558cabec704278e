// quiver/sql/expression/function_registry.h — typing of SQL calls: the
// named scalar functions the binder knows (one registry entry each: name,
// arity, Fn), and the type rules of every operator and function — which
// argument types are accepted, which casts are inserted, what the result
// type is. A new function is one entry here plus its kernel (kernels.h).
//
// Result types (documented SQL semantics):
//   BIGINT op BIGINT (+ - * / %)  -> BIGINT (INTEGER widens; `/` truncates,
//                                    as PostgreSQL; overflow is 22003)
//   DECIMAL(p1,s1) +/- DECIMAL(p2,s2) -> DECIMAL(max(p1-s1,p2-s2)+max(s1,s2)+1, max(s1,s2))
//   DECIMAL * DECIMAL            -> DECIMAL(p1+p2, s1+s2)
//   DECIMAL / DECIMAL            -> DECIMAL(38, max(s1, 12)) (rounded half away from zero)
//   (an integer operand counts as DECIMAL(19,0) / (10,0); precision capped at 38)
//   anything with DOUBLE         -> DOUBLE
//   DATE +/- BIGINT -> DATE; DATE - DATE -> BIGINT (days);
//   DATE +/- INTERVAL n DAY|MONTH|YEAR -> DATE (months clamp to the month's end)
//   EXTRACT(YEAR|MONTH|DAY ...) -> BIGINT; LENGTH -> BIGINT
//   comparisons: exact with exact at a common scale, DOUBLE with any
//   number, strings with strings, dates with timestamps, booleans with
//   booleans; a string literal compared with a date / number is cast to it.
//
// The spark dialect (SqlDialect::kSpark, Spark SQL's ANSI mode; Spark's
// "ANSI compliance" and Databricks' "SQL data type rules" pages) differs:
//   INTEGER op INTEGER (+ - * % mod, unary -, abs) -> INTEGER, overflow past
//                                    its range 22003 (2147483647 + 1 is an
//                                    error); with a BIGINT -> BIGINT
//   sum(BIGINT)                   -> BIGINT, overflow 22003 (bind_aggregate.cc)
//   STRING beside another type (comparison, IN, arithmetic, NULLIF, CASE,
//   COALESCE, greatest / least, UNION and VALUES columns; Databricks' "SQL
//   data type rules"): their least common type is BIGINT beside an integer,
//   DOUBLE beside a DECIMAL or DOUBLE, the type itself beside a DATE,
//   TIMESTAMP or BOOLEAN; the string, literal or not, is cast to it by
//   Spark's ANSI cast (spark_cast.h: '5' = 5 is true, coalesce(5, '6') is
//   BIGINT, DATE '2015-03-18' = '2015-03-18 12:00' is true; text that does
//   not convert is 22018). The implicit casts of CASE, COALESCE, greatest /
//   least, UNION and VALUES follow Spark's ANSI rules too (the date
//   functions' string arguments keep PostgreSQL's date input).
//
// Thread safety: the registry is immutable; functions are pure.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/sql/dialect.h"
#include "quiver/sql/expression/expr.h"

namespace quiver::sql {

/// A named scalar function (e.g. "upper").
struct FunctionEntry {
  std::string_view name;
  Fn fn;
  int min_args, max_args;
};

/// The entry for a lower-case function name, or nullptr.
const FunctionEntry* LookupFunction(std::string_view name);

/// As LookupFunction, but with `spark` the spark dialect's meaning of a
/// name whose Spark semantics differ from PostgreSQL's / DuckDB's (sign /
/// signum: Spark's DOUBLE instead of DuckDB's integer).
const FunctionEntry* LookupFunction(std::string_view name, bool spark);

/// Every entry of the registry (names and aliases), in registration order.
std::span<const FunctionEntry> ScalarFunctions();

/// Types a call of `fn` over bound `args` (inserting casts where needed) by
/// the rules of `dialect` (above), folding it to a constant when every
/// argument is constant.
/// Errors: Invalid naming the argument types ("operator '+' cannot take
/// VARCHAR and BIGINT"), NotImplemented for unsupported combinations; the
/// caller adds the position. Constant folding errors are the kernels'
/// (22012, 22003, 22018 for a string constant the spark dialect casts, ...).
Result<ExprPtr> BindCall(Fn fn, std::vector<ExprPtr> args, int location, bool negated = false,
                         SqlDialect dialect = SqlDialect::kPostgres);

/// A CASE (args: when, then, ..., else — else may be a NULL constant) with
/// the THEN / ELSE values cast to their common type (CommonType in `dialect`).
Result<ExprPtr> BindCase(std::vector<ExprPtr> args, int location, SqlDialect dialect = SqlDialect::kPostgres);

/// The type both `a` and `b` convert to (CASE, COALESCE, IN, UNION) in
/// `dialect` (above), or nullptr when there is none.
DataTypePtr CommonType(const DataTypePtr& a, const DataTypePtr& b, SqlDialect dialect = SqlDialect::kPostgres);

/// The cast an implicit conversion uses in `dialect`: Fn::kCast
/// (PostgreSQL's rules) or Fn::kSparkCast (Spark's ANSI rules).
inline Fn ImplicitCast(SqlDialect dialect) { return dialect == SqlDialect::kSpark ? Fn::kSparkCast : Fn::kCast; }

/// `e` cast to `type` (itself when it already has it; constants folded) by
/// the call `cast`: Fn::kCast (PostgreSQL's rules, what implicit casts
/// use), kSparkCast (Spark's ANSI rules), kTryCast / kSparkTryCast (NULL
/// where the value does not convert).
Result<ExprPtr> CastTo(const ExprPtr& e, const DataTypePtr& type, int location = -1, Fn cast = Fn::kCast);

/// The boolean form of a predicate: Invalid unless `e` is BOOLEAN (or NULL).
Status CheckBoolean(const Expr& e, std::string_view clause);

}  // namespace quiver::sql
