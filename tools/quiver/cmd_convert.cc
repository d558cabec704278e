// quiver convert: re-encode an IPC file or stream (format, compression,
// batch size), batch by batch; Parquet in (a .parquet input, row group by
// row group) and out (--to parquet, or an OUT ending in .parquet); CSV in
// (a .csv[.gz|.zst] input, sniffed as `quiver cat` reads it, a block at a time).
#include <cstdio>
#include <functional>

#include "csv_output.h"
#include "parquet_output.h"
#include "quiver/cli.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/formats/source.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"

namespace quiver::cli {

void AddConvert(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand(
      "convert", "convert an Arrow IPC file or stream, a Parquet file or a CSV file to IPC, Parquet or CSV");
  struct Opts {
    std::string in, out, to, compression = "none";
    int level = Codec::kUseDefaultLevel;
    int64_t max_rows = 0, max_bytes = 0;
    double min_saving = 0;
    std::vector<std::string> column_codecs;
    std::string output_policy = std::string(OutputPolicyName(kDefaultOutputPolicy));
    ParquetOutputOpts parquet;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("IN", o->in, "input IPC file or stream ('-' = stdin), Parquet file, or .csv[.gz|.zst] file")
      ->required();
  cmd->add_option("OUT", o->out,
                  "output path ('-' = stdout); a name ending in .parquet writes Parquet, .csv / .csv.gz / .csv.zst "
                  "CSV (compressed by the extension), anything else IPC")
      ->required();
  cmd->add_option("--to", o->to,
                  "stream|file|parquet (default: parquet for an OUT ending in .parquet, else the input's IPC format; "
                  "file for a Parquet or CSV input)")
      ->check(CLI::IsMember({"stream", "file", "parquet"}));
  cmd->add_option("--compression", o->compression, "IPC body codec: none|lz4|zstd")
      ->check(ParsedBy(ParseCompressionType, "CODEC"));
  cmd->add_option("--level", o->level, "codec level (zstd default 3)");
  cmd->add_option("--max-rows-per-batch", o->max_rows, "split batches to at most N rows");
  cmd->add_option("--max-bytes-per-batch", o->max_bytes, "split batches to about at most N buffer bytes (e.g. 8MiB)")
      ->transform(ByteSize());
  cmd->add_option("--min-space-saving", o->min_saving,
                  "store a buffer raw unless compression saves this fraction (default 0: any saving)");
  cmd->add_option("--column-compression", o->column_codecs,
                  "per-column codec NAME=none|lz4|zstd (repeatable); one codec per batch, so a column may only "
                  "opt out (none) or name the batch codec");
  cmd->add_option("--output-policy", o->output_policy,
                  "memory of compressed outputs: keep|shrink-if-halves|exact (default exact; same bytes either way)")
      ->check(ParsedBy(ParseOutputPolicy, "POLICY"));
  AddParquetOutputOptions(cmd, &o->parquet);
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o->compression));
      if (o->max_rows < 0 || o->max_bytes < 0) return Status::Invalid("batch limits must be >= 0");
      auto read_pool = ctx.Child("read");
      auto write_pool = ctx.Child("write");
      // The input: a Parquet file row group by row group, or IPC batches.
      const bool csv_in = o->in != "-" && formats::csv::IsCsvPath(o->in);
      const bool parquet_in = !csv_in && o->in != "-" && parquet::IsParquetFile(o->in);
      std::unique_ptr<formats::csv::CsvStreamReader> csv_reader;
      std::unique_ptr<parquet::FileReader> pq_reader;
      std::unique_ptr<ipc::RecordBatchReader> reader;
      SchemaPtr schema;
      ipc::IpcFormat format = ipc::IpcFormat::kFile;
      if (csv_in) {
        QUIVER_ASSIGN_OR_RETURN(auto source, formats::LocalFileSource::Open(o->in));
        QUIVER_ASSIGN_OR_RETURN(auto stream, formats::csv::OpenCsvByteStream(std::move(source), read_pool.get()));
        QUIVER_ASSIGN_OR_RETURN(csv_reader,
                                formats::csv::CsvStreamReader::Open(std::move(stream), {}, read_pool.get()));
        schema = csv_reader->layout().schema;
      } else if (parquet_in) {
        QUIVER_ASSIGN_OR_RETURN(auto source, formats::LocalFileSource::Open(o->in));
        QUIVER_ASSIGN_OR_RETURN(pq_reader, parquet::FileReader::Open(source, read_pool.get()));
        schema = pq_reader->schema();
      } else {
        ipc::ReadOptions ro;
        ro.pool = read_pool.get();
        QUIVER_ASSIGN_OR_RETURN(reader, ipc::RecordBatchReader::OpenPath(o->in, ro));
        schema = reader->schema();
        format = reader->format();
      }
      int next_row_group = 0;
      auto next = [&]() -> Result<RecordBatchPtr> {
        if (csv_reader) return csv_reader->Next();
        if (!pq_reader) return reader->Next();
        if (next_row_group >= pq_reader->num_row_groups()) return RecordBatchPtr();
        return pq_reader->ReadRowGroup(next_row_group++, {}, read_pool.get());
      };
      if (o->to.empty() && IsCsvOutputPath(o->out)) {
        if (codec != CompressionType::kNone || !o->column_codecs.empty()) {
          return ctx.UsageError(
              "convert: --compression and --column-compression are IPC options; a CSV output is compressed by its "
              "name (.csv.gz, .csv.zst)");
        }
        QUIVER_ASSIGN_OR_RETURN(auto stats, WriteCsvOutput(o->out, schema, next, write_pool.get()));
        std::fprintf(stderr, "%s; memory: read held %s peak %s, write held %s peak %s\n",
                     CsvOutputSummary(o->out, stats).c_str(), FormatBytes(read_pool->held_bytes()).c_str(),
                     FormatBytes(read_pool->peak_bytes()).c_str(), FormatBytes(write_pool->held_bytes()).c_str(),
                     FormatBytes(write_pool->peak_bytes()).c_str());
        return Status::OK();
      }
      const std::string to = !o->to.empty() ? o->to : IsParquetPath(o->out) ? "parquet" : "";
      if (to == "parquet") {
        if (codec != CompressionType::kNone || !o->column_codecs.empty()) {
          return ctx.UsageError(
              "convert: --compression and --column-compression are IPC options; a Parquet output "
              "takes --parquet-compression");
        }
        QUIVER_ASSIGN_OR_RETURN(auto wo, ToWriterOptions(o->parquet, write_pool.get()));
        QUIVER_ASSIGN_OR_RETURN(auto out, ipc::OpenOutputFile(o->out));  // committed on success only
        StreamSink sink(out.get());
        QUIVER_ASSIGN_OR_RETURN(auto writer, parquet::FileWriter::Make(schema, &sink, wo));
        while (true) {
          QUIVER_ASSIGN_OR_RETURN(auto batch, next());
          if (!batch) break;
          QUIVER_RETURN_NOT_OK(writer->WriteBatch(batch));
        }
        QUIVER_RETURN_NOT_OK(writer->Close());
        QUIVER_RETURN_NOT_OK(out->Commit());
        const auto& s = writer->stats();
        std::fprintf(stderr,
                     "wrote %lld rows in %lld row groups (Parquet, codec %s): %lld B; memory: read held %s peak %s, "
                     "write held %s peak %s\n",
                     static_cast<long long>(s.num_rows), static_cast<long long>(s.num_row_groups),
                     parquet::CodecName(wo.codec).c_str(), static_cast<long long>(s.file_bytes),
                     FormatBytes(read_pool->held_bytes()).c_str(), FormatBytes(read_pool->peak_bytes()).c_str(),
                     FormatBytes(write_pool->held_bytes()).c_str(), FormatBytes(write_pool->peak_bytes()).c_str());
        return Status::OK();
      }
      if (o->to == "stream") format = ipc::IpcFormat::kStream;
      if (o->to == "file") format = ipc::IpcFormat::kFile;
      QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o->out));  // committed on success only
      ipc::WriteOptions wo;
      wo.pool = write_pool.get();
      wo.compression = codec;
      wo.level = o->level;
      wo.min_space_saving = o->min_saving;
      QUIVER_ASSIGN_OR_RETURN(wo.output_policy, ParseOutputPolicy(o->output_policy));
      for (const auto& spec : o->column_codecs) {
        const auto eq = spec.rfind('=');
        if (eq == std::string::npos || eq == 0) {
          return Status::Invalid("--column-compression '" + spec + "': expected NAME=CODEC");
        }
        QUIVER_ASSIGN_OR_RETURN(CompressionType c, ParseCompressionType(spec.substr(eq + 1)));
        wo.column_codecs[spec.substr(0, eq)] = c;
      }
      QUIVER_ASSIGN_OR_RETURN(auto writer, ipc::RecordBatchWriter::Make(sink.get(), schema, format, wo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(auto batch, next());
        if (!batch) break;
        int64_t rows = o->max_rows > 0 ? o->max_rows : batch->num_rows;
        if (o->max_bytes > 0 && batch->num_rows > 0) {
          int64_t bytes = 0;
          for (const auto& c : batch->columns) bytes += c->TotalBufferBytes();
          const int64_t per_row = std::max<int64_t>(1, bytes / batch->num_rows);
          rows = std::min(rows, std::max<int64_t>(1, o->max_bytes / per_row));
        }
        if (rows <= 0 || rows >= batch->num_rows) {
          QUIVER_RETURN_NOT_OK(writer->WriteBatch(*batch));
          continue;
        }
        for (int64_t off = 0; off < batch->num_rows; off += rows) {
          QUIVER_ASSIGN_OR_RETURN(auto piece, SliceBatch(batch, off, std::min(rows, batch->num_rows - off)));
          QUIVER_RETURN_NOT_OK(writer->WriteBatch(*piece));
        }
      }
      QUIVER_RETURN_NOT_OK(writer->Close());
      QUIVER_RETURN_NOT_OK(sink->Commit());
      const auto& s = writer->stats();
      std::fprintf(stderr,
                   "wrote %lld batches, %lld rows (%s, codec %s level %d): body %lld B from %lld B of buffers, "
                   "%lld B total; memory: read held %s peak %s, write held %s peak %s\n",
                   static_cast<long long>(s.num_batches), static_cast<long long>(s.num_rows),
                   std::string(ipc::IpcFormatName(format)).c_str(), std::string(CompressionTypeName(codec)).c_str(),
                   writer->codec_level(), static_cast<long long>(s.body_bytes),
                   static_cast<long long>(s.uncompressed_body_bytes), static_cast<long long>(s.total_bytes),
                   FormatBytes(read_pool->held_bytes()).c_str(), FormatBytes(read_pool->peak_bytes()).c_str(),
                   FormatBytes(write_pool->held_bytes()).c_str(), FormatBytes(write_pool->peak_bytes()).c_str());
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
