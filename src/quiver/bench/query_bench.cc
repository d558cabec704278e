// quiver/bench/query_bench.cc — see query_bench.h.
#include "quiver/bench/query_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "quiver/base/byte_size.h"
#include "quiver/bench/duckdb_side.h"
#include "quiver/bench/measure.h"
#include "quiver/bench/parquet_tables.h"
#include "quiver/sql/engine.h"

namespace quiver::bench {
namespace {

struct QuiverTimes {
  std::vector<double> times_s;
  // Process CPU seconds per wall second of each measured round: how many
  // cores the statement kept busy (1.0 = one; a serial phase pulls a
  // two-thread run toward 1). Host steal lowers it too.
  std::vector<double> cores_busy;
  int64_t rows = 0;
  int64_t peak_bytes = 0;
};

Result<QuiverTimes> TimeQuery(const sql::Engine& engine, std::string_view sql, const QueryBenchOptions& o, int threads,
                              const std::shared_ptr<MemoryPool>& pool) {
  QuiverTimes t;
  for (int round = 0; round <= o.rounds; ++round) {
    auto statement_pool = pool->MakeChild({.name = "bench-query"});
    sql::ExecuteOptions eo;
    eo.pool = statement_pool.get();
    eo.memory_mode = o.memory_mode;
    eo.threads = threads;
    eo.memory_limit_bytes = o.memory_limit_bytes;
    eo.join_filters = o.join_filters;
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = ProcessCpuSeconds();
    int64_t rows = 0;
    {
      QUIVER_ASSIGN_OR_RETURN(auto stream, engine.Execute(sql, eo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
        if (!b) break;
        rows += b->num_rows;
      }
    }
    const double s = Seconds(t0, std::chrono::steady_clock::now());
    const double cpu = ProcessCpuSeconds() - cpu0;
    if (round > 0) {  // round 0 warms the page cache and allocator
      t.times_s.push_back(s);
      t.cores_busy.push_back(s > 0 ? cpu / s : 0);
    }
    t.rows = rows;
    t.peak_bytes = std::max(t.peak_bytes, statement_pool->peak_bytes());
  }
  return t;
}

struct Measured {
  std::string query;
  int threads = 0;
  double quiver_s = -1, duckdb_s = -1, ratio = 0, speedup = 0, duck_speedup = 0, cores = 0, duck_cpu = -1;
  int64_t peak_bytes = 0, duck_growth = -1, rows = 0;
};

void PrintSummary(const std::string& suite, int threads, int first_threads, bool first, const std::vector<Measured>& ms,
                  std::FILE* out) {
  double log_sum = 0, log_speedup = 0, log_duck_speedup = 0;
  double duck_cpu_total = 0;  // node's CPU seconds while quiver's rounds ran
  double quiver_total = 0, duck_total = 0;
  int ratios = 0, speedups = 0, duck_speedups = 0;
  for (const Measured& m : ms) {
    if (m.duck_cpu > 0) duck_cpu_total += m.duck_cpu;
    if (m.ratio > 0) {
      log_sum += std::log(m.ratio);
      ++ratios;
      quiver_total += m.quiver_s;
      duck_total += m.duckdb_s;
    }
    if (!first && m.speedup > 0) {
      log_speedup += std::log(m.speedup);
      ++speedups;
    }
    if (!first && m.duck_speedup > 0) {
      log_duck_speedup += std::log(m.duck_speedup);
      ++duck_speedups;
    }
  }
  const char* s = suite.c_str();
  if (duck_cpu_total > 0)
    std::fprintf(out, "%s threads=%d: DuckDB's process used %.2f CPU s while quiver's rounds ran\n", s, threads,
                 duck_cpu_total);
  if (ratios > 0) {
    std::vector<const Measured*> worst;
    for (const Measured& m : ms)
      if (m.ratio > 0) worst.push_back(&m);
    std::sort(worst.begin(), worst.end(), [](const Measured* a, const Measured* b) { return a->ratio < b->ratio; });
    std::string list;
    for (size_t i = 0; i < worst.size() && i < 10; ++i) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.3f/%.3f s", i ? ", " : "", worst[i]->query.c_str(), worst[i]->quiver_s,
                    worst[i]->duckdb_s);
      list += buf;
    }
    std::fprintf(out, "%s threads=%d: slowest relative to DuckDB (quiver/DuckDB): %s\n", s, threads, list.c_str());
    std::fprintf(out, "%s threads=%d: total quiver %.3f s, DuckDB %.3f s over %d queries\n", s, threads, quiver_total,
                 duck_total, ratios);
    std::fprintf(out,
                 "%s threads=%d: geometric mean ratio DuckDB/quiver: %.3f over %d queries (lowest %.3f; > 1 means "
                 "quiver is faster)\n",
                 s, threads, std::exp(log_sum / ratios), ratios, worst[0]->ratio);
  }
  if (speedups > 0)
    std::fprintf(out, "%s threads=%d: geometric mean speed-up of quiver over threads=%d: %.3f\n", s, threads,
                 first_threads, std::exp(log_speedup / speedups));
  if (duck_speedups > 0)
    std::fprintf(out, "%s threads=%d: geometric mean speed-up of DuckDB over threads=%d: %.3f (over %d queries)\n", s,
                 threads, first_threads, std::exp(log_duck_speedup / duck_speedups), duck_speedups);
}

}  // namespace

