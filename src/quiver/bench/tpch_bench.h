// quiver/bench/tpch_bench.h — `quiver bench tpch`: the 22 TPC-H queries
// (sql/tpch_queries.h) over freshly generated tables, in process on quiver's
// engine and on DuckDB side by side (quiver/bench/query_bench.h says what is
// measured and printed).
//
// Thread safety: one run at a time per root pool.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/bench/query_bench.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

struct TpchBenchOptions : QueryBenchOptions {
  double scale = 1;     ///< TPC-H scale factor
  std::string queries;  ///< comma-separated query numbers (empty: all 22)
};

/// Runs the benchmark, printing to `out`. Errors: the generator's, the
/// engine's (a query that fails) and Invalid when the engines' row counts
/// differ, after the whole run (RunQueryBench). A DuckDB side that cannot run is reported in the output (quiver's
/// times are still printed).
Status RunTpchBench(const TpchBenchOptions& options, const std::shared_ptr<MemoryPool>& root, std::FILE* out);

}  // namespace quiver::bench
