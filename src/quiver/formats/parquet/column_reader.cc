#include "quiver/formats/parquet/column_reader.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/formats/parquet/encodings.h"
#include "quiver/formats/parquet/page_reader.h"
#include "quiver/formats/parquet/rle_hybrid.h"

namespace quiver::parquet {
namespace {

using bit_util::LoadLE;
using bit_util::StoreLE;

constexpr int64_t kBatch = 1024;  // levels and values decoded per step

/// A pool buffer grown by doubling; Finish() trims it to its size.
class GrowBuffer {
 public:
  explicit GrowBuffer(MemoryPool* pool) : pool_(pool) {}
  Status Reserve(int64_t bytes) {
    if (buf_ && size_ + bytes <= buf_->size()) return Status::OK();
    int64_t want = size_ + bytes;
    if (buf_) want = std::max(want, buf_->size() * 2);
    want = std::max<int64_t>(want, 64);
    if (!buf_) {
      QUIVER_ASSIGN_OR_RETURN(buf_, Buffer::Allocate(pool_, want));
      return Status::OK();
    }
    return buf_->Resize(want, false);
  }
  uint8_t* data() { return buf_ ? buf_->mutable_data() : nullptr; }
  int64_t size() const { return size_; }
  void Advance(int64_t bytes) { size_ += bytes; }
  Result<std::shared_ptr<Buffer>> Finish() {
    QUIVER_RETURN_NOT_OK(Reserve(0));
    QUIVER_RETURN_NOT_OK(buf_->Resize(size_, true));
    return buf_;
  }

 private:
  MemoryPool* pool_;
  std::shared_ptr<Buffer> buf_;
  int64_t size_ = 0;
};

/// How a batch of decoded physical values becomes Arrow values while the
/// chunk is decoded (no second pass, no chunk-sized buffer of physical
/// values): `convert` maps `n` dense values of the physical width to `n`
/// values of `out_width` bytes. Null `convert`: the bytes are the Arrow
/// values already (decoded straight into the output buffer).
struct Convert {
  int out_width = 0;
  void (*convert)(const uint8_t* in, int64_t n, uint8_t* out) = nullptr;
};

// Sign-extends n little-endian integers of kIn bytes to kOut bytes each
// (decimal64/128/256 from INT32/INT64).
template <typename In, int kOut>
void WidenSigned(const uint8_t* in, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = LoadLE<In>(in + i * static_cast<int64_t>(sizeof(In)));
    int64_t words[kOut / 8];
    words[0] = v;
    for (int w = 1; w < kOut / 8; ++w) words[w] = v < 0 ? int64_t{-1} : int64_t{0};
    std::memcpy(out + i * kOut, words, kOut);
  }
}

// The low kOut bytes of n 4-byte integers (int8/uint8/int16/uint16 from
// INT32).
template <int kOut>
void Narrow(const uint8_t* in, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * kOut, in + i * 4, kOut);
}

/// The conversion of `type` from physical `ptype` done during decoding, or
/// nullopt when ToArrow converts the whole chunk afterwards (booleans,
/// INT96, intervals, decimals from byte arrays, binary).
std::optional<Convert> ConvertFor(int32_t ptype, int width, const DataType& type) {
  const auto pt = static_cast<PhysicalType>(ptype);
  if (IsInteger(type.id) && FixedBitWidth(type) < 32) {
    if (pt != PhysicalType::kInt32) return std::nullopt;
    return FixedBitWidth(type) == 8 ? Convert{1, &Narrow<1>} : Convert{2, &Narrow<2>};
  }
  const TypeId id = type.id;
  if (id == TypeId::kBool || id == TypeId::kIntervalMonthDayNano || id == TypeId::kBinary || id == TypeId::kUtf8) {
    return std::nullopt;
  }
  if (id == TypeId::kDecimal) {
    if (type.bit_width == 64 && pt == PhysicalType::kInt32) return Convert{8, &WidenSigned<int32_t, 8>};
    if (type.bit_width == 64 && pt == PhysicalType::kInt64) return Convert{8, nullptr};  // the values already
    if (type.bit_width == 128 && pt == PhysicalType::kInt32) return Convert{16, &WidenSigned<int32_t, 16>};
    if (type.bit_width == 128 && pt == PhysicalType::kInt64) return Convert{16, &WidenSigned<int64_t, 16>};
    if (type.bit_width == 256 && pt == PhysicalType::kInt32) return Convert{32, &WidenSigned<int32_t, 32>};
    if (type.bit_width == 256 && pt == PhysicalType::kInt64) return Convert{32, &WidenSigned<int64_t, 32>};
    return std::nullopt;
  }
  if (id == TypeId::kTimestamp && pt == PhysicalType::kInt96) return std::nullopt;
  return width > 0 ? std::optional<Convert>(Convert{width, nullptr}) : std::nullopt;
}

