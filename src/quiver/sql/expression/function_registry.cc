// quiver/sql/expression/function_registry.cc — see function_registry.h.
#include "quiver/sql/expression/function_registry.h"

#include <algorithm>

#include "quiver/memory/memory_pool.h"
#include "quiver/sql/expression/evaluate.h"
#include "quiver/sql/expression/function_binding.h"
#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {

namespace {

constexpr FunctionEntry kFunctions[] = {
    {"upper", Fn::kUpper, 1, 1},
    {"lower", Fn::kLower, 1, 1},
    {"length", Fn::kLength, 1, 1},
    {"char_length", Fn::kLength, 1, 1},
    {"character_length", Fn::kLength, 1, 1},
    {"trim", Fn::kTrim, 1, 2},
    {"btrim", Fn::kTrim, 1, 2},
    {"ltrim", Fn::kLTrim, 1, 2},
    {"rtrim", Fn::kRTrim, 1, 2},
    {"substring", Fn::kSubstring, 2, 3},
    {"substr", Fn::kSubstring, 2, 3},
    {"coalesce", Fn::kCoalesce, 1, 64},
    {"nullif", Fn::kNullIf, 2, 2},
    {"abs", Fn::kAbs, 1, 1},
    {"round", Fn::kRound, 1, 2},
    {"concat", Fn::kConcat, 1, 64},
    // conditional (issue 37): ifnull(a, b) / nvl(a, b) = coalesce(a, b)
    {"ifnull", Fn::kCoalesce, 2, 2},
    {"nvl", Fn::kCoalesce, 2, 2},
    // math (issue 37)
    {"mod", Fn::kMod, 2, 2},
    {"floor", Fn::kFloor, 1, 1},
    {"ceil", Fn::kCeil, 1, 1},
    {"ceiling", Fn::kCeil, 1, 1},
    {"sqrt", Fn::kSqrt, 1, 1},
    {"ln", Fn::kLn, 1, 1},
    {"exp", Fn::kExp, 1, 1},
    {"power", Fn::kPower, 2, 2},
    {"pow", Fn::kPower, 2, 2},
    {"log10", Fn::kLog10, 1, 1},
    {"log2", Fn::kLog2, 1, 1},
    {"log", Fn::kLog, 1, 2},  // log(x) is log10(x) (PostgreSQL, DuckDB); the spark dialect's is ln(x)
    {"cbrt", Fn::kCbrt, 1, 1},
    {"sign", Fn::kSign, 1, 1},
    {"signum", Fn::kSign, 1, 1},
    {"bround", Fn::kBround, 1, 2},
    {"pmod", Fn::kPmod, 2, 2},
    // strings (issue 37)
    {"replace", Fn::kReplace, 2, 3},
    {"split_part", Fn::kSplitPart, 3, 3},
    {"rlike", Fn::kRegexpLike, 2, 2},
    {"regexp", Fn::kRegexpLike, 2, 2},
    {"regexp_like", Fn::kRegexpLike, 2, 3},
    {"regexp_matches", Fn::kRegexpLike, 2, 3},
    {"regexp_replace", Fn::kRegexpReplace, 3, 4},
    {"regexp_extract", Fn::kRegexpExtract, 2, 3},
    {"lpad", Fn::kLpad, 2, 3},
    {"rpad", Fn::kRpad, 2, 3},
    {"instr", Fn::kInstr, 2, 2},
    {"strpos", Fn::kInstr, 2, 2},
    {"position", Fn::kInstr, 2, 2},  // position(sub IN s) arrives as (s, sub)
    {"concat_ws", Fn::kConcatWs, 1, 64},
    {"left", Fn::kLeft, 2, 2},
    {"right", Fn::kRight, 2, 2},
    {"initcap", Fn::kInitcap, 1, 1},
    {"locate", Fn::kLocate, 2, 3},
    {"repeat", Fn::kRepeat, 2, 2},
    {"reverse", Fn::kReverse, 1, 1},
    {"translate", Fn::kTranslate, 3, 3},
    {"ascii", Fn::kAscii, 1, 1},
    {"chr", Fn::kChr, 1, 1},
    {"char", Fn::kChr, 1, 1},  // the grammar reads char(...) as a type: reached as "char"(n) or in the spark dialect
    {"decode", Fn::kDecode, 3, 64},
    // conditional (issue 37)
    {"greatest", Fn::kGreatest, 1, 64},
    {"least", Fn::kLeast, 1, 64},
    {"nvl2", Fn::kNvl2, 3, 3},
    {"if", Fn::kIf, 3, 3},
    {"iff", Fn::kIf, 3, 3},
    // dates and times (issue 37)
    {"date_trunc", Fn::kDateTrunc, 2, 2},
    {"date_add", Fn::kSparkDateAdd, 2, 2},
    {"date_sub", Fn::kSparkDateSub, 2, 2},
    {"datediff", Fn::kSparkDateDiff, 2, 2},
    {"add_months", Fn::kSparkAddMonths, 2, 2},
    {"year", Fn::kExtractYear, 1, 1},
    {"month", Fn::kExtractMonth, 1, 1},
    {"day", Fn::kExtractDay, 1, 1},
    {"dayofmonth", Fn::kExtractDay, 1, 1},
    {"quarter", Fn::kExtractQuarter, 1, 1},
    {"dayofweek", Fn::kDayOfWeek, 1, 1},
    {"dayofyear", Fn::kDayOfYear, 1, 1},
    {"hour", Fn::kExtractHour, 1, 1},
    {"minute", Fn::kExtractMinute, 1, 1},
    {"second", Fn::kExtractSecond, 1, 1},
    {"to_date", Fn::kToDate, 1, 2},
    {"to_timestamp", Fn::kToTimestamp, 1, 2},
    {"date_format", Fn::kDateFormat, 2, 2},
    {"last_day", Fn::kLastDay, 1, 1},
    {"make_date", Fn::kMakeDate, 3, 3},
    {"trunc", Fn::kTruncDate, 2, 2},
    {"weekofyear", Fn::kWeekOfYear, 1, 1},
    {"next_day", Fn::kNextDay, 2, 2},
    {"months_between", Fn::kMonthsBetween, 2, 3},
    {"unix_timestamp", Fn::kUnixTimestamp, 1, 2},  // unix_timestamp(): the binder adds current_timestamp
    {"to_unix_timestamp", Fn::kUnixTimestamp, 1, 2},
    {"from_unixtime", Fn::kFromUnixtime, 1, 2},
};

// The spark dialect's meaning of names whose PostgreSQL / DuckDB meaning
// differs (each name is also in kFunctions).
constexpr FunctionEntry kSparkFunctions[] = {
    {"sign", Fn::kSparkSign, 1, 1},
    {"signum", Fn::kSparkSign, 1, 1},
    {"chr", Fn::kSparkChr, 1, 1},
    {"char", Fn::kSparkChr, 1, 1},
};

std::shared_ptr<MemoryPool> FoldPool() {
  static std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({"sql-constant-folding"});
  return pool;
}

}  // namespace

