// quiver/sql/expression/expr.cc — see expr.h.
#include "quiver/sql/expression/expr.h"

namespace quiver::sql {

const char* FnName(Fn fn) {
  switch (fn) {
    case Fn::kAdd: return "+";
    case Fn::kSub: return "-";
    case Fn::kMul: return "*";
    case Fn::kDiv: return "/";
    case Fn::kMod: return "%";
    case Fn::kNeg: return "-";
    case Fn::kEq: return "=";
    case Fn::kNe: return "<>";
    case Fn::kLt: return "<";
    case Fn::kLe: return "<=";
    case Fn::kGt: return ">";
    case Fn::kGe: return ">=";
    case Fn::kAnd: return "AND";
    case Fn::kOr: return "OR";
    case Fn::kNot: return "NOT";
    case Fn::kIsNull: return "IS NULL";
    case Fn::kIsNotNull: return "IS NOT NULL";
    case Fn::kInList: return "IN";
    case Fn::kLike: return "LIKE";
    case Fn::kCoalesce: return "coalesce";
    case Fn::kNullIf: return "nullif";
    case Fn::kCast:
    case Fn::kSparkCast: return "CAST";
    case Fn::kTryCast:
    case Fn::kSparkTryCast: return "TRY_CAST";
    case Fn::kOrderedValue: return "ordered_value";
    case Fn::kAddDays: return "+ days";
    case Fn::kAddMonths: return "+ months";
    case Fn::kDateDiff: return "date - date";
    case Fn::kExtractYear: return "extract(year)";
    case Fn::kExtractMonth: return "extract(month)";
    case Fn::kExtractDay: return "extract(day)";
    case Fn::kSubstring: return "substring";
    case Fn::kUpper: return "upper";
    case Fn::kLower: return "lower";
    case Fn::kLength: return "length";
    case Fn::kTrim: return "trim";
    case Fn::kLTrim: return "ltrim";
    case Fn::kRTrim: return "rtrim";
    case Fn::kConcat: return "||";
    case Fn::kAbs: return "abs";
    case Fn::kRound: return "round";
    case Fn::kFloor: return "floor";
    case Fn::kCeil: return "ceil";
    case Fn::kSqrt: return "sqrt";
    case Fn::kLn: return "ln";
    case Fn::kExp: return "exp";
    case Fn::kPower: return "power";
    case Fn::kLog10: return "log10";
    case Fn::kLog2: return "log2";
    case Fn::kLog: return "log";
    case Fn::kCbrt: return "cbrt";
    case Fn::kSign:
    case Fn::kSparkSign: return "sign";
    case Fn::kBround: return "bround";
    case Fn::kPmod: return "pmod";
    case Fn::kReplace: return "replace";
    case Fn::kSplitPart: return "split_part";
    case Fn::kRegexpLike: return "~";
    case Fn::kRegexpReplace: return "regexp_replace";
    case Fn::kRegexpExtract: return "regexp_extract";
    case Fn::kLpad: return "lpad";
    case Fn::kRpad: return "rpad";
    case Fn::kInstr: return "instr";
    case Fn::kConcatWs: return "concat_ws";
    case Fn::kLeft: return "left";
    case Fn::kRight: return "right";
    case Fn::kInitcap: return "initcap";
    case Fn::kLocate: return "locate";
    case Fn::kRepeat: return "repeat";
    case Fn::kReverse: return "reverse";
    case Fn::kTranslate: return "translate";
    case Fn::kAscii: return "ascii";
    case Fn::kChr:
    case Fn::kSparkChr: return "chr";
    case Fn::kDecode: return "decode";
    case Fn::kGreatest: return "greatest";
    case Fn::kLeast: return "least";
    case Fn::kNvl2: return "nvl2";
    case Fn::kIf: return "if";
    case Fn::kDateTrunc: return "date_trunc";
    case Fn::kExtractQuarter: return "quarter";
    case Fn::kDayOfWeek: return "dayofweek";
    case Fn::kDayOfYear: return "dayofyear";
    case Fn::kExtractHour: return "hour";
    case Fn::kExtractMinute: return "minute";
    case Fn::kExtractSecond: return "second";
    case Fn::kToDate: return "to_date";
    case Fn::kToTimestamp: return "to_timestamp";
    case Fn::kDateFormat: return "date_format";
    case Fn::kLastDay: return "last_day";
    case Fn::kMakeDate: return "make_date";
    case Fn::kTruncDate: return "trunc";
    case Fn::kWeekOfYear: return "weekofyear";
    case Fn::kNextDay: return "next_day";
    case Fn::kMonthsBetween: return "months_between";
    case Fn::kUnixTimestamp: return "unix_timestamp";
    case Fn::kFromUnixtime: return "from_unixtime";
    case Fn::kSparkDateAdd: return "date_add";
    case Fn::kSparkDateSub: return "date_sub";
    case Fn::kSparkDateDiff: return "datediff";
    case Fn::kSparkAddMonths: return "add_months";
  }
  return "?";
}

Result<Value> ScalarSubquery::Get() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!done_) {
    auto r = runner_();
    done_ = true;
    if (r.ok()) {
      value_ = *r;
    } else {
      status_ = r.status();
    }
    runner_ = nullptr;  // release the plan and what it holds
  }
  if (!status_.ok()) return status_;
  return value_;
}

ExprPtr Expr::Column(int column, DataTypePtr type, int location) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::kColumn;
  e->column = column;
  e->type = std::move(type);
  e->location = location;
  return e;
}

ExprPtr Expr::Constant(Value v, int location) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::kConstant;
  e->type = v.type;
  e->value = std::move(v);
  e->location = location;
  return e;
}

