// quiver/sql/tpcds_tables.h — the 24 TPC-DS tables of
// quiver/datagen/tpcds.h as Arrow IPC files (for `quiver gen tpcds`).
//
// Thread safety: reentrant; two calls writing the same directory at once
// race on its files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/ipc/options.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/generated_tables.h"

namespace quiver::sql {

struct TpcdsFilesOptions {
  /// TPC-DS scale factor (> 0; 0.1 = about 288,000 store_sales rows).
  double scale = 0.1;
  uint64_t seed = 42;
  /// Rows per IPC record batch.
  int64_t batch_rows = 64 * 1024;
  /// Body compression of the files (none keeps scans zero-copy).
  CompressionType compression = CompressionType::kNone;
  /// Pool for the generated batches (one batch held at a time) and the
  /// writer's scratch. Required; must be owned by a std::shared_ptr.
  MemoryPool* pool = nullptr;
};

/// Generates the 24 tables and writes each as `<dir>/<table>.arrow`, as
/// WriteGeneratedTables does (options are checked before anything is
/// created; on failure nothing this call wrote is left). Errors: Invalid
/// for bad options; IOError naming the path; OutOfMemory from the pool.
Result<std::vector<GeneratedTableFile>> WriteTpcdsFiles(const std::string& dir, const TpcdsFilesOptions& options);

}  // namespace quiver::sql
