// quiver/ipc/column_ranges.cc — see column_ranges.h.
#include "quiver/ipc/column_ranges.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/value_visit.h"

namespace quiver::ipc {
namespace {

template <typename T>
ColumnRange RangeOf(const ArrayData& a, int column) {
  ColumnRange r;
  r.column = column;
  const T* v = a.GetValues<T>(1) + a.offset;
  const uint8_t* valid = a.null_count != 0 && !a.buffers.empty() && a.buffers[0] ? a.buffers[0]->data() : nullptr;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  if (valid == nullptr) {
    T tlo = std::numeric_limits<T>::max(), thi = std::numeric_limits<T>::min();
    for (int64_t i = 0; i < a.length; ++i) {
      tlo = std::min(tlo, v[i]);
      thi = std::max(thi, v[i]);
    }
    if (a.length > 0) {
      r.any = true;
      lo = tlo;
      hi = thi;
    }
  } else {
    for (int64_t i = 0; i < a.length; ++i) {
      if (!bit_util::GetBit(valid, a.offset + i)) {
        r.has_nulls = true;
        continue;
      }
      r.any = true;
      lo = std::min<int64_t>(lo, v[i]);
      hi = std::max<int64_t>(hi, v[i]);
    }
  }
  if (r.any) {
    r.min = lo;
    r.max = hi;
  }
  return r;
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

bool HasColumnRange(const DataType& type) {
  const TypeId id = type.id;
  return id == TypeId::kInt8 || id == TypeId::kInt16 || id == TypeId::kInt32 || id == TypeId::kInt64 ||
         id == TypeId::kDate32;
}

std::string EncodeColumnRanges(const std::vector<ArrayDataPtr>& columns) {
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c) {
    const ArrayData& a = *columns[c];
    if (!HasColumnRange(*a.type) || a.length == 0 || a.buffers.size() < 2 || !a.buffers[1]) continue;
    const int col = static_cast<int>(c);
    // int8_t .. int64_t (DATE32: int32_t days).
    const ColumnRange r = VisitValueType(
        *a.type,
        [&]<typename T>() {
          if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return RangeOf<T>(a, col);
          return ColumnRange{};
        },
        [] { return ColumnRange{}; });
    if (!out.empty()) out += ';';
    out += std::to_string(col) + ':';
    if (r.any)
      out += std::to_string(r.min) + ':' + std::to_string(r.max);
    else
      out += ':';
    out += r.has_nulls ? ":1" : ":0";
  }
  return out;
}

std::optional<std::vector<ColumnRange>> DecodeColumnRanges(std::string_view text) {
  std::vector<ColumnRange> out;
  while (!text.empty()) {
    const size_t end = std::min(text.find(';'), text.size());
    std::string_view entry = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    std::string_view parts[4];
    for (int p = 0; p < 4; ++p) {
      const size_t colon = p < 3 ? entry.find(':') : entry.size();
      if (colon == std::string_view::npos) return std::nullopt;
      parts[p] = entry.substr(0, colon);
      entry.remove_prefix(std::min(colon + 1, entry.size()));
    }
    ColumnRange r;
    int64_t column = 0;
    if (!ParseInt(parts[0], &column) || column < 0 || column > std::numeric_limits<int>::max()) return std::nullopt;
    r.column = static_cast<int>(column);
    if (parts[1].empty() != parts[2].empty()) return std::nullopt;
    if (!parts[1].empty()) {
      if (!ParseInt(parts[1], &r.min) || !ParseInt(parts[2], &r.max) || r.min > r.max) return std::nullopt;
      r.any = true;
    }
    if (parts[3] != "0" && parts[3] != "1") return std::nullopt;
    r.has_nulls = parts[3] == "1";
    if (!r.any && !r.has_nulls) return std::nullopt;  // no value at all: only an empty batch, which has no range
    out.push_back(r);
  }
  return out;
}

}  // namespace quiver::ipc
