// quiver/bench/tpch_bench.cc — see tpch_bench.h.
#include "quiver/bench/tpch_bench.h"

#include <vector>

#include "quiver/sql/tpch_queries.h"
#include "quiver/sql/tpch_tables.h"

namespace quiver::bench {

Status RunTpchBench(const TpchBenchOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  QUIVER_ASSIGN_OR_RETURN(std::vector<int> numbers, ParseQueryNumbers(o.queries, sql::kNumTpchQueries, "TPC-H"));
  std::vector<BenchQuery> queries;
  for (int n : numbers) queries.push_back({"Q" + std::to_string(n), std::string(sql::TpchQueries()[n - 1].sql)});
  auto generate = [&o](const std::string& dir, MemoryPool* pool) {
    sql::TpchFilesOptions to;
    to.scale = o.scale;
    to.pool = pool;
    return sql::WriteTpchFiles(dir, to);
  };
  char label[64];
  std::snprintf(label, sizeof label, "TPC-H scale %g", o.scale);
  return RunGeneratedQueryBench("tpch", label, o, generate, queries, root, out);
}

}  // namespace quiver::bench
