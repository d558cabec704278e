// quiver/formats/parquet/row_group_range.cc — FileReader::OpenRowGroupRange
// (file_reader.h): a range of a row group's rows read through the offset
// indexes of its columns (page_filter.h plans the ranges).
#include <algorithm>

#include "quiver/formats/parquet/column_reader.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/nested_assembly.h"
#include "quiver/formats/parquet/page_filter.h"

namespace quiver::parquet {

namespace {

// What one field of the projection reads.
struct FieldRead {
  int leaf = -1;                          // flat: its column chunk; -1 nested
  std::vector<formats::ByteRange> bytes;  // flat: the segments to read; nested: its leaves' chunks
  int64_t covered_rows = 0;               // flat: rows of the pages read
  int64_t skip_rows = 0;                  // flat: rows of those pages before the range
  int64_t pages = 0;                      // data pages read by the offset index (0: read whole)
};

// The pages of `oi` that hold rows of `range`, as byte segments of the
// file: the bytes before the first data page (a dictionary page) when the
// chunk has them, then the run of data pages.
void SelectPages(const OffsetIndex& oi, const formats::ByteRange& chunk, RowRange range, int64_t num_rows,
                 FieldRead* out) {
  const auto& p = oi.page_locations;
  // First page: the last one starting at or before range.first_row; last
  // page: the last one starting before range.end().
  size_t first = 0;
  while (first + 1 < p.size() && p[first + 1].first_row_index <= range.first_row) ++first;
  size_t last = first;
  while (last + 1 < p.size() && p[last + 1].first_row_index < range.end()) ++last;
  const int64_t run_begin = p[first].offset;
  const int64_t run_end = p[last].offset + p[last].compressed_page_size;
  const int64_t preamble = p[0].offset - chunk.offset;  // the dictionary page, if any
  if (preamble > 0 && first == 0) {
    out->bytes.push_back({chunk.offset, run_end - chunk.offset});
  } else {
    if (preamble > 0) out->bytes.push_back({chunk.offset, preamble});
    out->bytes.push_back({run_begin, run_end - run_begin});
  }
  const int64_t covered_first = p[first].first_row_index;
  out->covered_rows = (last + 1 < p.size() ? p[last + 1].first_row_index : num_rows) - covered_first;
  out->skip_rows = range.first_row - covered_first;
  out->pages = static_cast<int64_t>(last - first + 1);
}

}  // namespace

Result<std::unique_ptr<RowGroupSlices>> FileReader::OpenRowGroupRange(int index, const std::vector<int>& columns,
                                                                      const RowGroupPagePlan& plan, RowRange range,
                                                                      MemoryPool* pool) const {
  const std::string group = source_->name() + ": row group " + std::to_string(index);
  if (index < 0 || index >= num_row_groups())
    return Status::Invalid(source_->name() + ": no row group " + std::to_string(index));
  const RowGroup& rg = metadata_.row_groups[static_cast<size_t>(index)];
  if (range.first_row < 0 || range.num_rows <= 0 || range.first_row > rg.num_rows ||
      range.num_rows > rg.num_rows - range.first_row) {
    return Status::Invalid(group + ": rows [" + std::to_string(range.first_row) + ", " +
                           std::to_string(range.first_row + range.num_rows) + ") outside its " +
                           std::to_string(rg.num_rows) + " rows");
  }
  std::vector<int> fields = columns;
  if (fields.empty()) {
    for (int i = 0; i < static_cast<int>(schema_.fields.size()); ++i) fields.push_back(i);
  }
  std::unique_ptr<RowGroupSlices> out(new RowGroupSlices());
  QUIVER_ASSIGN_OR_RETURN(out->schema_, ProjectedSchema(fields));
  out->num_rows_ = out->rows_left_ = range.num_rows;
  out->nested_first_ = range.first_row;
  for (int f : fields) out->where_.push_back(group + ", column '" + schema_.fields[static_cast<size_t>(f)]->name + "'");
  // What each field reads.
  std::vector<FieldRead> reads(fields.size());
  std::vector<formats::ByteRange> all;
  for (size_t i = 0; i < fields.size(); ++i) {
    const int f = fields[i];
    FieldRead& r = reads[i];
    r.leaf = FlatLeafOf(schema_, f);
    if (r.leaf >= 0 && IsNestedField(schema_, f)) r.leaf = -1;
    if (r.leaf < 0) {
      for (int l = 0; l < schema_.num_leaves[static_cast<size_t>(f)]; ++l) {
        auto c = ChunkRange(index, schema_.first_leaf[static_cast<size_t>(f)] + l);
        if (!c.ok()) return c.status().WithContext(out->where_[i]);
        r.bytes.push_back(*c);
      }
    } else {
      auto c = ChunkRange(index, r.leaf);
      if (!c.ok()) return c.status().WithContext(out->where_[i]);
      const OffsetIndex* oi = nullptr;
      if (static_cast<size_t>(r.leaf) < plan.offset_indexes.size() &&
          plan.offset_indexes[static_cast<size_t>(r.leaf)]) {
        oi = &*plan.offset_indexes[static_cast<size_t>(r.leaf)];
      }
      if (oi != nullptr && !oi->page_locations.empty()) {
        SelectPages(*oi, *c, range, rg.num_rows, &r);
      } else {
        r.bytes.push_back(*c);
        r.covered_rows = rg.num_rows;
        r.skip_rows = range.first_row;
      }
    }
    all.insert(all.end(), r.bytes.begin(), r.bytes.end());
  }
  // From a remote source every range at once; from a local one as each
  // field is made below.
  std::vector<std::shared_ptr<Buffer>> prefetched;
  if (source_->remote()) {
    auto read = source_->ReadRanges(all, pool);
    if (!read.ok()) return read.status().WithContext(group);
    prefetched = std::move(*read);
  }
  size_t next = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    const int f = fields[i];
    FieldRead& r = reads[i];
    std::vector<std::shared_ptr<Buffer>> bytes;
    for (const auto& b : r.bytes) {
      if (!prefetched.empty()) {
        bytes.push_back(std::move(prefetched[next++]));
        continue;
      }
      if (r.leaf < 0) break;  // nested: ReadColumn reads them
      auto read = source_->ReadAt(b.offset, b.length, pool);
      if (!read.ok()) return read.status().WithContext(out->where_[i]);
      bytes.push_back(std::move(*read));
    }
    if (r.leaf < 0) {
      auto col = ReadColumn(index, f, pool, std::span(bytes));
      if (!col.ok()) return col.status().WithContext(out->where_[i]);
      out->columns_.push_back(nullptr);
      out->nested_.push_back(std::move(*col));
      out->skip_.push_back(0);
      continue;
    }
    column_chunks_read_.fetch_add(1, std::memory_order_relaxed);
    for (const auto& b : r.bytes) bytes_read_.fetch_add(b.length, std::memory_order_relaxed);
    pages_read_.fetch_add(r.pages, std::memory_order_relaxed);
    const SchemaNode& node = schema_.nodes[static_cast<size_t>(schema_.top_nodes[static_cast<size_t>(f)])];
    auto reader = ColumnChunkReader::Make(node, *rg.columns[static_cast<size_t>(r.leaf)].meta_data, std::move(bytes),
                                          r.covered_rows, schema_.fields[static_cast<size_t>(f)]->type, pool);
    if (!reader.ok()) return reader.status().WithContext(out->where_[i]);
    out->columns_.push_back(std::move(*reader));
    out->nested_.push_back(nullptr);
    out->skip_.push_back(r.skip_rows);
  }
  return out;
}

}  // namespace quiver::parquet