Result<ExprPtr> FoldConstantCall(ExprPtr e) {
  if (!IsConstantExpr(*e)) return e;
  EvalContext ctx;
  auto pool = FoldPool();
  ctx.pool = pool.get();
  QUIVER_ASSIGN_OR_RETURN(Value v, EvaluateConstant(*e, &ctx));
  if (v.is_null) v.type = e->type;
  return Expr::Constant(std::move(v), e->location);
}

namespace {

Result<ExprPtr> Fold(ExprPtr e) { return FoldConstantCall(std::move(e)); }

Status TypeError(Fn fn, const std::vector<ExprPtr>& args) {
  std::string msg = std::string("operator '") + FnName(fn) + "' cannot take ";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) msg += i + 1 == args.size() ? " and " : ", ";
    msg += SqlTypeName(*args[i]->type);
  }
  return Status::Invalid(msg);
}

// The integer type an integer operation's result has: BIGINT, or in the
// spark dialect the wider operand's (INTEGER op INTEGER is INTEGER).
DataTypePtr IntegerResultType(const DataType& a, const DataType& b, SqlDialect dialect) {
  if (dialect == SqlDialect::kSpark && a.id == TypeId::kInt32 && b.id == TypeId::kInt32) return int32();
  return int64();
}

Result<DataTypePtr> ArithmeticType(Fn fn, const DataTypePtr& a, const DataTypePtr& b, SqlDialect dialect) {
  const TypeClass ca = ClassOf(*a), cb = ClassOf(*b);
  if (!IsNumericClass(ca) || !IsNumericClass(cb)) return DataTypePtr{};
  if (ca == TypeClass::kFloat || cb == TypeClass::kFloat) return float64();
  if (ca == TypeClass::kInt && cb == TypeClass::kInt) return IntegerResultType(*a, *b, dialect);
  const int pa = PrecisionOf(*a), sa = ScaleOf(*a), pb = PrecisionOf(*b), sb = ScaleOf(*b);
  switch (fn) {
    case Fn::kAdd:
    case Fn::kSub:
    case Fn::kMod:
    case Fn::kPmod: {
      const int s = std::max(sa, sb);
      return Decimal(std::max(pa - sa, pb - sb) + s + 1, s);
    }
    case Fn::kMul:
      if (sa + sb > 38) return Status::NotImplemented("a product with more than 38 decimal places");
      return Decimal(pa + pb, sa + sb);
    case Fn::kDiv: return Decimal(38, std::max(sa, 12));
    default: return DataTypePtr{};
  }
}

bool Comparable(TypeClass a, TypeClass b) {
  if (a == TypeClass::kNull || b == TypeClass::kNull) return true;
  if (IsNumericClass(a) && IsNumericClass(b)) return true;
  const bool ta = a == TypeClass::kDate || a == TypeClass::kTimestamp;
  const bool tb = b == TypeClass::kDate || b == TypeClass::kTimestamp;
  if (ta && tb) return true;
  return a == b && a != TypeClass::kOther;
}

// Spark's least common type of a STRING and a value of type `other` (ANSI
// type coercion; Databricks' "SQL data type rules": a STRING promotes to
// BIGINT, DOUBLE, DATE, TIMESTAMP and BOOLEAN): BIGINT beside an integer,
// DOUBLE beside a DECIMAL or DOUBLE, `other` itself beside a DATE,
// TIMESTAMP or BOOLEAN, VARCHAR beside a string or NULL; nullptr otherwise.
DataTypePtr SparkStringCommonType(const DataTypePtr& other) {
  switch (ClassOf(*other)) {
    case TypeClass::kInt: return int64();
    case TypeClass::kDecimal:
    case TypeClass::kFloat: return float64();
    case TypeClass::kDate:
    case TypeClass::kTimestamp:
    case TypeClass::kBool: return other;
    case TypeClass::kString:
    case TypeClass::kNull: return utf8();
    default: return nullptr;
  }
}

