// quiver/sql/binder/bind_subquery.cc — unnesting subqueries into joins
// (binder.h lists the cases).
#include <set>

#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {

Status Binder::Impl::ExtractCorrelation(const ExprPtr& term, QueryState* q, bool* correlated) {
  auto is_outer = [&](int id) {
    for (const Scope* s = q->scope.outer; s; s = s->outer)
      if (s->ids.count(id)) return true;
    return false;
  };
  bool outer = false;
  VisitColumns(*term, [&](int id) { outer |= is_outer(id); });
  *correlated = outer;
  if (!outer) return Status::OK();
  if (q->dependent) {  // kept in the plan (bind_dependent_join.cc)
    q->dependent_filters.push_back(term);
    return Status::OK();
  }
  auto side = [&](const Expr& e) {
    int mask = 0;
    VisitColumns(e, [&](int id) { mask |= is_outer(id) ? 2 : 1; });
    return mask;
  };
  if (term->kind == Expr::Kind::kCall && term->fn == Fn::kEq) {
    const int l = side(*term->args[0]), r = side(*term->args[1]);
    if (l == 1 && r == 2) {
      q->corr_keys.emplace_back(term->args[0], term->args[1]);
      return Status::OK();
    }
    if (l == 2 && r == 1) {
      q->corr_keys.emplace_back(term->args[1], term->args[0]);
      return Status::OK();
    }
  }
  q->corr_residual.push_back(term);
  return Status::OK();
}

