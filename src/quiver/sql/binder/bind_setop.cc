// quiver/sql/binder/bind_setop.cc — set operations (UNION [ALL],
// INTERSECT [ALL], EXCEPT [ALL]) and VALUES lists, and ORDER BY / LIMIT /
// OFFSET over their result.
//
// Plans (PostgreSQL's semantics, SQL:2016 7.17 <query expression>; NULLs
// compare equal, as in DISTINCT):
//   a UNION ALL b ...     one kUnion over every branch (nested UNION ALLs
//                         flattened), each branch cast to the unified types
//   a UNION b             the UNION ALL under a hash aggregate grouping by
//                         every column (SELECT DISTINCT's plan)
//   a INTERSECT b         a UNION ALL of (a, 0 AS tag) and (b, 1 AS tag)
//   a EXCEPT b            under a hash aggregate grouping by every column
//                         with min(tag), max(tag); INTERSECT keeps the groups
//                         with min < max (in both), EXCEPT those with
//                         max = 0 (in a only)
//   ... ALL               each branch numbers its copies of a row first
//                         (row_number() OVER (PARTITION BY every column)),
//                         and the number is one more grouping column: the
//                         k-th copy of a row is kept when the other side
//                         has (INTERSECT ALL) / has not (EXCEPT ALL) a k-th
//                         copy, so min(m, n) / max(m - n, 0) copies remain.
// The hash aggregate is the memory consumer: it takes its memory from the
// statement's aggregate pool and spills (execution/hash_aggregate.cc).
//
// Types: column k's type is the common type of the branches' column k
// (function_registry.h CommonType: INTEGER and BIGINT give BIGINT, a
// DECIMAL and a DOUBLE give DOUBLE, DATE and TIMESTAMP give TIMESTAMP; a
// column NULL in every branch stays untyped, as in DuckDB, and takes its
// type where it is used); none is Invalid 42804. The names are the first
// branch's. In the spark dialect a STRING column beside a typed one takes
// Spark's least common type (BIGINT with an integer, DOUBLE with a DECIMAL
// or DOUBLE, ...; function_registry.h), its values cast by Spark's ANSI cast.
#include <algorithm>

#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {
namespace {

LogicalOpPtr Project(LogicalOpPtr child, std::vector<ExprPtr> exprs, std::vector<ColumnBinding> cols) {
  auto p = std::make_shared<LogicalOp>();
  p->kind = LogicalOp::Kind::kProject;
  p->exprs = std::move(exprs);
  p->columns = std::move(cols);
  p->est_rows = child->est_rows;
  p->base_rows = child->base_rows;
  p->children = {std::move(child)};
  return p;
}

std::string SetOpWord(const std::string& op) {
  return op == "SETOP_UNION" ? "UNION" : op == "SETOP_INTERSECT" ? "INTERSECT" : "EXCEPT";
}

// The branches of a chain of UNION ALLs (without ORDER BY / LIMIT / WITH of
// their own), left to right. `depth` bounds the recursion.
Status CollectUnionAll(Json& s, std::vector<Json*>* out, int depth) {
  if (depth > 1000) return Status::Invalid("set operations nested more than 1000 deep").WithSqlState("54001");
  const bool chain = s.value("op", "SETOP_NONE") == "SETOP_UNION" && s.value("all", false) &&
                     !s.contains("sortClause") && !s.contains("limitCount") && !s.contains("limitOffset") &&
                     !s.contains("withClause");
  if (!chain) {
    out->push_back(&s);
    return Status::OK();
  }
  QUIVER_RETURN_NOT_OK(CollectUnionAll(s["larg"], out, depth + 1));
  return CollectUnionAll(s["rarg"], out, depth + 1);
}

}  // namespace

