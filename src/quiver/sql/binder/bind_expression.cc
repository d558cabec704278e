// quiver/sql/binder/bind_expression.cc — binding of expressions: column
// references, literals, operators, functions, CASE, casts, aggregates.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "quiver/sql/binder/binder_internal.h"
#include "quiver/sql/expression/spark_cast.h"
#include "quiver/sql/expression/temporal.h"

namespace quiver::sql {

std::string StringOf(const Json& node) {
  if (node.is_object() && node.contains("String")) return node["String"].value("sval", "");
  return {};
}

// Both walks are iterative: a parse tree as deep as the statement's text
// allows (the pre-scan may be off) must not recurse once per level.
int FirstLocation(const Json& j) {
  int best = -1;
  std::vector<const Json*> pending{&j};
  while (!pending.empty()) {
    const Json* n = pending.back();
    pending.pop_back();
    if (n->is_object()) {
      for (auto it = n->begin(); it != n->end(); ++it) {
        if (it.key() == "location" && it.value().is_number_integer()) {
          const int v = it.value().get<int>();
          if (v >= 0 && (best < 0 || v < best)) best = v;
        } else if (it.value().is_structured()) {
          pending.push_back(&it.value());
        }
      }
    } else if (n->is_array()) {
      for (const auto& e : *n)
        if (e.is_structured()) pending.push_back(&e);
    }
  }
  return best;
}

bool ContainsSubLink(const Json& j) {
  std::vector<const Json*> pending{&j};
  while (!pending.empty()) {
    const Json* n = pending.back();
    pending.pop_back();
    if (n->is_object()) {
      if (n->contains("SubLink")) return true;
      for (auto it = n->begin(); it != n->end(); ++it)
        if (it.value().is_structured()) pending.push_back(&it.value());
    } else if (n->is_array()) {
      for (const auto& e : *n)
        if (e.is_structured()) pending.push_back(&e);
    }
  }
  return false;
}

Status Binder::Impl::WithPosition(const Status& st, int location) const {
  if (st.ok() || location < 0 || st.message().find("(line ") != std::string::npos) return st;
  Status out(st.code(), st.message() + " (" + Where(location) + ")");
  return st.sql_state().empty() ? out : out.WithSqlState(st.sql_state());
}

Result<ExprPtr> Binder::Impl::Typed(Result<ExprPtr> r, int location) const {
  if (!r.ok()) return WithPosition(r.status(), location);
  return r;
}

namespace {

// An interval constant: months in `i`, days in `f` (Value of type interval).
bool IsInterval(const Expr& e) {
  return e.kind == Expr::Kind::kConstant && e.type->id == TypeId::kIntervalMonthDayNano;
}

}  // namespace

Result<ExprPtr> Binder::Impl::BindColumnRef(Json& node, ExprContext* ctx) {
  Json& fields = node["fields"];
  const int location = node.value("location", -1);
  std::vector<std::string> parts;
  for (auto& f : fields) {
    if (f.contains("A_Star")) return Unsupported("* in an expression", location);
    parts.push_back(StringOf(f));
  }
  std::string qualifier, name = parts.back();
  if (parts.size() >= 2) qualifier = FoldIdentifier(parts[parts.size() - 2]);
  int depth = 0;
  for (const Scope* s = ctx->scope; s; s = s->outer, ++depth) {
    const ScopeEntry* found = nullptr;
    int matches = 0;
    if (!qualifier.empty()) {
      bool alias_known = false;
      for (const auto& a : s->aliases) alias_known |= a.first == qualifier;
      if (!alias_known) continue;
    }
    for (int pass = 0; pass < 2 && matches == 0; ++pass) {
      for (const auto& c : s->cols) {
        if (!qualifier.empty() && c.alias != qualifier) continue;
        if (qualifier.empty() && c.qualified_only) continue;
        const bool eq = pass == 0 ? c.name == name : FoldIdentifier(c.name) == FoldIdentifier(name);
        if (!eq) continue;
        if (found && found->id == c.id) continue;
        found = &c;
        ++matches;
      }
    }
    if (matches > 1) return Error("column reference '" + name + "' is ambiguous", location);
    if (matches == 1) {
      // (two or more levels out: bind_dependent_join.cc unnests level by level)
      if (found->expr) return found->expr;
      return Expr::Column(found->id, found->type, location);
    }
    if (depth == 0 && qualifier.empty() && ctx->output_aliases) {
      // HAVING on an output name (Spark, DuckDB): its SELECT item.
      for (const auto& [alias, item] : *ctx->output_aliases)
        if (alias == name) return item;
    }
    if (!qualifier.empty())
      return Status::KeyError("no column named '" + name + "' in '" + qualifier + "' (" + Where(location) + ")")
          .WithSqlState("42703");
  }
  if (!qualifier.empty())
    return Status::KeyError("missing FROM entry for table '" + qualifier + "' (" + Where(location) + ")")
        .WithSqlState("42P01");
  return Status::KeyError("no column named '" + name + "' (" + Where(location) + ")").WithSqlState("42703");
}

Result<ExprPtr> Binder::Impl::BindConst(Json& node) {
  Json& c = node["A_Const"];
  const int location = c.value("location", -1);
  if (c.value("isnull", false)) return Expr::Constant(Value::Null(null()), location);
  if (c.contains("ival")) {
    // libpg_query 15's JSON drops negative (and zero) integer values: read
    // the literal from the statement text at its location. The grammar
    // folds a unary minus into the constant and moves its location to the
    // sign, also through parentheses and repeated signs (`- - 41` is 41,
    // `-(66)` is -66): skip signs, blanks and '(' up to the digits, the
    // parity of the minus signs giving the sign.
    size_t p = static_cast<size_t>(std::max(location, 0));
    size_t e = p;
    bool neg = false;
    while (e < sql.size() && (sql[e] == '-' || sql[e] == '+' || sql[e] == '(' || sql[e] == ' ' || sql[e] == '\t' ||
                              sql[e] == '\n' || sql[e] == '\r')) {
      if (sql[e] == '-') neg = !neg;
      ++e;
    }
    int64_t v = 0;
    bool any = false;
    while (e < sql.size() && sql[e] >= '0' && sql[e] <= '9') {
      if (__builtin_mul_overflow(v, int64_t{10}, &v) || __builtin_add_overflow(v, int64_t{sql[e] - '0'}, &v))
        return Error("integer literal out of range", location);
      ++e;
      any = true;
    }
    if (!any) return Error("cannot read the integer literal", location);
    if (neg) v = -v;
    if (c["ival"].contains("ival") && c["ival"]["ival"].get<int64_t>() != v)
      return Error("integer literal '" + std::string(sql.substr(p, e - p)) + "' read inconsistently", location);
    if (v >= INT32_MIN && v <= INT32_MAX) {
      Value x = Value::Int64(v);
      x.type = int32();
      return Expr::Constant(x, location);
    }
    return Expr::Constant(Value::Int64(v), location);
  }
  if (c.contains("fval")) {
    const std::string text = c["fval"].value("fval", "");
    if (text.find_first_of("eE") != std::string::npos)
      return Expr::Constant(Value::Float(std::strtod(text.c_str(), nullptr)), location);
    // exact: [-]digits [. digits]
    i128 v = 0;
    int digits = 0, scale = 0;
    bool dot = false, neg = false;
    for (char ch : text) {
      if (ch == '-') {
        neg = true;
        continue;
      }
      if (ch == '.') {
        dot = true;
        continue;
      }
      if (ch < '0' || ch > '9') continue;
      if (digits > 0 || ch != '0') ++digits;
      if (digits > 38) return Unsupported("a numeric literal with more than 38 digits ('" + text + "')", location);
      v = v * 10 + (ch - '0');
      if (dot) ++scale;
    }
    if (neg) v = -v;
    // Spark reads the sign as part of an integral literal: -2147483648 is
    // an INT there (the grammar hands its digits over as a float constant).
    if (!dot && dialect == SqlDialect::kSpark && v >= INT32_MIN && v <= INT32_MAX) {
      Value x = Value::Int64(static_cast<int64_t>(v));
      x.type = int32();
      return Expr::Constant(x, location);
    }
    if (!dot && v >= INT64_MIN && v <= INT64_MAX)
      return Expr::Constant(Value::Int64(static_cast<int64_t>(v)), location);
    return Expr::Constant(Value::Decimal(v, std::max(std::max(digits, scale), 1) + (scale >= digits ? 1 : 0), scale),
                          location);
  }
  if (c.contains("sval")) return Expr::Constant(Value::String(c["sval"].value("sval", "")), location);
  if (c.contains("boolval")) return Expr::Constant(Value::Bool(c["boolval"].value("boolval", false)), location);
  return Unsupported("this literal", location);
}

Result<DataTypePtr> Binder::Impl::BindTypeName(Json& tn, int location) {
  std::string name;
  for (auto& n : tn["names"]) {
    const std::string s = StringOf(n);
    if (s != "pg_catalog") name = s;
  }
  std::vector<int64_t> mods;
  if (tn.contains("typmods")) {
    for (auto& m : tn["typmods"]) {
      if (!m.contains("A_Const") || !m["A_Const"].contains("ival"))
        return Unsupported("a non-constant type modifier", location);
      mods.push_back(m["A_Const"]["ival"].value("ival", int64_t{0}));
    }
  }
  if (name == "int4" || name == "int2" || name == "int" || name == "integer") return int32();
  if (name == "int8" || name == "bigint") return int64();
  if (name == "float8" || name == "float4" || name == "double" || name == "real" || name == "float") return float64();
  if (name == "numeric" || name == "decimal") {
    // Without (p,s): DECIMAL(38,10), or Spark's DECIMAL(10,0) in the spark dialect.
    const bool spark = dialect == SqlDialect::kSpark;
    const int p = mods.empty() ? (spark ? 10 : 38) : static_cast<int>(mods[0]);
    const int s = mods.size() > 1 ? static_cast<int>(mods[1]) : (mods.empty() && !spark ? 10 : 0);
    if (p < 1 || p > 38 || s < 0 || s > p)
      return Error("DECIMAL(" + std::to_string(p) + "," + std::to_string(s) +
                       ") is out of range (precision 1..38, scale 0..precision)",
                   location);
    return Decimal(p, s);
  }
  if (name == "text" || name == "varchar" || name == "bpchar" || name == "char" || name == "string") return utf8();
  if (name == "date") return date32();
  if (name == "timestamp" || name == "timestamptz") return timestamp(TimeUnit::kMicro);
  if (name == "bool" || name == "boolean") return boolean();
  if (name == "interval") return interval_month_day_nano();
  return Unsupported("type cast to " + name, location);
}

Result<ExprPtr> Binder::Impl::BindTypeCast(Json& node, ExprContext* ctx) {
  Json& tc = node["TypeCast"];
  const int location = std::max(tc.value("location", -1), tc["typeName"].value("location", -1));
  QUIVER_ASSIGN_OR_RETURN(DataTypePtr to, BindTypeName(tc["typeName"], location));
  if (to->id == TypeId::kIntervalMonthDayNano) {
    if (!tc["arg"].contains("A_Const") || !tc["arg"]["A_Const"].contains("sval"))
      return Unsupported("INTERVAL other than a string literal", location);
    std::string text = tc["arg"]["A_Const"]["sval"].value("sval", "");
    int64_t mask = 0;
    if (tc["typeName"].contains("typmods") && !tc["typeName"]["typmods"].empty())
      mask = tc["typeName"]["typmods"][0]["A_Const"]["ival"].value("ival", int64_t{0});
    // "n" with a unit typmod (2 month, 4 year, 8 day), or "n unit[s]".
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    std::string unit(end ? end : "");
    unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
    for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (end == text.c_str()) return Error("invalid INTERVAL '" + text + "'", location);
    Value v;
    v.type = interval_month_day_nano();
    v.is_null = false;
    if (mask == 2 || unit == "month" || unit == "months" || unit == "mon" || unit == "mons") {
      v.i = n;
    } else if (mask == 4 || unit == "year" || unit == "years") {
      v.i = static_cast<i128>(n) * 12;
    } else if (mask == 8 || unit == "day" || unit == "days" || (mask == 0 && unit.empty())) {
      v.f = static_cast<double>(n);
    } else {
      return Unsupported("INTERVAL '" + text + "' (only n DAY, MONTH or YEAR)", location);
    }
    return Expr::Constant(v, location);
  }
  QUIVER_ASSIGN_OR_RETURN(ExprPtr arg, BindExpr(tc["arg"], ctx));
  // try_cast(x AS t) reaches the grammar as /**/cast(x AS t) (spark_dialect.h).
  const int cast_at = tc.value("location", -1);
  const bool try_cast = cast_at >= 4 && sql.substr(static_cast<size_t>(cast_at) - 4, 4) == "/**/";
  if (dialect == SqlDialect::kSpark) return SparkCast(arg, to, try_cast, location);
  if (try_cast) return Typed(CastTo(arg, to, location, Fn::kTryCast), location);
  if (arg->kind == Expr::Kind::kConstant && ClassOf(*arg->type) == TypeClass::kString) {
    const TypeClass tcls = ClassOf(*to);
    if (tcls == TypeClass::kDate || tcls == TypeClass::kTimestamp) {
      int32_t d;
      int64_t us;
      const bool ok = tcls == TypeClass::kDate ? ParseDate(arg->value.s, &d) : ParseTimestamp(arg->value.s, &us);
      if (!ok)
        return Status::Invalid("invalid " + std::string(tcls == TypeClass::kDate ? "DATE" : "TIMESTAMP") +
                               " literal '" + arg->value.s + "' (" + Where(location) + ")")
            .WithSqlState("22007");
    }
  }
  return Typed(CastTo(arg, to, location), location);
}

Result<ExprPtr> Binder::Impl::SparkCast(const ExprPtr& arg, const DataTypePtr& to, bool try_cast, int location) {
  if (!SparkCanCast(ClassOf(*arg->type), ClassOf(*to)))
    return Status::Invalid("[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast " + SqlTypeName(*arg->type) +
                           " to " + SqlTypeName(*to) + " (" + Where(location) + ")")
        .WithSqlState("42K09");
  return Typed(CastTo(arg, to, location, try_cast ? Fn::kSparkTryCast : Fn::kSparkCast), location);
}

ExprPtr Binder::Impl::StatementTime(bool date, int location) {
  if (statement_time_us < 0)
    statement_time_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
  if (!date) return Expr::Constant(Value::Timestamp(statement_time_us), location);
  return Expr::Constant(Value::Date(static_cast<int32_t>(statement_time_us / 86400000000LL)), location);
}

Result<ExprPtr> Binder::Impl::BindAExpr(Json& node, ExprContext* ctx) {
  Json& a = node["A_Expr"];
  const std::string kind = a.value("kind", "");
  const int location = a.value("location", -1);
  const std::string op = a.contains("name") && !a["name"].empty() ? StringOf(a["name"].back()) : "";
  if (kind == "AEXPR_OP") {
    if (!a.contains("lexpr")) {  // unary
      QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(a["rexpr"], ctx));
      if (op == "-") return Typed(BindCall(Fn::kNeg, {x}, location, false, dialect), location);
      if (op == "+") return x;
      return Unsupported("prefix operator '" + op + "'", location);
    }
    QUIVER_ASSIGN_OR_RETURN(ExprPtr l, BindExpr(a["lexpr"], ctx));
    // Spark's `a div b` reaches the grammar as `a / @ b` (spark_dialect.h):
    // integer division, BIGINT.
    Json& rx = a["rexpr"];
    if (dialect == SqlDialect::kSpark && op == "/" && rx.contains("A_Expr") && !rx["A_Expr"].contains("lexpr") &&
        rx["A_Expr"].contains("name") && !rx["A_Expr"]["name"].empty() &&
        StringOf(rx["A_Expr"]["name"].back()) == "@") {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr d, BindExpr(rx["A_Expr"]["rexpr"], ctx));
      const TypeClass cl = ClassOf(*l->type), cd = ClassOf(*d->type);
      if ((cl != TypeClass::kInt && cl != TypeClass::kNull) || (cd != TypeClass::kInt && cd != TypeClass::kNull))
        return Unsupported("div over " + SqlTypeName(*l->type) + " and " + SqlTypeName(*d->type) + " (integers only)",
                           location);
      QUIVER_ASSIGN_OR_RETURN(l, Typed(CastTo(l, int64(), location), location));
      QUIVER_ASSIGN_OR_RETURN(d, Typed(CastTo(d, int64(), location), location));
      return Typed(BindCall(Fn::kDiv, {l, d}, location), location);
    }
    QUIVER_ASSIGN_OR_RETURN(ExprPtr r, BindExpr(a["rexpr"], ctx));
    // Spark: `/` of two integers is DOUBLE division.
    if (dialect == SqlDialect::kSpark && op == "/" && ClassOf(*l->type) == TypeClass::kInt &&
        ClassOf(*r->type) == TypeClass::kInt) {
      QUIVER_ASSIGN_OR_RETURN(l, Typed(CastTo(l, float64(), location), location));
      QUIVER_ASSIGN_OR_RETURN(r, Typed(CastTo(r, float64(), location), location));
    }
    if ((op == "+" || op == "-") && (IsInterval(*r) || (op == "+" && IsInterval(*l)))) {
      if (IsInterval(*l)) std::swap(l, r);
      const int sign = op == "-" ? -1 : 1;
      ExprPtr out = l;
      if (r->value.i != 0) {
        QUIVER_ASSIGN_OR_RETURN(
            out, Typed(BindCall(Fn::kAddMonths,
                                {out, Expr::Constant(Value::Int64(static_cast<int64_t>(r->value.i) * sign))}, location),
                       location));
      }
      if (r->value.f != 0) {
        QUIVER_ASSIGN_OR_RETURN(
            out, Typed(BindCall(Fn::kAddDays,
                                {out, Expr::Constant(Value::Int64(static_cast<int64_t>(r->value.f) * sign))}, location),
                       location));
      }
      if (ClassOf(*out->type) == TypeClass::kString) return Error("an interval cannot be added to a string", location);
      return out;
    }
    if (IsInterval(*l) || IsInterval(*r)) return Unsupported("INTERVAL outside date +/- INTERVAL", location);
    static const std::pair<const char*, Fn> kOps[] = {
        {"+", Fn::kAdd}, {"-", Fn::kSub}, {"*", Fn::kMul},    {"/", Fn::kDiv}, {"%", Fn::kMod},
        {"=", Fn::kEq},  {"<>", Fn::kNe}, {"!=", Fn::kNe},    {"<", Fn::kLt},  {"<=", Fn::kLe},
        {">", Fn::kGt},  {">=", Fn::kGe}, {"||", Fn::kConcat}};
    for (const auto& [name, fn] : kOps)
      if (op == name) return Typed(BindCall(fn, {l, r}, location, false, dialect), location);
    // POSIX regular expression matches (RE2): ~ ~* !~ !~*
    if (op == "~" || op == "~*" || op == "!~" || op == "!~*") {
      std::vector<ExprPtr> args{l, r};
      if (op.back() == '*') args.push_back(Expr::Constant(Value::String("i"), location));
      return Typed(BindCall(Fn::kRegexpLike, std::move(args), location, op[0] == '!'), location);
    }
    return Unsupported("operator '" + op + "'", location);
  }
  if (kind == "AEXPR_IN") {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(a["lexpr"], ctx));
    std::vector<ExprPtr> args{x};
    for (auto& item : a["rexpr"]["List"]["items"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr v, BindExpr(item, ctx));
      args.push_back(v);
    }
    return Typed(BindCall(Fn::kInList, std::move(args), location, op == "<>", dialect), location);
  }
  if (kind == "AEXPR_LIKE" || kind == "AEXPR_ILIKE") {
    // ILIKE: lower(x) LIKE lower(pattern) (the escape character as given)
    const bool fold = kind == "AEXPR_ILIKE";
    auto folded = [&](ExprPtr e) -> Result<ExprPtr> {
      if (!fold) return e;
      return Typed(BindCall(Fn::kLower, {std::move(e)}, location), location);
    };
    QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(a["lexpr"], ctx));
    QUIVER_ASSIGN_OR_RETURN(x, folded(x));
    std::vector<ExprPtr> args{x};
    Json& r = a["rexpr"];
    if (r.contains("FuncCall") && StringOf(r["FuncCall"]["funcname"].back()) == "like_escape") {
      for (auto& arg : r["FuncCall"]["args"]) {
        QUIVER_ASSIGN_OR_RETURN(ExprPtr v, BindExpr(arg, ctx));
        if (args.size() == 1) {
          QUIVER_ASSIGN_OR_RETURN(v, folded(v));
        }
        args.push_back(v);
      }
    } else {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr p, BindExpr(r, ctx));
      QUIVER_ASSIGN_OR_RETURN(p, folded(p));
      args.push_back(p);
    }
    return Typed(BindCall(Fn::kLike, std::move(args), location, op == "!~~" || op == "!~~*"), location);
  }
  if (kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT") {
    // a IS DISTINCT FROM b: CASE WHEN a IS NULL THEN b IS NOT NULL WHEN b
    // IS NULL THEN true ELSE a <> b END (never NULL); NOT DISTINCT: the
    // negation, with = for <>.
    const bool distinct = kind == "AEXPR_DISTINCT";
    QUIVER_ASSIGN_OR_RETURN(ExprPtr l, BindExpr(a["lexpr"], ctx));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr r, BindExpr(a["rexpr"], ctx));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr cmp,
                            Typed(BindCall(distinct ? Fn::kNe : Fn::kEq, {l, r}, location, false, dialect), location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr l_null, Typed(BindCall(Fn::kIsNull, {l}, location), location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr r_null, Typed(BindCall(Fn::kIsNull, {r}, location), location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr r_not_null, Typed(BindCall(Fn::kIsNotNull, {r}, location), location));
    return Typed(BindCase({l_null, distinct ? r_not_null : r_null, r_null, Expr::Constant(Value::Bool(distinct)), cmp},
                          location),
                 location);
  }
  if (kind == "AEXPR_BETWEEN" || kind == "AEXPR_NOT_BETWEEN") {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(a["lexpr"], ctx));
    auto& items = a["rexpr"]["List"]["items"];
    QUIVER_ASSIGN_OR_RETURN(ExprPtr lo, BindExpr(items[0], ctx));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr hi, BindExpr(items[1], ctx));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr ge, Typed(BindCall(Fn::kGe, {x, lo}, location, false, dialect), location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr le, Typed(BindCall(Fn::kLe, {x, hi}, location, false, dialect), location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr both, Typed(BindCall(Fn::kAnd, {ge, le}, location), location));
    if (kind == "AEXPR_BETWEEN") return both;
    return Typed(BindCall(Fn::kNot, {both}, location), location);
  }
  if (kind == "AEXPR_NULLIF") {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr l, BindExpr(a["lexpr"], ctx));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr r, BindExpr(a["rexpr"], ctx));
    return Typed(BindCall(Fn::kNullIf, {l, r}, location, false, dialect), location);
  }
  if (kind == "AEXPR_BETWEEN_SYM" || kind == "AEXPR_NOT_BETWEEN_SYM") return Unsupported("BETWEEN SYMMETRIC", location);
  if (kind == "AEXPR_SIMILAR") return Unsupported("SIMILAR TO", location);
  return Unsupported("operator " + kind, location);
}

