#include "quiver/formats/parquet/encodings.h"

#include <cstring>

#include "quiver/base/bit_util.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/rle_hybrid.h"

namespace quiver::parquet {

using bit_util::GetBit;
using bit_util::LoadLE;
using bit_util::StoreLE;

int PhysicalWidth(int32_t physical_type, int32_t type_length) {
  switch (static_cast<PhysicalType>(physical_type)) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kInt96: return 12;
    case PhysicalType::kFixedLenByteArray: return type_length;
    case PhysicalType::kByteArray: return 0;
  }
  return -1;
}

namespace {

Status Short(const char* what, int64_t want, int64_t have) {
  return Status::Invalid(std::string(what) + ": " + std::to_string(want) + " values need more bytes than the " +
                         std::to_string(have) + " left in the page");
}

Status NotBinary(const char* encoding) { return Status::Invalid(std::string(encoding) + ": not a BYTE_ARRAY column"); }

// ---- PLAIN ----------------------------------------------------------------

class PlainDecoder final : public ValueDecoder {
 public:
  PlainDecoder(int32_t type, int width, std::span<const uint8_t> data) : type_(type), width_(width), data_(data) {}

  Status DecodeFixed(int64_t n, uint8_t* out) override {
    if (type_ == static_cast<int32_t>(PhysicalType::kBoolean)) {
      const int64_t need_bits = bit_ + n;
      if ((need_bits + 7) / 8 > static_cast<int64_t>(data_.size())) {
        return Short("PLAIN BOOLEAN", n, static_cast<int64_t>(data_.size()) - bit_ / 8);
      }
      for (int64_t i = 0; i < n; ++i, ++bit_) out[i] = GetBit(data_.data(), bit_) ? 1 : 0;
      return Status::OK();
    }
    if (width_ <= 0) return Status::Invalid("PLAIN: BYTE_ARRAY values read as fixed-width");
    const uint64_t bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(width_);
    if (bytes > data_.size() - pos_) return Short("PLAIN", n, static_cast<int64_t>(data_.size() - pos_));
    if (bytes == 0) return Status::OK();  // `out` may be null (an all-NULL or empty page)
    std::memcpy(out, data_.data() + pos_, bytes);
    pos_ += bytes;
    return Status::OK();
  }

  const uint8_t* TakeInPlace(int64_t n, size_t alignment) override {
    if (type_ == static_cast<int32_t>(PhysicalType::kBoolean) || width_ <= 0 || n <= 0) return nullptr;
    const uint64_t bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(width_);
    const uint8_t* p = data_.data() + pos_;
    if (bytes > data_.size() - pos_ || (reinterpret_cast<uintptr_t>(p) & (alignment - 1)) != 0) return nullptr;
    pos_ += bytes;
    return p;
  }

  Status DecodeBinary(int64_t n, std::string_view* out) override {
    if (type_ != static_cast<int32_t>(PhysicalType::kByteArray)) return NotBinary("PLAIN");
    for (int64_t i = 0; i < n; ++i) {
      if (data_.size() - pos_ < 4) return Short("PLAIN BYTE_ARRAY length", n - i, data_.size() - pos_);
      const uint32_t len = LoadLE<uint32_t>(data_.data() + pos_);
      pos_ += 4;
      if (len > data_.size() - pos_) {
        return Status::Invalid("PLAIN BYTE_ARRAY: value of " + std::to_string(len) + " bytes with " +
                               std::to_string(data_.size() - pos_) + " left in the page");
      }
      out[i] = std::string_view(reinterpret_cast<const char*>(data_.data() + pos_), len);
      pos_ += len;
    }
    return Status::OK();
  }

 private:
  int32_t type_;
  int width_;
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  int64_t bit_ = 0;
};

// ---- RLE booleans ---------------------------------------------------------

class RleBooleanDecoder final : public ValueDecoder {
 public:
  explicit RleBooleanDecoder(std::span<const uint8_t> data) : rle_(data, 1) {}
  Status DecodeFixed(int64_t n, uint8_t* out) override {
    uint32_t tmp[256];
    for (int64_t done = 0; done < n;) {
      const int64_t k = n - done < 256 ? n - done : 256;
      QUIVER_RETURN_NOT_OK_CTX(rle_.Get(k, tmp), "RLE booleans");
      for (int64_t i = 0; i < k; ++i) out[done + i] = static_cast<uint8_t>(tmp[i]);
      done += k;
    }
    return Status::OK();
  }
  Status DecodeBinary(int64_t, std::string_view*) override { return NotBinary("RLE"); }

