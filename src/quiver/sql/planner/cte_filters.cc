// quiver/sql/planner/cte_filters.cc — see cte_filters.h.
#include "quiver/sql/planner/cte_filters.h"

#include <algorithm>
#include <vector>

#include "quiver/sql/planner/join_order.h"

namespace quiver::sql {
namespace {

bool HasSubquery(const Expr& e) {
  if (e.kind == Expr::Kind::kSubquery) return true;
  return std::any_of(e.args.begin(), e.args.end(), [](const ExprPtr& a) { return HasSubquery(*a); });
}

// One reference of a WITH query: its node and the AND of the movable
// terms of the filters right above it (null: none, it reads every row).
struct Reference {
  const LogicalOp* node = nullptr;
  ExprPtr predicate;
};

// The movable terms of `filters` (over the reference `ref`'s columns).
ExprPtr MovableTerms(const std::vector<ExprPtr>& filters, const LogicalOp& ref) {
  std::vector<ExprPtr> terms;
  for (const auto& f : filters) {
    std::vector<ExprPtr> conjuncts;
    SplitConjuncts(f, &conjuncts);
    for (const auto& c : conjuncts) {
      bool own = true, any = false;
      VisitColumns(*c, [&](int id) {
        any = true;
        own &= ref.IndexOf(id) >= 0;
      });
      if (own && any && !MayFail(*c) && !HasSubquery(*c)) terms.push_back(c);
    }
  }
  return terms.empty() ? nullptr : MakeAnd(terms);
}

// Collects the references under `op`; `above`: the filters stacked right
// over `op`.
void Collect(const LogicalOpPtr& op, std::vector<ExprPtr> above, std::map<int, std::vector<Reference>>* refs) {
  if (op->kind == LogicalOp::Kind::kFilter && op->children.size() == 1) {
    above.push_back(op->predicate);
    Collect(op->children[0], std::move(above), refs);
    return;
  }
  if (op->kind == LogicalOp::Kind::kCteScan) (*refs)[op->cte_id].push_back({op.get(), MovableTerms(above, *op)});
  for (const auto& c : op->children) Collect(c, {}, refs);
}

// `predicate` over reference `from`'s columns, over `to`'s instead (the
// same query's columns by position).
ExprPtr Remap(const ExprPtr& predicate, const LogicalOp& from, const LogicalOp& to) {
  auto r = RewriteColumns(predicate, [&](int id) -> Result<int> {
    const int i = from.IndexOf(id);
    if (i < 0 || static_cast<size_t>(i) >= to.columns.size()) return Status::Invalid("not a column of the reference");
    return to.columns[static_cast<size_t>(i)].id;
  });
  return r.ok() ? *r : nullptr;
}

LogicalOpPtr Rewrite(const LogicalOpPtr& op, const std::map<const LogicalOp*, ExprPtr>& push) {
  std::vector<LogicalOpPtr> children;
  bool changed = false;
  for (const auto& c : op->children) {
    children.push_back(Rewrite(c, push));
    changed |= children.back() != c;
  }
  auto it = op->kind == LogicalOp::Kind::kCteScan ? push.find(op.get()) : push.end();
  if (!changed && it == push.end()) return op;
  auto copy = std::make_shared<LogicalOp>(*op);
  copy->children = std::move(children);
  if (it != push.end() && copy->children.size() == 1) {
    std::vector<ExprPtr> terms;
    SplitConjuncts(FactorOr(it->second), &terms);
    for (const auto& t : terms) copy->children[0] = PushFilter(copy->children[0], t);
    copy->est_rows = copy->children[0]->est_rows;
  }
  return copy;
}

}  // namespace

LogicalOpPtr PushFiltersIntoCtes(const LogicalOpPtr& plan, const std::map<int, int>& references) {
  std::map<int, std::vector<Reference>> refs;
  Collect(plan, {}, &refs);
  std::map<const LogicalOp*, ExprPtr> push;
  for (const auto& [id, list] : refs) {
    const auto n = references.find(id);
    if (n == references.end() || n->second != static_cast<int>(list.size()) || list.size() < 2) continue;
    if (std::any_of(list.begin(), list.end(), [](const Reference& r) { return r.predicate == nullptr; })) continue;
    for (const Reference& to : list) {
      std::vector<ExprPtr> branches;
      for (const Reference& from : list) {
        ExprPtr mapped = Remap(from.predicate, *from.node, *to.node);
        if (!mapped) {
          branches.clear();
          break;
        }
        const bool seen =
            std::any_of(branches.begin(), branches.end(), [&](const ExprPtr& b) { return ExprEquals(*b, *mapped); });
        if (!seen) branches.push_back(std::move(mapped));
      }
      if (branches.empty()) continue;
      push[to.node] = branches.size() == 1 ? branches[0] : Expr::Call(Fn::kOr, std::move(branches), boolean());
    }
  }
  if (push.empty()) return plan;
  return Rewrite(plan, push);
}

}  // namespace quiver::sql
