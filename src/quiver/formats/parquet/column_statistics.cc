#include "quiver/formats/parquet/column_statistics.h"

#include <cmath>
#include <cstring>
#include <string>

namespace quiver::parquet {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
std::string Bytes(T v) {
  std::string s(sizeof(T), '\0');
  std::memcpy(s.data(), &v, sizeof(T));
  return s;
}

/// Min and max of fixed-width values compared as T.
template <typename T>
void MinMax(const uint8_t* p, int64_t n, int width, std::string* min, std::string* max) {
  T lo = Load<T>(p), hi = lo;
  for (int64_t i = 1; i < n; ++i) {
    const T x = Load<T>(p + i * width);
    if (x < lo) lo = x;
    if (hi < x) hi = x;
  }
  *min = Bytes(lo);
  *max = Bytes(hi);
}

/// Floats: NaN left out; zeros as the spec asks. False when all are NaN.
template <typename T>
bool FloatMinMax(const uint8_t* p, int64_t n, std::string* min, std::string* max) {
  bool any = false;
  T lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T x = Load<T>(p + i * static_cast<int64_t>(sizeof(T)));
    if (std::isnan(x)) continue;
    if (!any) {
      lo = hi = x;
      any = true;
    }
    if (x < lo) lo = x;
    if (hi < x) hi = x;
  }
  if (!any) return false;
  if (lo == 0) lo = -T(0);
  if (hi == 0) hi = T(0);
  *min = Bytes(lo);
  *max = Bytes(hi);
  return true;
}

/// Big-endian two's complement comparison of two equal-length byte strings.
bool SignedBytesLess(const uint8_t* a, const uint8_t* b, int n) {
  if (a[0] != b[0]) return static_cast<int8_t>(a[0]) < static_cast<int8_t>(b[0]);
  return std::memcmp(a + 1, b + 1, static_cast<size_t>(n - 1)) < 0;
}

}  // namespace

Statistics ComputeStatistics(const ColumnValues& cv, const LeafMapping& m) {
  return ComputeStatistics(cv, m, 0, cv.num_values, cv.num_rows);
}

Statistics ComputeStatistics(const ColumnValues& cv, const LeafMapping& m, int64_t first_value, int64_t num_values,
                             int64_t num_rows) {
  Statistics s;
  s.null_count = num_rows - num_values;
  if (num_values == 0 || m.order == StatsOrder::kNone) return s;
  std::string lo, hi;
  bool deprecated_too = false;
  const int w = m.width_bytes;
  const uint8_t* fixed = cv.fixed_data() != nullptr ? cv.fixed_data() + first_value * w : nullptr;
  const int64_t n = num_values;
  switch (m.order) {
    case StatsOrder::kNone: return s;
    case StatsOrder::kBoolean: MinMax<uint8_t>(fixed, n, 1, &lo, &hi); break;
    case StatsOrder::kSigned:
      deprecated_too = true;
      if (m.physical == PhysicalType::kInt32) {
        MinMax<int32_t>(fixed, n, 4, &lo, &hi);
      } else {
        MinMax<int64_t>(fixed, n, 8, &lo, &hi);
      }
      break;
    case StatsOrder::kUnsigned:
      if (m.physical == PhysicalType::kInt32) {
        MinMax<uint32_t>(fixed, n, 4, &lo, &hi);
      } else {
        MinMax<uint64_t>(fixed, n, 8, &lo, &hi);
      }
      break;
    case StatsOrder::kFloat: {
      deprecated_too = true;
      const bool any = m.physical == PhysicalType::kFloat ? FloatMinMax<float>(fixed, n, &lo, &hi)
                                                          : FloatMinMax<double>(fixed, n, &lo, &hi);
      if (!any) return s;
      break;
    }
    case StatsOrder::kBytes:
    case StatsOrder::kSignedBytes: {
      if (m.physical == PhysicalType::kByteArray) {
        const std::string_view* v = cv.view_data() + first_value;
        std::string_view a = v[0], b = v[0];
        for (int64_t i = 1; i < n; ++i) {
          // string_view compares bytes as unsigned char (char_traits<char>::compare is memcmp-like).
          if (v[i].compare(a) < 0) a = v[i];
          if (b.compare(v[i]) < 0) b = v[i];
        }
        if (static_cast<int64_t>(a.size()) > kMaxStatisticsValueBytes ||
            static_cast<int64_t>(b.size()) > kMaxStatisticsValueBytes) {
          return s;
        }
        lo.assign(a);
        hi.assign(b);
      } else {
        const uint8_t* p = fixed;
        const uint8_t* a = p;
        const uint8_t* b = p;
        const bool is_signed = m.order == StatsOrder::kSignedBytes;
        for (int64_t i = 1; i < n; ++i) {
          const uint8_t* x = p + i * w;
          if (is_signed ? SignedBytesLess(x, a, w) : std::memcmp(x, a, static_cast<size_t>(w)) < 0) a = x;
          if (is_signed ? SignedBytesLess(b, x, w) : std::memcmp(b, x, static_cast<size_t>(w)) < 0) b = x;
        }
        lo.assign(reinterpret_cast<const char*>(a), static_cast<size_t>(w));
        hi.assign(reinterpret_cast<const char*>(b), static_cast<size_t>(w));
      }
      break;
    }
  }
  if (deprecated_too) {
    s.min = lo;
    s.max = hi;
  }
  s.min_value = std::move(lo);
  s.max_value = std::move(hi);
  return s;
}

}  // namespace quiver::parquet
