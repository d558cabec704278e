// quiver/sql/execution/window_aggregate.cc — aggregates over window frames
// (see window_evaluate.h): counts and exact sums (and the exact averages
// built from them) as differences of prefix sums; DOUBLE sums and averages
// and min / max with a segment tree over the chunk's rows (a node holds its
// range's sum, or the row of its range's least / greatest non-NULL value),
// answered for any frame in O(log n) (Leis et al., VLDB 2015, section 4).
// Results match the hash aggregate's (hash_aggregate.cc): count of an
// empty frame is 0, any other aggregate of a frame without values is NULL;
// avg of an exact type divides the 128-bit sum in long double.
#include <cmath>
#include <cstring>

#include "quiver/columnar/take.h"
#include "quiver/sql/execution/window_evaluate.h"

namespace quiver::sql {
namespace {

// A bottom-up segment tree over n leaves: Query(l, r) folds [l, r).
template <typename T, typename Combine>
class SegmentTree {
 public:
  SegmentTree(std::vector<T> leaves, T identity, Combine combine)
      : n_(leaves.size()), identity_(identity), combine_(combine), tree_(2 * leaves.size(), identity) {
    for (size_t i = 0; i < n_; ++i) tree_[n_ + i] = leaves[i];
    for (size_t i = n_ - 1; i >= 1 && i < n_; --i) tree_[i] = combine_(tree_[2 * i], tree_[2 * i + 1]);
  }
  // Folds leaves [l, r): the left part in order, then the right part, so a
  // non-commutative combine (first of equal minima) still sees them left
  // to right.
  T Query(size_t l, size_t r) const {
    T left = identity_, right = identity_;
    for (l += n_, r += n_; l < r; l >>= 1, r >>= 1) {
      if (l & 1) left = combine_(left, tree_[l++]);
      if (r & 1) right = combine_(tree_[--r], right);
    }
    return combine_(left, right);
  }

