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
// Structural checks also read O(1) elements so that in-bounds readers are
// safe on any array that passes them: the first and last entry of offsets
// buffers (inside the data buffer / child), the last run end (covers
// offset + length); child lengths, fixed-size-list sizes and type
// parameters (decimal width, union codes, run-end and index types) too.
// Full checks add the bitmap's null count == null_count.
//
// Errors are Invalid, naming the field path (the column name, then child
// field names joined by '.', "dictionary" for a dictionary, e.g.
// "col.item") and the buffer, with expected vs actual values, e.g.
// "column 'a.item' buffer 1 (offsets): offset 57 at index 3 is past the data
// buffer end 40" (indices are physical: the array's offset included).
// Nesting deeper than 256 levels is rejected. Thread safety: pure.
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
