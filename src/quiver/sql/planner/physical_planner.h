// quiver/sql/planner/physical_planner.h — turns a logical plan into the
// tree of physical operators (execution/operators.h): maps column ids to
// batch positions, casts join keys pairwise to a common type, prunes the
// columns no expression uses from the scans.
//
// Thread safety: used by one thread per statement.
#pragma once

#include "quiver/sql/execution/operators.h"
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// The operator tree of `plan`, on `ctx` (which must outlive it).
/// Errors: Invalid for join keys that cannot be compared; NotImplemented
/// for joins the operators do not support.
Result<OperatorPtr> BuildOperators(const LogicalOp& plan, ExecContext* ctx);

}  // namespace quiver::sql
