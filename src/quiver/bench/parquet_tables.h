// quiver/bench/parquet_tables.h — the query benchmarks' tables as Parquet
// files (`quiver bench tpch|tpcds --format parquet`, query_bench.h):
// written by quiver's Parquet writer or found where DuckDB wrote them, then
// registered as file tables that every scan reads in place.
//
// Thread safety: pure functions (each call reads or writes its own files).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"

namespace quiver::bench {

/// Writes every table of `catalog` as `<dir>/<table>.parquet` (`dir` must
/// exist) with `options` (its pool is the writer's; the scans' buffers come
/// from `scan_pool`). Errors: IOError naming a file it cannot write; the
/// scans' and the writer's errors.
Status WriteTablesAsParquet(const sql::Catalog& catalog, const std::string& dir, const parquet::WriterOptions& options,
                            MemoryPool* scan_pool);

/// A catalog of the tables named `tables`, each the Parquet file
/// `<dir>/<table>.parquet`, scanned in place (only the footers are read
/// here, with `pool`). Errors: the reader's, naming the file.
Result<std::shared_ptr<sql::Catalog>> OpenParquetTables(const std::vector<std::string>& tables, const std::string& dir,
                                                        MemoryPool* pool);

}  // namespace quiver::bench
