// quiver/bench/serve_bench.cc — see serve_bench.h.
#include "quiver/bench/serve_bench.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "quiver/base/byte_size.h"
#include "quiver/bench/child_process.h"
#include "quiver/bench/curl_links.h"
#include "quiver/bench/generated_stream.h"
#include "quiver/bench/measure.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/protocol_client.h"
#include "quiver/memory/allocator.h"
#include "quiver/objstore/curl_util.h"

namespace quiver::bench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr char kSmallSql[] = "SELECT * FROM lineitem LIMIT 5";
constexpr char kLargeSql[] = "SELECT * FROM lineitem";

void SleepSeconds(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// GET https://127.0.0.1:PORT/metrics with the token.
Result<std::string> Metrics(const ServerProcess& server, const std::string& token) {
  QUIVER_ASSIGN_OR_RETURN(objstore::CurlEasyPtr easy, objstore::MakeEasy());
  objstore::HttpRequest request;
  request.url = "https://127.0.0.1:" + std::to_string(server.port) + "/metrics";
  request.bearer_token = &token;
  request.tls.ca_cert_path = server.cert;
  request.timeout_ms = 10000;
  QUIVER_ASSIGN_OR_RETURN(objstore::HttpResponse reply, objstore::Perform(easy.get(), request));
  if (reply.status != 200) return Status::IOError("bench serve: GET /metrics: HTTP " + std::to_string(reply.status));
  return std::move(reply.body);
}

// The integer after "<line> ... key=" in the metrics text; -1 when absent.
int64_t MetricValue(const std::string& text, const std::string& line, const std::string& key) {
  const size_t l = text.find(line + " ");
  if (l == std::string::npos) return -1;
  const size_t end = text.find('\n', l);
  const size_t k = text.find(" " + key + "=", l);
  if (k == std::string::npos || k > end) return -1;
  return std::atoll(text.c_str() + k + key.size() + 2);
}

// Rows of a finished statement's result, read page by page (inline batches
// or links, by their row counts), then the operation closed.
Result<int64_t> RowsAndClose(fetch::ProtocolClient* pc, const fetch::StatementResult& st) {
  auto count = [](const fetch::FetchPage& p) {
    int64_t n = 0;
    for (const auto& b : p.arrow_batches) n += b.row_count;
    for (const auto& l : p.links) n += l.row_count;
    return n;
  };
  int64_t rows = st.first_page ? count(*st.first_page) : 0;
  bool more = !st.first_page || st.first_page->has_more_rows;
  bool first = !st.first_page;
  while (more && !st.closed_by_server) {
    QUIVER_ASSIGN_OR_RETURN(auto page, pc->Fetch(st.operation, first, -1));
    first = false;
    rows += count(page);
    more = page.has_more_rows;
  }
  if (!st.closed_by_server) QUIVER_RETURN_NOT_OK(pc->CloseOperation(st.operation));
  return rows;
}

fetch::ConnectionOptions Connection(const ServerProcess& server, const std::string& token) {
  fetch::ConnectionOptions c;
  c.server_url = server.url();
  c.token = token;
  c.ca_cert_path = server.cert;
  c.poll_initial_ms = 1;  // a small statement is noticed finished within a millisecond or two
  return c;
}

// `runs` executions of the 5-row query on one session: wall milliseconds of
// each that returned its 5 rows; *ok counts those.
Result<std::vector<double>> SmallQueries(const ServerProcess& server, const std::string& token, int runs, int* ok) {
  QUIVER_ASSIGN_OR_RETURN(auto pc, fetch::ProtocolClient::Connect(Connection(server, token)));
  std::vector<double> ms;
  *ok = 0;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    auto st = pc->Execute(kSmallSql, /*direct_max_rows=*/100000);
    if (!st.ok()) continue;
    auto rows = RowsAndClose(pc.get(), *st);
    if (!rows.ok() || *rows != 5) continue;
    ms.push_back(Seconds(t0, Clock::now()) * 1e3);
    ++*ok;
  }
  return ms;
}

// One large statement fetched to its end through the CloudFetch client
// (each batch dropped at once); its rows.
Result<int64_t> LargeStatement(const ServerProcess& server, const std::string& token, int64_t window_bytes,
                               MemoryPool* pool) {
  fetch::FetchOptions fo;
  fo.download.pool = pool;
  fo.download.window_bytes = window_bytes;
  fo.download.parallel = 4;
  QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(Connection(server, token), kLargeSql, fo));
  int64_t rows = 0;
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(auto b, result->Next());
    if (!b) break;
    rows += b->num_rows;
  }
  return rows;
}