// The spark dialect's implicit cast between a STRING operand and a typed
// one (a comparison, arithmetic when `numeric_only`, NULLIF): the string,
// literal or not, is cast to their least common type by Spark's ANSI cast
// (malformed text 22018, a constant's when bound); a BIGINT least common
// type leaves the integer operand as it is (comparison and arithmetic take
// INT with BIGINT). Other pairs are left to the caller's checks.
Status SparkPromoteString(ExprPtr* a, ExprPtr* b, bool numeric_only) {
  const TypeClass ca = ClassOf(*(*a)->type), cb = ClassOf(*(*b)->type);
  if ((ca == TypeClass::kString) == (cb == TypeClass::kString)) return Status::OK();
  ExprPtr* text = ca == TypeClass::kString ? a : b;
  const DataTypePtr& other = (ca == TypeClass::kString ? *b : *a)->type;
  const TypeClass oc = ClassOf(*other);
  if (oc == TypeClass::kNull || (numeric_only && !IsNumericClass(oc))) return Status::OK();
  const DataTypePtr to = SparkStringCommonType(other);
  if (!to) return Status::OK();
  QUIVER_ASSIGN_OR_RETURN(*text, CastTo(*text, to, -1, Fn::kSparkCast));
  return Status::OK();
}

// A string constant next to a typed operand is cast to that operand's type
// (PostgreSQL's unknown-literal rule).
Status CoerceStringLiteral(ExprPtr* lit, const DataTypePtr& other) {
  const TypeClass oc = ClassOf(*other);
  if ((*lit)->kind != Expr::Kind::kConstant || ClassOf(*(*lit)->type) != TypeClass::kString) return Status::OK();
  if (oc == TypeClass::kString || oc == TypeClass::kNull || oc == TypeClass::kOther) return Status::OK();
  DataTypePtr to = other;
  if (oc == TypeClass::kInt || oc == TypeClass::kDecimal) {
    // keep the literal's own digits
    if ((*lit)->value.s.find_first_of("eE") != std::string::npos) {
      to = float64();
    } else {
      const auto dot = (*lit)->value.s.find('.');
      const int scale = dot == std::string::npos ? 0 : static_cast<int>((*lit)->value.s.size() - dot - 1);
      to = Decimal(38, std::min(scale, 37));
    }
  }
  auto cast = kernels::CastValue((*lit)->value, to);
  if (!cast.ok()) {
    const TypeClass tc = ClassOf(*to);
    if (tc == TypeClass::kDate || tc == TypeClass::kTimestamp)
      return SqlError(StatusCode::kInvalid, "22007", "'" + (*lit)->value.s + "' is not a date or timestamp");
    return cast.status();
  }
  *lit = Expr::Constant(*cast, (*lit)->location);
  return Status::OK();
}

// The binary operands' implicit casts in `dialect`: Spark's string
// promotion, or PostgreSQL's unknown-literal rule (CoerceStringLiteral).
Status CoerceOperands(ExprPtr* a, ExprPtr* b, bool numeric_only, SqlDialect dialect) {
  if (dialect == SqlDialect::kSpark) return SparkPromoteString(a, b, numeric_only);
  QUIVER_RETURN_NOT_OK(CoerceStringLiteral(a, (*b)->type));
  return CoerceStringLiteral(b, (*a)->type);
}

// x IN (items) in the spark dialect: where a STRING meets another type
// among x and the items, all of them are cast to their least common type
// (Spark's IN takes one shared type); otherwise nothing changes.
Status SparkUnifyInList(std::vector<ExprPtr>* args) {
  bool text = false, typed = false;
  for (const auto& a : *args) {
    const TypeClass c = ClassOf(*a->type);
    text |= c == TypeClass::kString;
    typed |= c != TypeClass::kString && c != TypeClass::kNull;
  }
  if (!text || !typed) return Status::OK();
  DataTypePtr t = null();
  for (const auto& a : *args) {
    t = CommonType(t, a->type, SqlDialect::kSpark);
    if (!t) return Status::OK();  // the pairwise check names the types
  }
  for (auto& a : *args) {
    QUIVER_ASSIGN_OR_RETURN(a, CastTo(a, t, -1, Fn::kSparkCast));
  }
  return Status::OK();
}

// CASE and COALESCE: PostgreSQL resolves the untyped string literals among
// the value arguments to the type of the first typed one (COALESCE(a, '5')
// with an integer a is an integer; text that does not convert is 22P02 /
// 22007). Among strings, NULLs and pass-through types nothing changes.
Status ResolveStringLiterals(const std::vector<ExprPtr*>& values, SqlDialect dialect) {
  if (dialect == SqlDialect::kSpark) return Status::OK();  // CommonType's string promotion
  auto is_literal = [](const Expr& e) {
    return e.kind == Expr::Kind::kConstant && ClassOf(*e.type) == TypeClass::kString;
  };
  DataTypePtr target;
  for (const ExprPtr* v : values) {
    if (is_literal(**v) || IsNullType((*v)->type)) continue;
    target = (*v)->type;
    break;
  }
  if (!target) return Status::OK();
  const TypeClass tc = ClassOf(*target);
  if (tc == TypeClass::kString || tc == TypeClass::kOther) return Status::OK();
  for (ExprPtr* v : values) {
    if (!is_literal(**v)) continue;
    auto cast = kernels::CastValue((*v)->value, target);
    if (!cast.ok()) {
      if (tc == TypeClass::kDate || tc == TypeClass::kTimestamp)
        return SqlError(StatusCode::kInvalid, "22007", "'" + (*v)->value.s + "' is not a date or timestamp");
      return cast.status();
    }
    *v = Expr::Constant(*cast, (*v)->location);
  }
  return Status::OK();
}