Result<ExprPtr> Binder::Impl::BindFuncCall(Json& node, ExprContext* ctx) {
  Json& f = node["FuncCall"];
  const int location = f.value("location", -1);
  std::string name;
  for (auto& n : f["funcname"]) name = FoldIdentifier(StringOf(n));
  if (f.contains("over")) return BindWindowCall(node, ctx);
  if (name == "grouping_id" || name == "grouping") return BindGroupingFunc(node, ctx);
  if (IsAggregateName(name)) return BindAggregateCall(node, name, ctx);
  std::vector<ExprPtr> args;
  if (f.contains("args")) {
    for (auto& a : f["args"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(a, ctx));
      args.push_back(e);
    }
  }
  if (name == "extract" || name == "date_part") {
    if (args.size() != 2 || args[0]->kind != Expr::Kind::kConstant)
      return Error("EXTRACT needs a field and a value", location);
    std::string field = args[0]->value.s;
    for (auto& ch : field) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Fn fn;
    if (field == "year")
      fn = Fn::kExtractYear;
    else if (field == "month")
      fn = Fn::kExtractMonth;
    else if (field == "day")
      fn = Fn::kExtractDay;
    else if (field == "quarter")
      fn = Fn::kExtractQuarter;
    else if (field == "doy")
      fn = Fn::kDayOfYear;
    else if (field == "week")
      fn = Fn::kWeekOfYear;
    else if (field == "hour")
      fn = Fn::kExtractHour;
    else if (field == "minute")
      fn = Fn::kExtractMinute;
    else if (field == "second")
      fn = Fn::kExtractSecond;
    else
      return Unsupported("EXTRACT(" + field + " ...)", location);
    return Typed(BindCall(fn, {args[1]}, location), location);
  }
  if ((name == "current_date" || name == "current_timestamp" || name == "now") && args.empty())
    return StatementTime(name == "current_date", location);  // Spark's current_date()
  if (name == "unix_timestamp" && args.empty()) args.push_back(StatementTime(false, location));  // Spark's: now
  // Spark's to_date(s) / to_timestamp(s) without a pattern: its CAST (an
  // error on malformed text in ANSI mode).
  if (dialect == SqlDialect::kSpark && (name == "to_date" || name == "to_timestamp") && args.size() == 1)
    return SparkCast(args[0], name == "to_date" ? date32() : timestamp(TimeUnit::kMicro), false, location);
  const FunctionEntry* entry = LookupFunction(name, dialect == SqlDialect::kSpark);
  if (!entry) return Unsupported("function " + name + "()", location);
  if (dialect == SqlDialect::kSpark &&
      (entry->fn == Fn::kLn || entry->fn == Fn::kLog10 || entry->fn == Fn::kLog2 || entry->fn == Fn::kLog)) {
    // Spark's logarithms are NULL where an argument is <= 0 (PostgreSQL's
    // and DuckDB's: 2201E), and its one-argument log is ln: each argument
    // becomes CASE WHEN a > 0 THEN a END.
    if (entry->fn == Fn::kLog && args.size() == 1) entry = LookupFunction("ln");
    for (auto& a : args) {
      if (!IsNumericClass(ClassOf(*a->type))) continue;  // BindCall names the type
      QUIVER_ASSIGN_OR_RETURN(ExprPtr positive,
                              BindCall(Fn::kGt, {a, Expr::Constant(Value::Int64(0), location)}, location));
      QUIVER_ASSIGN_OR_RETURN(a, BindCase({positive, a, Expr::Constant(Value::Null(null()), location)}, location));
    }
  }
  if (name == "concat" && dialect != SqlDialect::kSpark && !args.empty() &&
      static_cast<int>(args.size()) <= entry->max_args) {
    // PostgreSQL's concat() skips NULL arguments (concat('a', NULL, 'b') is
    // 'ab', concat(NULL) is ''), unlike `||`: each argument becomes
    // COALESCE(arg::text, '').
    for (auto& a : args) {
      const TypeClass c = ClassOf(*a->type);
      if (c == TypeClass::kNull) {
        a = Expr::Constant(Value::String(""), a->location);
        continue;
      }
      if (c == TypeClass::kOther) continue;  // BindCall names the type
      QUIVER_ASSIGN_OR_RETURN(ExprPtr text, CastTo(a, utf8()));
      QUIVER_ASSIGN_OR_RETURN(
          a, BindCall(Fn::kCoalesce, {text, Expr::Constant(Value::String(""), a->location)}, a->location));
    }
  }
  if (static_cast<int>(args.size()) < entry->min_args || static_cast<int>(args.size()) > entry->max_args)
    // A valid call of an overload quiver lacks: NotImplemented (0A000).
    return Unsupported("function " + name + "() with " + std::to_string(args.size()) + " arguments (it takes " +
                           std::to_string(entry->min_args) +
                           (entry->max_args != entry->min_args ? ".." + std::to_string(entry->max_args) : "") + ")",
                       location);
  if (entry->fn == Fn::kSubstring && dialect == SqlDialect::kSpark) {
    // Spark's positions (UTF8String.substringSQL): pos > 0 is 1-based, pos
    // < 0 counts from the end (substr('Spark SQL', -3) is 'SQL'), 0 is the
    // first character; a negative length gives ''. Rewritten into the
    // PostgreSQL positions the kernel takes: 0 -> 1, pos < 0 -> length(s) +
    // pos + 1, length -> greatest(length, 0).
    auto int_const = [&](int64_t v) { return Expr::Constant(Value::Int64(v), location); };
    // A string position or length is cast to INT (Spark's ANSI compliance
    // page: substring('hello', '1', 2) is 'he'; malformed text 22018).
    for (size_t k = 1; k < args.size(); ++k) {
      if (ClassOf(*args[k]->type) == TypeClass::kString) {
        QUIVER_ASSIGN_OR_RETURN(args[k], Typed(CastTo(args[k], int32(), location, Fn::kSparkCast), location));
      }
    }
    const ExprPtr pos = args[1];
    const bool const_pos = pos->kind == Expr::Kind::kConstant && ClassOf(*pos->type) == TypeClass::kInt;
    if (const_pos && !pos->value.is_null && pos->value.i == 0) {
      args[1] = int_const(1);
    } else if (!const_pos || (!pos->value.is_null && pos->value.i < 0)) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr len, BindCall(Fn::kLength, {args[0]}, location));
      QUIVER_ASSIGN_OR_RETURN(ExprPtr from_end, BindCall(Fn::kAdd, {len, pos}, location));
      QUIVER_ASSIGN_OR_RETURN(from_end, BindCall(Fn::kAdd, {from_end, int_const(1)}, location));
      QUIVER_ASSIGN_OR_RETURN(ExprPtr positive, BindCall(Fn::kGt, {pos, int_const(0)}, location));
      QUIVER_ASSIGN_OR_RETURN(ExprPtr negative, BindCall(Fn::kLt, {pos, int_const(0)}, location));
      QUIVER_ASSIGN_OR_RETURN(ExprPtr zero, BindCall(Fn::kEq, {pos, int_const(0)}, location));
      QUIVER_ASSIGN_OR_RETURN(args[1], BindCase({positive, pos, negative, from_end, zero, int_const(1),
                                                 Expr::Constant(Value::Null(int64()), location)},
                                                location));  // a NULL position stays NULL
    }
    if (args.size() == 3) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr negative, BindCall(Fn::kLt, {args[2], int_const(0)}, location));
      QUIVER_ASSIGN_OR_RETURN(args[2], BindCase({negative, int_const(0), args[2]}, location));
    }
  }
  if ((entry->fn == Fn::kLeft || entry->fn == Fn::kRight) && dialect == SqlDialect::kSpark && args.size() == 2) {
    // Spark's left / right give '' for n <= 0 (PostgreSQL's take all but
    // the last / first -n characters for a negative n).
    const ExprPtr zero = Expr::Constant(Value::Int64(0), location);
    QUIVER_ASSIGN_OR_RETURN(ExprPtr negative, BindCall(Fn::kLt, {args[1], zero}, location));
    QUIVER_ASSIGN_OR_RETURN(args[1], BindCase({negative, zero, args[1]}, location));
  }
  if (entry->fn == Fn::kConcat && dialect == SqlDialect::kSpark) {
    // Spark's concat() is NULL when any argument is (PostgreSQL's skips
    // NULL arguments, above for the postgres dialect); a value's text is
    // Spark's (a DOUBLE 1 is '1.0').
    for (auto& a : args) {
      const TypeClass c = ClassOf(*a->type);
      if (c != TypeClass::kString && c != TypeClass::kNull && c != TypeClass::kOther) {
        QUIVER_ASSIGN_OR_RETURN(a, CastTo(a, utf8(), -1, Fn::kSparkCast));
      }
    }
  }
  if (entry->fn == Fn::kRegexpReplace && dialect == SqlDialect::kSpark) {
    // Spark's regexp_replace(str, regexp, rep[, position]) replaces every
    // match from `position` (1-based, default 1); PostgreSQL's replaces the
    // first unless its fourth argument, flags, has 'g'.
    if (args.size() == 4) {
      const Expr& pos = *args[3];
      if (pos.kind != Expr::Kind::kConstant || ClassOf(*pos.type) != TypeClass::kInt || pos.value.is_null ||
          pos.value.i != 1)
        return Unsupported("regexp_replace() with a position other than the constant 1", location);
      args.pop_back();
    }
    args.push_back(Expr::Constant(Value::String("g"), location));
  }
  // DISTINCT, FILTER and ORDER BY apply to aggregates only (PostgreSQL,
  // DuckDB): on a scalar function they are errors, never ignored.
  if (f.value("agg_star", false) || f.value("agg_distinct", false) || f.contains("agg_filter") ||
      f.contains("agg_order"))
    return Error(name + "() is not an aggregate: DISTINCT, FILTER and ORDER BY apply to aggregates only", location);
  return Typed(BindCall(entry->fn, std::move(args), location, false, dialect), location);
}

