// quiver/formats/parquet/page_index.cc — see page_index.h.
#include "quiver/formats/parquet/page_index.h"

#include <algorithm>

#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/thrift_compact.h"

namespace quiver::parquet {

namespace {

using R = ThriftCompactReader;
using T = ThriftType;

Status ReadPageLocation(R& r, PageLocation* p) {
  bool offset = false, size = false, row = false;
  QUIVER_RETURN_NOT_OK(r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: {
        QUIVER_ASSIGN_OR_RETURN(p->offset, r.ReadI64(t));
        offset = true;
        return Status::OK();
      }
      case 2: {
        QUIVER_ASSIGN_OR_RETURN(p->compressed_page_size, r.ReadI32(t));
        size = true;
        return Status::OK();
      }
      case 3: {
        QUIVER_ASSIGN_OR_RETURN(p->first_row_index, r.ReadI64(t));
        row = true;
        return Status::OK();
      }
      default: return r.Skip(t);
    }
  }));
  if (!offset || !size || !row) return Status::Invalid("PageLocation: a required field is missing");
  return Status::OK();
}

// The leaf's name in errors: its path in the schema.
std::string ColumnName(const FileReader& reader, int row_group, int leaf) {
  const ColumnChunk& cc =
      reader.metadata().row_groups[static_cast<size_t>(row_group)].columns[static_cast<size_t>(leaf)];
  std::string name;
  if (cc.meta_data) {
    for (const auto& p : cc.meta_data->path_in_schema) name += (name.empty() ? "" : ".") + p;
  }
  if (name.empty()) name = "#" + std::to_string(leaf);
  return name;
}

// Where the index at (offset, length) is, checked against the file.
Status CheckIndexRange(std::optional<int64_t> offset, std::optional<int32_t> length, int64_t file_size,
                       const char* what) {
  if (*offset < 4 || *length <= 0 || *offset > file_size || *length > file_size - *offset) {
    return Status::Invalid(std::string(what) + " at byte " + std::to_string(*offset) + " of " +
                           std::to_string(*length) + " bytes outside the file of " + std::to_string(file_size) +
                           " bytes");
  }
  return Status::OK();
}

// Checks a decoded OffsetIndex against its chunk (bytes [chunk_first,
// chunk_end) of the file) and row group.
Status CheckOffsetIndex(const OffsetIndex& oi, int64_t chunk_first, int64_t chunk_end, int64_t num_rows) {
  const auto& pages = oi.page_locations;
  if (pages.empty()) {
    if (num_rows > 0) return Status::Invalid("offset index: no pages for " + std::to_string(num_rows) + " rows");
    return Status::OK();
  }
  int64_t prev_end = chunk_first;
  for (size_t i = 0; i < pages.size(); ++i) {
    const PageLocation& p = pages[i];
    const std::string page = "offset index: page " + std::to_string(i);
    if (p.compressed_page_size <= 0) {
      return Status::Invalid(page + ": size " + std::to_string(p.compressed_page_size) + " bytes");
    }
    if (p.offset < prev_end || p.offset > chunk_end || p.compressed_page_size > chunk_end - p.offset) {
      return Status::Invalid(page + " at byte " + std::to_string(p.offset) + " of " +
                             std::to_string(p.compressed_page_size) + " bytes is outside the column chunk [" +
                             std::to_string(chunk_first) + ", " + std::to_string(chunk_end) +
                             ") or before the previous page's end (" + std::to_string(prev_end) + ")");
    }
    prev_end = p.offset + p.compressed_page_size;
    if (i == 0 && p.first_row_index != 0) {
      return Status::Invalid(page + " starts at row " + std::to_string(p.first_row_index) + ", not 0");
    }
    if (i > 0 && p.first_row_index <= pages[i - 1].first_row_index) {
      return Status::Invalid(page + " starts at row " + std::to_string(p.first_row_index) + ", not after page " +
                             std::to_string(i - 1) + "'s row " + std::to_string(pages[i - 1].first_row_index));
    }
    if (p.first_row_index >= num_rows) {
      return Status::Invalid(page + " starts at row " + std::to_string(p.first_row_index) + " of a row group of " +
                             std::to_string(num_rows) + " rows");
    }
  }
  return Status::OK();
}

