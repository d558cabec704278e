// quiver/sql/execution/sort_keys.cc — normalized sort keys and their radix
// sort (see sort_keys.h).
#include "quiver/sql/execution/sort_keys.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>

#include "quiver/columnar/element_load.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {
namespace {

using u128 = unsigned __int128;

// A double as an unsigned integer of the same order: -0.0 as 0.0, every NaN
// as the largest code (after +Infinity).
inline uint64_t OrderedDoubleBits(double d) {
  if (std::isnan(d)) return ~uint64_t{0};
  if (d == 0) d = 0.0;
  const uint64_t bits = std::bit_cast<uint64_t>(d);
  return (bits >> 63) ? ~bits : (bits | (uint64_t{1} << 63));
}

// Calls f(row, is_null, value) for every row of `v` (`rows` rows; a
// constant repeats row 0), value as a 128-bit integer in the key's order
// (doubles through OrderedDoubleBits). False when the type does not pack.
template <typename F>
bool ForEachKeyValue(const Vec& v, int64_t rows, F&& f) {
  if (v.type()->id == TypeId::kNull) {
    for (int64_t r = 0; r < rows; ++r) f(r, true, i128{0});
    return true;
  }
  const uint8_t* data = v.array->buffers[1] ? v.array->buffers[1]->data() : nullptr;
  const int64_t offset = v.array->offset;
  const bool nulls = v.MayHaveNulls();
  return VisitSqlStorage(
      *v.type(),
      [&]<typename T>() -> bool {
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t at = v.Index(r);
          if (nulls && v.IsNull(r)) {
            f(r, true, i128{0});
            continue;
          }
          i128 x;
          if constexpr (kIsPackedBit<T>) {
            x = bit_util::GetBit(data, at + offset) ? 1 : 0;
          } else if constexpr (std::is_floating_point_v<T>) {
            x = static_cast<i128>(OrderedDoubleBits(LoadValue<T>(data, at + offset)));
          } else {
            x = static_cast<i128>(LoadValue<T>(data, at + offset));
          }
          f(r, false, x);
        }
        return true;
      },
      [] { return false; });
}

// One key's code: bits, the shift of its bits in the word, and the range.
struct KeyCode : KeyRange {
  int bits = 0, shift = 0;
  bool descending = false, nulls_first = false;
  // The code of a value (or of NULL): NULLS FIRST puts NULL at 0 and the
  // values from 1, NULLS LAST the values from 0 and NULL after them.
  uint64_t Code(bool is_null, i128 x) const {
    const uint64_t null_shift = any_null && nulls_first ? 1 : 0;
    if (is_null) return nulls_first ? 0 : static_cast<uint64_t>(static_cast<u128>(max - min)) + 1;
    const u128 c = descending ? static_cast<u128>(max - x) : static_cast<u128>(x - min);
    return static_cast<uint64_t>(c) + null_shift;
  }
};

}  // namespace

bool WidenKeyRange(const Vec& v, int64_t rows, KeyRange* range) {
  KeyRange r = *range;
  const bool packs = ForEachKeyValue(v, rows, [&](int64_t, bool is_null, i128 x) {
    if (is_null) {
      r.any_null = true;
    } else if (!r.any_value) {
      r.any_value = true;
      r.min = r.max = x;
    } else {
      r.min = std::min(r.min, x);
      r.max = std::max(r.max, x);
    }
  });
  if (packs) *range = r;
  return packs;
}

void RadixSortHighBits(uint64_t* words, size_t n, int low_bit, SortWords* scratch) {
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  if (n < 2 || low_bit >= 64) return;
  const int passes = (64 - low_bit + kDigitBits - 1) / kDigitBits;
  // Every digit's histogram in one read.
  std::vector<uint32_t> hist(static_cast<size_t>(passes) * kBuckets, 0);
  for (size_t i = 0; i < n; ++i)
    for (int p = 0; p < passes; ++p)
      ++hist[static_cast<size_t>(p) * kBuckets + ((words[i] >> (low_bit + p * kDigitBits)) & (kBuckets - 1))];
  scratch->resize(n);
  uint64_t* src = words;
  uint64_t* dst = scratch->data();
  for (int p = 0; p < passes; ++p) {
    uint32_t* h = &hist[static_cast<size_t>(p) * kBuckets];
    const int shift = low_bit + p * kDigitBits;
    if (h[(src[0] >> shift) & (kBuckets - 1)] == n) continue;  // one digit value: nothing moves
    uint32_t sum = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      const uint32_t c = h[b];
      h[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t w = src[i];
      dst[h[(w >> shift) & (kBuckets - 1)]++] = w;
    }
    std::swap(src, dst);
  }
  if (src != words) std::memcpy(words, src, n * sizeof(uint64_t));
}