Result<LogicalOpPtr> Binder::Impl::UnifyBranches(std::vector<BoundQuery>& branches, const std::string& what,
                                                 int location, std::vector<ColumnBinding>* out_cols) {
  const size_t n = branches[0].visible.size();
  for (size_t b = 1; b < branches.size(); ++b)
    if (branches[b].visible.size() != n)
      return Status::Invalid("each " + what + " query must have the same number of columns (" + Where(location) + ")")
          .WithSqlState("42601");
  std::vector<DataTypePtr> types;
  for (size_t k = 0; k < n; ++k) {
    DataTypePtr t = branches[0].visible[k].type;
    for (size_t b = 1; b < branches.size(); ++b) {
      DataTypePtr next = CommonType(t, branches[b].visible[k].type, dialect);
      if (!next)
        return Status::Invalid(what + " types " + SqlTypeName(*t) + " and " +
                               SqlTypeName(*branches[b].visible[k].type) + " cannot be matched (" + Where(location) +
                               ")")
            .WithSqlState("42804");
      t = next;
    }
    types.push_back(t);
  }
  std::vector<LogicalOpPtr> children;
  double rows = 0, base = 0;
  for (auto& br : branches) {
    if (!br.corr_keys.empty() || br.corr_residual) return Unsupported("a correlated subquery with " + what, location);
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> cols;
    for (size_t k = 0; k < n; ++k) {
      const auto& c = br.visible[k];
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e,
                              Typed(CastTo(Expr::Column(c.id, c.type), types[k], -1, ImplicitCast(dialect)), location));
      exprs.push_back(e);
      cols.push_back({NewId(), c.name, types[k]});
    }
    rows += br.plan->est_rows;
    base = std::max(base, br.plan->base_rows);
    children.push_back(Project(br.plan, std::move(exprs), std::move(cols)));
  }
  out_cols->clear();
  for (size_t k = 0; k < n; ++k) out_cols->push_back({NewId(), branches[0].names[k], types[k]});
  if (children.size() == 1) {
    *out_cols = children[0]->columns;
    return children[0];
  }
  auto u = std::make_shared<LogicalOp>();
  u->kind = LogicalOp::Kind::kUnion;
  u->columns = *out_cols;
  u->children = std::move(children);
  u->est_rows = std::max(1.0, rows);
  u->base_rows = base;
  return LogicalOpPtr(u);
}

Result<LogicalOpPtr> Binder::Impl::DistinctRows(LogicalOpPtr plan, int location) {
  for (const auto& c : plan->columns)
    if (ClassOf(*c.type) == TypeClass::kOther)
      return Unsupported("a set operation over a value of type " + c.type->ToString(), location);
  // Untyped columns (NULL in every row) do not tell rows apart: they are
  // left out of the grouping and put back as NULLs above it.
  auto agg = std::make_shared<LogicalOp>();
  agg->kind = LogicalOp::Kind::kAggregate;
  for (const auto& c : plan->columns) {
    if (ClassOf(*c.type) == TypeClass::kNull) continue;
    agg->groups.push_back(Expr::Column(c.id, c.type));
    agg->columns.push_back({NewId(), c.name, c.type});
  }
  agg->est_rows = std::max(1.0, plan->est_rows * 0.5);
  agg->base_rows = agg->est_rows;
  const std::vector<ColumnBinding> in = plan->columns;
  agg->children = {std::move(plan)};
  if (agg->columns.size() == in.size()) return LogicalOpPtr(agg);
  return RestoreNullColumns(agg, in);
}

LogicalOpPtr Binder::Impl::RestoreNullColumns(const LogicalOpPtr& plan, const std::vector<ColumnBinding>& wanted) {
  std::vector<ExprPtr> exprs;
  std::vector<ColumnBinding> cols;
  size_t next = 0;
  for (const auto& w : wanted) {
    if (ClassOf(*w.type) == TypeClass::kNull) {
      exprs.push_back(Expr::Constant(Value::Null(w.type)));
    } else {
      const auto& c = plan->columns[next++];
      exprs.push_back(Expr::Column(c.id, c.type));
    }
    cols.push_back({NewId(), w.name, w.type});
  }
  return Project(plan, std::move(exprs), std::move(cols));
}

