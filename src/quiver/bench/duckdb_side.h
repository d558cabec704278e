// quiver/bench/duckdb_side.h — DuckDB as the peer of the in-process query
// benchmarks (`quiver bench tpch`, `quiver bench tpcds`): a node process
// running bench/tpch_duckdb.mjs --stdin over the same tables exported as CSV
// with their column types (ExportForDuckDb), asked one query at a time so
// that each query's DuckDB rounds run right before quiver's and both engines
// see the host in the same state (its speed moved DuckDB's own times by up
// to 1.7x between runs a few minutes apart).
//
// Thread safety: a DuckDbSide is used by one thread.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"

namespace quiver::bench {

/// Writes every table of `catalog` as `<dir>/<table>.csv` (a header line,
/// RowTextFormat::kCsv) and `<dir>/schema.json`, {table: {column: DuckDB
/// type}} (int32 INTEGER, int64 BIGINT, utf8 VARCHAR, date32 DATE,
/// decimal(p, s) DECIMAL(p,s), float64 DOUBLE, bool BOOLEAN), which
/// tpch_duckdb.mjs --schema loads them with. `dir` must exist. Errors:
/// IOError naming a file it cannot write; the scans' errors; Invalid for a
/// column type outside that list.
Status ExportForDuckDb(const sql::Catalog& catalog, const std::string& dir, MemoryPool* pool);

/// The DuckDB node process. Not copyable; the destructor closes its stdin
/// and waits for it.
class DuckDbSide {
 public:
  DuckDbSide() = default;
  DuckDbSide(const DuckDbSide&) = delete;
  DuckDbSide& operator=(const DuckDbSide&) = delete;
  ~DuckDbSide() { Stop(); }

  /// Starts `argv` (node and its script) and waits until it printed
  /// {"ready": true}; false (with note()) when it could not.
  bool Start(const std::vector<std::string>& argv);
  /// DuckDB's JSON line for query `name` at `threads`: {"query", "threads",
  /// "rows", "times_s", "median_s", "peak_rss_growth_bytes"} or, when DuckDB
  /// refused the query, {"query", "error"}. null once the process failed
  /// (note() says why; later calls return null too).
  nlohmann::json Time(int threads, const std::string& name, const std::string& sql);
  /// Why the side stopped (empty while it runs).
  const std::string& note() const { return note_; }

  /// Stops node (SIGSTOP) while quiver's rounds run, so that nothing it
  /// still does takes a core from them; Resume (SIGCONT) before its next
  /// query. DuckDB's times are taken inside node around its own query, so
  /// a pause between queries changes none of them.
  void Pause() const;
  void Resume() const;

  /// CPU seconds node has used so far (-1 when it is not running).
  double CpuSeconds() const;

  /// Waits (at most `max_ms`) until node has used no CPU over two
  /// consecutive 10 ms looks (/proc's clock-tick resolution): after its
  /// query answered, node and DuckDB's threads may still work (freeing the
  /// result, the JS garbage collector), and that work would take a core
  /// from quiver's rounds, which run right after. Returns the milliseconds
  /// waited.
  int WaitUntilIdle(int max_ms) const;

 private:
  bool Fail(std::string why);
  void Stop();
  bool ReadLine(std::string* line);
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_, note_;
};

}  // namespace quiver::bench
