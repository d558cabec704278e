// quiver/formats/parquet/page_index.h — the page index of a column chunk
// (apache/parquet-format PageIndex.md; parquet.thrift ColumnIndex,
// OffsetIndex, PageLocation): per data page its byte location and first
// row (OffsetIndex) and its min / max / null statistics (ColumnIndex),
// stored apart from the pages and found through the footer's
// ColumnChunk.column_index_offset / _length and offset_index_offset /
// _length.
//
// Decoding is pure (no I/O); ReadPageIndexes reads the bytes of some
// column chunks' indexes from a FileReader's source and checks every
// offset, length and count against the file, the column chunk and the row
// group before the index is used: pages must start at row 0, in increasing
// rows below the row group's row count, at increasing, non-overlapping byte
// ranges inside the column chunk; a ColumnIndex must have one entry per
// page of the OffsetIndex (negative null_counts, which some writers store
// for "unknown", drop the null_counts). Errors: Invalid naming the file, row group,
// column and what was wrong (never a crash: the fuzz target
// fuzz/parquet_read_fuzz.cc reads the indexes of every file it is given).
//
// Immutable after decoding; safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

class FileReader;

/// parquet.thrift PageLocation: a data page's header starts at byte
/// `offset` of the file and the page (header included) takes
/// `compressed_page_size` bytes; its first row is `first_row_index` of the
/// row group.
struct PageLocation {
  int64_t offset = 0;
  int32_t compressed_page_size = 0;
  int64_t first_row_index = 0;
};

/// parquet.thrift OffsetIndex (the optional unencoded_byte_array_data_bytes
/// is skipped).
struct OffsetIndex {
  std::vector<PageLocation> page_locations;
};

/// parquet.thrift BoundaryOrder.
enum class BoundaryOrder : int32_t { kUnordered = 0, kAscending = 1, kDescending = 2 };

/// parquet.thrift ColumnIndex: per page, whether it holds only NULLs and
/// its min / max (PLAIN-encoded as Statistics.min_value / max_value;
/// empty for null pages), and optionally its NULL count.
struct ColumnIndex {
  std::vector<uint8_t> null_pages;  ///< 1: every value of the page is NULL
  std::vector<std::string> min_values, max_values;
  int32_t boundary_order = 0;  ///< BoundaryOrder
  std::optional<std::vector<int64_t>> null_counts;
};

/// Decode `bytes` (one encoded struct). Errors: Invalid naming the struct
/// and field (truncated or malformed; a list longer than the bytes left).
Result<OffsetIndex> DecodeOffsetIndex(std::span<const uint8_t> bytes);
Result<ColumnIndex> DecodeColumnIndex(std::span<const uint8_t> bytes);

/// The page index of one column chunk as read by ReadPageIndexes: each
/// part present when the footer locates it (and it was asked for).
struct ChunkPageIndex {
  std::optional<OffsetIndex> offset_index;
  std::optional<ColumnIndex> column_index;
};

/// True when the footer locates both indexes of column chunk
/// (row_group, leaf) (offsets and lengths set; not yet checked).
bool HasPageIndex(const FileReader& reader, int row_group, int leaf);
/// True when the footer locates its OffsetIndex.
bool HasOffsetIndex(const FileReader& reader, int row_group, int leaf);

/// Reads the offset index of each of `leaves` (column chunk indices of
/// row group `row_group`) that has one, and its column index too when
/// `column_indexes`; from a remote source in one ReadRanges call, from a
/// local one a range at a time. The result has one entry per leaf, in
/// order. Bytes come from `pool` and are freed before return. Errors:
/// Invalid (see above: an index outside the file or the chunk, a bad
/// count, an index that does not decode), IOError, OutOfMemory.
Result<std::vector<ChunkPageIndex>> ReadPageIndexes(const FileReader& reader, int row_group,
                                                    std::span<const int> leaves, bool column_indexes, MemoryPool* pool);

/// Rows of page `page` of `index` in a row group of `num_rows` rows
/// (checked indexes only: the next page's first row minus this one's).
int64_t PageRows(const OffsetIndex& index, size_t page, int64_t num_rows);

}  // namespace quiver::parquet
