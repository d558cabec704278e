// quiver/bench/query_bench.h — a suite of SQL queries timed in process on
// quiver's engine and on DuckDB side by side in one run (the common part of
// `quiver bench tpch` and `quiver bench tpcds`): at each thread count of
// QueryBenchOptions::threads (both engines at the same count), query by
// query, DuckDB's rounds (DuckDbSide) and then quiver's: median of R rounds
// after one warm-up, the ratio DuckDB time / quiver time (> 1: quiver is
// faster), geometric means, quiver's speed-up over its first thread count,
// quiver's statement pool peak and DuckDB's resident-set growth per query,
// the totals and the queries quiver is slowest at relative to DuckDB. Row
// counts must agree between the engines.
//
// Thread safety: one run at a time per root pool.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/generated_tables.h"

namespace quiver::bench {

struct QueryBenchOptions {
  int rounds = 3;             ///< measured rounds per query (median)
  std::string threads = "1";  ///< comma-separated thread counts, each run by both engines (e.g. "1,2")
  join::MemoryMode memory_mode = join::MemoryMode::kOnHeap;
  bool json = false;          ///< one JSON object per query instead of the table
  bool no_duckdb = false;     ///< quiver's side only
  std::string duckdb_script;  ///< bench/tpch_duckdb.mjs
  /// quiver's statement memory limit (-1: none); past it operators spill
  /// (sql::ExecuteOptions::spill), so the table shows the out-of-core times.
  int64_t memory_limit_bytes = -1;
  /// The tables' file format, read by both engines at query time:
  /// "arrow" (default): the generator's Arrow IPC files for quiver, DuckDB
  /// loads them from CSV into its own tables before the timing (it cannot
  /// read Arrow IPC offline). "parquet": the tables rewritten as Parquet
  /// files (parquet_writer, parquet_codec, parquet_row_group_rows) that
  /// quiver scans in place and DuckDB through views over read_parquet, so
  /// both decode the same files in every round.
  std::string table_format = "arrow";
  /// Parquet: "snappy" (default), "zstd" or "uncompressed".
  std::string parquet_codec = "snappy";
  /// Parquet: who writes the files. "duckdb" (default; `COPY ... (FORMAT
  /// parquet)`, as a user's files come from another tool; quiver's writer
  /// when DuckDB does not run) or "quiver" (formats/parquet FileWriter).
  std::string parquet_writer = "duckdb";
  /// Parquet: rows per row group (default 122,880, DuckDB's).
  int64_t parquet_row_group_rows = 122880;
  /// quiver's join filter pushdown (sql::ExecuteOptions::join_filters);
  /// off to measure what it saves.
  bool join_filters = true;
};

/// One query of a suite: its name in the output ("q7") and its text.
struct BenchQuery {
  std::string name;
  std::string sql;
};

/// Parses "1,2" into thread counts (each 1..256). Errors: Invalid.
Result<std::vector<int>> ParseThreadCounts(const std::string& threads);

/// Parses "1,5,7" into query numbers of `suite` (each 1..`count`); an empty
/// list is every query 1..count. Errors: Invalid naming the item.
Result<std::vector<int>> ParseQueryNumbers(const std::string& list, int count, const std::string& suite);

/// Writes a suite's tables under `dir` (Arrow IPC files, with `pool`):
/// sql::WriteTpchFiles or WriteTpcdsFiles.
using TableGenerator =
    std::function<Result<std::vector<sql::GeneratedTableFile>>(const std::string& dir, MemoryPool* pool)>;

/// Generates a suite's tables with `generate` into a fresh folder under the
/// temporary directory (removed when it returns, also on errors), registers
/// them (checked structurally: files this run wrote) and runs
/// RunQueryBench over them (`label`, e.g. "TPC-H scale 1", heads the
/// generation line). Errors: the generator's and RunQueryBench's.
Status RunGeneratedQueryBench(const std::string& suite, const std::string& label, const QueryBenchOptions& options,
                              const TableGenerator& generate, const std::vector<BenchQuery>& queries,
                              const std::shared_ptr<MemoryPool>& root, std::FILE* out);

/// Runs `queries` over the tables of `catalog` (for DuckDB exported as CSV
/// under `work_dir`, which must exist and is left to the caller to remove;
/// with table_format "parquet" first rewritten as Parquet files under
/// `work_dir`/parquet, which both engines then read),
/// printing to `out` (`suite` names the run in the summary lines). Every
/// query runs even when one fails. Errors (after the whole run): Invalid
/// naming the queries quiver failed or whose row counts differ from
/// DuckDB's; the export's and the Parquet writer's errors, Invalid for an unknown table_format / parquet_codec /
/// parquet_writer. A DuckDB side that cannot run, or refuses a query, is reported in the output (quiver's times are
/// still printed).
Status RunQueryBench(const std::string& suite, const QueryBenchOptions& options, std::shared_ptr<sql::Catalog> catalog,
                     const std::vector<BenchQuery>& queries, const std::string& work_dir,
                     const std::shared_ptr<MemoryPool>& root, std::FILE* out);

}  // namespace quiver::bench
