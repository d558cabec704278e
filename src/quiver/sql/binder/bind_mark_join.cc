// quiver/sql/binder/bind_mark_join.cc — EXISTS and IN (subquery) as values:
// under OR, under NOT inside other expressions, in the SELECT list, HAVING
// and ORDER BY, and NOT IN over a correlated subquery. Each becomes a mark
// join (plan/logical_plan.h JoinKind::kMark, DuckDB's MARK join): the outer
// rows, each once, with a BOOLEAN column that says whether the subquery
// holds a match; the expression reads that column. The AND terms of WHERE
// keep their semi / anti joins (bind_subquery.cc), which filter instead.
//
//  - uncorrelated EXISTS: a scalar subquery run once (as in WHERE);
//  - correlated EXISTS: a mark join on the correlation's equalities, its
//    other conditions the join's residual (a nested-loop mark join when
//    there is no equality);
//  - uncorrelated x IN (SELECT y ...): a null-aware mark join on x = y: NULL
//    where SQL's IN is unknown (no match, the set not empty, and x NULL or a
//    NULL among the y), so that NOT (x IN ...) and x NOT IN ... are right;
//  - correlated x IN (SELECT y ... WHERE inner = outer): the set differs per
//    outer row, so its NULLs are asked per row too, by a second mark join
//    on the correlation alone with the residual `y IS NULL OR x IS NULL`:
//    CASE WHEN m1 THEN TRUE WHEN m2 THEN NULL ELSE FALSE END (DuckDB keeps
//    per-group counts inside its join instead; the answers are the same);
//  - a subquery reading outer columns elsewhere (its select list, a
//    non-equality under an aggregate, LIMIT, ...): the same mark joins
//    over the general unnesting (bind_dependent_join.cc BindDependentMark).
#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {

Result<ExprPtr> Binder::Impl::AddMarkJoin(ExprContext* ctx, LogicalOpPtr sub,
                                          std::vector<std::pair<ExprPtr, ExprPtr>> keys, ExprPtr residual,
                                          bool null_aware, int location) {
  ColumnBinding mark{NewId(), "mark", boolean()};
  ExprPtr value = Expr::Column(mark.id, mark.type, location);
  if (ctx->aggs && !ctx->in_aggregate) {
    // SELECT list, HAVING, ORDER BY: the query may aggregate (BindQuery
    // places the join after the aggregate). In an aggregate's argument the
    // join goes below the aggregate, onto the rows it reads.
    QueryState::DeferredJoin d;
    d.sub = std::move(sub);
    d.keys = std::move(keys);
    d.kind = JoinKind::kMark;
    d.residual = std::move(residual);
    d.mark = std::move(mark);
    d.mark_null_aware = null_aware;
    ctx->query->deferred_joins.push_back(std::move(d));
    return value;
  }
  ctx->query->plan =
      MakeMarkJoin(ctx->query->plan, std::move(sub), std::move(keys), std::move(residual), std::move(mark), null_aware);
  return value;
}