Result<BoundQuery> Binder::Impl::BindSetOperation(Json& s, const Scope* outer, bool is_subquery) {
  const std::string op = s.value("op", "SETOP_NONE");
  const bool all = s.value("all", false);
  const std::string word = SetOpWord(op);
  const int location = FirstLocation(s["rarg"]);
  BoundQuery out;
  std::vector<ColumnBinding> cols;
  if (op == "SETOP_UNION") {
    std::vector<Json*> leaves;
    if (all) {
      QUIVER_RETURN_NOT_OK(CollectUnionAll(s["larg"], &leaves, 0));
      QUIVER_RETURN_NOT_OK(CollectUnionAll(s["rarg"], &leaves, 0));
    } else {
      leaves = {&s["larg"], &s["rarg"]};
    }
    std::vector<BoundQuery> branches;
    for (Json* leaf : leaves) {
      QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindQuery(*leaf, outer, is_subquery));
      branches.push_back(std::move(b));
    }
    QUIVER_ASSIGN_OR_RETURN(out.plan, UnifyBranches(branches, word, location, &cols));
    if (!all) {
      QUIVER_ASSIGN_OR_RETURN(out.plan, DistinctRows(out.plan, location));
    }
    out.names = branches[0].names;
  } else {
    std::vector<BoundQuery> branches(2);
    QUIVER_ASSIGN_OR_RETURN(branches[0], BindQuery(s["larg"], outer, is_subquery));
    QUIVER_ASSIGN_OR_RETURN(branches[1], BindQuery(s["rarg"], outer, is_subquery));
    out.names = branches[0].names;
    // Unify the types first (a projection per branch), then tag each
    // branch (and number its copies for ALL) above its projection.
    std::vector<ColumnBinding> unified;
    QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr u, UnifyBranches(branches, word, location, &unified));
    for (const auto& c : unified)
      if (ClassOf(*c.type) == TypeClass::kOther)
        return Unsupported(word + " over a value of type " + c.type->ToString(), location);
    const size_t n = unified.size();
    std::vector<LogicalOpPtr> tagged;
    for (int side = 0; side < 2; ++side) {
      LogicalOpPtr branch = u->children[static_cast<size_t>(side)];
      std::vector<ExprPtr> exprs;
      std::vector<ColumnBinding> bcols;
      for (const auto& c : branch->columns) {
        if (ClassOf(*c.type) == TypeClass::kNull) continue;  // put back above (DistinctRows)
        exprs.push_back(Expr::Column(c.id, c.type));
        bcols.push_back({NewId(), c.name, c.type});
      }
      const size_t num_typed = exprs.size();
      if (all) {
        WindowCall rn;
        rn.fn = WindowFn::kRowNumber;
        for (size_t k = 0; k < num_typed; ++k) rn.partition.push_back(exprs[k]);
        rn.type = int64();
        rn.output_id = NewId();
        branch = PlanWindows(branch, {rn});
        exprs.push_back(Expr::Column(rn.output_id, int64()));
        bcols.push_back({NewId(), "__copy", int64()});
      }
      Value tag = Value::Int64(side);
      exprs.push_back(Expr::Constant(tag));
      bcols.push_back({NewId(), "__side", int64()});
      tagged.push_back(Project(branch, std::move(exprs), std::move(bcols)));
    }
    auto un = std::make_shared<LogicalOp>();
    un->kind = LogicalOp::Kind::kUnion;
    for (const auto& c : tagged[0]->columns) un->columns.push_back({NewId(), c.name, c.type});
    un->est_rows = tagged[0]->est_rows + tagged[1]->est_rows;
    un->base_rows = std::max(tagged[0]->base_rows, tagged[1]->base_rows);
    un->children = tagged;
    auto agg = std::make_shared<LogicalOp>();
    agg->kind = LogicalOp::Kind::kAggregate;
    const size_t num_groups = un->columns.size() - 1;
    for (size_t k = 0; k < num_groups; ++k) {
      const auto& c = un->columns[k];
      agg->groups.push_back(Expr::Column(c.id, c.type));
      agg->columns.push_back({NewId(), c.name, c.type});
    }
    const ColumnBinding& side_col = un->columns.back();
    AggregateCall mn{AggFn::kMin, Expr::Column(side_col.id, side_col.type), false, int64(), NewId()};
    AggregateCall mx{AggFn::kMax, Expr::Column(side_col.id, side_col.type), false, int64(), NewId()};
    agg->aggregates = {mn, mx};
    agg->columns.push_back({mn.output_id, "__min_side", int64()});
    agg->columns.push_back({mx.output_id, "__max_side", int64()});
    agg->est_rows = std::max(1.0, tagged[0]->est_rows * 0.5);
    agg->base_rows = agg->est_rows;
    agg->children = {un};
    ExprPtr keep;
    const ExprPtr min_ref = Expr::Column(mn.output_id, int64());
    const ExprPtr max_ref = Expr::Column(mx.output_id, int64());
    if (op == "SETOP_INTERSECT") {
      QUIVER_ASSIGN_OR_RETURN(keep, BindCall(Fn::kLt, {min_ref, max_ref}, location));
    } else {
      QUIVER_ASSIGN_OR_RETURN(keep, BindCall(Fn::kEq, {max_ref, Expr::Constant(Value::Int64(0))}, location));
    }
    LogicalOpPtr filtered = AddFilter(agg, keep);
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> typed;
    for (size_t k = 0; k < n; ++k)
      if (ClassOf(*unified[k].type) != TypeClass::kNull) typed.push_back(unified[k]);
    for (size_t k = 0; k < typed.size(); ++k) {
      const auto& c = agg->columns[k];
      exprs.push_back(Expr::Column(c.id, c.type));
      cols.push_back({NewId(), c.name, c.type});
    }
    out.plan = RestoreNullColumns(Project(filtered, std::move(exprs), cols), unified);
    for (size_t k = 0; k < n; ++k) out.plan->columns[k].name = out.names[k];
  }
  out.visible = out.plan->columns;
  QUIVER_RETURN_NOT_OK(ApplyOrderLimit(s, &out));
  return out;
}