/// The decoded physical values of one chunk: one slot per level entry
/// (flat columns: per row), null where the definition level is below the
/// maximum.
struct Physical {
  int64_t length = 0, null_count = 0;
  std::shared_ptr<Buffer> rep_levels, def_levels;  // nested: one byte per entry
  std::shared_ptr<Buffer> validity;                // null when no nulls
  std::shared_ptr<Buffer> values;                  // fixed width: length * width bytes
  std::shared_ptr<Buffer> offsets;                 // BYTE_ARRAY: int32 offsets
  std::shared_ptr<Buffer> data;                    // BYTE_ARRAY: bytes
};

/// Big-endian two's complement bytes (1..32) to a little-endian integer of
/// `out_bytes` (16 or 32), sign-extended.
Status BigEndianToDecimal(const uint8_t* in, size_t len, uint8_t* out, int out_bytes) {
  if (len > static_cast<size_t>(out_bytes)) {
    return Status::Invalid("decimal value of " + std::to_string(len) + " bytes wider than " +
                           std::to_string(out_bytes));
  }
  const uint8_t fill = (len > 0 && (in[0] & 0x80)) ? 0xff : 0x00;
  std::memset(out, fill, static_cast<size_t>(out_bytes));
  for (size_t i = 0; i < len; ++i) out[i] = in[len - 1 - i];
  return Status::OK();
}

Result<ArrayDataPtr> ToArrow(Physical p, int32_t ptype, int width, const DataTypePtr& type, MemoryPool* pool) {
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = p.length;
  out->null_count = p.null_count;
  const int64_t n = p.length;
  auto fixed = [&](std::shared_ptr<Buffer> values) {
    out->buffers = {p.validity, std::move(values)};
    return ArrayDataPtr(out);
  };
  const uint8_t* src = p.values ? p.values->data() : nullptr;
  const auto pt = static_cast<PhysicalType>(ptype);
  if (IsInteger(type->id) && FixedBitWidth(*type) < 32) {
    // int8/uint8/int16/uint16 from INT32: each value's low bytes.
    const int w = FixedBitWidth(*type) / 8;
    QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, n * w));
    for (int64_t i = 0; i < n; ++i) std::memcpy(buf->mutable_data() + i * w, src + i * 4, static_cast<size_t>(w));
    return fixed(buf);
  }
  switch (type->id) {
    case TypeId::kBool: {
      QUIVER_ASSIGN_OR_RETURN(auto bits, Buffer::AllocateZeroed(pool, bit_util::BytesForBits(n)));
      for (int64_t i = 0; i < n; ++i) {
        if (src[i]) bit_util::SetBit(bits->mutable_data(), i);
      }
      return fixed(bits);
    }
    case TypeId::kDecimal: {
      const int w = type->bit_width / 8;
      QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, n * w));
      uint8_t* dst = buf->mutable_data();
      if (w == 16 && (pt == PhysicalType::kInt32 || pt == PhysicalType::kInt64)) {
        // The common case, without a call per value: sign-extended words.
        for (int64_t i = 0; i < n; ++i) {
          const int64_t v =
              pt == PhysicalType::kInt32 ? int64_t{LoadLE<int32_t>(src + i * 4)} : LoadLE<int64_t>(src + i * 8);
          const int64_t words[2] = {v, v < 0 ? int64_t{-1} : int64_t{0}};
          std::memcpy(dst + i * 16, words, 16);
        }
        return fixed(buf);
      }
      for (int64_t i = 0; i < n; ++i) {
        uint8_t* o = dst + i * w;
        if (pt == PhysicalType::kInt32 || pt == PhysicalType::kInt64) {
          const int64_t v =
              pt == PhysicalType::kInt32 ? int64_t{LoadLE<int32_t>(src + i * 4)} : LoadLE<int64_t>(src + i * 8);
          std::memset(o, v < 0 ? 0xff : 0, static_cast<size_t>(w));
          std::memcpy(o, &v, 8);
        } else if (pt == PhysicalType::kFixedLenByteArray) {
          QUIVER_RETURN_NOT_OK(BigEndianToDecimal(src + i * width, static_cast<size_t>(width), o, w));
        } else {
          const int32_t* offs = reinterpret_cast<const int32_t*>(p.offsets->data());
          QUIVER_RETURN_NOT_OK(
              BigEndianToDecimal(p.data->data() + offs[i], static_cast<size_t>(offs[i + 1] - offs[i]), o, w));
        }
      }
      return fixed(buf);
    }
    case TypeId::kTimestamp:
      if (pt == PhysicalType::kInt96) {
        QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, n * 8));
        for (int64_t i = 0; i < n; ++i) {
          const uint64_t nanos = LoadLE<uint64_t>(src + i * 12);
          const int64_t julian = LoadLE<int32_t>(src + i * 12 + 8);
          // Julian day 2440588 is 1970-01-01; arithmetic wraps like the writers'.
          const uint64_t v = static_cast<uint64_t>(julian - 2440588) * 86400000000000ull + nanos;
          StoreLE<int64_t>(buf->mutable_data() + i * 8, static_cast<int64_t>(v));
        }
        return fixed(buf);
      }
      return fixed(p.values);
    case TypeId::kIntervalMonthDayNano: {
      QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, n * 16));
      for (int64_t i = 0; i < n; ++i) {
        uint8_t* o = buf->mutable_data() + i * 16;
        StoreLE<int32_t>(o, static_cast<int32_t>(LoadLE<uint32_t>(src + i * 12)));
        StoreLE<int32_t>(o + 4, static_cast<int32_t>(LoadLE<uint32_t>(src + i * 12 + 4)));
        StoreLE<int64_t>(o + 8, static_cast<int64_t>(LoadLE<uint32_t>(src + i * 12 + 8)) * 1000000);
      }
      return fixed(buf);
    }
    case TypeId::kBinary:
    case TypeId::kUtf8: out->buffers = {p.validity, p.offsets, p.data}; return ArrayDataPtr(out);
    default:
      // Same bytes: int32/uint32/date32/time32 from INT32, int64/uint64/
      // time64 from INT64, float, double, float16 and fixed_size_binary
      // from FIXED_LEN_BYTE_ARRAY.
      return fixed(p.values);
  }
}

}  // namespace

