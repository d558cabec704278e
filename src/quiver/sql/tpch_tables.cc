// quiver/sql/tpch_tables.cc — see tpch_tables.h.
#include "quiver/sql/tpch_tables.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "quiver/datagen/tpch.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::sql {

Result<std::vector<TpchFile>> WriteTpchFiles(const std::string& dir, const TpchFilesOptions& options) {
  if (options.pool == nullptr) return Status::Invalid("WriteTpchFiles: pool is required");
  // Every generator first: bad options are refused before anything is made.
  const auto tables = datagen::AllTpchTables();
  std::vector<std::unique_ptr<datagen::TpchGenerator>> generators;
  for (datagen::TpchTable t : tables) {
    datagen::TpchOptions go;
    go.table = t;
    go.scale = options.scale;
    go.seed = options.seed;
    go.batch_rows = options.batch_rows;
    go.pool = options.pool;
    QUIVER_ASSIGN_OR_RETURN(auto gen, datagen::TpchGenerator::Make(go));
    generators.push_back(std::move(gen));
  }
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError(dir + ": cannot create directory: " + ec.message());
  std::vector<TpchFile> out;
  // On failure the tables already written are removed too (and the
  // directory, when this call made it): a failed run leaves no table that
  // reads as valid. Each file is published whole (temp file + rename).
  auto write_all = [&]() -> Status {
    for (size_t i = 0; i < generators.size(); ++i) {
      auto& gen = generators[i];
      TpchFile f;
      f.table = std::string(datagen::TpchTableName(tables[i]));
      f.path = (std::filesystem::path(dir) / (f.table + ".arrow")).string();
      QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(f.path));
      ipc::WriteOptions wo;
      wo.pool = options.pool;
      wo.compression = options.compression;
      QUIVER_ASSIGN_OR_RETURN(auto writer,
                              ipc::RecordBatchWriter::Make(sink.get(), gen->schema(), ipc::IpcFormat::kFile, wo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, gen->Next());
        if (!b) break;
        QUIVER_RETURN_NOT_OK_CTX(writer->WriteBatch(*b), f.path);
      }
      QUIVER_RETURN_NOT_OK_CTX(writer->Close(), f.path);
      QUIVER_RETURN_NOT_OK_CTX(sink->Commit(), f.path);
      f.num_rows = writer->stats().num_rows;
      f.file_bytes = writer->stats().total_bytes;
      out.push_back(std::move(f));
      gen.reset();  // its pool memory back before the next table
    }
    return Status::OK();
  };
  Status st = write_all();
  if (!st.ok()) {
    for (const TpchFile& f : out) std::filesystem::remove(f.path, ec);
    if (!existed) std::filesystem::remove(dir, ec);  // only when empty
    return st;
  }
  return out;
}

Result<std::vector<TpchFile>> RegisterTpchTables(Catalog* catalog, const std::string& dir,
                                                 const TpchFilesOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(auto files, WriteTpchFiles(dir, options));
  for (const TpchFile& f : files) {
    QUIVER_RETURN_NOT_OK(catalog->RegisterPath(f.table, f.path, options.pool, ValidationLevel::kStructural));
  }
  return files;
}

}  // namespace quiver::sql
