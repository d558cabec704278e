// quiver/formats/csv/csv_stream.h — a CSV file read in bounded blocks
// (issue 36 §2): the text of a plain, .gz or .zst file (local or any
// RandomAccessSource, e.g. an object in an S3 store) flows through one
// pool buffer of a few MiB, is decompressed as it arrives and converted to
// record batches a block at a time; the whole text is never held.
//
// Memory: the text buffer (block_bytes, doubled while one row is longer),
// the field positions of a block's rows (CsvRowScratch, about 24 bytes a
// field) and, for compressed input, one compressed block and the codec's
// context; all charged to the pool given, except zlib's and zstd's own
// contexts (about 250 KiB, from malloc); the text and the scratch are
// released when Next reaches the end.
//
// Thread safety: a CsvByteStream and a CsvStreamReader are used by one
// thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/source.h"
#include "quiver/memory/buffer.h"

namespace quiver::formats::csv {

/// Bytes of a CSV text in order (decompressed when the file is).
class CsvByteStream {
 public:
  virtual ~CsvByteStream() = default;
  /// Up to `max_bytes` (> 0) next bytes into `out`; 0 at the end. Errors:
  /// the source's; Invalid naming the source and the input byte for a
  /// corrupt or truncated compressed file.
  virtual Result<int64_t> Read(uint8_t* out, int64_t max_bytes) = 0;
  virtual const std::string& name() const = 0;
};

/// The text of `source`, decompressed by the extension of its name (.gz:
/// gzip, concatenated members allowed; .zst: zstd frames; else as is),
/// read `read_bytes` at a time into `pool` memory. Errors: OutOfMemory.
Result<std::unique_ptr<CsvByteStream>> OpenCsvByteStream(std::shared_ptr<RandomAccessSource> source, MemoryPool* pool,
                                                         int64_t read_bytes = int64_t{1} << 20);

/// Block sizes of a streamed read.
struct CsvStreamOptions {
  /// Text buffer (>= 64 bytes); doubled while a row does not fit.
  int64_t block_bytes = int64_t{4} << 20;
  /// Bytes at the head that InferCsvLayout samples (rows cut by it are left out).
  int64_t sniff_bytes = int64_t{8} << 20;
};

/// Batches of a CSV text read from a CsvByteStream a block at a time.
class CsvStreamReader {
 public:
  /// Reads the head (sniff_bytes), infers the layout (InferCsvLayout) and
  /// keeps the head as the first blocks. `columns`: as CsvRowConverter.
  /// Errors: the stream's, InferCsvLayout's; OutOfMemory.
  static Result<std::unique_ptr<CsvStreamReader>> Open(std::unique_ptr<CsvByteStream> stream, const CsvOptions& options,
                                                       MemoryPool* pool, CsvStreamOptions stream_options = {},
                                                       std::optional<std::vector<int>> columns = std::nullopt);
  const CsvLayout& layout() const { return converter_.layout(); }
  /// The next batch (at most batch_rows rows, never empty; a batch ends at
  /// a block's end), or nullptr at the end. Errors: the stream's and
  /// ParseCsv's (naming the stream and the line).
  Result<RecordBatchPtr> Next();
  /// Largest text buffer held so far, in bytes.
  int64_t peak_text_bytes() const { return peak_text_bytes_; }

 private:
  CsvStreamReader(std::unique_ptr<CsvByteStream> stream, CsvRowConverter converter, MemoryPool* pool)
      : stream_(std::move(stream)), converter_(std::move(converter)), pool_(pool) {
    scratch_ = std::make_unique<CsvRowScratch>(pool);
  }
  Status Fill();  // moves the unread text to the front, reads more
  std::unique_ptr<CsvByteStream> stream_;
  CsvRowConverter converter_;
  MemoryPool* pool_;
  std::shared_ptr<Buffer> text_;
  std::unique_ptr<CsvRowScratch> scratch_;
  int64_t begin_ = 0;  // unread text is [begin_, end_)
  int64_t end_ = 0;
  int64_t line_ = 1;  // line at begin_
  bool eof_ = false;
  bool done_ = false;
  std::vector<RecordBatchPtr> pending_;
  size_t next_pending_ = 0;
  int64_t peak_text_bytes_ = 0;
};

}  // namespace quiver::formats::csv
