// quiver/sql/tpch_tables.cc — see tpch_tables.h.
#include "quiver/sql/tpch_tables.h"

#include <memory>
#include <vector>

#include "quiver/datagen/tpch.h"

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
  std::vector<GeneratedTable> streams;
  for (size_t i = 0; i < tables.size(); ++i) {
    streams.push_back({std::string(datagen::TpchTableName(tables[i])), std::move(generators[i])});
  }
  return WriteGeneratedTables(dir, std::move(streams), options.pool, options.compression);
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
