// quiver/sql/execution/group_key_packing.cc — GroupKeyPacking: the layout
// from the first batch's ranges, then each row's codes checked against it
// and packed, column by column in typed loops.
#include "quiver/sql/execution/group_key_packing.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "quiver/sql/execution/sort_keys.h"

namespace quiver::sql {
namespace {

bool IsPackedIntType(TypeId id) {
  return id == TypeId::kInt32 || id == TypeId::kInt64 || id == TypeId::kDate32 || id == TypeId::kTimestamp;
}

// ORs each row's code of `v` (0 NULL, else 1 + value - lo) shifted by
// `shift` into out[r]; false when some value is outside [lo, hi].
template <typename T>
bool PackColumn(const Vec& v, int64_t n, int64_t lo, int64_t hi, int shift, uint64_t* out) {
  const bool nulls = v.MayHaveNulls();
  if (v.array->buffers.size() < 2 || !v.array->buffers[1]) {
    // No values buffer: only an array of NULLs (code 0) has none.
    return v.array->null_count == v.array->length;
  }
  const T* values = v.Values<T>();
  bool fits = true;
  if (v.constant) {
    uint64_t code = 0;
    if (!nulls || !v.IsNull(0)) {
      const int64_t x = values[0];
      fits = x >= lo && x <= hi;
      code = static_cast<uint64_t>(x) - static_cast<uint64_t>(lo) + 1;
    }
    for (int64_t r = 0; r < n; ++r) out[r] |= code << shift;
    return fits;
  }
  for (int64_t r = 0; r < n; ++r) {
    if (nulls && v.IsNull(r)) continue;  // code 0
    const int64_t x = values[r];
    fits &= (x >= lo) & (x <= hi);
    out[r] |= (static_cast<uint64_t>(x) - static_cast<uint64_t>(lo) + 1) << shift;
  }
  return fits;
}

}  // namespace

bool GroupKeyPacking::TypesPack(const std::vector<Vec>& keys) {
  if (keys.size() < 2) return false;
  for (const auto& k : keys)
    if (!IsPackedIntType(k.type()->id)) return false;
  return true;
}

bool GroupKeyPacking::SetLayout(const std::vector<Vec>& keys, int64_t n) {
  const size_t k = keys.size();
  std::vector<KeyRange> ranges(k);
  std::vector<int> bits(k);
  int total = 0;
  for (size_t c = 0; c < k; ++c) {
    if (!WidenKeyRange(keys[c], keys[c].constant ? 1 : n, &ranges[c])) return false;
    // Codes 0 (NULL) .. max - min + 1.
    const i128 width = ranges[c].any_value ? ranges[c].max - ranges[c].min + 1 : 0;
    if (width >> 63) return false;
    bits[c] = std::bit_width(static_cast<uint64_t>(width));
    total += bits[c];
  }
  if (total > 64) return false;
  // The bits left over widen every field alike (room for the values of
  // later batches), centred on the first batch's range.
  const int extra = (64 - total) / static_cast<int>(k);
  fields_.assign(k, {});
  int shift = 0;
  for (size_t c = 0; c < k; ++c) {
    const int b = std::min(bits[c] + extra, 63);
    Field& f = fields_[c];
    f.max_code = (uint64_t{1} << b) - 1;
    const i128 width = ranges[c].any_value ? ranges[c].max - ranges[c].min + 1 : 0;
    const i128 slack = static_cast<i128>(f.max_code) - width;
    f.base = std::max<i128>(ranges[c].min - slack / 2, std::numeric_limits<int64_t>::min());
    f.shift = shift;
    const TypeId id = keys[c].type()->id;
    f.width = id == TypeId::kInt32 || id == TypeId::kDate32 ? 4 : 8;
    shift += b;
  }
  return true;
}

bool GroupKeyPacking::Pack(const std::vector<Vec>& keys, int64_t n, std::vector<uint64_t>* out) {
  if (refused_) return false;
  if (fields_.empty() && !SetLayout(keys, n)) {
    refused_ = true;
    return false;
  }
  out->assign(static_cast<size_t>(n), 0);
  for (size_t c = 0; c < keys.size(); ++c) {
    const Field& f = fields_[c];
    const auto lo = static_cast<int64_t>(f.base);
    const auto hi = static_cast<int64_t>(
        std::min<i128>(f.base + static_cast<i128>(f.max_code) - 1, std::numeric_limits<int64_t>::max()));
    const TypeId id = keys[c].type()->id;
    const bool fits = id == TypeId::kInt32 || id == TypeId::kDate32
                          ? PackColumn<int32_t>(keys[c], n, lo, hi, f.shift, out->data())
                          : PackColumn<int64_t>(keys[c], n, lo, hi, f.shift, out->data());
    if (!fits) return false;
  }
  return true;
}

bool GroupKeyPacking::PackEncoded(const uint8_t* key, uint32_t len, uint64_t* word) const {
  if (fields_.empty()) return false;
  uint32_t expected = 0;
  for (const Field& f : fields_) expected += 1 + static_cast<uint32_t>(f.width);
  if (len != expected) return false;
  uint64_t w = 0;
  const uint8_t* p = key;
  for (const Field& f : fields_) {
    if (p[0] != 0) {
      int64_t x;
      if (f.width == 4) {
        int32_t x32;
        std::memcpy(&x32, p + 1, 4);
        x = x32;
      } else {
        std::memcpy(&x, p + 1, 8);
      }
      // code = 1 + x - base, in [1, max_code]
      const i128 code = static_cast<i128>(x) - f.base + 1;
      if (code < 1 || code > static_cast<i128>(f.max_code)) return false;
      w |= static_cast<uint64_t>(code) << f.shift;
    }
    p += 1 + f.width;
  }
  *word = w;
  return true;
}

}  // namespace quiver::sql