Result<std::vector<int>> ParseThreadCounts(const std::string& threads) {
  std::vector<int> counts;
  std::stringstream ss(threads);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const int n = std::atoi(item.c_str());
    if (n < 1 || n > 256) return Status::Invalid("--threads: '" + item + "' is not a thread count (1..256)");
    counts.push_back(n);
  }
  if (counts.empty()) return Status::Invalid("--threads: no thread count");
  return counts;
}

namespace {

// The Parquet writer's options of `o` (pool: `pool`), after checking the
// table options. Errors: Invalid naming the option.
Result<parquet::WriterOptions> TableWriterOptions(const QueryBenchOptions& o, MemoryPool* pool) {
  if (o.table_format != "parquet" && o.table_format != "arrow") {
    return Status::Invalid("--format: '" + o.table_format + "' is not arrow or parquet");
  }
  if (o.parquet_writer != "duckdb" && o.parquet_writer != "quiver") {
    return Status::Invalid("--parquet-writer: '" + o.parquet_writer + "' is not duckdb or quiver");
  }
  parquet::WriterOptions wo;
  QUIVER_ASSIGN_OR_RETURN(wo.codec, parquet::ParseWriterCodec(o.parquet_codec));
  wo.row_group_rows = o.parquet_row_group_rows;
  wo.pool = pool;  // for the check; each writer gets its own pool
  QUIVER_RETURN_NOT_OK(parquet::ValidateWriterOptions(wo));
  return wo;
}

}  // namespace

