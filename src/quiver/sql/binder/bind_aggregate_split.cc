// quiver/sql/binder/bind_aggregate_split.cc — an aggregate in two phases
// (binder_internal.h SplitAggregate): a partial aggregate by finer groups,
// then the query's aggregate over the partial rows. sum and count add up,
// min / max / bool_and / bool_or / any_value apply again, avg is a sum and a
// count divided at the end. GROUPING SETS pre-aggregate by their finest set
// below the expand; fn(DISTINCT x) beside other aggregates groups by x first.
#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {
namespace {

// Whether a non-DISTINCT `a` has a partial form.
bool Decomposes(const AggregateCall& a) {
  const TypeClass c = a.arg ? ClassOf(*a.arg->type) : TypeClass::kInt;
  switch (a.fn) {
    case AggFn::kSum:
    case AggFn::kAvg: return c == TypeClass::kInt || c == TypeClass::kDecimal || c == TypeClass::kFloat;
    case AggFn::kCountStar:
    case AggFn::kCount:
    case AggFn::kCountIf:
    case AggFn::kMin:
    case AggFn::kMax:
    case AggFn::kBoolAnd:
    case AggFn::kBoolOr:
    case AggFn::kAnyValue: return true;
    default: return false;  // variance, first / last, holistic, sketches
  }
}

// Whether fn(DISTINCT x) is fn(x) over x's distinct values.
bool PlainDistinct(const AggregateCall& a) {
  return a.arg && (a.fn == AggFn::kCount || a.fn == AggFn::kSum || a.fn == AggFn::kAvg || a.fn == AggFn::kMin ||
                   a.fn == AggFn::kMax);
}

}  // namespace

Result<std::optional<Binder::Impl::SplitAggregates>> Binder::Impl::SplitAggregate(
    const LogicalOpPtr& input, const std::vector<ExprPtr>& finer, const std::vector<AggregateCall>& aggs,
    int distinct_group) {
  if (finer.empty()) return std::optional<SplitAggregates>();
  // A column of the NULL type (an untyped NULL grouped or aggregated) has no
  // storage for the partial rows: such a statement aggregates in one phase.
  auto null_typed = [](const DataTypePtr& t) { return t && t->id == TypeId::kNull; };
  for (const auto& g : finer)
    if (null_typed(g->type)) return std::optional<SplitAggregates>();
  for (const auto& a : aggs)
    if ((a.arg && null_typed(a.arg->type)) || null_typed(a.type)) return std::optional<SplitAggregates>();
  for (const auto& a : aggs) {
    if (a.distinct ? !(distinct_group >= 0 && PlainDistinct(a) && ExprEquals(*a.arg, *finer[distinct_group]))
                   : !Decomposes(a))
      return std::optional<SplitAggregates>();
  }
  SplitAggregates split;
  auto partial = std::make_shared<LogicalOp>();
  partial->kind = LogicalOp::Kind::kAggregate;
  partial->groups = finer;
  for (size_t g = 0; g < finer.size(); ++g) {
    partial->columns.push_back({NewId(), "group" + std::to_string(g), finer[g]->type});
    split.group_values.push_back(Expr::Column(partial->columns.back().id, finer[g]->type));
  }
  // One partial aggregate (a copy of `like` with another function, argument
  // and type); returns its column.
  auto add_partial = [&](const AggregateCall& like, AggFn fn, DataTypePtr type) {
    AggregateCall call = like;
    call.fn = fn;
    call.type = std::move(type);
    call.output_id = NewId();
    partial->aggregates.push_back(call);
    partial->columns.push_back({call.output_id, "partial", call.type});
    return Expr::Column(call.output_id, call.type);
  };
  // One final aggregate over `arg`; returns its column.
  auto add_final = [&](const AggregateCall& like, AggFn fn, ExprPtr arg, DataTypePtr type) {
    AggregateCall call = like;
    call.fn = fn;
    call.arg = std::move(arg);
    call.type = std::move(type);
    call.distinct = false;
    call.output_id = NewId();
    split.final_aggs.push_back(call);
    split.final_columns.push_back({call.output_id, "agg", call.type});
    return Expr::Column(call.output_id, call.type);
  };
  // A count's final sum: 0, not NULL, over no partial rows (no GROUP BY).
  auto count_of = [&](const AggregateCall& a, AggFn fn) -> ExprPtr {
    ExprPtr sum = add_final(a, AggFn::kSum, add_partial(a, fn, int64()), int64());
    return Expr::Call(Fn::kCoalesce, {sum, Expr::Constant(Value::Int64(0))}, int64());
  };
  for (const auto& a : aggs) {
    if (a.distinct) {  // its argument is a group of the partial rows: each value once per group
      split.results.push_back(add_final(a, a.fn, split.group_values[static_cast<size_t>(distinct_group)], a.type));
      continue;
    }
    // An exact sum's partials are DECIMAL(38, s): the final sum adds them in
    // 128 bits, as the one aggregate would, and checks the result type once.
    DataTypePtr sum_type;
    if (a.fn == AggFn::kSum || a.fn == AggFn::kAvg)
      sum_type = ClassOf(*a.arg->type) == TypeClass::kFloat ? float64() : Decimal(38, ScaleOf(*a.arg->type));
    switch (a.fn) {
      case AggFn::kCountStar:
      case AggFn::kCount:
      case AggFn::kCountIf: split.results.push_back(count_of(a, a.fn)); break;
      case AggFn::kSum:
        split.results.push_back(add_final(a, AggFn::kSum, add_partial(a, AggFn::kSum, sum_type), a.type));
        break;
      case AggFn::kAvg: {
        ExprPtr sum = add_final(a, AggFn::kSum, add_partial(a, AggFn::kSum, sum_type), sum_type);
        ExprPtr count = count_of(a, AggFn::kCount);
        // NULL (no values) exactly when the count is 0: no division by zero.
        QUIVER_ASSIGN_OR_RETURN(ExprPtr fsum, CastTo(sum, float64()));
        QUIVER_ASSIGN_OR_RETURN(ExprPtr fcount, CastTo(count, float64()));
        split.results.push_back(Expr::Call(Fn::kDiv, {fsum, fcount}, float64()));
        break;
      }
      default:  // min, max, bool_and, bool_or, any_value: the same function again
        split.results.push_back(add_final(a, a.fn, add_partial(a, a.fn, a.type), a.type));
        break;
    }
  }
  partial->est_rows = std::max(1.0, input->est_rows * 0.2);
  partial->base_rows = input->base_rows;
  partial->children = {input};
  split.partial = std::move(partial);
  return std::optional<SplitAggregates>(std::move(split));
}

Result<std::optional<Binder::Impl::SplitAggregates>> Binder::Impl::SplitDistinct(
    const LogicalOpPtr& input, const std::vector<ExprPtr>& groups, const std::vector<AggregateCall>& aggs) {
  ExprPtr x;
  for (const auto& a : aggs) {
    if (!a.distinct) continue;
    if (!a.arg || (x && !ExprEquals(*x, *a.arg))) return std::optional<SplitAggregates>();
    x = a.arg;
  }
  if (!x) return std::optional<SplitAggregates>();
  std::vector<ExprPtr> finer = groups;
  int at = -1;
  for (size_t g = 0; g < groups.size(); ++g)
    if (ExprEquals(*groups[g], *x)) at = static_cast<int>(g);
  if (at < 0) {
    at = static_cast<int>(finer.size());
    finer.push_back(x);
  }
  return SplitAggregate(input, finer, aggs, at);
}

}  // namespace quiver::sql