// A socket connected to 127.0.0.1:port from `source` (another loopback
// address, so the server counts it under that address); -1 on failure.
int ConnectFrom(const char* source, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The idle and slow clients of one measurement; closed on destruction.
struct IdleClients {
  std::vector<int> fds;
  std::vector<SSL*> tls;
  SSL_CTX* ctx = nullptr;
  ~IdleClients() {
    for (SSL* s : tls) SSL_free(s);
    for (int fd : fds) close(fd);
    if (ctx) SSL_CTX_free(ctx);
  }
  Status Open(int port, int idle_tcp, int slow_tls) {
    for (int i = 0; i < idle_tcp; ++i) {
      const int fd = ConnectFrom("127.0.0.2", port);
      if (fd < 0) return Status::IOError("bench serve: cannot connect idle client " + std::to_string(i));
      fds.push_back(fd);
    }
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == nullptr) return Status::IOError("bench serve: SSL_CTX_new failed");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);  // an attacker does not care who answers
    for (int i = 0; i < slow_tls; ++i) {
      const int fd = ConnectFrom("127.0.0.3", port);
      if (fd < 0) return Status::IOError("bench serve: cannot connect slow client " + std::to_string(i));
      fds.push_back(fd);
      SSL* s = SSL_new(ctx);
      if (s == nullptr) return Status::IOError("bench serve: SSL_new failed");
      tls.push_back(s);
      SSL_set_fd(s, fd);
      // The handshake, then the first byte of a request line that never ends.
      if (SSL_connect(s) != 1 || SSL_write(s, "G", 1) != 1) {
        return Status::IOError("bench serve: slow client " + std::to_string(i) + ": TLS handshake failed");
      }
    }
    return Status::OK();
  }
};

