// quiver/bench/fetch_bench.cc — see fetch_bench.h.
#include "quiver/bench/fetch_bench.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "quiver/base/byte_size.h"
#include "quiver/bench/child_process.h"
#include "quiver/bench/curl_links.h"
#include "quiver/bench/generated_stream.h"
#include "quiver/bench/measure.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/protocol_client.h"

namespace quiver::bench {
namespace {

using json = nlohmann::ordered_json;
constexpr double kMiB = 1024.0 * 1024.0;

double Since(Clock::time_point t0) { return Seconds(t0, Clock::now()); }

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json RowObject(const FetchBenchRow& r) {
  json j = json::object();
  j["case"] = r.kase;
  j["policy"] = r.policy ? json(*r.policy) : json(nullptr);
  j["table_mib"] = Opt(r.table_mib);
  j["peak_rss_increase_mib"] = Opt(r.peak_mib);
  j["peak_to_table"] = Opt(r.peak_to_table);
  j["seconds"] = Opt(r.seconds);
  j["mb_per_s"] = Opt(r.mb_per_s);
  j["curl_seconds"] = Opt(r.curl_s);
  j["curl_ratio"] = Opt(r.curl_ratio);
  j["node_seconds"] = Opt(r.node_s);
  j["node_ratio"] = Opt(r.node_ratio);
  j["rows_per_s"] = Opt(r.rows_per_s);
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

std::string Cell(const std::optional<double>& v, const char* fmt) {
  if (!v) return "-";
  char b[64];
  std::snprintf(b, sizeof b, fmt, *v);
  return b;
}

}  // namespace

Result<FetchClientMeasurement> RunFetchClient(const FetchClientOptions& o, const std::shared_ptr<MemoryPool>& root) {
  fetch::ConnectionOptions conn;
  conn.server_url = o.server_url;
  conn.token = o.token;
  conn.ca_cert_path = o.ca_cert_path;
  conn.poll_initial_ms = 5;
  auto pool = root->MakeChild({.name = "fetch"});
  const bool keep = o.mode != "stream";
  const int rounds = o.mode == "repeat" ? o.repeat : 1;
  FetchClientMeasurement m;
  // Baseline: resident bytes just before the first fetch; the high-water
  // mark is reset to it (clear_refs 5) when the kernel allows.
  m.rss_baseline_bytes = ProcStatusBytes("VmRSS");
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  fetch::ResetMappingPeak();
  const auto t0 = Clock::now();
  for (int k = 0; k < rounds; ++k) {
    fetch::FetchOptions fo;
    fo.download.pool = pool.get();
    QUIVER_ASSIGN_OR_RETURN(fo.download.policy, fetch::ParseChunkPolicy(o.policy));
    fo.download.window_bytes = o.window_bytes;
    fo.download.parallel = o.parallel;
    fo.download.verify_lz4_checksums = o.verify_lz4_checksums;
    FetchClientRun run;
    const auto tr = Clock::now();
    {
      std::vector<RecordBatchPtr> kept;
      QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, o.sql, fo));
      for (;;) {
        QUIVER_ASSIGN_OR_RETURN(auto b, result->Next());
        if (!b) break;
        run.rows += b->num_rows;
        if (keep) kept.push_back(std::move(b));
      }
      if (const fetch::DownloadStats* s = result->download_stats()) {
        m.decoded_bytes = s->bytes_decoded.load();
        m.wire_bytes = s->bytes_downloaded.load();
        m.window_peak_bytes = std::max<int64_t>(m.window_peak_bytes, s->window_peak_bytes.load());
      }
    }  // every batch and the result released before the next round
    run.seconds = Since(tr);
    run.held_after_bytes = pool->held_bytes();
    m.runs.push_back(run);
  }
  m.seconds = Since(t0);
  m.hwm_bytes = ProcStatusBytes("VmHWM");
  m.peak_rss_increase_bytes = m.hwm_bytes - m.rss_baseline_bytes;
  m.pool_peak_bytes = pool->peak_bytes();
  m.held_after_bytes = pool->held_bytes();
  m.mapped_peak_bytes = fetch::GetMappingStats().peak_mapped_bytes;
  return m;
}

