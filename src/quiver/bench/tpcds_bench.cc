// quiver/bench/tpcds_bench.cc — see tpcds_bench.h.
#include "quiver/bench/tpcds_bench.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "quiver/sql/tpcds_tables.h"

namespace quiver::bench {

constexpr int kNumTpcdsQueries = 99;

Status RunTpcdsBench(const TpcdsBenchOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  QUIVER_ASSIGN_OR_RETURN(std::vector<int> numbers, ParseQueryNumbers(o.queries, kNumTpcdsQueries, "TPC-DS"));
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
  auto generate = [&o](const std::string& dir, MemoryPool* pool) {
    sql::TpcdsFilesOptions to;
    to.scale = o.scale;
    to.pool = pool;
    return sql::WriteTpcdsFiles(dir, to);
  };
  char label[64];
  std::snprintf(label, sizeof label, "TPC-DS scale %g", o.scale);
  return RunGeneratedQueryBench("tpcds", label, o, generate, queries, root, out);
}

}  // namespace quiver::bench
