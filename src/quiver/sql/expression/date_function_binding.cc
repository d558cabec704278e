// quiver/sql/expression/date_function_binding.cc — the types of the date
// and time functions of issue 37 (function_binding.h; the kernels are in
// date_functions.cc and cast.cc): which arguments each takes as a DATE or a
// TIMESTAMP (text and the other of the two cast), its units, day names and
// patterns checked when constant, its result type.
#include <string>

#include "quiver/sql/expression/function_binding.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {

namespace {

// `e` as a DATE (dates stay, timestamps and strings are cast: a string that
// is not a date is 22007); NULL stays NULL.
Result<ExprPtr> AsDate(Fn fn, const ExprPtr& e) {
  const TypeClass c = ClassOf(*e->type);
  if (c == TypeClass::kDate || c == TypeClass::kNull) return e;
  if (c == TypeClass::kTimestamp || c == TypeClass::kString) return CastTo(e, date32());
  return Status::Invalid(std::string("function ") + FnName(fn) + "() cannot take " + SqlTypeName(*e->type));
}

Result<ExprPtr> AsTimestamp(Fn fn, const ExprPtr& e) {
  const TypeClass c = ClassOf(*e->type);
  if (c == TypeClass::kTimestamp || c == TypeClass::kNull) return e;
  if (c == TypeClass::kDate || c == TypeClass::kString) return CastTo(e, timestamp(TimeUnit::kMicro));
  return Status::Invalid(std::string("function ") + FnName(fn) + "() cannot take " + SqlTypeName(*e->type));
}

Status CheckInteger(Fn fn, const ExprPtr& e) {
  const TypeClass c = ClassOf(*e->type);
  if (c == TypeClass::kInt || c == TypeClass::kNull) return Status::OK();
  return Status::Invalid(std::string("function ") + FnName(fn) + "() cannot take " + SqlTypeName(*e->type) +
                         " as a number of days or months");
}

}  // namespace