 private:
  RleBitPackedDecoder rle_;
};

// ---- dictionary indices ---------------------------------------------------

class DictDecoder final : public ValueDecoder {
 public:
  DictDecoder(std::span<const uint8_t> data, int bit_width, int width, const Dictionary* dict)
      : rle_(data, bit_width), width_(width), dict_(dict) {}

  Status DecodeFixed(int64_t n, uint8_t* out) override {
    uint32_t idx[256];
    for (int64_t done = 0; done < n;) {
      const int64_t k = n - done < 256 ? n - done : 256;
      QUIVER_RETURN_NOT_OK(Indices(k, idx));
      // Constant widths copy inline (a call per value otherwise).
      if (width_ == 8) {
        Gather<8>(idx, k, out + done * 8);
      } else if (width_ == 4) {
        Gather<4>(idx, k, out + done * 4);
      } else if (width_ == 16) {  // decimal128 entries converted once (column_reader.cc)
        Gather<16>(idx, k, out + done * 16);
      } else {
        for (int64_t i = 0; i < k; ++i) {
          std::memcpy(out + (done + i) * width_, dict_->fixed() + static_cast<size_t>(idx[i]) * width_,
                      static_cast<size_t>(width_));
        }
      }
      done += k;
    }
    return Status::OK();
  }

  template <int kWidth>
  void Gather(const uint32_t* idx, int64_t k, uint8_t* out) const {
    const uint8_t* values = dict_->fixed();
    for (int64_t i = 0; i < k; ++i) {
      std::memcpy(out + i * kWidth, values + static_cast<size_t>(idx[i]) * kWidth, kWidth);
    }
  }

  Status DecodeBinary(int64_t n, std::string_view* out) override {
    if (!dict_->binary) return NotBinary("dictionary");
    uint32_t idx[256];
    for (int64_t done = 0; done < n;) {
      const int64_t k = n - done < 256 ? n - done : 256;
      QUIVER_RETURN_NOT_OK(Indices(k, idx));
      const std::string_view* views = dict_->views();
      for (int64_t i = 0; i < k; ++i) out[done + i] = views[idx[i]];
      done += k;
    }
    return Status::OK();
  }

 private:
  Status Indices(int64_t k, uint32_t* idx) {
    QUIVER_RETURN_NOT_OK_CTX(rle_.Get(k, idx), "dictionary indices");
    // One branch per batch (the maximum), per index only to name a bad one.
    uint32_t max_index = 0;
    for (int64_t i = 0; i < k; ++i) max_index = idx[i] > max_index ? idx[i] : max_index;
    if (k == 0 || max_index < static_cast<uint64_t>(dict_->size)) return Status::OK();
    for (int64_t i = 0; i < k; ++i) {
      if (idx[i] >= static_cast<uint64_t>(dict_->size)) {
        return Status::Invalid("dictionary index " + std::to_string(idx[i]) + " out of range (the dictionary has " +
                               std::to_string(dict_->size) + " entries)");
      }
    }
    return Status::OK();
  }
  RleBitPackedDecoder rle_;
  int width_;
  const Dictionary* dict_;
};

// ---- DELTA_BINARY_PACKED --------------------------------------------------

/// Decodes the integer stream; also the lengths inside the DELTA_*_BYTE_ARRAY
/// encodings. Arithmetic wraps (modulo 2^64, or 2^32 for INT32 columns).
class DeltaBinaryPackedReader {
 public:
  Status Init(std::span<const uint8_t> data, bool is_int32) {
    data_ = data;
    is_int32_ = is_int32;
    QUIVER_ASSIGN_OR_RETURN(uint64_t block, ReadUleb128(data_, &pos_));
    QUIVER_ASSIGN_OR_RETURN(uint64_t minis, ReadUleb128(data_, &pos_));
    QUIVER_ASSIGN_OR_RETURN(uint64_t total, ReadUleb128(data_, &pos_));
    QUIVER_ASSIGN_OR_RETURN(uint64_t first, ReadUleb128(data_, &pos_));
    if (block == 0 || block % 128 != 0 || block > (1u << 20)) {
      return Status::Invalid("DELTA_BINARY_PACKED: block size " + std::to_string(block) + " not a multiple of 128");
    }
    if (minis == 0 || block % minis != 0 || (block / minis) % 32 != 0) {
      return Status::Invalid("DELTA_BINARY_PACKED: " + std::to_string(minis) + " miniblocks in a block of " +
                             std::to_string(block));
    }
    if (total > (uint64_t{1} << 40)) return Status::Invalid("DELTA_BINARY_PACKED: value count out of range");
    block_size_ = static_cast<int64_t>(block);
    miniblocks_ = static_cast<int64_t>(minis);
    per_mini_ = block_size_ / miniblocks_;
    total_ = static_cast<int64_t>(total);
    last_ = (first >> 1) ^ (~(first & 1) + 1);
    first_pending_ = total_ > 0;
    return Status::OK();
  }

