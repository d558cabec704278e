// quiver/sql/binder/bind_join.cc — JoinExpr items of FROM: inner and outer
// joins with ON, USING (cols) and NATURAL (binder_internal.h,
// BindJoinExpr). Output columns of USING / NATURAL follow PostgreSQL's
// rules (SQL:2016 7.7 <joined table>, syntax rule 7): the merged columns
// first, in USING-list (NATURAL: left-side) order, then the left side's
// other columns, then the right side's.
#include <algorithm>
#include <unordered_set>

#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {

namespace {

// Entries of [begin, end) of `cols` that an unqualified name `name` reaches.
std::vector<size_t> VisibleNamed(const std::vector<ScopeEntry>& cols, size_t begin, size_t end,
                                 const std::string& name) {
  std::vector<size_t> out;
  for (size_t i = begin; i < end; ++i)
    if (!cols[i].qualified_only && cols[i].name == name) out.push_back(i);
  return out;
}

}  // namespace

Status Binder::Impl::MergeUsingColumns(Json& j, JoinKind kind, size_t begin, size_t mid, QueryState* q,
                                       std::vector<ExprPtr>* conditions) {
  const int location = FirstLocation(j);
  const size_t end = q->scope.cols.size();
  std::vector<std::string> names;
  if (j.value("isNatural", false)) {
    // NATURAL: the names both sides show unqualified, in left-side order.
    for (size_t i = begin; i < mid; ++i) {
      const ScopeEntry& c = q->scope.cols[i];
      if (c.qualified_only || std::find(names.begin(), names.end(), c.name) != names.end()) continue;
      if (!VisibleNamed(q->scope.cols, mid, end, c.name).empty()) names.push_back(c.name);
    }
  } else {
    for (auto& n : j["usingClause"]) {
      const std::string name = StringOf(n);
      if (std::find(names.begin(), names.end(), name) != names.end())
        return Status::Invalid("column name '" + name + "' appears more than once in USING clause (" + Where(location) +
                               ")")
            .WithSqlState("42701");
      names.push_back(name);
    }
  }
  std::vector<ScopeEntry> merged;
  for (const std::string& name : names) {
    const std::vector<size_t> l = VisibleNamed(q->scope.cols, begin, mid, name);
    const std::vector<size_t> r = VisibleNamed(q->scope.cols, mid, end, name);
    for (int side = 0; side < 2; ++side) {
      const auto& found = side == 0 ? l : r;
      const char* which = side == 0 ? "left" : "right";
      if (found.empty())
        return Status::KeyError("column '" + name + "' specified in USING clause does not exist in " + which +
                                " table (" + Where(location) + ")")
            .WithSqlState("42703");
      if (found.size() > 1)
        return Status::Invalid("common column name '" + name + "' appears more than once in " + which + " table (" +
                               Where(location) + ")")
            .WithSqlState("42702");
    }
    ScopeEntry& le = q->scope.cols[l[0]];
    ScopeEntry& re = q->scope.cols[r[0]];
    ExprPtr lx = le.expr ? le.expr : Expr::Column(le.id, le.type, location);
    ExprPtr rx = re.expr ? re.expr : Expr::Column(re.id, re.type, location);
    QUIVER_ASSIGN_OR_RETURN(ExprPtr eq, Typed(BindCall(Fn::kEq, {lx, rx}, location), location));
    conditions->push_back(eq);
    ScopeEntry m;
    m.name = name;
    if (le.type->Equals(*re.type) && kind != JoinKind::kFull) {
      // Equal values where both sides match: the side that keeps its rows.
      const ScopeEntry& keep = kind == JoinKind::kRight ? re : le;
      m.id = keep.id;
      m.type = keep.type;
      m.expr = kind == JoinKind::kRight ? rx : lx;
    } else {
      QUIVER_ASSIGN_OR_RETURN(m.expr, Typed(BindCall(Fn::kCoalesce, {lx, rx}, location), location));
      m.id = NewId();
      m.type = m.expr->type;
    }
    le.qualified_only = true;
    re.qualified_only = true;
    merged.push_back(std::move(m));
  }
  q->scope.cols.insert(q->scope.cols.begin() + static_cast<long>(begin), merged.begin(), merged.end());
  return Status::OK();
}

