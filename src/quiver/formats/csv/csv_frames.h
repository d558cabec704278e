// quiver/formats/csv/csv_frames.h — a .csv.zst file of several zstd
// frames (pzstd, a writer that ends a frame every few MiB, concatenated
// files) decompressed and parsed on several threads at once (issue 36 §2).
//
// The frames are found from their headers (zstd_frames.h) and grouped
// into ranges of about `target_range_bytes` of text (each frame's text
// bound: 128 KiB a block). Range k decompresses its own frames whole, one
// call per frame straight into one pool buffer of their bound (no copy
// through the decoder's window), then reads on into the next frames
// (streaming, 64 KiB at a time) only as far as it needs: its rows are
// those that start in its text after its first LF (range 0: from the data
// start), through the row that crosses into the next range's text,
// exactly as the byte ranges of an uncompressed file (csv_ranges.h):
// boundaries right after an LF, the quote state at each boundary carried
// from range to range (csv_quote_chain.h) from each range's two-way quote
// scan of its own text. A range waits for the ranges before it to publish
// their quote scans (their decompression and scan, not their parse).
//
// Not split (Open gives nullptr: read the file with the serial stream,
// csv_stream.h): a remote source, fewer than two frames, a frame whose
// text bound exceeds `max_range_text_bytes` (a single-frame `zstd -T2`
// file is one frame), a text whose header row does not end before its
// last range.
//
// Memory: each running range holds its frames' text (their bound, at
// most max_range_text_bytes: about 8 MiB for pzstd's frames; never sized
// from a header's content size alone), their compressed bytes, the text
// it reads ahead (one zstd block, or the rest of a row), its batch and a
// field scratch (CsvRowScratch, about 24 bytes a field: some 25 MiB for 8
// MiB of lineitem): all from the pool given; the text buffers, scratches
// and zstd contexts (malloc, outside the pool) are kept on free lists, one
// per thread parsing at once, until the scan goes (fresh 8 MiB buffers per
// range cost a page fault per 4 KiB).
//
// Errors name the file, the frame and the input byte where decompression
// failed (a damaged or truncated frame: zstd_frames.h) and the line where
// the decompressed text ends; a parse error names the file's line (a
// failing range counts the lines before it, decompressing the frames
// before it again).
//
// Thread safety: ParseRange may be called from several threads at once,
// each range once, range k only after ranges 0..k-1 were started.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_quote_chain.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/zstd_frames.h"
#include "quiver/formats/source.h"

typedef struct ZSTD_DCtx_s ZSTD_DCtx;

namespace quiver::formats::csv {

/// How CsvFrameScan groups frames.
struct CsvFrameScanOptions {
  /// Frames are grouped until their text bound reaches this (>= 1).
  int64_t target_range_bytes = int64_t{4} << 20;
  /// A frame whose text bound is larger is not split (the file is read serially).
  int64_t max_range_text_bytes = int64_t{64} << 20;
};

class CsvFrameScan {
 public:
  /// The frame scan of `source` (a .zst file whose head gave `layout`), or
  /// nullptr when it does not split (above). `columns`: as
  /// CsvRowConverter. Reads the frame headers and the head of the text up
  /// to the data start with `pool`. Errors: the source's.
  static Result<std::unique_ptr<CsvFrameScan>> Open(std::shared_ptr<RandomAccessSource> source, const CsvLayout& layout,
                                                    const CsvOptions& options, std::optional<std::vector<int>> columns,
                                                    MemoryPool* pool, CsvFrameScanOptions frame_options = {});
  ~CsvFrameScan();

  int64_t num_ranges() const { return static_cast<int64_t>(ranges_.size()); }
  int64_t num_frames() const { return static_cast<int64_t>(frames_.size()); }

  /// The rows range `k` owns, as one batch (possibly of no rows). Errors:
  /// Invalid for a damaged frame (naming the frame, input byte and line)
  /// or a bad row (ParseCsv's, naming the file's line); the source's;
  /// Cancelled-like: the failure of a range before it that failed before
  /// publishing; OutOfMemory.
  Result<RecordBatchPtr> ParseRange(int64_t k, MemoryPool* pool);

 private:
  struct Range {
    size_t first_frame = 0;
    size_t end_frame = 0;  // one past the last
    int64_t text_bound = 0;
  };
  class Window;
  CsvFrameScan(std::shared_ptr<RandomAccessSource> source, CsvRowConverter converter)
      : source_(std::move(source)), converter_(std::move(converter)) {}
  // Line ends in the text of frames [0, frame) (-1 when it does not
  // decompress), and whether that text ends in a CR.
  int64_t LineEndsBefore(size_t frame, bool* ends_with_cr, MemoryPool* pool) const;
  // `st` with the line where the text decompressed so far ends.
  Status WithLine(const Status& st, size_t first_frame, const Window& w, MemoryPool* pool) const;

  // Free lists of text buffers and decoder contexts (one per thread
  // parsing at once), kept until the scan goes.
  using DCtxPtr = std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)>;
  std::shared_ptr<Buffer> TakeText() const;
  void GiveBackText(std::shared_ptr<Buffer> text) const;
  DCtxPtr TakeDCtx() const;
  void GiveBackDCtx(DCtxPtr dctx) const;

  std::shared_ptr<RandomAccessSource> source_;
  CsvRowConverter converter_;
  std::vector<ZstdFrameInfo> frames_;
  std::vector<Range> ranges_;
  std::unique_ptr<CsvQuoteChain> chain_;
  mutable std::mutex free_mutex_;
  mutable std::vector<std::shared_ptr<Buffer>> free_text_;
  mutable std::vector<DCtxPtr> free_dctx_;
};

}  // namespace quiver::formats::csv