  int64_t total() const { return total_; }
  /// Bytes of the stream read so far (the end once every value is read).
  size_t position() const { return pos_; }

  Status Get(int64_t n, uint64_t* out) {
    if (n > total_ - read_) {
      return Status::Invalid("DELTA_BINARY_PACKED: " + std::to_string(n) + " values asked, " +
                             std::to_string(total_ - read_) + " left in the stream");
    }
    for (int64_t i = 0; i < n; ++i) {
      if (first_pending_) {
        first_pending_ = false;
        out[i] = Wrap(last_);
        ++read_;
        continue;
      }
      if (mini_left_ == 0) QUIVER_RETURN_NOT_OK(NextMiniblock());
      const uint64_t delta = buffer_[per_mini_ - mini_left_];
      --mini_left_;
      last_ = Wrap(last_ + min_delta_ + delta);
      out[i] = last_;
      ++read_;
    }
    return Status::OK();
  }

 private:
  uint64_t Wrap(uint64_t v) const { return is_int32_ ? static_cast<uint64_t>(static_cast<uint32_t>(v)) : v; }

  Status NextMiniblock() {
    if (mini_index_ == miniblocks_ || !in_block_) {
      QUIVER_ASSIGN_OR_RETURN(uint64_t md, ReadUleb128(data_, &pos_));
      min_delta_ = (md >> 1) ^ (~(md & 1) + 1);
      if (static_cast<uint64_t>(miniblocks_) > data_.size() - pos_) {
        return Status::Invalid("DELTA_BINARY_PACKED: miniblock bit widths past the end of the data");
      }
      widths_ = data_.data() + pos_;
      pos_ += static_cast<size_t>(miniblocks_);
      mini_index_ = 0;
      in_block_ = true;
    }
    const int width = widths_[mini_index_++];
    if (width > 64) return Status::Invalid("DELTA_BINARY_PACKED: miniblock bit width " + std::to_string(width));
    const size_t full = static_cast<size_t>(per_mini_ * width / 8);
    const int64_t remaining = total_ - read_;
    const int64_t needed = remaining < per_mini_ ? remaining : per_mini_;
    const size_t need_bytes = static_cast<size_t>((needed * width + 7) / 8);
    if (need_bytes > data_.size() - pos_)
      return Status::Invalid("DELTA_BINARY_PACKED: miniblock past the end of the data");
    buffer_.resize(static_cast<size_t>(per_mini_));
    UnpackBitsLsb(data_.data() + pos_, width, needed, buffer_.data());
    pos_ += full <= data_.size() - pos_ ? full : data_.size() - pos_;
    mini_left_ = per_mini_;
    return Status::OK();
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool is_int32_ = false;
  int64_t block_size_ = 0, miniblocks_ = 0, per_mini_ = 0, total_ = 0, read_ = 0;
  uint64_t last_ = 0, min_delta_ = 0;
  bool first_pending_ = false, in_block_ = false;
  const uint8_t* widths_ = nullptr;
  int64_t mini_index_ = 0, mini_left_ = 0;
  std::vector<uint64_t> buffer_;
};

class DeltaBinaryPackedDecoder final : public ValueDecoder {
 public:
  explicit DeltaBinaryPackedDecoder(bool is_int32) : is_int32_(is_int32) {}
  Status Init(std::span<const uint8_t> data) { return reader_.Init(data, is_int32_); }
  Status DecodeFixed(int64_t n, uint8_t* out) override {
    uint64_t tmp[256];
    for (int64_t done = 0; done < n;) {
      const int64_t k = n - done < 256 ? n - done : 256;
      QUIVER_RETURN_NOT_OK(reader_.Get(k, tmp));
      for (int64_t i = 0; i < k; ++i) {
        if (is_int32_) {
          StoreLE<uint32_t>(out + (done + i) * 4, static_cast<uint32_t>(tmp[i]));
        } else {
          StoreLE<uint64_t>(out + (done + i) * 8, tmp[i]);
        }
      }
      done += k;
    }
    return Status::OK();
  }
  Status DecodeBinary(int64_t, std::string_view*) override { return NotBinary("DELTA_BINARY_PACKED"); }

