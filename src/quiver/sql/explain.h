// quiver/sql/explain.h — EXPLAIN and EXPLAIN ANALYZE (issue 37, "EXPLAIN
// shows estimated and, with EXPLAIN ANALYZE, actual rows per operator"), as
// PostgreSQL and DuckDB name them.
//
// Both answer one VARCHAR column `plan`, a row per operator of the logical
// plan (plan/logical_plan.h PlanToString: the operator, its arguments,
// `est=` its estimated rows), children indented under their parent.
// EXPLAIN ANALYZE runs the statement first, to its end, discarding its
// rows, and adds `rows=` to each operator: the rows it returned, all its
// parallel instances together (execution/profiled_node.h; a scan whose
// filters an aggregate above evaluates counts the rows before them, and
// says so); then a last
// line, `result rows=N time=T ms`, the statement's result rows and the wall
// time it took to run.
//
// Thread safety: the streams are read by one thread at a time, as every
// statement stream.
#pragma once

#include <memory>

#include "quiver/memory/memory_pool.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/planner/physical_planner.h"

namespace quiver::sql {

/// EXPLAIN: `plan`'s lines, one batch, built in `pool` when first read.
/// Errors: OutOfMemory from `pool`.
OperatorPtr MakeExplainStream(LogicalOpPtr plan, MemoryPool* pool);

/// EXPLAIN ANALYZE: `query` is `plan`'s operator tree, built with
/// `profile` (BuildOperators(*plan, ctx, profile.get())). The first Next()
/// reads `query` to its end (nothing runs before), then returns the
/// annotated lines as one batch built in `pool`. An operator that never
/// ran (a branch skipped, a scalar subquery's node) shows no `rows=`.
/// Errors: the query's (its error, Cancelled, OutOfMemory), as running it
/// would return them.
OperatorPtr MakeExplainAnalyzeStream(LogicalOpPtr plan, OperatorPtr query, std::shared_ptr<PlanProfile> profile,
                                     MemoryPool* pool);

}  // namespace quiver::sql
