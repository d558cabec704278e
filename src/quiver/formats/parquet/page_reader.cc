#include "quiver/formats/parquet/page_reader.h"

#include <zlib.h>

#include <cstring>
#include <string>

#include "quiver/formats/parquet/decompress.h"
#include "quiver/formats/parquet/thrift_compact.h"
#include "quiver/formats/read_buffer.h"

namespace quiver::parquet {
namespace {

template <typename V, typename Out>
Status Put(Result<V> r, Out* out) {
  if (!r.ok()) return r.status();
  *out = static_cast<Out>(*r);
  return Status::OK();
}

}  // namespace

Result<PageHeader> DecodePageHeader(std::span<const uint8_t> bytes, int64_t* header_bytes) {
  PageHeader h;
  ThriftCompactReader r(bytes);
  using T = ThriftType;
  auto sub = [&](int which) {
    return r.ReadStruct([&](int16_t id, T t) -> Status {
      if (which == 5) {  // DataPageHeader
        switch (id) {
          case 1: return Put(r.ReadI32(t), &h.num_values);
          case 2: return Put(r.ReadI32(t), &h.encoding);
          case 3: return Put(r.ReadI32(t), &h.definition_level_encoding);
          case 4: return Put(r.ReadI32(t), &h.repetition_level_encoding);
          default: return r.Skip(t);
        }
      }
      if (which == 7) {  // DictionaryPageHeader
        if (id == 1) return Put(r.ReadI32(t), &h.num_values);
        if (id == 2) return Put(r.ReadI32(t), &h.encoding);
        return r.Skip(t);
      }
      switch (id) {  // DataPageHeaderV2
        case 1: return Put(r.ReadI32(t), &h.num_values);
        case 2: return Put(r.ReadI32(t), &h.num_nulls);
        case 3: return Put(r.ReadI32(t), &h.num_rows);
        case 4: return Put(r.ReadI32(t), &h.encoding);
        case 5: return Put(r.ReadI32(t), &h.definition_levels_byte_length);
        case 6: return Put(r.ReadI32(t), &h.repetition_levels_byte_length);
        case 7: return Put(r.ReadBool(t), &h.is_compressed);
        default: return r.Skip(t);
      }
    });
  };
  QUIVER_RETURN_NOT_OK_CTX(r.ReadStruct([&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: return Put(r.ReadI32(t), &h.type);
      case 2: return Put(r.ReadI32(t), &h.uncompressed_page_size);
      case 3: return Put(r.ReadI32(t), &h.compressed_page_size);
      case 4: return Put(r.ReadI32(t), &h.crc.emplace());
      case 5:
      case 7:
      case 8:
        if (t != T::kStruct) return r.Skip(t);
        if ((id == 5 && h.type == 0) || (id == 7 && h.type == 2) || (id == 8 && h.type == 3)) h.has_type_header = true;
        return sub(id);
      default: return r.Skip(t);
    }
  }),
                           "page header");
  if (h.uncompressed_page_size < 0 || h.compressed_page_size < 0) {
    return Status::Invalid("page header: negative page size");
  }
  if (h.num_values < 0 || h.num_nulls < 0 || h.num_rows < 0 || h.definition_levels_byte_length < 0 ||
      h.repetition_levels_byte_length < 0) {
    return Status::Invalid("page header: negative count or length");
  }
  *header_bytes = r.position();
  return h;
}

Result<std::optional<Page>> PageReader::Next() {
  while (segment_ < segments_.size()) {
    const std::shared_ptr<Buffer>& chunk = segments_[segment_];
    if (chunk == nullptr || pos_ >= chunk->size()) {
      ++segment_;
      pos_ = 0;
      continue;
    }
    ++page_index_;
    const std::string where = "page " + std::to_string(page_index_) + " (at byte " + std::to_string(pos_) +
                              (segments_.size() > 1 ? " of part " + std::to_string(segment_) : std::string()) +
                              " of the chunk)";
    const auto rest = chunk->span().subspan(static_cast<size_t>(pos_));
    int64_t header_bytes = 0;
    auto hr = DecodePageHeader(rest, &header_bytes);
    if (!hr.ok()) return hr.status().WithContext(where);
    Page page;
    page.header = *hr;
    page.offset_in_chunk = pos_;
    const PageHeader& h = page.header;
    if (h.compressed_page_size > static_cast<int64_t>(rest.size()) - header_bytes) {
      return Status::Invalid(where + ": page of " + std::to_string(h.compressed_page_size) + " bytes with " +
                             std::to_string(rest.size() - header_bytes) + " left in the column chunk");
    }
    const auto stored = rest.subspan(static_cast<size_t>(header_bytes), static_cast<size_t>(h.compressed_page_size));
    pos_ += header_bytes + h.compressed_page_size;
    if (h.type != static_cast<int32_t>(PageType::kDataPage) && h.type != static_cast<int32_t>(PageType::kDataPageV2) &&
        h.type != static_cast<int32_t>(PageType::kDictionaryPage)) {
      continue;  // index pages and unknown page types carry no values
    }
    if (!h.has_type_header) return Status::Invalid(where + ": no header for its page type " + std::to_string(h.type));
    if (h.crc) {
      const uint32_t crc =
          static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), stored.data(), static_cast<uInt>(stored.size())));
      if (crc != static_cast<uint32_t>(*h.crc)) {
        return Status::Invalid(where + ": CRC mismatch (the header says " +
                               std::to_string(static_cast<uint32_t>(*h.crc)) + ", the page's bytes give " +
                               std::to_string(crc) + ")");
      }
    }
    auto body = formats::AllocateReadBuffer(pool_, h.uncompressed_page_size);
    if (!body.ok()) return body.status().WithContext(where);
    page.body = *body;
    std::span<uint8_t> out(page.body->mutable_data(), static_cast<size_t>(h.uncompressed_page_size));
    Status st;
    if (h.type == static_cast<int32_t>(PageType::kDataPageV2)) {
      const int64_t levels = int64_t{h.definition_levels_byte_length} + h.repetition_levels_byte_length;
      if (levels > h.compressed_page_size || levels > h.uncompressed_page_size) {
        return Status::Invalid(where + ": level bytes (" + std::to_string(levels) + ") exceed the page size");
      }
      if (levels > 0) std::memcpy(out.data(), stored.data(), static_cast<size_t>(levels));
      const auto in = stored.subspan(static_cast<size_t>(levels));
      const auto values_out = out.subspan(static_cast<size_t>(levels));
      if (!h.is_compressed || in.empty()) {
        if (in.size() != values_out.size()) {
          st = Status::Invalid("uncompressed v2 page of " + std::to_string(in.size()) +
                               " value bytes, the header says " + std::to_string(values_out.size()));
        } else if (!in.empty()) {
          std::memcpy(values_out.data(), in.data(), in.size());
        }
      } else {
        st = Decompress(codec_, in, values_out);
      }
    } else {
      st = Decompress(codec_, stored, out);
    }
    if (!st.ok()) return st.WithContext(where);
    return std::optional<Page>(std::move(page));
  }
  return std::optional<Page>();
}

}  // namespace quiver::parquet
