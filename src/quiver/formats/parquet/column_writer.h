// quiver/formats/parquet/column_writer.h — one column chunk written as
// Parquet pages (parquet-format README "Column chunks", "Data Pages";
// Encodings.md): an optional dictionary page (PLAIN entries) followed by
// data pages v1, each [definition levels: 4-byte length + RLE hybrid, for
// OPTIONAL columns][values: PLAIN, or RLE_DICTIONARY = bit width byte +
// RLE hybrid indices], compressed by the chunk's codec; and the chunk's
// ColumnMetaData (encodings, sizes with headers, offsets, statistics).
//
// Dictionary encoding is tried first (not for BOOLEAN): when the
// dictionary's PLAIN size would pass `dictionary_page_limit_bytes`, the
// whole chunk is written PLAIN instead (the fallback parquet-mr and Arrow
// make; here decided before any page is written, so a chunk is all
// dictionary or all PLAIN). Pages hold about `data_page_bytes` of values
// (before compression) and at most `data_page_max_rows` rows.
//
// Pages go to the sink as they are made: memory is the dictionary, one
// page and the compression scratch, all charged to `pool` (the dictionary's
// hash index and the page being built live on the general heap and are
// charged with MemoryPool::Reserve before they grow: a pool limit stops
// the writer with OutOfMemory). Not thread-safe.
#pragma once

#include <cstdint>

#include "quiver/base/result.h"
#include "quiver/formats/parquet/column_values.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/page_index.h"
#include "quiver/formats/parquet/writer_schema.h"
#include "quiver/formats/sink.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

struct ColumnWriteOptions {
  int32_t codec = static_cast<int32_t>(Codec::kSnappy);
  int zstd_level = 3;
  int64_t data_page_bytes = 1 << 20;
  int64_t data_page_max_rows = 20000;
  bool dictionary = true;
  int64_t dictionary_page_limit_bytes = 1 << 20;
};

/// Writes `values` (a column chunk of `m`) at the sink's position and
/// returns its ColumnChunk (file_offset and metadata filled in). When
/// `page_index` is given it receives the chunk's page index (PageIndex.md;
/// the caller writes it after the row groups): an OffsetIndex of every
/// data page with rows, and a ColumnIndex (per page null_pages, min / max
/// as ComputeStatistics makes them, null_counts; boundary_order
/// UNORDERED) when every page that holds a value has a min and max (not
/// for FLOAT16, byte strings over 4 KiB, a page of NaNs only).
/// Errors: IOError from the sink; Invalid for a page over 2 GiB;
/// NotImplemented for a codec; OutOfMemory from `pool`.
Result<ColumnChunk> WriteColumnChunk(const ColumnValues& values, const LeafMapping& m, const ColumnWriteOptions& o,
                                     formats::OutputSink* sink, MemoryPool* pool, ChunkPageIndex* page_index = nullptr);

}  // namespace quiver::parquet