Status CheckColumnIndex(const ColumnIndex& ci, size_t pages) {
  auto count = [&](size_t n, const char* field) -> Status {
    if (n == pages) return Status::OK();
    return Status::Invalid("column index: " + std::to_string(n) + " " + field + " for " + std::to_string(pages) +
                           " pages of the offset index");
  };
  QUIVER_RETURN_NOT_OK(count(ci.null_pages.size(), "null_pages"));
  QUIVER_RETURN_NOT_OK(count(ci.min_values.size(), "min_values"));
  QUIVER_RETURN_NOT_OK(count(ci.max_values.size(), "max_values"));
  if (ci.null_counts) QUIVER_RETURN_NOT_OK(count(ci.null_counts->size(), "null_counts"));
  return Status::OK();
}

}  // namespace

Result<OffsetIndex> DecodeOffsetIndex(std::span<const uint8_t> bytes) {
  OffsetIndex oi;
  R r(bytes);
  bool locations = false;
  QUIVER_RETURN_NOT_OK_CTX(r.ReadStruct([&](int16_t id, T t) -> Status {
    if (id != 1) return r.Skip(t);
    locations = true;
    return r.ReadList(t, [&](T et) -> Status {
      if (et != T::kStruct) return Status::Invalid("PageLocation: not a struct");
      oi.page_locations.emplace_back();
      return ReadPageLocation(r, &oi.page_locations.back());
    });
  }),
                           "offset index");
  if (!locations) return Status::Invalid("offset index: no page_locations");
  return oi;
}

Result<ColumnIndex> DecodeColumnIndex(std::span<const uint8_t> bytes) {
  ColumnIndex ci;
  R r(bytes);
  auto strings = [&](T t, std::vector<std::string>* out) {
    return r.ReadList(t, [&](T et) -> Status {
      QUIVER_ASSIGN_OR_RETURN(auto v, r.ReadBinary(et));
      out->emplace_back(v);
      return Status::OK();
    });
  };
  QUIVER_RETURN_NOT_OK_CTX(r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1:
        return r.ReadList(t, [&](T et) -> Status {
          if (et != T::kTrue && et != T::kFalse) return Status::Invalid("null_pages: not a list of bools");
          // A bool in a list is one byte: 1 true, 0 or 2 false.
          QUIVER_ASSIGN_OR_RETURN(int64_t b, r.ReadI64(T::kByte));
          ci.null_pages.push_back(b == 1 ? 1 : 0);
          return Status::OK();
        });
      case 2: return strings(t, &ci.min_values);
      case 3: return strings(t, &ci.max_values);
      case 4: {
        QUIVER_ASSIGN_OR_RETURN(ci.boundary_order, r.ReadI32(t));
        return Status::OK();
      }
      case 5:
        ci.null_counts.emplace();
        return r.ReadList(t, [&](T et) -> Status {
          QUIVER_ASSIGN_OR_RETURN(int64_t n, r.ReadI64(et));
          ci.null_counts->push_back(n);
          return Status::OK();
        });
      default: return r.Skip(t);
    }
  }),
                           "column index");
  return ci;
}

bool HasOffsetIndex(const FileReader& reader, int row_group, int leaf) {
  const auto& rgs = reader.metadata().row_groups;
  if (row_group < 0 || static_cast<size_t>(row_group) >= rgs.size()) return false;
  const auto& cols = rgs[static_cast<size_t>(row_group)].columns;
  if (leaf < 0 || static_cast<size_t>(leaf) >= cols.size()) return false;
  const ColumnChunk& cc = cols[static_cast<size_t>(leaf)];
  return cc.offset_index_offset && cc.offset_index_length && cc.meta_data && !cc.encrypted && cc.file_path.empty();
}

bool HasPageIndex(const FileReader& reader, int row_group, int leaf) {
  if (!HasOffsetIndex(reader, row_group, leaf)) return false;
  const ColumnChunk& cc =
      reader.metadata().row_groups[static_cast<size_t>(row_group)].columns[static_cast<size_t>(leaf)];
  return cc.column_index_offset && cc.column_index_length;
}

int64_t PageRows(const OffsetIndex& index, size_t page, int64_t num_rows) {
  const auto& p = index.page_locations;
  const int64_t end = page + 1 < p.size() ? p[page + 1].first_row_index : num_rows;
  return end - p[page].first_row_index;
}

