// quiver/sql/execution/nested_loop_join.h — joins without equality keys:
// every left row against every right row, with the residual condition.
// Inner, left, semi and anti joins; right and full joins without an
// equality are NotImplemented. The right side is gathered into one batch
// (statement pool); output batches hold at most max_batch_rows pairs.
// Internal to sql/execution. Thread safety: one thread per instance.
#pragma once

#include "quiver/sql/execution/operators.h"

namespace quiver::sql {

/// The nested-loop join of `left` and `right` (streams of one thread) as
/// `spec` says (its keys empty), output as `schema`.
OperatorPtr MakeNestedLoopJoin(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec, SchemaPtr schema);

}  // namespace quiver::sql