Result<ExprPtr> Binder::Impl::BindMarkSubquery(Json& node, ExprContext* ctx) {
  Json& link = node["SubLink"];
  const std::string type = link.value("subLinkType", "");
  const int location = link.value("location", FirstLocation(node));
  if (!ctx->scope) return Unsupported("a subquery here", location);
  if (type == "EXISTS_SUBLINK") {
    DropExistsSelectList(&link["subselect"]["SelectStmt"]);
    const Json original = link["subselect"]["SelectStmt"];  // (binding changes the parse tree)
    auto fast = BindQuery(link["subselect"]["SelectStmt"], ctx->scope, true);
    if ((!fast.ok() && fast.status().IsNotImplemented()) || (fast.ok() && NeedsDependentJoin(*fast, *ctx->scope)))
      return BindDependentMark(original, nullptr, ctx, location);
    QUIVER_ASSIGN_OR_RETURN(BoundQuery b, std::move(fast));
    if (b.corr_keys.empty() && !b.corr_residual) {
      auto e = std::make_shared<Expr>();
      e->kind = Expr::Kind::kSubquery;
      e->type = boolean();
      e->location = location;
      e->subquery = std::make_shared<ScalarSubquery>(runner_factory(b.plan, true));
      return ExprPtr(e);
    }
    if (!ctx->query) return Unsupported("a correlated EXISTS in " + ctx->clause, location);
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    for (const auto& k : b.corr_keys) keys.emplace_back(k.second, k.first);
    return AddMarkJoin(ctx, b.plan, std::move(keys), b.corr_residual, false, location);
  }
  // x IN (subquery) / x = ANY (subquery)
  if (link.contains("operName")) {
    const std::string op = StringOf(link["operName"].back());
    if (op != "=") return Unsupported("op ANY (subquery) other than IN / = ANY", location);
  }
  if (link["testexpr"].contains("RowExpr")) return Unsupported("(a, b) IN (subquery)", location);
  if (!ctx->query) return Unsupported("IN (subquery) in " + ctx->clause, location);
  const Json subselect = link["subselect"]["SelectStmt"];  // a second binding's copy (correlated)
  QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(link["testexpr"], ctx));
  auto fast = BindQuery(link["subselect"]["SelectStmt"], ctx->scope, true);
  if ((!fast.ok() && fast.status().IsNotImplemented()) || (fast.ok() && NeedsDependentJoin(*fast, *ctx->scope)))
    return BindDependentMark(subselect, x, ctx, location);
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, std::move(fast));
  if (b.visible.size() != 1) return Error("subquery has too many columns for IN", location);
  const ColumnBinding& y = b.visible[0];
  auto check = BindCall(Fn::kEq, {x, Expr::Column(y.id, y.type)}, location);
  if (!check.ok()) return WithPosition(check.status(), location);
  std::vector<std::pair<ExprPtr, ExprPtr>> keys;
  keys.emplace_back(x, Expr::Column(y.id, y.type));
  if (b.corr_keys.empty() && !b.corr_residual)
    return AddMarkJoin(ctx, b.plan, std::move(keys), nullptr, true, location);
  for (const auto& k : b.corr_keys) keys.emplace_back(k.second, k.first);
  QUIVER_ASSIGN_OR_RETURN(ExprPtr matched, AddMarkJoin(ctx, b.plan, std::move(keys), b.corr_residual, false, location));
  // The same subquery bound again (its own column ids), joined on the
  // correlation alone: does this row's set hold a NULL, or is x NULL while
  // the set is not empty?
  Json again = subselect;
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b2, BindQuery(again, ctx->scope, true));
  const ColumnBinding& y2 = b2.visible[0];
  QUIVER_ASSIGN_OR_RETURN(ExprPtr y_null, BindCall(Fn::kIsNull, {Expr::Column(y2.id, y2.type)}, location));
  QUIVER_ASSIGN_OR_RETURN(ExprPtr x_null, BindCall(Fn::kIsNull, {x}, location));
  QUIVER_ASSIGN_OR_RETURN(ExprPtr unknown, BindCall(Fn::kOr, {y_null, x_null}, location));
  if (b2.corr_residual) {
    QUIVER_ASSIGN_OR_RETURN(unknown, BindCall(Fn::kAnd, {b2.corr_residual, unknown}, location));
  }
  std::vector<std::pair<ExprPtr, ExprPtr>> keys2;
  for (const auto& k : b2.corr_keys) keys2.emplace_back(k.second, k.first);
  QUIVER_ASSIGN_OR_RETURN(ExprPtr maybe, AddMarkJoin(ctx, b2.plan, std::move(keys2), unknown, false, location));
  return BindCase({matched, Expr::Constant(Value::Bool(true)), maybe, Expr::Constant(Value::Null(boolean())),
                   Expr::Constant(Value::Bool(false))},
                  location);
}

}  // namespace quiver::sql
