// quiver gen: write deterministic generated batches (quiver/datagen) as an
// Arrow IPC stream or file, batch by batch.
#include <algorithm>
#include <cstdio>

#include "quiver/cli.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/ipc/writer.h"
// --- sql ---
#include "quiver/sql/tpcds_tables.h"
#include "quiver/sql/tpch_tables.h"
// --- sql ---

namespace quiver::cli {

void AddGen(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand(
      "gen", "write generated batches (bigint-seq|bigint-random|uuid|text|lineitem|orders) as Arrow IPC");
  struct Opts {
    std::string kind, out, compression = "none", format = "stream";
    int64_t rows = -1, max_bytes = 0;
    uint64_t seed = 42;
    int level = Codec::kUseDefaultLevel;
    double scale = 0.01;  // --- sql --- (tpch)
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("KIND", o->kind, "bigint-seq|bigint-random|uuid|text|lineitem|orders|tpch|tpcds")
      ->required()
      ->check(ParsedBy(
          [](std::string_view k) -> Result<int> {
            if (k == "tpch" || k == "tpcds") return 0;
            QUIVER_RETURN_NOT_OK(datagen::ParseGenKind(k).status());
            return 0;
          },
          "KIND"));
  // --- sql ---
  cmd->add_option("--rows", o->rows, "total rows (required except for tpch and tpcds)")
      ->check(CLI::Validator(
          [](std::string& v) { return !v.empty() && v[0] == '-' ? "must be >= 0, got " + v : std::string(); },
          "COUNT"));
  cmd->add_option("--scale", o->scale,
                  "tpch / tpcds: TPC-H / TPC-DS scale factor (default 0.01); -o is then a directory");
  // --- sql ---
  cmd->add_option("--max-bytes-per-batch", o->max_bytes,
                  "cut batches at this many Arrow buffer bytes (e.g. 1MiB; default 0: one batch)")
      ->transform(ByteSize());
  cmd->add_option("--seed", o->seed, "seed of the generated values (default 42)");
  cmd->add_option("--compression", o->compression, "none|lz4|zstd (default none)")
      ->check(ParsedBy(ParseCompressionType, "CODEC"));
  cmd->add_option("--level", o->level, "codec level (zstd default 3)");
  cmd->add_option("--format", o->format, "stream|file (default stream)")->check(CLI::IsMember({"stream", "file"}));
  cmd->add_option("-o,--output", o->out, "output path ('-' = stdout)")->required();
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o->compression));
      // --- sql ---
      if (o->kind == "tpch") {  // the eight TPC-H tables, one IPC file each in directory -o
        auto pool = ctx.Child("gen");
        sql::TpchFilesOptions to;
        to.scale = o->scale;
        to.seed = o->seed;
        to.compression = codec;
        to.pool = pool.get();
        QUIVER_ASSIGN_OR_RETURN(auto files, sql::WriteTpchFiles(o->out, to));
        for (const auto& f : files) {
          std::fprintf(stderr, "gen tpch scale %g: %s %lld rows, %s\n", o->scale, f.path.c_str(),
                       static_cast<long long>(f.num_rows), FormatBytes(f.file_bytes).c_str());
        }
        return Status::OK();
      }
      if (o->kind == "tpcds") {  // the 24 TPC-DS tables, one IPC file each in directory -o
        auto pool = ctx.Child("gen");
        sql::TpcdsFilesOptions to;
        to.scale = o->scale;
        to.seed = o->seed;
        to.compression = codec;
        to.pool = pool.get();
        QUIVER_ASSIGN_OR_RETURN(auto files, sql::WriteTpcdsFiles(o->out, to));
        for (const auto& f : files) {
          std::fprintf(stderr, "gen tpcds scale %g: %s %lld rows, %s\n", o->scale, f.path.c_str(),
                       static_cast<long long>(f.num_rows), FormatBytes(f.file_bytes).c_str());
        }
        return Status::OK();
      }
      if (o->rows < 0) return Status::Invalid("gen " + o->kind + ": --rows is required");
      // --- sql ---
      QUIVER_ASSIGN_OR_RETURN(datagen::GenKind kind, datagen::ParseGenKind(o->kind));
      auto gen_pool = ctx.Child("gen");
      auto write_pool = ctx.Child("write");
      datagen::GenOptions go;
      go.kind = kind;
      go.num_rows = o->rows;
      go.max_bytes_per_batch = o->max_bytes;
      go.seed = o->seed;
      go.pool = gen_pool.get();
      QUIVER_ASSIGN_OR_RETURN(auto gen, datagen::BatchGenerator::Make(go));
      const ipc::IpcFormat format = o->format == "file" ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream;
      QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o->out));  // committed on success only
      ipc::WriteOptions wo;
      wo.pool = write_pool.get();
      wo.compression = codec;
      wo.level = o->level;
      QUIVER_ASSIGN_OR_RETURN(auto writer, ipc::RecordBatchWriter::Make(sink.get(), gen->schema(), format, wo));
      int64_t buffer_bytes = 0, max_batch_bytes = 0;
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(auto batch, gen->Next());
        if (!batch) break;
        const int64_t bytes = datagen::BatchBufferBytes(*batch);
        buffer_bytes += bytes;
        max_batch_bytes = std::max(max_batch_bytes, bytes);
        QUIVER_RETURN_NOT_OK(writer->WriteBatch(*batch));
      }
      QUIVER_RETURN_NOT_OK(writer->Close());
      QUIVER_RETURN_NOT_OK(sink->Commit());
      const auto& s = writer->stats();
      std::fprintf(stderr,
                   "gen %s seed %llu: %lld batches, %lld rows, buffers %lld B (%s; largest batch %s), "
                   "body %lld B (%s, codec %s), %lld B written\n",
                   o->kind.c_str(), static_cast<unsigned long long>(o->seed), static_cast<long long>(s.num_batches),
                   static_cast<long long>(s.num_rows), static_cast<long long>(buffer_bytes),
                   FormatBytes(buffer_bytes).c_str(), FormatBytes(max_batch_bytes).c_str(),
                   static_cast<long long>(s.body_bytes), FormatBytes(s.body_bytes).c_str(),
                   std::string(CompressionTypeName(codec)).c_str(), static_cast<long long>(s.total_bytes));
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
