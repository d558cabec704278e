// quiver/columnar/value_visit.h — one dispatcher from a run-time type to
// code specialised for the physical element of its values buffer.
//
// Built on VisitTypeId and TypeTraits (type_visit.h), as DuckDB's
// UnaryExecutor/BinaryExecutor are templated over the physical type and
// Arrow's VisitTypeInline hands each type's C type to the visitor:
//
//   const int64_t width = VisitValueType(type, []<typename T>() -> int64_t {
//     if constexpr (std::is_same_v<T, PackedBit>) return 0;
//     else return sizeof(T);
//   }, [] { return int64_t{-1}; });
//
// Kernels keep only their per-type differences, as `if constexpr` on T, and
// never repeat a list of ids. Thread safety: pure.
#pragma once

#include <type_traits>

#include "quiver/columnar/data_type.h"
#include "quiver/columnar/type_visit.h"

namespace quiver {

/// The element type VisitValueType names for bool's values buffer (bit-packed,
/// one bit per element, LSB first).
struct PackedBit {};

/// Dispatch over the physical element of a type's values buffer (buffers[1]),
/// as DuckDB's executors dispatch over PhysicalType: for a type that holds one
/// fixed-width value per element calls `visitor.template operator()<T>()`,
/// i.e. a lambda `[&]<typename T>() {...}`, with T
///   PackedBit               bool
///   TypeTraits<id>::CType   int8 .. uint64, float16 (its uint16 bits),
///                           float32, float64, date32/64, time32/64,
///                           timestamp, duration, interval year_month
///   int32_t/int64_t/__int128  decimal of bit_width 32 / 64 / 128
/// and for every other type (null, var-width, nested, decimal256, the
/// two-field intervals, union, run-end encoded, dictionary) returns
/// `otherwise()`. Both must return the same type. Callers keep their
/// per-type differences as `if constexpr` on T, never a list of ids.
template <typename Visitor, typename Otherwise>
decltype(auto) VisitValueType(const DataType& type, Visitor&& visitor, Otherwise&& otherwise) {
  if (type.id == TypeId::kDecimal) {
    switch (type.bit_width) {
      case 32: return visitor.template operator()<int32_t>();
      case 64: return visitor.template operator()<int64_t>();
      case 128: return visitor.template operator()<__int128>();
      default: return otherwise();
    }
  }
  return VisitTypeId(type.id, [&]<TypeId kId>(TypeIdTag<kId>) -> decltype(auto) {
    if constexpr (kId == TypeId::kBool) {
      return visitor.template operator()<PackedBit>();
    } else if constexpr (!std::is_void_v<typename TypeTraits<kId>::CType>) {
      return visitor.template operator()<typename TypeTraits<kId>::CType>();
    } else {
      return otherwise();
    }
  });
}

}  // namespace quiver