namespace {

bool Filters(JoinKind kind) {
  return kind == JoinKind::kSemi || kind == JoinKind::kAnti || kind == JoinKind::kNullAwareAnti;
}

// The ids of `left`'s columns a semi / anti join reads: its keys' left
// sides and the residual's columns that are not the subquery's.
std::set<int> OuterColumnsRead(const LogicalOp& left, const std::vector<std::pair<ExprPtr, ExprPtr>>& keys,
                               const ExprPtr& residual) {
  std::set<int> ids;
  for (const auto& k : keys) VisitColumns(*k.first, [&](int id) { ids.insert(id); });
  if (residual) {
    VisitColumns(*residual, [&](int id) {
      if (left.IndexOf(id) >= 0) ids.insert(id);
    });
  }
  return ids;
}

bool Covers(const LogicalOp& op, const std::set<int>& ids) {
  for (int id : ids)
    if (op.IndexOf(id) < 0) return false;
  return true;
}

LogicalOpPtr MakeSubqueryJoin(JoinKind kind, LogicalOpPtr left, LogicalOpPtr right,
                              std::vector<std::pair<ExprPtr, ExprPtr>> keys, ExprPtr residual);

// A semi / anti join over an inner join whose output outnumbers one input
// (a fan-out join: orders joined to their lineitems) moves below it onto
// that input, when the columns it reads all come from there: it then
// filters the input's rows once instead of every joined row (TPC-H Q18's
// `o_orderkey IN (...)` runs on 1.5 M orders, not on 6 M joined rows).
// Filtering commutes with an inner join, so the result is the same. A join
// that reduces its input (a selective dimension filter) keeps the semi
// join above it, where fewer rows remain.
LogicalOpPtr PushBelowInnerJoin(JoinKind kind, const LogicalOpPtr& left, const LogicalOpPtr& right,
                                std::vector<std::pair<ExprPtr, ExprPtr>>* keys, ExprPtr* residual) {
  if (!Filters(kind) || left->kind != LogicalOp::Kind::kJoin || left->join_kind != JoinKind::kInner) return nullptr;
  const std::set<int> read = OuterColumnsRead(*left, *keys, *residual);
  for (size_t side = 0; side < 2; ++side) {
    const LogicalOpPtr& input = left->children[side];
    if (!Covers(*input, read) || left->est_rows < input->est_rows) continue;
    auto j = std::make_shared<LogicalOp>(*left);
    const double before = input->est_rows;
    j->children[side] = MakeSubqueryJoin(kind, input, right, std::move(*keys), std::move(*residual));
    const double after = j->children[side]->est_rows;
    j->est_rows = std::max(1.0, left->est_rows * (before > 0 ? after / before : 1.0));
    return j;
  }
  return nullptr;
}

LogicalOpPtr MakeSubqueryJoin(JoinKind kind, LogicalOpPtr left, LogicalOpPtr right,
                              std::vector<std::pair<ExprPtr, ExprPtr>> keys, ExprPtr residual) {
  if (auto pushed = PushBelowInnerJoin(kind, left, right, &keys, &residual)) return pushed;
  auto j = std::make_shared<LogicalOp>();
  j->kind = LogicalOp::Kind::kJoin;
  j->join_kind = kind;
  j->keys = std::move(keys);
  j->residual = std::move(residual);
  j->columns = left->columns;
  if (kind == JoinKind::kLeft || kind == JoinKind::kInner)
    j->columns.insert(j->columns.end(), right->columns.begin(), right->columns.end());
  // A semi join keeps about the fraction of its right side's base rows the
  // right side's filters keep (the key is usually the right table's own:
  // partsupp IN the 'forest' parts keeps their share), at most half.
  const double right_fraction = std::min(1.0, right->est_rows / std::max(1.0, right->base_rows));
  j->est_rows = kind == JoinKind::kLeft   ? left->est_rows
                : kind == JoinKind::kSemi ? std::max(1.0, left->est_rows * std::min(0.5, right_fraction))
                                          : std::max(1.0, left->est_rows * 0.5);
  j->base_rows = left->base_rows;
  j->children = {std::move(left), std::move(right)};
  return j;
}

// The smallest part of `outer` that yields every value its columns `ids`
// take in `outer`'s rows: down inner joins and the preserved side of left
// joins (a row of the result comes from one row of each). A semi or anti
// join is kept: its rows are a subset of its left side's (TPC-H Q20: the
// partsupp rows of the 'forest' parts, not all of partsupp).
LogicalOpPtr KeySource(const LogicalOpPtr& outer, const std::set<int>& ids) {
  LogicalOpPtr node = outer;
  while (node->kind == LogicalOp::Kind::kJoin) {
    const JoinKind k = node->join_kind;
    if (k != JoinKind::kInner && k != JoinKind::kLeft) break;
    const size_t sides = 2;
    LogicalOpPtr next;
    for (size_t c = 0; c < sides && c < node->children.size(); ++c)
      if (Covers(*node->children[c], ids)) next = node->children[c];
    if (!next) break;
    node = next;
  }
  return node;
}

// Decorrelation with a key filter (DuckDB's delim join, "magic sets"): a
// correlated aggregate subquery becomes an aggregate grouped by its
// correlation keys, left-joined to the outer rows; it only needs the groups
// whose keys the outer rows hold. When the part of the outer plan that
// yields those keys is much smaller than the aggregate's input, the input
// is first semi-joined with it (TPC-H Q17: lineitem reduced to the 2,000
// selected parts' rows before avg(l_quantity) by part, instead of 200,000
// groups over 6 M rows). `keys` are the left join's (outer expr, subquery
// output column) pairs. Returns `sub` unchanged when the shape or the
// estimates do not fit.
LogicalOpPtr ReduceByOuterKeys(const LogicalOpPtr& sub, const LogicalOpPtr& outer,
                               const std::vector<std::pair<ExprPtr, ExprPtr>>& keys) {
  std::set<int> outer_ids;
  for (const auto& k : keys) VisitColumns(*k.first, [&](int id) { outer_ids.insert(id); });
  const LogicalOpPtr source = KeySource(outer, outer_ids);
  // Down from the subquery's output to its aggregate, following each key.
  std::vector<int> ids;
  for (const auto& k : keys) {
    if (k.second->kind != Expr::Kind::kColumn) return sub;
    ids.push_back(k.second->column);
  }
  std::vector<LogicalOpPtr> path;
  LogicalOpPtr node = sub;
  while (node->kind != LogicalOp::Kind::kAggregate) {
    if (node->children.size() != 1) return sub;
    if (node->kind == LogicalOp::Kind::kProject) {
      for (int& id : ids) {
        const int at = node->IndexOf(id);
        if (at < 0 || node->exprs[static_cast<size_t>(at)]->kind != Expr::Kind::kColumn) return sub;
        id = node->exprs[static_cast<size_t>(at)]->column;
      }
    } else if (node->kind != LogicalOp::Kind::kFilter && node->kind != LogicalOp::Kind::kSort &&
               node->kind != LogicalOp::Kind::kLimit) {
      return sub;
    }
    path.push_back(node);
    node = node->children[0];
  }
  const LogicalOpPtr& agg = node;
  const LogicalOpPtr& input = agg->children[0];
  if (source->est_rows * 4 > input->est_rows) return sub;
  std::vector<std::pair<ExprPtr, ExprPtr>> semi_keys;
  for (size_t k = 0; k < keys.size(); ++k) {
    const int at = agg->IndexOf(ids[k]);
    if (at < 0 || static_cast<size_t>(at) >= agg->groups.size()) return sub;
    semi_keys.emplace_back(agg->groups[static_cast<size_t>(at)], keys[k].first);
  }
  auto reduced = std::make_shared<LogicalOp>(*agg);
  const double before = input->est_rows;
  reduced->children = {MakeSubqueryJoin(JoinKind::kSemi, input, source, std::move(semi_keys), nullptr)};
  const double fraction = std::min(1.0, source->est_rows / std::max(1.0, before));
  reduced->est_rows = std::max(1.0, agg->est_rows * fraction);
  reduced->children[0]->est_rows = std::max(1.0, before * fraction);
  LogicalOpPtr rebuilt = reduced;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    auto copy = std::make_shared<LogicalOp>(**it);
    copy->children = {rebuilt};
    copy->est_rows = std::max(1.0, (*it)->est_rows * fraction);
    rebuilt = copy;
  }
  return rebuilt;
}

}  // namespace

