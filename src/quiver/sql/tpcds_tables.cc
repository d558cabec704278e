// quiver/sql/tpcds_tables.cc — see tpcds_tables.h.
#include "quiver/sql/tpcds_tables.h"

#include "quiver/datagen/tpcds.h"

namespace quiver::sql {

Result<std::vector<GeneratedTableFile>> WriteTpcdsFiles(const std::string& dir, const TpcdsFilesOptions& options) {
  if (options.pool == nullptr) return Status::Invalid("WriteTpcdsFiles: pool is required");
  // Every generator first: bad options are refused before anything is made.
  std::vector<GeneratedTable> tables;
  for (datagen::TpcdsTable t : datagen::AllTpcdsTables()) {
    datagen::TpcdsOptions go;
    go.table = t;
    go.scale = options.scale;
    go.seed = options.seed;
    go.batch_rows = options.batch_rows;
    go.pool = options.pool;
    QUIVER_ASSIGN_OR_RETURN(auto gen, datagen::TpcdsGenerator::Make(go));
    tables.push_back({std::string(datagen::TpcdsTableName(t)), std::move(gen)});
  }
  return WriteGeneratedTables(dir, std::move(tables), options.pool, options.compression);
}

}  // namespace quiver::sql
