// quiver/sql/binder/bind_scalar_lookup.cc — scalar subqueries that may
// return several rows per outer row, answered in one evaluation (as DuckDB
// does, with FIRST and a row count beside it): the subquery's rows are
// grouped by their key (the correlation's inner side, or D's columns of the
// general unnesting) into any_value of the value and count(*). That result
// is shared, run once (a kCteScan), by the join that reads the value and by
// an uncorrelated check: a key of more than one row that an outer row asks
// for is SQLSTATE 21000.
//
// A subquery correlated by equalities only (`(SELECT r_name FROM region
// WHERE r_regionkey = n_regionkey)`, TPC-DS style lookups) needs no D: it
// is grouped by its inner key columns and left-joined with plain equality
// (a NULL outer key finds no row, as the subquery finds none). Its check
// first asks whether any key has two rows (usually none: a primary key);
// only then whether an outer row asks for such a key (a semi join with a
// copy of the outer plan).
#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {
namespace {

// Whether each row of `plan` (a subquery bound for an equality-correlated
// flattening) is a row of the subquery for the outer rows whose key it
// holds: no operator that reads other keys' rows (windows, LIMIT, top-N,
// grouping sets, set operations).
bool RowsFollowTheirKeys(const LogicalOp& op) {
  using K = LogicalOp::Kind;
  if (op.kind == K::kWindow || op.kind == K::kLimit || op.kind == K::kExpand || op.kind == K::kUnion) return false;
  if (op.kind == K::kSort && (op.limit >= 0 || op.offset > 0)) return false;
  for (const auto& c : op.children)
    if (c && !RowsFollowTheirKeys(*c)) return false;
  return true;
}

LogicalOpPtr LeftJoin(LogicalOpPtr left, LogicalOpPtr right, std::vector<std::pair<ExprPtr, ExprPtr>> keys) {
  auto j = std::make_shared<LogicalOp>();
  j->kind = LogicalOp::Kind::kJoin;
  j->join_kind = JoinKind::kLeft;
  j->keys = std::move(keys);
  j->columns = left->columns;
  j->columns.insert(j->columns.end(), right->columns.begin(), right->columns.end());
  j->est_rows = left->est_rows;
  j->base_rows = left->base_rows;
  j->children = {std::move(left), std::move(right)};
  return j;
}

}  // namespace

LogicalOpPtr CopyPlanTree(const LogicalOpPtr& op) {
  auto copy = std::make_shared<LogicalOp>(*op);
  for (auto& c : copy->children) c = CopyPlanTree(c);
  return copy;
}

Result<LogicalOpPtr> Binder::Impl::OneRowPerKey(const LogicalOpPtr& input, const std::vector<ExprPtr>& key_exprs,
                                                const ColumnBinding& value, const HitPlan& hit_plan, int location,
                                                std::vector<ColumnBinding>* key_cols) {
  auto agg = std::make_shared<LogicalOp>();
  agg->kind = LogicalOp::Kind::kAggregate;
  key_cols->clear();
  for (const auto& k : key_exprs) {
    agg->groups.push_back(k);
    key_cols->push_back({NewId(), "__key", k->type});
    agg->columns.push_back(key_cols->back());
  }
  AggregateCall pick;
  pick.fn = AggFn::kAnyValue;
  pick.arg = Expr::Column(value.id, value.type);
  pick.type = value.type;
  pick.output_id = NewId();
  AggregateCall count;
  count.fn = AggFn::kCountStar;
  count.type = int64();
  count.output_id = NewId();
  agg->aggregates = {pick, count};
  agg->columns.push_back({pick.output_id, value.name, value.type});
  agg->columns.push_back({count.output_id, "__rows", int64()});
  agg->est_rows = std::max(1.0, input->est_rows * 0.5);
  agg->base_rows = input->base_rows;
  agg->children = {input};
  auto shared = std::make_shared<LogicalOp>();
  shared->kind = LogicalOp::Kind::kCteScan;
  shared->cte_id = next_cte_id++;
  shared->cte_name = kScalarLookupName;
  cte_references[shared->cte_id] += 2;
  shared->columns = agg->columns;
  shared->est_rows = agg->est_rows;
  shared->base_rows = agg->base_rows;
  shared->children = {agg};
  QUIVER_ASSIGN_OR_RETURN(
      ExprPtr several,
      BindCall(Fn::kGt, {Expr::Column(count.output_id, int64()), Expr::Constant(Value::Int64(1))}, location));
  // (The check's plans are their own: the same column ids do not meet.)
  const LogicalOpPtr dups = AddFilter(CopyPlanTree(shared), several);
  ScalarSubquery::Runner any_dups = runner_factory(dups, true);
  SubqueryRunnerFactory factory = runner_factory;
  auto check = std::make_shared<Expr>();
  check->kind = Expr::Kind::kSubquery;
  check->type = boolean();
  check->location = location;
  check->subquery = std::make_shared<ScalarSubquery>([any_dups, factory, dups, hit_plan]() -> Result<Value> {
    QUIVER_ASSIGN_OR_RETURN(Value v, any_dups());
    bool hit = !v.is_null && v.i != 0;
    if (hit && hit_plan) {
      QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr plan, hit_plan(dups));
      QUIVER_ASSIGN_OR_RETURN(Value h, factory(plan, true)());
      hit = !h.is_null && h.i != 0;
    }
    if (hit)
      return Status::Invalid("more than one row returned by a subquery used as an expression").WithSqlState("21000");
    return Value::Bool(true);
  });
  std::vector<ExprPtr> exprs = {Expr::Column(pick.output_id, value.type)};
  std::vector<ColumnBinding> cols = {value};
  for (const auto& c : *key_cols) {
    exprs.push_back(Expr::Column(c.id, c.type));
    cols.push_back(c);
  }
  return MakeProject(AddFilter(shared, check), std::move(exprs), std::move(cols));
}

