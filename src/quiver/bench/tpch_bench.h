// quiver/bench/tpch_bench.h — `quiver bench tpch`: the 22 TPC-H queries
// (sql/tpch_queries.h) in process on quiver's engine and in process on
// DuckDB (bench/tpch_duckdb.mjs under node, loading the same generated
// data as CSV with quiver's types), side by side in one run, at each thread
// count of TpchBenchOptions::threads (both engines at the same count):
// median of R rounds after one warm-up per query, the ratio DuckDB time /
// quiver time (> 1: quiver is faster), geometric means, quiver's speed-up
// over its first thread count, and quiver's statement pool peak per query.
// Row counts must agree between the engines.
//
// Thread safety: one run at a time per root pool.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

struct TpchBenchOptions {
  double scale = 1;           ///< TPC-H scale factor
  int rounds = 3;             ///< measured rounds per query (median)
  std::string threads = "1";  ///< comma-separated thread counts, each run by both engines (e.g. "1,2")
  join::MemoryMode memory_mode = join::MemoryMode::kOnHeap;
  bool json = false;          ///< one JSON object per query instead of the table
  bool no_duckdb = false;     ///< quiver's side only
  std::string duckdb_script;  ///< bench/tpch_duckdb.mjs
  std::string queries;        ///< comma-separated query numbers (empty: all 22)
  /// quiver's statement memory limit (-1: none); past it operators spill
  /// (sql::ExecuteOptions::spill), so the table shows the out-of-core times.
  int64_t memory_limit_bytes = -1;
};

/// Runs the benchmark, printing to `out`. Errors: the generator's, the
/// engine's (a query that fails), Invalid when the engines' row counts
/// differ. A DuckDB side that cannot run is reported in the output (quiver's
/// times are still printed).
Status RunTpchBench(const TpchBenchOptions& options, const std::shared_ptr<MemoryPool>& root, std::FILE* out);

}  // namespace quiver::bench
