// quiver/sql/binder/bind_aggregate.cc — aggregate function calls: the names
// quiver knows (with Spark's and PostgreSQL's aliases), their arguments,
// result types and errors, and the AggregateCall each becomes (collected
// into the query's aggregate list; the call itself binds to a column of
// the aggregate's output). Execution: execution/aggregate_table.h.
#include <algorithm>
#include <string>
#include <string_view>

#include "quiver/sql/binder/binder_internal.h"
#include "quiver/sql/execution/hyperloglog.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/sql/expression/order_key.h"

namespace quiver::sql {

namespace {

struct AggregateName {
  std::string_view name;
  AggFn fn;
};

// Every aggregate name and alias (lower case).
constexpr AggregateName kAggregateNames[] = {
    {"count", AggFn::kCount},
    {"sum", AggFn::kSum},
    {"avg", AggFn::kAvg},
    {"mean", AggFn::kAvg},  // Spark
    {"min", AggFn::kMin},
    {"max", AggFn::kMax},
    // statistics: DOUBLE; stddev / std / variance are the sample forms
    {"var_samp", AggFn::kVarSamp},
    {"variance", AggFn::kVarSamp},
    {"var_pop", AggFn::kVarPop},
    {"stddev_samp", AggFn::kStddevSamp},
    {"stddev", AggFn::kStddevSamp},
    {"std", AggFn::kStddevSamp},
    {"stddev_pop", AggFn::kStddevPop},
    // conditions
    {"count_if", AggFn::kCountIf},
    {"bool_and", AggFn::kBoolAnd},
    {"every", AggFn::kBoolAnd},
    {"bool_or", AggFn::kBoolOr},
    {"some", AggFn::kBoolOr},  // Spark; reserved words of the PostgreSQL grammar unless quoted
    {"any", AggFn::kBoolOr},
    // picks
    {"any_value", AggFn::kAnyValue},
    {"first", AggFn::kFirst},
    {"first_value", AggFn::kFirst},  // Spark's aggregate (OVER (...) makes it the window function)
    {"last", AggFn::kLast},
    {"last_value", AggFn::kLast},
    // percentiles (every value of a group kept): interpolated ...
    {"median", AggFn::kPercentileCont},
    {"percentile_cont", AggFn::kPercentileCont},  // (f) WITHIN GROUP (ORDER BY x)
    {"percentile", AggFn::kPercentileCont},       // Spark: (x, f)
    {"quantile_cont", AggFn::kPercentileCont},    // DuckDB: (x, f)
    // ... or one of the values
    {"percentile_disc", AggFn::kPercentileDisc},    // (f) WITHIN GROUP (ORDER BY x)
    {"percentile_approx", AggFn::kPercentileDisc},  // Spark: (x, f[, accuracy]), here exact
    {"approx_percentile", AggFn::kPercentileDisc},
    {"quantile_disc", AggFn::kPercentileDisc},  // DuckDB: (x, f)
    // the values joined
    {"string_agg", AggFn::kStringAgg},
    {"listagg", AggFn::kStringAgg},       // Spark: WITHIN GROUP (ORDER BY x)
    {"group_concat", AggFn::kStringAgg},  // DuckDB, MySQL
    // HyperLogLog
    {"approx_count_distinct", AggFn::kApproxCountDistinct},
};

// Whether `name` takes its argument from WITHIN GROUP (ORDER BY x).
bool WithinGroup(std::string_view name) { return name == "percentile_cont" || name == "percentile_disc"; }

// count(DISTINCT a, b, ...) (Spark's; DuckDB and PostgreSQL take one
// argument): the distinct tuples whose values are all non-NULL, counted as
// count(DISTINCT key) over one text key per row. The key is NULL when an
// argument is (|| propagates NULL) and otherwise encodes the tuple
// injectively: each value's text prefixed by its length in characters and
// ':' ("3:abc1:7"), so that equal tuples, and only they, give equal keys
// (within a type equal values have equal text; a DOUBLE's -0 and 0 differ).
Result<ExprPtr> DistinctTupleKey(const std::vector<ExprPtr>& args, int location) {
  std::vector<ExprPtr> parts;
  for (const ExprPtr& a : args) {
    const TypeClass c = ClassOf(*a->type);
    if (c == TypeClass::kNull) return Expr::Constant(Value::Null(utf8()), location);
    if (c == TypeClass::kOther) return Status::Invalid("count(DISTINCT ...) cannot take " + SqlTypeName(*a->type));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr text, CastTo(a, utf8()));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr chars, BindCall(Fn::kLength, {text}, location));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr chars_text, CastTo(chars, utf8()));
    parts.push_back(std::move(chars_text));
    parts.push_back(Expr::Constant(Value::String(":"), location));
    parts.push_back(std::move(text));
  }
  if (parts.size() > 64) return Status::NotImplemented("count(DISTINCT ...) of more than 21 arguments");
  return BindCall(Fn::kConcat, std::move(parts), location);
}

}  // namespace

