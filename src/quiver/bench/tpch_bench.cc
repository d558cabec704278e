// quiver/bench/tpch_bench.cc — see tpch_bench.h.
#include "quiver/bench/tpch_bench.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "quiver/base/byte_size.h"
#include "quiver/bench/child_process.h"
#include "quiver/bench/measure.h"
#include "quiver/columnar/row_text.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_queries.h"
#include "quiver/sql/tpch_tables.h"

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

Result<QuiverTimes> TimeQuery(const sql::Engine& engine, std::string_view sql, const TpchBenchOptions& o, int threads,
                              const std::shared_ptr<MemoryPool>& pool) {
  QuiverTimes t;
  for (int round = 0; round <= o.rounds; ++round) {
    auto statement_pool = pool->MakeChild({.name = "tpch-query"});
    sql::ExecuteOptions eo;
    eo.pool = statement_pool.get();
    eo.memory_mode = o.memory_mode;
    eo.threads = threads;
    eo.memory_limit_bytes = o.memory_limit_bytes;
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

// DuckDB in its own node process (bench/tpch_duckdb.mjs --stdin), driven
// one query at a time so that each query's DuckDB rounds run right before
// quiver's: both engines see the host in the same state (its speed moved
// DuckDB's own times by up to 1.7x between runs a few minutes apart).
class DuckDbSide {
 public:
  ~DuckDbSide() { Stop(); }
  // Starts node and waits until the tables are loaded; false (with note())
  // when it could not.
  bool Start(const std::vector<std::string>& argv) {
    signal(SIGPIPE, SIG_IGN);  // a node that died makes write() fail, not kill us
    auto pid = SpawnWithPipes(argv, &in_, &out_);
    if (!pid.ok()) return Fail("could not start node: " + pid.status().ToString());
    pid_ = *pid;
    std::string line, text;
    while (ReadLine(&line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object() && j.value("ready", false)) return true;
      if (text.size() < 300) text += line + " ";
    }
    return Fail("DuckDB side failed before loading the tables: " + text.substr(0, 300));
  }
  // DuckDB's JSON line for query `name` at `threads` (null once it failed).
  nlohmann::json Time(int threads, const std::string& name, std::string sql) {
    if (pid_ < 0) return nullptr;
    for (char& c : sql)
      if (c == '\n' || c == '\t') c = ' ';
    const std::string request = std::to_string(threads) + "\t" + name + "\t" + sql + "\n";
    for (size_t done = 0; done < request.size();) {
      const ssize_t n = write(in_, request.data() + done, request.size() - done);
      if (n <= 0) {
        Fail("DuckDB side stopped taking queries");
        return nullptr;
      }
      done += static_cast<size_t>(n);
    }
    std::string line, text;
    while (ReadLine(&line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object() && j.contains("query")) return j;
      if (text.size() < 300) text += line + " ";
    }
    Fail("DuckDB side failed at " + name + ": " + text.substr(0, 300));
    return nullptr;
  }
  const std::string& note() const { return note_; }

  /// Stops node (SIGSTOP) while quiver's rounds run, so that nothing it
  /// still does takes a core from them; Resume (SIGCONT) before its next
  /// query. DuckDB's times are taken inside node around its own query, so
  /// a pause between queries changes none of them.
  void Pause() const {
    if (pid_ > 0) kill(pid_, SIGSTOP);
  }
  void Resume() const {
    if (pid_ > 0) kill(pid_, SIGCONT);
  }

  /// CPU seconds node has used so far (-1 when it is not running).
  double CpuSeconds() const { return pid_ > 0 ? ProcessCpuSecondsOf(pid_) : -1; }

  /// Waits (at most `max_ms`) until node has used no CPU over two
  /// consecutive 10 ms looks (/proc's clock-tick resolution): after its
  /// query answered, node and DuckDB's threads may still work (freeing the
  /// result, the JS garbage collector), and that work would take a core
  /// from quiver's rounds, which run right after. Returns the milliseconds
  /// waited.
  int WaitUntilIdle(int max_ms) const {
    if (pid_ <= 0) return 0;
    double last = ProcessCpuSecondsOf(pid_);
    int quiet = 0, waited = 0;
    while (quiet < 2 && waited < max_ms) {
      usleep(10 * 1000);
      waited += 10;
      const double now = ProcessCpuSecondsOf(pid_);
      quiet = now <= last ? quiet + 1 : 0;
      last = now;
    }
    return waited;
  }

 private:
  bool Fail(std::string why) {
    if (note_.empty()) note_ = std::move(why);
    Stop();
    return false;
  }
  void Stop() {
    if (in_ >= 0) close(in_);
    in_ = -1;
    if (pid_ > 0) {
      std::string rest;
      while (ReadLine(&rest)) {
      }
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    pid_ = -1;
    if (out_ >= 0) close(out_);
    out_ = -1;
  }
  bool ReadLine(std::string* line) {
    while (true) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        *line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return true;
      }
      if (out_ < 0) return false;
      char buf[4096];
      const ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) return false;
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_, note_;
};

Status ExportCsv(const sql::Catalog& catalog, const std::string& dir, MemoryPool* pool) {
  for (const auto& table : catalog.ListTables()) {
    const std::string path = dir + "/" + table.name + ".csv";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return Status::IOError("cannot write " + path);
    RowTextWriter w(RowTextFormat::kCsv, f);
    w.WriteHeader(*table.schema);
    auto scan = catalog.OpenScan(table, pool);
    if (!scan.ok()) {
      std::fclose(f);
      return scan.status();
    }
    while (true) {
      auto b = (*scan)->Next();
      if (!b.ok()) {
        std::fclose(f);
        return b.status();
      }
      if (!*b) break;
      w.WriteRows(**b);
    }
    std::fclose(f);
  }
  return Status::OK();
}

}  // namespace

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
  std::vector<int> thread_counts;
  {
    std::stringstream ss(o.threads);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const int n = std::atoi(item.c_str());
      if (n < 1 || n > 256) return Status::Invalid("--threads: '" + item + "' is not a thread count (1..256)");
      thread_counts.push_back(n);
    }
    if (thread_counts.empty()) return Status::Invalid("--threads: no thread count");
  }
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
  std::fprintf(
      out,
      "TPC-H scale %g generated in %.1f s; quiver in process (memory %s, statement limit %s) vs DuckDB in "
      "process, both at threads %s, median of %d rounds after a warm-up\n",
      o.scale, Seconds(g0, std::chrono::steady_clock::now()), std::string(join::MemoryModeName(o.memory_mode)).c_str(),
      o.memory_limit_bytes > 0 ? FormatBytes(o.memory_limit_bytes).c_str() : "none", o.threads.c_str(), o.rounds);
  // DuckDB in its own process, loaded once, then asked query by query right
  // before quiver runs the same query (DuckDbSide).
  DuckDbSide duckdb;
  bool duck_ok = false;
  if (!o.no_duckdb) {
    fs::create_directories(dir / "csv");
    QUIVER_RETURN_NOT_OK(ExportCsv(*catalog, (dir / "csv").string(), gen_pool.get()));
    duck_ok = duckdb.Start({"node", o.duckdb_script, "--csv-dir", (dir / "csv").string(), "--stdin", "--threads",
                            o.threads, "--rounds", std::to_string(o.rounds)});
    if (!duck_ok) std::fprintf(out, "note: %s\n", duckdb.note().c_str());
  }
  sql::Engine engine(catalog);
  auto pool = root->MakeChild({.name = "bench-tpch"});
  // Query by query, every thread count of a query right after the other
  // (DuckDB's rounds, then quiver's, at each): the speed-ups compare
  // measurements seconds apart, not two halves of a run minutes apart,
  // between which this shared host's speed drifts (by 15-30% here). The
  // tables are printed per thread count at the end; --json prints each
  // measurement as it is made.
  struct Measured {
    int query = 0;
    int threads = 0;
    double quiver_s = 0, duckdb_s = -1, ratio = 0, speedup = 1, duck_speedup = 0, cores = 0, duck_cpu = -1;
    int64_t peak_bytes = 0, duck_growth = -1, rows = 0;
  };
  std::vector<std::vector<Measured>> table(thread_counts.size());
  for (int n : numbers) {
    for (size_t ti = 0; ti < thread_counts.size(); ++ti) {
      const int threads = thread_counts[ti];
      nlohmann::json d;
      if (duck_ok) {
        d = duckdb.Time(threads, "q" + std::to_string(n), std::string(sql::TpchQueries()[n - 1].sql));
        if (d.is_null()) {
          duck_ok = false;
          std::fprintf(out, "note: %s\n", duckdb.note().c_str());
        }
      }
      // node may still be working after its answer (freeing the result,
      // its garbage collector): let it finish, then stop it while quiver's
      // rounds run, and count what it used meanwhile (0 expected).
      if (!d.is_null()) duckdb.WaitUntilIdle(300);
      const double duck_cpu0 = d.is_null() ? -1 : duckdb.CpuSeconds();
      if (!d.is_null()) duckdb.Pause();
      auto timed = TimeQuery(engine, sql::TpchQueries()[n - 1].sql, o, threads, pool);
      duckdb.Resume();
      QUIVER_ASSIGN_OR_RETURN(QuiverTimes t, std::move(timed));
      Measured m;
      m.query = n;
      m.threads = threads;
      if (duck_cpu0 >= 0) m.duck_cpu = duckdb.CpuSeconds() - duck_cpu0;
      m.quiver_s = Median(t.times_s);
      m.peak_bytes = t.peak_bytes;
      m.rows = t.rows;
      m.cores = Median(t.cores_busy);
      if (!d.is_null()) {
        m.duckdb_s = d.value("median_s", -1.0);
        m.duck_growth = d.value("peak_rss_growth_bytes", int64_t{-1});
        const int64_t drows = d.value("rows", int64_t{-1});
        if (drows != t.rows)
          return Status::Invalid("TPC-H Q" + std::to_string(n) + ": quiver returned " + std::to_string(t.rows) +
                                 " rows, DuckDB " + std::to_string(drows));
      }
      m.ratio = m.duckdb_s > 0 && m.quiver_s > 0 ? m.duckdb_s / m.quiver_s : 0;
      if (ti > 0) {
        const Measured& first = table[0].back();  // this query at the first thread count
        m.speedup = m.quiver_s > 0 ? first.quiver_s / m.quiver_s : 0;
        // DuckDB's own speed-up over the same thread counts: what this
        // machine's cores give a peer at the moment (shared hosts vary).
        if (m.duckdb_s > 0 && first.duckdb_s > 0) m.duck_speedup = first.duckdb_s / m.duckdb_s;
      }
      if (o.json) {
        nlohmann::json j = {{"query", n},
                            {"threads", threads},
                            {"quiver_median_s", m.quiver_s},
                            {"quiver_times_s", t.times_s},
                            {"duckdb_median_s", m.duckdb_s},
                            {"ratio", m.ratio},
                            {"speedup", m.speedup},
                            {"quiver_peak_bytes", m.peak_bytes},
                            {"duckdb_peak_rss_growth_bytes", m.duck_growth},
                            {"rows", m.rows},
                            {"quiver_cores_busy", m.cores},
                            {"duckdb_cpu_during_quiver_s", m.duck_cpu},
                            {"scale", o.scale}};
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
    }
    double log_sum = 0, log_speedup = 0, log_duck_speedup = 0;
    double duck_cpu_total = 0;  // node's CPU seconds while quiver's rounds ran
    int ratios = 0, speedups = 0, duck_speedups = 0;
    double min_ratio = 1e300;
    for (const Measured& m : table[ti]) {
      if (m.duck_cpu > 0) duck_cpu_total += m.duck_cpu;
      if (m.ratio > 0) {
        log_sum += std::log(m.ratio);
        ++ratios;
        min_ratio = std::min(min_ratio, m.ratio);
      }
      if (ti > 0 && m.speedup > 0) {
        log_speedup += std::log(m.speedup);
        ++speedups;
      }
      if (ti > 0 && m.duck_speedup > 0) {
        log_duck_speedup += std::log(m.duck_speedup);
        ++duck_speedups;
      }
      if (!o.json) {
        std::fprintf(out, "Q%-4d %10.4f %10.4f %8.2f %8.2f %12s %12s %10lld %6.2f\n", m.query, m.quiver_s, m.duckdb_s,
                     m.ratio, m.speedup, FormatBytes(m.peak_bytes).c_str(),
                     m.duck_growth >= 0 ? FormatBytes(m.duck_growth).c_str() : "-", static_cast<long long>(m.rows),
                     m.cores);
      }
    }
    if (duck_cpu_total > 0) {
      std::fprintf(out, "threads=%d: DuckDB's process used %.2f CPU s while quiver's rounds ran\n", threads,
                   duck_cpu_total);
    }
    if (ratios > 0) {
      std::fprintf(out,
                   "threads=%d: geometric mean ratio DuckDB/quiver: %.3f over %d queries (lowest %.3f; > 1 means "
                   "quiver is faster)\n",
                   threads, std::exp(log_sum / ratios), ratios, min_ratio);
    }
    if (speedups > 0) {
      std::fprintf(out, "threads=%d: geometric mean speed-up of quiver over threads=%d: %.3f\n", threads,
                   thread_counts[0], std::exp(log_speedup / speedups));
    }
    if (duck_speedups > 0) {
      std::fprintf(out, "threads=%d: geometric mean speed-up of DuckDB over threads=%d: %.3f (over %d queries)\n",
                   threads, thread_counts[0], std::exp(log_duck_speedup / duck_speedups), duck_speedups);
    }
  }
  return Status::OK();
}

}  // namespace quiver::bench
