// quiver cat / schema / stats: read an IPC file or stream (cat and schema:
// or a Parquet or CSV file, .csv[.gz|.zst], local or an s3:// object) and
// show it.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "quiver/cli.h"
#include "quiver/columnar/validate.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/s3_files.h"
#include "quiver/ipc/reader.h"
#include "s3_options.h"
#include "table_file_stats.h"

namespace quiver::cli {
namespace {

void Emit(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

/// Object `path` ("s3://BUCKET/KEY") of the store `s3` (its footer cache
/// charged to `pool`). Errors: Invalid without --s3-endpoint; the store's.
Result<std::shared_ptr<formats::RandomAccessSource>> OpenS3(const std::string& path, const S3StoreOptions& s3,
                                                            MemoryPool* pool) {
  if (s3.endpoint.empty()) {
    return Status::Invalid("'" + path + "': no S3 store configured (give --s3-endpoint, and the credentials in " +
                           "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)");
  }
  QUIVER_ASSIGN_OR_RETURN(auto files, MakeS3Files(s3, pool));
  return files->Open(path);
}

/// A CSV file or object read whole.
Result<formats::csv::CsvTable> ReadCsv(const std::string& path, const S3StoreOptions& s3, MemoryPool* pool) {
  if (!formats::IsS3Url(path)) return formats::csv::ReadCsvFile(path, {}, pool);
  QUIVER_ASSIGN_OR_RETURN(auto source, OpenS3(path, s3, pool));
  return formats::csv::ReadCsvSource(*source, {}, pool);
}

/// A CSV file or object read a block at a time (its head sniffed first).
Result<std::unique_ptr<formats::csv::CsvStreamReader>> OpenCsvReader(const std::string& path, const S3StoreOptions& s3,
                                                                     MemoryPool* pool) {
  std::shared_ptr<formats::RandomAccessSource> source;
  if (formats::IsS3Url(path)) {
    QUIVER_ASSIGN_OR_RETURN(source, OpenS3(path, s3, pool));
  } else {
    QUIVER_ASSIGN_OR_RETURN(source, formats::LocalFileSource::Open(path));
  }
  QUIVER_ASSIGN_OR_RETURN(auto stream, formats::csv::OpenCsvByteStream(std::move(source), pool));
  return formats::csv::CsvStreamReader::Open(std::move(stream), {}, pool);
}

/// A Parquet file's reader (the path starts with "PAR1"; an s3:// object
/// that is not CSV is taken for Parquet), or nullptr for anything else
/// (read as Arrow IPC).
Result<std::unique_ptr<parquet::FileReader>> OpenIfParquet(const std::string& path, MemoryPool* pool,
                                                           const S3StoreOptions& s3) {
  if (formats::IsS3Url(path)) {
    QUIVER_ASSIGN_OR_RETURN(auto source, OpenS3(path, s3, pool));
    return parquet::FileReader::Open(std::move(source), pool);
  }
  if (path == "-" || !parquet::IsParquetFile(path)) return std::unique_ptr<parquet::FileReader>();
  QUIVER_ASSIGN_OR_RETURN(auto source, formats::LocalFileSource::Open(path));
  return parquet::FileReader::Open(source, pool);
}

}  // namespace

void AddCat(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("cat", "print the rows of an Arrow IPC file or stream, a Parquet file or a CSV file");
  struct Opts {
    std::string path;
    int64_t limit = -1;
    std::string format = "table";
    S3StoreOptions s3;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("FILE", o->path,
                  "IPC file or stream ('-' = stdin), Parquet file, or .csv[.gz|.zst] file; local or "
                  "s3://BUCKET/KEY (with --s3-endpoint)")
      ->required();
  AddS3StoreOptions(cmd, &o->s3, /*for_chunks=*/false);
  cmd->add_option("--limit", o->limit, "print at most N rows");
  cmd->add_option("--format", o->format, "table|csv|jsonl")->check(CLI::IsMember({"table", "csv", "jsonl"}));
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      auto pool = ctx.Child("cat");
      QUIVER_ASSIGN_OR_RETURN(const RowTextFormat format, ParseRowTextFormat(o->format));
      if (formats::csv::IsCsvPath(o->path)) {
        // A block at a time, stopping at the limit: `--limit 3` reads the
        // head (the sniffed 8 MiB) and converts one block, whatever the file's size.
        QUIVER_ASSIGN_OR_RETURN(auto csv, OpenCsvReader(o->path, o->s3, pool.get()));
        RowTextWriter text(format, stdout);
        text.WriteHeader(*csv->layout().schema);
        int64_t printed = 0;
        while (o->limit < 0 || printed < o->limit) {
          QUIVER_ASSIGN_OR_RETURN(auto batch, csv->Next());
          if (!batch) break;
          int64_t n = batch->num_rows;
          if (o->limit >= 0) n = std::min(n, o->limit - printed);
          text.WriteRows(*batch, 0, n);
          printed += n;
        }
        std::fflush(stdout);
        return Status::OK();
      }
      QUIVER_ASSIGN_OR_RETURN(auto parquet_reader, OpenIfParquet(o->path, pool.get(), o->s3));
      if (parquet_reader) {
        RowTextWriter text(format, stdout);
        text.WriteHeader(*parquet_reader->schema());
        int64_t printed = 0;
        for (int g = 0; g < parquet_reader->num_row_groups() && (o->limit < 0 || printed < o->limit); ++g) {
          QUIVER_ASSIGN_OR_RETURN(auto batch, parquet_reader->ReadRowGroup(g, {}, pool.get()));
          QUIVER_RETURN_NOT_OK_CTX(ValidateBatch(*batch, ValidationLevel::kFull),
                                   o->path + ": row group " + std::to_string(g));
          int64_t n = batch->num_rows;
          if (o->limit >= 0) n = std::min(n, o->limit - printed);
          text.WriteRows(*batch, 0, n);
          printed += n;
        }
        std::fflush(stdout);
        return Status::OK();
      }
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(o->path, ro));
      RowTextWriter text(format, stdout);
      text.WriteHeader(*reader->schema());
      int64_t printed = 0;
      while (o->limit < 0 || printed < o->limit) {
        QUIVER_ASSIGN_OR_RETURN(auto batch, reader->Next());
        if (!batch) break;
        int64_t n = batch->num_rows;
        if (o->limit >= 0) n = std::min(n, o->limit - printed);
        text.WriteRows(*batch, 0, n);  // tables in blocks of 1000 rows, so widths stay local
        printed += n;
      }
      std::fflush(stdout);
      return Status::OK();
    };
  });
}

