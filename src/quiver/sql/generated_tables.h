// quiver/sql/generated_tables.h — writes generated tables (TPC-H, TPC-DS:
// quiver/datagen) as Arrow IPC files in a directory, one file per table.
//
// Thread safety: reentrant; two calls writing the same directory at once
// race on its files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/ipc/options.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::sql {

/// What WriteGeneratedTables wrote for one table.
struct GeneratedTableFile {
  std::string table;  ///< "lineitem", "store_sales", ...
  std::string path;   ///< <dir>/<table>.arrow (IPC file format)
  int64_t num_rows = 0;
  int64_t file_bytes = 0;
};

/// One table to write: its name and the stream of its batches.
struct GeneratedTable {
  std::string name;
  std::unique_ptr<RecordBatchStream> stream;
};

/// Writes each table as `<dir>/<name>.arrow` (created or overwritten; `dir`
/// is created when missing), streaming batch by batch with `compression`;
/// each file is published whole (temp file + rename) and each stream is
/// released once its file is written. On failure the tables this call
/// wrote are removed again (and `dir`, when this call created it and it is
/// empty), so nothing it leaves reads as valid. `pool` (required) charges
/// the writer's scratch. Errors: IOError naming the path; the streams'
/// errors (OutOfMemory) with the path.
Result<std::vector<GeneratedTableFile>> WriteGeneratedTables(const std::string& dir, std::vector<GeneratedTable> tables,
                                                             MemoryPool* pool, CompressionType compression);

}  // namespace quiver::sql
