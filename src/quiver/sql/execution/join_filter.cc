// quiver/sql/execution/join_filter.cc — see join_filter.h.
#include "quiver/sql/execution/join_filter.h"

#include <algorithm>
#include <bit>

#include "quiver/base/bit_util.h"

namespace quiver::sql {
namespace {

const uint8_t* ValidityOf(const ArrayData& a) {
  if (a.null_count == 0 || a.buffers.empty() || !a.buffers[0]) return nullptr;
  return a.buffers[0]->data();
}

// Calls f(values, validity, offset) with the column's values as int32 or
// int64; false for another type.
template <typename F>
bool WithValues(const ArrayData& a, F&& f) {
  if (a.buffers.size() < 2 || !a.buffers[1]) return false;
  const TypeId id = a.type->id;
  if (id == TypeId::kInt32 || id == TypeId::kDate32) {
    f(a.GetValues<int32_t>(1), ValidityOf(a), a.offset);
    return true;
  }
  if (id == TypeId::kInt64) {
    f(a.GetValues<int64_t>(1), ValidityOf(a), a.offset);
    return true;
  }
  return false;
}

// The selection step of one predicate over rows [0, n).
template <typename Pass>
int64_t Narrow(int64_t n, Pass pass, std::vector<int64_t>* sel, bool* selected) {
  if (!*selected) {
    // One pass writing every row's number and advancing past the passing
    // ones (no counting pass first: each test is a load and, with a
    // bitmap, a lookup).
    sel->resize(static_cast<size_t>(n));
    int64_t* out = sel->data();
    int64_t j = 0;
    for (int64_t i = 0; i < n; ++i) {
      out[j] = i;
      j += pass(i) ? 1 : 0;
    }
    if (j == n) {  // nothing dropped: the batch goes on unselected
      sel->clear();
      return 0;
    }
    sel->resize(static_cast<size_t>(j));
    *selected = true;
    return n - j;
  }
  int64_t* s = sel->data();
  const auto m = static_cast<int64_t>(sel->size());
  int64_t j = 0;
  for (int64_t t = 0; t < m; ++t) {
    const int64_t i = s[t];
    s[j] = i;
    j += pass(i) ? 1 : 0;
  }
  sel->resize(static_cast<size_t>(j));
  return m - j;
}

}  // namespace

bool JoinFilterType(const DataType& type) {
  return type.id == TypeId::kInt32 || type.id == TypeId::kInt64 || type.id == TypeId::kDate32;
}

void JoinKeySummary::Add(const ArrayData& keys) {
  if (!usable_ || keys.length == 0) return;
  const bool ok = WithValues(keys, [&](const auto* values, const uint8_t* valid, int64_t off) {
    int64_t lo = bounds_.min, hi = bounds_.max;
    bool any = false;
    for (int64_t i = 0; i < keys.length; ++i) {
      if (valid != nullptr && !bit_util::GetBit(valid, off + i)) continue;
      const auto v = static_cast<int64_t>(values[off + i]);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      any = true;
    }
    if (!any) return;
    bounds_.any = true;
    bounds_.min = lo;
    bounds_.max = hi;
  });
  if (!ok) usable_ = false;
}

void JoinKeySummary::Merge(const JoinKeySummary& other) {
  usable_ = usable_ && other.usable_;
  if (!other.bounds_.any) return;
  bounds_.any = true;
  bounds_.min = std::min(bounds_.min, other.bounds_.min);
  bounds_.max = std::max(bounds_.max, other.bounds_.max);
}

void AddKeyBitmap(JoinKeyBounds* bounds, const std::vector<ArrayDataPtr>& keys) {
  bounds->bitmap.clear();
  if (!bounds->any) return;
  // max - min + 1 without overflow: the range is narrow only when the
  // difference fits well inside int64.
  const auto span = static_cast<uint64_t>(bounds->max) - static_cast<uint64_t>(bounds->min);
  if (span >= static_cast<uint64_t>(JoinKeyBounds::kMaxBitmapBits)) return;
  const int64_t bits = static_cast<int64_t>(span) + 1;
  std::vector<uint64_t> bitmap(static_cast<size_t>((bits + 63) / 64), 0);
  const int64_t lo = bounds->min;
  for (const auto& k : keys) {
    const bool ok = WithValues(*k, [&](const auto* values, const uint8_t* valid, int64_t off) {
      for (int64_t i = 0; i < k->length; ++i) {
        if (valid != nullptr && !bit_util::GetBit(valid, off + i)) continue;
        const auto bit = static_cast<uint64_t>(static_cast<int64_t>(values[off + i]) - lo);
        bitmap[bit >> 6] |= uint64_t{1} << (bit & 63);
      }
    });
    if (!ok) return;
  }
  int64_t present = 0;
  for (uint64_t w : bitmap) present += std::popcount(w);
  if (present * 10 >= bits * 9) return;  // nearly every value: the range is as good
  bounds->bitmap = std::move(bitmap);
}

void JoinFilter::Publish(std::vector<JoinKeyBounds> bounds) {
  auto shared = std::make_shared<const std::vector<JoinKeyBounds>>(std::move(bounds));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!bounds_) bounds_ = std::move(shared);
}

std::shared_ptr<const std::vector<JoinKeyBounds>> JoinFilter::published() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bounds_;
}

std::vector<parquet::StatsPredicate> JoinFilterPredicates(const JoinKeyBounds& bounds, int field) {
  using P = parquet::StatsPredicate;
  if (!bounds.any) {
    // No build key: no row can match (a value below INT64_MIN).
    return {P{field, P::Op::kLt, {parquet::StatsValue::Int(std::numeric_limits<int64_t>::min())}}};
  }
  return {P{field, P::Op::kGe, {parquet::StatsValue::Int(bounds.min)}},
          P{field, P::Op::kLe, {parquet::StatsValue::Int(bounds.max)}}};
}

int64_t SelectByJoinFilter(const JoinKeyBounds& bounds, const ArrayData& column, std::vector<int64_t>* sel,
                           bool* selected) {
  const int64_t n = column.length;
  if (n == 0) return 0;
  int64_t dropped = 0;
  WithValues(column, [&](const auto* values, const uint8_t* valid, int64_t off) {
    const auto* v = values + off;
    if (!bounds.any) {
      dropped = Narrow(
          n, [](int64_t) { return false; }, sel, selected);
      return;
    }
    const int64_t lo = bounds.min;
    const auto span = static_cast<uint64_t>(bounds.max) - static_cast<uint64_t>(lo);
    auto valid_at = [&](int64_t i) { return valid == nullptr || bit_util::GetBit(valid, off + i); };
    if (bounds.bitmap.empty()) {
      dropped = Narrow(
          n,
          [&](int64_t i) {
            return (static_cast<uint64_t>(static_cast<int64_t>(v[i])) - static_cast<uint64_t>(lo) <= span) &
                   valid_at(i);
          },
          sel, selected);
      return;
    }
    const uint64_t* bits = bounds.bitmap.data();
    dropped = Narrow(
        n,
        [&](int64_t i) {
          const uint64_t d = static_cast<uint64_t>(static_cast<int64_t>(v[i])) - static_cast<uint64_t>(lo);
          return d <= span && valid_at(i) && ((bits[d >> 6] >> (d & 63)) & 1);
        },
        sel, selected);
  });
  return dropped;
}

}  // namespace quiver::sql
