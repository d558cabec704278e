// quiver/formats/parquet/page_reader.h — the pages of one column chunk
// (parquet-format README "Data Pages", parquet.thrift PageHeader,
// DataPageHeader, DataPageHeaderV2, DictionaryPageHeader): headers decoded,
// CRCs checked when present (CRC-32 of the page bytes as stored, after the
// header), bodies decompressed into a buffer from the pool sized from the
// header's uncompressed size (checked against the codec's output; v2 pages
// keep their level bytes, which are never compressed, in front).
//
// No I/O: the reader walks the chunk's bytes, which the caller read from
// its source. Not thread-safe (one reader per column chunk).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

enum class PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

struct PageHeader {
  int32_t type = 0;  ///< PageType
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;
  // DataPageHeader (v1) / DataPageHeaderV2 / DictionaryPageHeader fields:
  int32_t num_values = 0;
  int32_t num_nulls = 0;  ///< v2
  int32_t num_rows = 0;   ///< v2
  int32_t encoding = 0;
  int32_t definition_level_encoding = 3;      ///< v1 (RLE by default)
  int32_t repetition_level_encoding = 3;      ///< v1
  int32_t definition_levels_byte_length = 0;  ///< v2
  int32_t repetition_levels_byte_length = 0;  ///< v2
  bool is_compressed = true;                  ///< v2
  bool has_type_header = false;               ///< the header for `type` was present
};

/// Decodes a PageHeader at the start of `bytes`; `*header_bytes` gets its
/// encoded size. Errors: Invalid (truncated or malformed; negative sizes).
Result<PageHeader> DecodePageHeader(std::span<const uint8_t> bytes, int64_t* header_bytes);

struct Page {
  PageHeader header;
  /// The page body decompressed (v2: level bytes, then the values),
  /// exactly header.uncompressed_page_size bytes.
  std::shared_ptr<Buffer> body;
  int64_t offset_in_chunk = 0;  ///< where its header starts
};

class PageReader {
 public:
  /// `chunk`: the column chunk's bytes (all its pages); `codec`: its
  /// CompressionCodec. Buffers for bodies come from `pool`.
  PageReader(std::shared_ptr<Buffer> chunk, int32_t codec, MemoryPool* pool) : codec_(codec), pool_(pool) {
    segments_.push_back(std::move(chunk));
  }
  /// The pages of a column chunk read in parts (a page index lets a reader
  /// read only some pages: the dictionary page, then runs of data pages):
  /// each segment holds whole pages; they are read in order, as one chunk.
  PageReader(std::vector<std::shared_ptr<Buffer>> segments, int32_t codec, MemoryPool* pool)
      : segments_(std::move(segments)), codec_(codec), pool_(pool) {}

  /// The next page (index pages skipped), or nullopt at the end of the
  /// chunk. Errors: Invalid naming the page number and what was wrong (a
  /// header or body past the chunk's end, a CRC mismatch, a body that does
  /// not decompress to the header's size); NotImplemented for a codec.
  Result<std::optional<Page>> Next();

  /// Index of the page Next() returned last (0-based, index pages counted).
  int64_t page_index() const { return page_index_; }

 private:
  std::vector<std::shared_ptr<Buffer>> segments_;
  size_t segment_ = 0;  // the segment being read
  int32_t codec_;
  MemoryPool* pool_;
  int64_t pos_ = 0;  // in the segment
  int64_t page_index_ = -1;
};

}  // namespace quiver::parquet