LogicalOpPtr MakeMarkJoin(LogicalOpPtr left, LogicalOpPtr sub, std::vector<std::pair<ExprPtr, ExprPtr>> keys,
                          ExprPtr residual, ColumnBinding mark, bool null_aware) {
  auto j = std::make_shared<LogicalOp>();
  j->kind = LogicalOp::Kind::kJoin;
  j->join_kind = JoinKind::kMark;
  j->keys = std::move(keys);
  j->residual = std::move(residual);
  j->mark_null_aware = null_aware;
  j->columns = left->columns;
  j->columns.push_back(std::move(mark));
  j->est_rows = left->est_rows;
  j->base_rows = left->base_rows;
  j->children = {std::move(left), std::move(sub)};
  return j;
}

namespace {

// Whether `node` (a parse tree) calls an aggregate function.
bool CallsAggregate(const Json& node) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "FuncCall" && it.value().contains("funcname") && !it.value()["funcname"].empty()) {
        const std::string name = FoldIdentifier(StringOf(it.value()["funcname"].back()));
        if (name == "count" || name == "sum" || name == "avg" || name == "min" || name == "max") return true;
      }
      if (CallsAggregate(it.value())) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node)
      if (CallsAggregate(v)) return true;
  }
  return false;
}

// `(SELECT expr)`: one target, no FROM and no other clause, no aggregate
// (whose level would depend on the columns it reads) and no subquery. Its
// value is `expr`'s, read in the enclosing query (PostgreSQL evaluates it
// per outer row: `SELECT a, (SELECT t.a) FROM t`).
Json* BareExpressionSelect(Json& select) {
  if (!select.is_object() || !select.contains("targetList") || select["targetList"].size() != 1) return nullptr;
  for (auto it = select.begin(); it != select.end(); ++it)
    if (it.key() != "targetList" && it.key() != "op" && it.key() != "limitOption") return nullptr;
  if (select.value("op", "SETOP_NONE") != "SETOP_NONE") return nullptr;
  Json& t = select["targetList"][0];
  if (!t.contains("ResTarget") || !t["ResTarget"].contains("val")) return nullptr;
  Json& val = t["ResTarget"]["val"];
  if (CallsAggregate(val) || val.dump().find("\"SubLink\"") != std::string::npos ||
      val.dump().find("\"A_Star\"") != std::string::npos)
    return nullptr;
  return &val;
}

}  // namespace

