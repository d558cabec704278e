// quiver bench fetch: the fetch path's memory and throughput, side by side in
// one run (issue 8, "Benchmark"). A generated lineitem result (--scale GiB of
// Arrow IPC, decoded) is served by `quiver serve` (a child process, loopback
// TLS, 20 MiB LZ4 chunks) and fetched:
//   fetchall  the whole table kept, per policy (heap = the seed's "before",
//             mmap-after = the seed's "after", stream-mmap = quiver's default)
//   repeat    four fetchall back to back in one process, each released first
//   stream    each batch consumed and dropped, at two result sizes
//   curl      `curl --parallel` of the same links to /dev/null, same TLS
//   node      the real @databricks/sql Node client's fetchAll
// Each quiver measurement runs in a fresh process (`quiver bench
// fetch-client`, hidden) so that its peak RSS (VmHWM minus VmRSS just before
// the fetch) is its own; the server's memory is in another process.
//
// Ratios: peak_to_table = peak RSS increase / decoded table bytes (stream:
// / window); curl_ratio = curl seconds / quiver seconds (quiver's throughput
// relative to curl: >= 0.9 is the target); node_ratio = Node seconds per
// byte / quiver seconds per byte (>= 3 is the target). Every time is end to
// end: ExecuteStatement, FetchResults paging and the downloads (curl's time
// includes collecting its links through the protocol).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "quiver/bench/generated_stream.h"
#include "quiver/bench/measure.h"
#include "quiver/cli.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/protocol_client.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::cli {
namespace {

using json = nlohmann::ordered_json;
constexpr double kMiB = 1024.0 * 1024.0;

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "quiver";
  return std::string(buf, static_cast<size_t>(n));
}

// Starts argv as a child process whose stdout is a pipe; returns its pid and
// the pipe's read end in *stdout_fd (the caller closes it). stderr passes
// through unless `silence_stderr` (then /dev/null). `search_path`: the
// program is looked up in PATH (execvp) rather than taken as a path (execv).
Result<pid_t> SpawnWithStdoutPipe(const std::vector<std::string>& argv, bool silence_stderr, bool search_path,
                                  int* stdout_fd) {
  int fds[2];
  if (pipe(fds) != 0) return Status::IOError("bench fetch: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) return Status::IOError("bench fetch: fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (silence_stderr) {
      const int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    }
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    if (search_path) {
      execvp(a[0], a.data());
    } else {
      execv(a[0], a.data());
    }
    _exit(127);
  }
  close(fds[1]);
  *stdout_fd = fds[0];
  return pid;
}

// Runs argv, returns (exit status, stdout). stderr passes through.
Result<std::pair<int, std::string>> RunCapture(const std::vector<std::string>& argv) {
  int out_fd = -1;
  QUIVER_ASSIGN_OR_RETURN(const pid_t pid, SpawnWithStdoutPipe(argv, false, true, &out_fd));
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(out_fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(out_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return std::make_pair(rc, out);
}

// The last line of `out` that parses as a JSON object.
Result<json> LastJson(const std::string& out, const std::string& what) {
  size_t end = out.size();
  while (end > 0) {
    size_t start = out.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    const std::string line = out.substr(start, end - start);
    if (!line.empty() && line[0] == '{') {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object()) return j;
    }
    if (start == 0) break;
    end = start - 1;
  }
  return Status::Invalid(what + ": no JSON result line in its output: " + out.substr(0, 500));
}

// `quiver serve` as a child process; stopped (SIGTERM) on destruction.
struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
  std::string path, cert;
  ~ServerProcess() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      int st = 0;
      waitpid(pid, &st, 0);
    }
  }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port) + path; }
};

