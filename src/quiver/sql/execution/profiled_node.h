// quiver/sql/execution/profiled_node.h — the rows an operator of the plan
// produced, for EXPLAIN ANALYZE (DuckDB's operator profiler counts the
// same: every batch an operator hands to its parent).
//
// A profiled node wraps the node the physical planner made for one logical
// operator and forwards everything to it (parallelism, preparation, morsel
// sources, release); each stream it instantiates adds the rows of every
// batch it returns to the node's counter.
//
// Shapes: rows are counted per output batch (num_rows), summed over all
// instances of the node; an operator that runs again (the build of a grace
// join's partitions) counts every run.
//
// Thread safety: the counter is atomic: instances on several workers add to
// it at once; read it after the statement's stream ended.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {

/// Counters of one operator (relaxed atomics: totals only).
struct OperatorProfile {
  std::atomic<int64_t> rows{0};     ///< rows returned, all instances together
  std::atomic<int64_t> batches{0};  ///< batches returned (empty ones included)
  /// Set by the planner before the statement runs: a scan whose filters the
  /// operator above evaluates (an aggregate over a filtered scan), so
  /// `rows` counts the rows before them.
  bool filters_deferred = false;
};

/// `child` with every instance's output counted into `profile` (not null).
/// The result forwards parallel(), ordered_source(), morsel_source(),
/// InstantiateOn and Release to `child`. Errors: the child's.
NodePtr MakeProfiledNode(ExecContext* ctx, NodePtr child, std::shared_ptr<OperatorProfile> profile);

}  // namespace quiver::sql