std::string FetchClientJson(const FetchClientMeasurement& m) {
  json runs = json::array();
  for (const auto& r : m.runs) {
    runs.push_back({{"rows", r.rows}, {"seconds", r.seconds}, {"held_after", r.held_after_bytes}});
  }
  json out = {{"rows", runs.empty() ? json(0) : runs.back()["rows"]},
              {"runs", runs},
              {"seconds", m.seconds},
              {"decoded_bytes", m.decoded_bytes},
              {"wire_bytes", m.wire_bytes},
              {"rss_baseline", m.rss_baseline_bytes},
              {"hwm", m.hwm_bytes},
              {"peak_rss_increase", m.peak_rss_increase_bytes},
              {"pool_peak", m.pool_peak_bytes},
              {"held_after", m.held_after_bytes},
              {"mapped_peak", m.mapped_peak_bytes},
              {"window_peak", m.window_peak_bytes}};
  return out.dump();
}

Result<FetchBenchResult> RunFetchBench(const FetchBenchOptions& o, const std::shared_ptr<MemoryPool>& root,
                                       std::FILE* log) {
  QUIVER_ASSIGN_OR_RETURN(const int64_t window_bytes, ParseBytes(o.window));
  const int64_t target = static_cast<int64_t>(o.scale_gib * kMiB * 1024);
  if (target < (int64_t{1} << 20)) return Status::Invalid("bench fetch: --scale below 1 MiB");
  const std::string& self = o.quiver_path;
  std::string dir = o.keep_dir;
  if (dir.empty()) {
    char dir_template[] = "/tmp/quiver-bench-fetch-XXXXXX";
    if (!mkdtemp(dir_template)) return Status::IOError("bench fetch: mkdtemp failed");
    dir = dir_template;
  }
  struct Cleanup {
    std::string dir;
    bool keep;
    ~Cleanup() {
      if (!keep) std::system(("rm -rf '" + dir + "'").c_str());
    }
  } cleanup{dir, !o.keep_dir.empty()};
  FetchBenchResult res;
  auto fail = [&](const std::string& what) {
    res.failures.push_back(what);
    std::fprintf(log, "bench fetch: CHECK FAILED: %s\n", what.c_str());
  };

  // 1. The table: lineitem batches until `target` IPC bytes are written.
  const std::string table = dir + "/lineitem.arrows";
  int64_t& table_rows = res.table_rows;
  const auto tg = Clock::now();
  {
    auto gen_pool = root->MakeChild({.name = "gen"});
    datagen::GenOptions go;
    go.kind = datagen::GenKind::kLineitem;
    go.num_rows = target / 64 + 1000;  // more than enough: stops by bytes
    go.max_bytes_per_batch = 4 << 20;
    go.pool = gen_pool.get();
    QUIVER_ASSIGN_OR_RETURN(table_rows, WriteGeneratedStream(go, table, target));
  }
  std::fprintf(log, "bench fetch: generated lineitem, %lld rows, in %.1f s\n", static_cast<long long>(table_rows),
               Since(tg));

  // 2. The server, a child process.
  const std::string token = "bench-fetch-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
  setenv("QUIVER_TOKEN", token.c_str(), 1);
  ServerProcess server;
  QUIVER_RETURN_NOT_OK(
      StartServer({self, "serve", "--port", "0", "--cert-dir", dir, "--table", "lineitem=" + table, "--chunk-bytes",
                   std::to_string(o.chunk_bytes), "--store-budget", std::to_string(int64_t{6} << 30), "--spill-dir",
                   dir, "--max-links-per-fetch", "32", "--inline-threshold-bytes", "0"},
                  &server));
  const std::string sql = "SELECT * FROM lineitem";
  // Warm-up, not measured: the statement runs once, so that the first
  // measured case does not pay alone for the server's first scan (the
  // table's pages mapped, its heap grown) and every case, curl's included,
  // meets the same server.
  fetch::ConnectionOptions protocol;  // the warm-up's and curl's link collection
  protocol.server_url = server.url();
  protocol.token = token;
  protocol.ca_cert_path = server.cert;
  protocol.poll_initial_ms = 5;
  {
    const auto tw = Clock::now();
    QUIVER_ASSIGN_OR_RETURN(auto pc, fetch::ProtocolClient::Connect(protocol));
    QUIVER_ASSIGN_OR_RETURN(auto st, pc->Execute(sql));
    QUIVER_RETURN_NOT_OK(CollectLinks(pc.get(), st).status());
    QUIVER_RETURN_NOT_OK(pc->CloseOperation(st.operation));
    std::fprintf(log, "bench fetch: warm-up statement (not measured) in %.2f s\n", Since(tw));
  }
  const int64_t small_rows = table_rows / 2;
  const std::string sql_small = "SELECT * FROM lineitem LIMIT " + std::to_string(small_rows);

  auto client = [&](const std::string& mode, const std::string& policy, const std::string& q,
                    int64_t window) -> Result<json> {
    std::vector<std::string> argv = {self,
                                     "bench",
                                     "fetch-client",
                                     "--server",
                                     server.url(),
                                     "--ca-cert",
                                     server.cert,
                                     "--sql",
                                     q,
                                     "--policy",
                                     policy,
                                     "--mode",
                                     mode,
                                     "--window",
                                     std::to_string(window),
                                     "--parallel",
                                     std::to_string(o.parallel)};
    if (!o.verify_lz4_checksums) argv.push_back("--no-lz4-checksums");
    QUIVER_ASSIGN_OR_RETURN(auto r, RunCapture(argv));
    if (r.first != 0) {
      return Status::IOError("bench fetch: client " + mode + "/" + policy + " exited " + std::to_string(r.first));
    }
    return LastJson(r.second, "fetch-client " + mode + "/" + policy);
  };

  std::vector<FetchBenchRow>& rows = res.rows;
  const std::vector<std::string> policies = {"heap", "mmap-after", "stream-mmap"};
  int64_t& table_bytes = res.table_bytes;
  auto check_rows = [&](const std::string& what, const json& j, int64_t want) {
    for (const auto& run : j["runs"]) {
      if (run["rows"].get<int64_t>() != want) {
        fail(what + ": " + std::to_string(run["rows"].get<int64_t>()) + " rows, expected " + std::to_string(want));
      }
      if (run["held_after"].get<int64_t>() != 0) {
        fail(what + ": client pool held " + run["held_after"].dump() + " bytes after the fetch");
      }
    }
  };

  // 3. fetchall and repeat per policy.
  for (const char* mode : {"fetchall", "repeat"}) {
    for (const auto& p : policies) {
      QUIVER_ASSIGN_OR_RETURN(json j, client(mode, p, sql, window_bytes));
      check_rows(std::string(mode) + "/" + p, j, table_rows);
      const int rounds = std::string(mode) == "repeat" ? 4 : 1;
      table_bytes = j["decoded_bytes"].get<int64_t>();
      FetchBenchRow r;
      r.kase = mode;
      r.policy = p;
      r.table_mib = table_bytes / kMiB;
      r.peak_mib = j["peak_rss_increase"].get<int64_t>() / kMiB;
      r.peak_to_table = j["peak_rss_increase"].get<double>() / static_cast<double>(table_bytes);
      r.seconds = j["seconds"].get<double>();
      r.mb_per_s = rounds * table_bytes / 1e6 / *r.seconds;
      r.rows_per_s = rounds * static_cast<double>(table_rows) / *r.seconds;
      if (rounds == 4) r.note = "4 fetches; seconds for all four";
      rows.push_back(r);
      std::fprintf(log, "bench fetch: %s %s done (%.1f s)\n", mode, p.c_str(), *r.seconds);
    }
  }
  // 4. stream at two result sizes: peak / window.
  for (const auto& [q, want, label] :
       {std::tuple{sql, table_rows, "full"}, std::tuple{sql_small, small_rows, "half"}}) {
    for (const auto& p : policies) {
      QUIVER_ASSIGN_OR_RETURN(json j, client("stream", p, q, window_bytes));
      check_rows(std::string("stream ") + label + "/" + p, j, want);
      const int64_t peak = j["peak_rss_increase"].get<int64_t>();
      FetchBenchRow r;
      r.kase = std::string("stream");
      r.policy = p;
      r.table_mib = j["decoded_bytes"].get<int64_t>() / kMiB;
      r.peak_mib = peak / kMiB;
      r.peak_to_table = static_cast<double>(peak) / static_cast<double>(window_bytes);
      r.seconds = j["seconds"].get<double>();
      r.mb_per_s = j["decoded_bytes"].get<int64_t>() / 1e6 / *r.seconds;
      r.rows_per_s = static_cast<double>(want) / *r.seconds;
      r.note = std::string(label) + " result; peak_to_table is peak / window (" + o.window + ")";
      // Bound: 1.1 x window (or the result, when smaller than the window),
      // plus 32 MiB for TLS and thread state, and one chunk that may exceed
      // the window alone.
      const double bound =
          1.1 * static_cast<double>(std::min<int64_t>(window_bytes, j["decoded_bytes"].get<int64_t>())) + 32 * kMiB +
          static_cast<double>(o.chunk_bytes);
      if (p == "stream-mmap" && static_cast<double>(peak) > bound) {
        fail("stream " + std::string(label) + "/" + p + ": peak RSS increase " + std::to_string(peak) + " > bound " +
             std::to_string(static_cast<int64_t>(bound)));
      }
      rows.push_back(r);
    }
  }

  // 5. curl --parallel over the same links (collected through the protocol):
  // the whole result, and the half one the half stream cases fetched, so
  // that every quiver case is compared with curl on the same statement.
  if (!o.no_curl) {
    double curl_full_s = 0, curl_half_s = 0;
    for (const auto& [q, want, label] :
         {std::tuple{sql, table_rows, "full"}, std::tuple{sql_small, small_rows, "half"}}) {
      const auto t0 = Clock::now();
      QUIVER_ASSIGN_OR_RETURN(auto pc, fetch::ProtocolClient::Connect(protocol));
      QUIVER_ASSIGN_OR_RETURN(auto st, pc->Execute(q));
      QUIVER_ASSIGN_OR_RETURN(const std::vector<fetch::ResultLink> links, CollectLinks(pc.get(), st));
      const double links_s = Since(t0);
      int64_t link_rows = 0, link_bytes = 0;
      for (const auto& l : links) {
        link_rows += l.row_count;
        link_bytes += l.bytes_num;
      }
      if (link_rows != want) {
        fail(std::string("curl links (") + label + "): " + std::to_string(link_rows) + " rows, expected " +
             std::to_string(want));
      }
      const Result<double> curl_run = CurlParallel(links, o.curl, o.parallel, server.cert, dir + "/curl.cfg");
      const double curl_s = Since(t0);
      (void)pc->CloseOperation(st.operation);
      if (!curl_run.ok()) {
        fail(curl_run.status().message());
        continue;
      }
      (std::string(label) == "full" ? curl_full_s : curl_half_s) = curl_s;
      FetchBenchRow r;
      r.kase = "curl";
      r.table_mib = static_cast<double>(link_bytes) / kMiB;
      r.curl_s = curl_s;
      r.seconds = curl_s;
      r.mb_per_s = static_cast<double>(link_bytes) / 1e6 / curl_s;
      r.rows_per_s = static_cast<double>(want) / curl_s;
      r.note = StringPrintf("%s result: %zu links to /dev/null (statement and links %.2f s, downloads %.2f s)", label,
                            links.size(), links_s, *curl_run);
      rows.push_back(r);
    }
    for (auto& x : rows) {
      if ((x.kase == "fetchall" || x.kase == "repeat" || x.kase == "stream") && x.seconds) {
        const bool half = x.note.rfind("half", 0) == 0;
        const double curl_s = half ? curl_half_s : curl_full_s;
        if (curl_s <= 0) continue;
        // The same statement's curl time over quiver's time for one fetch of it.
        x.curl_s = curl_s;
        x.curl_ratio = curl_s / (*x.seconds / (x.kase == "repeat" ? 4 : 1));
      }
    }
  }

  // 6. The real Node client (@databricks/sql): fetchAll in its own process.
  if (!o.no_node) {
    const int64_t node_cap = static_cast<int64_t>(o.node_max_gib * kMiB * 1024);
    int64_t node_rows = table_rows;
    std::string node_sql = sql;
    if (table_bytes > node_cap) {
      node_rows = static_cast<int64_t>(static_cast<double>(table_rows) * static_cast<double>(node_cap) /
                                       static_cast<double>(table_bytes));
      node_sql = "SELECT * FROM lineitem LIMIT " + std::to_string(node_rows);
    }
    auto r = RunCapture({o.node, "--max-old-space-size=16384", o.node_script, "--port", std::to_string(server.port),
                         "--path", server.path, "--ca-cert", server.cert, "--sql", node_sql});
    if (!r.ok() || r->first != 0) {
      const int rc = r.ok() ? r->first : -1;
      if (rc == 77) {
        std::fprintf(log,
                     "bench fetch: the Node client is not installed (scripts/install-interop.sh): node row skipped\n");
      } else {
        fail("node client exited " + std::to_string(rc));
      }
    } else {
      auto j = LastJson(r->second, "node client");
      if (!j.ok()) {
        fail(j.status().ToString());
      } else {
        const int64_t got = (*j)["rows"].get<int64_t>();
        if (got != node_rows) {
          fail("node client: " + std::to_string(got) + " rows, expected " + std::to_string(node_rows));
        }
        const double node_s = (*j)["seconds"].get<double>();
        const double node_table =
            static_cast<double>(table_bytes) * static_cast<double>(node_rows) / static_cast<double>(table_rows);
        FetchBenchRow n;
        n.kase = "fetchall";
        n.policy = "node";
        n.table_mib = node_table / kMiB;
        n.peak_mib = (*j)["peak_rss_increase"].get<double>() / kMiB;
        n.peak_to_table = (*j)["peak_rss_increase"].get<double>() / node_table;
        n.seconds = node_s;
        n.node_s = node_s;
        n.mb_per_s = node_table / 1e6 / node_s;
        n.rows_per_s = static_cast<double>(node_rows) / node_s;
        n.note = "@databricks/sql " + (*j).value("version", std::string("?")) + " fetchAll (JS row objects)";
        if (node_sql != sql) n.note += "; first " + std::to_string(node_rows) + " rows (--node-max-gib)";
        const double node_per_byte = node_s / (node_table / kMiB);
        for (auto& x : rows) {
          if ((x.kase == "fetchall" || x.kase == "repeat" || x.kase == "stream") && x.seconds) {
            x.node_s = node_s;
            const double per_byte = *x.seconds / (*x.table_mib * (x.kase == "repeat" ? 4 : 1));
            x.node_ratio = node_per_byte / per_byte;
          }
        }
        rows.push_back(n);
      }
    }
  }

  // 7. The JSON rows parse back with every field and finite numbers.
  if (o.check) {
    for (const auto& r : rows) {
      const std::string line = FetchBenchRowJson(r);
      json back = json::parse(line, nullptr, false);
      static const char* kFields[] = {"case",          "policy",       "table_mib", "peak_rss_increase_mib",
                                      "peak_to_table", "seconds",      "mb_per_s",  "curl_seconds",
                                      "curl_ratio",    "node_seconds", "node_ratio"};
      if (back.is_discarded()) fail("JSON line does not parse: " + line);
      for (const char* k : kFields) {
        if (!back.contains(k)) {
          fail(std::string("JSON line without ") + k + ": " + line);
        } else if (!back[k].is_null() && back[k].is_number() && !std::isfinite(back[k].get<double>())) {
          fail("non-finite " + std::string(k));
        }
      }
    }
  }
  return res;
}

