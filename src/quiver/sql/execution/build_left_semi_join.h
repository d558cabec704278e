// quiver/sql/execution/build_left_semi_join.h — semi / anti joins that
// build their left (outer) side and let the right side's pipeline probe it
// in parallel, each worker marking its own copy of the left rows' marks
// (TPC-H Q21: 6 M lineitem rows probe the few thousand late orders of one
// nation); a left side that does not fit becomes a grace hash join the
// usual way round. Internal to sql/execution; not installed.
#pragma once

#include "quiver/sql/execution/operators.h"

namespace quiver::sql {

/// The node of a semi / anti join with `spec.build_left` (equality keys).
/// Its single instance emits the marked (semi) or unmarked (anti) left rows
/// in their order. Memory: the left side's relation from the statement's
/// TaskMemoryManager, one byte of marks per left row per worker.
NodePtr MakeBuildLeftSemiJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema);

}  // namespace quiver::sql