/// The decoding state of one chunk between slices: the page being read
/// (its body, level and value decoders, values left) and the dictionary.
/// `nested` (ReadLeafColumnChunk): every entry's repetition and definition
/// levels are kept (Physical::rep_levels / def_levels) and rows are the
/// entries of repetition level 0; otherwise one entry is one row.
struct ColumnChunkReader::State {
  State(const SchemaNode& leaf, std::vector<std::shared_ptr<Buffer>> chunk, int32_t codec, int64_t rows, DataTypePtr t,
        MemoryPool* p, bool is_nested)
      : ptype(*leaf.element->type),
        width(PhysicalWidth(ptype, leaf.element->type_length)),
        max_def(leaf.max_def),
        max_rep(leaf.max_rep),
        nested(is_nested),
        type(std::move(t)),
        pool(p),
        num_rows(rows),
        pages(std::move(chunk), codec, p) {}

  // Checks the chunk against its leaf and makes the state (conv set).
  static Result<std::unique_ptr<State>> Make(const SchemaNode& leaf, const ColumnMetaData& meta,
                                             std::vector<std::shared_ptr<Buffer>> chunk, int64_t num_rows,
                                             DataTypePtr type, MemoryPool* pool, bool nested);
  // Loads the next data page (a dictionary page on the way is decoded);
  // sets pages_done at the end of the chunk.
  Status LoadPage();
  // Decodes the next `want` rows' physical values (see Convert); nested:
  // every entry left (`want` is ignored), the rows checked to number
  // num_rows.
  Result<Physical> Decode(int64_t want);
  // Decode's path without a copy: `want` rows of a flat column, all in the
  // current page, none NULL, PLAIN values of the Arrow type's bytes
  // (no conversion) aligned in the page: a slice of the page's body.
  // nullopt (nothing consumed) when the rows do not qualify.
  Result<std::optional<Physical>> DecodeInPlace(int64_t want);
  // The Arrow array of a decoded slice.
  Result<ArrayDataPtr> ToArray(Physical p);

  const int32_t ptype;
  const int width;
  const int max_def;
  const int max_rep;
  const bool nested;
  DataTypePtr type;
  std::optional<Convert> conv;
  MemoryPool* pool;
  const int64_t num_rows;
  int64_t rows_read = 0;   // rows returned by Decode
  int64_t rows_paged = 0;  // values of the data pages loaded
  PageReader pages;
  bool pages_done = false;
  std::optional<Dictionary> dict;
  // The dictionary's entries converted to the Arrow type once (`conv`
  // with a conversion): dictionary-encoded pages then gather Arrow values
  // straight into the output, no conversion per value.
  std::optional<Dictionary> converted_dict;
  // The data page being read; `direct`: its values decode as Arrow values
  // (`value_width` bytes each) into the output, no scratch conversion.
  bool direct = true;
  int value_width = 0;
  std::shared_ptr<Buffer> body;
  std::string where;
  int32_t encoding = 0;
  int64_t page_left = 0;
  std::optional<LevelDecoder> defs, reps;  // reps: nested only
  std::unique_ptr<ValueDecoder> decoder;
  // Per batch: levels, the converted batch's physical values, byte arrays.
  std::vector<uint32_t> levels = std::vector<uint32_t>(kBatch);
  std::vector<uint32_t> rep_levels;
  std::vector<uint8_t> scratch;
  std::vector<std::string_view> views = std::vector<std::string_view>(kBatch);
};

