// quiver/sql/planner/physical_planner.h — turns a logical plan into the
// tree of physical operators (execution/operators.h): maps column ids to
// batch positions, casts join keys pairwise to a common type, prunes the
// columns no expression uses from the scans.
//
// Thread safety: used by one thread per statement.
#pragma once

#include <memory>
#include <unordered_map>

#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/profiled_node.h"
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// EXPLAIN ANALYZE: the counters of each operator of a plan that ran, by
/// its logical node. A node the planner folded into another (a filter made
/// a join's residual) counts what the operator it became returned; nodes
/// inside scalar subqueries are not counted (they have plans of their own).
using PlanProfile = std::unordered_map<const LogicalOp*, std::shared_ptr<OperatorProfile>>;

/// The operator tree of `plan`, on `ctx` (which must outlive it). With
/// `profile` (EXPLAIN ANALYZE), every node is wrapped to count the rows it
/// returns into (*profile)[&its logical node]; `plan` and `profile` must
/// outlive the stream.
/// Errors: Invalid for join keys that cannot be compared; NotImplemented
/// for joins the operators do not support.
Result<OperatorPtr> BuildOperators(const LogicalOp& plan, ExecContext* ctx, PlanProfile* profile = nullptr);

}  // namespace quiver::sql
