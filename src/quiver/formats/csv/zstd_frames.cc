#include "quiver/formats/csv/zstd_frames.h"

#include <algorithm>

namespace quiver::formats::csv {
namespace {

constexpr uint32_t kZstdMagic = 0xFD2FB528u;
constexpr uint32_t kSkippableMask = 0xFFFFFFF0u;
constexpr uint32_t kSkippableMagic = 0x184D2A50u;
constexpr int64_t kMaxBlockBytes = int64_t{128} << 10;

uint64_t LittleEndian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Up to `n` bytes at `offset` (fewer at the end of the source).
Result<std::shared_ptr<Buffer>> ReadUpTo(RandomAccessSource& source, int64_t offset, int64_t n, MemoryPool* pool) {
  n = std::min(n, source.size() - offset);
  return source.ReadAt(offset, std::max<int64_t>(n, 0), pool);
}

}  // namespace

int64_t ZstdFrameInfo::TextBound(int64_t unknown_bytes) const {
  if (oversized) return INT64_MAX;
  if (!damage.empty()) return unknown_bytes;
  const int64_t blocks = num_blocks * kMaxBlockBytes;
  return content_bytes >= 0 ? std::min(content_bytes, blocks) : blocks;
}

Result<std::vector<ZstdFrameInfo>> FindZstdFrames(RandomAccessSource& source, MemoryPool* pool,
                                                  int64_t max_frame_text_bytes) {
  std::vector<ZstdFrameInfo> frames;
  const int64_t size = source.size();
  int64_t pos = 0;
  auto damaged = [&](int64_t at, const std::string& what) {
    ZstdFrameInfo f;
    f.offset = at;
    f.compressed_bytes = size - at;
    f.damage = what + " (input byte " + std::to_string(at) + ")";
    frames.push_back(std::move(f));
    return frames;
  };
  while (pos < size) {
    // Magic, descriptor, window byte, dictionary id and content size: at most 18 bytes.
    QUIVER_ASSIGN_OR_RETURN(auto head, ReadUpTo(source, pos, 18, pool));
    const uint8_t* h = head->data();
    const int64_t have = head->size();
    if (have < 4) return damaged(pos, "a frame header cut by the end of the file");
    const uint32_t magic = static_cast<uint32_t>(LittleEndian(h, 4));
    if ((magic & kSkippableMask) == kSkippableMagic) {
      if (have < 8) return damaged(pos, "a skippable frame header cut by the end of the file");
      const int64_t skip = static_cast<int64_t>(LittleEndian(h + 4, 4));
      if (skip > size - pos - 8)
        return damaged(pos, "a skippable frame of " + std::to_string(skip) + " bytes past the end");
      pos += 8 + skip;
      continue;
    }
    if (magic != kZstdMagic) {
      if (frames.empty()) return frames;  // not zstd at all
      return damaged(pos, "no zstd frame magic number");
    }
    if (have < 5) return damaged(pos, "a frame header cut by the end of the file");
    const uint8_t fhd = h[4];
    const int fcs_flag = fhd >> 6;
    const bool single_segment = (fhd >> 5) & 1;
    const bool checksum = (fhd >> 2) & 1;
    if ((fhd >> 3) & 1) return damaged(pos, "a frame header with its reserved bit set");
    static constexpr int kDictBytes[] = {0, 1, 2, 4};
    const int fcs_bytes = fcs_flag == 0 ? (single_segment ? 1 : 0) : (1 << fcs_flag);
    const int header_bytes = 5 + (single_segment ? 0 : 1) + kDictBytes[fhd & 3] + fcs_bytes;
    if (have < header_bytes) return damaged(pos, "a frame header cut by the end of the file");
    ZstdFrameInfo f;
    f.offset = pos;
    if (fcs_bytes > 0) {
      uint64_t fcs = LittleEndian(h + header_bytes - fcs_bytes, fcs_bytes);
      if (fcs_bytes == 2) fcs += 256;
      f.content_bytes = fcs > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(fcs);
    }
    auto oversized = [&] {
      f.oversized = true;
      f.compressed_bytes = size - pos;
      frames.push_back(std::move(f));
      return frames;
    };
    if (f.content_bytes > max_frame_text_bytes) return oversized();
    int64_t at = pos + header_bytes;
    while (true) {
      if (f.content_bytes < 0 && f.num_blocks * kMaxBlockBytes > max_frame_text_bytes) return oversized();
      if (size - at < 3)
        return damaged(pos,
                       "a frame whose block header at byte " + std::to_string(at) + " is cut by the end of the file");
      QUIVER_ASSIGN_OR_RETURN(auto bh, source.ReadAt(at, 3, pool));
      const uint32_t block = static_cast<uint32_t>(LittleEndian(bh->data(), 3));
      const bool last = block & 1;
      const int type = static_cast<int>((block >> 1) & 3);
      const int64_t block_size = block >> 3;
      if (type == 3) return damaged(pos, "a frame with a reserved block type at byte " + std::to_string(at));
      if (block_size > kMaxBlockBytes) {
        return damaged(pos, "a frame with a block of " + std::to_string(block_size) + " bytes (over 128 KiB) at byte " +
                                std::to_string(at));
      }
      const int64_t body = type == 1 ? 1 : block_size;  // RLE: one byte repeated
      if (body > size - at - 3) {
        return damaged(pos, "a frame whose block at byte " + std::to_string(at) + " needs " + std::to_string(body) +
                                " bytes, the file ends " + std::to_string(size - at - 3) + " bytes after its header");
      }
      at += 3 + body;
      ++f.num_blocks;
      if (last) break;
    }
    if (checksum) {
      if (size - at < 4) return damaged(pos, "a frame whose checksum is cut by the end of the file");
      at += 4;
    }
    f.compressed_bytes = at - pos;
    frames.push_back(std::move(f));
    pos = at;
  }
  return frames;
}

}  // namespace quiver::formats::csv