 private:
  size_t n_;
  T identity_;
  Combine combine_;
  std::vector<T> tree_;
};

}  // namespace

Result<ArrayDataPtr> WindowAggregate(ExecContext* ctx, const WindowCall& call, const Vec& arg,
                                     const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                                     MemoryPool* pool) {
  const int64_t n = static_cast<int64_t>(begin.size());
  const size_t un = static_cast<size_t>(n);
  auto frame_rows = [&](int64_t i) {
    return std::max<int64_t>(0, end[static_cast<size_t>(i)] - begin[static_cast<size_t>(i)]);
  };
  if (call.agg == AggFn::kCountStar) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), n, pool));
    for (int64_t i = 0; i < n; ++i) b.values<int64_t>()[i] = frame_rows(i);
    return b.Finish();
  }
  // Non-NULL values before each row (prefix counts).
  QUIVER_ASSIGN_OR_RETURN(auto counts_reservation, ctx->aggregate_tmm->Reserve((n + 1) * 8, "window frame counts"));
  std::vector<int64_t> nonnull(un + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    nonnull[static_cast<size_t>(i) + 1] = nonnull[static_cast<size_t>(i)] + !arg.IsNull(i);
  auto frame_count = [&](int64_t i) {
    const size_t k = static_cast<size_t>(i);
    return end[k] > begin[k] ? nonnull[static_cast<size_t>(end[k])] - nonnull[static_cast<size_t>(begin[k])] : 0;
  };
  if (call.agg == AggFn::kCount) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), n, pool));
    for (int64_t i = 0; i < n; ++i) b.values<int64_t>()[i] = frame_count(i);
    return b.Finish();
  }
  const TypeClass cls = ClassOf(*arg.type());
  if (call.agg == AggFn::kMin || call.agg == AggFn::kMax) {
    // Leaves: the row itself, or -1 when NULL; a node: its best row.
    QUIVER_ASSIGN_OR_RETURN(auto tree_reservation, ctx->aggregate_tmm->Reserve(n * 24, "window min/max tree"));
    const bool is_min = call.agg == AggFn::kMin;
    auto better = [&](int64_t a, int64_t b) -> bool {  // a strictly better than b
      int c;
      if (cls == TypeClass::kString) {
        c = arg.StringAt(a).compare(arg.StringAt(b));
      } else if (cls == TypeClass::kFloat) {
        const double x = arg.FloatAt(a), y = arg.FloatAt(b);
        c = x < y ? -1 : (x > y ? 1 : 0);
      } else if (cls == TypeClass::kBool) {
        c = static_cast<int>(arg.BoolAt(a)) - static_cast<int>(arg.BoolAt(b));
      } else {
        const i128 x = arg.ExactAt(a), y = arg.ExactAt(b);
        c = x < y ? -1 : (x > y ? 1 : 0);
      }
      return is_min ? c < 0 : c > 0;
    };
    auto combine = [&](int64_t a, int64_t b) -> int64_t {
      if (a < 0) return b;
      if (b < 0) return a;
      return better(b, a) ? b : a;
    };
    std::vector<int64_t> leaves(un);
    for (int64_t i = 0; i < n; ++i) leaves[static_cast<size_t>(i)] = arg.IsNull(i) ? -1 : i;
    SegmentTree<int64_t, decltype(combine)> tree(std::move(leaves), int64_t{-1}, combine);
    std::vector<int64_t> best(un, -1);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (end[k] > begin[k]) best[k] = tree.Query(static_cast<size_t>(begin[k]), static_cast<size_t>(end[k]));
      if ((i & 65535) == 0) QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
    }
    QUIVER_ASSIGN_OR_RETURN(auto values, Materialize(arg, n, pool));
    return Take(*values, best, pool, std::string(call.agg == AggFn::kMin ? "min" : "max") + "() over a window");
  }
  // sum / avg.
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(call.type, n, pool));
  if (cls == TypeClass::kFloat) {
    QUIVER_ASSIGN_OR_RETURN(auto tree_reservation, ctx->aggregate_tmm->Reserve(n * 24, "window sum tree"));
    std::vector<double> leaves(un);
    for (int64_t i = 0; i < n; ++i) leaves[static_cast<size_t>(i)] = arg.IsNull(i) ? 0.0 : arg.FloatAt(i);
    auto plus = [](double x, double y) { return x + y; };
    SegmentTree<double, decltype(plus)> tree(std::move(leaves), 0.0, plus);
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      const int64_t c = frame_count(i);
      if (c == 0) {
        QUIVER_RETURN_NOT_OK(b.SetNull(i));
        continue;
      }
      const double s = tree.Query(static_cast<size_t>(begin[k]), static_cast<size_t>(end[k]));
      b.values<double>()[i] = call.agg == AggFn::kAvg ? s / static_cast<double>(c) : s;
      if ((i & 65535) == 0) QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
    }
    return b.Finish();
  }
  if (!IsExactClass(cls) && cls != TypeClass::kNull)
    return Status::NotImplemented("sum() / avg() over a window of " + SqlTypeName(*arg.type()));
  QUIVER_ASSIGN_OR_RETURN(auto sums_reservation, ctx->aggregate_tmm->Reserve((n + 1) * 16, "window prefix sums"));
  std::vector<i128> prefix(un + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    const i128 v = (cls == TypeClass::kNull || arg.IsNull(i)) ? 0 : arg.ExactAt(i);
    if (__builtin_add_overflow(prefix[k], v, &prefix[k + 1])) return NumericOverflow("sum() passed 128 bits");
  }
  const int scale = cls == TypeClass::kNull ? 0 : ScaleOf(*arg.type());
  const DataTypePtr& t = call.type;
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    const int64_t c = frame_count(i);
    if (c == 0) {
      QUIVER_RETURN_NOT_OK(b.SetNull(i));
      continue;
    }
    i128 s;
    if (__builtin_sub_overflow(prefix[static_cast<size_t>(end[k])], prefix[static_cast<size_t>(begin[k])], &s))
      return NumericOverflow("sum() passed 128 bits");
    if (call.agg == AggFn::kAvg) {
      const long double sum = static_cast<long double>(s) / powl(10.0L, scale);
      b.values<double>()[i] = static_cast<double>(sum / static_cast<long double>(c));
      continue;
    }
    if (t->id == TypeId::kInt64) {
      if (s > INT64_MAX || s < INT64_MIN) return NumericOverflow("sum() does not fit BIGINT");
      b.values<int64_t>()[i] = static_cast<int64_t>(s);
    } else if (t->id == TypeId::kDecimal) {
      const i128 lim = MaxUnscaled(t->precision);
      if (s > lim || s < -lim) return NumericOverflow("sum() does not fit " + SqlTypeName(*t));
      std::memcpy(b.values<uint8_t>() + i * 16, &s, 16);
    } else {
      return Status::NotImplemented("sum() over a window giving " + t->ToString());
    }
  }
  return b.Finish();
}

}  // namespace quiver::sql