 private:
  bool is_int32_;
  DeltaBinaryPackedReader reader_;
};

// ---- DELTA_LENGTH_BYTE_ARRAY ----------------------------------------------

/// Reads all lengths up front (their count is in the stream's header),
/// checking their sum against the bytes after them.
Status ReadLengths(std::span<const uint8_t> data, std::vector<uint32_t>* lengths, size_t* data_start,
                   const char* what) {
  DeltaBinaryPackedReader r;
  QUIVER_RETURN_NOT_OK_CTX(r.Init(data, true), what);
  if (r.total() > static_cast<int64_t>(data.size()) * 8 + 1024) {
    return Status::Invalid(std::string(what) + ": " + std::to_string(r.total()) + " lengths in a page of " +
                           std::to_string(data.size()) + " bytes");
  }
  lengths->resize(static_cast<size_t>(r.total()));
  std::vector<uint64_t> tmp(256);
  for (int64_t done = 0; done < r.total();) {
    const int64_t k = r.total() - done < 256 ? r.total() - done : 256;
    QUIVER_RETURN_NOT_OK_CTX(r.Get(k, tmp.data()), what);
    for (int64_t i = 0; i < k; ++i) (*lengths)[static_cast<size_t>(done + i)] = static_cast<uint32_t>(tmp[i]);
    done += k;
  }
  *data_start = r.position();
  return Status::OK();
}

class DeltaLengthDecoder final : public ValueDecoder {
 public:
  Status Init(std::span<const uint8_t> data) {
    data_ = data;
    QUIVER_RETURN_NOT_OK(ReadLengths(data, &lengths_, &pos_, "DELTA_LENGTH_BYTE_ARRAY lengths"));
    uint64_t sum = 0;
    for (uint32_t l : lengths_) {
      if (static_cast<int32_t>(l) < 0) return Status::Invalid("DELTA_LENGTH_BYTE_ARRAY: negative length");
      sum += l;
    }
    if (sum > data_.size() - pos_) {
      return Status::Invalid("DELTA_LENGTH_BYTE_ARRAY: lengths add up to " + std::to_string(sum) + " bytes, " +
                             std::to_string(data_.size() - pos_) + " follow");
    }
    return Status::OK();
  }
  Status DecodeFixed(int64_t, uint8_t*) override {
    return Status::Invalid("DELTA_LENGTH_BYTE_ARRAY: not a BYTE_ARRAY column");
  }
  Status DecodeBinary(int64_t n, std::string_view* out) override {
    if (n > static_cast<int64_t>(lengths_.size() - next_)) {
      return Status::Invalid("DELTA_LENGTH_BYTE_ARRAY: " + std::to_string(n) + " values asked, " +
                             std::to_string(lengths_.size() - next_) + " in the page");
    }
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t len = lengths_[next_++];
      out[i] = std::string_view(reinterpret_cast<const char*>(data_.data() + pos_), len);
      pos_ += len;
    }
    return Status::OK();
  }