Status ParallelRadixSortHighBits(TaskScheduler* scheduler, int parts, uint64_t* words, size_t n, int low_bit,
                                 SortWords* scratch) {
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  if (parts <= 1 || n < kParallelRadixMinWords) {
    RadixSortHighBits(words, n, low_bit, scratch);
    return Status::OK();
  }
  if (low_bit >= 64) return Status::OK();
  const size_t np = static_cast<size_t>(parts);
  const int passes = (64 - low_bit + kDigitBits - 1) / kDigitBits;
  std::vector<size_t> lo(np + 1);
  for (size_t p = 0; p <= np; ++p) lo[p] = n * p / np;
  // hist[p * kBuckets + d]: words of part p with digit d, then (after the
  // prefix sums) where part p's next word of digit d goes.
  std::vector<uint32_t> hist(np * kBuckets);
  scratch->resize(n);
  uint64_t* src = words;
  uint64_t* dst = scratch->data();
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = low_bit + pass * kDigitBits;
    QUIVER_RETURN_NOT_OK(ParallelFor(scheduler, parts, [&](int part) -> Status {
      const size_t p = static_cast<size_t>(part);
      uint32_t* h = &hist[p * kBuckets];
      std::fill(h, h + kBuckets, 0u);
      for (size_t i = lo[p]; i < lo[p + 1]; ++i) ++h[(src[i] >> shift) & (kBuckets - 1)];
      return Status::OK();
    }));
    // Stable: a digit's words of part p follow those of parts before p.
    const size_t first = (src[0] >> shift) & (kBuckets - 1);
    size_t first_total = 0;
    for (size_t p = 0; p < np; ++p) first_total += hist[p * kBuckets + first];
    if (first_total == n) continue;  // one digit value: nothing moves
    uint32_t sum = 0;
    for (size_t d = 0; d < kBuckets; ++d)
      for (size_t p = 0; p < np; ++p) {
        const uint32_t c = hist[p * kBuckets + d];
        hist[p * kBuckets + d] = sum;
        sum += c;
      }
    QUIVER_RETURN_NOT_OK(ParallelFor(scheduler, parts, [&](int part) -> Status {
      const size_t p = static_cast<size_t>(part);
      uint32_t* h = &hist[p * kBuckets];
      for (size_t i = lo[p]; i < lo[p + 1]; ++i) {
        const uint64_t w = src[i];
        dst[h[(w >> shift) & (kBuckets - 1)]++] = w;
      }
      return Status::OK();
    }));
    std::swap(src, dst);
  }
  if (src != words) {
    QUIVER_RETURN_NOT_OK(ParallelFor(scheduler, parts, [&](int part) -> Status {
      const size_t p = static_cast<size_t>(part);
      std::memcpy(words + lo[p], src + lo[p], (lo[p + 1] - lo[p]) * sizeof(uint64_t));
      return Status::OK();
    }));
  }
  return Status::OK();
}

bool KeyTypesPack(const std::vector<SortKey>& keys) {
  for (const auto& key : keys) {
    const TypeClass c = ClassOf(*key.expr->type);
    if (c == TypeClass::kString || c == TypeClass::kOther) return false;
  }
  return true;
}

