// quiver/sql/tpch_tables.h — the TPC-H tables of quiver/datagen/tpch.h as
// Arrow IPC files, and registered in a Catalog (for `quiver gen tpch`,
// `quiver serve --tpch`, `quiver sql --tpch` and the demo).
//
// Thread safety: the functions are reentrant; two calls writing the same
// directory at once race on its files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/ipc/options.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/generated_tables.h"

namespace quiver::sql {

struct TpchFilesOptions {
  /// TPC-H scale factor (> 0; 0.01 = 15,000 orders, ~60,000 lineitems).
  double scale = 0.01;
  uint64_t seed = 42;
  /// Rows per IPC record batch.
  int64_t batch_rows = 64 * 1024;
  /// Body compression of the files (none keeps scans zero-copy).
  CompressionType compression = CompressionType::kNone;
  /// Pool for the generated batches (one batch held at a time) and the
  /// writer's scratch. Required; must be owned by a std::shared_ptr.
  MemoryPool* pool = nullptr;
};

/// What WriteTpchFiles wrote for one table.
using TpchFile = GeneratedTableFile;

/// Generates the eight tables and writes each as `<dir>/<table>.arrow`
/// (created or overwritten; `dir` is created when missing), streaming batch
/// by batch; each file is published whole (temp file + rename). Options are
/// checked before anything is created. On failure the tables this call
/// wrote are removed again (and `dir`, when this call created it and it is
/// empty), so nothing it leaves reads as valid. Errors: Invalid for bad
/// options; IOError naming the path; OutOfMemory from the pool.
Result<std::vector<TpchFile>> WriteTpchFiles(const std::string& dir, const TpchFilesOptions& options);

/// WriteTpchFiles, then registers each file in `catalog` under its table
/// name (memory-mapped scans), validated at kStructural (the files are our
/// own). Errors: as WriteTpchFiles and Catalog::RegisterPath (Invalid when a
/// name is already registered).
Result<std::vector<TpchFile>> RegisterTpchTables(Catalog* catalog, const std::string& dir,
                                                 const TpchFilesOptions& options);

}  // namespace quiver::sql
