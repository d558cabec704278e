// quiver/columnar/validate.h — array validation in two levels (Arrow C++
// Array::Validate / ValidateFull).
//
// Structural checks (always on, O(number of buffers)): buffer count for the
// type, each buffer large enough for offset + length elements, children
// count and lengths, validity bitmap size, null_count in range.
// Full checks (default for data from outside, O(data)): offsets monotonic
// and inside the data/child, list-view offset+size in bounds, union type ids
// declared and dense offsets inside the child, dictionary indices in
// [0, dictionary length), run ends strictly increasing, positive and
// covering the array, view buffer indices and offsets in bounds, inline
// view lengths <= 12, utf8 not checked for encoding.
//
// Errors are Invalid, naming the field path (e.g. "col.items[]") and the
// buffer, with expected vs actual values. Thread safety: pure.
#pragma once

#include <string>

#include "quiver/columnar/array_data.h"

namespace quiver {

enum class ValidationLevel { kNone, kStructural, kFull };

/// Validates `array` against `type` at `level`; `path` names it in errors.
Status ValidateArray(const ArrayData& array, ValidationLevel level, const std::string& path);

/// Validates every column of a batch (shape too).
Status ValidateBatch(const RecordBatch& batch, ValidationLevel level);

}  // namespace quiver