Status Binder::Impl::BindJoinExpr(Json& j, QueryState* q, std::vector<LogicalOpPtr>* rels,
                                  std::vector<ExprPtr>* preds) {
  const int location = FirstLocation(j);
  const std::string type = j.value("jointype", "JOIN_INNER");
  if (j.contains("alias")) return Unsupported("an alias on a JOIN", location);
  const bool merging = j.contains("usingClause") || j.value("isNatural", false);
  const size_t begin = q->scope.cols.size();
  if (type == "JOIN_INNER") {
    QUIVER_RETURN_NOT_OK(BindFromItem(j["larg"], q, rels, preds));
    const size_t mid = q->scope.cols.size();
    QUIVER_RETURN_NOT_OK(BindFromItem(j["rarg"], q, rels, preds));
    if (merging) return MergeUsingColumns(j, JoinKind::kInner, begin, mid, q, preds);
    if (j.contains("quals")) {
      if (ContainsSubLink(j["quals"])) return Unsupported("a subquery in JOIN ... ON", FirstLocation(j["quals"]));
      ExprContext ctx{&q->scope, "JOIN ... ON", nullptr, false, nullptr};
      QUIVER_ASSIGN_OR_RETURN(ExprPtr on, BindExpr(j["quals"], &ctx));
      QUIVER_RETURN_NOT_OK(WithPosition(CheckBoolean(*on, "JOIN ... ON"), FirstLocation(j["quals"])));
      preds->push_back(on);
    }
    return Status::OK();
  }
  JoinKind kind;
  if (type == "JOIN_LEFT")
    kind = JoinKind::kLeft;
  else if (type == "JOIN_RIGHT")
    kind = JoinKind::kRight;
  else if (type == "JOIN_FULL")
    kind = JoinKind::kFull;
  else
    return Unsupported("join type " + type, location);
  if (kind == JoinKind::kLeft && !merging && j["rarg"].contains("RangeSubselect") &&
      j["rarg"]["RangeSubselect"].value("lateral", false)) {
    // LEFT JOIN LATERAL (...) ON c (bind_dependent_join.cc).
    std::vector<LogicalOpPtr> r;
    std::vector<ExprPtr> p;
    QUIVER_RETURN_NOT_OK(BindFromItem(j["larg"], q, &r, &p));
    QUIVER_RETURN_NOT_OK(BindLateral(j["rarg"]["RangeSubselect"], q, &r, &p, &j));
    rels->insert(rels->end(), r.begin(), r.end());
    return Status::OK();
  }
  // Each side is planned as its own join graph.
  LogicalOpPtr sides[2];
  std::unordered_set<int> side_ids[2];
  const char* keys[2] = {"larg", "rarg"};
  size_t mid = begin;
  for (int s = 0; s < 2; ++s) {
    std::vector<LogicalOpPtr> r;
    std::vector<ExprPtr> p;
    QUIVER_RETURN_NOT_OK(BindFromItem(j[keys[s]], q, &r, &p));
    if (s == 0) mid = q->scope.cols.size();
    QUIVER_ASSIGN_OR_RETURN(sides[s], PlanJoinGraph(r, p));
    for (const auto& c : sides[s]->columns) side_ids[s].insert(c.id);
  }
  std::vector<ExprPtr> terms;
  if (merging) {
    QUIVER_RETURN_NOT_OK(MergeUsingColumns(j, kind, begin, mid, q, &terms));
  } else if (j.contains("quals")) {
    if (ContainsSubLink(j["quals"])) return Unsupported("a subquery in JOIN ... ON", FirstLocation(j["quals"]));
    ExprContext ctx{&q->scope, "JOIN ... ON", nullptr, false, nullptr};
    QUIVER_ASSIGN_OR_RETURN(ExprPtr on, BindExpr(j["quals"], &ctx));
    QUIVER_RETURN_NOT_OK(WithPosition(CheckBoolean(*on, "JOIN ... ON"), FirstLocation(j["quals"])));
    SplitConjuncts(FactorOr(on), &terms);
  }
  std::vector<std::pair<ExprPtr, ExprPtr>> join_keys;
  std::vector<ExprPtr> residual;
  for (const auto& t : terms) {
    auto side_of = [&](const Expr& e) {
      int mask = 0;
      VisitColumns(e, [&](int id) { mask |= side_ids[0].count(id) ? 1 : (side_ids[1].count(id) ? 2 : 4); });
      return mask;
    };
    const int m = side_of(*t);
    if (t->kind == Expr::Kind::kCall && t->fn == Fn::kEq) {
      const int l = side_of(*t->args[0]), r = side_of(*t->args[1]);
      if (l == 1 && r == 2) {
        join_keys.emplace_back(t->args[0], t->args[1]);
        continue;
      }
      if (l == 2 && r == 1) {
        join_keys.emplace_back(t->args[1], t->args[0]);
        continue;
      }
    }
    // A condition on the null-supplying side alone filters that side first.
    if (m == 2 && kind == JoinKind::kLeft) {
      sides[1] = AddFilter(sides[1], t);
      continue;
    }
    if (m == 1 && kind == JoinKind::kRight) {
      sides[0] = AddFilter(sides[0], t);
      continue;
    }
    residual.push_back(t);
  }
  auto join = std::make_shared<LogicalOp>();
  join->kind = LogicalOp::Kind::kJoin;
  join->join_kind = kind;
  join->keys = std::move(join_keys);
  if (!residual.empty()) join->residual = MakeAnd(residual);
  join->columns = sides[0]->columns;
  join->columns.insert(join->columns.end(), sides[1]->columns.begin(), sides[1]->columns.end());
  join->est_rows = std::max(sides[0]->est_rows, sides[1]->est_rows);
  join->base_rows = std::max(sides[0]->base_rows, sides[1]->base_rows);
  join->children = {sides[0], sides[1]};
  rels->push_back(join);
  return Status::OK();
}

}  // namespace quiver::sql