Status ColumnChunkReader::State::LoadPage() {
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(auto page, pages.Next());
    if (!page) {
      pages_done = true;
      decoder.reset();
      defs.reset();
      reps.reset();
      body.reset();
      return Status::OK();
    }
    const PageHeader& h = page->header;
    where = "page " + std::to_string(pages.page_index());
    std::span<const uint8_t> bytes = page->body->span();
    if (h.type == static_cast<int32_t>(PageType::kDictionaryPage)) {
      if (dict) return Status::Invalid(where + ": a second dictionary page");
      if (h.encoding != static_cast<int32_t>(Encoding::kPlain) &&
          h.encoding != static_cast<int32_t>(Encoding::kPlainDictionary)) {
        return Status::NotImplemented(where + ": dictionary page encoding " + EncodingName(h.encoding));
      }
      auto d = DecodeDictionaryPage(ptype, width, bytes, h.num_values, page->body, pool);
      if (!d.ok()) return d.status().WithContext(where);
      dict = std::move(*d);
      continue;
    }
    const int64_t n = h.num_values;
    if (n < 0 || (!nested && n > num_rows - rows_paged)) {
      return Status::Invalid(where + ": " + std::to_string(n) + " values past the row group's " +
                             std::to_string(num_rows) + " rows (" + std::to_string(rows_paged) + " read before)");
    }
    std::span<const uint8_t> rep_bytes, def_bytes, value_bytes;
    int32_t rep_encoding = static_cast<int32_t>(Encoding::kRle);
    int32_t def_encoding = static_cast<int32_t>(Encoding::kRle);
    if (h.type == static_cast<int32_t>(PageType::kDataPageV2)) {
      // The page reader checked that both fit in the body.
      const size_t rep_len = static_cast<size_t>(h.repetition_levels_byte_length);
      const size_t def_len = static_cast<size_t>(h.definition_levels_byte_length);
      rep_bytes = bytes.subspan(0, rep_len);
      def_bytes = bytes.subspan(rep_len, def_len);
      value_bytes = bytes.subspan(rep_len + def_len);
    } else {
      // v1: repetition levels, then definition levels, each RLE with a
      // 4-byte length in front or BIT_PACKED (n levels), then the values.
      rep_encoding = h.repetition_level_encoding;
      def_encoding = h.definition_level_encoding;
      size_t pos = 0;
      auto take = [&](int max_level, int32_t level_encoding, const char* what,
                      std::span<const uint8_t>* out) -> Status {
        if (max_level == 0) return Status::OK();
        const std::span<const uint8_t> rest = bytes.subspan(pos);
        if (level_encoding == static_cast<int32_t>(Encoding::kRle)) {
          if (rest.size() < 4) return Status::Invalid(where + ": no " + what + " levels length");
          const uint32_t len = LoadLE<uint32_t>(rest.data());
          if (len > rest.size() - 4) {
            return Status::Invalid(where + ": " + what + " levels of " + std::to_string(len) + " bytes with " +
                                   std::to_string(rest.size() - 4) + " left in the page");
          }
          *out = rest.subspan(4, len);
          pos += 4 + len;
        } else if (level_encoding == static_cast<int32_t>(Encoding::kBitPacked)) {
          const uint64_t len = (static_cast<uint64_t>(n) * BitWidthFor(max_level) + 7) / 8;
          if (len > rest.size()) return Status::Invalid(where + ": BIT_PACKED " + what + " levels past the page");
          *out = rest.subspan(0, len);
          pos += len;
        } else {
          return Status::NotImplemented(where + ": " + what + " level encoding " + EncodingName(level_encoding));
        }
        return Status::OK();
      };
      // A flat column has no repetition levels (max_rep 0).
      QUIVER_RETURN_NOT_OK(take(max_rep, rep_encoding, "repetition", &rep_bytes));
      QUIVER_RETURN_NOT_OK(take(max_def, def_encoding, "definition", &def_bytes));
      value_bytes = bytes.subspan(pos);
    }
    defs.reset();
    reps.reset();
    if (max_def > 0) {
      auto d = LevelDecoder::Make(def_encoding, max_def, def_bytes, n);
      if (!d.ok()) return d.status().WithContext(where);
      defs.emplace(std::move(*d));
    }
    if (nested && max_rep > 0) {
      auto r = LevelDecoder::Make(rep_encoding, max_rep, rep_bytes, n);
      if (!r.ok()) return r.status().WithContext(where);
      reps.emplace(std::move(*r));
    }
    const bool dict_encoded = h.encoding == static_cast<int32_t>(Encoding::kPlainDictionary) ||
                              h.encoding == static_cast<int32_t>(Encoding::kRleDictionary);
    const Dictionary* use_dict = dict_encoded && dict ? &*dict : nullptr;
    const bool converting = conv && conv->convert != nullptr;
    direct = !converting;
    value_width = width;
    if (use_dict != nullptr && converting) {
      if (!converted_dict) {
        converted_dict.emplace();
        converted_dict->size = dict->size;
        auto entries = Buffer::Allocate(pool, std::max<int64_t>(1, dict->size * conv->out_width));
        if (!entries.ok()) return entries.status().WithContext(where);
        converted_dict->entries = std::move(*entries);
        conv->convert(dict->fixed(), dict->size, converted_dict->entries->mutable_data());
      }
      use_dict = &*converted_dict;
      direct = true;
      value_width = conv->out_width;
    }
    auto dec = MakeValueDecoder(h.encoding, ptype, value_width, value_bytes, n, use_dict);
    if (!dec.ok()) return dec.status().WithContext(where);
    decoder = std::move(*dec);
    body = std::move(page->body);
    encoding = h.encoding;
    page_left = n;
    rows_paged += n;
    return Status::OK();
  }
}

