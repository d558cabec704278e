// Tests for the fetch-path benchmarks of quiver/bench: one measured fetch
// (RunFetchClient) against an in-process result server, its JSON line, the
// report of a made-up bench fetch result, and bench serve's option checks
// and report. The whole runs (child processes) are the CTests
// bench.fetch.small and bench.serve.small.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "quiver/bench/fetch_bench.h"
#include "quiver/bench/generated_stream.h"
#include "quiver/bench/measure.h"
#include "quiver/bench/serve_bench.h"
#include "quiver/server/http_server.h"
#include "quiver/server/statement_executor.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::bench {
namespace {

constexpr char kToken[] = "fetch-bench-test-token";

// A lineitem stream file of `rows` rows in a private directory, served by
// an in-process ResultServer (small LZ4 chunks, every result as links).
struct ServedLineitem {
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({.name = "test"});
  std::string dir;
  server::TableExecutor executor;
  std::unique_ptr<server::ResultServer> server;
  int64_t rows = 0;

  void Start(int64_t num_rows) {
    dir = (std::filesystem::temp_directory_path() / ("quiver-fetch-bench-test-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir);
    datagen::GenOptions go;
    go.kind = datagen::GenKind::kLineitem;
    go.num_rows = num_rows;
    go.max_bytes_per_batch = 1 << 20;
    go.pool = pool.get();
    ASSERT_OK_AND_ASSIGN(rows, WriteGeneratedStream(go, dir + "/lineitem.arrows", 0));
    ASSERT_OK(executor.AddTable("lineitem", dir + "/lineitem.arrows", pool.get()));
    server::ServerOptions so;
    so.token = kToken;
    so.cert_dir = dir;
    so.service.pool = pool.get();
    so.service.executor = &executor;
    so.service.chunk_bytes = 256 << 10;
    so.service.inline_threshold_bytes = 0;
    ASSERT_OK_AND_ASSIGN(server, server::ResultServer::Start(so));
  }
  ~ServedLineitem() {
    if (server) server->Stop();
    server.reset();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  FetchClientOptions Client(const std::string& mode) const {
    FetchClientOptions o;
    o.server_url = server->rpc_url();
    o.token = kToken;
    o.ca_cert_path = server->cert_path();
    o.sql = "SELECT * FROM lineitem";
    o.mode = mode;
    o.window_bytes = 4 << 20;
    o.parallel = 2;
    o.repeat = 2;
    return o;
  }
};

TEST(FetchBenchTest, ClientFetchAllAndRepeatReleaseEverything) {
  ServedLineitem s;
  ASSERT_NO_FATAL_FAILURE(s.Start(20000));
  auto root = MemoryPool::MakeRoot({.name = "client"});
  for (const char* mode : {"fetchall", "repeat", "stream"}) {
    ASSERT_OK_AND_ASSIGN(const FetchClientMeasurement m, RunFetchClient(s.Client(mode), root));
    ASSERT_EQ(m.runs.size(), std::string(mode) == "repeat" ? 2u : 1u) << mode;
    for (const auto& run : m.runs) {
      EXPECT_EQ(run.rows, s.rows) << mode;
      EXPECT_EQ(run.held_after_bytes, 0) << mode;
    }
    EXPECT_GT(m.decoded_bytes, 0) << mode;
    EXPECT_GT(m.wire_bytes, 0) << mode;
    EXPECT_GT(m.pool_peak_bytes, 0) << mode;
    EXPECT_EQ(m.held_after_bytes, 0) << mode;
    EXPECT_EQ(m.peak_rss_increase_bytes, m.hwm_bytes - m.rss_baseline_bytes);

    // The JSON line RunFetchBench reads back.
    const auto j = nlohmann::json::parse(FetchClientJson(m));
    EXPECT_EQ(j["rows"].get<int64_t>(), s.rows);
    EXPECT_EQ(j["runs"].size(), m.runs.size());
    EXPECT_EQ(j["decoded_bytes"].get<int64_t>(), m.decoded_bytes);
    for (const char* k : {"seconds", "wire_bytes", "rss_baseline", "hwm", "peak_rss_increase", "pool_peak",
                          "held_after", "mapped_peak", "window_peak"}) {
      EXPECT_TRUE(j.contains(k)) << k;
    }
  }
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST(FetchBenchTest, ClientRejectsAnUnknownPolicyBeforeConnecting) {
  FetchClientOptions o;
  o.server_url = "https://127.0.0.1:1/nowhere";
  o.sql = "SELECT 1";
  o.policy = "sometimes";
  EXPECT_RAISES(Invalid, RunFetchClient(o, MemoryPool::MakeRoot()));
}

TEST(FetchBenchTest, DriverRejectsABadWindowOrScaleBeforeAnyWork) {
  FetchBenchOptions o;
  o.window = "lots";
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "not a byte count: 'lots'", RunFetchBench(o, MemoryPool::MakeRoot(), stderr));
  o.window = "8MiB";
  o.scale_gib = 0.0001;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "--scale below 1 MiB", RunFetchBench(o, MemoryPool::MakeRoot(), stderr));
}

TEST(FetchBenchTest, ReportAsTableAndJsonLines) {
  FetchBenchResult r;
  r.table_rows = 1000;
  r.table_bytes = 2 << 20;
  FetchBenchRow a;
  a.kase = "fetchall";
  a.policy = "heap";
  a.table_mib = 2;
  a.peak_mib = 3;
  a.peak_to_table = 1.5;
  a.seconds = 0.5;
  a.mb_per_s = 4.194304;
  a.rows_per_s = 2000;
  FetchBenchRow c;
  c.kase = "curl";
  c.seconds = 0.25;
  c.note = "1 links";
  r.rows = {a, c};
  FetchBenchOptions o;
  o.window = "48MiB";
  o.parallel = 3;
  EXPECT_EQ(FetchBenchReport(r, o, /*json=*/true),
            "{\"case\":\"fetchall\",\"policy\":\"heap\",\"table_mib\":2.0,\"peak_rss_increase_mib\":3.0,"
            "\"peak_to_table\":1.5,\"seconds\":0.5,\"mb_per_s\":4.194304,\"curl_seconds\":null,\"curl_ratio\":null,"
            "\"node_seconds\":null,\"node_ratio\":null,\"rows_per_s\":2000.0}\n"
            "{\"case\":\"curl\",\"policy\":null,\"table_mib\":null,\"peak_rss_increase_mib\":null,"
            "\"peak_to_table\":null,\"seconds\":0.25,\"mb_per_s\":null,\"curl_seconds\":null,\"curl_ratio\":null,"
            "\"node_seconds\":null,\"node_ratio\":null,\"rows_per_s\":null,\"note\":\"1 links\"}\n");
  const std::string text = FetchBenchReport(r, o, /*json=*/false);
  EXPECT_EQ(text.substr(0, text.find('\n') + 1),
            "bench fetch: lineitem 1000 rows, 2.0 MiB decoded, 20.00 MiB chunks, LZ4, loopback TLS; window 48MiB, "
            "parallel 3\n");
  EXPECT_NE(text.find("\nfetchall  heap               2.0        3.0   1.500     0.50       4.2       2000       -"
                      "       -  \n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("\ncurl      -                    -          -       -     0.25         -          -       -       -  "
                "1 links\n"),
      std::string::npos)
      << text;
}

// Bad options are refused before anything is generated or started (the
// whole run, child servers included, is the CTest bench.serve.small).
TEST(ServeBenchTest, RejectsBadOptionsBeforeAnyWork) {
  auto root = MemoryPool::MakeRoot({.name = "quiver"});
  ServeBenchOptions o;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "no quiver executable", RunServeBench(o, root, stderr));
  o.quiver_path = "/nonexistent/quiver";
  o.runs = 0;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "must be >= 1", RunServeBench(o, root, stderr));
  o.runs = 1;
  o.idle_tcp = -1;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "must be >= 0", RunServeBench(o, root, stderr));
  o.idle_tcp = 0;
  o.allocators = {"tcmalloc"};
  EXPECT_RAISES(Invalid, RunServeBench(o, root, stderr));
  EXPECT_EQ(root->held_bytes(), 0);
}

