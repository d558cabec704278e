#include "quiver/formats/parquet/rle_hybrid.h"

#include <cstring>
#include <string>

#include "quiver/formats/parquet/metadata.h"

namespace quiver::parquet {

void UnpackBitsLsb(const uint8_t* in, int bit_width, int64_t n, uint64_t* out) {
  if (bit_width == 0) {
    std::memset(out, 0, static_cast<size_t>(n) * sizeof(uint64_t));
    return;
  }
  const uint64_t mask = bit_width == 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
  const int64_t total_bytes = (n * bit_width + 7) / 8;
  int64_t bit = 0;
  for (int64_t i = 0; i < n; ++i, bit += bit_width) {
    int64_t byte = bit >> 3;
    const int shift = static_cast<int>(bit & 7);
    // Gather up to 9 bytes (64 bits at a shift of up to 7), never past the end.
    uint64_t lo = 0;
    const int64_t avail = total_bytes - byte;
    const int take = static_cast<int>(avail < 8 ? avail : 8);
    std::memcpy(&lo, in + byte, static_cast<size_t>(take));
    uint64_t v = lo >> shift;
    if (shift + bit_width > 64 && avail > 8) v |= static_cast<uint64_t>(in[byte + 8]) << (64 - shift);
    out[i] = v & mask;
  }
}

Result<uint64_t> ReadUleb128(std::span<const uint8_t> data, size_t* pos) {
  uint64_t out = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= data.size()) return Status::Invalid("truncated varint");
    const uint8_t b = data[(*pos)++];
    if (shift == 63 && (b & 0x7e) != 0) return Status::Invalid("varint over 64 bits");
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return out;
  }
  return Status::Invalid("varint over 10 bytes");
}

int BitWidthFor(uint64_t max_value) {
  int w = 0;
  while (w < 64 && (max_value >> w) != 0) ++w;
  return w;
}

Status RleBitPackedDecoder::NextRun() {
  QUIVER_ASSIGN_OR_RETURN(uint64_t header, ReadUleb128(data_, &pos_));
  if (header & 1) {
    const uint64_t groups = header >> 1;
    if (groups == 0 || groups > data_.size()) return Status::Invalid("RLE hybrid: bad bit-packed run header");
    const uint64_t bytes = groups * static_cast<uint64_t>(bit_width_);
    rle_ = false;
    left_ = static_cast<int64_t>(groups * 8);
    packed_ = data_.data() + pos_;
    packed_index_ = 0;
    // The last run may be cut short by the end of the data: keep only the
    // whole values that are present.
    if (bytes > data_.size() - pos_) {
      const int64_t have = bit_width_ == 0 ? left_ : static_cast<int64_t>((data_.size() - pos_) * 8 / bit_width_);
      if (have == 0) return Status::Invalid("RLE hybrid: bit-packed run past the end of the data");
      left_ = have;
      pos_ = data_.size();
    } else {
      pos_ += bytes;
    }
  } else {
    const uint64_t count = header >> 1;
    if (count == 0 || count > (uint64_t{1} << 40)) return Status::Invalid("RLE hybrid: bad run length");
    const size_t value_bytes = static_cast<size_t>((bit_width_ + 7) / 8);
    if (value_bytes > data_.size() - pos_) return Status::Invalid("RLE hybrid: run value past the end of the data");
    uint32_t v = 0;
    for (size_t i = 0; i < value_bytes; ++i) v |= static_cast<uint32_t>(data_[pos_ + i]) << (8 * i);
    pos_ += value_bytes;
    if (bit_width_ < 32 && (v >> bit_width_) != 0) {
      return Status::Invalid("RLE hybrid: run value " + std::to_string(v) + " wider than " +
                             std::to_string(bit_width_) + " bits");
    }
    rle_ = true;
    left_ = static_cast<int64_t>(count);
    value_ = v;
  }
  return Status::OK();
}

Status RleBitPackedDecoder::Get(int64_t n, uint32_t* out) {
  if (bit_width_ < 0 || bit_width_ > 32) return Status::Invalid("RLE hybrid: bit width " + std::to_string(bit_width_));
  while (n > 0) {
    if (left_ == 0) QUIVER_RETURN_NOT_OK(NextRun());
    const int64_t take = left_ < n ? left_ : n;
    if (rle_) {
      for (int64_t i = 0; i < take; ++i) out[i] = value_;
    } else {
      uint64_t tmp[64];
      for (int64_t done = 0; done < take;) {
        const int64_t k = take - done < 64 ? take - done : 64;
        // packed_index_ values already taken: start at that bit offset
        const int64_t bit = packed_index_ * bit_width_;
        const uint8_t* base = packed_ + (bit >> 3);
        if ((bit & 7) == 0) {
          UnpackBitsLsb(base, bit_width_, k, tmp);
        } else {
          // bit_width_ * 8 values always end on a byte boundary; a start
          // mid-byte only happens after a partial take: unpack from the
          // group's start.
          const int64_t group_start = packed_index_ & ~int64_t{7};
          const int64_t skip = packed_index_ - group_start;
          uint64_t wide[72];
          UnpackBitsLsb(packed_ + ((group_start * bit_width_) >> 3), bit_width_, k + skip, wide);
          std::memcpy(tmp, wide + skip, static_cast<size_t>(k) * sizeof(uint64_t));
        }
        for (int64_t i = 0; i < k; ++i) out[done + i] = static_cast<uint32_t>(tmp[i]);
        packed_index_ += k;
        done += k;
      }
    }
    out += take;
    n -= take;
    left_ -= take;
  }
  return Status::OK();
}

Result<LevelDecoder> LevelDecoder::Make(int32_t encoding, int max_level, std::span<const uint8_t> data,
                                        int64_t num_values) {
  const int width = BitWidthFor(static_cast<uint64_t>(max_level));
  LevelDecoder d(data, width);
  d.bit_width_ = width;
  d.max_level_ = max_level;
  if (encoding == static_cast<int32_t>(Encoding::kRle)) return d;
  if (encoding == static_cast<int32_t>(Encoding::kBitPacked)) {
    const int64_t bytes = (num_values * width + 7) / 8;
    if (bytes > static_cast<int64_t>(data.size())) return Status::Invalid("BIT_PACKED levels past the end of the page");
    d.bit_packed_ = true;
    d.packed_data_ = data.subspan(0, static_cast<size_t>(bytes));
    return d;
  }
  return Status::NotImplemented("level encoding " + EncodingName(encoding));
}

Status LevelDecoder::Get(int64_t n, uint32_t* out) {
  if (!bit_packed_) {
    QUIVER_RETURN_NOT_OK(rle_.Get(n, out));
  } else {
    // Most significant bit first.
    for (int64_t i = 0; i < n; ++i, ++index_) {
      uint32_t v = 0;
      for (int b = 0; b < bit_width_; ++b) {
        const int64_t bit = index_ * bit_width_ + b;
        if ((bit >> 3) >= static_cast<int64_t>(packed_data_.size())) {
          return Status::Invalid("BIT_PACKED levels past the end of the page");
        }
        v = (v << 1) | ((packed_data_[static_cast<size_t>(bit >> 3)] >> (7 - (bit & 7))) & 1);
      }
      out[i] = v;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (out[i] > static_cast<uint32_t>(max_level_)) {
      return Status::Invalid("level " + std::to_string(out[i]) + " above the maximum " + std::to_string(max_level_));
    }
  }
  return Status::OK();
}

}  // namespace quiver::parquet
