// quiver/sql/expression/order_key.h — a value carried with its sort keys:
// what string_agg / listagg need to join their values in the order of
// other expressions (`string_agg(x, ',' ORDER BY y DESC, z)`, PostgreSQL
// and DuckDB; `listagg(x, ',') WITHIN GROUP (ORDER BY y)`, Spark). The
// binder builds Fn::kOrderedValue(x, key1, flags1, key2, flags2, ...);
// evaluated, a row is x's text behind its keys' bytes, and the aggregate's
// list of such strings sorts by the key bytes alone (bytewise, stable),
// then drops them (execution/aggregate_holistic.cc).
//
// Layout of one row (all of it one VARCHAR value, never shown to a user):
//   [key bytes: uint32, little-endian][key bytes][x's bytes]
// Each key's bytes: one marker byte, 0x01 before a value; a NULL is 0x00
// alone when it sorts first, 0x02 alone when it sorts last. The value's
// bytes compare bytewise in the key's order (inverted for DESC):
//   BOOLEAN, INTEGER, BIGINT, DECIMAL, DATE, TIMESTAMP: the value as a
//     128-bit integer with its sign bit flipped, big-endian (16 bytes; one
//     key's values share one type and so one scale);
//   DOUBLE: its bits, all flipped when negative and only the sign bit
//     otherwise, big-endian (8 bytes; -0.0 as 0.0, every NaN as one NaN
//     after +Infinity: ORDER BY's order, execution/sort.cc);
//   VARCHAR: its bytes with 0x00 written 0x00 0xFF, then 0x00 0x00.
// So no key's bytes are a prefix of another value's bytes of the same key,
// and the concatenation compares as the keys one after another: the
// "memcomparable" encoding of ordered key-value stores.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <string_view>

namespace quiver::sql {

/// Flags of one key of Fn::kOrderedValue (the BIGINT constant after it).
inline constexpr int64_t kOrderKeyDescending = 1;  ///< DESC
inline constexpr int64_t kOrderKeyNullsFirst = 2;  ///< NULLS FIRST (else LAST)

/// One Fn::kOrderedValue row split: `key`, the bytes that order it, and
/// `value`, x's text. A string shorter than its header, or whose header
/// counts past its end, is taken as all value and no key (never produced
/// by the kernel; checked so that no read runs past `encoded`).
struct OrderedValueParts {
  std::string_view key, value;
};
OrderedValueParts SplitOrderedValue(std::string_view encoded);

}  // namespace quiver::sql
