// quiver/sql/execution/window_frame.cc — the frame of every row of a window
// chunk (see window_evaluate.h): ROWS bounds count rows from the current
// one; RANGE bounds are the current row's peers (CURRENT ROW) or the rows
// whose ORDER BY key lies within the offset of the current row's key
// (binary searches in the partition's non-NULL keys, which are sorted).
// A row whose key is NULL has its NULL peers as the rows within any offset,
// as PostgreSQL and DuckDB do.
#include <algorithm>
#include <limits>

#include "quiver/sql/execution/window_evaluate.h"

namespace quiver::sql {
namespace {

// RANGE frame bounds with offsets for one partition [ps, pe): the keys
// (transformed so that they ascend: DESC keys negated) of the non-NULL rows
// [nb, ne) are searched for key -/+ offset. `T` is double or i128.
template <typename T, typename KeyAt>
void RangeOffsetBounds(const WindowCall& call, const WindowLayout& layout, int64_t ps, int64_t pe, int64_t nb,
                       int64_t ne, KeyAt key_at, T start_off, T end_off, std::vector<int64_t>* begin,
                       std::vector<int64_t>* end) {
  auto lower = [&](T v) {  // first row in [nb, ne) with key >= v
    int64_t lo = nb, hi = ne;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (key_at(mid) < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  auto upper = [&](T v) {  // first row in [nb, ne) with key > v
    int64_t lo = nb, hi = ne;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (!(v < key_at(mid)))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  auto sat_add = [](T a, T b) -> T {
    if constexpr (std::is_same_v<T, double>) {
      return a + b;
    } else {
      T r;
      if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
      return r;
    }
  };
  for (int64_t i = ps; i < pe; ++i) {
    const bool null_row = i < nb || i >= ne;
    if (call.start.kind == FrameBound::Kind::kPreceding || call.start.kind == FrameBound::Kind::kFollowing) {
      if (null_row) {
        (*begin)[static_cast<size_t>(i)] = layout.peer_begin[static_cast<size_t>(i)];
      } else {
        const T off = call.start.kind == FrameBound::Kind::kPreceding ? -start_off : start_off;
        (*begin)[static_cast<size_t>(i)] = lower(sat_add(key_at(i), off));
      }
    }
    if (call.end.kind == FrameBound::Kind::kPreceding || call.end.kind == FrameBound::Kind::kFollowing) {
      if (null_row) {
        (*end)[static_cast<size_t>(i)] = layout.peer_end[static_cast<size_t>(i)];
      } else {
        const T off = call.end.kind == FrameBound::Kind::kPreceding ? -end_off : end_off;
        (*end)[static_cast<size_t>(i)] = upper(sat_add(key_at(i), off));
      }
    }
  }
}

}  // namespace

Status ComputeFrames(ExecContext* ctx, const WindowCall& call, const WindowLayout& layout, std::vector<int64_t>* begin,
                     std::vector<int64_t>* end) {
  const int64_t n = layout.rows;
  begin->assign(static_cast<size_t>(n), 0);
  end->assign(static_cast<size_t>(n), 0);
  const bool rows = call.unit == FrameUnit::kRows;
  const int64_t start_rows = rows && !call.start.offset.is_null ? static_cast<int64_t>(call.start.offset.i) : 0;
  const int64_t end_rows = rows && !call.end.offset.is_null ? static_cast<int64_t>(call.end.offset.i) : 0;
  bool range_offsets = false;
  for (size_t p = 0; p + 1 < layout.partition_starts.size(); ++p) {
    const int64_t ps = layout.partition_starts[p], pe = layout.partition_starts[p + 1];
    if ((p & 1023) == 0) QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
    for (int64_t i = ps; i < pe; ++i) {
      const size_t k = static_cast<size_t>(i);
      int64_t b = ps, e = pe;
      switch (call.start.kind) {
        case FrameBound::Kind::kUnboundedPreceding: b = ps; break;
        case FrameBound::Kind::kCurrentRow: b = rows ? i : layout.peer_begin[k]; break;
        case FrameBound::Kind::kPreceding:
          if (rows)
            b = std::max(ps, i - std::min(start_rows, i - ps));
          else
            range_offsets = true;
          break;
        case FrameBound::Kind::kFollowing:
          if (rows)
            b = i + std::min(start_rows, pe - i);
          else
            range_offsets = true;
          break;
        case FrameBound::Kind::kUnboundedFollowing: b = pe; break;
      }
      switch (call.end.kind) {
        case FrameBound::Kind::kUnboundedFollowing: e = pe; break;
        case FrameBound::Kind::kCurrentRow: e = rows ? i + 1 : layout.peer_end[k]; break;
        case FrameBound::Kind::kPreceding:
          if (rows)
            e = i + 1 - std::min(end_rows, i + 1 - ps);
          else
            range_offsets = true;
          break;
        case FrameBound::Kind::kFollowing:
          if (rows)
            e = i + 1 + std::min(end_rows, pe - i - 1);
          else
            range_offsets = true;
          break;
        case FrameBound::Kind::kUnboundedPreceding: e = ps; break;
      }
      (*begin)[k] = b;
      (*end)[k] = e;
    }
  }
  if (!range_offsets) return Status::OK();
  // RANGE with offsets: one ORDER BY key (the binder checks), searched.
  if (layout.order_keys.size() != 1)
    return Status::Invalid("internal: a RANGE frame with offsets needs one ORDER BY key");
  const Vec& key = layout.order_keys[0];
  const bool desc = call.order[0].descending;
  const bool is_float = ClassOf(*key.type()) == TypeClass::kFloat;
  for (size_t p = 0; p + 1 < layout.partition_starts.size(); ++p) {
    const int64_t ps = layout.partition_starts[p], pe = layout.partition_starts[p + 1];
    if ((p & 1023) == 0) QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
    // The NULL keys sort together at one end of the partition.
    int64_t nb = ps, ne = pe;
    while (nb < ne && key.IsNull(nb)) ++nb;
    while (ne > nb && key.IsNull(ne - 1)) --ne;
    if (is_float) {
      auto key_at = [&](int64_t i) { return desc ? -key.FloatAt(i) : key.FloatAt(i); };
      RangeOffsetBounds<double>(call, layout, ps, pe, nb, ne, key_at, call.start.offset.f, call.end.offset.f, begin,
                                end);
    } else {
      auto key_at = [&](int64_t i) { return desc ? -key.ExactAt(i) : key.ExactAt(i); };
      RangeOffsetBounds<i128>(call, layout, ps, pe, nb, ne, key_at, call.start.offset.i, call.end.offset.i, begin, end);
    }
  }
  return Status::OK();
}

}  // namespace quiver::sql
