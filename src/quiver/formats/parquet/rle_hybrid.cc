#include "quiver/formats/parquet/rle_hybrid.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>

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

namespace {

// Unpacks `groups` groups of 8 values of kBits bits (each group kBits
// bytes, least significant bit first) from `in` into `out`. `avail_bytes`:
// the bytes readable from `in` (at least groups * kBits); groups whose
// 8-byte loads would pass it go through a zero-padded copy.
template <int kBits>
void UnpackGroups(const uint8_t* in, int64_t groups, size_t avail_bytes, uint32_t* out) {
  if constexpr (kBits == 0) {
    std::memset(out, 0, static_cast<size_t>(groups) * 8 * sizeof(uint32_t));
  } else {
    constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
    auto group = [](const uint8_t* p, uint32_t* o) {
      for (int j = 0; j < 8; ++j) {
        uint64_t w;
        std::memcpy(&w, p + ((j * kBits) >> 3), 8);
        o[j] = static_cast<uint32_t>((w >> ((j * kBits) & 7)) & kMask);
      }
    };
    int64_t g = 0;
    // A group reads at most 8 bytes from its byte (7 * kBits) / 8.
    for (; g < groups && static_cast<size_t>(g + 1) * kBits + 8 <= avail_bytes; ++g) group(in + g * kBits, out + g * 8);
    for (; g < groups; ++g) {
      uint8_t padded[kBits + 8] = {};
      std::memcpy(padded, in + g * kBits, kBits);
      group(padded, out + g * 8);
    }
  }
}

using UnpackGroupsFn = void (*)(const uint8_t*, int64_t, size_t, uint32_t*);

template <int... kBits>
constexpr std::array<UnpackGroupsFn, sizeof...(kBits)> MakeUnpackTable(std::integer_sequence<int, kBits...>) {
  return {&UnpackGroups<kBits>...};
}

constexpr auto kUnpackGroups = MakeUnpackTable(std::make_integer_sequence<int, 33>());

}  // namespace

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
      for (int64_t done = 0; done < take;) {
        if ((packed_index_ & 7) == 0 && take - done >= 8) {
          // Whole groups of 8 from a group boundary: unpacked at once.
          const int64_t groups = (take - done) / 8;
          const uint8_t* p = packed_ + (packed_index_ / 8) * bit_width_;
          const size_t avail = static_cast<size_t>(data_.data() + data_.size() - p);
          kUnpackGroups[static_cast<size_t>(bit_width_)](p, groups, avail, out + done);
          packed_index_ += groups * 8;
          done += groups * 8;
          continue;
        }
        // A start inside a group, or fewer than 8 values: up to the next
        // group boundary, unpacked from the group's start.
        const int64_t group_start = packed_index_ & ~int64_t{7};
        const int64_t skip = packed_index_ - group_start;
        const int64_t k = std::min<int64_t>(take - done, 8 - skip);
        uint64_t wide[8];
        UnpackBitsLsb(packed_ + ((group_start * bit_width_) >> 3), bit_width_, k + skip, wide);
        for (int64_t i = 0; i < k; ++i) out[done + i] = static_cast<uint32_t>(wide[skip + i]);
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

Result<bool> RleBitPackedDecoder::SkipRepeated(int64_t n, uint32_t value) {
  if (bit_width_ < 0 || bit_width_ > 32) return Status::Invalid("RLE hybrid: bit width " + std::to_string(bit_width_));
  if (left_ == 0) QUIVER_RETURN_NOT_OK(NextRun());
  if (!rle_ || value_ != value || left_ < n) return false;
  left_ -= n;
  return true;
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

Result<bool> LevelDecoder::SkipRepeated(int64_t n, uint32_t level) {
  if (bit_packed_ || level > static_cast<uint32_t>(max_level_)) return false;
  return rle_.SkipRepeated(n, level);
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