Result<BoundQuery> Binder::Impl::BindValues(Json& s, const Scope* outer) {
  Json& lists = s["valuesLists"];
  const int location = FirstLocation(s);
  std::vector<BoundQuery> rows;
  Scope scope;  // no columns: VALUES rows are constant expressions
  (void)outer;
  size_t width = 0;
  for (auto& l : lists) {
    Json& items = l.contains("List") ? l["List"]["items"] : l;
    if (rows.empty()) width = items.size();
    if (items.size() != width)
      return Status::Invalid("VALUES lists must all be the same length (" + Where(FirstLocation(l)) + ")")
          .WithSqlState("42601");
    BoundQuery row;
    std::vector<ExprPtr> exprs;
    for (size_t k = 0; k < items.size(); ++k) {
      ExprContext ctx{&scope, "VALUES", nullptr, false, nullptr};
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(items[k], &ctx));
      if (ClassOf(*e->type) == TypeClass::kOther && e->type->id == TypeId::kIntervalMonthDayNano)
        return Unsupported("an INTERVAL value in VALUES", FirstLocation(items[k]));
      exprs.push_back(e);
      // PostgreSQL's column1, column2, ...; Spark's col1, col2, ...
      const std::string name = (dialect == SqlDialect::kSpark ? "col" : "column") + std::to_string(k + 1);
      row.visible.push_back({NewId(), name, e->type});
      row.names.push_back(name);
    }
    auto one = std::make_shared<LogicalOp>();
    one->kind = LogicalOp::Kind::kSingleRow;
    row.plan = Project(one, std::move(exprs), row.visible);
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return Error("VALUES without rows", location);
  BoundQuery out;
  out.names = rows[0].names;
  std::vector<ColumnBinding> cols;
  QUIVER_ASSIGN_OR_RETURN(out.plan, UnifyBranches(rows, "VALUES", location, &cols));
  out.visible = out.plan->columns;
  QUIVER_RETURN_NOT_OK(ApplyOrderLimit(s, &out));
  return out;
}