// Every phase against one server.
Status MeasureServer(const ServeBenchOptions& o, const ServerProcess& server, const std::string& token,
                     int64_t table_rows, const std::string& dir, const std::shared_ptr<MemoryPool>& root,
                     std::FILE* log, ServeBenchServerResult* r, std::vector<std::string>* failures) {
  auto fail = [&](const std::string& what) {
    if (!o.check) return;
    failures->push_back(r->allocator + ": " + what);
    std::fprintf(log, "bench serve: CHECK FAILED: %s: %s\n", r->allocator.c_str(), what.c_str());
  };
  // 1. The 5-row query (after three to warm up).
  int ok = 0;
  QUIVER_RETURN_NOT_OK(SmallQueries(server, token, 3, &ok).status().WithContext("bench serve: small query"));
  QUIVER_ASSIGN_OR_RETURN(auto ms, SmallQueries(server, token, o.runs, &ok));
  if (ok != o.runs) fail(std::to_string(o.runs - ok) + " of " + std::to_string(o.runs) + " 5-row queries failed");
  r->small_ms_median = Median(ms);
  r->small_ms_p90 = Percentile(ms, 0.9);
  r->rss_start_bytes = ProcStatusBytesOf(server.pid, "VmRSS");
  std::fprintf(log, "bench serve: %s: 5-row query median %.2f ms\n", r->allocator.c_str(), r->small_ms_median);

  // 2. One large statement, then a burst at once; the server's RSS after each.
  auto pool = root->MakeChild({.name = "clients"});
  QUIVER_ASSIGN_OR_RETURN(const int64_t first_rows, LargeStatement(server, token, o.window_bytes, pool.get()));
  if (first_rows != table_rows) fail("large statement: " + std::to_string(first_rows) + " rows");
  SleepSeconds(o.settle_seconds);
  r->rss_after_first_bytes = ProcStatusBytesOf(server.pid, "VmRSS");
  {
    std::vector<Result<int64_t>> got(static_cast<size_t>(o.burst), Status::Invalid("not run"));
    std::vector<std::thread> threads;
    for (int i = 0; i < o.burst; ++i) {
      threads.emplace_back([&, i] { got[i] = LargeStatement(server, token, o.window_bytes, pool.get()); });
    }
    for (auto& t : threads) t.join();
    for (auto& g : got) {
      if (!g.ok()) return g.status().WithContext("bench serve: burst");
      if (*g != table_rows) fail("burst statement: " + std::to_string(*g) + " rows");
    }
  }
  SleepSeconds(o.settle_seconds);
  r->rss_after_burst_bytes = ProcStatusBytesOf(server.pid, "VmRSS");
  r->rss_peak_bytes = ProcStatusBytesOf(server.pid, "VmHWM");
  std::fprintf(log, "bench serve: %s: RSS after the first large statement %.1f MiB, after %d more %.1f MiB\n",
               r->allocator.c_str(), r->rss_after_first_bytes / kMiB, o.burst, r->rss_after_burst_bytes / kMiB);

  // 3. Download: `clients` statements at once, every link through curl.
  {
    std::vector<std::unique_ptr<fetch::ProtocolClient>> clients(static_cast<size_t>(o.clients));
    std::vector<fetch::StatementResult> statements(static_cast<size_t>(o.clients));
    std::vector<Status> status(static_cast<size_t>(o.clients));
    std::vector<std::vector<fetch::ResultLink>> links(static_cast<size_t>(o.clients));
    std::vector<std::thread> threads;
    for (int c = 0; c < o.clients; ++c) {
      threads.emplace_back([&, c] {
        status[c] = [&]() -> Status {
          QUIVER_ASSIGN_OR_RETURN(clients[c], fetch::ProtocolClient::Connect(Connection(server, token)));
          QUIVER_ASSIGN_OR_RETURN(statements[c], clients[c]->Execute(kLargeSql));
          QUIVER_ASSIGN_OR_RETURN(links[c], CollectLinks(clients[c].get(), statements[c]));
          return Status::OK();
        }();
      });
    }
    for (auto& t : threads) t.join();
    std::vector<fetch::ResultLink> all;
    for (int c = 0; c < o.clients; ++c) {
      QUIVER_RETURN_NOT_OK(status[c].WithContext("bench serve: download client"));
      int64_t rows = 0;
      for (const auto& l : links[c]) rows += l.row_count;
      if (rows != table_rows) fail("download client links: " + std::to_string(rows) + " rows");
      all.insert(all.end(), links[c].begin(), links[c].end());
    }
    QUIVER_ASSIGN_OR_RETURN(const std::string m0, Metrics(server, token));
    const double cpu0 = ProcessCpuSecondsOf(server.pid);
    QUIVER_ASSIGN_OR_RETURN(r->curl_seconds, CurlParallel(all, o.curl, o.parallel, server.cert, dir + "/curl.cfg"));
    r->server_cpu_seconds = ProcessCpuSecondsOf(server.pid) - cpu0;
    QUIVER_ASSIGN_OR_RETURN(const std::string m1, Metrics(server, token));
    r->served_bytes = MetricValue(m1, "http", "download_bytes") - MetricValue(m0, "http", "download_bytes");
    r->files = static_cast<int64_t>(all.size());
    if (r->served_bytes <= 0) fail("no bytes served to curl");
    for (int c = 0; c < o.clients; ++c) (void)clients[c]->CloseOperation(statements[c].operation);
    std::fprintf(log, "bench serve: %s: curl %.1f MB/s, server %.2f CPU-s per GB\n", r->allocator.c_str(),
                 r->served_bytes / 1e6 / r->curl_seconds, r->server_cpu_seconds / (r->served_bytes / 1e9));
  }

  // 4. Idle TCP and slow TLS clients held while the 5-row query runs (once
  // the download's memory went back at the server's sweep).
  SleepSeconds(o.settle_seconds);
  r->idle_requested = o.idle_tcp + o.slow_tls;
  r->rss_before_idle_bytes = ProcStatusBytesOf(server.pid, "VmRSS");
  {
    IdleClients idle;
    QUIVER_RETURN_NOT_OK(idle.Open(server.port, o.idle_tcp, o.slow_tls));
    SleepSeconds(0.5);
    QUIVER_ASSIGN_OR_RETURN(const std::string m, Metrics(server, token));
    r->idle_held = MetricValue(m, "http", "connections") - 1;  // less the /metrics request's own
    r->rss_with_idle_bytes = ProcStatusBytesOf(server.pid, "VmRSS");
    QUIVER_ASSIGN_OR_RETURN(auto held_ms, SmallQueries(server, token, std::max(5, o.runs / 3), &r->small_ok_with_idle));
    r->small_ms_median_with_idle = held_ms.empty() ? -1 : Median(held_ms);
    if (r->idle_held != r->idle_requested) {
      fail("the server held " + std::to_string(r->idle_held) + " of " + std::to_string(r->idle_requested) +
           " idle connections");
    }
    if (r->small_ok_with_idle != std::max(5, o.runs / 3)) fail("5-row queries failed while idle clients were held");
  }
  std::fprintf(log, "bench serve: %s: %lld idle connections held, 5-row query median %.2f ms meanwhile\n",
               r->allocator.c_str(), static_cast<long long>(r->idle_held), r->small_ms_median_with_idle);
  return Status::OK();
}

}  // namespace