 private:
  std::span<const uint8_t> data_;
  std::vector<uint32_t> lengths_;
  size_t next_ = 0;
  size_t pos_ = 0;
};

// ---- DELTA_BYTE_ARRAY -----------------------------------------------------

class DeltaByteArrayDecoder final : public ValueDecoder {
 public:
  explicit DeltaByteArrayDecoder(int width) : width_(width) {}
  Status Init(std::span<const uint8_t> data) {
    size_t suffix_start = 0;
    QUIVER_RETURN_NOT_OK(ReadLengths(data, &prefixes_, &suffix_start, "DELTA_BYTE_ARRAY prefix lengths"));
    QUIVER_RETURN_NOT_OK(suffixes_.Init(data.subspan(suffix_start)));
    return Status::OK();
  }
  Status DecodeFixed(int64_t n, uint8_t* out) override {
    if (width_ <= 0) return Status::Invalid("DELTA_BYTE_ARRAY: not a fixed-width column");
    std::vector<std::string_view> views(static_cast<size_t>(n));
    QUIVER_RETURN_NOT_OK(DecodeBinary(n, views.data()));
    for (int64_t i = 0; i < n; ++i) {
      if (views[i].size() != static_cast<size_t>(width_)) {
        return Status::Invalid("DELTA_BYTE_ARRAY: value of " + std::to_string(views[i].size()) +
                               " bytes in a FIXED_LEN_BYTE_ARRAY(" + std::to_string(width_) + ") column");
      }
      std::memcpy(out + i * width_, views[i].data(), static_cast<size_t>(width_));
    }
    return Status::OK();
  }
  Status DecodeBinary(int64_t n, std::string_view* out) override {
    if (n > static_cast<int64_t>(prefixes_.size() - next_)) {
      return Status::Invalid("DELTA_BYTE_ARRAY: " + std::to_string(n) + " values asked, " +
                             std::to_string(prefixes_.size() - next_) + " in the page");
    }
    std::vector<std::string_view> suffix(static_cast<size_t>(n));
    QUIVER_RETURN_NOT_OK(suffixes_.DecodeBinary(n, suffix.data()));
    // Values are rebuilt into `storage_` (offsets first: it may move).
    storage_.clear();
    std::vector<std::pair<size_t, size_t>> spans(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t prefix = prefixes_[next_++];
      if (prefix > last_.size()) {
        return Status::Invalid("DELTA_BYTE_ARRAY: prefix of " + std::to_string(prefix) +
                               " bytes longer than the previous value (" + std::to_string(last_.size()) + ")");
      }
      last_.resize(prefix);
      last_.append(suffix[i]);
      spans[i] = {storage_.size(), last_.size()};
      storage_.append(last_);
    }
    for (int64_t i = 0; i < n; ++i) out[i] = std::string_view(storage_).substr(spans[i].first, spans[i].second);
    return Status::OK();
  }

 private:
  int width_;
  std::vector<uint32_t> prefixes_;
  size_t next_ = 0;
  DeltaLengthDecoder suffixes_;
  std::string last_, storage_;
};

// ---- BYTE_STREAM_SPLIT ----------------------------------------------------

class ByteStreamSplitDecoder final : public ValueDecoder {
 public:
  ByteStreamSplitDecoder(std::span<const uint8_t> data, int width) : data_(data), width_(width) {}
  Status Init() {
    if (width_ <= 0 || data_.size() % static_cast<size_t>(width_) != 0) {
      return Status::Invalid("BYTE_STREAM_SPLIT: " + std::to_string(data_.size()) +
                             " bytes are not a whole number of " + std::to_string(width_) + "-byte values");
    }
    count_ = static_cast<int64_t>(data_.size()) / width_;
    return Status::OK();
  }
  Status DecodeFixed(int64_t n, uint8_t* out) override {
    if (n > count_ - next_) {
      return Status::Invalid("BYTE_STREAM_SPLIT: " + std::to_string(n) + " values asked, " +
                             std::to_string(count_ - next_) + " in the page");
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int b = 0; b < width_; ++b) out[i * width_ + b] = data_[static_cast<size_t>(b * count_ + next_ + i)];
    }
    next_ += n;
    return Status::OK();
  }
  Status DecodeBinary(int64_t, std::string_view*) override { return NotBinary("BYTE_STREAM_SPLIT"); }

 private:
  std::span<const uint8_t> data_;
  int width_;
  int64_t count_ = 0, next_ = 0;
};

}  // namespace

