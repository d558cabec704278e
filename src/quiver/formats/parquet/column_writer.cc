#include "quiver/formats/parquet/column_writer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "quiver/formats/parquet/column_statistics.h"
#include "quiver/formats/parquet/compress.h"
#include "quiver/formats/parquet/metadata_writer.h"
#include "quiver/formats/parquet/rle_encoder.h"
#include "quiver/formats/parquet/rle_hybrid.h"

namespace quiver::parquet {
namespace {

constexpr int32_t kRle = static_cast<int32_t>(Encoding::kRle);
constexpr int32_t kPlain = static_cast<int32_t>(Encoding::kPlain);
constexpr int32_t kRleDictionary = static_cast<int32_t>(Encoding::kRleDictionary);

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

void AppendU32(uint32_t v, std::string* out) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  out->append(b, 4);
}

/// The value `i` of a chunk as bytes (fixed width or BYTE_ARRAY).
std::string_view ValueBytes(const ColumnValues& cv, const LeafMapping& m, int64_t i) {
  if (m.physical == PhysicalType::kByteArray) return cv.view_data()[i];
  return {reinterpret_cast<const char*>(cv.fixed_data()) + i * m.width_bytes, static_cast<size_t>(m.width_bytes)};
}

/// PLAIN size of one value.
int64_t PlainSize(std::string_view v, const LeafMapping& m) {
  return m.physical == PhysicalType::kByteArray ? 4 + static_cast<int64_t>(v.size()) : m.width_bytes;
}

void AppendPlain(std::string_view v, const LeafMapping& m, std::string* out) {
  if (m.physical == PhysicalType::kByteArray) AppendU32(static_cast<uint32_t>(v.size()), out);
  out->append(v);
}

/// Bytes of general-heap memory (the dictionary's hash index, a page's
/// body) charged to the pool: Set reserves growth before the memory is
/// taken and gives back shrinkage; the destructor gives back the rest.
class HeapCharge {
 public:
  explicit HeapCharge(MemoryPool* pool) : pool_(pool) {}
  ~HeapCharge() { pool_->Unreserve(charged_); }
  HeapCharge(const HeapCharge&) = delete;
  HeapCharge& operator=(const HeapCharge&) = delete;
  Status Set(int64_t bytes) {
    if (bytes > charged_) {
      QUIVER_RETURN_NOT_OK(pool_->Reserve(bytes - charged_));
    } else {
      pool_->Unreserve(charged_ - bytes);
    }
    charged_ = bytes;
    return Status::OK();
  }

 private:
  MemoryPool* pool_;
  int64_t charged_ = 0;
};

/// What one dictionary entry costs on the heap: its hash node (key view,
/// index, next pointer, cached hash), its bucket and its entry view.
constexpr int64_t kDictionaryEntryBytes = 64;
constexpr int64_t kDictionaryChargeStep = 4096;  // entries charged at a time

struct DictionaryBuild {
  std::vector<std::string_view> entries;  // into the chunk's values
  std::shared_ptr<Buffer> indices;        // uint32 per non-null value
  int64_t plain_bytes = 0;
};

/// Builds the dictionary, or returns false when it passes the limit.
Result<bool> BuildDictionary(const ColumnValues& cv, const LeafMapping& m, int64_t limit_bytes, MemoryPool* pool,
                             DictionaryBuild* out) {
  QUIVER_ASSIGN_OR_RETURN(out->indices, Buffer::Allocate(pool, cv.num_values * 4));
  auto* idx = reinterpret_cast<uint32_t*>(out->indices->mutable_data());
  HeapCharge charge(pool);  // the hash index, charged ahead of its growth
  int64_t charged_entries = 0;
  std::unordered_map<std::string_view, uint32_t> index;
  for (int64_t i = 0; i < cv.num_values; ++i) {
    const std::string_view v = ValueBytes(cv, m, i);
    if (static_cast<int64_t>(out->entries.size()) == charged_entries) {
      charged_entries += kDictionaryChargeStep;
      QUIVER_RETURN_NOT_OK(charge.Set(charged_entries * kDictionaryEntryBytes));
    }
    auto [it, inserted] = index.try_emplace(v, static_cast<uint32_t>(out->entries.size()));
    if (inserted) {
      out->plain_bytes += PlainSize(v, m);
      if (out->plain_bytes > limit_bytes) return false;
      out->entries.push_back(v);
    }
    idx[i] = it->second;
  }
  return true;
}

class ChunkEmitter {
 public:
  ChunkEmitter(const ColumnWriteOptions& o, formats::OutputSink* sink, MemoryPool* pool)
      : o_(o), sink_(sink), pool_(pool) {}

