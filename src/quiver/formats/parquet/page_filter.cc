// quiver/formats/parquet/page_filter.cc — see page_filter.h.
#include "quiver/formats/parquet/page_filter.h"

#include <algorithm>

#include "quiver/formats/parquet/file_reader.h"

namespace quiver::parquet {

int64_t CountRows(std::span<const RowRange> ranges) {
  int64_t n = 0;
  for (const RowRange& r : ranges) n += r.num_rows;
  return n;
}

std::vector<RowRange> IntersectRanges(std::span<const RowRange> a, std::span<const RowRange> b) {
  std::vector<RowRange> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].first_row, b[j].first_row);
    const int64_t hi = std::min(a[i].end(), b[j].end());
    if (lo < hi) out.push_back(RowRange{lo, hi - lo});
    if (a[i].end() < b[j].end()) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

namespace {

// Appends [first, first + rows) to sorted `out`, merging with an adjacent
// or overlapping last range.
void AddRange(std::vector<RowRange>* out, int64_t first, int64_t rows) {
  if (rows <= 0) return;
  if (!out->empty() && out->back().end() >= first) {
    out->back().num_rows = std::max(out->back().end(), first + rows) - out->back().first_row;
    return;
  }
  out->push_back(RowRange{first, rows});
}

// The rows of the pages of one column that may pass `p`.
std::vector<RowRange> PageRanges(const SchemaElement& e, const ColumnIndex& ci, const OffsetIndex& oi, int64_t num_rows,
                                 const StatsPredicate& p) {
  std::vector<RowRange> out;
  for (size_t i = 0; i < oi.page_locations.size(); ++i) {
    const int64_t rows = PageRows(oi, i, num_rows);
    Statistics s;
    if (ci.null_pages[i]) {
      s.null_count = rows;
    } else {
      s.min_value = ci.min_values[i];
      s.max_value = ci.max_values[i];
      if (ci.null_counts) s.null_count = (*ci.null_counts)[i];
    }
    if (StatisticsMayMatch(e, &s, rows, p)) AddRange(&out, oi.page_locations[i].first_row_index, rows);
  }
  return out;
}

}  // namespace

Result<std::optional<RowGroupPagePlan>> PlanRowGroupPages(const FileReader& reader, int row_group,
                                                          std::span<const StatsPredicate> predicates,
                                                          std::span<const int> fields, MemoryPool* pool) {
  if (row_group < 0 || row_group >= reader.num_row_groups()) {
    return Status::Invalid(reader.source().name() + ": no row group " + std::to_string(row_group));
  }
  const ParquetSchema& schema = reader.parquet_schema();
  const RowGroup& rg = reader.metadata().row_groups[static_cast<size_t>(row_group)];
  if (rg.num_rows <= 0) return std::optional<RowGroupPagePlan>();
  // The filter columns with a page index.
  std::vector<int> filter_leaves;
  for (const StatsPredicate& p : predicates) {
    const int leaf = FlatLeafOf(schema, p.field);
    if (leaf < 0 || !HasPageIndex(reader, row_group, leaf)) continue;
    if (std::find(filter_leaves.begin(), filter_leaves.end(), leaf) == filter_leaves.end()) {
      filter_leaves.push_back(leaf);
    }
  }
  if (filter_leaves.empty()) return std::optional<RowGroupPagePlan>();
  QUIVER_ASSIGN_OR_RETURN(auto indexes, ReadPageIndexes(reader, row_group, filter_leaves, true, pool));
  std::vector<RowRange> ranges{RowRange{0, rg.num_rows}};
  for (const StatsPredicate& p : predicates) {
    const int leaf = FlatLeafOf(schema, p.field);
    const auto it = std::find(filter_leaves.begin(), filter_leaves.end(), leaf);
    if (leaf < 0 || it == filter_leaves.end()) continue;
    const ChunkPageIndex& index = indexes[static_cast<size_t>(it - filter_leaves.begin())];
    if (!index.offset_index || !index.column_index) continue;
    const SchemaNode& node = schema.nodes[static_cast<size_t>(schema.leaves[static_cast<size_t>(leaf)])];
    const auto mine = PageRanges(*node.element, *index.column_index, *index.offset_index, rg.num_rows, p);
    ranges = IntersectRanges(ranges, mine);
  }
  if (ranges.size() == 1 && ranges[0].num_rows == rg.num_rows) return std::optional<RowGroupPagePlan>();
  RowGroupPagePlan plan;
  plan.ranges = std::move(ranges);
  plan.offset_indexes.resize(rg.columns.size());
  for (size_t i = 0; i < filter_leaves.size(); ++i) {
    plan.offset_indexes[static_cast<size_t>(filter_leaves[i])] = std::move(indexes[i].offset_index);
  }
  // The projected leaves' offset indexes (those not read above).
  std::vector<int> more;
  auto want_field = [&](int f) {
    for (int l = 0; l < schema.num_leaves[static_cast<size_t>(f)]; ++l) {
      const int leaf = schema.first_leaf[static_cast<size_t>(f)] + l;
      if (!plan.offset_indexes[static_cast<size_t>(leaf)] && HasOffsetIndex(reader, row_group, leaf)) {
        more.push_back(leaf);
      }
    }
  };
  for (int f : fields) {
    if (f >= 0 && f < static_cast<int>(schema.fields.size())) want_field(f);
  }
  if (!more.empty()) {
    QUIVER_ASSIGN_OR_RETURN(auto read, ReadPageIndexes(reader, row_group, more, false, pool));
    for (size_t i = 0; i < more.size(); ++i) {
      plan.offset_indexes[static_cast<size_t>(more[i])] = std::move(read[i].offset_index);
    }
  }
  // Pages of the projected flat leaves that hold a row of the ranges.
  auto count_field = [&](int f) {
    const int leaf = FlatLeafOf(schema, f);
    if (leaf < 0 || !plan.offset_indexes[static_cast<size_t>(leaf)]) return;
    const OffsetIndex& oi = *plan.offset_indexes[static_cast<size_t>(leaf)];
    size_t r = 0;
    for (size_t i = 0; i < oi.page_locations.size(); ++i) {
      const int64_t first = oi.page_locations[i].first_row_index;
      const int64_t end = first + PageRows(oi, i, rg.num_rows);
      while (r < plan.ranges.size() && plan.ranges[r].end() <= first) ++r;
      ++plan.pages_total;
      if (r < plan.ranges.size() && plan.ranges[r].first_row < end) ++plan.pages_selected;
    }
  };
  for (int f : fields) count_field(f);
  return std::optional<RowGroupPagePlan>(std::move(plan));
}

}  // namespace quiver::parquet