// The report: one column per allocator, the derived figures computed from
// the measured ones (MB/s, CPU per GB, RSS per held connection, the burst
// difference), "-" for what was not measured; JSON lines carry every field.
TEST(ServeBenchTest, ReportColumnsPerAllocator) {
  ServeBenchResult r;
  r.options.runs = 7;
  r.options.burst = 12;
  r.options.clients = 4;
  r.options.parallel = 10;
  r.options.idle_tcp = 256;
  r.options.slow_tls = 64;
  r.table_rows = 1000;
  r.table_ipc_bytes = 3 << 20;
  ServeBenchServerResult a;
  a.allocator = "system";
  a.small_ms_median = 3.25;
  a.small_ms_p90 = 4.5;
  a.rss_after_first_bytes = 100 << 20;
  a.rss_after_burst_bytes = 164 << 20;
  a.rss_peak_bytes = 900 << 20;
  a.served_bytes = 2000000000;
  a.curl_seconds = 4;
  a.server_cpu_seconds = 1.5;
  a.idle_requested = 320;
  a.idle_held = 320;
  a.rss_before_idle_bytes = 50 << 20;
  a.rss_with_idle_bytes = (50 << 20) + 320 * 2048;
  a.small_ms_median_with_idle = 3.5;
  a.small_ok_with_idle = 5;
  ServeBenchServerResult b;
  b.allocator = "jemalloc";  // nothing measured
  r.servers = {a, b};
  const std::string text = ServeBenchReport(r);
  EXPECT_EQ(text.rfind("bench serve: lineitem 1000 rows (3.00 MiB of IPC), 20.00 MiB chunks, lz4 on; 7 runs of the "
                       "5-row query; burst 12; 4 clients x curl --parallel 10; idle 256 TCP + 64 slow TLS\n",
                       0),
            0u)
      << text;
  auto line = [&](const std::string& name) {
    const size_t p = text.find("\n" + name);
    return p == std::string::npos ? std::string() : text.substr(p + 1, text.find('\n', p + 1) - p - 1);
  };
  EXPECT_EQ(line("allocator"), "allocator                                      system     jemalloc");
  EXPECT_EQ(line("5-row query median ms "), "5-row query median ms                            3.25            -");
  EXPECT_EQ(line("RSS after 12 more at once MiB"),
            "RSS after 12 more at once MiB                   164.0            -");
  EXPECT_EQ(line("  burst - first MiB"), "  burst - first MiB                             +64.0            -");
  EXPECT_EQ(line("download MB/s"), "download MB/s (curl, loopback TLS)              500.0            -");
  EXPECT_EQ(line("server CPU s per GB"), "server CPU s per GB served                       0.75            -");
  EXPECT_EQ(line("idle connections"), "idle connections held / requested             320/320            -");
  EXPECT_EQ(line("server RSS per held"), "server RSS per held connection KiB                2.0            -");
  EXPECT_EQ(line("5-row query median ms, idle"), "5-row query median ms, idle held                 3.50            -");
  const std::string json = ServeBenchReport(r, /*json_lines=*/true);
  const auto first = nlohmann::json::parse(json.substr(0, json.find('\n')));
  EXPECT_EQ(first["allocator"], "system");
  EXPECT_EQ(first["served_bytes"].get<int64_t>(), 2000000000);
  EXPECT_EQ(first["idle_held"].get<int64_t>(), 320);
  EXPECT_DOUBLE_EQ(first["server_cpu_seconds"].get<double>(), 1.5);
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 2);
}

TEST(MeasureTest, ProcessCpuSecondsGrowsWithWork) {
  const double c0 = ProcessCpuSeconds();
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + i * 0.5;
  EXPECT_GE(ProcessCpuSeconds(), c0);
  EXPECT_GE(c0, 0);
}

}  // namespace
}  // namespace quiver::bench