  /// Writes a page (header + compressed body); returns its header's offset.
  Result<int64_t> Emit(PageHeader h, const std::string& body) {
    if (body.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      return Status::Invalid("Parquet writer: a page of " + std::to_string(body.size()) + " bytes (over 2 GiB)");
    }
    QUIVER_ASSIGN_OR_RETURN(auto compressed, CompressPage(o_.codec, o_.zstd_level, AsBytes(body), &scratch_, pool_));
    h.uncompressed_page_size = static_cast<int32_t>(body.size());
    h.compressed_page_size = static_cast<int32_t>(compressed.size());
    const std::string header = EncodePageHeader(h);
    const int64_t at = sink_->position();
    QUIVER_RETURN_NOT_OK(sink_->Write(AsBytes(header)));
    QUIVER_RETURN_NOT_OK(sink_->Write(compressed));
    uncompressed_ += static_cast<int64_t>(header.size() + body.size());
    last_page_bytes_ = static_cast<int64_t>(header.size() + compressed.size());
    compressed_ += last_page_bytes_;
    return at;
  }
  /// Bytes of the last page written, header included.
  int64_t last_page_bytes() const { return last_page_bytes_; }
  int64_t uncompressed() const { return uncompressed_; }
  int64_t compressed() const { return compressed_; }

 private:
  const ColumnWriteOptions& o_;
  formats::OutputSink* sink_;
  MemoryPool* pool_;
  std::shared_ptr<Buffer> scratch_;
  int64_t uncompressed_ = 0, compressed_ = 0, last_page_bytes_ = 0;
};

}  // namespace