Result<std::optional<Physical>> ColumnChunkReader::State::DecodeInPlace(int64_t want) {
  if (nested || width <= 0 || !conv || conv->convert != nullptr || want <= 0) return std::optional<Physical>();
  while (page_left == 0 && !pages_done) QUIVER_RETURN_NOT_OK(LoadPage());
  if (page_left < want || !decoder || !direct || encoding != static_cast<int32_t>(Encoding::kPlain)) {
    return std::optional<Physical>();
  }
  // Levels first: a run of `want` present values (or no levels at all).
  if (defs) {
    auto all = defs->SkipRepeated(want, static_cast<uint32_t>(max_def));
    if (!all.ok()) return all.status().WithContext(where + ": definition levels");
    if (!*all) return std::optional<Physical>();
  }
  // Arrow buffers hold values aligned to their width (at most 8 bytes).
  const size_t alignment = (width & (width - 1)) == 0 ? static_cast<size_t>(std::min(width, 8)) : 1;
  const uint8_t* values = decoder->TakeInPlace(want, alignment);
  Physical p;
  p.length = want;
  if (values != nullptr) {
    p.values = Buffer::Slice(body, values - body->data(), want * width);
  } else {
    // Levels consumed: the values copied as Decode would.
    QUIVER_ASSIGN_OR_RETURN(p.values, Buffer::Allocate(pool, want * width));
    auto st = decoder->DecodeFixed(want, p.values->mutable_data());
    if (!st.ok()) return st.WithContext(where + ": values (" + EncodingName(encoding) + ")");
  }
  page_left -= want;
  rows_read += want;
  while (rows_read == num_rows && !pages_done) QUIVER_RETURN_NOT_OK(LoadPage());
  return std::optional<Physical>(std::move(p));
}

