// quiver/sql/execution/aggregate_holistic.cc — the holistic aggregates'
// consuming and results: median / percentile_cont / percentile (linear
// interpolation, DOUBLE) and percentile_disc / percentile_approx (one of
// the values, exact), over every value of a group kept in its value list
// (aggregate_values.h). A batch's values are appended group by group:
// Consume's phase 1 orders the rows by group and takes the arena room all
// appends need (PrepareList), so phase 2 (AppendList) cannot fail. A
// group's result selects its value(s) with nth_element over a copy of its
// values in a buffer of the aggregate pool (DuckDB's quantile does the
// same; the percentile positions are DuckDB's, so the answers are its).
#include <algorithm>
#include <cmath>
#include <string_view>

#include "quiver/memory/buffer.h"
#include "quiver/sql/execution/aggregate_table.h"
#include "quiver/sql/expression/order_key.h"

namespace quiver::sql {

namespace {

// Bytes row r of v takes as `kind` stores it.
uint64_t ListValueSize(ListValueKind kind, const Vec& v, int64_t r) {
  switch (kind) {
    case ListValueKind::kDouble:
    case ListValueKind::kInt64: return 8;
    case ListValueKind::kInt128: return 16;
    case ListValueKind::kString: return 4 + v.StringAt(r).size();
  }
  return 8;
}

// Writes row r of v at dst as `kind` stores it; the bytes written.
uint64_t WriteListValue(ListValueKind kind, const Vec& v, int64_t r, uint8_t* dst) {
  switch (kind) {
    case ListValueKind::kDouble: {
      const double x = v.FloatAt(r);
      std::memcpy(dst, &x, 8);
      return 8;
    }
    case ListValueKind::kInt64: {
      const auto x = static_cast<int64_t>(v.ExactAt(r));
      std::memcpy(dst, &x, 8);
      return 8;
    }
    case ListValueKind::kInt128: {
      const i128 x = v.ExactAt(r);
      std::memcpy(dst, &x, 16);
      return 16;
    }
    case ListValueKind::kString: {
      const std::string_view x = v.StringAt(r);
      const auto len = static_cast<uint32_t>(x.size());
      std::memcpy(dst, &len, 4);
      if (len) std::memcpy(dst + 4, x.data(), len);
      return 4 + uint64_t{len};
    }
  }
  return 0;
}

// The position (0-based, in the aggregate's order) percentile_disc takes
// of n values: the first whose cumulative distribution reaches f (DuckDB's
// Interpolator<true>::Index; an exact fraction counted exactly).
int64_t DiscreteIndex(const AggregateCall& call, int64_t n) {
  int64_t floored;
  if (call.fraction_scale >= 0) {
    i128 scaling = 1;
    for (int i = 0; i < call.fraction_scale; ++i) scaling *= 10;
    floored = static_cast<int64_t>((static_cast<i128>(n) * scaling - static_cast<i128>(n) * call.fraction_unscaled) /
                                   scaling);
  } else {
    floored = static_cast<int64_t>(std::floor(static_cast<double>(n) - static_cast<double>(n) * call.fraction));
  }
  return std::max<int64_t>(1, n - floored) - 1;
}

// percentile_cont of values v[0, n) (reordered): DuckDB's
// Interpolator<false>: RN = (n - 1) * f, lo + (hi - lo) * (RN - floor(RN)).
template <typename Less>
double Continuous(double* v, int64_t n, double f, Less less) {
  const double rn = static_cast<double>(n - 1) * f;
  const auto frn = static_cast<int64_t>(std::floor(rn)), crn = static_cast<int64_t>(std::ceil(rn));
  std::nth_element(v, v + frn, v + n, less);
  const double lo = v[frn];
  if (crn == frn) return lo;
  std::nth_element(v + frn, v + crn, v + n, less);
  const double hi = v[crn];
  return lo + (hi - lo) * (rn - static_cast<double>(frn));
}

// string_agg of groups `ids` (each of at most `most` values): a group's
// values joined by the separator, sorted first when the call is ordered
// (by the values, or by the keys each carries: order_key.h).
Result<ArrayDataPtr> EmitStringAgg(const AggregateCall& call, const PagedArray<AggregateState>& st,
                                   const std::vector<int64_t>& ids, int64_t most, MemoryPool* pool) {
  const auto n = static_cast<int64_t>(ids.size());
  QUIVER_ASSIGN_OR_RETURN(auto views, Buffer::Allocate(pool, most * static_cast<int64_t>(sizeof(std::string_view))));
  auto* v = reinterpret_cast<std::string_view*>(views->mutable_data());
  // Ordered by other expressions: (key bytes, value) per value (order_key.h).
  std::shared_ptr<Buffer> keyed_views;
  OrderedValueParts* keyed = nullptr;
  if (call.key_prefixed) {
    QUIVER_ASSIGN_OR_RETURN(keyed_views,
                            Buffer::Allocate(pool, most * static_cast<int64_t>(sizeof(OrderedValueParts))));
    keyed = reinterpret_cast<OrderedValueParts*>(keyed_views->mutable_data());
  }
  std::shared_ptr<Buffer> joined;  // the longest result so far (pool memory)
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, n * 16, pool));
  for (int64_t i = 0; i < n; ++i) {
    const AggregateState& s = st[ids[static_cast<size_t>(i)]];
    if (s.count == 0) {
      QUIVER_RETURN_NOT_OK(b.AppendNull());
      continue;
    }
    int64_t k = 0;
    uint64_t bytes = call.separator.size() * static_cast<uint64_t>(s.count - 1);
    ForEachListValue(s, s.count, ListValueKind::kString, [&](const uint8_t* p, uint32_t len) {
      const std::string_view x(reinterpret_cast<const char*>(p + 4), len - 4);
      if (keyed != nullptr) {
        new (&keyed[k]) OrderedValueParts(SplitOrderedValue(x));
        new (&v[k]) std::string_view(keyed[k].value);
        bytes += keyed[k].value.size();
      } else {
        new (&v[k]) std::string_view(x);
        bytes += x.size();
      }
      ++k;
    });
    if (bytes > INT32_MAX)
      return Status::Invalid("string_agg() of " + std::to_string(bytes) + " bytes (a value holds at most 2 GiB)");
    if (keyed != nullptr) {
      // By the keys' bytes; equal keys keep the order the values came in.
      std::stable_sort(keyed, keyed + s.count,
                       [](const OrderedValueParts& x, const OrderedValueParts& y) { return x.key < y.key; });
      for (int64_t j = 0; j < s.count; ++j) v[j] = keyed[j].value;
    } else if (call.ordered) {
      if (call.descending) {
        std::sort(v, v + s.count, [](std::string_view x, std::string_view y) { return y < x; });
      } else {
        std::sort(v, v + s.count);
      }
    }
    if (!joined || joined->size() < static_cast<int64_t>(bytes)) {
      QUIVER_ASSIGN_OR_RETURN(joined, Buffer::Allocate(pool, std::max<int64_t>(1, static_cast<int64_t>(bytes))));
    }
    uint8_t* out = joined->mutable_data();
    for (int64_t j = 0; j < s.count; ++j) {
      if (j > 0 && !call.separator.empty()) {
        std::memcpy(out, call.separator.data(), call.separator.size());
        out += call.separator.size();
      }
      if (!v[j].empty()) std::memcpy(out, v[j].data(), v[j].size());
      out += v[j].size();
    }
    QUIVER_RETURN_NOT_OK(b.Append(std::string_view(reinterpret_cast<const char*>(joined->data()), bytes)));
  }
  return b.Finish();
}

}  // namespace

