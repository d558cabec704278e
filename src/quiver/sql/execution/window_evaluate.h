// quiver/sql/execution/window_evaluate.h — computing window functions over
// one chunk of sorted rows that holds whole partitions (window.cc cuts the
// sorted input into such chunks). Internal to the window operator.
//
// A chunk is a record batch sorted by PARTITION BY then ORDER BY; its
// WindowLayout says where partitions and peer groups (rows with equal ORDER
// BY keys; without ORDER BY the whole partition) begin and end. Every
// function is linear in the chunk's rows, except frame aggregates that are
// neither running nor counts / exact sums: those query a segment tree over
// the chunk (O(log n) a row; Leis et al., "Efficient Processing of Window
// Functions in Analytical SQL Queries", VLDB 2015). Exact sums and counts
// over any frame are differences of prefix sums (128-bit, overflow checked).
//
// Memory: output columns and evaluated arguments come from `pool`; the
// per-row index arrays (8 B a row each) are reserved from the statement's
// aggregate task memory manager before they are built, so a chunk that
// does not fit fails with OutOfMemory instead of growing unaccounted.
//
// Thread safety: pure functions over immutable inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "quiver/sql/execution/operators.h"
#include "quiver/sql/plan/window_call.h"

namespace quiver::sql {

struct WindowLayout {
  int64_t rows = 0;
  /// Start of every partition, ascending, then `rows` (size: partitions + 1).
  std::vector<int64_t> partition_starts;
  /// Per row: the first row of its peer group and one past its last.
  std::vector<int64_t> peer_begin, peer_end;
  /// The ORDER BY keys evaluated over the chunk (RANGE frames with offsets).
  std::vector<Vec> order_keys;
};

/// Frame of every row of the chunk as [begin[i], end[i]) (empty when end <=
/// begin), within the row's partition, per the call's unit and bounds.
/// Errors: OutOfMemory (reservation), Cancelled.
Status ComputeFrames(ExecContext* ctx, const WindowCall& call, const WindowLayout& layout, std::vector<int64_t>* begin,
                     std::vector<int64_t>* end);

/// The aggregate `call` (WindowFn::kAggregate) over each row's frame;
/// `arg` is its argument evaluated over the chunk (ignored for count(*)).
/// Errors: 22003 when a sum does not fit its type; OutOfMemory; Cancelled.
Result<ArrayDataPtr> WindowAggregate(ExecContext* ctx, const WindowCall& call, const Vec& arg,
                                     const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                                     MemoryPool* pool);

/// The output column of `call` over `chunk` (`layout` describes it; the
/// call's expressions are bound to the chunk's positions).
Result<ArrayDataPtr> EvaluateWindowCall(ExecContext* ctx, const WindowCall& call, const RecordBatch& chunk,
                                        const WindowLayout& layout, MemoryPool* pool);

}  // namespace quiver::sql
