// quiver/sql/execution/union_all.h — UNION ALL (LogicalOp::kUnion): the
// rows of several inputs, one input after the other (DuckDB's
// PhysicalUnion, which also runs its children as pipelines of their own).
//
// Parallel: instance k reads, one child after the other, an instance of
// every parallel child (their instances together return each row once) and,
// for k = 0 only, the single instance of every serial child. So a pipeline
// above (a hash aggregate for UNION / INTERSECT / EXCEPT, a sort, the
// statement's result) runs its workers over all the branches at once.
//
// Memory: none of its own; batches pass through unchanged (re-labelled with
// the union's schema: the names are the first branch's).
//
// Thread safety: as every node (pipeline.h).
#pragma once

#include <vector>

#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {

/// `children` (at least one) must each produce `schema`'s column types, in
/// order. Prepare prepares every child (the breakers below each run then).
/// Errors (when rows are read): the children's; Cancelled.
NodePtr MakeUnionAllNode(ExecContext* ctx, std::vector<NodePtr> children, SchemaPtr schema);

}  // namespace quiver::sql
