#include "csv_output.h"

#include "parquet_output.h"
#include "quiver/cli.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/ipc/io.h"

namespace quiver::cli {

bool IsCsvOutputPath(const std::string& path) { return path != "-" && formats::csv::IsCsvPath(path); }

Result<formats::csv::CsvWriteStats> WriteCsvOutput(const std::string& path, const SchemaPtr& schema,
                                                   const std::function<Result<RecordBatchPtr>()>& next,
                                                   MemoryPool* pool) {
  formats::csv::CsvWriteOptions o;
  o.pool = pool;
  o.compression = formats::csv::CsvCompressionOf(path);
  QUIVER_ASSIGN_OR_RETURN(auto out, ipc::OpenOutputFile(path));  // committed on success only
  StreamSink sink(out.get());
  QUIVER_ASSIGN_OR_RETURN(auto writer, formats::csv::CsvWriter::Make(schema, &sink, o));
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, next());
    if (!b) break;
    QUIVER_RETURN_NOT_OK(writer->WriteBatch(*b));
  }
  QUIVER_RETURN_NOT_OK(writer->Close());
  QUIVER_RETURN_NOT_OK(out->Commit());
  return writer->stats();
}

std::string CsvOutputSummary(const std::string& path, const formats::csv::CsvWriteStats& stats) {
  const formats::csv::CsvCompression c = formats::csv::CsvCompressionOf(path);
  const char* codec = c == formats::csv::CsvCompression::kGzip   ? ", gzip"
                      : c == formats::csv::CsvCompression::kZstd ? ", zstd"
                                                                 : "";
  return std::to_string(stats.num_rows) + " rows written to " + path + " (CSV" + codec + ", " +
         FormatBytes(stats.file_bytes) + ")";
}

}  // namespace quiver::cli
