// quiver/ipc/column_ranges.h — per-batch value ranges of integer columns,
// recorded in a record batch message's custom metadata so that a reader
// can skip a batch whose key range a filter excludes without touching its
// body (Arrow IPC carries no statistics of its own).
//
// With WriteOptions::column_ranges, quiver's writer records, for every
// top-level INT8 / INT16 / INT32 / INT64 / DATE32 column of each record
// batch, the smallest and largest non-NULL value and whether the column
// has a NULL, under kColumnRangesMetadataKey. The value is text: entries
// "COLUMN:MIN:MAX:NULLS" joined by ';' (COLUMN the top-level field index,
// MIN and MAX decimal int64 and empty when every value is NULL, NULLS 0 or
// 1), e.g. "0:2450815:2450822:0;3:::1" (column 3 all NULL). A batch of
// no rows gets none. Other readers ignore the key.
//
// A reader trusts these ranges as it trusts the values themselves: a file
// whose ranges lie makes a pruning scan skip rows it should have read.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/columnar/array_data.h"

namespace quiver::ipc {

/// The Message.custom_metadata key of the ranges (see above).
inline constexpr std::string_view kColumnRangesMetadataKey = "quiver.column.ranges";

/// The recorded range of one column of one batch.
struct ColumnRange {
  int column = 0;    ///< top-level field index
  bool any = false;  ///< a non-NULL value exists (then min / max hold)
  int64_t min = 0;   ///< smallest non-NULL value
  int64_t max = 0;   ///< largest non-NULL value
  bool has_nulls = false;
};

/// Whether a column of `type` gets a recorded range.
bool HasColumnRange(const DataType& type);

/// The ranges of `columns` (a batch's top-level columns, in field order),
/// encoded as the metadata value; "" when no column has a range type.
std::string EncodeColumnRanges(const std::vector<ArrayDataPtr>& columns);

/// Decodes a metadata value; nullopt when it is malformed (a reader then
/// prunes nothing).
std::optional<std::vector<ColumnRange>> DecodeColumnRanges(std::string_view text);

}  // namespace quiver::ipc