bool IsAggregateName(std::string_view name) {
  for (const auto& a : kAggregateNames)
    if (a.name == name) return true;
  return false;
}

std::vector<std::string_view> AggregateNames() {
  std::vector<std::string_view> out;
  for (const auto& a : kAggregateNames) out.push_back(a.name);
  return out;
}

Result<ExprPtr> Binder::Impl::BindAggregateCall(Json& node, const std::string& name, ExprContext* ctx) {
  Json& f = node["FuncCall"];
  const int location = f.value("location", -1);
  AggFn agg_fn = AggFn::kCount;
  for (const auto& a : kAggregateNames)
    if (a.name == name) agg_fn = a.fn;
  if (!ctx->aggs) return Error("aggregate function " + name + "() is not allowed in " + ctx->clause, location);
  if (ctx->in_aggregate) return Error("aggregate function calls cannot be nested", location);
  const bool within_group = f.value("agg_within_group", false);
  // string_agg / listagg take their order either way.
  if (WithinGroup(name) != within_group && agg_fn != AggFn::kStringAgg)
    return within_group ? Error(name + "() takes no WITHIN GROUP", location)
                        : Error(name + "() needs WITHIN GROUP (ORDER BY x)", location);
  if (f.contains("agg_order") && !within_group && agg_fn != AggFn::kStringAgg)
    return Unsupported("ORDER BY inside an aggregate", location);
  AggregateCall call;
  call.fn = agg_fn;
  call.distinct = f.value("agg_distinct", false);
  const size_t num_args = f.contains("args") ? f["args"].size() : 0;
  if (agg_fn == AggFn::kStringAgg) {
    QUIVER_RETURN_NOT_OK(BindStringAgg(f, name, ctx, &call));
  } else if (IsListFn(agg_fn)) {
    QUIVER_RETURN_NOT_OK(BindPercentile(f, name, ctx, &call));
  } else if (f.value("agg_star", false)) {
    if (agg_fn != AggFn::kCount) return Error(name + "(*) is not an aggregate", location);
    call.fn = AggFn::kCountStar;
    call.type = int64();
  } else {
    const bool picks = PicksValue(agg_fn);
    const bool two = picks || agg_fn == AggFn::kApproxCountDistinct;
    const bool distinct_tuple = agg_fn == AggFn::kCount && call.distinct && num_args > 1;
    if (num_args == 0 || (num_args > (two ? 2u : 1u) && !distinct_tuple))
      return Error(name + "() takes " + (two ? "one or two arguments" : "one argument"), location);
    ExprContext inner = *ctx;
    inner.in_aggregate = true;
    // The query stays: EXISTS / IN (subquery) in the argument mark-joins
    // onto the rows the aggregate reads (bind_mark_join.cc); scalar
    // subqueries refuse an aggregate's argument themselves.
    QUIVER_ASSIGN_OR_RETURN(call.arg, BindExpr(f["args"][0], &inner));
    if (distinct_tuple) {
      std::vector<ExprPtr> tuple{call.arg};
      for (size_t k = 1; k < num_args; ++k) {
        QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(f["args"][k], &inner));
        tuple.push_back(std::move(e));
      }
      auto key = DistinctTupleKey(tuple, location);
      if (!key.ok()) return Error(key.status().message(), location);
      call.arg = *key;
    }
    // any_value(x) skips NULLs in the postgres dialect (DuckDB's) and takes
    // them in the spark dialect (Spark's, as first(x)).
    call.ignore_nulls = agg_fn == AggFn::kAnyValue && dialect != SqlDialect::kSpark;
    if (agg_fn == AggFn::kApproxCountDistinct) {
      // approx_count_distinct(x[, relativeSD]): Spark's default 0.05.
      double rsd = 0.05;
      if (num_args == 2) {
        QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(f["args"][1], &inner));
        const TypeClass ec = ClassOf(*e->type);
        if (e->kind != Expr::Kind::kConstant || !IsNumericClass(ec) || e->value.is_null)
          return Error(name + "()'s relative error must be a numeric constant", location);
        rsd = ec == TypeClass::kFloat  ? e->value.f
              : ScaleOf(*e->type) == 0 ? static_cast<double>(e->value.i)
                                       : DecimalToDouble(e->value.i, ScaleOf(*e->type));
      }
      auto p = hll::PrecisionFor(rsd);
      if (!p.ok()) return Error(name + "(): " + p.status().message(), location);
      call.hll_precision = *p;
    } else if (num_args == 2 && !distinct_tuple) {
      // first / last / any_value(x, isIgnoreNull): a BOOLEAN constant.
      QUIVER_ASSIGN_OR_RETURN(ExprPtr flag, BindExpr(f["args"][1], &inner));
      if (flag->kind != Expr::Kind::kConstant || ClassOf(*flag->type) != TypeClass::kBool || flag->value.is_null)
        return Error(name + "()'s second argument (ignore NULLs) must be a constant true or false", location);
      call.ignore_nulls = flag->value.i != 0;
    }
    const TypeClass c = ClassOf(*call.arg->type);
    const std::string cannot = name + "() cannot take " + SqlTypeName(*call.arg->type);
    switch (agg_fn) {
      case AggFn::kCount: call.type = int64(); break;
      case AggFn::kSum:
        if (c == TypeClass::kInt && call.arg->type->id == TypeId::kInt64 && dialect != SqlDialect::kSpark) {
          // PostgreSQL's sum(int8) is numeric: a sum past 2^63 is exact,
          // not an overflow. Summed as DECIMAL(19,0) into DECIMAL(38,0).
          // (Spark's sum(BIGINT) is BIGINT, a sum past it 22003.)
          QUIVER_ASSIGN_OR_RETURN(call.arg, CastTo(call.arg, Decimal(19, 0)));
          call.type = Decimal(38, 0);
        } else if (c == TypeClass::kInt)
          call.type = int64();
        else if (c == TypeClass::kDecimal)
          call.type = Decimal(38, call.arg->type->scale);
        else if (c == TypeClass::kFloat)
          call.type = float64();
        else if (c == TypeClass::kNull)
          call.type = int64();
        else
          return Error(cannot, location);
        break;
      case AggFn::kAvg:
      case AggFn::kVarSamp:
      case AggFn::kVarPop:
      case AggFn::kStddevSamp:
      case AggFn::kStddevPop:
        if (!IsNumericClass(c) && c != TypeClass::kNull) return Error(cannot, location);
        call.type = float64();
        break;
      case AggFn::kCountIf:
      case AggFn::kBoolAnd:
      case AggFn::kBoolOr:
        if (c != TypeClass::kBool && c != TypeClass::kNull) return Error(cannot + " (it takes BOOLEAN)", location);
        call.type = agg_fn == AggFn::kCountIf ? int64() : boolean();
        break;
      case AggFn::kApproxCountDistinct:
        call.distinct = false;  // a sketch counts a value once anyway
        if (c == TypeClass::kOther) return Error(cannot, location);
        call.type = int64();
        break;
      case AggFn::kAnyValue:
      case AggFn::kFirst:
      case AggFn::kLast:
        // Any row's value: DISTINCT changes nothing.
        call.distinct = false;
        if (c == TypeClass::kOther) return Error(cannot, location);
        call.type = c == TypeClass::kNull ? int64() : call.arg->type;
        break;
      default:
        if (c == TypeClass::kOther) return Error(cannot, location);
        call.type = c == TypeClass::kNull ? int64() : call.arg->type;
        break;
    }
  }
  if (f.contains("agg_filter")) QUIVER_RETURN_NOT_OK(ApplyAggregateFilter(f["agg_filter"], name, ctx, &call));
  // The same aggregate twice is computed once.
  for (const auto& existing : *ctx->aggs) {
    if (existing.fn == call.fn && existing.distinct == call.distinct && existing.ignore_nulls == call.ignore_nulls &&
        existing.fraction == call.fraction && existing.fraction_unscaled == call.fraction_unscaled &&
        existing.fraction_scale == call.fraction_scale && existing.descending == call.descending &&
        existing.separator == call.separator && existing.ordered == call.ordered &&
        existing.hll_precision == call.hll_precision &&
        ((!existing.arg && !call.arg) || (existing.arg && call.arg && ExprEquals(*existing.arg, *call.arg))))
      return Expr::Column(existing.output_id, existing.type, location);
  }
  call.output_id = NewId();
  ctx->aggs->push_back(call);
  return Expr::Column(call.output_id, call.type, location);
}

