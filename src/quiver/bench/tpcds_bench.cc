// quiver/bench/tpcds_bench.cc — see tpcds_bench.h.
#include "quiver/bench/tpcds_bench.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "quiver/bench/measure.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/tpcds_tables.h"

namespace quiver::bench {

constexpr int kNumTpcdsQueries = 99;

Status RunTpcdsBench(const TpcdsBenchOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  std::vector<int> numbers;
  if (o.queries.empty()) {
    for (int i = 1; i <= kNumTpcdsQueries; ++i) numbers.push_back(i);
  } else {
    std::stringstream ss(o.queries);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const int n = std::atoi(item.c_str());
      if (n < 1 || n > kNumTpcdsQueries) return Status::Invalid("--queries: no TPC-DS query '" + item + "'");
      numbers.push_back(n);
    }
  }
  QUIVER_RETURN_NOT_OK(ParseThreadCounts(o.threads).status());
  std::vector<BenchQuery> queries;
  for (int n : numbers) {
    char file[16];
    std::snprintf(file, sizeof file, "%02d.sql", n);
    const std::string path = o.queries_dir + "/" + file;
    std::ifstream in(path);
    if (!in) return Status::IOError("cannot read " + path + " (--queries-dir: tests/tpcds/queries)");
    std::stringstream text;
    text << in.rdbuf();
    queries.push_back({"Q" + std::to_string(n), text.str()});
  }
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("quiver-bench-tpcds-" + std::to_string(getpid()));
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};
  auto gen_pool = root->MakeChild({.name = "generate"});
  sql::TpcdsFilesOptions to;
  to.scale = o.scale;
  to.pool = gen_pool.get();
  const auto g0 = std::chrono::steady_clock::now();
  QUIVER_ASSIGN_OR_RETURN(auto files, sql::WriteTpcdsFiles((dir / "tables").string(), to));
  auto catalog = std::make_shared<sql::Catalog>();
  // Files this run wrote itself: checked structurally, not value by value.
  for (const auto& f : files)
    QUIVER_RETURN_NOT_OK(catalog->RegisterPath(f.table, f.path, gen_pool.get(), ValidationLevel::kStructural));
  std::fprintf(out, "TPC-DS scale %g generated in %.1f s\n", o.scale, Seconds(g0, std::chrono::steady_clock::now()));
  fs::create_directories(dir / "csv");
  return RunQueryBench("tpcds", o, std::move(catalog), queries, (dir / "csv").string(), root, out);
}

}  // namespace quiver::bench