ExprPtr Expr::Call(Fn fn, std::vector<ExprPtr> args, DataTypePtr type, int location) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::kCall;
  e->fn = fn;
  e->args = std::move(args);
  e->type = std::move(type);
  e->location = location;
  return e;
}

namespace {
bool ValueEquals(const Value& a, const Value& b) {
  if (a.is_null != b.is_null) return false;
  if (!a.type->Equals(*b.type)) return false;
  return a.is_null || (a.i == b.i && a.s == b.s && (a.f == b.f || (a.f != a.f && b.f != b.f)));
}
}  // namespace

bool ExprEquals(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.args.size() != b.args.size()) return false;
  if ((a.type == nullptr) != (b.type == nullptr) || (a.type && !a.type->Equals(*b.type))) return false;
  switch (a.kind) {
    case Expr::Kind::kColumn:
      if (a.column != b.column) return false;
      break;
    case Expr::Kind::kConstant:
      if (!ValueEquals(a.value, b.value)) return false;
      break;
    case Expr::Kind::kCall:
      if (a.fn != b.fn || a.negated != b.negated) return false;
      if (a.fn == Fn::kInList && (a.aux != nullptr) != (b.aux != nullptr)) return false;
      if (a.fn == Fn::kInList && a.aux && a.value.s != b.value.s) return false;
      break;
    case Expr::Kind::kCase: break;
    case Expr::Kind::kSubquery:
      if (a.subquery != b.subquery) return false;
      break;
  }
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!ExprEquals(*a.args[i], *b.args[i])) return false;
  return true;
}

void VisitColumns(const Expr& e, const std::function<void(int)>& f) {
  if (e.kind == Expr::Kind::kColumn) f(e.column);
  for (const auto& a : e.args) VisitColumns(*a, f);
}

Result<ExprPtr> RewriteColumns(const ExprPtr& e, const std::function<Result<int>(int)>& map) {
  if (e->kind == Expr::Kind::kColumn) {
    QUIVER_ASSIGN_OR_RETURN(int c, map(e->column));
    auto copy = std::make_shared<Expr>(*e);
    copy->column = c;
    return ExprPtr(copy);
  }
  if (e->args.empty()) return e;
  auto copy = std::make_shared<Expr>(*e);
  for (auto& a : copy->args) {
    QUIVER_ASSIGN_OR_RETURN(a, RewriteColumns(a, map));
  }
  return ExprPtr(copy);
}

ExprPtr Transform(const ExprPtr& e, const std::function<ExprPtr(const ExprPtr&)>& f) {
  if (ExprPtr r = f(e)) return r;
  if (e->args.empty()) return e;
  std::shared_ptr<Expr> copy;
  for (size_t i = 0; i < e->args.size(); ++i) {
    ExprPtr a = Transform(e->args[i], f);
    if (a != e->args[i]) {
      if (!copy) copy = std::make_shared<Expr>(*e);
      copy->args[i] = a;
    }
  }
  return copy ? ExprPtr(copy) : e;
}

bool IsConstantExpr(const Expr& e) {
  if (e.kind == Expr::Kind::kColumn || e.kind == Expr::Kind::kSubquery) return false;
  for (const auto& a : e.args)
    if (!IsConstantExpr(*a)) return false;
  return true;
}

void SplitConjuncts(const ExprPtr& e, std::vector<ExprPtr>* out) {
  if (e->kind == Expr::Kind::kCall && e->fn == Fn::kAnd) {
    for (const auto& a : e->args) SplitConjuncts(a, out);
  } else {
    out->push_back(e);
  }
}

ExprPtr MakeAnd(const std::vector<ExprPtr>& terms) {
  if (terms.empty()) return Expr::Constant(Value::Bool(true));
  if (terms.size() == 1) return terms[0];
  return Expr::Call(Fn::kAnd, terms, boolean());
}

std::string ExprToString(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kColumn: return "#" + std::to_string(e.column);
    case Expr::Kind::kConstant: return e.value.ToString();
    case Expr::Kind::kSubquery: return "(subquery)";
    case Expr::Kind::kCase: return "CASE";
    case Expr::Kind::kCall: {
      std::string s = FnName(e.fn);
      s += "(";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) s += ", ";
        s += ExprToString(*e.args[i]);
      }
      return s + ")";
    }
  }
  return "?";
}

bool MayFail(const Expr& e) {
  if (e.kind == Expr::Kind::kCall) {
    switch (e.fn) {
      case Fn::kDiv:
      case Fn::kMod:
      case Fn::kCast:
      case Fn::kSparkCast:
      case Fn::kAdd:
      case Fn::kSub:
      case Fn::kMul:
      case Fn::kNeg:
      case Fn::kAddDays:
      case Fn::kAddMonths:
      case Fn::kRound:
      case Fn::kSqrt:
      case Fn::kLn:
      case Fn::kLog10:
      case Fn::kLog2:
      case Fn::kLog:
      case Fn::kBround:
      case Fn::kPmod:
      case Fn::kSplitPart:
      case Fn::kRegexpLike:
      case Fn::kRegexpReplace:
      case Fn::kRegexpExtract:
      case Fn::kLpad:
      case Fn::kRpad:
      case Fn::kRepeat:
      case Fn::kChr:
      case Fn::kDateTrunc:
      case Fn::kToDate:
      case Fn::kToTimestamp:
      case Fn::kDateFormat:
      case Fn::kNextDay:
      case Fn::kUnixTimestamp:
      case Fn::kFromUnixtime: return true;
      default: break;
    }
  }
  if (e.kind == Expr::Kind::kSubquery) return true;
  for (const auto& a : e.args)
    if (MayFail(*a)) return true;
  return false;
}

}  // namespace quiver::sql
