// Memory and throughput of the three chunk policies over loopback TLS (the
// FakeWarehouse in this process), printed as JSON lines in the shape of the
// issue's `quiver bench fetch` (curl and Node fields are null here). Runs only
// with QUIVER_FETCH_MEASURE=1 (QUIVER_FETCH_MEASURE_MIB sets the table size,
// default 256); otherwise skipped. Peak RSS is reset per case through
// /proc/self/clear_refs (5), so each case's "peak RSS increase" is its own.
// The served LZ4 bodies live in this process too; they are part of the
// baseline, not of the increase.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/tests/chunk_fixtures.h"
#include "quiver/fetch/tests/fake_warehouse.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::fetch {
namespace {

int64_t StatusBytes(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(f, line)) {
    if (line.rfind(k, 0) == 0) return std::strtoll(line.c_str() + k.size(), nullptr, 10) * 1024;
  }
  return -1;
}

void ResetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

struct Measured {
  double seconds = 0;
  int64_t rss_increase = 0;
  int64_t pool_peak = 0;
  int64_t mapped_peak = 0;
  int64_t rows = 0;
};

Measured Fetch(testing::FakeWarehouse& w, ChunkPolicy policy, int64_t window, bool keep, int repeat = 1) {
  Measured m;
  auto pool = MemoryPool::MakeRoot({});
  const int64_t rss0 = StatusBytes("VmRSS");
  ResetPeakRss();
  ResetMappingPeak();
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < repeat; ++k) {
    FetchOptions fo;
    fo.download.pool = pool.get();
    fo.download.policy = policy;
    fo.download.window_bytes = window;
    fo.download.parallel = 8;
    ConnectionOptions c;
    c.server_url = w.url();
    c.token = "secret-test-token";
    c.ca_cert_path = w.ca_cert_path();
    c.poll_initial_ms = 5;
    std::vector<RecordBatchPtr> kept;
    auto r = FetchResult::Query(c, "SELECT * FROM t", fo);
    EXPECT_OK(r);
    if (!r.ok()) return m;
    m.rows = 0;
    for (;;) {
      auto b = (*r)->Next();
      EXPECT_OK(b);
      if (!b.ok() || !*b) break;
      m.rows += (*b)->num_rows;
      if (keep) kept.push_back(*b);
    }
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.rss_increase = StatusBytes("VmHWM") - rss0;
  m.pool_peak = pool->peak_bytes();
  m.mapped_peak = GetMappingStats().peak_mapped_bytes;
  EXPECT_EQ(pool->held_bytes(), 0);
  return m;
}

TEST(FetchMeasure, PolicyPeaksAndThroughput) {
  const char* on = std::getenv("QUIVER_FETCH_MEASURE");
  if (on == nullptr || std::string(on) != "1") GTEST_SKIP() << "set QUIVER_FETCH_MEASURE=1";
  const char* mib_env = std::getenv("QUIVER_FETCH_MEASURE_MIB");
  const int64_t table_mib = mib_env ? std::atoll(mib_env) : 256;
  const int64_t rows = table_mib * (int64_t{1} << 20) / 8;  // one int64 column
  const int64_t chunk_rows = (int64_t{20} << 20) / 8;       // 20 MiB decoded chunks
  testing::FakeConfig cfg;
  {
    auto src = MemoryPool::MakeRoot({});
    auto schema = testing::SeqBatches(src.get(), 0, 1, 1)[0]->schema;
    std::string s = testing::IpcStream(src.get(), schema, {});
    cfg.arrow_schema = s.substr(0, s.size() - 8);
    const auto chunks = testing::SeqBatches(src.get(), 0, rows, chunk_rows);
    for (const auto& chunk : chunks) {
      const int64_t n = chunk->num_rows;
      const int64_t a =
          chunk->columns[0]->buffers[1]
              ? reinterpret_cast<const int64_t*>(chunk->columns[0]->buffers[1]->data())[chunk->columns[0]->offset]
              : 0;
      std::vector<RecordBatchPtr> batches;
      for (int64_t b = 0; b < n; b += 131072)
        batches.push_back(*SliceBatch(chunk, b, std::min<int64_t>(131072, n - b)));
      const std::string raw = testing::IpcStream(src.get(), schema, batches);
      testing::FakeFile f;
      f.wire = testing::Lz4Frame(raw, true, true, LZ4F_max4MB);
      f.start_row = a;
      f.row_count = n;
      f.bytes_num = static_cast<int64_t>(raw.size());
      cfg.files.push_back(std::move(f));
    }
    cfg.links_per_page = 16;
  }
  int64_t table = 0, wire = 0;
  for (auto& f : cfg.files) {
    table += f.bytes_num;
    wire += static_cast<int64_t>(f.wire.size());
  }
  auto w = testing::FakeWarehouse::Start(cfg);
  const double mib = 1024.0 * 1024.0;
  // QUIVER_FETCH_MEASURE_ONLY="case:policy" runs one case (a fresh process
  // per case keeps allocator state of one case out of the next).
  const char* only_env = std::getenv("QUIVER_FETCH_MEASURE_ONLY");
  const std::string only = only_env ? only_env : "";
  auto want = [&](const char* kase, ChunkPolicy p) {
    return only.empty() || only == std::string(kase) + ":" + std::string(ChunkPolicyName(p));
  };
  auto line = [&](const char* kase, ChunkPolicy p, const Measured& m, int repeat) {
    std::printf(
        "{\"case\":\"%s\",\"policy\":\"%s\",\"table_mib\":%.1f,\"wire_mib\":%.1f,\"peak_rss_increase_mib\":%.1f,"
        "\"peak_to_table\":%.3f,\"pool_peak_mib\":%.1f,\"mapped_peak_mib\":%.1f,\"seconds\":%.3f,\"mb_per_s\":%.1f,"
        "\"rows_per_s\":%.0f,\"curl_seconds\":null,\"curl_ratio\":null,\"node_seconds\":null,\"node_ratio\":null}\n",
        kase, std::string(ChunkPolicyName(p)).c_str(), table / mib, wire / mib, m.rss_increase / mib,
        static_cast<double>(m.rss_increase) / static_cast<double>(table), m.pool_peak / mib, m.mapped_peak / mib,
        m.seconds, repeat * table / 1e6 / m.seconds, repeat * m.rows / m.seconds);
    std::fflush(stdout);
  };
  const int64_t window = int64_t{256} << 20;
  for (ChunkPolicy p : {ChunkPolicy::kHeap, ChunkPolicy::kMmapAfter, ChunkPolicy::kStreamMmap}) {
    if (!want("fetchall", p)) continue;
    Measured m = Fetch(*w, p, window, /*keep=*/true);
    EXPECT_EQ(m.rows, rows);
    line("fetchall", p, m, 1);
  }
  for (ChunkPolicy p : {ChunkPolicy::kHeap, ChunkPolicy::kMmapAfter, ChunkPolicy::kStreamMmap}) {
    if (!want("repeat", p)) continue;
    Measured m = Fetch(*w, p, window, /*keep=*/true, 4);
    line("repeat", p, m, 4);
  }
  for (ChunkPolicy p : {ChunkPolicy::kHeap, ChunkPolicy::kMmapAfter, ChunkPolicy::kStreamMmap}) {
    if (!want("stream", p)) continue;
    Measured m = Fetch(*w, p, int64_t{64} << 20, /*keep=*/false);
    line("stream", p, m, 1);
  }
}

}  // namespace
}  // namespace quiver::fetch
