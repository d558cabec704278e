// quiver/sql/planner/join_order.h — the join graph of a FROM list: join
// order from estimated cardinalities, filters placed where their columns
// are, selectivity guesses and OR factoring. The binder calls it with the
// relations and conjuncts it bound; it knows nothing of the binder.
//
// Thread safety: pure functions over the plans they are given.
#pragma once

#include <vector>

#include "quiver/base/result.h"
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// Plans a join graph: `relations` joined by `predicates` (inner joins;
/// single-relation predicates pushed to their relation, equalities between
/// two relations become hash join keys, the rest filters placed where all
/// their columns are available). Order: for 3 to 10 relations whose key
/// equalities form a tree (no cycle), the bushy tree of least summed estimated intermediate
/// rows (dynamic programming over connected subsets); otherwise greedy:
/// the largest relation streams, each step adds the connected relation
/// giving the smallest estimated result. The smaller side builds.
Result<LogicalOpPtr> PlanJoinGraph(std::vector<LogicalOpPtr> relations, std::vector<ExprPtr> predicates);
/// A Filter over `child` (into a Scan's filters when `child` is one).
LogicalOpPtr AddFilter(LogicalOpPtr child, const ExprPtr& predicate);
/// `conjunct` (a WHERE term over `plan`'s columns) applied as deep in
/// `plan` as its columns allow: through inner joins to the side holding
/// them (an equality between the two sides becomes one more key of that
/// join), into the preserved (left) side of a LEFT join, below a filter
/// over a join; elsewhere AddFilter. Copies the nodes it changes.
LogicalOpPtr PushFilter(const LogicalOpPtr& plan, const ExprPtr& conjunct);
/// Estimated fraction of rows a predicate keeps.
double Selectivity(const Expr& predicate);

/// Pulls conjuncts common to every branch of an OR out in front of it
/// ((a AND b) OR (a AND c) -> a AND (b OR c)).
ExprPtr FactorOr(const ExprPtr& e);

}  // namespace quiver::sql
