// quiver/sql/plan/window_call.cc — see window_call.h.
#include "quiver/sql/plan/window_call.h"

namespace quiver::sql {

const char* WindowFnName(WindowFn fn, AggFn agg) {
  switch (fn) {
    case WindowFn::kRowNumber: return "row_number";
    case WindowFn::kRank: return "rank";
    case WindowFn::kDenseRank: return "dense_rank";
    case WindowFn::kPercentRank: return "percent_rank";
    case WindowFn::kCumeDist: return "cume_dist";
    case WindowFn::kNtile: return "ntile";
    case WindowFn::kLag: return "lag";
    case WindowFn::kLead: return "lead";
    case WindowFn::kFirstValue: return "first_value";
    case WindowFn::kLastValue: return "last_value";
    case WindowFn::kNthValue: return "nth_value";
    case WindowFn::kAggregate: break;
  }
  return AggFnName(agg);
}

bool SameWindow(const WindowCall& a, const WindowCall& b) {
  if (a.partition.size() != b.partition.size() || a.order.size() != b.order.size()) return false;
  for (size_t i = 0; i < a.partition.size(); ++i)
    if (!ExprEquals(*a.partition[i], *b.partition[i])) return false;
  for (size_t i = 0; i < a.order.size(); ++i)
    if (a.order[i].descending != b.order[i].descending || a.order[i].nulls_first != b.order[i].nulls_first ||
        !ExprEquals(*a.order[i].expr, *b.order[i].expr))
      return false;
  return true;
}

}  // namespace quiver::sql
