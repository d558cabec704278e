// quiver/sql/execution/join_keys.h — what the SQL join operators share
// (hash_join_op.cc, nested_loop_join.cc, build_left_semi_join.cc,
// grace_join.cc, join.cc): join keys evaluated into extra columns of a
// side's batches, the schemas that carry them, the join layer's join type
// of a SQL join kind, and the statement's workers lent to a relation build.
// Internal to sql/execution; not installed.
//
// Thread safety: the functions are pure over their arguments; the
// ExecContext is used as the caller's thread may (its pools are
// thread-safe).
#pragma once

#include <cstdint>
#include <vector>

#include "quiver/join/hash_join.h"
#include "quiver/sql/execution/operators.h"

namespace quiver::sql {

// Slices of a probe morsel between cancellation checks. The join layer
// bounds each output batch itself, and the marks sink consumes it at once,
// so a slice only sets how often a statement looks at its cancel flag;
// 2,048 rows flushed a nearly empty output batch (five allocations) per
// slice: TPC-H Q21 made 91,000 pool allocations, 7,300 with whole morsels.
inline constexpr int64_t kProbeSliceRows = 64 * 1024;

/// WithKeys without a row-number column.
inline constexpr int64_t kNoRowIds = -1;

/// The join layer's join type of a SQL join kind.
join::JoinType ToJoinType(JoinKind k);

/// Appends evaluated key columns to a batch and, when `first_row_id` is not
/// kNoRowIds, an int64 column numbering its rows first_row_id, +1, ...
/// (batch-local with 0, global across batches with a running base).
/// `schema`: ExtendSchema of the batch's schema; buffers from `pool`.
/// Errors: the keys' evaluation errors, OutOfMemory.
Result<RecordBatchPtr> WithKeys(const RecordBatchPtr& in, const std::vector<ExprPtr>& keys, const SchemaPtr& schema,
                                int64_t first_row_id, ExecContext* ctx, MemoryPool* pool);

/// `base` followed by one nullable field per key (`__key<k>`, the key's
/// type) and, with `row_ids`, a non-null int64 `__row`.
SchemaPtr ExtendSchema(const Schema& base, const std::vector<ExprPtr>& keys, bool row_ids);

/// The statement's workers, lent to a relation build that runs on the
/// driving thread while they would otherwise wait (join::BuildParallelism);
/// none with one thread or no scheduler.
join::BuildParallelism BuildThreads(const ExecContext* ctx);

/// The join keys evaluated over `b` (one Vec per key, in order), buffers
/// from the statement's pool.
Result<std::vector<Vec>> EvaluateKeys(const std::vector<ExprPtr>& keys, const RecordBatch& b, ExecContext* ctx);

}  // namespace quiver::sql