bool Binder::Impl::FitsKeyedLookup(const BoundQuery& b, const Scope& scope) {
  return !b.corr_keys.empty() && !b.corr_residual && !b.aggregated_without_groups && b.visible.size() == 1 &&
         !NeedsDependentJoin(b, scope) && RowsFollowTheirKeys(*b.plan);
}

Result<ExprPtr> Binder::Impl::BindKeyedLookup(const BoundQuery& b, ExprContext* ctx, int location) {
  const ColumnBinding value = b.visible[0];
  std::vector<ExprPtr> inner;
  for (const auto& k : b.corr_keys) inner.push_back(k.first);
  // Where the join is placed (now, or after the query's aggregate): the
  // outer plan and the keys, for the check's semi join.
  struct Placed {
    LogicalOpPtr outer;
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;  // (outer expr, key column)
  };
  auto placed = std::make_shared<Placed>();
  HitPlan hit = [placed](const LogicalOpPtr& dups) -> Result<LogicalOpPtr> {
    if (!placed->outer) return Status::Invalid("internal: a scalar subquery's check ran before its join was placed");
    auto j = std::make_shared<LogicalOp>();
    j->kind = LogicalOp::Kind::kJoin;
    j->join_kind = JoinKind::kSemi;
    j->keys = placed->keys;
    auto left = CopyPlanTree(placed->outer);
    j->columns = left->columns;
    j->est_rows = left->est_rows;
    j->base_rows = left->base_rows;
    j->children = {left, dups};
    return LogicalOpPtr(j);
  };
  std::vector<ColumnBinding> key_cols;
  QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr sub, OneRowPerKey(b.plan, inner, value, hit, location, &key_cols));
  std::vector<std::pair<ExprPtr, ExprPtr>> keys;
  for (size_t k = 0; k < key_cols.size(); ++k)
    keys.emplace_back(b.corr_keys[k].second, Expr::Column(key_cols[k].id, key_cols[k].type));
  auto place = [placed](const LogicalOpPtr& outer, const std::vector<std::pair<ExprPtr, ExprPtr>>& at) {
    placed->outer = outer;
    placed->keys = at;
  };
  if (ctx->aggs && !ctx->in_aggregate) {
    // SELECT list, HAVING, ORDER BY: joined where the query's aggregate
    // allows (ApplyDeferredJoins).
    QueryState::DeferredJoin d;
    d.sub = sub;
    d.keys = std::move(keys);
    d.on_place = place;
    ctx->query->deferred_joins.push_back(std::move(d));
  } else {
    place(ctx->query->plan, keys);
    ctx->query->plan = LeftJoin(ctx->query->plan, sub, std::move(keys));
  }
  return Expr::Column(value.id, value.type, location);
}

}  // namespace quiver::sql
