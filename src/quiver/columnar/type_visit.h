// quiver/columnar/type_visit.h — compile-time traits per type id and one
// dispatcher from a run-time TypeId to code specialised for it.
//
// Learned from Arrow C++ (cpp/src/arrow/visit_type_inline.h VisitTypeIdInline,
// cpp/src/arrow/type_traits.h TypeTraits<T>); quiver's types are one struct
// with an id, so the traits are keyed by the id itself:
//
//   const int64_t v = VisitTypeId(id, [&]<TypeId kId>(TypeIdTag<kId>) -> int64_t {
//     using Traits = TypeTraits<kId>;
//     if constexpr (Traits::kIsInteger) return LoadAt<typename Traits::CType>(...);
//     else return 0;
//   });
//
// One switch lives here; callers keep only the cases that differ, as
// `if constexpr` branches, and never repeat the list of ids.
// Thread safety: everything here is pure / constexpr.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "quiver/columnar/data_type.h"

namespace quiver {

// clang-format off

/// Every TypeId enumerator, in declaration order (X-macro: X(kNull) ...).
#define QUIVER_FOR_EACH_TYPE_ID(X)                                                        \
  X(kNull) X(kBool) X(kInt8) X(kInt16) X(kInt32) X(kInt64) X(kUInt8) X(kUInt16)          \
  X(kUInt32) X(kUInt64) X(kFloat16) X(kFloat32) X(kFloat64) X(kBinary) X(kUtf8)          \
  X(kLargeBinary) X(kLargeUtf8) X(kBinaryView) X(kUtf8View) X(kFixedSizeBinary)          \
  X(kDecimal) X(kDate32) X(kDate64) X(kTime32) X(kTime64) X(kTimestamp) X(kDuration)     \
  X(kIntervalYearMonth) X(kIntervalDayTime) X(kIntervalMonthDayNano) X(kList)            \
  X(kLargeList) X(kListView) X(kLargeListView) X(kFixedSizeList) X(kStruct) X(kMap)      \
  X(kSparseUnion) X(kDenseUnion) X(kRunEndEncoded) X(kDictionary)

// clang-format on

/// Number of TypeId enumerators (kNull .. kDictionary).
inline constexpr int kNumTypeIds = static_cast<int>(TypeId::kDictionary) + 1;

/// A type id as a type: the argument the visitor of VisitTypeId receives.
template <TypeId kId>
using TypeIdTag = std::integral_constant<TypeId, kId>;

/// Compile-time facts of one type id.
///   CType        the C++ type of one element of the values buffer for the
///                types that have one (integers, floats, float16 as its
///                uint16 bits, date/time/timestamp/duration/interval
///                year_month as their storage integer); void otherwise.
///   kIsInteger   int8 .. uint64 (not the temporal types).
///   kIsSigned    the CType is a signed integer.
///   OffsetType   int32_t / int64_t for the offset-based layouts (binary,
///                utf8, list, map, list views and their large forms); void
///                otherwise.
template <TypeId kId>
struct TypeTraits {
  using CType = void;
  using OffsetType = void;
  static constexpr bool kIsInteger = false;
  static constexpr bool kIsSigned = false;
};

namespace type_visit_internal {
template <typename C, bool kInteger>
struct CTypeTraits {
  using CType = C;
  using OffsetType = void;
  static constexpr bool kIsInteger = kInteger;
  static constexpr bool kIsSigned = std::is_signed_v<C> && std::is_integral_v<C>;
};
template <typename O>
struct OffsetTraits {
  using CType = void;
  using OffsetType = O;
  static constexpr bool kIsInteger = false;
  static constexpr bool kIsSigned = false;
};
}  // namespace type_visit_internal

#define QUIVER_CTYPE_TRAITS(id, ctype, is_integer) \
  template <>                                      \
  struct TypeTraits<TypeId::id> : type_visit_internal::CTypeTraits<ctype, is_integer> {};
QUIVER_CTYPE_TRAITS(kInt8, int8_t, true)
QUIVER_CTYPE_TRAITS(kInt16, int16_t, true)
QUIVER_CTYPE_TRAITS(kInt32, int32_t, true)
QUIVER_CTYPE_TRAITS(kInt64, int64_t, true)
QUIVER_CTYPE_TRAITS(kUInt8, uint8_t, true)
QUIVER_CTYPE_TRAITS(kUInt16, uint16_t, true)
QUIVER_CTYPE_TRAITS(kUInt32, uint32_t, true)
QUIVER_CTYPE_TRAITS(kUInt64, uint64_t, true)
QUIVER_CTYPE_TRAITS(kFloat16, uint16_t, false)
QUIVER_CTYPE_TRAITS(kFloat32, float, false)
QUIVER_CTYPE_TRAITS(kFloat64, double, false)
QUIVER_CTYPE_TRAITS(kDate32, int32_t, false)
QUIVER_CTYPE_TRAITS(kDate64, int64_t, false)
QUIVER_CTYPE_TRAITS(kTime32, int32_t, false)
QUIVER_CTYPE_TRAITS(kTime64, int64_t, false)
QUIVER_CTYPE_TRAITS(kTimestamp, int64_t, false)
QUIVER_CTYPE_TRAITS(kDuration, int64_t, false)
QUIVER_CTYPE_TRAITS(kIntervalYearMonth, int32_t, false)
#undef QUIVER_CTYPE_TRAITS

#define QUIVER_OFFSET_TRAITS(id, offset) \
  template <>                            \
  struct TypeTraits<TypeId::id> : type_visit_internal::OffsetTraits<offset> {};
QUIVER_OFFSET_TRAITS(kBinary, int32_t)
QUIVER_OFFSET_TRAITS(kUtf8, int32_t)
QUIVER_OFFSET_TRAITS(kList, int32_t)
QUIVER_OFFSET_TRAITS(kMap, int32_t)
QUIVER_OFFSET_TRAITS(kListView, int32_t)
QUIVER_OFFSET_TRAITS(kLargeBinary, int64_t)
QUIVER_OFFSET_TRAITS(kLargeUtf8, int64_t)
QUIVER_OFFSET_TRAITS(kLargeList, int64_t)
QUIVER_OFFSET_TRAITS(kLargeListView, int64_t)
#undef QUIVER_OFFSET_TRAITS

/// Calls `visitor(TypeIdTag<id>{})` with `id` as a compile-time constant and
/// returns what it returns (every instantiation must return the same type).
/// Precondition: `id` is one of the enumerators (every TypeId quiver builds
/// is; the IPC and C Data importers map unknown ids to errors first).
template <typename Visitor>
decltype(auto) VisitTypeId(TypeId id, Visitor&& visitor) {
  switch (id) {
#define QUIVER_VISIT_CASE(name) \
  case TypeId::name: return std::forward<Visitor>(visitor)(TypeIdTag<TypeId::name>{});
    QUIVER_FOR_EACH_TYPE_ID(QUIVER_VISIT_CASE)
#undef QUIVER_VISIT_CASE
  }
  // Not an enumerator: the precondition was broken. Visit as null, the type
  // without buffers, so no caller reads memory on this path.
  return std::forward<Visitor>(visitor)(TypeIdTag<TypeId::kNull>{});
}

/// For the eight integer ids (int8 .. uint64) calls `visitor.template
/// operator()<CType>()`, i.e. a lambda `[&]<typename T>() {...}` with T the
/// element type; for every other id returns `otherwise()`. Both must return
/// the same type. This replaces the hand-written integer-width switches.
template <typename Visitor, typename Otherwise>
decltype(auto) VisitIntegerType(TypeId id, Visitor&& visitor, Otherwise&& otherwise) {
  return VisitTypeId(id, [&]<TypeId kId>(TypeIdTag<kId>) -> decltype(auto) {
    if constexpr (TypeTraits<kId>::kIsInteger) {
      return visitor.template operator()<typename TypeTraits<kId>::CType>();
    } else {
      return otherwise();
    }
  });
}

}  // namespace quiver