// `x = c1 OR x = c2 OR ...` (what BI tools generate for a filter on a list
// of values) becomes `x IN (c1, c2, ...)`: one hashed lookup per row
// instead of a comparison per term (a 4,000-term chain over 400,000 rows
// took minutes). Terms `x = constant` (either side) with the same x are
// grouped once there are kMinTerms of them; the list takes the first
// term's place. The IN list gives the chain's three-valued result (true if
// any term is, else NULL if x or an item is NULL, else false: tested in
// engine_limits_test). Other terms stay as they are.
namespace {

Result<std::vector<ExprPtr>> OrEqualitiesAsInLists(std::vector<ExprPtr> terms, int location) {
  constexpr size_t kMinTerms = 8;
  // Distinct left sides looked at, at most: keeps grouping linear in the
  // terms whatever the text (terms past it stay comparisons).
  constexpr size_t kMaxGroups = 64;
  if (terms.size() < kMinTerms) return terms;
  auto split = [](const ExprPtr& t, ExprPtr* x, ExprPtr* c) {
    if (t->kind != Expr::Kind::kCall || t->fn != Fn::kEq || t->args.size() != 2) return false;
    const bool c0 = t->args[0]->kind == Expr::Kind::kConstant, c1 = t->args[1]->kind == Expr::Kind::kConstant;
    if (c0 == c1) return false;
    *x = c1 ? t->args[0] : t->args[1];
    *c = c1 ? t->args[1] : t->args[0];
    return true;
  };
  // Group the equality terms by their non-constant side (first seen first).
  struct Group {
    ExprPtr x;
    std::vector<size_t> terms;
  };
  std::vector<Group> groups;
  std::vector<int> group_of(terms.size(), -1);
  for (size_t i = 0; i < terms.size(); ++i) {
    ExprPtr x, c;
    if (!split(terms[i], &x, &c)) continue;
    size_t g = 0;
    while (g < groups.size() && !ExprEquals(*groups[g].x, *x)) ++g;
    if (g == kMaxGroups) continue;
    if (g == groups.size()) groups.push_back({x, {}});
    groups[g].terms.push_back(i);
    group_of[i] = static_cast<int>(g);
  }
  std::vector<ExprPtr> out;
  std::vector<bool> emitted(groups.size(), false);
  for (size_t i = 0; i < terms.size(); ++i) {
    const int g = group_of[i];
    if (g < 0 || groups[static_cast<size_t>(g)].terms.size() < kMinTerms) {
      out.push_back(terms[i]);
      continue;
    }
    if (emitted[static_cast<size_t>(g)]) continue;
    emitted[static_cast<size_t>(g)] = true;
    std::vector<ExprPtr> args{groups[static_cast<size_t>(g)].x};
    for (size_t t : groups[static_cast<size_t>(g)].terms) {
      ExprPtr x, c;
      split(terms[t], &x, &c);
      args.push_back(c);
    }
    QUIVER_ASSIGN_OR_RETURN(ExprPtr in, BindCall(Fn::kInList, std::move(args), location));
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace

Result<ExprPtr> Binder::Impl::BindExpr(Json& node, ExprContext* ctx) {
  // Bounded recursion and the planning deadline (binder.h, BindLimits).
  struct Depth {
    int* d;
    ~Depth() { --*d; }
  } depth{&expr_depth};
  if (++expr_depth > limits.max_depth) {
    return Status::Invalid("statement too complex: expressions nest deeper than " + std::to_string(limits.max_depth) +
                           " levels (" + Where(FirstLocation(node)) + ")")
        .WithSqlState("54001");
  }
  if (limits.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() > limits.deadline) {
    return Status::Timeout("planning the statement took longer than its limit of " + std::to_string(limits.timeout_ms) +
                           " ms (planning_timeout_ms)")
        .WithSqlState("57014");
  }
  if (limits.cancel && limits.cancel->load(std::memory_order_relaxed))
    return Status::Cancelled("the statement was cancelled while it was planned").WithSqlState("57014");
  // Chains (a+1+1+...) are bound in time linear in their length: the
  // leftmost location of a subtree (FirstLocation walks all of it) is
  // computed only for the kinds of node that need it.
  if (node.contains("ColumnRef")) return BindColumnRef(node["ColumnRef"], ctx);
  if (node.contains("A_Const")) return BindConst(node);
  if (node.contains("TypeCast")) return BindTypeCast(node, ctx);
  if (node.contains("A_Expr")) return BindAExpr(node, ctx);
  if (node.contains("FuncCall")) return BindFuncCall(node, ctx);
  if (node.contains("GroupingFunc")) return BindGroupingFunc(node, ctx);
  const int location = FirstLocation(node);
  if (node.contains("BoolExpr")) {
    Json& b = node["BoolExpr"];
    const std::string op = b.value("boolop", "");
    std::vector<ExprPtr> args;
    for (auto& a : b["args"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(a, ctx));
      args.push_back(e);
    }
    const Fn fn = op == "AND_EXPR" ? Fn::kAnd : op == "OR_EXPR" ? Fn::kOr : Fn::kNot;
    const int loc = b.value("location", location);
    if (fn == Fn::kOr) {
      QUIVER_ASSIGN_OR_RETURN(args, OrEqualitiesAsInLists(std::move(args), loc));
    }
    if (fn == Fn::kOr && args.size() == 1) return args[0];
    return Typed(BindCall(fn, std::move(args), loc), loc);
  }
  if (node.contains("NullTest")) {
    Json& n = node["NullTest"];
    QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(n["arg"], ctx));
    const bool is_null = n.value("nulltesttype", "") == "IS_NULL";
    return Typed(BindCall(is_null ? Fn::kIsNull : Fn::kIsNotNull, {x}, location), location);
  }
  if (node.contains("BooleanTest")) return Unsupported("IS [NOT] TRUE/FALSE/UNKNOWN", location);
  if (node.contains("MinMaxExpr")) {  // greatest(...) / least(...)
    Json& m = node["MinMaxExpr"];
    std::vector<ExprPtr> args;
    for (auto& a : m["args"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(a, ctx));
      args.push_back(e);
    }
    const Fn fn = m.value("op", "") == "IS_LEAST" ? Fn::kLeast : Fn::kGreatest;
    return Typed(BindCall(fn, std::move(args), location, false, dialect), location);
  }
  if (node.contains("CoalesceExpr")) {
    std::vector<ExprPtr> args;
    for (auto& a : node["CoalesceExpr"]["args"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(a, ctx));
      args.push_back(e);
    }
    return Typed(BindCall(Fn::kCoalesce, std::move(args), location, false, dialect), location);
  }
  if (node.contains("CaseExpr")) {
    Json& c = node["CaseExpr"];
    const int loc = c.value("location", location);
    ExprPtr subject;
    if (c.contains("arg")) {
      QUIVER_ASSIGN_OR_RETURN(subject, BindExpr(c["arg"], ctx));
    }
    std::vector<ExprPtr> args;
    for (auto& w : c["args"]) {
      Json& cw = w["CaseWhen"];
      QUIVER_ASSIGN_OR_RETURN(ExprPtr cond, BindExpr(cw["expr"], ctx));
      if (subject) {
        QUIVER_ASSIGN_OR_RETURN(cond, Typed(BindCall(Fn::kEq, {subject, cond}, loc, false, dialect), loc));
      }
      QUIVER_ASSIGN_OR_RETURN(ExprPtr value, BindExpr(cw["result"], ctx));
      args.push_back(cond);
      args.push_back(value);
    }
    if (c.contains("defresult")) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr d, BindExpr(c["defresult"], ctx));
      args.push_back(d);
    } else {
      args.push_back(Expr::Constant(Value::Null(null())));
    }
    return Typed(BindCase(std::move(args), loc, dialect), loc);
  }
  if (node.contains("SubLink")) {
    Json& s = node["SubLink"];
    const std::string type = s.value("subLinkType", "");
    const int loc = s.value("location", location);
    if (type == "EXPR_SUBLINK") return BindScalarSubquery(node, ctx);
    if (type == "EXISTS_SUBLINK" || type == "ANY_SUBLINK") return BindMarkSubquery(node, ctx);
    return Unsupported("this kind of subquery (" + type + ")", loc);
  }
  if (node.contains("ParamRef")) return Unsupported("parameters ($n)", location);
  if (node.contains("A_ArrayExpr")) return Unsupported("ARRAY[...]", location);
  if (node.contains("RowExpr")) return Unsupported("row constructors", location);
  if (node.contains("SQLValueFunction")) {
    const std::string op = node["SQLValueFunction"].value("op", "");
    if (op == "SVFOP_CURRENT_DATE") return StatementTime(true, location);
    if (op.rfind("SVFOP_CURRENT_TIMESTAMP", 0) == 0 || op.rfind("SVFOP_LOCALTIMESTAMP", 0) == 0)
      return StatementTime(false, location);
    return Unsupported("CURRENT_TIME / CURRENT_USER and the other SQL value functions", location);
  }
  if (node.contains("GroupingFunc")) return Unsupported("GROUPING()", location);
  return Unsupported("expression " + (node.is_object() && !node.empty() ? node.begin().key() : std::string("?")),
                     location);
}

}  // namespace quiver::sql