// The argument kinds of the string functions of issue 37, one letter per
// argument ('s' text, 'i' integer; optional ones after '|'; a trailing '*'
// repeats the last kind).
const char* StringSignature(Fn fn) {
  switch (fn) {
    case Fn::kReplace: return "ss|s";
    case Fn::kSplitPart: return "ssi";
    case Fn::kRegexpLike: return "ss|s";
    case Fn::kRegexpReplace: return "sss|s";
    case Fn::kRegexpExtract: return "ss|i";
    case Fn::kLpad:
    case Fn::kRpad: return "si|s";
    case Fn::kInstr: return "ss";
    case Fn::kConcatWs: return "s|s*";
    case Fn::kLeft:
    case Fn::kRight: return "si";
    case Fn::kInitcap: return "s";
    case Fn::kLocate: return "ss|i";
    case Fn::kRepeat: return "si";
    case Fn::kReverse:
    case Fn::kAscii: return "s";
    case Fn::kTranslate: return "sss";
    case Fn::kChr:
    case Fn::kSparkChr: return "i";
    default: return nullptr;
  }
}

// Types a string function of issue 37: text arguments accept strings and
// NULL, and numbers, dates, timestamps and booleans cast to VARCHAR (Spark's
// implicit cast); integer arguments accept integers and NULL. A NULL
// argument gives a NULL result at once (concat_ws: only a NULL separator).
Result<ExprPtr> BindStringFunction(Fn fn, std::vector<ExprPtr> args, int location, bool negated, SqlDialect dialect) {
  // A value's text: Spark's in the spark dialect (a DOUBLE 1 is '1.0').
  const Fn to_text = dialect == SqlDialect::kSpark ? Fn::kSparkCast : Fn::kCast;
  const std::string sig = StringSignature(fn);
  std::string kinds;
  for (char c : sig)
    if (c != '|' && c != '*') kinds.push_back(c);
  const bool to_int = fn == Fn::kInstr || fn == Fn::kLocate || fn == Fn::kAscii;
  const DataTypePtr result = to_int ? int64() : fn == Fn::kRegexpLike ? boolean() : utf8();
  for (size_t k = 0; k < args.size(); ++k) {
    const char want = k < kinds.size() ? kinds[k] : kinds.back();
    const TypeClass c = ClassOf(*args[k]->type);
    if (c == TypeClass::kNull && fn == Fn::kLocate && k == 2) {  // Spark: a NULL start gives 0
      args[k] = Expr::Constant(Value::Null(int64()), args[k]->location);
      continue;
    }
    if (c == TypeClass::kNull) {
      if (fn != Fn::kConcatWs || k == 0) return Expr::Constant(Value::Null(result), location);
      continue;
    }
    const bool ok = want == 's' ? c != TypeClass::kOther : c == TypeClass::kInt;
    if (!ok)
      return Status::Invalid(std::string("function ") + FnName(fn) + "() cannot take " + SqlTypeName(*args[k]->type) +
                             " as argument " + std::to_string(k + 1));
    if (want == 's' && c != TypeClass::kString) {
      QUIVER_ASSIGN_OR_RETURN(args[k], CastTo(args[k], utf8(), -1, to_text));
    }
  }
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCall;
  e->fn = fn;
  e->type = result;
  e->negated = negated;
  e->location = location;
  // A constant pattern (and flags) is compiled once, here: a bad one fails
  // the statement before it runs.
  const size_t flags_arg = fn == Fn::kRegexpLike ? 2 : fn == Fn::kRegexpReplace ? 3 : SIZE_MAX;
  const bool is_regex = fn == Fn::kRegexpLike || fn == Fn::kRegexpReplace || fn == Fn::kRegexpExtract;
  auto known = [&](size_t k) { return args[k]->kind == Expr::Kind::kConstant && !args[k]->value.is_null; };
  if (is_regex && known(1) && (flags_arg >= args.size() || known(flags_arg))) {
    const std::string flags = flags_arg < args.size() ? args[flags_arg]->value.s : std::string();
    QUIVER_ASSIGN_OR_RETURN(e->aux, kernels::CompileRegex(args[1]->value.s, flags));
  }
  e->args = std::move(args);
  return Fold(e);
}

// greatest / least: every argument cast to the arguments' common type.
Result<ExprPtr> BindExtreme(Fn fn, std::vector<ExprPtr> args, int location, SqlDialect dialect) {
  std::vector<ExprPtr*> values;
  for (auto& a : args) values.push_back(&a);
  QUIVER_RETURN_NOT_OK(ResolveStringLiterals(values, dialect));
  DataTypePtr t = null();
  for (const auto& a : args) {
    DataTypePtr c = CommonType(t, a->type, dialect);
    if (!c || ClassOf(*c) == TypeClass::kOther)
      return Status::Invalid(std::string(FnName(fn)) + "() types " + SqlTypeName(*t) + " and " + SqlTypeName(*a->type) +
                             " cannot be matched");
    t = c;
  }
  if (IsNullType(t)) return Expr::Constant(Value::Null(null()), location);
  for (auto& a : args) {
    QUIVER_ASSIGN_OR_RETURN(a, CastTo(a, t, -1, ImplicitCast(dialect)));
  }
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCall;
  e->fn = fn;
  e->type = t;
  e->location = location;
  e->args = std::move(args);
  return Fold(e);
}