Result<ExprPtr> Binder::Impl::BindFilterCondition(Json& filter, ExprContext* ctx) {
  const int location =
      filter.is_object() && !filter.empty() && filter.begin()->is_object() ? filter.begin()->value("location", -1) : -1;
  QUIVER_ASSIGN_OR_RETURN(ExprPtr cond, BindExpr(filter, ctx));
  const TypeClass c = ClassOf(*cond->type);
  if (c == TypeClass::kNull) return CastTo(cond, boolean());
  if (c != TypeClass::kBool) {
    return Error("argument of FILTER must be type boolean, not type " + SqlTypeName(*cond->type), location)
        .WithSqlState("42804");
  }
  return cond;
}

Result<ExprPtr> Binder::Impl::FilteredArgument(ExprPtr cond, ExprPtr arg, int location) {
  return Typed(BindCase({std::move(cond), std::move(arg), Expr::Constant(Value::Null(null()))}, location), location);
}

Status Binder::Impl::ApplyAggregateFilter(Json& filter, const std::string& name, ExprContext* ctx,
                                          AggregateCall* call) {
  const int location =
      filter.is_object() && !filter.empty() && filter.begin()->is_object() ? filter.begin()->value("location", -1) : -1;
  // Rows the filter does not keep (FALSE or NULL) reach the aggregate as a
  // NULL argument, which every aggregate but the picks skips: f(x) FILTER
  // (WHERE c) is f(CASE WHEN c THEN x END), count(*) is count_if(c).
  if (call->fn == AggFn::kFirst || call->fn == AggFn::kLast || (call->fn == AggFn::kAnyValue && !call->ignore_nulls))
    return Unsupported("FILTER (WHERE ...) on " + name + "()", location);
  ExprContext inner = *ctx;
  inner.in_aggregate = true;
  inner.clause = "FILTER";
  QUIVER_ASSIGN_OR_RETURN(ExprPtr cond, BindFilterCondition(filter, &inner));
  if (call->fn == AggFn::kCountStar) {
    call->fn = AggFn::kCountIf;
    call->arg = std::move(cond);
    return Status::OK();
  }
  QUIVER_ASSIGN_OR_RETURN(call->arg, FilteredArgument(std::move(cond), call->arg, location));
  return Status::OK();
}

