// quiver/sql/plan/window_call.h — one window function call of a
// LogicalOp::kWindow node: the function, its arguments, the window (PARTITION
// BY, ORDER BY) and the frame (ROWS or RANGE between two bounds), as the SQL
// standard (ISO/IEC 9075-2, 7.11 <window clause>) and PostgreSQL define them.
//
// Default frame (no frame clause): RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW, i.e. with ORDER BY the rows up to the current row's last
// peer, without ORDER BY the whole partition (every row is a peer).
//
// Result types: row_number, rank, dense_rank, ntile -> BIGINT; percent_rank,
// cume_dist -> DOUBLE; lag, lead, first_value, last_value, nth_value -> the
// argument's type (lag / lead defaults are cast to it); aggregates as
// AggregateCall (logical_plan.h) documents.
//
// Thread safety: immutable once bound (shared by the plan's readers).
#pragma once

#include <cstdint>
#include <vector>

#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

enum class WindowFn : uint8_t {
  kRowNumber,
  kRank,
  kDenseRank,
  kPercentRank,
  kCumeDist,
  kNtile,       ///< args[0]: the bucket count (a positive BIGINT constant)
  kLag,         ///< args: value[, offset (BIGINT constant >= 0)[, default]]
  kLead,        ///< as kLag
  kFirstValue,  ///< args[0] over the frame
  kLastValue,
  kNthValue,   ///< args: value, n (BIGINT constant >= 1)
  kAggregate,  ///< `agg` over the frame (args[0], none for count(*))
};

/// SQL name of a window function ("row_number", ...; aggregates: "sum"...).
const char* WindowFnName(WindowFn fn, AggFn agg);

enum class FrameUnit : uint8_t { kRows, kRange };

struct FrameBound {
  enum class Kind : uint8_t { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
  Kind kind = Kind::kCurrentRow;
  /// kPreceding / kFollowing: the offset, a non-negative constant (ROWS: a
  /// BIGINT row count; RANGE: a number of the ORDER BY key's type, a
  /// distance in key values).
  Value offset;
};

struct WindowCall {
  WindowFn fn = WindowFn::kRowNumber;
  AggFn agg = AggFn::kCountStar;  ///< kAggregate only
  std::vector<ExprPtr> args;
  std::vector<ExprPtr> partition;
  std::vector<SortKey> order;
  FrameUnit unit = FrameUnit::kRange;
  FrameBound start{FrameBound::Kind::kUnboundedPreceding, {}};
  FrameBound end{FrameBound::Kind::kCurrentRow, {}};
  DataTypePtr type;  ///< the result type
  int output_id = -1;
};

/// True when two calls have the same PARTITION BY and ORDER BY (so one sort
/// serves both).
bool SameWindow(const WindowCall& a, const WindowCall& b);

}  // namespace quiver::sql
