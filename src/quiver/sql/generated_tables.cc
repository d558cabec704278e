// quiver/sql/generated_tables.cc — see generated_tables.h.
#include "quiver/sql/generated_tables.h"

#include <filesystem>

#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::sql {

Result<std::vector<GeneratedTableFile>> WriteGeneratedTables(const std::string& dir, std::vector<GeneratedTable> tables,
                                                             MemoryPool* pool, CompressionType compression) {
  if (pool == nullptr) return Status::Invalid("WriteGeneratedTables: pool is required");
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError(dir + ": cannot create directory: " + ec.message());
  std::vector<GeneratedTableFile> out;
  auto write_all = [&]() -> Status {
    for (GeneratedTable& t : tables) {
      GeneratedTableFile f;
      f.table = t.name;
      f.path = (std::filesystem::path(dir) / (t.name + ".arrow")).string();
      QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(f.path));
      ipc::WriteOptions wo;
      wo.pool = pool;
      wo.compression = compression;
      wo.column_ranges = true;  // scans skip the batches a filter's key range excludes
      QUIVER_ASSIGN_OR_RETURN(auto writer,
                              ipc::RecordBatchWriter::Make(sink.get(), t.stream->schema(), ipc::IpcFormat::kFile, wo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, t.stream->Next());
        if (!b) break;
        QUIVER_RETURN_NOT_OK_CTX(writer->WriteBatch(*b), f.path);
      }
      QUIVER_RETURN_NOT_OK_CTX(writer->Close(), f.path);
      QUIVER_RETURN_NOT_OK_CTX(sink->Commit(), f.path);
      f.num_rows = writer->stats().num_rows;
      f.file_bytes = writer->stats().total_bytes;
      out.push_back(std::move(f));
      t.stream.reset();  // its pool memory back before the next table
    }
    return Status::OK();
  };
  Status st = write_all();
  if (!st.ok()) {
    for (const GeneratedTableFile& f : out) std::filesystem::remove(f.path, ec);
    if (!existed) std::filesystem::remove(dir, ec);  // only when empty
    return st;
  }
  return out;
}

}  // namespace quiver::sql
