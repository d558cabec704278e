// quiver/sql/binder/bind_dependent_mark.cc — [NOT] EXISTS and x [NOT] IN
// (subquery) as values (under OR, NOT or CASE, in the SELECT list, HAVING,
// ORDER BY, an aggregate's argument, and NOT IN as a WHERE term) over a
// subquery that needs the general unnesting (bind_dependent_join.cc): it
// reads outer columns outside WHERE's equalities, under LIMIT, ...
//
//  - EXISTS: a mark join (DuckDB's MARK join) of the outer plan with the
//    flattened subquery on D's columns.
//  - x IN (SELECT y ...): SQL's three values per outer row, TRUE when some
//    y equals x, else NULL when the row's set is not empty and x is NULL
//    or holds a NULL, else FALSE. When x reads only outer columns it is
//    read inside the subquery, which becomes the scalar aggregate
//      CASE WHEN count(*) = 0 THEN FALSE WHEN bool_or(y = x) THEN TRUE
//           WHEN bool_or(y IS NULL) OR x IS NULL THEN NULL ELSE FALSE END
//    over the rows of that outer row (x's columns join D): one flattening,
//    one left join. Otherwise (x reads a column a join of this query made)
//    two mark joins: on x = y, and of the subquery bound again on D alone
//    with the residual `y IS NULL OR x IS NULL`.
#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {

namespace {

// Whether every column `x` reads is a column of `scope` or of a scope
// further out (then the subquery may read it as an outer reference).
bool ReadsOnlyScopes(const Expr& x, const Scope& scope) {
  bool only = true;
  VisitColumns(x, [&](int id) {
    bool found = false;
    for (const Scope* s = &scope; s && !found; s = s->outer) found = s->ids.count(id) != 0;
    only = only && found;
  });
  return only;
}

AggregateCall MakeAggregate(AggFn fn, ExprPtr arg, DataTypePtr type, int id) {
  AggregateCall a;
  a.fn = fn;
  a.arg = std::move(arg);
  a.type = std::move(type);
  a.output_id = id;
  return a;
}

}  // namespace

Result<ExprPtr> Binder::Impl::BindDependentIn(const Json& select, const ExprPtr& x, ExprContext* ctx, int location) {
  Json copy = select;
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindDependent(copy, ctx->scope));
  if (b.visible.size() != 1) return Error("subquery has too many columns for IN", location);
  const ColumnBinding& y = b.visible[0];
  const ExprPtr ye = Expr::Column(y.id, y.type);
  auto eq = BindCall(Fn::kEq, {x, ye}, location);
  if (!eq.ok()) return WithPosition(eq.status(), location);
  QUIVER_ASSIGN_OR_RETURN(ExprPtr y_null, BindCall(Fn::kIsNull, {ye}, location));
  auto agg = std::make_shared<LogicalOp>();
  agg->kind = LogicalOp::Kind::kAggregate;
  agg->aggregates = {MakeAggregate(AggFn::kCountStar, nullptr, int64(), NewId()),
                     MakeAggregate(AggFn::kBoolOr, *eq, boolean(), NewId()),
                     MakeAggregate(AggFn::kBoolOr, y_null, boolean(), NewId())};
  const char* names[] = {"__rows", "__match", "__nulls"};
  for (size_t k = 0; k < agg->aggregates.size(); ++k)
    agg->columns.push_back({agg->aggregates[k].output_id, names[k], agg->aggregates[k].type});
  agg->est_rows = 1;
  agg->base_rows = 1;
  agg->children = {b.plan};
  auto col = [&](size_t k) { return Expr::Column(agg->columns[k].id, agg->columns[k].type); };
  QUIVER_ASSIGN_OR_RETURN(ExprPtr empty, BindCall(Fn::kEq, {col(0), Expr::Constant(Value::Int64(0))}, location));
  QUIVER_ASSIGN_OR_RETURN(ExprPtr x_null, BindCall(Fn::kIsNull, {x}, location));
  QUIVER_ASSIGN_OR_RETURN(ExprPtr unknown, BindCall(Fn::kOr, {col(2), x_null}, location));
  QUIVER_ASSIGN_OR_RETURN(
      ExprPtr value, BindCase({empty, Expr::Constant(Value::Bool(false)), col(1), Expr::Constant(Value::Bool(true)),
                               unknown, Expr::Constant(Value::Null(boolean())), Expr::Constant(Value::Bool(false))},
                              location));
  LogicalOpPtr sub = MakeProject(agg, {value}, {{NewId(), "in", boolean()}});
  return AttachDependentScalar(sub, OuterColumnsOf(*sub, *ctx->scope), ctx, location);
}

Result<ExprPtr> Binder::Impl::BindDependentMark(const Json& select, ExprPtr x, ExprContext* ctx, int location) {
  if (!ctx->query) return Unsupported("a correlated subquery in " + ctx->clause, location);
  if (x && ReadsOnlyScopes(*x, *ctx->scope)) return BindDependentIn(select, x, ctx, location);
  // One mark join of the subquery (bound again for each: its own ids).
  auto mark_join = [&](bool matched) -> Result<ExprPtr> {
    Json copy = select;
    QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindDependent(copy, ctx->scope));
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    ExprPtr residual;
    if (x) {
      if (b.visible.size() != 1) return Error("subquery has too many columns for IN", location);
      const ColumnBinding& y = b.visible[0];
      const ExprPtr ye = Expr::Column(y.id, y.type);
      auto check = BindCall(Fn::kEq, {x, ye}, location);
      if (!check.ok()) return WithPosition(check.status(), location);
      if (matched) {
        keys.emplace_back(x, ye);
      } else {
        QUIVER_ASSIGN_OR_RETURN(ExprPtr y_null, BindCall(Fn::kIsNull, {ye}, location));
        QUIVER_ASSIGN_OR_RETURN(ExprPtr x_null, BindCall(Fn::kIsNull, {x}, location));
        QUIVER_ASSIGN_OR_RETURN(residual, BindCall(Fn::kOr, {y_null, x_null}, location));
      }
    }
    ColumnBinding mark{NewId(), "mark", boolean()};
    ExprPtr value = Expr::Column(mark.id, mark.type, location);
    const std::vector<int> ids = OuterColumnsOf(*b.plan, *ctx->scope);
    if (ctx->aggs && !ctx->in_aggregate) {  // (as AddMarkJoin: after the aggregate)
      QueryState::DeferredJoin d;
      d.sub = b.plan;
      d.keys = std::move(keys);
      d.kind = JoinKind::kMark;
      d.residual = std::move(residual);
      d.mark = mark;
      d.dependent = true;
      d.outer_ids = ids;
      d.location = location;
      ctx->query->deferred_joins.push_back(std::move(d));
      return value;
    }
    QUIVER_ASSIGN_OR_RETURN(std::vector<ExprPtr> exprs, OuterExprs(*ctx->query->plan, ids, location));
    QUIVER_ASSIGN_OR_RETURN(ctx->query->plan, JoinDependent(ctx->query->plan, b.plan, ids, exprs, DependentJoin::kMark,
                                                            std::move(keys), std::move(residual), location, &mark));
    return value;
  };
  QUIVER_ASSIGN_OR_RETURN(ExprPtr matched, mark_join(true));
  if (!x) return matched;
  QUIVER_ASSIGN_OR_RETURN(ExprPtr maybe, mark_join(false));
  return BindCase({matched, Expr::Constant(Value::Bool(true)), maybe, Expr::Constant(Value::Null(boolean())),
                   Expr::Constant(Value::Bool(false))},
                  location);
}

}  // namespace quiver::sql