Result<ServeBenchResult> RunServeBench(const ServeBenchOptions& options, const std::shared_ptr<MemoryPool>& root,
                                       std::FILE* log) {
  ServeBenchResult res;
  res.options = options;
  ServeBenchOptions& o = res.options;
  if (o.quiver_path.empty()) return Status::Invalid("bench serve: no quiver executable to start as the server");
  if (o.runs < 1 || o.clients < 1 || o.burst < 1 || o.parallel < 1) {
    return Status::Invalid("bench serve: --runs, --clients, --burst and --parallel must be >= 1");
  }
  if (o.idle_tcp < 0 || o.slow_tls < 0) return Status::Invalid("bench serve: --idle-tcp and --slow-tls must be >= 0");
  if (o.rows < 1) return Status::Invalid("bench serve: --rows must be >= 1");
  if (o.allocators.empty()) {
    for (AllocatorKind k :
         {AllocatorKind::kSystem, AllocatorKind::kJemalloc, AllocatorKind::kMimalloc, AllocatorKind::kMmap}) {
      if (GetAllocator(k).ok()) o.allocators.emplace_back(AllocatorKindName(k));
    }
  }
  for (const auto& a : o.allocators) {
    QUIVER_ASSIGN_OR_RETURN(const AllocatorKind k, ParseAllocatorKind(a));
    QUIVER_RETURN_NOT_OK(GetAllocator(k).status().WithContext("bench serve: allocator " + a));
  }

  char dir_template[] = "/tmp/quiver-bench-serve-XXXXXX";
  if (!mkdtemp(dir_template)) return Status::IOError("bench serve: mkdtemp failed");
  const std::string dir = dir_template;
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove_dir{dir};
  const std::string table = dir + "/lineitem.arrows";
  {
    auto gen_pool = root->MakeChild({.name = "gen"});
    datagen::GenOptions go;
    go.kind = datagen::GenKind::kLineitem;
    go.num_rows = o.rows;
    go.max_bytes_per_batch = 4 << 20;
    go.pool = gen_pool.get();
    QUIVER_ASSIGN_OR_RETURN(res.table_rows, WriteGeneratedStream(go, table, /*stop_at_bytes=*/0));
  }
  std::error_code ec;
  res.table_ipc_bytes = static_cast<int64_t>(std::filesystem::file_size(table, ec));
  const std::string token = "bench-serve-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
  setenv("QUIVER_TOKEN", token.c_str(), 1);
  for (const auto& a : o.allocators) {
    ServeBenchServerResult r;
    r.allocator = a;
    ServerProcess server;
    std::vector<std::string> argv = {o.quiver_path,
                                     "--allocator",
                                     a,
                                     "serve",
                                     "--port",
                                     "0",
                                     "--cert-dir",
                                     dir,
                                     "--table",
                                     "lineitem=" + table,
                                     "--chunk-bytes",
                                     std::to_string(o.chunk_bytes),
                                     "--spill-dir",
                                     dir};
    if (!o.lz4) argv.push_back("--no-lz4");
    QUIVER_RETURN_NOT_OK(StartServer(argv, &server).WithContext("bench serve: allocator " + a));
    QUIVER_RETURN_NOT_OK(MeasureServer(o, server, token, res.table_rows, dir, root, log, &r, &res.failures)
                             .WithContext("bench serve: allocator " + a));
    server.Stop();
    res.servers.push_back(std::move(r));
  }
  return res;
}

