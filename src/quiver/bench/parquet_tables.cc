// quiver/bench/parquet_tables.cc — see parquet_tables.h.
#include "quiver/bench/parquet_tables.h"

#include "quiver/formats/sink.h"
#include "quiver/sql/file_tables.h"

namespace quiver::bench {

Status WriteTablesAsParquet(const sql::Catalog& catalog, const std::string& dir, const parquet::WriterOptions& options,
                            MemoryPool* scan_pool) {
  for (const auto& table : catalog.ListTables()) {
    const std::string path = dir + "/" + table.name + ".parquet";
    QUIVER_ASSIGN_OR_RETURN(auto sink, formats::LocalFileSink::Open(path));
    QUIVER_ASSIGN_OR_RETURN(auto writer, parquet::FileWriter::Make(table.schema, sink.get(), options));
    QUIVER_ASSIGN_OR_RETURN(auto scan, catalog.OpenScan(table, scan_pool));
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, scan->Next());
      if (!batch) break;
      QUIVER_RETURN_NOT_OK(writer->WriteBatch(batch));
    }
    QUIVER_RETURN_NOT_OK(writer->Close());
    QUIVER_RETURN_NOT_OK(sink->Close());
  }
  return Status::OK();
}

Result<std::shared_ptr<sql::Catalog>> OpenParquetTables(const std::vector<std::string>& tables, const std::string& dir,
                                                        MemoryPool* pool) {
  auto catalog = std::make_shared<sql::Catalog>();
  for (const auto& name : tables) {
    sql::FileTableOptions fo;
    fo.format = sql::FileFormat::kParquet;
    fo.hive_partitioning = false;
    QUIVER_ASSIGN_OR_RETURN(auto table, sql::LoadFileTable(name, {dir + "/" + name + ".parquet"}, fo, pool));
    QUIVER_RETURN_NOT_OK(catalog->RegisterFileTable(name, std::move(table)));
  }
  return catalog;
}

}  // namespace quiver::bench