Result<ExprPtr> Binder::Impl::BindScalarSubquery(Json& node, ExprContext* ctx) {
  Json& link = node["SubLink"];
  const int location = link.value("location", FirstLocation(node));
  if (!ctx->scope) return Unsupported("a subquery here", location);
  if (Json* bare = BareExpressionSelect(link["subselect"]["SelectStmt"])) return BindExpr(*bare, ctx);
  Json original = link["subselect"]["SelectStmt"];  // (binding changes the parse tree)
  auto fast = BindQuery(link["subselect"]["SelectStmt"], ctx->scope, true);
  if (!fast.ok() && fast.status().IsNotImplemented()) return BindDependentScalar(original, ctx, location);
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, std::move(fast));
  if (b.visible.size() != 1) return Error("subquery must return only one column", location);
  // Correlated by equalities only, several rows possible (a lookup):
  // grouped by its keys, no D (bind_scalar_lookup.cc).
  if (ctx->query && FitsKeyedLookup(b, *ctx->scope)) return BindKeyedLookup(b, ctx, location);
  // Outer columns read outside WHERE's equalities (in the select list, in
  // a non-equality, under LIMIT, ...): the general unnesting.
  if (NeedsDependentJoin(b, *ctx->scope) || b.corr_residual || (!b.corr_keys.empty() && !b.aggregated_without_groups))
    return BindDependentScalar(original, ctx, location);
  if (b.corr_keys.empty() && !b.corr_residual) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::kSubquery;
    e->type = b.visible[0].type;
    e->location = location;
    LogicalOpPtr plan = b.plan;
    e->subquery = std::make_shared<ScalarSubquery>(runner_factory(plan, false));
    return ExprPtr(e);
  }
  if (!ctx->query) return Unsupported("a correlated subquery in " + ctx->clause, location);
  std::vector<std::pair<ExprPtr, ExprPtr>> keys;
  for (const auto& k : b.corr_keys) keys.emplace_back(k.second, k.first);
  ExprPtr value = Expr::Column(b.visible[0].id, b.visible[0].type, location);
  if (b.first_is_count) {
    QUIVER_ASSIGN_OR_RETURN(value, BindCall(Fn::kCoalesce, {value, Expr::Constant(Value::Int64(0))}, location));
  }
  if (ctx->aggs && !ctx->in_aggregate) {
    // SELECT list, HAVING, ORDER BY: the query may aggregate (BindQuery
    // places the join). In an aggregate's argument the join goes below the
    // aggregate, onto the rows it reads.
    QueryState::DeferredJoin d;
    d.sub = b.plan;
    d.keys = std::move(keys);
    ctx->query->deferred_joins.push_back(std::move(d));
    return value;
  }
  const LogicalOpPtr sub = ReduceByOuterKeys(b.plan, ctx->query->plan, keys);
  ctx->query->plan = MakeSubqueryJoin(JoinKind::kLeft, ctx->query->plan, sub, std::move(keys), nullptr);
  return value;
}

Status Binder::Impl::ApplyDeferredJoins(QueryState* q,
                                        const std::function<Result<ExprPtr>(const ExprPtr&)>& outer_rewrite,
                                        std::unordered_set<int>* allowed) {
  for (auto& d : q->deferred_joins) {
    if (d.dependent) {
      std::vector<ExprPtr> exprs;
      for (int id : d.outer_ids) {
        DataTypePtr type;
        for (const auto& c : q->scope.cols)
          if (c.id == id) type = c.type;
        QUIVER_ASSIGN_OR_RETURN(ExprPtr e, outer_rewrite(Expr::Column(id, type)));
        exprs.push_back(e);
      }
      if (allowed) {
        for (const auto& c : d.sub->columns) allowed->insert(c.id);
        if (d.kind == JoinKind::kMark) allowed->insert(d.mark.id);
      }
      if (d.kind != JoinKind::kMark) {
        QUIVER_ASSIGN_OR_RETURN(q->plan, JoinDependent(q->plan, d.sub, d.outer_ids, exprs, DependentJoin::kScalar, {},
                                                       nullptr, d.location));
        continue;
      }
      for (auto& k : d.keys) {
        QUIVER_ASSIGN_OR_RETURN(k.first, outer_rewrite(k.first));
      }
      if (d.residual) {
        QUIVER_ASSIGN_OR_RETURN(d.residual, outer_rewrite(d.residual));
      }
      QUIVER_ASSIGN_OR_RETURN(q->plan, JoinDependent(q->plan, d.sub, d.outer_ids, exprs, DependentJoin::kMark,
                                                     std::move(d.keys), d.residual, d.location, &d.mark));
      continue;
    }
    for (auto& k : d.keys) {
      QUIVER_ASSIGN_OR_RETURN(k.first, outer_rewrite(k.first));
    }
    if (d.kind == JoinKind::kMark) {
      // The residual reads the subquery's columns too: allowed first.
      if (allowed) {
        for (const auto& c : d.sub->columns) allowed->insert(c.id);
        allowed->insert(d.mark.id);
      }
      if (d.residual) {
        QUIVER_ASSIGN_OR_RETURN(d.residual, outer_rewrite(d.residual));
      }
      q->plan = MakeMarkJoin(q->plan, d.sub, std::move(d.keys), d.residual, d.mark, d.mark_null_aware);
      continue;
    }
    if (d.on_place) d.on_place(q->plan, d.keys);
    const LogicalOpPtr sub = ReduceByOuterKeys(d.sub, q->plan, d.keys);
    if (allowed)
      for (const auto& c : sub->columns) allowed->insert(c.id);
    q->plan = MakeSubqueryJoin(JoinKind::kLeft, q->plan, sub, std::move(d.keys), nullptr);
  }
  q->deferred_joins.clear();
  return Status::OK();
}

