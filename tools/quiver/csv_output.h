// The CLI's CSV outputs (convert, sql -o): a path ending in .csv, .csv.gz
// or .csv.zst asks for CSV text (formats/csv/csv_writer.h), compressed by
// the extension, written atomically (ipc/io.h OpenOutputFile: temp file +
// rename on Commit) as the IPC and Parquet outputs are.
#pragma once

#include <functional>
#include <string>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/csv/csv_writer.h"

namespace quiver::cli {

/// True when `path` names a CSV output (formats::csv::IsCsvPath; not "-").
bool IsCsvOutputPath(const std::string& path);

/// Writes the batches `next` returns (nullptr at the end) as CSV to `path`:
/// a header line, RFC 4180 fields, the codec of the path's extension; the
/// file appears only when every batch is written. Buffers from `pool`.
/// Errors: next's, the writer's, IOError naming the path.
Result<formats::csv::CsvWriteStats> WriteCsvOutput(const std::string& path, const SchemaPtr& schema,
                                                   const std::function<Result<RecordBatchPtr>()>& next,
                                                   MemoryPool* pool);

/// "N rows written to PATH (CSV[, gzip|zstd], BYTES)" for the commands' stderr line.
std::string CsvOutputSummary(const std::string& path, const formats::csv::CsvWriteStats& stats);

}  // namespace quiver::cli