Result<bool> SortByNormalizedKeys(ExecContext* ctx, const std::vector<SortKey>& keys,
                                  const std::vector<std::vector<Vec>>& k, const std::vector<int64_t>& batch_rows,
                                  SortWords* order) {
  size_t n = 0;
  for (int64_t r : batch_rows) n += static_cast<size_t>(r);
  // (The radix sort counts digits in 32 bits.)
  if (n < 2 || n >= (size_t{1} << 32) || !KeyTypesPack(keys)) return false;
  // The batches cut into `parts` groups of about equal rows, one a task.
  const int parts =
      static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(ctx->threads, static_cast<int64_t>(k.size())), 1,
                                           std::max<int64_t>(1, static_cast<int64_t>(n / kParallelRadixMinWords))));
  std::vector<int64_t> batch_start(k.size() + 1, 0);
  for (size_t b = 0; b < k.size(); ++b) batch_start[b + 1] = batch_start[b] + batch_rows[b];
  std::vector<size_t> group(static_cast<size_t>(parts) + 1, k.size());
  group[0] = 0;
  for (int p = 1; p < parts; ++p) {
    const int64_t at = static_cast<int64_t>(n) * p / parts;
    group[static_cast<size_t>(p)] =
        static_cast<size_t>(std::lower_bound(batch_start.begin(), batch_start.end() - 1, at) - batch_start.begin());
  }
  TaskScheduler* scheduler = ctx->scheduler.get();
  // Ranges of every key over the input: per group, then together.
  std::vector<std::vector<KeyCode>> group_codes(static_cast<size_t>(parts), std::vector<KeyCode>(keys.size()));
  std::atomic<bool> all_pack{true};
  QUIVER_RETURN_NOT_OK(ParallelFor(scheduler, parts, [&](int part) -> Status {
    const size_t g = static_cast<size_t>(part);
    for (size_t i = 0; i < keys.size(); ++i) {
      KeyCode& c = group_codes[g][i];
      for (size_t b = group[g]; b < group[g + 1]; ++b) {
        if (!WidenKeyRange(k[b][i], batch_rows[b], &c)) {
          all_pack = false;
          return Status::OK();
        }
      }
    }
    return ctx->CheckCancel();
  }));
  if (!all_pack) return false;
  std::vector<KeyCode> codes(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    KeyCode& c = codes[i];
    c.descending = keys[i].descending;
    c.nulls_first = keys[i].nulls_first;
    for (const auto& gc : group_codes) {
      const KeyCode& x = gc[i];
      c.any_null |= x.any_null;
      if (!x.any_value) continue;
      if (!c.any_value) {
        c.any_value = true;
        c.min = x.min;
        c.max = x.max;
      } else {
        c.min = std::min(c.min, x.min);
        c.max = std::max(c.max, x.max);
      }
    }
  }
  const int index_bits = std::bit_width(static_cast<uint64_t>(n - 1));
  int bits = index_bits;
  for (auto it = codes.rbegin(); it != codes.rend(); ++it) {
    const u128 range = static_cast<u128>(it->max - it->min) + (it->any_null ? 1 : 0);
    if (range >> 64) return false;
    it->bits = std::bit_width(static_cast<uint64_t>(range));
    it->shift = bits;
    bits += it->bits;
    if (bits > 64) return false;
  }
  QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx->aggregate_tmm->Reserve(static_cast<int64_t>(n) * 8, "sort keys"));
  // The words, in `order`'s storage: key codes high, the row's input
  // position low (written in full by the tasks below: not zeroed first).
  order->resize(n);
  uint64_t* words = order->data();
  QUIVER_RETURN_NOT_OK(ParallelFor(scheduler, parts, [&](int part) -> Status {
    const size_t g = static_cast<size_t>(part);
    for (size_t b = group[g]; b < group[g + 1]; ++b) {
      uint64_t* w = words + batch_start[b];
      for (int64_t r = 0; r < batch_rows[b]; ++r) w[r] = static_cast<uint64_t>(batch_start[b] + r);
      for (size_t i = 0; i < keys.size(); ++i) {
        const KeyCode& c = codes[i];
        if (c.bits == 0) continue;
        ForEachKeyValue(k[b][i], batch_rows[b],
                        [&](int64_t r, bool is_null, i128 x) { w[r] |= c.Code(is_null, x) << c.shift; });
      }
    }
    return ctx->CheckCancel();
  }));
  SortWords scratch;
  QUIVER_RETURN_NOT_OK(ParallelRadixSortHighBits(scheduler, parts, words, n, index_bits, &scratch));
  scratch = {};
  QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
  // Positions back to (batch << 32 | row), in place.
  const uint64_t index_mask = index_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << index_bits) - 1;
  QUIVER_RETURN_NOT_OK(ParallelFor(scheduler, parts, [&](int part) -> Status {
    const size_t begin = n * static_cast<size_t>(part) / static_cast<size_t>(parts);
    const size_t end = n * static_cast<size_t>(part + 1) / static_cast<size_t>(parts);
    for (size_t i = begin; i < end; ++i) {
      const int64_t g = static_cast<int64_t>(words[i] & index_mask);
      const size_t b =
          static_cast<size_t>(std::upper_bound(batch_start.begin(), batch_start.end(), g) - batch_start.begin()) - 1;
      words[i] = (uint64_t{b} << 32) | static_cast<uint64_t>(g - batch_start[b]);
    }
    return Status::OK();
  }));
  return true;
}

}  // namespace quiver::sql