// Spark's decode(x, k1, v1, ..., kn, vn[, default]): CASE WHEN x IS NOT
// DISTINCT FROM k1 THEN v1 ... ELSE default END (NULL matches NULL; the
// values take their common type). Two arguments are Spark's
// decode(binary, charset): not supported.
Result<ExprPtr> BindDecode(std::vector<ExprPtr> args, int location, SqlDialect dialect) {
  std::vector<ExprPtr> terms;
  const ExprPtr& x = args[0];
  QUIVER_ASSIGN_OR_RETURN(ExprPtr x_null, BindCall(Fn::kIsNull, {x}, location));
  size_t k = 1;
  for (; k + 1 < args.size(); k += 2) {
    // x IS NOT DISTINCT FROM key: CASE WHEN x IS NULL THEN key IS NULL WHEN
    // key IS NULL THEN false ELSE x = key END
    const ExprPtr& key = args[k];
    QUIVER_ASSIGN_OR_RETURN(ExprPtr equal, BindCall(Fn::kEq, {x, key}, location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr key_null, BindCall(Fn::kIsNull, {key}, location));
    QUIVER_ASSIGN_OR_RETURN(
        ExprPtr match, BindCase({x_null, key_null, key_null, Expr::Constant(Value::Bool(false)), equal}, location));
    terms.push_back(std::move(match));
    terms.push_back(args[k + 1]);
  }
  terms.push_back(k < args.size() ? args[k] : Expr::Constant(Value::Null(null()), location));
  return BindCase(std::move(terms), location, dialect);
}

}  // namespace

std::span<const FunctionEntry> ScalarFunctions() { return kFunctions; }

const FunctionEntry* LookupFunction(std::string_view name) {
  for (const auto& f : kFunctions)
    if (f.name == name) return &f;
  return nullptr;
}

const FunctionEntry* LookupFunction(std::string_view name, bool spark) {
  if (spark)
    for (const auto& f : kSparkFunctions)
      if (f.name == name) return &f;
  return LookupFunction(name);
}

DataTypePtr CommonType(const DataTypePtr& a, const DataTypePtr& b, SqlDialect dialect) {
  if (IsNullType(a)) return b;
  if (IsNullType(b)) return a;
  if (a->Equals(*b)) return a;
  const TypeClass ca = ClassOf(*a), cb = ClassOf(*b);
  if (dialect == SqlDialect::kSpark && (ca == TypeClass::kString) != (cb == TypeClass::kString))
    return SparkStringCommonType(ca == TypeClass::kString ? b : a);
  if (IsNumericClass(ca) && IsNumericClass(cb)) {
    if (ca == TypeClass::kFloat || cb == TypeClass::kFloat) return float64();
    if (ca == TypeClass::kInt && cb == TypeClass::kInt) return int64();
    const int s = std::max(ScaleOf(*a), ScaleOf(*b));
    const int ip = std::max(PrecisionOf(*a) - ScaleOf(*a), PrecisionOf(*b) - ScaleOf(*b));
    return Decimal(ip + s, s);
  }
  if ((ca == TypeClass::kDate || ca == TypeClass::kTimestamp) &&
      (cb == TypeClass::kDate || cb == TypeClass::kTimestamp))
    return ca == TypeClass::kTimestamp ? a : b;
  if (ca == cb && ca != TypeClass::kOther) return a;
  return nullptr;
}

Result<ExprPtr> CastTo(const ExprPtr& e, const DataTypePtr& type, int location, Fn cast) {
  if (e->type->Equals(*type)) return e;
  if (e->kind == Expr::Kind::kConstant) {
    auto folded = kernels::CastValue(e->value, type, kernels::CastRulesOf(cast));
    if (!folded.ok() && kernels::IsTryCast(cast) && kernels::IsCastDataError(folded.status()))
      folded = Value::Null(type);
    QUIVER_ASSIGN_OR_RETURN(Value v, std::move(folded));
    v.type = type;
    return Expr::Constant(std::move(v), location >= 0 ? location : e->location);
  }
  return Expr::Call(cast, {e}, type, location >= 0 ? location : e->location);
}

Status CheckBoolean(const Expr& e, std::string_view clause) {
  const TypeClass c = ClassOf(*e.type);
  if (c == TypeClass::kBool || c == TypeClass::kNull) return Status::OK();
  return Status::Invalid("argument of " + std::string(clause) + " must be boolean, not " + SqlTypeName(*e.type));
}