Status RunQueryBench(const std::string& suite, const QueryBenchOptions& o, std::shared_ptr<sql::Catalog> catalog,
                     const std::vector<BenchQuery>& queries, const std::string& work_dir,
                     const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  QUIVER_ASSIGN_OR_RETURN(std::vector<int> thread_counts, ParseThreadCounts(o.threads));
  const bool parquet = o.table_format == "parquet";
  QUIVER_ASSIGN_OR_RETURN(parquet::WriterOptions wo, TableWriterOptions(o, root.get()));
  std::fprintf(out,
               "%s: quiver in process (memory %s, statement limit %s) vs DuckDB in process, both at threads %s, "
               "median of %d rounds after a warm-up\n",
               suite.c_str(), std::string(join::MemoryModeName(o.memory_mode)).c_str(),
               o.memory_limit_bytes > 0 ? FormatBytes(o.memory_limit_bytes).c_str() : "none", o.threads.c_str(),
               o.rounds);
  std::vector<std::string> names;
  for (const auto& t : catalog->ListTables()) names.push_back(t.name);
  const std::string parquet_dir = work_dir + "/parquet";
  auto export_pool = root->MakeChild({.name = "export"});
  // Parquet written by quiver: before DuckDB starts, which then only makes
  // views over the files (no CSV export).
  bool quiver_writes = parquet && (o.parquet_writer == "quiver" || o.no_duckdb);
  if (quiver_writes) {
    std::filesystem::create_directories(parquet_dir);
    auto write_pool = root->MakeChild({.name = "parquet-write"});
    wo.pool = write_pool.get();
    QUIVER_RETURN_NOT_OK(WriteTablesAsParquet(*catalog, parquet_dir, wo, export_pool.get()));
  }
  // DuckDB in its own process, loaded once, then asked query by query right
  // before quiver runs the same query (DuckDbSide).
  DuckDbSide duckdb;
  bool duck_ok = false;
  if (!o.no_duckdb) {
    std::vector<std::string> argv = {"node",     o.duckdb_script,         "--stdin", "--threads", o.threads,
                                     "--rounds", std::to_string(o.rounds)};
    if (!quiver_writes) {
      QUIVER_RETURN_NOT_OK(ExportForDuckDb(*catalog, work_dir, export_pool.get()));
      argv.insert(argv.end(), {"--csv-dir", work_dir, "--schema", work_dir + "/schema.json"});
    }
    if (parquet) {
      std::filesystem::create_directories(parquet_dir);
      argv.insert(argv.end(), {"--parquet-dir", parquet_dir});
      if (!quiver_writes) {
        argv.insert(argv.end(), {"--write-parquet", parquet::CodecName(wo.codec), "--row-group-size",
                                 std::to_string(wo.row_group_rows)});
      }
    }
    duck_ok = duckdb.Start(argv);
    if (!duck_ok) std::fprintf(out, "note: %s\n", duckdb.note().c_str());
    if (!duck_ok && parquet && !quiver_writes) {  // quiver writes the files after all
      quiver_writes = true;
      auto write_pool = root->MakeChild({.name = "parquet-write"});
      wo.pool = write_pool.get();
      QUIVER_RETURN_NOT_OK(WriteTablesAsParquet(*catalog, parquet_dir, wo, export_pool.get()));
    }
  }
  if (parquet) {
    QUIVER_ASSIGN_OR_RETURN(catalog, OpenParquetTables(names, parquet_dir, export_pool.get()));
    std::fprintf(out, "tables: Parquet (%s, %lld-row row groups) written by %s, scanned in place by both engines\n",
                 parquet::CodecName(wo.codec).c_str(), static_cast<long long>(wo.row_group_rows),
                 quiver_writes ? "quiver" : "DuckDB");
  }
  sql::Engine engine(catalog);
  auto pool = root->MakeChild({.name = "bench-" + suite});
  // Query by query, every thread count of a query right after the other
  // (DuckDB's rounds, then quiver's, at each): the speed-ups compare
  // measurements seconds apart, not two halves of a run minutes apart,
  // between which this shared host's speed drifts (by 15-30% here). The
  // tables are printed per thread count at the end; --json prints each
  // measurement as it is made.
  std::vector<std::vector<Measured>> table(thread_counts.size());
  std::vector<std::string> failures;
  for (const BenchQuery& q : queries) {
    for (size_t ti = 0; ti < thread_counts.size(); ++ti) {
      const int threads = thread_counts[ti];
      nlohmann::json d;
      if (duck_ok) {
        d = duckdb.Time(threads, q.name, q.sql);
        if (d.is_null()) {
          duck_ok = false;
          std::fprintf(out, "note: %s\n", duckdb.note().c_str());
        } else if (d.contains("error")) {
          std::fprintf(out, "note: DuckDB refused %s: %s\n", q.name.c_str(),
                       d.value("error", std::string()).substr(0, 200).c_str());
          d = nullptr;
        }
      }
      // node may still be working after its answer (freeing the result,
      // its garbage collector): let it finish, then stop it while quiver's
      // rounds run, and count what it used meanwhile (0 expected).
      if (!d.is_null()) duckdb.WaitUntilIdle(300);
      const double duck_cpu0 = d.is_null() ? -1 : duckdb.CpuSeconds();
      if (!d.is_null()) duckdb.Pause();
      auto timed = TimeQuery(engine, q.sql, o, threads, pool);
      duckdb.Resume();
      Measured m;
      m.query = q.name;
      m.threads = threads;
      if (duck_cpu0 >= 0) m.duck_cpu = duckdb.CpuSeconds() - duck_cpu0;
      if (!d.is_null()) {
        m.duckdb_s = d.value("median_s", -1.0);
        m.duck_growth = d.value("peak_rss_growth_bytes", int64_t{-1});
      }
      if (!timed.ok()) {
        failures.push_back(q.name + " (threads=" + std::to_string(threads) + "): " + timed.status().ToString());
        std::fprintf(out, "note: quiver failed %s: %s\n", q.name.c_str(), timed.status().ToString().c_str());
      } else {
        const QuiverTimes& t = *timed;
        m.quiver_s = Median(t.times_s);
        m.peak_bytes = t.peak_bytes;
        m.rows = t.rows;
        m.cores = Median(t.cores_busy);
        const int64_t drows = d.is_null() ? -1 : d.value("rows", int64_t{-1});
        if (!d.is_null() && drows != t.rows)
          failures.push_back(q.name + ": quiver returned " + std::to_string(t.rows) + " rows, DuckDB " +
                             std::to_string(drows));
      }
      m.ratio = m.duckdb_s > 0 && m.quiver_s > 0 ? m.duckdb_s / m.quiver_s : 0;
      if (ti > 0 && m.quiver_s > 0) {
        const Measured& first = table[0].back();  // this query at the first thread count
        m.speedup = first.quiver_s > 0 ? first.quiver_s / m.quiver_s : 0;
        // DuckDB's own speed-up over the same thread counts: what this
        // machine's cores give a peer at the moment (shared hosts vary).
        if (m.duckdb_s > 0 && first.duckdb_s > 0) m.duck_speedup = first.duckdb_s / m.duckdb_s;
      }
      if (o.json) {
        nlohmann::json j = {{"query", q.name},
                            {"threads", threads},
                            {"quiver_median_s", m.quiver_s},
                            {"quiver_times_s", timed.ok() ? timed->times_s : std::vector<double>{}},
                            {"duckdb_median_s", m.duckdb_s},
                            {"ratio", m.ratio},
                            {"speedup", m.speedup},
                            {"quiver_peak_bytes", m.peak_bytes},
                            {"duckdb_peak_rss_growth_bytes", m.duck_growth},
                            {"rows", m.rows},
                            {"quiver_cores_busy", m.cores},
                            {"duckdb_cpu_during_quiver_s", m.duck_cpu}};
        std::fprintf(out, "%s\n", j.dump().c_str());
        std::fflush(out);
      }
      table[ti].push_back(m);
    }
  }
  for (size_t ti = 0; ti < thread_counts.size(); ++ti) {
    const int threads = thread_counts[ti];
    if (!o.json) {
      std::fprintf(out, "threads=%d\n", threads);
      std::fprintf(out, "%-5s %10s %10s %8s %8s %12s %12s %10s %6s\n", "query", "quiver_s", "duckdb_s", "ratio",
                   "speedup", "quiver_peak", "duckdb_rss+", "rows", "cores");
      for (const Measured& m : table[ti]) {
        std::fprintf(out, "%-5s %10.4f %10.4f %8.2f %8.2f %12s %12s %10lld %6.2f\n", m.query.c_str(), m.quiver_s,
                     m.duckdb_s, m.ratio, m.speedup, FormatBytes(m.peak_bytes).c_str(),
                     m.duck_growth >= 0 ? FormatBytes(m.duck_growth).c_str() : "-", static_cast<long long>(m.rows),
                     m.cores);
      }
    }
    PrintSummary(suite, threads, thread_counts[0], ti == 0, table[ti], out);
  }
  if (!failures.empty()) {
    std::string text = std::to_string(failures.size()) + " failed:";
    for (const auto& f : failures) text += "\n  " + f;
    return Status::Invalid(suite + ": " + text);
  }
  return Status::OK();
}

