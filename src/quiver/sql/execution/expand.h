// quiver/sql/execution/expand.h — the expand operator under the hash
// aggregate of GROUPING SETS / ROLLUP / CUBE (Spark's ExpandExec): every
// input row comes out once per grouping set, its input columns unchanged
// and, after them, that set's values (the set's grouping columns, NULL for
// the others, the set's number and its GROUPING() values), so one hash
// aggregate grouping by those columns computes every set at once.
//
// Memory: output columns come from the statement's scan pool; the input
// columns are shared, not copied.
//
// Thread safety: as every node (pipeline.h); parallel when its child is.
#pragma once

#include <vector>

#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {

/// `sets[k]` are set k's expressions (bound to the child's positions; every
/// set has as many, of the same types, as `schema`'s columns after the
/// child's). Each input batch gives sets.size() output batches.
/// Errors (when its rows are read): those of evaluating the expressions,
/// OutOfMemory, Cancelled.
NodePtr MakeExpandNode(ExecContext* ctx, NodePtr child, std::vector<std::vector<ExprPtr>> sets, SchemaPtr schema);

}  // namespace quiver::sql
