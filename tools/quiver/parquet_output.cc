#include "parquet_output.h"

#include <algorithm>
#include <cctype>

#include "quiver/cli.h"

namespace quiver::cli {

void AddParquetOutputOptions(CLI::App* cmd, ParquetOutputOpts* o) {
  cmd->add_option("--parquet-compression", o->compression,
                  "page codec of a Parquet output: snappy|zstd|none (default snappy)")
      ->check(ParsedBy(parquet::ParseWriterCodec, "CODEC"));
  cmd->add_option("--row-group-rows", o->row_group_rows, "Parquet output: rows per row group (default 122880)");
  cmd->add_option("--row-group-bytes", o->row_group_bytes,
                  "Parquet output: cut a row group once its Arrow buffers hold about this many bytes (default "
                  "128MiB)")
      ->transform(ByteSize());
  cmd->add_flag("--no-parquet-dictionary", o->no_dictionary,
                "Parquet output: PLAIN only (default: dictionary pages where the dictionary stays under 1 MiB)");
}

Result<parquet::WriterOptions> ToWriterOptions(const ParquetOutputOpts& o, MemoryPool* pool) {
  parquet::WriterOptions w;
  w.pool = pool;
  QUIVER_ASSIGN_OR_RETURN(w.codec, parquet::ParseWriterCodec(o.compression));
  if (o.row_group_rows < 1) {
    return Status::Invalid("--row-group-rows " + std::to_string(o.row_group_rows) + ": expected >= 1");
  }
  if (o.row_group_bytes < 1) {
    return Status::Invalid("--row-group-bytes " + std::to_string(o.row_group_bytes) + ": expected >= 1");
  }
  w.row_group_rows = o.row_group_rows;
  w.row_group_bytes = o.row_group_bytes;
  w.dictionary = !o.no_dictionary;
  w.created_by = "quiver";
  QUIVER_RETURN_NOT_OK(parquet::ValidateWriterOptions(w));
  return w;
}

bool IsParquetPath(const std::string& path) {
  static const std::string kExt = ".parquet";
  if (path.size() < kExt.size()) return false;
  std::string tail = path.substr(path.size() - kExt.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
  return tail == kExt;
}

}  // namespace quiver::cli