Result<Physical> ColumnChunkReader::State::Decode(int64_t want) {
  QUIVER_ASSIGN_OR_RETURN(std::optional<Physical> in_place, DecodeInPlace(want));
  if (in_place) return std::move(*in_place);
  const bool binary = width == 0;
  GrowBuffer values(pool), offsets(pool), data(pool), validity(pool), rep_out(pool), def_out(pool);
  // got: entries decoded (flat: rows); rows: of them those that start a
  // row (nested).
  int64_t got = 0, nulls = 0, rows = 0;
  if (nested) {
    want = INT64_MAX;
    if (rep_levels.empty()) rep_levels.resize(kBatch);
  }
  // Output bytes per value, and the scratch a converted batch is decoded
  // into first (a few KiB, reused).
  const int out_width = conv ? conv->out_width : width;
  const bool converting = conv && conv->convert != nullptr;
  if (converting && scratch.empty()) scratch.resize(static_cast<size_t>(kBatch * width));
  const int64_t expect = nested ? num_rows : want;
  if (out_width > 0 && expect > 0) {
    // The values of the rows asked for, up to 16 MiB at first (more only
    // as decoded pages need it): no regrowth for common slices.
    constexpr int64_t kFirstReserveBytes = int64_t{16} << 20;
    QUIVER_RETURN_NOT_OK(
        values.Reserve(expect <= kFirstReserveBytes / out_width ? expect * out_width : kFirstReserveBytes));
  }
  // The validity bitmap is made only once a null shows up (bits of the
  // rows before set then): a column without nulls costs no per-row work.
  bool have_validity = false;
  auto grow_validity = [&](int64_t rows_covered) -> Status {
    const int64_t need = (rows_covered + 7) / 8;
    if (need <= validity.size()) return Status::OK();
    QUIVER_RETURN_NOT_OK(validity.Reserve(need - validity.size()));
    std::memset(validity.data() + validity.size(), 0, static_cast<size_t>(need - validity.size()));
    validity.Advance(need - validity.size());
    return Status::OK();
  };
  auto set_valid = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to && (i & 7) != 0; ++i) bit_util::SetBit(validity.data(), i);
    int64_t i = (from + 7) & ~int64_t{7};
    if (i < to) {
      const int64_t whole = (to - i) / 8;
      std::memset(validity.data() + i / 8, 0xff, static_cast<size_t>(whole));
      for (i += whole * 8; i < to; ++i) bit_util::SetBit(validity.data(), i);
    }
  };
  if (binary) {
    QUIVER_RETURN_NOT_OK(offsets.Reserve(4));
    StoreLE<int32_t>(offsets.data(), 0);
    offsets.Advance(4);
  }
  while (got < want) {
    if (page_left == 0) {
      if (pages_done) break;
      QUIVER_RETURN_NOT_OK(LoadPage());
      continue;
    }
    const int64_t k = std::min({kBatch, page_left, want - got});
    int64_t present = k;
    bool all_present = true;
    if (nested) {
      // Every entry's levels kept (one byte each: levels are at most the
      // schema's depth bound, 64).
      if (reps) {
        auto st = reps->Get(k, rep_levels.data());
        if (!st.ok()) return st.WithContext(where + ": repetition levels");
      } else {
        std::fill(rep_levels.begin(), rep_levels.begin() + k, 0u);
      }
      if (defs) {
        auto st = defs->Get(k, levels.data());
        if (!st.ok()) return st.WithContext(where + ": definition levels");
      } else {
        std::fill(levels.begin(), levels.begin() + k, static_cast<uint32_t>(max_def));
      }
      if (got == 0 && rep_levels[0] != 0) {
        return Status::Invalid(where + ": the column chunk starts with repetition level " +
                               std::to_string(rep_levels[0]) + ", not 0 (a new row)");
      }
      QUIVER_RETURN_NOT_OK(rep_out.Reserve(k));
      QUIVER_RETURN_NOT_OK(def_out.Reserve(k));
      uint8_t* ro = rep_out.data() + rep_out.size();
      uint8_t* dout = def_out.data() + def_out.size();
      present = 0;
      for (int64_t i = 0; i < k; ++i) {
        ro[i] = static_cast<uint8_t>(rep_levels[i]);
        dout[i] = static_cast<uint8_t>(levels[i]);
        rows += rep_levels[i] == 0;
        present += levels[i] == static_cast<uint32_t>(max_def);
      }
      rep_out.Advance(k);
      def_out.Advance(k);
      all_present = present == k;
    }
    if (defs) {
      auto all = nested ? Result<bool>(true) : defs->SkipRepeated(k, static_cast<uint32_t>(max_def));
      if (!all.ok()) return all.status().WithContext(where + ": definition levels");
      if (!nested && !*all) {
        auto st = defs->Get(k, levels.data());
        if (!st.ok()) return st.WithContext(where + ": definition levels");
        present = 0;
        for (int64_t i = 0; i < k; ++i) present += levels[i] == static_cast<uint32_t>(max_def);
        all_present = present == k;
      }
      // Validity bits for rows [got, got + k) of the slice.
      const int64_t first = got;
      if (!all_present && !have_validity) {
        QUIVER_RETURN_NOT_OK(grow_validity(first + k));
        set_valid(0, first);
        have_validity = true;
      }
      if (have_validity) {
        QUIVER_RETURN_NOT_OK(grow_validity(first + k));
        if (all_present) {
          set_valid(first, first + k);
        } else {
          for (int64_t i = 0; i < k; ++i) {
            if (levels[i] == static_cast<uint32_t>(max_def)) bit_util::SetBit(validity.data(), first + i);
          }
        }
      }
      nulls += k - present;
    }
    Status st;
    if (!binary) {
      QUIVER_RETURN_NOT_OK(values.Reserve(k * out_width));
      uint8_t* out = direct ? values.data() + values.size() : scratch.data();
      const int64_t w = value_width;
      st = decoder->DecodeFixed(present, out);
      if (st.ok() && present < k) {
        // Spread the dense values to their slots, last first; nulls zeroed.
        int64_t j = present - 1;
        for (int64_t i = k - 1; i >= 0; --i) {
          if (levels[i] == static_cast<uint32_t>(max_def)) {
            if (j != i) std::memmove(out + i * w, out + j * w, static_cast<size_t>(w));
            --j;
          } else {
            std::memset(out + i * w, 0, static_cast<size_t>(w));
          }
        }
      }
      if (st.ok() && !direct) conv->convert(scratch.data(), k, values.data() + values.size());
      values.Advance(k * out_width);
    } else {
      st = decoder->DecodeBinary(present, views.data());
      if (st.ok()) {
        int64_t bytes = 0;
        for (int64_t i = 0; i < present; ++i) bytes += static_cast<int64_t>(views[i].size());
        if (data.size() + bytes > INT32_MAX) {
          return Status::NotImplemented(where + ": over 2 GiB of BYTE_ARRAY values in one column chunk");
        }
        QUIVER_RETURN_NOT_OK(data.Reserve(bytes));
        QUIVER_RETURN_NOT_OK(offsets.Reserve(k * 4));
        int64_t j = 0;
        for (int64_t i = 0; i < k; ++i) {
          if (all_present || levels[i] == static_cast<uint32_t>(max_def)) {
            const auto& v = views[j++];
            if (!v.empty()) std::memcpy(data.data() + data.size(), v.data(), v.size());
            data.Advance(static_cast<int64_t>(v.size()));
          }
          StoreLE<int32_t>(offsets.data() + offsets.size(), static_cast<int32_t>(data.size()));
          offsets.Advance(4);
        }
      }
    }
    if (!st.ok()) return st.WithContext(where + ": values (" + EncodingName(encoding) + ")");
    got += k;
    page_left -= k;
  }
  if (nested) {
    if (rows != num_rows) {
      return Status::Invalid("the pages hold " + std::to_string(rows) + " rows, the row group has " +
                             std::to_string(num_rows) + " rows");
    }
    rows_read = num_rows;
  } else {
    if (got < want) {
      return Status::Invalid("the pages hold " + std::to_string(rows_paged) + " values, the row group has " +
                             std::to_string(num_rows) + " rows");
    }
    rows_read += got;
    // After the last row, the pages left must hold no values (a page past
    // the row group's rows is an error, as the count above).
    while (rows_read == num_rows && !pages_done) QUIVER_RETURN_NOT_OK(LoadPage());
  }
  Physical p;
  p.length = got;
  p.null_count = nulls;
  if (nested) {
    QUIVER_ASSIGN_OR_RETURN(p.rep_levels, rep_out.Finish());
    QUIVER_ASSIGN_OR_RETURN(p.def_levels, def_out.Finish());
  }
  if (nulls > 0) {
    QUIVER_ASSIGN_OR_RETURN(p.validity, validity.Finish());
  }
  if (binary) {
    QUIVER_ASSIGN_OR_RETURN(p.offsets, offsets.Finish());
    QUIVER_ASSIGN_OR_RETURN(p.data, data.Finish());
  } else {
    QUIVER_ASSIGN_OR_RETURN(p.values, values.Finish());
  }
  return p;
}

