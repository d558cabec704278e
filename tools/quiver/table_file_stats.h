// `quiver stats` for table files: what a Parquet file's footer and page
// index say (per row group; per column chunk its physical type, codec,
// encodings, values, compressed and uncompressed bytes, statistics and
// page index), and a CSV file's shape (compression, delimiter, quote,
// header, rows, and per column its inferred type, NULLs and Arrow bytes).
#pragma once

#include <cstdint>
#include <string>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::cli {

/// The text `quiver stats` prints for an opened Parquet file. Reads each
/// row group's page indexes (bytes from `pool`, freed before return).
/// Errors: a corrupt page index (Invalid naming the row group and column),
/// IOError.
Result<std::string> DescribeParquetFile(const parquet::FileReader& reader, MemoryPool* pool);

/// The text `quiver stats` prints for a CSV file `path` read as `t`
/// (`file_bytes`: its size as stored).
std::string DescribeCsvTable(const std::string& path, const formats::csv::CsvTable& t, int64_t file_bytes);

}  // namespace quiver::cli
