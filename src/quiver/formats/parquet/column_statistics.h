// quiver/formats/parquet/column_statistics.h — a column chunk's statistics
// as the writer stores them (parquet.thrift Statistics; parquet-format
// "Sort Order" and the ColumnOrder notes): null_count always; min_value /
// max_value in the order of the column's logical type, PLAIN-encoded (no
// length prefix for BYTE_ARRAY); the deprecated min / max too where that
// order is signed and the old fields meant the same (INT32 / INT64 signed,
// FLOAT, DOUBLE). Floats leave NaN out (no min / max when every value is
// NaN) and store a zero minimum as -0.0 and a zero maximum as +0.0.
// BYTE_ARRAY values longer than kMaxStatisticsValueBytes give no min / max
// (the footer stays small; readers then do not prune by this column).
//
// Pure; thread-safe.
#pragma once

#include <cstdint>

#include "quiver/formats/parquet/column_values.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/writer_schema.h"

namespace quiver::parquet {

inline constexpr int64_t kMaxStatisticsValueBytes = 4096;

Statistics ComputeStatistics(const ColumnValues& values, const LeafMapping& m);
/// The same over `num_values` values from value `first_value` of a chunk,
/// `num_rows` rows (a data page's, for its ColumnIndex entry).
Statistics ComputeStatistics(const ColumnValues& values, const LeafMapping& m, int64_t first_value, int64_t num_values,
                             int64_t num_rows);

}  // namespace quiver::parquet
