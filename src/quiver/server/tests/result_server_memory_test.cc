// End-to-end test of the result server's memory: RSS returns after a burst
// of large statements.
#include "quiver/server/tests/result_server_test_util.h"

namespace quiver::server {
namespace {
using namespace rs_test;  // NOLINT: the shared helpers

// Memory handed back: after a burst of 12 concurrent large statements is
// fetched and closed, the sweeper returns the freed heap to the OS, and
// RSS comes back within 64 MiB of its level after the first statement.
// (glibc keeps freed chunk buffers in its arenas otherwise.)
int64_t RunAndDrop(Fixture& f, int64_t rows) {
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  if (ex.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return -1;
  if (WaitFinished(rpc, ex.operationHandle) != t::TOperationState::FINISHED_STATE) return -1;
  auto pool = MemoryPool::MakeRoot({});
  auto md = Metadata(rpc, ex.operationHandle);
  int64_t next_row = 0;
  for (bool first = true;; first = false) {
    auto page = Fetch(rpc, ex.operationHandle, first);
    if (page.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return -1;
    DownloadAll(rpc, page.results.resultLinks, md.lz4Compressed, pool.get(), &next_row);
    if (!page.hasMoreRows) break;
  }
  CloseOp(rpc, ex.operationHandle);
  CloseSession(rpc, s);
  return next_row == rows ? next_row : -1;
}

// Under a sanitizer RSS also counts its shadow memory: the bound is
// checked only in plain builds (testing::kRssIsMeaningful).
using testing::kRssIsMeaningful;

TEST(ResultServerMemory, RssReturnsAfterABurstOfStatements) {
  constexpr int64_t kRows = 150000;
  auto table = MakeLineitem(kRows, "rss");
  for (bool release : {true, false}) {
    Fixture f;
    ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
    ServerOptions so;
    so.sweep_interval_ms = 100;
    so.service.inline_threshold_bytes = 1024;
    so.service.chunk_bytes = 4 << 20;
    so.release_memory_after_statements = release;
    f.Start(so);
    ASSERT_EQ(RunAndDrop(f, kRows), kRows);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    const int64_t after_first = ResidentBytes();
    std::vector<std::thread> burst;
    std::atomic<int> good{0};
    for (int i = 0; i < 12; ++i) {
      burst.emplace_back([&] { good += RunAndDrop(f, kRows) == kRows; });
    }
    for (auto& th : burst) th.join();
    EXPECT_EQ(good.load(), 12);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    const int64_t after_burst = ResidentBytes();
    std::printf("release=%d: RSS after the first statement %.1f MiB, after the burst %.1f MiB\n", release,
                static_cast<double>(after_first) / (1 << 20), static_cast<double>(after_burst) / (1 << 20));
    if (release) {
      if (kRssIsMeaningful) {
        EXPECT_LT(after_burst - after_first, int64_t{64} << 20);
      }
      EXPECT_NE(f.server->MetricsText().find("process_resident_bytes="), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace quiver::server