Status Binder::Impl::BindStringAgg(Json& f, const std::string& name, ExprContext* ctx, AggregateCall* call) {
  const int location = f.value("location", -1);
  const size_t num_args = f.contains("args") ? f["args"].size() : 0;
  if (num_args == 0 || num_args > 2) return Error(name + "() takes a value and a separator", location);
  ExprContext inner = *ctx;
  inner.in_aggregate = true;
  inner.query = nullptr;
  QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(f["args"][0], &inner));
  // The separator: a constant string; without one ',' (DuckDB) or, in the
  // spark dialect, '' (Spark's listagg).
  call->separator = dialect == SqlDialect::kSpark ? "" : ",";
  if (num_args == 2) {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr sep, BindExpr(f["args"][1], &inner));
    if (sep->kind != Expr::Kind::kConstant || ClassOf(*sep->type) != TypeClass::kString || sep->value.is_null)
      return Error(name + "()'s separator must be a constant string", location);
    call->separator = sep->value.s;
  }
  const TypeClass c = ClassOf(*x->type);
  if (c == TypeClass::kOther) return Error(name + "() cannot take " + SqlTypeName(*x->type), location);
  std::vector<SortKey> keys;
  if (f.contains("agg_order")) {
    for (Json& item : f["agg_order"]) {
      Json& sort_by = item["SortBy"];
      const std::string dir = sort_by.value("sortby_dir", "SORTBY_DEFAULT");
      if (dir == "SORTBY_USING") return Unsupported("ORDER BY ... USING", location);
      SortKey k;
      k.descending = dir == "SORTBY_DESC";
      const std::string nulls = sort_by.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
      k.nulls_first = nulls == "SORTBY_NULLS_DEFAULT" ? DefaultNullsFirst(k.descending) : nulls == "SORTBY_NULLS_FIRST";
      QUIVER_ASSIGN_OR_RETURN(k.expr, BindExpr(sort_by["node"], &inner));
      if (ClassOf(*k.expr->type) == TypeClass::kOther)
        return Error(name + "() cannot be ordered by a value of type " + SqlTypeName(*k.expr->type), location);
      keys.push_back(std::move(k));
    }
  }
  bool by_value_only = true;  // every key is the value itself
  for (const SortKey& k : keys) by_value_only = by_value_only && ExprEquals(*k.expr, *x);
  // A number, date or boolean is joined as its text.
  if (c != TypeClass::kString) {
    QUIVER_ASSIGN_OR_RETURN(x, CastTo(x, utf8()));
  }
  if (!keys.empty() && by_value_only && c == TypeClass::kString) {
    // ORDER BY the text itself: the joined values are sorted (NULLs are not joined).
    call->ordered = true;
    call->descending = keys[0].descending;
  } else if (!keys.empty()) {
    // ORDER BY other expressions (or a number by its value): each value
    // carries its keys' bytes (expression/order_key.h), sorted by them when
    // joined. With DISTINCT the keys must be the value itself (PostgreSQL's
    // rule), or equal values with different keys would not be one.
    if (call->distinct && !by_value_only)
      return Status::Invalid("in " + name + "(DISTINCT ...), ORDER BY expressions must appear in the argument list (" +
                             Where(location) + ")")
          .WithSqlState("42P10");
    std::vector<ExprPtr> args{x};
    for (const SortKey& k : keys) {
      args.push_back(k.expr);
      args.push_back(Expr::Constant(
          Value::Int64((k.descending ? kOrderKeyDescending : 0) | (k.nulls_first ? kOrderKeyNullsFirst : 0))));
    }
    x = Expr::Call(Fn::kOrderedValue, std::move(args), utf8(), location);
    call->ordered = true;
    call->key_prefixed = true;
  }
  call->arg = std::move(x);
  call->type = utf8();
  return Status::OK();
}