Status Binder::Impl::ApplyOrderLimit(Json& s, BoundQuery* q) {
  LogicalOpPtr plan = q->plan;
  const size_t n = q->visible.size();
  Scope scope;  // the result's columns, by name
  for (size_t k = 0; k < n; ++k) {
    scope.cols.push_back({"", q->names[k], q->visible[k].id, q->visible[k].type});
    scope.ids.insert(q->visible[k].id);
  }
  std::vector<SortKey> keys;
  std::vector<ExprPtr> hidden;
  if (s.contains("sortClause")) {
    for (auto& sb : s["sortClause"]) {
      Json& b = sb["SortBy"];
      const std::string dir = b.value("sortby_dir", "SORTBY_DEFAULT");
      if (dir == "SORTBY_USING") return Unsupported("ORDER BY ... USING", FirstLocation(b));
      SortKey key;
      key.descending = dir == "SORTBY_DESC";
      const std::string nulls = b.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
      key.nulls_first =
          nulls == "SORTBY_NULLS_DEFAULT" ? DefaultNullsFirst(key.descending) : nulls == "SORTBY_NULLS_FIRST";
      Json& node = b["node"];
      const int loc = FirstLocation(node);
      if (node.contains("A_Const") && node["A_Const"].contains("ival")) {
        const int64_t k = node["A_Const"]["ival"].value("ival", int64_t{0});
        if (k < 1 || k > static_cast<int64_t>(n))
          return Error("ORDER BY position " + std::to_string(k) + " is not in select list", loc);
        const auto& c = q->visible[static_cast<size_t>(k - 1)];
        key.expr = Expr::Column(c.id, c.type);
      } else {
        ExprContext octx{&scope, "ORDER BY", nullptr, false, nullptr};
        QUIVER_ASSIGN_OR_RETURN(key.expr, BindExpr(node, &octx));
      }
      if (ClassOf(*key.expr->type) == TypeClass::kOther)
        return Unsupported("ORDER BY a value of type " + key.expr->type->ToString(), loc);
      if (key.expr->kind != Expr::Kind::kColumn) {
        // an expression over the result: a hidden column below the sort
        hidden.push_back(key.expr);
        key.expr = Expr::Column(NewId(), key.expr->type);
      }
      keys.push_back(key);
    }
  }
  int64_t limit = -1, offset = 0;
  if (s.contains("limitCount")) {
    QUIVER_ASSIGN_OR_RETURN(limit, BindLimitValue(s["limitCount"], "LIMIT"));
  }
  if (s.contains("limitOffset")) {
    QUIVER_ASSIGN_OR_RETURN(offset, BindLimitValue(s["limitOffset"], "OFFSET"));
    if (offset < 0) offset = 0;
  }
  if (!hidden.empty()) {
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> cols = plan->columns;
    for (const auto& c : plan->columns) exprs.push_back(Expr::Column(c.id, c.type));
    size_t h = 0;
    for (auto& k : keys) {
      if (k.expr->kind != Expr::Kind::kColumn || scope.ids.count(k.expr->column)) continue;
      exprs.push_back(hidden[h]);
      cols.push_back({k.expr->column, "__order", k.expr->type});
      ++h;
    }
    plan = Project(plan, std::move(exprs), std::move(cols));
  }
  if (!keys.empty()) {
    auto sort = std::make_shared<LogicalOp>();
    sort->kind = LogicalOp::Kind::kSort;
    sort->columns = plan->columns;
    sort->sort_keys = std::move(keys);
    sort->limit = limit;
    sort->offset = offset;
    sort->est_rows = limit >= 0 ? std::min(plan->est_rows, static_cast<double>(limit)) : plan->est_rows;
    sort->base_rows = plan->base_rows;
    sort->children = {plan};
    plan = sort;
  } else if (limit >= 0 || offset > 0) {
    auto lim = std::make_shared<LogicalOp>();
    lim->kind = LogicalOp::Kind::kLimit;
    lim->columns = plan->columns;
    lim->limit = limit;
    lim->offset = offset;
    lim->est_rows = limit >= 0 ? std::min(plan->est_rows, static_cast<double>(limit)) : plan->est_rows;
    lim->base_rows = plan->base_rows;
    lim->children = {plan};
    plan = lim;
  }
  if (!hidden.empty()) {
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> cols;
    for (size_t k = 0; k < n; ++k) {
      const auto& c = plan->columns[k];
      exprs.push_back(Expr::Column(c.id, c.type));
      cols.push_back(c);
    }
    plan = Project(plan, std::move(exprs), std::move(cols));
  }
  q->plan = plan;
  return Status::OK();
}

}  // namespace quiver::sql
