// quiver/bench/tpch_bench.cc — see tpch_bench.h.
#include "quiver/bench/tpch_bench.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <vector>

#include "quiver/bench/measure.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_queries.h"
#include "quiver/sql/tpch_tables.h"

namespace quiver::bench {

Status RunTpchBench(const TpchBenchOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  std::vector<int> numbers;
  if (o.queries.empty()) {
    for (int i = 1; i <= sql::kNumTpchQueries; ++i) numbers.push_back(i);
  } else {
    std::stringstream ss(o.queries);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const int n = std::atoi(item.c_str());
      if (n < 1 || n > sql::kNumTpchQueries) return Status::Invalid("--queries: no TPC-H query '" + item + "'");
      numbers.push_back(n);
    }
  }
  QUIVER_RETURN_NOT_OK(ParseThreadCounts(o.threads).status());
  std::vector<BenchQuery> queries;
  for (int n : numbers) queries.push_back({"Q" + std::to_string(n), std::string(sql::TpchQueries()[n - 1].sql)});
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("quiver-bench-tpch-" + std::to_string(getpid()));
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};
  auto gen_pool = root->MakeChild({.name = "generate"});
  sql::TpchFilesOptions to;
  to.scale = o.scale;
  to.pool = gen_pool.get();
  const auto g0 = std::chrono::steady_clock::now();
  QUIVER_ASSIGN_OR_RETURN(auto files, sql::WriteTpchFiles((dir / "tables").string(), to));
  auto catalog = std::make_shared<sql::Catalog>();
  // Files this run wrote itself: checked structurally (as `quiver sql --tpch`
  // does), not value by value as untrusted files are.
  for (const auto& f : files)
    QUIVER_RETURN_NOT_OK(catalog->RegisterPath(f.table, f.path, gen_pool.get(), ValidationLevel::kStructural));
  std::fprintf(out, "TPC-H scale %g generated in %.1f s\n", o.scale, Seconds(g0, std::chrono::steady_clock::now()));
  fs::create_directories(dir / "csv");
  return RunQueryBench("tpch", o, std::move(catalog), queries, (dir / "csv").string(), root, out);
}

}  // namespace quiver::bench