Result<ColumnChunk> WriteColumnChunk(const ColumnValues& cv, const LeafMapping& m, const ColumnWriteOptions& o,
                                     formats::OutputSink* sink, MemoryPool* pool, ChunkPageIndex* page_index) {
  // The page index: every data page's location, and its statistics while
  // every page has a min / max (else no ColumnIndex, as parquet-mr).
  OffsetIndex offsets;
  ColumnIndex stats;
  bool stats_ok = m.order != StatsOrder::kNone;
  stats.null_counts.emplace();
  ColumnChunk chunk;
  ColumnMetaData& md = chunk.meta_data.emplace();
  md.type = static_cast<int32_t>(m.physical);
  md.path_in_schema = {m.element.name};
  md.codec = o.codec;
  md.num_values = cv.num_rows;
  chunk.file_offset = sink->position();

  DictionaryBuild dict;
  bool use_dictionary = false;
  if (o.dictionary && m.physical != PhysicalType::kBoolean && cv.num_values > 0) {
    QUIVER_ASSIGN_OR_RETURN(use_dictionary, BuildDictionary(cv, m, o.dictionary_page_limit_bytes, pool, &dict));
    if (!use_dictionary) dict = DictionaryBuild{};  // the indices go back to the pool
  }
  ChunkEmitter emit(o, sink, pool);
  HeapCharge page_charge(pool);  // the page being built (body, levels)
  std::string body;
  int bit_width = 0;
  if (use_dictionary) {
    QUIVER_RETURN_NOT_OK(page_charge.Set(dict.plain_bytes));
    body.reserve(static_cast<size_t>(dict.plain_bytes));
    for (std::string_view v : dict.entries) AppendPlain(v, m, &body);
    PageHeader h;
    h.type = static_cast<int32_t>(PageType::kDictionaryPage);
    h.num_values = static_cast<int32_t>(dict.entries.size());
    h.encoding = kPlain;
    QUIVER_ASSIGN_OR_RETURN(int64_t at, emit.Emit(h, body));
    md.dictionary_page_offset = at;
    bit_width = BitWidthFor(dict.entries.empty() ? 0 : dict.entries.size() - 1);
    md.encodings = {kPlain, kRle, kRleDictionary};
  } else {
    md.encodings = {kPlain, kRle};
  }

  const uint8_t* levels = cv.def_levels ? cv.def_levels->data() : nullptr;
  const auto* indices = use_dictionary ? reinterpret_cast<const uint32_t*>(dict.indices->data()) : nullptr;
  std::vector<uint32_t> level_values;
  std::string level_bytes;
  std::vector<uint8_t> bools;
  int64_t row = 0, value = 0;
  bool first_page = true;
  // One page at least, also for an empty chunk (readers expect a data page).
  while (row < cv.num_rows || first_page) {
    // The page's rows: until its values reach the byte target or the row cap.
    const int64_t row0 = row, value0 = value;
    int64_t bytes = 0;
    while (row < cv.num_rows && row - row0 < o.data_page_max_rows && bytes < o.data_page_bytes) {
      if (levels == nullptr || levels[row] != 0) {
        bytes += use_dictionary                         ? (bit_width + 7) / 8 + 1
                 : m.physical == PhysicalType::kBoolean ? 1
                                                        : PlainSize(ValueBytes(cv, m, value), m);
        ++value;
      }
      ++row;
    }
    const int64_t page_rows = row - row0, page_values = value - value0;
    // Charged before it is built: values (dictionary indices at most 5 bytes
    // each, booleans 1 bit), levels (at most 5 bytes a row plus the uint32
    // copy), and what the buffers already hold.
    const int64_t levels_bound = levels != nullptr ? page_rows * 9 + 16 : 0;
    const int64_t body_bound = (use_dictionary ? page_values * 5 + 16 : bytes + 16) + levels_bound;
    QUIVER_RETURN_NOT_OK(page_charge.Set(std::max<int64_t>(body_bound, static_cast<int64_t>(body.capacity())) +
                                         static_cast<int64_t>(level_bytes.capacity() + level_values.capacity() * 4)));
    body.clear();
    if (levels != nullptr) {
      level_values.assign(levels + row0, levels + row);
      level_bytes.clear();
      AppendRleHybrid(level_values, 1, &level_bytes);
      AppendU32(static_cast<uint32_t>(level_bytes.size()), &body);
      body += level_bytes;
    }
    if (use_dictionary) {
      body.push_back(static_cast<char>(bit_width));
      AppendRleHybrid(std::span<const uint32_t>(indices + value0, static_cast<size_t>(page_values)), bit_width, &body);
    } else if (m.physical == PhysicalType::kBoolean) {
      AppendPackedBits(std::span<const uint8_t>(cv.fixed_data() + value0, static_cast<size_t>(page_values)), &body);
    } else {
      for (int64_t i = value0; i < value; ++i) AppendPlain(ValueBytes(cv, m, i), m, &body);
    }
    PageHeader h;
    h.type = static_cast<int32_t>(PageType::kDataPage);
    h.num_values = static_cast<int32_t>(page_rows);
    h.encoding = use_dictionary ? kRleDictionary : kPlain;
    h.definition_level_encoding = kRle;
    h.repetition_level_encoding = kRle;
    QUIVER_ASSIGN_OR_RETURN(int64_t at, emit.Emit(h, body));
    if (first_page) md.data_page_offset = at;
    first_page = false;
    if (page_index != nullptr && page_rows > 0) {
      offsets.page_locations.push_back(
          PageLocation{at, static_cast<int32_t>(std::min<int64_t>(emit.last_page_bytes(), INT32_MAX)), row0});
      if (stats_ok) {
        Statistics ps = ComputeStatistics(cv, m, value0, page_values, page_rows);
        const bool null_page = page_values == 0;
        if (!null_page && (!ps.min_value || !ps.max_value)) {
          stats_ok = false;
        } else {
          stats.null_pages.push_back(null_page ? 1 : 0);
          stats.min_values.push_back(null_page ? std::string() : std::move(*ps.min_value));
          stats.max_values.push_back(null_page ? std::string() : std::move(*ps.max_value));
          stats.null_counts->push_back(page_rows - page_values);
        }
      }
    }
  }
  if (page_index != nullptr && !offsets.page_locations.empty()) {
    page_index->offset_index = std::move(offsets);
    if (stats_ok) page_index->column_index = std::move(stats);
  }
  md.total_uncompressed_size = emit.uncompressed();
  md.total_compressed_size = emit.compressed();
  md.statistics = ComputeStatistics(cv, m);
  return chunk;
}

}  // namespace quiver::parquet