void AddSchema(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("schema", "print the schema with metadata and dictionary ids");
  auto path = std::make_shared<std::string>();
  auto s3 = std::make_shared<S3StoreOptions>();
  cmd->add_option("FILE", *path,
                  "IPC file or stream ('-' = stdin), Parquet file, or .csv[.gz|.zst] file; local or "
                  "s3://BUCKET/KEY (with --s3-endpoint)")
      ->required();
  AddS3StoreOptions(cmd, s3.get(), /*for_chunks=*/false);
  cmd->callback([&ctx, path, s3, action] {
    *action = [&ctx, path, s3]() -> Status {
      auto pool = ctx.Child("schema");
      if (formats::csv::IsCsvPath(*path)) {
        QUIVER_ASSIGN_OR_RETURN(auto csv, ReadCsv(*path, *s3, pool.get()));
        std::string out = "format: CSV, delimiter '" +
                          std::string(csv.delimiter == '\t' ? "\\t" : std::string(1, csv.delimiter)) + "', quote '" +
                          std::string(1, csv.quote) + "', header " + (csv.header ? "yes" : "no") + ", " +
                          std::to_string(csv.num_rows) + " rows\n" + csv.schema->ToString();
        if (out.back() != '\n') out += "\n";
        Emit(out);
        return Status::OK();
      }
      QUIVER_ASSIGN_OR_RETURN(auto parquet_reader, OpenIfParquet(*path, pool.get(), *s3));
      if (parquet_reader) {
        const auto& md = parquet_reader->metadata();
        std::string out = "format: Parquet, version " + std::to_string(md.version) + ", " +
                          std::to_string(parquet_reader->num_row_groups()) + " row groups, " +
                          std::to_string(parquet_reader->num_rows()) + " rows" +
                          (md.created_by.empty() ? std::string() : ", created by " + md.created_by) + "\n" +
                          parquet_reader->schema()->ToString();
        if (out.back() != '\n') out += "\n";
        Emit(out);
        return Status::OK();
      }
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(*path, ro));
      std::string out = "format: " + std::string(ipc::IpcFormatName(reader->format())) + ", metadata " +
                        reader->metadata_version() + "\n" + reader->schema()->ToString();
      if (out.back() != '\n') out += "\n";
      Emit(out);
      return Status::OK();
    };
  });
}

