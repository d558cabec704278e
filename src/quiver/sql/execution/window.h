// quiver/sql/execution/window.h — the window operator: window functions
// (plan/window_call.h) over the rows of its input, appended as columns.
//
// The input is sorted by PARTITION BY then ORDER BY with the project's sort
// (execution/sort.cc: parallel runs, merged; an external merge sort that
// spills when the statement has a memory limit and spilling is on). The
// sorted stream is cut into chunks of whole partitions (at the last
// partition boundary of each input batch; without PARTITION BY the whole
// input is one partition) and every call is computed over a chunk at once
// (window_evaluate.h). Memory: the chunk being computed (its rows
// concatenated) and its output columns are charged to the statement's sort
// pool, per-row index arrays to the aggregate task memory manager; one
// partition larger than the memory left fails with OutOfMemory naming
// "window".
//
// Thread safety: as every node (pipeline.h); the output is serial.
#pragma once

#include <vector>

#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/plan/window_call.h"

namespace quiver::sql {

/// The window node over `child`: `calls` share one PARTITION BY and ORDER BY
/// (SameWindow) and their expressions are bound to the child's positions.
/// Output (`schema`): the child's columns, then one per call. Serial.
/// Errors (when its rows are read): those of the sort, of evaluating the
/// calls' expressions, 22003 when a windowed sum overflows, OutOfMemory
/// naming "window", Cancelled.
Result<NodePtr> MakeWindowNode(ExecContext* ctx, NodePtr child, std::vector<WindowCall> calls, SchemaPtr schema);

}  // namespace quiver::sql