Status AggregateTable::PrepareList(size_t a, Vec v, const std::vector<int64_t>& gid, int64_t n, ListBatch* out) const {
  const ListValueKind kind = ListKindOf(aggs_[a]);
  out->rows.clear();
  out->growth_bytes = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t g = gid[static_cast<size_t>(r)];
    if (g >= 0 && !v.IsNull(r)) out->rows.emplace_back(g, r);
  }
  if (!std::is_sorted(out->rows.begin(), out->rows.end())) std::sort(out->rows.begin(), out->rows.end());
  const PagedArray<AggregateState>& st = *states_[a];
  const auto& rows = out->rows;
  for (size_t i = 0; i < rows.size();) {
    const int64_t g = rows[i].first;
    uint64_t bytes = 0;
    for (; i < rows.size() && rows[i].first == g; ++i) bytes += ListValueSize(kind, v, rows[i].second);
    out->growth_bytes += ListGrowthBytes(st[g], bytes);
  }
  out->values = std::move(v);
  return Status::OK();
}

Status AggregateTable::AppendList(size_t a, const ListBatch& b) {
  const ListValueKind kind = ListKindOf(aggs_[a]);
  PagedArray<AggregateState>& st = *states_[a];
  const auto& rows = b.rows;
  for (size_t i = 0; i < rows.size();) {
    const int64_t g = rows[i].first;
    size_t j = i;
    uint64_t bytes = 0;
    for (; j < rows.size() && rows[j].first == g; ++j) bytes += ListValueSize(kind, b.values, rows[j].second);
    QUIVER_ASSIGN_OR_RETURN(uint8_t * dst, ListExtend(&arena_, &st[g], bytes));
    st[g].count += static_cast<int64_t>(j - i);
    for (; i < j; ++i) dst += WriteListValue(kind, b.values, rows[i].second, dst);
  }
  return Status::OK();
}