ColumnChunkReader::ColumnChunkReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
ColumnChunkReader::~ColumnChunkReader() = default;

Result<std::unique_ptr<ColumnChunkReader>> ColumnChunkReader::Make(const SchemaNode& leaf, const ColumnMetaData& meta,
                                                                   std::shared_ptr<Buffer> chunk, int64_t num_rows,
                                                                   DataTypePtr type, MemoryPool* pool) {
  std::vector<std::shared_ptr<Buffer>> segments;
  segments.push_back(std::move(chunk));
  return Make(leaf, meta, std::move(segments), num_rows, std::move(type), pool);
}

Result<std::unique_ptr<ColumnChunkReader::State>> ColumnChunkReader::State::Make(
    const SchemaNode& leaf, const ColumnMetaData& meta, std::vector<std::shared_ptr<Buffer>> chunk, int64_t num_rows,
    DataTypePtr type, MemoryPool* pool, bool nested) {
  const int32_t ptype = *leaf.element->type;
  if (meta.type != ptype) {
    return Status::Invalid("column chunk of type " + PhysicalTypeName(meta.type) + ", the schema says " +
                           PhysicalTypeName(ptype));
  }
  // Values of a BYTE_ARRAY chunk go to one buffer with int32 offsets: a
  // chunk whose pages hold over 2 GiB beyond a 4-byte length per value is
  // refused before anything is decompressed (the check per batch in
  // Decode catches the rest, e.g. dictionaries expanded).
  if (PhysicalWidth(ptype, leaf.element->type_length) == 0 && meta.num_values >= 0 &&
      meta.total_uncompressed_size > INT32_MAX &&
      meta.total_uncompressed_size - INT32_MAX > 4 * std::min<int64_t>(meta.num_values, INT32_MAX)) {
    return Status::NotImplemented("a BYTE_ARRAY column chunk of " + std::to_string(meta.total_uncompressed_size) +
                                  " bytes uncompressed for " + std::to_string(meta.num_values) +
                                  " values: over 2 GiB of values in one column chunk");
  }
  auto state = std::make_unique<State>(leaf, std::move(chunk), meta.codec, num_rows, std::move(type), pool, nested);
  state->conv = ConvertFor(ptype, state->width, *state->type);
  return state;
}