Status StartServer(const std::vector<std::string>& argv, ServerProcess* s) {
  int out_fd = -1;
  QUIVER_ASSIGN_OR_RETURN(const pid_t pid, SpawnWithStdoutPipe(argv, true, false, &out_fd));
  s->pid = pid;
  std::string out;
  char buf[4096];
  ssize_t n;
  while (out.find("ready\n") == std::string::npos && (n = read(out_fd, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<size_t>(n));
  }
  close(out_fd);
  if (out.find("ready\n") == std::string::npos) return Status::IOError("bench fetch: quiver serve did not start: " + out);
  auto field = [&](const std::string& key) {
    const size_t p = out.find("\n" + key + ": ");
    if (p == std::string::npos) return std::string();
    const size_t b = p + key.size() + 3;
    return out.substr(b, out.find('\n', b) - b);
  };
  s->port = std::atoi(field("port").c_str());
  s->path = field("path");
  s->cert = field("certificate");
  if (s->port <= 0 || s->path.empty() || s->cert.empty()) return Status::IOError("bench fetch: cannot read quiver serve's banner: " + out);
  return Status::OK();
}

// ---- the client side: one measurement in this (fresh) process ----

struct ClientOpts {
  std::string server, ca_cert, sql, policy = "stream-mmap", mode = "fetchall";
  int64_t window_bytes = int64_t{256} << 20;
  int parallel = 8;
  int repeat = 1;
};

Status RunClient(Context& ctx, const ClientOpts& o) {
  fetch::ConnectionOptions conn;
  conn.server_url = o.server;
  if (const char* env = std::getenv("QUIVER_TOKEN")) conn.token = env;
  conn.ca_cert_path = o.ca_cert;
  conn.poll_initial_ms = 5;
  auto pool = ctx.Child("fetch");
  const bool keep = o.mode != "stream";
  const int rounds = o.mode == "repeat" ? o.repeat : 1;
  // Baseline: resident bytes just before the first fetch; the high-water
  // mark is reset to it (clear_refs 5) when the kernel allows.
  const int64_t rss0 = bench::ProcStatusBytes("VmRSS");
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  fetch::ResetMappingPeak();
  json runs = json::array();
  int64_t decoded = 0, wire = 0, window_peak = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < rounds; ++k) {
    fetch::FetchOptions fo;
    fo.download.pool = pool.get();
    QUIVER_ASSIGN_OR_RETURN(fo.download.policy, fetch::ParseChunkPolicy(o.policy));
    fo.download.window_bytes = o.window_bytes;
    fo.download.parallel = o.parallel;
    int64_t rows = 0;
    const auto tr = std::chrono::steady_clock::now();
    {
      std::vector<RecordBatchPtr> kept;
      QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, o.sql, fo));
      for (;;) {
        QUIVER_ASSIGN_OR_RETURN(auto b, result->Next());
        if (!b) break;
        rows += b->num_rows;
        if (keep) kept.push_back(std::move(b));
      }
      if (const fetch::DownloadStats* s = result->download_stats()) {
        decoded = s->bytes_decoded.load();
        wire = s->bytes_downloaded.load();
        window_peak = std::max<int64_t>(window_peak, s->window_peak_bytes.load());
      }
    }  // every batch and the result released before the next round
    runs.push_back({{"rows", rows}, {"seconds", Since(tr)}, {"held_after", pool->held_bytes()}});
  }
  const double secs = Since(t0);
  const int64_t hwm = bench::ProcStatusBytes("VmHWM");
  const fetch::MappingStats ms = fetch::GetMappingStats();
  json out = {{"rows", runs.back()["rows"]}, {"runs", runs}, {"seconds", secs}, {"decoded_bytes", decoded},
              {"wire_bytes", wire}, {"rss_baseline", rss0}, {"hwm", hwm}, {"peak_rss_increase", hwm - rss0},
              {"pool_peak", pool->peak_bytes()}, {"held_after", pool->held_bytes()},
              {"mapped_peak", ms.peak_mapped_bytes}, {"window_peak", window_peak}};
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
  return Status::OK();
}

// ---- the driver ----

struct BenchOpts {
  double scale_gib = 1.5;
  int64_t chunk_bytes = int64_t{20} << 20;
  std::string window = "256MiB";
  int parallel = 8;
  bool json_out = false;
  bool check = false;
  bool no_node = false;
  bool no_curl = false;
  std::string curl = "curl";
  std::string node = "node";
  std::string node_script;
  double node_max_gib = 0.5;
  std::string keep_dir;
};

