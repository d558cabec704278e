// quiver/formats/parquet/row_group_filter.h — row-group pruning from
// column-chunk statistics (parquet.thrift `Statistics`: min_value /
// max_value, the deprecated min / max, null_count): whether a row group can
// hold a row that passes a conjunction of simple predicates `column op
// constant`. A scan skips the row groups where this says no, before any of
// their bytes are read.
//
// Values are compared as the file stores them: INT32 / INT64 leaves
// (signed integers, DATE days, DECIMAL unscaled values) as int64, FLOAT /
// DOUBLE as double, BYTE_ARRAY (strings) as bytes in unsigned order (only
// the min_value / max_value fields are used for those: the deprecated ones
// were written in signed byte order). The caller converts its constants to
// that representation (a DECIMAL constant to the column's scale). Anything
// else — another physical type, unsigned integers, a missing or unreadable
// statistic, NaN bounds, a value of the wrong kind — answers "may match":
// pruning is only ever an optimisation, never a filter.
//
// Pure functions over an opened FileReader's metadata; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "quiver/formats/parquet/file_reader.h"

namespace quiver::parquet {

/// A constant in a column's stored representation (see above).
struct StatsValue {
  enum class Kind : uint8_t { kInt, kDouble, kBytes };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  double d = 0;
  std::string bytes;
  static StatsValue Int(int64_t v) { return StatsValue{Kind::kInt, v, 0, {}}; }
  static StatsValue Double(double v) { return StatsValue{Kind::kDouble, 0, v, {}}; }
  static StatsValue Bytes(std::string v) { return StatsValue{Kind::kBytes, 0, 0, std::move(v)}; }
};

/// `field op values` over a flat top-level field (an index into the file's
/// schema()). kIn: the field equals one of `values`; the comparisons use
/// values[0]; kIsNull / kIsNotNull use none. A comparison is false on NULL
/// (SQL), so a row group whose chunk is all NULL holds no passing row.
struct StatsPredicate {
  enum class Op : uint8_t { kEq, kLt, kLe, kGt, kGe, kIn, kIsNull, kIsNotNull };
  int field = -1;
  Op op = Op::kEq;
  std::vector<StatsValue> values;
};

/// False only when the statistics of row group `row_group` of `reader`
/// prove that no row passes every one of `predicates` (a conjunction);
/// true otherwise (including a bad row group index or field: the read then
/// reports it).
bool RowGroupMayMatch(const FileReader& reader, int row_group, std::span<const StatsPredicate> predicates);

/// False only when `stats` (of `rows` values of leaf `e`: a column chunk's
/// or, from the page index, a page's) prove that no value passes `p`; true
/// otherwise (no statistics included).
bool StatisticsMayMatch(const SchemaElement& e, const Statistics* stats, int64_t rows, const StatsPredicate& p);

/// The column-chunk (leaf) index of top-level field `field` when it is a
/// flat primitive (one leaf, not repeated), else -1.
int FlatLeafOf(const ParquetSchema& schema, int field);

}  // namespace quiver::parquet