Result<ExprPtr> BindCase(std::vector<ExprPtr> args, int location, SqlDialect dialect) {
  DataTypePtr t = null();
  const size_t num_when = (args.size() - 1) / 2;
  for (size_t w = 0; w < num_when; ++w) QUIVER_RETURN_NOT_OK(CheckBoolean(*args[2 * w], "CASE WHEN"));
  std::vector<ExprPtr*> values;
  for (size_t k = 0; k < args.size(); ++k)
    if (k + 1 == args.size() || k % 2 == 1) values.push_back(&args[k]);
  QUIVER_RETURN_NOT_OK(ResolveStringLiterals(values, dialect));
  for (size_t k = 0; k < args.size(); ++k) {
    const bool value = k + 1 == args.size() || k % 2 == 1;
    if (!value) continue;
    DataTypePtr c = CommonType(t, args[k]->type, dialect);
    if (!c)
      return Status::Invalid("CASE types " + SqlTypeName(*t) + " and " + SqlTypeName(*args[k]->type) +
                             " cannot be matched");
    t = c;
  }
  for (size_t k = 0; k < args.size(); ++k) {
    const bool value = k + 1 == args.size() || k % 2 == 1;
    if (value && !IsNullType(t)) {
      QUIVER_ASSIGN_OR_RETURN(args[k], CastTo(args[k], t, -1, ImplicitCast(dialect)));
    }
  }
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCase;
  e->type = t;
  e->args = std::move(args);
  e->location = location;
  return Fold(e);
}