// "256MiB" / "64M" / "1G" / bytes.
Result<int64_t> Bytes(const std::string& t) {
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  std::string u = end ? end : "";
  for (char& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mul = 1;
  if (u == "k" || u == "kib") mul = 1024;
  else if (u == "m" || u == "mib") mul = kMiB;
  else if (u == "g" || u == "gib") mul = kMiB * 1024;
  else if (!u.empty() && u != "b") return Status::Invalid("bench fetch: not a byte count: " + t);
  if (!(v > 0)) return Status::Invalid("bench fetch: not a byte count: " + t);
  return static_cast<int64_t>(v * mul);
}

struct Row {
  std::string kase;
  std::optional<std::string> policy;
  std::optional<double> table_mib, peak_mib, peak_to_table, seconds, mb_per_s, curl_s, curl_ratio, node_s, node_ratio;
  std::optional<double> rows_per_s;
  std::string note;
};

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json RowJson(const Row& r) {
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

Status RunBench(Context& ctx, const BenchOpts& o) {
  QUIVER_ASSIGN_OR_RETURN(const int64_t window_bytes, Bytes(o.window));
  const int64_t target = static_cast<int64_t>(o.scale_gib * kMiB * 1024);
  if (target < (int64_t{1} << 20)) return Status::Invalid("bench fetch: --scale below 1 MiB");
  const std::string self = SelfExe();
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
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    failures.push_back(what);
    std::fprintf(stderr, "bench fetch: CHECK FAILED: %s\n", what.c_str());
  };

  // 1. The table: lineitem batches until `target` IPC bytes are written.
  const std::string table = dir + "/lineitem.arrows";
  int64_t table_rows = 0;
  const auto tg = std::chrono::steady_clock::now();
  {
    auto gen_pool = ctx.Child("gen");
    datagen::GenOptions go;
    go.kind = datagen::GenKind::kLineitem;
    go.num_rows = target / 64 + 1000;  // more than enough: stops by bytes
    go.max_bytes_per_batch = 4 << 20;
    go.pool = gen_pool.get();
    QUIVER_ASSIGN_OR_RETURN(table_rows, bench::WriteGeneratedStream(go, table, target));
  }
  std::fprintf(stderr, "bench fetch: generated lineitem, %lld rows, in %.1f s\n", static_cast<long long>(table_rows), Since(tg));

  // 2. The server, a child process.
  const std::string token = "bench-fetch-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
  setenv("QUIVER_TOKEN", token.c_str(), 1);
  ServerProcess server;
  QUIVER_RETURN_NOT_OK(StartServer({self, "serve", "--port", "0", "--cert-dir", dir, "--table", "lineitem=" + table,
                                    "--chunk-bytes", std::to_string(o.chunk_bytes), "--store-budget",
                                    std::to_string(int64_t{6} << 30), "--spill-dir", dir, "--max-links-per-fetch", "32",
                                    "--inline-threshold-bytes", "0"},
                                   &server));
  const std::string sql = "SELECT * FROM lineitem";
  const int64_t small_rows = table_rows / 2;
  const std::string sql_small = "SELECT * FROM lineitem LIMIT " + std::to_string(small_rows);

  auto client = [&](const std::string& mode, const std::string& policy, const std::string& q, int64_t window) -> Result<json> {
    std::vector<std::string> argv = {self, "bench", "fetch-client", "--server", server.url(), "--ca-cert", server.cert,
                                     "--sql", q, "--policy", policy, "--mode", mode, "--window", std::to_string(window),
                                     "--parallel", std::to_string(o.parallel)};
    QUIVER_ASSIGN_OR_RETURN(auto r, RunCapture(argv));
    if (r.first != 0) return Status::IOError("bench fetch: client " + mode + "/" + policy + " exited " + std::to_string(r.first));
    return LastJson(r.second, "fetch-client " + mode + "/" + policy);
  };

  std::vector<Row> rows;
  const std::vector<std::string> policies = {"heap", "mmap-after", "stream-mmap"};
  std::optional<double> default_seconds;  // stream-mmap fetchall
  int64_t table_bytes = 0;
  auto check_rows = [&](const std::string& what, const json& j, int64_t want) {
    for (const auto& run : j["runs"]) {
      if (run["rows"].get<int64_t>() != want) {
        fail(what + ": " + std::to_string(run["rows"].get<int64_t>()) + " rows, expected " + std::to_string(want));
      }
      if (run["held_after"].get<int64_t>() != 0) fail(what + ": client pool held " + run["held_after"].dump() + " bytes after the fetch");
    }
  };

  // 3. fetchall and repeat per policy.
  for (const char* mode : {"fetchall", "repeat"}) {
    for (const auto& p : policies) {
      QUIVER_ASSIGN_OR_RETURN(json j, client(mode, p, sql, window_bytes));
      check_rows(std::string(mode) + "/" + p, j, table_rows);
      const int rounds = std::string(mode) == "repeat" ? 4 : 1;
      table_bytes = j["decoded_bytes"].get<int64_t>();
      Row r;
      r.kase = mode;
      r.policy = p;
      r.table_mib = table_bytes / kMiB;
      r.peak_mib = j["peak_rss_increase"].get<int64_t>() / kMiB;
      r.peak_to_table = j["peak_rss_increase"].get<double>() / static_cast<double>(table_bytes);
      r.seconds = j["seconds"].get<double>();
      r.mb_per_s = rounds * table_bytes / 1e6 / *r.seconds;
      r.rows_per_s = rounds * static_cast<double>(table_rows) / *r.seconds;
      if (rounds == 4) r.note = "4 fetches; seconds for all four";
      if (std::string(mode) == "fetchall" && p == "stream-mmap") default_seconds = r.seconds;
      rows.push_back(r);
      std::fprintf(stderr, "bench fetch: %s %s done (%.1f s)\n", mode, p.c_str(), *r.seconds);
    }
  }
  // 4. stream at two result sizes: peak / window.
  for (const auto& [q, want, label] : {std::tuple{sql, table_rows, "full"}, std::tuple{sql_small, small_rows, "half"}}) {
    for (const auto& p : policies) {
      QUIVER_ASSIGN_OR_RETURN(json j, client("stream", p, q, window_bytes));
      check_rows(std::string("stream ") + label + "/" + p, j, want);
      const int64_t peak = j["peak_rss_increase"].get<int64_t>();
      Row r;
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
      const double bound = 1.1 * static_cast<double>(std::min<int64_t>(window_bytes, j["decoded_bytes"].get<int64_t>())) +
                           32 * kMiB + static_cast<double>(o.chunk_bytes);
      if (p == "stream-mmap" && static_cast<double>(peak) > bound) {
        fail("stream " + std::string(label) + "/" + p + ": peak RSS increase " + std::to_string(peak) + " > bound " +
             std::to_string(static_cast<int64_t>(bound)));
      }
      rows.push_back(r);
    }
  }

  // 5. curl --parallel over the same links (collected through the protocol).
  if (!o.no_curl) {
    const auto t0 = std::chrono::steady_clock::now();
    fetch::ConnectionOptions conn;
    conn.server_url = server.url();
    conn.token = token;
    conn.ca_cert_path = server.cert;
    conn.poll_initial_ms = 5;
    QUIVER_ASSIGN_OR_RETURN(auto pc, fetch::ProtocolClient::Connect(conn));
    QUIVER_ASSIGN_OR_RETURN(auto st, pc->Execute(sql));
    std::vector<fetch::ResultLink> links;
    if (st.first_page) links = st.first_page->links;
    bool more = !st.first_page || st.first_page->has_more_rows;
    bool first = !st.first_page;
    while (more) {
      QUIVER_ASSIGN_OR_RETURN(auto page, pc->Fetch(st.operation, first, -1));
      first = false;
      links.insert(links.end(), page.links.begin(), page.links.end());
      more = page.has_more_rows;
    }
    int64_t link_rows = 0;
    const std::string cfg = dir + "/curl.cfg";
    {
      std::ofstream f(cfg);
      for (const auto& l : links) {
        link_rows += l.row_count;
        f << "url = \"" << l.file_link << "\"\noutput = \"/dev/null\"\n";
        for (const auto& [k, v] : l.http_headers) f << "header = \"" << k << ": " << v << "\"\n";
      }
    }
    if (link_rows != table_rows) fail("curl links: " + std::to_string(link_rows) + " rows, expected " + std::to_string(table_rows));
    const std::string command = o.curl + " --silent --no-progress-meter --show-error --fail --parallel --parallel-max " +
                                std::to_string(o.parallel) + " --cacert '" + server.cert + "' -K '" + cfg + "'";
    const int rc = std::system(command.c_str());
    const double curl_s = Since(t0);
    (void)pc->CloseOperation(st.operation);
    if (rc != 0) {
      fail("curl exited " + std::to_string(rc) + ": " + command);
    } else {
      Row r;
      r.kase = "curl";
      r.table_mib = table_bytes / kMiB;
      r.curl_s = curl_s;
      r.seconds = curl_s;
      r.mb_per_s = table_bytes / 1e6 / curl_s;
      r.rows_per_s = static_cast<double>(table_rows) / curl_s;
      r.note = std::to_string(links.size()) + " links to /dev/null; MB/s over the decoded bytes";
      rows.push_back(r);
      for (auto& x : rows) {
        if ((x.kase == "fetchall" || x.kase == "repeat" || x.kase == "stream") && x.seconds) {
          x.curl_s = curl_s;
          // Per decoded byte, so that repeat and the half stream compare too.
          const double per_byte = *x.seconds / (*x.table_mib * (x.kase == "repeat" ? 4 : 1));
          x.curl_ratio = (curl_s / (table_bytes / kMiB)) / per_byte;
        }
      }
    }
  }

  // 6. The real Node client (@databricks/sql): fetchAll in its own process.
  if (!o.no_node) {
    const int64_t node_cap = static_cast<int64_t>(o.node_max_gib * kMiB * 1024);
    int64_t node_rows = table_rows;
    std::string node_sql = sql;
    if (table_bytes > node_cap) {
      node_rows = static_cast<int64_t>(static_cast<double>(table_rows) * static_cast<double>(node_cap) / static_cast<double>(table_bytes));
      node_sql = "SELECT * FROM lineitem LIMIT " + std::to_string(node_rows);
    }
    std::string script = o.node_script;
#ifdef QUIVER_BENCH_DIR
    if (script.empty()) script = std::string(QUIVER_BENCH_DIR) + "/databricks_fetchall.mjs";
#endif
    auto r = RunCapture({o.node, "--max-old-space-size=16384", script, "--port", std::to_string(server.port), "--path",
                         server.path, "--ca-cert", server.cert, "--sql", node_sql});
    if (!r.ok() || r->first != 0) {
      const int rc = r.ok() ? r->first : -1;
      if (rc == 77) {
        std::fprintf(stderr, "bench fetch: the Node client is not installed (scripts/install-interop.sh): node row skipped\n");
      } else {
        fail("node client exited " + std::to_string(rc));
      }
    } else {
      auto j = LastJson(r->second, "node client");
      if (!j.ok()) {
        fail(j.status().ToString());
      } else {
        const int64_t got = (*j)["rows"].get<int64_t>();
        if (got != node_rows) fail("node client: " + std::to_string(got) + " rows, expected " + std::to_string(node_rows));
        const double node_s = (*j)["seconds"].get<double>();
        const double node_table = static_cast<double>(table_bytes) * static_cast<double>(node_rows) / static_cast<double>(table_rows);
        Row n;
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

  // 7. Output.
  if (o.json_out || o.check) {
    for (const auto& r : rows) {
      const std::string line = RowJson(r).dump();
      if (o.check) {
        json back = json::parse(line, nullptr, false);
        static const char* kFields[] = {"case", "policy", "table_mib", "peak_rss_increase_mib", "peak_to_table", "seconds",
                                        "mb_per_s", "curl_seconds", "curl_ratio", "node_seconds", "node_ratio"};
        if (back.is_discarded()) fail("JSON line does not parse: " + line);
        for (const char* k : kFields) {
          if (!back.contains(k)) fail(std::string("JSON line without ") + k + ": " + line);
          else if (!back[k].is_null() && back[k].is_number() && !std::isfinite(back[k].get<double>())) fail("non-finite " + std::string(k));
        }
      }
      if (o.json_out) std::printf("%s\n", line.c_str());
    }
  }
  if (!o.json_out) {
    std::printf("bench fetch: lineitem %lld rows, %.1f MiB decoded, %s chunks, LZ4, loopback TLS; window %s, parallel %d\n",
                static_cast<long long>(table_rows), table_bytes / kMiB, FormatBytes(o.chunk_bytes).c_str(), o.window.c_str(),
                o.parallel);
    std::printf("%-9s %-12s %9s %10s %7s %8s %9s %10s %7s %7s  %s\n", "case", "policy", "table MiB", "peak+ MiB", "peak/t",
                "seconds", "MB/s", "rows/s", "vs curl", "vs node", "note");
    for (const auto& r : rows) {
      std::printf("%-9s %-12s %9s %10s %7s %8s %9s %10s %7s %7s  %s\n", r.kase.c_str(), r.policy ? r.policy->c_str() : "-",
                  Cell(r.table_mib, "%.1f").c_str(), Cell(r.peak_mib, "%.1f").c_str(), Cell(r.peak_to_table, "%.3f").c_str(),
                  Cell(r.seconds, "%.2f").c_str(), Cell(r.mb_per_s, "%.1f").c_str(), Cell(r.rows_per_s, "%.0f").c_str(), Cell(r.curl_ratio, "%.2f").c_str(),
                  Cell(r.node_ratio, "%.2f").c_str(), r.note.c_str());
    }
    std::printf("peak/t: peak RSS increase / decoded table (stream: / window). vs curl: curl time / quiver time per byte "
                "(target >= 0.9). vs node: Node time / quiver time per byte (target >= 3).\n");
  }
  std::fflush(stdout);
  if (o.check) {
    if (!failures.empty()) return Status::Invalid("bench fetch --check: " + std::to_string(failures.size()) + " check(s) failed; first: " + failures[0]);
    std::fprintf(stderr, "bench fetch --check: all checks passed (%zu rows of results)\n", rows.size());
  }
  return Status::OK();
}

}  // namespace

void AddBenchFetch(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand("fetch", "fetch path side by side: policies, curl --parallel, the Node @databricks/sql client");
  auto o = std::make_shared<BenchOpts>();
  cmd->add_option("--scale", o->scale_gib, "decoded GiB of the generated result (default 1.5)");
  cmd->add_option("--chunk-bytes", o->chunk_bytes, "uncompressed bytes per served chunk (default 20 MiB)");
  cmd->add_option("--window", o->window, "download window of every quiver case (default 256MiB)");
  cmd->add_option("--parallel", o->parallel, "parallel downloads of quiver and curl (default 8)");
  cmd->add_flag("--json", o->json_out, "JSON lines, one per case");
  cmd->add_flag("--check", o->check, "check the results (rows, JSON, stream peak bound, Node rows); non-zero exit on failure");
  cmd->add_option("--curl", o->curl, "curl binary (default curl)");
  cmd->add_flag("--no-curl", o->no_curl, "skip curl");
  cmd->add_option("--node", o->node, "node binary (default node)");
  cmd->add_option("--node-script", o->node_script, "the Node fetchAll script (default bench/databricks_fetchall.mjs)");
  cmd->add_option("--node-max-gib", o->node_max_gib,
                  "Node fetchAll reads at most this many decoded GiB (LIMIT; JS row objects are large) (default 0.5)");
  cmd->add_flag("--no-node", o->no_node, "skip the Node client");
  cmd->add_option("--keep-dir", o->keep_dir, "work in this directory and keep it");
  cmd->callback([&ctx, o, action] { *action = [&ctx, o]() -> Status { return RunBench(ctx, *o); }; });

  // The measured process (hidden): one fetch, a JSON line on stdout.
  auto* cl = bench->add_subcommand("fetch-client", "one measured fetch (used by bench fetch)");
  cl->group("");
  auto c = std::make_shared<ClientOpts>();
  cl->add_option("--server", c->server)->required();
  cl->add_option("--ca-cert", c->ca_cert);
  cl->add_option("--sql", c->sql)->required();
  cl->add_option("--policy", c->policy);
  cl->add_option("--mode", c->mode)->check(CLI::IsMember({"fetchall", "repeat", "stream"}));
  cl->add_option("--window", c->window_bytes);
  cl->add_option("--parallel", c->parallel);
  cl->add_option("--repeat", c->repeat);
  c->repeat = 4;
  cl->callback([&ctx, c, action] { *action = [&ctx, c]() -> Status { return RunClient(ctx, *c); }; });
}

}  // namespace quiver::cli