Result<ExprPtr> BindDateFunction(Fn fn, std::vector<ExprPtr> args, int location) {
  switch (fn) {
    case Fn::kSparkDateAdd:
    case Fn::kSparkDateSub:
    case Fn::kSparkAddMonths: {
      QUIVER_ASSIGN_OR_RETURN(args[0], AsDate(fn, args[0]));
      QUIVER_RETURN_NOT_OK(CheckInteger(fn, args[1]));
      if (IsNullType(args[0]->type) || IsNullType(args[1]->type))
        return Expr::Constant(Value::Null(date32()), location);
      if (fn == Fn::kSparkDateSub) {
        QUIVER_ASSIGN_OR_RETURN(args[1], BindCall(Fn::kNeg, {args[1]}, location));
      }
      return BindCall(fn == Fn::kSparkAddMonths ? Fn::kAddMonths : Fn::kAddDays, std::move(args), location);
    }
    case Fn::kSparkDateDiff: {
      for (auto& a : args) {
        QUIVER_ASSIGN_OR_RETURN(a, AsDate(fn, a));
        if (IsNullType(a->type)) return Expr::Constant(Value::Null(int64()), location);
      }
      return BindCall(Fn::kDateDiff, std::move(args), location);
    }
    default: break;
  }
  DataTypePtr type = int64();
  size_t pattern_arg = SIZE_MAX;
  switch (fn) {
    case Fn::kDateTrunc: {
      type = timestamp(TimeUnit::kMicro);
      if (ClassOf(*args[0]->type) != TypeClass::kString && !IsNullType(args[0]->type))
        return Status::Invalid("date_trunc() takes a unit name ('month', ...) as argument 1, not " +
                               SqlTypeName(*args[0]->type));
      if (args[0]->kind == Expr::Kind::kConstant && !args[0]->value.is_null)
        QUIVER_RETURN_NOT_OK(kernels::CheckDateTruncUnit(args[0]->value.s));
      QUIVER_ASSIGN_OR_RETURN(args[1], AsTimestamp(fn, args[1]));
      break;
    }
    case Fn::kToDate:
    case Fn::kToTimestamp: {
      type = fn == Fn::kToDate ? date32() : timestamp(TimeUnit::kMicro);
      if (args.size() == 1) {
        if (IsNullType(args[0]->type)) return Expr::Constant(Value::Null(type), location);
        return fn == Fn::kToDate ? AsDate(fn, args[0]) : AsTimestamp(fn, args[0]);
      }
      for (auto& a : args) {
        const TypeClass c = ClassOf(*a->type);
        if (c != TypeClass::kString && c != TypeClass::kNull)
          return Status::Invalid(std::string("function ") + FnName(fn) + "() with a pattern takes text, not " +
                                 SqlTypeName(*a->type));
      }
      pattern_arg = 1;
      break;
    }
    case Fn::kDateFormat: {
      type = utf8();
      QUIVER_ASSIGN_OR_RETURN(args[0], AsTimestamp(fn, args[0]));
      if (ClassOf(*args[1]->type) != TypeClass::kString && !IsNullType(args[1]->type))
        return Status::Invalid("date_format() takes a pattern as argument 2, not " + SqlTypeName(*args[1]->type));
      pattern_arg = 1;
      break;
    }
    case Fn::kLastDay: {
      type = date32();
      QUIVER_ASSIGN_OR_RETURN(args[0], AsDate(fn, args[0]));
      break;
    }
    case Fn::kTruncDate:
    case Fn::kNextDay: {
      type = date32();
      if (IsNumericClass(ClassOf(*args[0]->type)))
        return SqlError(StatusCode::kNotImplemented, "0A000",
                        std::string(FnName(fn)) + "() of a number (PostgreSQL's numeric trunc) is not supported");
      QUIVER_ASSIGN_OR_RETURN(args[0], AsDate(fn, args[0]));
      if (ClassOf(*args[1]->type) != TypeClass::kString && !IsNullType(args[1]->type))
        return Status::Invalid(std::string(FnName(fn)) + "() takes " +
                               (fn == Fn::kTruncDate ? "a unit" : "a day name") + " as argument 2, not " +
                               SqlTypeName(*args[1]->type));
      if (fn == Fn::kNextDay && args[1]->kind == Expr::Kind::kConstant && !args[1]->value.is_null)
        QUIVER_RETURN_NOT_OK(kernels::CheckDayName(args[1]->value.s));
      break;
    }
    case Fn::kMonthsBetween:
      type = float64();
      for (size_t k = 0; k < 2; ++k) {
        QUIVER_ASSIGN_OR_RETURN(args[k], AsTimestamp(fn, args[k]));
      }
      if (args.size() > 2 && ClassOf(*args[2]->type) != TypeClass::kBool && !IsNullType(args[2]->type))
        return Status::Invalid("months_between() takes a BOOLEAN round_off as argument 3, not " +
                               SqlTypeName(*args[2]->type));
      break;
    case Fn::kUnixTimestamp: {
      // text is read by the pattern (default Spark's 'yyyy-MM-dd HH:mm:ss');
      // a date or timestamp ignores it (Spark)
      const TypeClass c = ClassOf(*args[0]->type);
      if (c == TypeClass::kString) {
        if (args.size() < 2)
          args.push_back(Expr::Constant(Value::String(std::string(kernels::kDefaultDatetimePattern)), location));
        if (ClassOf(*args[1]->type) != TypeClass::kString && !IsNullType(args[1]->type))
          return Status::Invalid("unix_timestamp() takes a pattern as argument 2, not " + SqlTypeName(*args[1]->type));
        pattern_arg = 1;
      } else {
        args.resize(1);
        QUIVER_ASSIGN_OR_RETURN(args[0], AsTimestamp(fn, args[0]));
      }
      break;
    }
    case Fn::kFromUnixtime:
      type = utf8();
      if (ClassOf(*args[0]->type) != TypeClass::kInt && !IsNullType(args[0]->type))
        return Status::Invalid("from_unixtime() takes BIGINT seconds as argument 1, not " +
                               SqlTypeName(*args[0]->type));
      if (!IsNullType(args[0]->type)) {
        QUIVER_ASSIGN_OR_RETURN(args[0], CastTo(args[0], int64()));
      }
      if (args.size() < 2)
        args.push_back(Expr::Constant(Value::String(std::string(kernels::kDefaultDatetimePattern)), location));
      if (ClassOf(*args[1]->type) != TypeClass::kString && !IsNullType(args[1]->type))
        return Status::Invalid("from_unixtime() takes a pattern as argument 2, not " + SqlTypeName(*args[1]->type));
      pattern_arg = 1;
      break;
    case Fn::kMakeDate:
      type = date32();
      for (auto& a : args) {
        QUIVER_RETURN_NOT_OK(CheckInteger(fn, a));
        if (!IsNullType(a->type)) {
          QUIVER_ASSIGN_OR_RETURN(a, CastTo(a, int64()));
        }
      }
      break;
    default:  // quarter, dayofweek, dayofyear, weekofyear, hour, minute, second
      QUIVER_ASSIGN_OR_RETURN(args[0], AsTimestamp(fn, args[0]));
      break;
  }
  if (pattern_arg < args.size() && args[pattern_arg]->kind == Expr::Kind::kConstant &&
      !args[pattern_arg]->value.is_null)
    QUIVER_RETURN_NOT_OK(kernels::CheckDatetimePattern(args[pattern_arg]->value.s));
  for (const auto& a : args)
    if (IsNullType(a->type)) return Expr::Constant(Value::Null(type), location);
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCall;
  e->fn = fn;
  e->type = type;
  e->location = location;
  e->args = std::move(args);
  return FoldConstantCall(e);
}

}  // namespace quiver::sql