std::string FetchBenchRowJson(const FetchBenchRow& row) { return RowObject(row).dump(); }

std::string FetchBenchReport(const FetchBenchResult& result, const FetchBenchOptions& o, bool json_lines) {
  std::string out;
  if (json_lines) {
    for (const auto& r : result.rows) out += FetchBenchRowJson(r) + "\n";
    return out;
  }
  out += StringPrintf(
      "bench fetch: lineitem %lld rows, %.1f MiB decoded, %s chunks, LZ4%s, loopback TLS; window %s, "
      "parallel %d\n",
      static_cast<long long>(result.table_rows), result.table_bytes / kMiB, FormatBytes(o.chunk_bytes).c_str(),
      o.verify_lz4_checksums ? "" : " (checksums skipped)", o.window.c_str(), o.parallel);
  out += StringPrintf("%-9s %-12s %9s %10s %7s %8s %9s %10s %7s %7s  %s\n", "case", "policy", "table MiB", "peak+ MiB",
                      "peak/t", "seconds", "MB/s", "rows/s", "vs curl", "vs node", "note");
  for (const auto& r : result.rows) {
    out += StringPrintf(
        "%-9s %-12s %9s %10s %7s %8s %9s %10s %7s %7s  %s\n", r.kase.c_str(), r.policy ? r.policy->c_str() : "-",
        Cell(r.table_mib, "%.1f").c_str(), Cell(r.peak_mib, "%.1f").c_str(), Cell(r.peak_to_table, "%.3f").c_str(),
        Cell(r.seconds, "%.2f").c_str(), Cell(r.mb_per_s, "%.1f").c_str(), Cell(r.rows_per_s, "%.0f").c_str(),
        Cell(r.curl_ratio, "%.2f").c_str(), Cell(r.node_ratio, "%.2f").c_str(), r.note.c_str());
  }
  out +=
      "peak/t: peak RSS increase / decoded table (stream: / window). vs curl: curl's time for the same statement "
      "(full or half) / quiver's for one fetch of it (target >= 0.9). vs node: Node time / quiver time per byte "
      "(target >= 3).\n";
  return out;
}

}  // namespace quiver::bench
