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
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"

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
};

/// One query of a suite: its name in the output ("q7") and its text.
struct BenchQuery {
  std::string name;
  std::string sql;
};

/// Parses "1,2" into thread counts (each 1..256). Errors: Invalid.
Result<std::vector<int>> ParseThreadCounts(const std::string& threads);

/// Runs `queries` over the tables of `catalog` (for DuckDB exported as CSV
/// under `work_dir`, which must exist and is left to the caller to remove),
/// printing to `out` (`suite` names the run in the summary lines). Every
/// query runs even when one fails. Errors (after the whole run): Invalid
/// naming the queries quiver failed or whose row counts differ from
/// DuckDB's; the export's errors. A DuckDB side that cannot run, or refuses
/// a query, is reported in the output (quiver's times are still printed).
Status RunQueryBench(const std::string& suite, const QueryBenchOptions& options, std::shared_ptr<sql::Catalog> catalog,
                     const std::vector<BenchQuery>& queries, const std::string& work_dir,
                     const std::shared_ptr<MemoryPool>& root, std::FILE* out);

}  // namespace quiver::bench