/// The codec level quiver's writer recorded in a record batch message's
/// custom metadata (key ipc::kCompressionLevelMetadataKey, value a decimal
/// integer in [-1000000, 1000]); nullopt when no pair holds a valid one
/// (other writers, uncompressed batches, a malformed value). When the key
/// repeats, the last valid value wins. Pure.
std::optional<int> RecordedCodecLevel(const KeyValueMetadata& message_metadata) {
  std::optional<int> out;
  for (const auto& [key, value] : message_metadata) {
    if (key != ipc::kCompressionLevelMetadataKey) continue;
    char* end = nullptr;
    const long level = std::strtol(value.c_str(), &end, 10);
    if (end != value.c_str() && *end == '\0' && level >= -1000000 && level <= 1000) out = static_cast<int>(level);
  }
  return out;
}

void AddStats(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("stats",
                                 "print per-batch buffer sizes, compression and memory (IPC); row groups, column "
                                 "chunks and page indexes (Parquet); the shape of a CSV file");
  struct Opts {
    std::string path;
    S3StoreOptions s3;
  };
  auto o = std::make_shared<Opts>();
  auto path = std::shared_ptr<std::string>(o, &o->path);
  cmd->add_option("FILE", o->path,
                  "IPC file or stream ('-' = stdin), Parquet file, or .csv[.gz|.zst] file; local or "
                  "s3://BUCKET/KEY (with --s3-endpoint)")
      ->required();
  AddS3StoreOptions(cmd, &o->s3, /*for_chunks=*/false);
  cmd->callback([&ctx, o, path, action] {
    *action = [&ctx, o, path]() -> Status {
      auto pool = ctx.Child("stats");
      if (formats::csv::IsCsvPath(o->path)) {
        QUIVER_ASSIGN_OR_RETURN(auto csv, ReadCsv(o->path, o->s3, pool.get()));
        int64_t bytes = 0;
        if (!formats::IsS3Url(o->path)) {
          QUIVER_ASSIGN_OR_RETURN(auto src, formats::LocalFileSource::Open(o->path));
          bytes = src->size();
        }
        Emit(DescribeCsvTable(o->path, csv, bytes));
        return Status::OK();
      }
      {
        QUIVER_ASSIGN_OR_RETURN(auto parquet, OpenIfParquet(o->path, pool.get(), o->s3));
        if (parquet) {
          QUIVER_ASSIGN_OR_RETURN(std::string text, DescribeParquetFile(*parquet, pool.get()));
          Emit(text);
          return Status::OK();
        }
      }
      ipc::ReadOptions ro;
      ro.pool = pool.get();
      ro.collect_body_stats = true;
      QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenPath(*path, ro));
      std::string out = "format: " + std::string(ipc::IpcFormatName(reader->format())) + ", metadata " +
                        reader->metadata_version() + "\n";
      int64_t rows = 0, stored = 0, uncompressed = 0, batches = 0;
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(auto batch, reader->Next());
        if (!batch) break;
        const auto& s = reader->last_batch_stats();
        const std::optional<int> level = RecordedCodecLevel(s.message_metadata);
        out += "batch " + std::to_string(batches) + ": rows " + std::to_string(s.num_rows) + ", codec " +
               std::string(CompressionTypeName(s.codec)) +
               (level ? " level " + std::to_string(*level) : std::string()) + ", metadata " +
               std::to_string(s.metadata_bytes) + " B, body " + std::to_string(s.body_bytes) + " B\n";
        for (const auto& c : s.columns) {
          out += "  " + c.name + ": buffers [";
          for (size_t i = 0; i < c.stored_buffer_bytes.size(); ++i) {
            out += (i ? ", " : "") + std::to_string(c.stored_buffer_bytes[i]);
          }
          out += "] stored " + std::to_string(c.stored_bytes) + " B, uncompressed " +
                 std::to_string(c.uncompressed_bytes) + " B";
          if (c.uncompressed_bytes > 0 && s.codec != CompressionType::kNone) {
            char ratio[32];
            std::snprintf(ratio, sizeof ratio, " (%.2fx)",
                          static_cast<double>(c.uncompressed_bytes) / std::max<int64_t>(1, c.stored_bytes));
            out += ratio;
          }
          out += "\n";
          stored += c.stored_bytes;
          uncompressed += c.uncompressed_bytes;
        }
        rows += s.num_rows;
        ++batches;
      }
      out += "total: " + std::to_string(batches) + " batches, " + std::to_string(rows) + " rows, stored " +
             std::to_string(stored) + " B, uncompressed " + std::to_string(uncompressed) + " B, dictionary batches " +
             std::to_string(reader->num_dictionary_batches()) + " (deltas " +
             std::to_string(reader->num_dictionary_deltas()) + ")\n";
      out += "memory (pool '" + pool->path() + "', allocator " + std::string(pool->allocator()->name()) + "): held " +
             FormatBytes(pool->held_bytes()) + ", peak " + FormatBytes(pool->peak_bytes()) + "\n";
      Emit(out);
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
