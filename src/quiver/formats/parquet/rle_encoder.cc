#include "quiver/formats/parquet/rle_encoder.h"

#include <algorithm>

namespace quiver::parquet {
namespace {

/// Packs `n` values (n a multiple of 8) of `bit_width` bits LSB first.
void PackLsb(const uint32_t* values, size_t n, int bit_width, std::string* out) {
  uint64_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc |= static_cast<uint64_t>(values[i]) << bits;
    bits += bit_width;
    while (bits >= 8) {
      out->push_back(static_cast<char>(acc & 0xFF));
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) out->push_back(static_cast<char>(acc & 0xFF));  // only when n * width % 8 != 0 (never: n % 8 == 0)
}

void AppendRleRun(uint32_t value, size_t count, int bit_width, std::string* out) {
  AppendUleb128(static_cast<uint64_t>(count) << 1, out);
  const int bytes = (bit_width + 7) / 8;
  for (int b = 0; b < bytes; ++b) out->push_back(static_cast<char>((value >> (8 * b)) & 0xFF));
}

}  // namespace

void AppendUleb128(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendRleHybrid(std::span<const uint32_t> values, int bit_width, std::string* out) {
  const size_t n = values.size();
  size_t literal_start = 0, literal_count = 0;  // pending bit-packed values: values[literal_start, +count)
  auto flush_literals = [&](bool final_run) {
    if (literal_count == 0) return;
    size_t groups = (literal_count + 7) / 8;
    AppendUleb128((static_cast<uint64_t>(groups) << 1) | 1, out);
    const size_t whole = literal_count / 8 * 8;
    PackLsb(values.data() + literal_start, whole, bit_width, out);
    if (whole < literal_count) {
      // Only the data's last run may be padded (readers stop at their count).
      (void)final_run;
      uint32_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      std::copy(values.begin() + static_cast<std::ptrdiff_t>(literal_start + whole),
                values.begin() + static_cast<std::ptrdiff_t>(literal_start + literal_count), tail);
      PackLsb(tail, 8, bit_width, out);
    }
    literal_count = 0;
  };
  size_t i = 0;
  while (i < n) {
    size_t j = i + 1;
    while (j < n && values[j] == values[i]) ++j;
    size_t run = j - i;
    if (run >= 8) {
      // Complete the pending literals' last group of 8 from the run first.
      const size_t fill = literal_count % 8 == 0 ? 0 : 8 - literal_count % 8;
      if (fill > 0 && run - fill >= 8) {
        literal_count += fill;
        i += fill;
        run -= fill;
      }
      if (literal_count % 8 == 0) {
        flush_literals(false);
        AppendRleRun(values[i], run, bit_width, out);
        i = j;
        literal_start = j;
        continue;
      }
    }
    if (literal_count == 0) literal_start = i;
    literal_count += run;
    i = j;
  }
  flush_literals(true);
}

void AppendPackedBits(std::span<const uint8_t> values, std::string* out) {
  const size_t n = values.size();
  for (size_t i = 0; i < n; i += 8) {
    uint8_t byte = 0;
    const size_t end = std::min(n, i + 8);
    for (size_t k = i; k < end; ++k) byte |= static_cast<uint8_t>((values[k] & 1) << (k - i));
    out->push_back(static_cast<char>(byte));
  }
}

}  // namespace quiver::parquet