Status Binder::Impl::BindPercentile(Json& f, const std::string& name, ExprContext* ctx, AggregateCall* call) {
  const int location = f.value("location", -1);
  const size_t num_args = f.contains("args") ? f["args"].size() : 0;
  ExprContext inner = *ctx;
  inner.in_aggregate = true;
  inner.query = nullptr;
  Json* value = nullptr;     // x
  Json* fraction = nullptr;  // f
  if (WithinGroup(name)) {
    // percentile_cont(f) WITHIN GROUP (ORDER BY x [ASC | DESC])
    if (num_args != 1 || f["agg_order"].size() != 1)
      return Error(name + "() takes one fraction and WITHIN GROUP (ORDER BY one value)", location);
    Json& sort_by = f["agg_order"][0]["SortBy"];
    const std::string dir = sort_by.value("sortby_dir", "SORTBY_DEFAULT");
    if (dir == "SORTBY_USING") return Unsupported("ORDER BY ... USING", location);
    call->descending = dir == "SORTBY_DESC";
    value = &sort_by["node"];
    fraction = &f["args"][0];
  } else if (name == "median") {
    if (num_args != 1) return Error("median() takes one argument", location);
    value = &f["args"][0];
  } else {
    // percentile(x, f), quantile_cont / quantile_disc(x, f),
    // percentile_approx / approx_percentile(x, f[, accuracy])
    const bool approx = name == "percentile_approx" || name == "approx_percentile";
    if (num_args < 2 || num_args > (approx ? 3u : 2u))
      return Error(name + "() takes a value and a fraction" + (approx ? " (and an accuracy)" : ""), location);
    value = &f["args"][0];
    fraction = &f["args"][1];
    if (num_args == 3) {
      // Spark's accuracy (a positive integer constant): every value is
      // kept, so the answer is exact whatever it is.
      QUIVER_ASSIGN_OR_RETURN(ExprPtr acc, BindExpr(f["args"][2], &inner));
      if (acc->kind != Expr::Kind::kConstant || ClassOf(*acc->type) != TypeClass::kInt || acc->value.is_null ||
          acc->value.i <= 0)
        return Error(name + "()'s accuracy must be a positive integer constant", location);
    }
  }
  if (fraction != nullptr) {
    QUIVER_ASSIGN_OR_RETURN(ExprPtr q, BindExpr(*fraction, &inner));
    const TypeClass c = ClassOf(*q->type);
    if (q->kind != Expr::Kind::kConstant || !IsNumericClass(c) || q->value.is_null)
      return Error(name + "()'s fraction must be a numeric constant (a list of fractions is not supported)", location);
    const int scale = c == TypeClass::kFloat ? -1 : ScaleOf(*q->type);
    call->fraction = c == TypeClass::kFloat ? q->value.f
                     : scale == 0           ? static_cast<double>(q->value.i)
                                            : DecimalToDouble(q->value.i, scale);
    if (!(call->fraction >= 0 && call->fraction <= 1))
      return Error(name + "()'s fraction must be between 0 and 1, not " + q->value.ToString(), location);
    call->fraction_unscaled = c == TypeClass::kFloat ? 0 : q->value.i;
    call->fraction_scale = scale > 18 ? -1 : scale;  // (n * 10^scale must fit 128 bits)
  }
  QUIVER_ASSIGN_OR_RETURN(call->arg, BindExpr(*value, &inner));
  const TypeClass c = ClassOf(*call->arg->type);
  const std::string cannot = name + "() cannot take " + SqlTypeName(*call->arg->type);
  if (call->fn == AggFn::kPercentileCont) {
    if (!IsNumericClass(c) && c != TypeClass::kNull) return Error(cannot, location);
    call->type = float64();
  } else {
    if (!IsNumericClass(c) && c != TypeClass::kNull && c != TypeClass::kString && c != TypeClass::kDate &&
        c != TypeClass::kTimestamp)
      return Error(cannot, location);
    call->type = c == TypeClass::kNull ? int64() : call->arg->type;
  }
  return Status::OK();
}