Result<ArrayDataPtr> AggregateTable::EmitList(size_t a, const std::vector<int64_t>& ids, MemoryPool* pool) const {
  const AggregateCall& call = aggs_[a];
  const ListValueKind kind = ListKindOf(call);
  const PagedArray<AggregateState>& st = *states_[a];
  const auto n = static_cast<int64_t>(ids.size());
  int64_t most = 1;
  for (int64_t g : ids) most = std::max(most, st[g].count);
  const int64_t width = kind == ListValueKind::kString   ? static_cast<int64_t>(sizeof(std::string_view))
                        : kind == ListValueKind::kInt128 ? 16
                                                         : 8;
  // The largest group's values, copied out of its chain (accounted).
  QUIVER_ASSIGN_OR_RETURN(auto scratch, Buffer::Allocate(pool, most * width));
  const bool desc = call.descending;
  auto gather = [&](const AggregateState& s, auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    int64_t k = 0;
    ForEachListValue(s, s.count, kind, [&](const uint8_t* p, uint32_t bytes) {
      if constexpr (std::is_same_v<T, std::string_view>) {
        out[k++] = std::string_view(reinterpret_cast<const char*>(p + 4), bytes - 4);
      } else {
        std::memcpy(&out[k++], p, sizeof(T));
      }
    });
  };
  if (call.fn == AggFn::kStringAgg) return EmitStringAgg(call, st, ids, most, pool);
  if (kind == ListValueKind::kString) {
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, n * 8, pool));
    auto* v = reinterpret_cast<std::string_view*>(scratch->mutable_data());
    for (int64_t i = 0; i < n; ++i) {
      const AggregateState& s = st[ids[static_cast<size_t>(i)]];
      if (s.count == 0) {
        QUIVER_RETURN_NOT_OK(b.AppendNull());
        continue;
      }
      for (int64_t k = 0; k < s.count; ++k) new (&v[k]) std::string_view();
      gather(s, v);
      const int64_t at = DiscreteIndex(call, s.count);
      std::nth_element(v, v + at, v + s.count,
                       [&](std::string_view x, std::string_view y) { return desc ? y < x : x < y; });
      QUIVER_RETURN_NOT_OK(b.Append(v[at]));
    }
    return b.Finish();
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(call.type, n, pool));
  for (int64_t i = 0; i < n; ++i) {
    const AggregateState& s = st[ids[static_cast<size_t>(i)]];
    if (s.count == 0) {
      QUIVER_RETURN_NOT_OK(b.SetNull(i));
      continue;
    }
    if (kind == ListValueKind::kDouble) {
      auto* v = reinterpret_cast<double*>(scratch->mutable_data());
      gather(s, v);
      auto less = [&](double x, double y) { return desc ? FloatBefore(y, x) : FloatBefore(x, y); };
      double result;
      if (call.fn == AggFn::kPercentileCont) {
        result = Continuous(v, s.count, call.fraction, less);
      } else {
        const int64_t at = DiscreteIndex(call, s.count);
        std::nth_element(v, v + at, v + s.count, less);
        result = v[at];
      }
      QUIVER_RETURN_NOT_OK(b.SetValue(i, 0, result));
    } else if (kind == ListValueKind::kInt128) {
      auto* v = reinterpret_cast<i128*>(scratch->mutable_data());
      gather(s, v);
      const int64_t at = DiscreteIndex(call, s.count);
      std::nth_element(v, v + at, v + s.count, [&](i128 x, i128 y) { return desc ? y < x : x < y; });
      QUIVER_RETURN_NOT_OK(b.SetValue(i, v[at], 0));
    } else {
      auto* v = reinterpret_cast<int64_t*>(scratch->mutable_data());
      gather(s, v);
      const int64_t at = DiscreteIndex(call, s.count);
      std::nth_element(v, v + at, v + s.count, [&](int64_t x, int64_t y) { return desc ? y < x : x < y; });
      QUIVER_RETURN_NOT_OK(b.SetValue(i, v[at], 0));
    }
  }
  return b.Finish();
}

}  // namespace quiver::sql