Result<ArrayDataPtr> ColumnChunkReader::State::ToArray(Physical p) {
  if (conv) {
    // Decoded into Arrow values already.
    auto out = std::make_shared<ArrayData>();
    out->type = type;
    out->length = p.length;
    out->null_count = p.null_count;
    out->buffers = {std::move(p.validity), std::move(p.values)};
    return ArrayDataPtr(out);
  }
  return ToArrow(std::move(p), ptype, width, type, pool);
}

Result<std::unique_ptr<ColumnChunkReader>> ColumnChunkReader::Make(const SchemaNode& leaf, const ColumnMetaData& meta,
                                                                   std::vector<std::shared_ptr<Buffer>> chunk,
                                                                   int64_t num_rows, DataTypePtr type,
                                                                   MemoryPool* pool) {
  if (leaf.max_rep != 0 || leaf.max_def > 1) {
    return Status::NotImplemented("nested columns (repetition level " + std::to_string(leaf.max_rep) +
                                  ", definition level " + std::to_string(leaf.max_def) + ")");
  }
  QUIVER_ASSIGN_OR_RETURN(auto state,
                          State::Make(leaf, meta, std::move(chunk), num_rows, std::move(type), pool, /*nested=*/false));
  return std::unique_ptr<ColumnChunkReader>(new ColumnChunkReader(std::move(state)));
}

int64_t ColumnChunkReader::rows_left() const { return state_->num_rows - state_->rows_read; }

Status ColumnChunkReader::Skip(int64_t rows) {
  // Decoded and dropped, a bounded slice at a time.
  constexpr int64_t kSkipSliceRows = 64 * 1024;
  while (rows > 0 && rows_left() > 0) {
    const int64_t n = std::min({rows, rows_left(), kSkipSliceRows});
    QUIVER_ASSIGN_OR_RETURN(auto dropped, Read(n));
    rows -= n;
  }
  return Status::OK();
}

Result<ArrayDataPtr> ColumnChunkReader::Read(int64_t rows) {
  State& s = *state_;
  QUIVER_ASSIGN_OR_RETURN(Physical p, s.Decode(std::max<int64_t>(0, std::min(rows, rows_left()))));
  return s.ToArray(std::move(p));
}

Result<ArrayDataPtr> ReadFlatColumnChunk(const SchemaNode& leaf, const ColumnMetaData& meta,
                                         std::shared_ptr<Buffer> chunk, int64_t num_rows, const DataTypePtr& type,
                                         MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto reader, ColumnChunkReader::Make(leaf, meta, std::move(chunk), num_rows, type, pool));
  return reader->Read(num_rows);
}

Result<LeafLevels> ReadLeafColumnChunk(const SchemaNode& leaf, const ColumnMetaData& meta,
                                       std::shared_ptr<Buffer> chunk, int64_t num_rows, const DataTypePtr& type,
                                       MemoryPool* pool) {
  // The slice reader's pages and decoders, every entry in one slice.
  std::vector<std::shared_ptr<Buffer>> segments;
  segments.push_back(std::move(chunk));
  QUIVER_ASSIGN_OR_RETURN(auto state,
                          ColumnChunkReader::State::Make(leaf, meta, std::move(segments), num_rows, type, pool,
                                                         /*nested=*/true));
  QUIVER_ASSIGN_OR_RETURN(Physical p, state->Decode(num_rows));
  LeafLevels out;
  out.count = p.length;
  out.rep = std::move(p.rep_levels);
  out.def = std::move(p.def_levels);
  QUIVER_ASSIGN_OR_RETURN(out.values, state->ToArray(std::move(p)));
  return out;
}

}  // namespace quiver::parquet
