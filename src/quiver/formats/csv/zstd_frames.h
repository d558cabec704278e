// quiver/formats/csv/zstd_frames.h — the frames of a zstd file (RFC 8878
// §3.1), found from their headers and block headers without decompressing:
// where each frame starts and ends in the file, so that the frames of a
// file written in several (pzstd, a writer that ends a frame every few
// MiB, concatenated .zst files) can be decompressed on several threads.
//
// Every size read from the file is checked against the bytes left before
// it is used; the content size a frame header declares is reported, never
// trusted (a frame's text is bounded by its block count: each block
// decompresses to at most 128 KiB, RFC 8878 §3.1.1.2.4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/source.h"

namespace quiver::formats::csv {

/// One zstd frame (skippable frames are left out).
struct ZstdFrameInfo {
  int64_t offset = 0;            ///< first byte (its magic number) in the file
  int64_t compressed_bytes = 0;  ///< bytes of the frame, checksum included
  int64_t num_blocks = 0;
  int64_t content_bytes = -1;  ///< the header's Frame_Content_Size; -1 when absent
  /// Empty, or why the walk stopped here: the frame (to the file's end) is
  /// damaged or truncated, and decompressing it fails; its num_blocks is 0.
  std::string damage;
  /// The walk stopped here: the frame's text may exceed the walk's
  /// max_frame_text_bytes (its compressed_bytes run to the file's end).
  bool oversized = false;
  /// Upper bound of its decompressed size: 128 KiB a block (the declared
  /// content size when smaller); `unknown_bytes` for a damaged frame,
  /// INT64_MAX for an oversized one.
  int64_t TextBound(int64_t unknown_bytes) const;
};

/// The frames of `source` in order, read through small ReadAt calls of the
/// frame and block headers (about one per 128 KiB of text). A file whose
/// first bytes are not a zstd frame or skippable frame gives no frames.
/// From the first frame that is not whole (a block running past the end,
/// a reserved block type, a block over 128 KiB, a bad magic number after
/// the first frame) the rest of the file is one frame whose `damage` says
/// what and at which byte. The walk also stops at a frame whose declared
/// content size, or (none declared) whose blocks so far, exceed
/// `max_frame_text_bytes`: it is the last one, `oversized` (a caller that
/// splits no such frame reads no further: a single-frame file of 700 MiB
/// costs one header read, not 5,600). Errors: the source's. Thread
/// safety: as the source's ReadAt.
Result<std::vector<ZstdFrameInfo>> FindZstdFrames(RandomAccessSource& source, MemoryPool* pool,
                                                  int64_t max_frame_text_bytes = INT64_MAX);

}  // namespace quiver::formats::csv