// EXISTS (SELECT list FROM ...) asks only whether rows exist: a select list
// of plain columns and constants (TPC-H Q21's SELECT *) becomes one NULL, so
// the subquery's scans read only the columns its joins and filters use
// (Q21's 16 lineitem columns were scanned and gathered for two semi / anti
// joins on l_orderkey and l_suppkey). Left alone where the list can change
// the rows: aggregates (one row even over none), DISTINCT, GROUP BY,
// HAVING, LIMIT / OFFSET, windows, set operations.
void DropExistsSelectList(Json* select) {
  if (select == nullptr || !select->is_object() || !select->contains("targetList")) return;
  for (const char* clause : {"groupClause", "havingClause", "distinctClause", "limitCount", "limitOffset",
                             "windowClause", "larg", "rarg", "valuesLists"})
    if (select->contains(clause)) return;
  Json& targets = (*select)["targetList"];
  if (!targets.is_array() || targets.empty()) return;
  int location = -1;
  for (const Json& t : targets) {
    if (!t.contains("ResTarget") || !t["ResTarget"].contains("val")) return;
    const Json& v = t["ResTarget"]["val"];
    if (!v.contains("ColumnRef") && !v.contains("A_Const")) return;
    if (location < 0) location = t["ResTarget"].value("location", -1);
  }
  Json null_target = Json::object();
  null_target["ResTarget"]["val"]["A_Const"]["isnull"] = true;
  null_target["ResTarget"]["val"]["A_Const"]["location"] = location;
  null_target["ResTarget"]["location"] = location;
  targets = Json::array({null_target});
}

