// quiver/formats/parquet/page_filter.h — page pruning (apache/parquet-format
// PageIndex.md): from the ColumnIndex of each filter column (the min / max
// / NULLs of every page) the rows of a row group whose pages may hold a
// row that passes a conjunction of StatsPredicates (row_group_filter.h:
// the same forms and the same stored representation), as row ranges:
// per filter column the union of the row spans of its pages that may
// match, intersected across the filter columns (their page boundaries may
// differ). A reader then reads only the pages of each projected column
// that hold rows of those ranges (FileReader::OpenRowGroupRange) and trims
// the rows of pages that overlap a range in part.
//
// Pruning is an optimisation, never a filter: a column without a page
// index, a predicate the statistics cannot decide, a page whose min / max
// cannot be read, keeps the rows. A corrupt index is an error (page_index.h).
//
// Pure over an opened FileReader (plus the reads of the indexes);
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/parquet/page_index.h"
#include "quiver/formats/parquet/row_group_filter.h"

namespace quiver::parquet {

/// Rows [first_row, first_row + num_rows) of a row group.
struct RowRange {
  int64_t first_row = 0;
  int64_t num_rows = 0;
  int64_t end() const { return first_row + num_rows; }
  bool operator==(const RowRange&) const = default;
};

/// The page plan of one row group: the row ranges that may pass the
/// filter, and the offset index of every leaf column that has one among
/// the leaves asked for (to read only the pages of those ranges).
struct RowGroupPagePlan {
  /// Sorted, disjoint and not adjacent; empty: no row may pass.
  std::vector<RowRange> ranges;
  /// Per leaf column of the file (column-chunk index); set where read.
  std::vector<std::optional<OffsetIndex>> offset_indexes;
  /// Over the offset indexes of the projected leaves: their data pages,
  /// and those of them that hold a row of `ranges`.
  int64_t pages_total = 0, pages_selected = 0;
};

/// Rows of `ranges`.
int64_t CountRows(std::span<const RowRange> ranges);
/// Sorted, disjoint ranges intersected (the rows in both).
std::vector<RowRange> IntersectRanges(std::span<const RowRange> a, std::span<const RowRange> b);

/// The rows of row group `row_group` of `reader` whose pages may pass every
/// one of `predicates` (fields: indices into reader.schema(), flat ones
/// with a page index count), and the offset indexes of the leaves of the
/// top-level fields `fields` (the projection). nullopt when the page
/// index prunes nothing there (no filter column has one, or every page may
/// match): read the row group whole. Errors: Invalid for a corrupt index
/// (page_index.h), IOError, OutOfMemory.
Result<std::optional<RowGroupPagePlan>> PlanRowGroupPages(const FileReader& reader, int row_group,
                                                          std::span<const StatsPredicate> predicates,
                                                          std::span<const int> fields, MemoryPool* pool);

}  // namespace quiver::parquet
