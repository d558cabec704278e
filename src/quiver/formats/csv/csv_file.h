// quiver/formats/csv/csv_file.h — the file front of the CSV reader: reads a
// .csv file (or a .csv.gz / .csv.zst one, decompressed by its extension)
// a block at a time (csv_stream.h) into in-memory batches.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/formats/source.h"
#include "quiver/memory/buffer.h"

namespace quiver::formats::csv {

/// Compression of a CSV file, chosen by its name's extension.
enum class CsvCompression { kNone, kGzip, kZstd };

/// kGzip for names ending ".gz", kZstd for ".zst", else kNone.
CsvCompression CsvCompressionOf(std::string_view path);

/// True when `path` names a CSV table file: it ends in ".csv", ".csv.gz"
/// or ".csv.zst" (case-sensitive, as the extensions are written).
bool IsCsvPath(std::string_view path);

/// Decompresses `input` (gzip: one or more concatenated members, zlib's
/// inflate; zstd: one or more frames, streaming) into a pool buffer that
/// grows as output arrives, never past `max_bytes` (Invalid beyond it: the
/// size a frame header claims is never trusted to size the buffer).
/// Errors: Invalid naming `source` and the codec's message for corrupt or
/// truncated input; OutOfMemory from `pool`. Thread safety: pure.
Result<std::shared_ptr<Buffer>> DecompressCsv(std::span<const uint8_t> input, CsvCompression compression,
                                              MemoryPool* pool, std::string_view source,
                                              int64_t max_bytes = int64_t{1} << 40);

/// Reads `path` (decompressed by its extension) a block at a time
/// (CsvStreamReader: the text held is one block of a few MiB, never the
/// whole file) into batches that own their buffers (from `pool`), with
/// the path naming the source in errors. Errors: IOError naming the path
/// when it cannot be opened or read; the stream's and ParseCsv's errors.
Result<CsvTable> ReadCsvFile(const std::string& path, const CsvOptions& options, MemoryPool* pool);

/// The same for any source (an object in an S3 store, formats/s3_files.h),
/// decompressed by the extension of its name(), the name in errors. The
/// source must outlive the call. Errors: the source's, then as ReadCsvFile.
Result<CsvTable> ReadCsvSource(RandomAccessSource& source, const CsvOptions& options, MemoryPool* pool);

/// ReadCsvFile over an owned source, with the stream's block sizes.
Result<CsvTable> ReadCsvStream(std::shared_ptr<RandomAccessSource> source, const CsvOptions& options, MemoryPool* pool,
                               CsvStreamOptions stream_options = {});

}  // namespace quiver::formats::csv
