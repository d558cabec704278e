// quiver/columnar/compare.h — logical comparison of arrays and record
// batches, reporting the first difference (for tests, integration checks and
// `quiver` round-trip verification; Arrow C++ Array::Equals /
// archery's integration "validate" step).
//
// "Logical" means values as a reader sees them, not bytes: each side's
// offset is applied, values under nulls are ignored, floats compare within a
// tolerance (NaN equals NaN), binary / string / view types compare by their
// bytes, lists by their logical child ranges, list views by offset/size
// ranges, dictionary arrays by decoded values (dictionary[index]; the index
// type, the dictionary layout and dictionary ids are encoding details and
// are not compared), unions by type code and the selected child value,
// run-end encoded arrays by their logical expansion, decimals and
// fixed-size binary by bytes, intervals by their fields.
//
// Preconditions: both arrays pass ValidateArray(kFull) (validate.h); on
// malformed arrays the result is undefined.
// Thread safety: pure functions over immutable data; safe from any thread.
#pragma once

#include <string>

#include "quiver/base/status.h"
#include "quiver/columnar/array_data.h"

namespace quiver {

/// How strictly values and schemas are compared.
struct CompareOptions {
  /// Two finite floats e (expected) and a (actual) are equal when
  /// |e - a| <= float_abs_tolerance + float_rel_tolerance * |e|
  /// (numpy.isclose). Infinities must match exactly; NaN equals NaN.
  double float_abs_tolerance = 1e-5;
  double float_rel_tolerance = 1e-5;
  /// Also compare custom metadata of the schema, fields and nested fields.
  bool check_metadata = false;
  /// Also compare internal field names: the item field of list-like types
  /// and a map's entries / key / value fields (DataType::Equals). Off by
  /// default, as in Arrow C++ (ARROW-14999): writers differ in these names
  /// (e.g. Arrow C++ 1.0.0 wrote canonical map names over a JSON's own).
  bool check_internal_names = false;
};

/// Compares two arrays logically (see the file comment).
/// Returns OK when equal. Otherwise Invalid naming the first difference:
/// "<path>[row]<nested location>: <what differs>: expected <value>, actual
/// <value>" with values in ValueFormat::kText (long values are shortened).
/// Different types give Invalid "<path>: type mismatch: expected <type>,
/// actual <type>"; different lengths give Invalid naming both lengths.
/// `path` names the column in messages (e.g. the field name).
Status CompareArrays(const ArrayData& expected, const ArrayData& actual, const CompareOptions& options,
                     const std::string& path);

/// True when rows [left_start, left_start + length) of `left` equal rows
/// [right_start, right_start + length) of `right` logically (see the file
/// comment; float tolerance from `options`), as Arrow C++
/// Array::RangeEquals. False, without reading values, when the types are
/// not comparable (as CompareArrays), `length` is negative or a range
/// falls outside its array. Use it where only the answer matters (e.g. the
/// IPC writer's dictionary-delta check); CompareArrays names the
/// difference.
bool ArrayRangeEquals(const ArrayData& left, int64_t left_start, const ArrayData& right, int64_t right_start,
                      int64_t length, const CompareOptions& options);

/// Compares two record batches: the schemas (field count, then per field the
/// name, nullability and type; custom metadata of schema and fields when
/// options.check_metadata), the row counts, then each column with
/// CompareArrays (path = field name). Returns OK or Invalid naming the first
/// difference.
Status CompareBatches(const RecordBatch& expected, const RecordBatch& actual, const CompareOptions& options);

/// Compares two schemas as CompareBatches does. Returns OK or Invalid naming
/// the first differing field.
Status CompareSchemas(const Schema& expected, const Schema& actual, const CompareOptions& options);

}  // namespace quiver