Result<ExprPtr> BindCall(Fn fn, std::vector<ExprPtr> args, int location, bool negated, SqlDialect dialect) {
  if (StringSignature(fn) != nullptr) return BindStringFunction(fn, std::move(args), location, negated, dialect);
  DataTypePtr type;
  switch (fn) {
    case Fn::kGreatest:
    case Fn::kLeast: return BindExtreme(fn, std::move(args), location, dialect);
    case Fn::kNvl2: {
      // nvl2(a, b, c) = CASE WHEN a IS NOT NULL THEN b ELSE c END
      QUIVER_ASSIGN_OR_RETURN(ExprPtr present, BindCall(Fn::kIsNotNull, {args[0]}, location));
      return BindCase({present, args[1], args[2]}, location, dialect);
    }
    case Fn::kIf: return BindCase({args[0], args[1], args[2]}, location, dialect);
    case Fn::kDecode: return BindDecode(std::move(args), location, dialect);
    case Fn::kOrderedValue:  // built by the binder (bind_aggregate.cc), never typed here
      return Status::Invalid("internal: ordered_value() is not a function a statement calls");
    case Fn::kDateTrunc:
    case Fn::kExtractQuarter:
    case Fn::kDayOfWeek:
    case Fn::kDayOfYear:
    case Fn::kExtractHour:
    case Fn::kExtractMinute:
    case Fn::kExtractSecond:
    case Fn::kToDate:
    case Fn::kToTimestamp:
    case Fn::kDateFormat:
    case Fn::kLastDay:
    case Fn::kMakeDate:
    case Fn::kTruncDate:
    case Fn::kWeekOfYear:
    case Fn::kNextDay:
    case Fn::kMonthsBetween:
    case Fn::kUnixTimestamp:
    case Fn::kFromUnixtime:
    case Fn::kSparkDateAdd:
    case Fn::kSparkDateSub:
    case Fn::kSparkDateDiff:
    case Fn::kSparkAddMonths: return BindDateFunction(fn, std::move(args), location);
    case Fn::kReplace:
    case Fn::kSplitPart:
    case Fn::kRegexpLike:
    case Fn::kRegexpReplace:
    case Fn::kRegexpExtract:
    case Fn::kLpad:
    case Fn::kRpad:
    case Fn::kInstr:
    case Fn::kConcatWs:
    case Fn::kLeft:
    case Fn::kRight:
    case Fn::kInitcap:
    case Fn::kLocate:
    case Fn::kRepeat:
    case Fn::kReverse:
    case Fn::kTranslate:
    case Fn::kAscii:
    case Fn::kChr:
    case Fn::kSparkChr: break;  // BindStringFunction
    case Fn::kAdd:
    case Fn::kSub: {
      const TypeClass c0 = ClassOf(*args[0]->type), c1 = ClassOf(*args[1]->type);
      const bool d0 = c0 == TypeClass::kDate || c0 == TypeClass::kTimestamp;
      const bool d1 = c1 == TypeClass::kDate || c1 == TypeClass::kTimestamp;
      if (d0 && c1 == TypeClass::kInt) {
        if (fn == Fn::kSub) {
          QUIVER_ASSIGN_OR_RETURN(args[1], BindCall(Fn::kNeg, {args[1]}, location));
        }
        type = args[0]->type;
        fn = Fn::kAddDays;
        break;
      }
      if (d1 && c0 == TypeClass::kInt && fn == Fn::kAdd) {
        std::swap(args[0], args[1]);
        type = args[0]->type;
        fn = Fn::kAddDays;
        break;
      }
      if (c0 == TypeClass::kDate && c1 == TypeClass::kDate && fn == Fn::kSub) {
        type = int64();
        fn = Fn::kDateDiff;
        break;
      }
      [[fallthrough]];
    }
    case Fn::kMul:
    case Fn::kDiv:
    case Fn::kMod:
    case Fn::kPmod: {
      QUIVER_RETURN_NOT_OK(CoerceOperands(&args[0], &args[1], true, dialect));
      if (IsNullType(args[0]->type) || IsNullType(args[1]->type)) {
        const DataTypePtr other = IsNullType(args[0]->type) ? args[1]->type : args[0]->type;
        return Expr::Constant(Value::Null(IsNumericClass(ClassOf(*other)) ? other : null()), location);
      }
      QUIVER_ASSIGN_OR_RETURN(type, ArithmeticType(fn, args[0]->type, args[1]->type, dialect));
      if (!type) return TypeError(fn, args);
      break;
    }
    case Fn::kNeg:
    case Fn::kAbs: {
      const TypeClass c = ClassOf(*args[0]->type);
      if (c == TypeClass::kNull) return args[0];
      if (!IsNumericClass(c)) return TypeError(fn, args);
      type = c == TypeClass::kInt ? IntegerResultType(*args[0]->type, *args[0]->type, dialect) : args[0]->type;
      break;
    }
    case Fn::kRound:
    case Fn::kBround: {
      const TypeClass c = ClassOf(*args[0]->type);
      // round(NULL[, n]): PostgreSQL reads the NULL as numeric.
      if (c == TypeClass::kNull) return Expr::Constant(Value::Null(Decimal(38, 0)), location);
      if (!IsNumericClass(c)) return TypeError(fn, args);
      int digits = 0;
      if (args.size() > 1) {
        if (IsNullType(args[1]->type))  // round(x, NULL): NULL (DuckDB)
          return Expr::Constant(Value::Null(c == TypeClass::kInt ? int64() : args[0]->type), location);
        if (args[1]->kind != Expr::Kind::kConstant || ClassOf(*args[1]->type) != TypeClass::kInt)
          return SqlError(StatusCode::kNotImplemented, "0A000",
                          std::string(FnName(fn)) + "() with a non-constant number of digits is not supported");
        // NULL digits: the kernel's NULL propagation; far outside any
        // type's digits: clamped (the result is then 0 or the value).
        digits = args[1]->value.is_null ? 0 : static_cast<int>(std::clamp<i128>(args[1]->value.i, -1000, 1000));
      }
      if (c == TypeClass::kDecimal || (c == TypeClass::kInt && digits < 0)) {
        // A negative number of digits rounds left of the point (round(104.3,
        // -1) = 100), which can carry into one more digit (round(9999, -1)
        // = 10000): DECIMAL(p + 1, 0) (PostgreSQL's numeric result).
        const int p = PrecisionOf(*args[0]->type), s0 = ScaleOf(*args[0]->type);
        const int s = std::clamp(digits, 0, s0);
        type = Decimal(digits < 0 ? p + 1 : p, s);
      } else {
        type = args[0]->type;
        if (c == TypeClass::kInt) return args[0];
      }
      if (args.size() < 2) args.push_back(Expr::Constant(Value::Int64(0)));
      break;
    }
    case Fn::kFloor:
    case Fn::kCeil:
    case Fn::kSqrt:
    case Fn::kLn:
    case Fn::kExp:
    case Fn::kPower:
    case Fn::kLog10:
    case Fn::kLog2:
    case Fn::kLog:
    case Fn::kCbrt:
    case Fn::kSign:
    case Fn::kSparkSign: {
      // DOUBLE over numbers (integers cast); floor/ceil of an integer is
      // the integer itself; a NULL argument gives a NULL DOUBLE (sign: a
      // NULL BIGINT). log(x) is log10(x).
      if (fn == Fn::kLog && args.size() == 1) return BindCall(Fn::kLog10, std::move(args), location);
      for (auto& a : args) {
        const TypeClass c = ClassOf(*a->type);
        if (c == TypeClass::kNull) return Expr::Constant(Value::Null(fn == Fn::kSign ? int64() : float64()), location);
        if (!IsNumericClass(c))
          return Status::Invalid(std::string("function ") + FnName(fn) + "() cannot take " + SqlTypeName(*a->type));
      }
      if ((fn == Fn::kFloor || fn == Fn::kCeil) && ClassOf(*args[0]->type) == TypeClass::kInt) return args[0];
      for (auto& a : args) {
        QUIVER_ASSIGN_OR_RETURN(a, CastTo(a, float64()));
      }
      type = float64();
      if (fn == Fn::kSign) {
        // -1, 0 or 1 as a DOUBLE (NaN: 0), then as BIGINT (DuckDB's sign is an integer)
        QUIVER_ASSIGN_OR_RETURN(ExprPtr sign, Fold(Expr::Call(fn, std::move(args), type, location)));
        return CastTo(sign, int64());
      }
      break;
    }
    case Fn::kEq:
    case Fn::kNe:
    case Fn::kLt:
    case Fn::kLe:
    case Fn::kGt:
    case Fn::kGe: {
      QUIVER_RETURN_NOT_OK(CoerceOperands(&args[0], &args[1], false, dialect));
      if (!Comparable(ClassOf(*args[0]->type), ClassOf(*args[1]->type))) return TypeError(fn, args);
      type = boolean();
      break;
    }
    case Fn::kAnd:
    case Fn::kOr:
    case Fn::kNot:
      for (const auto& a : args) {
        const TypeClass c = ClassOf(*a->type);
        if (c != TypeClass::kBool && c != TypeClass::kNull)
          return Status::Invalid(std::string("argument of ") + FnName(fn) + " must be boolean, not " +
                                 SqlTypeName(*a->type));
      }
      type = boolean();
      break;
    case Fn::kIsNull:
    case Fn::kIsNotNull: type = boolean(); break;
    case Fn::kInList: {
      if (dialect == SqlDialect::kSpark) QUIVER_RETURN_NOT_OK(SparkUnifyInList(&args));
      std::vector<Value> items;
      bool all_const = true;
      for (size_t k = 1; k < args.size(); ++k) {
        QUIVER_RETURN_NOT_OK(CoerceStringLiteral(&args[k], args[0]->type));
        if (!Comparable(ClassOf(*args[0]->type), ClassOf(*args[k]->type)))
          return TypeError(Fn::kEq, {args[0], args[k]});
        if (args[k]->kind == Expr::Kind::kConstant) {
          items.push_back(args[k]->value);
        } else {
          all_const = false;
        }
      }
      auto e = std::make_shared<Expr>();
      e->kind = Expr::Kind::kCall;
      e->fn = Fn::kInList;
      e->type = boolean();
      e->negated = negated;
      e->location = location;
      if (all_const) {
        // The items' text identifies the list (ExprEquals) once they are hashed away.
        std::string signature;
        for (const auto& v : items) signature += v.ToString() + "|" + SqlTypeName(*v.type) + ",";
        e->value = Value::String(std::move(signature));
        e->aux = kernels::MakeInSet(args[0]->type, items);
        args.resize(1);
      }
      e->args = std::move(args);
      return Fold(e);
    }
    case Fn::kLike:
      for (const auto& a : args) {
        const TypeClass c = ClassOf(*a->type);
        if (c != TypeClass::kString && c != TypeClass::kNull)
          return Status::Invalid("operator 'LIKE' cannot take " + SqlTypeName(*a->type) + " (strings only)");
      }
      type = boolean();
      break;
    case Fn::kCoalesce: {
      std::vector<ExprPtr*> values;
      for (auto& a : args) values.push_back(&a);
      QUIVER_RETURN_NOT_OK(ResolveStringLiterals(values, dialect));
      DataTypePtr t = null();
      for (const auto& a : args) {
        DataTypePtr c = CommonType(t, a->type, dialect);
        if (!c)
          return Status::Invalid("COALESCE types " + SqlTypeName(*t) + " and " + SqlTypeName(*a->type) +
                                 " cannot be matched");
        t = c;
      }
      for (auto& a : args) {
        if (!IsNullType(t)) {
          QUIVER_ASSIGN_OR_RETURN(a, CastTo(a, t, -1, ImplicitCast(dialect)));
        }
      }
      type = t;
      break;
    }
    case Fn::kNullIf: {
      if (dialect == SqlDialect::kSpark) {
        QUIVER_RETURN_NOT_OK(SparkPromoteString(&args[0], &args[1], false));
      } else {
        QUIVER_RETURN_NOT_OK(CoerceStringLiteral(&args[1], args[0]->type));
      }
      if (!Comparable(ClassOf(*args[0]->type), ClassOf(*args[1]->type))) return TypeError(fn, args);
      type = args[0]->type;
      break;
    }
    case Fn::kCast:
    case Fn::kSparkCast:
    case Fn::kTryCast:
    case Fn::kSparkTryCast: return CastTo(args[0], args[1]->type, location, fn);
    case Fn::kAddDays:
    case Fn::kAddMonths: {
      const TypeClass c = ClassOf(*args[0]->type);
      QUIVER_RETURN_NOT_OK(CoerceStringLiteral(&args[0], date32()));
      if (c != TypeClass::kDate && c != TypeClass::kTimestamp && c != TypeClass::kString && c != TypeClass::kNull)
        return Status::Invalid("an interval cannot be added to " + SqlTypeName(*args[0]->type));
      type = args[0]->type;
      break;
    }
    case Fn::kDateDiff: type = int64(); break;
    case Fn::kExtractYear:
    case Fn::kExtractMonth:
    case Fn::kExtractDay: {
      QUIVER_RETURN_NOT_OK(CoerceStringLiteral(&args[0], date32()));
      const TypeClass c = ClassOf(*args[0]->type);
      if (c != TypeClass::kDate && c != TypeClass::kTimestamp && c != TypeClass::kNull)
        return Status::Invalid("EXTRACT cannot take " + SqlTypeName(*args[0]->type));
      type = int64();
      break;
    }
    case Fn::kSubstring:
    case Fn::kUpper:
    case Fn::kLower:
    case Fn::kTrim:
    case Fn::kLTrim:
    case Fn::kRTrim:
    case Fn::kLength:
    case Fn::kConcat: {
      for (size_t k = 0; k < args.size(); ++k) {
        const TypeClass c = ClassOf(*args[k]->type);
        const bool want_int = fn == Fn::kSubstring && k > 0;
        if (want_int ? (c != TypeClass::kInt && c != TypeClass::kNull)
                     : (c != TypeClass::kString && c != TypeClass::kNull)) {
          if (fn == Fn::kConcat && c != TypeClass::kOther) {
            // Spark's text of a value in the spark dialect: concat('x', 1.0E0) is 'x1.0'.
            QUIVER_ASSIGN_OR_RETURN(
                args[k], CastTo(args[k], utf8(), -1, dialect == SqlDialect::kSpark ? Fn::kSparkCast : Fn::kCast));
            continue;
          }
          return Status::Invalid(std::string("function ") + FnName(fn) + "() cannot take " +
                                 SqlTypeName(*args[k]->type) + " as argument " + std::to_string(k + 1));
        }
      }
      type = fn == Fn::kLength ? int64() : utf8();
      break;
    }
  }
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCall;
  e->fn = fn;
  e->type = type;
  e->negated = negated;
  e->args = std::move(args);
  e->location = location;
  return Fold(e);
}

}  // namespace quiver::sql