std::string ServeBenchReport(const ServeBenchResult& result, bool json_lines) {
  const ServeBenchOptions& o = result.options;
  std::string out;
  if (json_lines) {
    for (const auto& s : result.servers) {
      nlohmann::ordered_json j = {{"allocator", s.allocator},
                                  {"small_ms_median", s.small_ms_median},
                                  {"small_ms_p90", s.small_ms_p90},
                                  {"rss_start_bytes", s.rss_start_bytes},
                                  {"rss_after_first_bytes", s.rss_after_first_bytes},
                                  {"rss_after_burst_bytes", s.rss_after_burst_bytes},
                                  {"rss_peak_bytes", s.rss_peak_bytes},
                                  {"files", s.files},
                                  {"served_bytes", s.served_bytes},
                                  {"curl_seconds", s.curl_seconds},
                                  {"server_cpu_seconds", s.server_cpu_seconds},
                                  {"idle_requested", s.idle_requested},
                                  {"idle_held", s.idle_held},
                                  {"rss_before_idle_bytes", s.rss_before_idle_bytes},
                                  {"rss_with_idle_bytes", s.rss_with_idle_bytes},
                                  {"small_ms_median_with_idle", s.small_ms_median_with_idle},
                                  {"small_ok_with_idle", s.small_ok_with_idle}};
      out += j.dump() + "\n";
    }
    return out;
  }
  out += StringPrintf(
      "bench serve: lineitem %lld rows (%s of IPC), %s chunks, lz4 %s; %d runs of the 5-row query; burst %d; "
      "%d clients x curl --parallel %d; idle %d TCP + %d slow TLS\n",
      static_cast<long long>(result.table_rows), FormatBytes(result.table_ipc_bytes).c_str(),
      FormatBytes(o.chunk_bytes).c_str(), o.lz4 ? "on" : "off", o.runs, o.burst, o.clients, o.parallel, o.idle_tcp,
      o.slow_tls);
  auto row = [&](const char* name, auto cell) {
    out += StringPrintf("%-40s", name);
    for (const auto& s : result.servers) out += StringPrintf(" %12s", cell(s).c_str());
    out += "\n";
  };
  auto num = [](double v, const char* fmt) {
    return v < 0 || !std::isfinite(v) ? std::string("-") : StringPrintf(fmt, v);
  };
  auto mib = [&](int64_t b) { return b < 0 ? std::string("-") : StringPrintf("%.1f", b / kMiB); };
  row("allocator", [](const ServeBenchServerResult& s) { return s.allocator; });
  row("5-row query median ms", [&](const auto& s) { return num(s.small_ms_median, "%.2f"); });
  row("5-row query p90 ms", [&](const auto& s) { return num(s.small_ms_p90, "%.2f"); });
  row("RSS after 1 large statement MiB", [&](const auto& s) { return mib(s.rss_after_first_bytes); });
  row(StringPrintf("RSS after %d more at once MiB", o.burst).c_str(),
      [&](const auto& s) { return mib(s.rss_after_burst_bytes); });
  row("  burst - first MiB", [&](const auto& s) {
    return s.rss_after_first_bytes < 0 || s.rss_after_burst_bytes < 0
               ? std::string("-")
               : StringPrintf("%+.1f", (s.rss_after_burst_bytes - s.rss_after_first_bytes) / kMiB);
  });
  row("server peak RSS MiB", [&](const auto& s) { return mib(s.rss_peak_bytes); });
  row("download MB/s (curl, loopback TLS)", [&](const auto& s) {
    return s.curl_seconds > 0 ? num(s.served_bytes / 1e6 / s.curl_seconds, "%.1f") : std::string("-");
  });
  row("server CPU s per GB served", [&](const auto& s) {
    return s.served_bytes > 0 ? num(s.server_cpu_seconds / (s.served_bytes / 1e9), "%.2f") : std::string("-");
  });
  row("idle connections held / requested", [&](const auto& s) {
    return s.idle_held < 0 ? std::string("-")
                           : StringPrintf("%lld/%lld", static_cast<long long>(s.idle_held),
                                          static_cast<long long>(s.idle_requested));
  });
  row("server RSS per held connection KiB", [&](const auto& s) {
    return s.idle_held > 0 && s.rss_with_idle_bytes >= 0
               ? StringPrintf("%.1f", (s.rss_with_idle_bytes - s.rss_before_idle_bytes) / 1024.0 / s.idle_held)
               : std::string("-");
  });
  row("5-row query median ms, idle held", [&](const auto& s) { return num(s.small_ms_median_with_idle, "%.2f"); });
  out +=
      "RSS: the server's VmRSS, read settle seconds after the statements ended. CPU per GB: the server's user + "
      "system time while curl ran over the bytes it served. MB = 1e6 bytes.\n";
  return out;
}

}  // namespace quiver::bench
