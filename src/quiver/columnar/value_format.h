// quiver/columnar/value_format.h — one array element as text or as a JSON
// value, plus the logical element accessors that FormatValue and
// CompareArrays share.
//
// "Logical" means what a reader of the column sees: offsets applied,
// dictionaries decoded (dictionary[index]), run-end encoded arrays expanded,
// unions resolved to the selected child value, view types resolved to their
// bytes (Arrow columnar format, "Physical Memory Layout").
//
// Preconditions: every function here expects an array that passes
// ValidateArray(kFull) (quiver/columnar/validate.h); on malformed arrays the
// behaviour is undefined (they read the buffers as the layout says). Rows are
// logical indices in [0, array.length); the array's own `offset` is applied
// inside.
//
// Thread safety: pure functions over immutable arrays; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/columnar/array_data.h"

namespace quiver {

/// Output flavour of FormatValue.
enum class ValueFormat {
  /// Human text in the style of Arrow's pretty printer: null as "null",
  /// strings raw (not quoted, not escaped), binary and fixed-size binary as
  /// upper-case hex, floats in shortest round-trip form ("NaN", "inf",
  /// "-inf"), float16 decoded, decimals with the scale applied ("-123.45"),
  /// date32/date64 as "YYYY-MM-DD", time32/time64 as "HH:MM:SS[.fraction]",
  /// timestamps as ISO-8601 "YYYY-MM-DDTHH:MM:SS[.fraction]" with as many
  /// fraction digits as the unit has (0/3/6/9) and a suffix: none without a
  /// time zone, "Z" for UTC, the offset for "+HH:MM" zones (local time shown),
  /// "Z[Zone/Name]" for named zones (UTC time shown; no tz database),
  /// durations as "<n><unit>" ("15ms"), intervals as "14M", "1d3ms",
  /// "1M2d3ns", lists "[1, 2]", structs "{a: 1, b: x}", maps "{k: v}",
  /// unions / run-end encoded / dictionary arrays as the logical value.
  kText,
  /// One valid JSON value (RFC 8259): null; true/false; integers (64-bit
  /// included) as JSON numbers; floats as numbers, NaN and infinities as the
  /// strings "NaN", "Infinity", "-Infinity"; strings escaped (control
  /// characters as \n, \t, \u00XX...; invalid UTF-8 bytes replaced by
  /// \ufffd); binary as an upper-case hex string; decimals, dates, times and
  /// timestamps as strings (the kText form); durations as numbers; intervals
  /// as objects {"months": m}, {"days": d, "milliseconds": ms},
  /// {"months": m, "days": d, "nanoseconds": ns}; lists as arrays; structs as
  /// objects keyed by field name; maps as objects keyed by the kText form of
  /// each key (a JSON object needs string keys; entry order kept, duplicate
  /// keys possible); unions, run-end encoded and dictionary arrays as the
  /// logical value.
  kJson,
};

/// Appends the value of logical row `row` of `array` to `*out` in `format`.
/// `row` must be in [0, array.length). Never fails; allocation failure of
/// `*out` throws std::bad_alloc like any std::string growth. About O(size of
/// the value); no per-call allocation beyond the output string for
/// primitive types (fast enough for hundreds of thousands of rows).
void FormatValue(const ArrayData& array, int64_t row, ValueFormat format, std::string* out);

/// Convenience: FormatValue into a fresh string.
std::string FormatValueToString(const ArrayData& array, int64_t row, ValueFormat format);

/// Appends `bytes` as a JSON string literal (quotes included), escaping
/// quotes, backslashes and control characters and replacing each byte that
/// is not part of a well-formed UTF-8 sequence with \ufffd.
void AppendJsonString(std::string_view bytes, std::string* out);

// ---- logical element access (shared by FormatValue and CompareArrays) ----

/// True when the validity bitmap of `array` (if the type has one and it is
/// present) marks row `i` null; the type's physical null only: a dictionary
/// index, not the decoded value. Null-typed arrays: always true; unions and
/// run-end encoded arrays: always false (no bitmap).
bool IsPhysicalNull(const ArrayData& array, int64_t i);

/// True when logical row `i` is null as a reader sees it: the physical null,
/// or for dictionary arrays a valid index whose dictionary value is null, for
/// run-end encoded arrays a null run value, for unions a null value in the
/// selected child.
bool IsLogicalNull(const ArrayData& array, int64_t i);

/// Bytes of row `i` of a binary-like array: binary, utf8, large_binary,
/// large_utf8, binary_view, utf8_view or fixed_size_binary. The view is
/// valid as long as `array` (and its buffers) lives.
std::string_view BinaryValueAt(const ArrayData& array, int64_t i);

/// Range of child elements of list-like row `i` (list, large_list, map,
/// list_view, large_list_view, fixed_size_list): logical indices
/// [*child_offset, *child_offset + *child_length) of children[0].
void ListRangeAt(const ArrayData& array, int64_t i, int64_t* child_offset, int64_t* child_length);

/// Union row `i`: the child position (index into children, found through
/// type_codes) and the logical index into that child. Returns false when the
/// type code is not declared by the type (only possible for invalid arrays).
bool UnionChildAt(const ArrayData& array, int64_t i, int* child, int64_t* child_index);

/// Run-end encoded row `i`: the logical index into children[1] (values) of
/// the run that covers it (binary search over children[0], the run ends).
int64_t RunIndexAt(const ArrayData& array, int64_t i);

/// Dictionary index of row `i` of a dictionary-typed array (read with the
/// index type's width and signedness; uint64 indices above INT64_MAX
/// saturate to INT64_MAX, the element_load.h policy).
int64_t DictionaryIndexAt(const ArrayData& array, int64_t i);

/// Value of an integer-typed (any width, signed or unsigned; also date,
/// time, timestamp, duration, interval year_month) row as int64 (uint64
/// values above INT64_MAX saturate to INT64_MAX — one policy with
/// LoadIntegerAsInt64 in element_load.h; load uint64_t with LoadValue when
/// the bit pattern matters). Other types read as 0.
int64_t IntegerValueAt(const ArrayData& array, int64_t i);

/// IEEE 754 binary16 bits to double (exact).
double HalfToDouble(uint16_t bits);

/// Double to IEEE 754 binary16 bits, rounding to nearest even (overflow to
/// infinity, NaN kept as a quiet NaN).
uint16_t DoubleToHalf(double value);

}  // namespace quiver