Result<std::unique_ptr<ValueDecoder>> MakeValueDecoder(int32_t encoding, int32_t physical_type, int width,
                                                       std::span<const uint8_t> data, int64_t num_values,
                                                       const Dictionary* dictionary) {
  (void)num_values;
  const auto type = static_cast<PhysicalType>(physical_type);
  auto unsupported = [&]() {
    return Status::NotImplemented("encoding " + EncodingName(encoding) + " for " + PhysicalTypeName(physical_type) +
                                  " values");
  };
  switch (static_cast<Encoding>(encoding)) {
    case Encoding::kPlain:
      return std::unique_ptr<ValueDecoder>(std::make_unique<PlainDecoder>(physical_type, width, data));
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary: {
      if (dictionary == nullptr) {
        return Status::Invalid("a dictionary-encoded data page without a dictionary page before it");
      }
      if (data.empty()) return Status::Invalid("dictionary-encoded data page without a bit width");
      const int bw = data[0];
      if (bw > 32) return Status::Invalid("dictionary index bit width " + std::to_string(bw));
      return std::unique_ptr<ValueDecoder>(std::make_unique<DictDecoder>(data.subspan(1), bw, width, dictionary));
    }
    case Encoding::kRle: {
      if (type != PhysicalType::kBoolean) return unsupported();
      if (data.size() < 4) return Status::Invalid("RLE booleans: no length prefix");
      const uint32_t len = LoadLE<uint32_t>(data.data());
      if (len > data.size() - 4) return Status::Invalid("RLE booleans: length prefix past the end of the page");
      return std::unique_ptr<ValueDecoder>(std::make_unique<RleBooleanDecoder>(data.subspan(4, len)));
    }
    case Encoding::kDeltaBinaryPacked: {
      if (type != PhysicalType::kInt32 && type != PhysicalType::kInt64) return unsupported();
      auto d = std::make_unique<DeltaBinaryPackedDecoder>(type == PhysicalType::kInt32);
      QUIVER_RETURN_NOT_OK(d->Init(data));
      return std::unique_ptr<ValueDecoder>(std::move(d));
    }
    case Encoding::kDeltaLengthByteArray: {
      if (type != PhysicalType::kByteArray) return unsupported();
      auto d = std::make_unique<DeltaLengthDecoder>();
      QUIVER_RETURN_NOT_OK(d->Init(data));
      return std::unique_ptr<ValueDecoder>(std::move(d));
    }
    case Encoding::kDeltaByteArray: {
      if (type != PhysicalType::kByteArray && type != PhysicalType::kFixedLenByteArray) return unsupported();
      auto d = std::make_unique<DeltaByteArrayDecoder>(width);
      QUIVER_RETURN_NOT_OK(d->Init(data));
      return std::unique_ptr<ValueDecoder>(std::move(d));
    }
    case Encoding::kByteStreamSplit: {
      if (type == PhysicalType::kBoolean || type == PhysicalType::kByteArray) return unsupported();
      auto d = std::make_unique<ByteStreamSplitDecoder>(data, width);
      QUIVER_RETURN_NOT_OK(d->Init());
      return std::unique_ptr<ValueDecoder>(std::move(d));
    }
    case Encoding::kBitPacked: break;
  }
  return unsupported();
}

Result<Dictionary> DecodeDictionaryPage(int32_t physical_type, int width, std::span<const uint8_t> data,
                                        int64_t num_values, std::shared_ptr<const void> page_owner, MemoryPool* pool) {
  Dictionary d;
  if (num_values < 0) return Status::Invalid("dictionary page with a negative value count");
  const auto type = static_cast<PhysicalType>(physical_type);
  // Every PLAIN value takes at least one byte (BOOLEAN: one bit).
  const int64_t max_values = static_cast<int64_t>(data.size()) * (type == PhysicalType::kBoolean ? 8 : 1);
  if (num_values > max_values || (width > 0 && num_values > static_cast<int64_t>(data.size()) / width)) {
    return Status::Invalid("dictionary page of " + std::to_string(data.size()) + " bytes cannot hold " +
                           std::to_string(num_values) + " values");
  }
  PlainDecoder plain(physical_type, width, data);
  d.size = num_values;
  d.page = std::move(page_owner);
  d.binary = type == PhysicalType::kByteArray;
  // num_values is at most data.size() (checked above): the entries are at
  // most 16 bytes (a view) or `width` per byte of the page.
  const int64_t entry_bytes = d.binary ? static_cast<int64_t>(sizeof(std::string_view)) : width;
  QUIVER_ASSIGN_OR_RETURN(d.entries, Buffer::Allocate(pool, std::max<int64_t>(1, num_values * entry_bytes)));
  if (d.binary) {
    auto* views = reinterpret_cast<std::string_view*>(d.entries->mutable_data());
    std::uninitialized_default_construct_n(views, static_cast<size_t>(num_values));
    QUIVER_RETURN_NOT_OK_CTX(plain.DecodeBinary(num_values, views), "dictionary page");
  } else {
    QUIVER_RETURN_NOT_OK_CTX(plain.DecodeFixed(num_values, d.entries->mutable_data()), "dictionary page");
  }
  return d;
}

}  // namespace quiver::parquet