Result<std::vector<ChunkPageIndex>> ReadPageIndexes(const FileReader& reader, int row_group,
                                                    std::span<const int> leaves, bool column_indexes,
                                                    MemoryPool* pool) {
  const std::string& file = reader.source().name();
  if (row_group < 0 || row_group >= reader.num_row_groups()) {
    return Status::Invalid(file + ": no row group " + std::to_string(row_group));
  }
  const RowGroup& rg = reader.metadata().row_groups[static_cast<size_t>(row_group)];
  const int64_t file_size = reader.source().size();
  auto where = [&](int leaf) {
    return file + ": row group " + std::to_string(row_group) + ", column '" + ColumnName(reader, row_group, leaf) + "'";
  };
  // The ranges to read: per leaf with an offset index, it and (when asked)
  // its column index. `which[k]`: leaf position and 0 offset / 1 column.
  std::vector<formats::ByteRange> ranges;
  std::vector<std::pair<size_t, int>> which;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const int leaf = leaves[i];
    if (leaf < 0 || static_cast<size_t>(leaf) >= rg.columns.size()) {
      return Status::Invalid(file + ": row group " + std::to_string(row_group) + ": no column " + std::to_string(leaf));
    }
    if (!HasOffsetIndex(reader, row_group, leaf)) continue;
    const ColumnChunk& cc = rg.columns[static_cast<size_t>(leaf)];
    QUIVER_RETURN_NOT_OK_CTX(CheckIndexRange(cc.offset_index_offset, cc.offset_index_length, file_size, "offset index"),
                             where(leaf));
    ranges.push_back({*cc.offset_index_offset, *cc.offset_index_length});
    which.emplace_back(i, 0);
    if (column_indexes && cc.column_index_offset && cc.column_index_length) {
      QUIVER_RETURN_NOT_OK_CTX(
          CheckIndexRange(cc.column_index_offset, cc.column_index_length, file_size, "column index"), where(leaf));
      ranges.push_back({*cc.column_index_offset, *cc.column_index_length});
      which.emplace_back(i, 1);
    }
  }
  std::vector<std::shared_ptr<Buffer>> bytes;
  if (reader.source().remote()) {
    auto read = reader.shared_source()->ReadRanges(ranges, pool);
    if (!read.ok())
      return read.status().WithContext(file + ": row group " + std::to_string(row_group) + ": page index");
    bytes = std::move(*read);
  }
  std::vector<ChunkPageIndex> out(leaves.size());
  for (size_t k = 0; k < ranges.size(); ++k) {
    const auto [i, kind] = which[k];
    const int leaf = leaves[i];
    std::shared_ptr<Buffer> b;
    if (bytes.empty()) {
      auto read = reader.shared_source()->ReadAt(ranges[k].offset, ranges[k].length, pool);
      if (!read.ok()) return read.status().WithContext(where(leaf));
      b = std::move(*read);
    } else {
      b = std::move(bytes[k]);
    }
    if (kind == 0) {
      auto oi = DecodeOffsetIndex(b->span());
      if (!oi.ok()) return oi.status().WithContext(where(leaf));
      out[i].offset_index = std::move(*oi);
    } else {
      auto ci = DecodeColumnIndex(b->span());
      if (!ci.ok()) return ci.status().WithContext(where(leaf));
      out[i].column_index = std::move(*ci);
    }
  }
  // Checks against the chunk and row group.
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!out[i].offset_index) continue;
    auto range = reader.ChunkRange(row_group, leaves[i]);
    if (!range.ok()) return range.status().WithContext(where(leaves[i]));
    QUIVER_RETURN_NOT_OK_CTX(
        CheckOffsetIndex(*out[i].offset_index, range->offset, range->offset + range->length, rg.num_rows),
        where(leaves[i]));
    if (out[i].column_index) {
      ColumnIndex& ci = *out[i].column_index;
      QUIVER_RETURN_NOT_OK_CTX(CheckColumnIndex(ci, out[i].offset_index->page_locations.size()), where(leaves[i]));
      // Some writers store -1 for a count they did not keep: then no page's
      // count is trusted.
      if (ci.null_counts &&
          std::any_of(ci.null_counts->begin(), ci.null_counts->end(), [](int64_t n) { return n < 0; })) {
        ci.null_counts.reset();
      }
    }
  }
  return out;
}

}  // namespace quiver::parquet
