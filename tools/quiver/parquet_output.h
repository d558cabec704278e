// The CLI's Parquet outputs (convert, sql -o, query -o): the options every
// command that writes a Parquet file takes, how a path asks for Parquet,
// and the adapter from the CLI's atomic output files (ipc/io.h
// OpenOutputFile: temp file + rename on Commit) to the format writers'
// sink (formats/sink.h).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/formats/sink.h"
#include "quiver/ipc/io.h"

namespace quiver::cli {

struct ParquetOutputOpts {
  std::string compression = "snappy";
  int64_t row_group_rows = 122880;
  int64_t row_group_bytes = int64_t{128} << 20;
  bool no_dictionary = false;
};

/// Adds --parquet-compression, --row-group-rows, --row-group-bytes and
/// --no-parquet-dictionary to `cmd`.
void AddParquetOutputOptions(CLI::App* cmd, ParquetOutputOpts* o);

/// The writer options of `o` (memory from `pool`). Invalid naming the
/// option for a bad codec name or a row group size < 1.
Result<parquet::WriterOptions> ToWriterOptions(const ParquetOutputOpts& o, MemoryPool* pool);

/// True when `path` ends in ".parquet" (any case).
bool IsParquetPath(const std::string& path);

/// A formats::OutputSink writing into an ipc::OutputStream (not owned).
class StreamSink final : public formats::OutputSink {
 public:
  explicit StreamSink(ipc::OutputStream* out) : out_(out) {}
  Status Write(std::span<const uint8_t> bytes) override { return out_->Write(bytes); }
  int64_t position() const override { return out_->position(); }

 private:
  ipc::OutputStream* out_;
};

}  // namespace quiver::cli