Result<std::vector<int>> ParseQueryNumbers(const std::string& list, int count, const std::string& suite) {
  std::vector<int> numbers;
  if (list.empty()) {
    for (int i = 1; i <= count; ++i) numbers.push_back(i);
    return numbers;
  }
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const int n = std::atoi(item.c_str());
    if (n < 1 || n > count) return Status::Invalid("--queries: no " + suite + " query '" + item + "'");
    numbers.push_back(n);
  }
  return numbers;
}

Status RunGeneratedQueryBench(const std::string& suite, const std::string& label, const QueryBenchOptions& o,
                              const TableGenerator& generate, const std::vector<BenchQuery>& queries,
                              const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  QUIVER_RETURN_NOT_OK(ParseThreadCounts(o.threads).status());
  QUIVER_RETURN_NOT_OK(TableWriterOptions(o, root.get()).status());  // before the tables are generated
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("quiver-bench-" + suite + "-" + std::to_string(getpid()));
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};
  auto gen_pool = root->MakeChild({.name = "generate"});
  const auto g0 = std::chrono::steady_clock::now();
  QUIVER_ASSIGN_OR_RETURN(auto files, generate((dir / "tables").string(), gen_pool.get()));
  auto catalog = std::make_shared<sql::Catalog>();
  // Files this run wrote itself: checked structurally (as `quiver sql
  // --tpch` does), not value by value as untrusted files are.
  for (const auto& f : files)
    QUIVER_RETURN_NOT_OK(catalog->RegisterPath(f.table, f.path, gen_pool.get(), ValidationLevel::kStructural));
  std::fprintf(out, "%s generated in %.1f s\n", label.c_str(), Seconds(g0, std::chrono::steady_clock::now()));
  fs::create_directories(dir / "csv");
  return RunQueryBench(suite, o, std::move(catalog), queries, (dir / "csv").string(), root, out);
}

}  // namespace quiver::bench