Result<LogicalOpPtr> Binder::Impl::DistinctValuesFirst(LogicalOpPtr input, std::vector<AggregateCall>* aggs) {
  // count(DISTINCT x) without GROUP BY kept every worker's set of x in one
  // group's distinct table and merged them on one thread (SF1 lineitem
  // count(DISTINCT l_partkey): 12x SELECT count(*) FROM (SELECT DISTINCT
  // ...)); as GROUP BY x it is that query.
  if (aggs->empty()) return input;
  for (const AggregateCall& a : *aggs) {
    const bool plain_fn = a.fn == AggFn::kCount || a.fn == AggFn::kSum || a.fn == AggFn::kAvg || a.fn == AggFn::kMin ||
                          a.fn == AggFn::kMax;
    if (!a.distinct || !a.arg || !plain_fn || !ExprEquals(*a.arg, *(*aggs)[0].arg)) return input;
  }
  const ExprPtr x = (*aggs)[0].arg;
  auto inner = std::make_shared<LogicalOp>();
  inner->kind = LogicalOp::Kind::kAggregate;
  const int id = NewId();
  inner->columns.push_back({id, "distinct", x->type});
  inner->groups = {x};
  inner->est_rows = std::max(1.0, input->est_rows * 0.2);
  inner->base_rows = inner->est_rows;
  inner->children = {std::move(input)};
  for (AggregateCall& a : *aggs) {
    a.arg = Expr::Column(id, x->type, a.arg->location);
    a.distinct = false;
  }
  return LogicalOpPtr(inner);
}

}  // namespace quiver::sql
