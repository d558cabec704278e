// quiver/sql/plan/plan_exprs.h — every expression a logical plan node holds
// itself (not its children's): the one list of a LogicalOp's expression
// fields, so that analyses over them (which columns a node reads, whether
// it reads outer columns) cannot forget a field.
//
// Thread safety: reads the node only.
#pragma once

#include "quiver/sql/plan/logical_plan.h"
#include "quiver/sql/plan/window_call.h"

namespace quiver::sql {

/// Calls `fn(e)` for each expression of `op`, in this order: scan
/// filters, the filter predicate, projections, join keys (left then right
/// of each pair), the join residual, GROUP BY expressions, aggregate
/// arguments, sort keys, window arguments / PARTITION BY / ORDER BY, and
/// the grouping-set expressions. A field that is absent is passed as a
/// null ExprPtr (fn must accept one) or skipped (empty lists).
template <typename Fn>
void ForEachOwnExpr(const LogicalOp& op, Fn&& fn) {
  for (const auto& e : op.filters) fn(e);
  fn(op.predicate);
  for (const auto& e : op.exprs) fn(e);
  for (const auto& k : op.keys) {
    fn(k.first);
    fn(k.second);
  }
  fn(op.residual);
  for (const auto& e : op.groups) fn(e);
  for (const auto& a : op.aggregates) fn(a.arg);
  for (const auto& k : op.sort_keys) fn(k.expr);
  for (const auto& w : op.windows) {
    for (const auto& e : w->args) fn(e);
    for (const auto& e : w->partition) fn(e);
    for (const auto& k : w->order) fn(k.expr);
  }
  for (const auto& set : op.expand_sets)
    for (const auto& e : set) fn(e);
}

}  // namespace quiver::sql