Status Binder::Impl::ApplySubqueryConjunct(Json& term, QueryState* q) {
  Json* node = &term;
  bool negated = false;
  if (node->contains("BoolExpr") && (*node)["BoolExpr"].value("boolop", "") == "NOT_EXPR" &&
      (*node)["BoolExpr"]["args"].size() == 1 && (*node)["BoolExpr"]["args"][0].contains("SubLink")) {
    negated = true;
    node = &(*node)["BoolExpr"]["args"][0];
  }
  if (node->contains("SubLink")) {
    Json& link = (*node)["SubLink"];
    const std::string type = link.value("subLinkType", "");
    const int location = link.value("location", FirstLocation(*node));
    if (type == "EXISTS_SUBLINK") {
      DropExistsSelectList(&link["subselect"]["SelectStmt"]);
      Json original = link["subselect"]["SelectStmt"];  // (binding changes the parse tree)
      auto fast = BindQuery(link["subselect"]["SelectStmt"], &q->scope, true);
      if ((!fast.ok() && fast.status().IsNotImplemented()) || (fast.ok() && NeedsDependentJoin(*fast, q->scope)))
        return ApplyDependentSemiJoin(original, nullptr, negated, q, location);
      QUIVER_ASSIGN_OR_RETURN(BoundQuery b, std::move(fast));
      if (b.corr_keys.empty() && !b.corr_residual) {
        auto e = std::make_shared<Expr>();
        e->kind = Expr::Kind::kSubquery;
        e->type = boolean();
        e->location = location;
        e->subquery = std::make_shared<ScalarSubquery>(runner_factory(b.plan, true));
        ExprPtr pred = e;
        if (negated) {
          QUIVER_ASSIGN_OR_RETURN(pred, BindCall(Fn::kNot, {pred}, location));
        }
        q->plan = AddFilter(q->plan, pred);
        return Status::OK();
      }
      std::vector<std::pair<ExprPtr, ExprPtr>> keys;
      for (const auto& k : b.corr_keys) keys.emplace_back(k.second, k.first);
      q->plan = MakeSubqueryJoin(negated ? JoinKind::kAnti : JoinKind::kSemi, q->plan, b.plan, std::move(keys),
                                 b.corr_residual);
      return Status::OK();
    }
    if (type == "ANY_SUBLINK") {
      // A correlated NOT IN binds the term again as a mark join.
      const Json term_copy = negated ? term : Json();
      if (link.contains("operName")) {
        const std::string op = StringOf(link["operName"].back());
        if (op != "=") return Unsupported("op ANY (subquery) other than IN / = ANY", location);
      }
      if (link["testexpr"].contains("RowExpr")) return Unsupported("(a, b) IN (subquery)", location);
      ExprContext ctx{&q->scope, "WHERE", nullptr, false, q};
      QUIVER_ASSIGN_OR_RETURN(ExprPtr x, BindExpr(link["testexpr"], &ctx));
      Json original = link["subselect"]["SelectStmt"];  // (binding changes the parse tree)
      auto fast = BindQuery(link["subselect"]["SelectStmt"], &q->scope, true);
      const bool dependent =
          (!fast.ok() && fast.status().IsNotImplemented()) || (fast.ok() && NeedsDependentJoin(*fast, q->scope));
      if (dependent && !negated) return ApplyDependentSemiJoin(original, x, false, q, location);
      if (dependent) {
        // NOT IN: NOT over the dependent mark joins' three-valued IN
        // (BindDependentMark), a filter: a NULL in this row's set drops it.
        ExprContext ctx2{&q->scope, "WHERE", nullptr, false, q};
        QUIVER_ASSIGN_OR_RETURN(ExprPtr in, BindDependentMark(original, x, &ctx2, location));
        QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindCall(Fn::kNot, {in}, location));
        q->plan = AddFilter(q->plan, e);
        return Status::OK();
      }
      QUIVER_ASSIGN_OR_RETURN(BoundQuery b, std::move(fast));
      if (b.visible.size() != 1) return Error("subquery has too many columns for IN", location);
      const ColumnBinding& y = b.visible[0];
      auto check = BindCall(Fn::kEq, {x, Expr::Column(y.id, y.type)}, location);
      if (!check.ok()) return WithPosition(check.status(), location);
      std::vector<std::pair<ExprPtr, ExprPtr>> keys;
      keys.emplace_back(x, Expr::Column(y.id, y.type));
      for (const auto& k : b.corr_keys) keys.emplace_back(k.second, k.first);
      if (negated) {
        if (keys.size() > 1 || b.corr_residual) {
          // Correlated NOT IN: NOT over the mark join's three-valued IN
          // (bind_mark_join.cc), bound from the parse tree as any term.
          Json term_again = term_copy;  // (binding changed `term`'s subquery)
          ExprContext ctx2{&q->scope, "WHERE", nullptr, false, q};
          QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(term_again, &ctx2));
          q->plan = AddFilter(q->plan, e);
          return Status::OK();
        }
        q->plan = MakeSubqueryJoin(JoinKind::kNullAwareAnti, q->plan, b.plan, std::move(keys), nullptr);
      } else {
        q->plan = MakeSubqueryJoin(JoinKind::kSemi, q->plan, b.plan, std::move(keys), b.corr_residual);
      }
      return Status::OK();
    }
  }
  // Any other term: bind it (its scalar subqueries join into q->plan) and filter.
  ExprContext ctx{&q->scope, "WHERE", nullptr, false, q};
  QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(term, &ctx));
  QUIVER_RETURN_NOT_OK(WithPosition(CheckBoolean(*e, "WHERE"), FirstLocation(term)));
  if (q->is_subquery) {
    bool correlated = false;
    QUIVER_RETURN_NOT_OK(ExtractCorrelation(e, q, &correlated));
    if (correlated) return Status::OK();
  }
  // As deep as its columns allow, like the WHERE terms without subqueries
  // (PlanJoinGraph): TPC-DS 6's d_month_seq = (SELECT DISTINCT d_month_seq
  // ...) filters date_dim's scan, not the join of store_sales with
  // everything (and date_dim's keys then filter store_sales' scan).
  q->plan = PushFilter(q->plan, e);
  return Status::OK();
}

}  // namespace quiver::sql
