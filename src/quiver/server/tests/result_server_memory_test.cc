// End-to-end tests of the result server's memory: RSS returns after a burst
// of large statements; downloaded chunks leave memory.
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

// Issue 35 #11: a chunk leaves server memory once it has been downloaded in
// full (it moves to a spill file), so an open operation whose client read
// everything but did not close holds no chunk in memory, and one whose
// producer waits for its client holds only the chunks not yet fetched
// (max_unfetched_chunks). A served chunk still downloads, byte for byte,
// through its old link and through a refreshed one (startRowOffset); the
// spill files go with the operation.
TEST(ResultServerMemory, DownloadedChunksLeaveMemoryAndStayDownloadable) {
  constexpr int64_t kRows = 60000;
  constexpr int kUnfetched = 3;
  auto table = MakeLineitem(kRows, "served");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 256 << 10;
  so.service.inline_threshold_bytes = 1;
  so.service.max_unfetched_chunks = kUnfetched;
  so.service.max_links_per_fetch = 2;
  // The server's one disk budget (--spill-limit): served chunks are charged.
  DiskBudgetOptions dbo;
  dbo.name = "the server's spill files";
  dbo.limit_bytes = 64 << 20;
  auto disk = DiskBudget::MakeRoot(dbo).value();
  so.store.disk_budget = disk;
  f.Start(so);
  auto* store = f.server->store();
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  auto md = Metadata(rpc, ex.operationHandle);
  // Waits until the store's in-memory chunks are at most `chunks` and
  // `spilled` chunks have moved out; false after 10 s.
  auto settles = [&](int64_t in_memory, int64_t spilled) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto st = store->stats();
      if (st.chunks - st.spilled_chunks <= in_memory && st.spilled_chunks >= spilled) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  std::vector<t::TSparkArrowResultLink> links;
  std::vector<std::string> bodies;
  int64_t next_row = 0;
  std::vector<int64_t> keys;
  bool first = true, checked_mid_result = false;
  for (int pages = 0; pages < 10000; ++pages) {
    auto page = Fetch(rpc, ex.operationHandle, first);
    first = false;
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    auto k = DownloadAll(rpc, page.results.resultLinks, md.lz4Compressed, f.pool.get(), &next_row);
    keys.insert(keys.end(), k.begin(), k.end());
    for (const auto& l : page.results.resultLinks) {
      links.push_back(l);
      bodies.push_back(rpc.http().Get(PathOf(l.fileLink).c_str())->body);
    }
    if (!checked_mid_result && links.size() >= 4 && page.hasMoreRows) {
      checked_mid_result = true;
      // Mid-result, the producer paused: the downloaded chunks are on disk,
      // the ones not yet fetched (at most kUnfetched) in memory.
      ASSERT_TRUE(settles(kUnfetched, static_cast<int64_t>(links.size())))
          << "in memory " << store->stats().chunks - store->stats().spilled_chunks << ", spilled "
          << store->stats().spilled_chunks;
      EXPECT_LE(store->stats().memory_bytes, kUnfetched * (int64_t{256} << 10));
    }
    if (!page.hasMoreRows) break;
  }
  EXPECT_EQ(keys, table->orderkeys);
  EXPECT_TRUE(checked_mid_result);
  ASSERT_GE(links.size(), 8u);
  // Everything downloaded, the operation still open: nothing in memory.
  ASSERT_TRUE(settles(0, static_cast<int64_t>(links.size())));
  const auto st = store->stats();
  EXPECT_EQ(st.chunks, static_cast<int64_t>(links.size()));
  EXPECT_EQ(st.memory_bytes, 0);
  EXPECT_EQ(disk->used_bytes(), st.spilled_bytes) << "spilled served chunks count against --spill-limit";
  EXPECT_EQ(f.server->service()->chunk_pool()->held_bytes(), 0) << "chunk buffers freed";
  const std::string metrics = f.server->MetricsText();
  EXPECT_NE(metrics.find(" memory_bytes=0 "), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("served_chunks_spilled=" + std::to_string(links.size())), std::string::npos) << metrics;
  // Served again from the spill files: the old links and a refreshed one.
  for (size_t i : {size_t{0}, links.size() / 2, links.size() - 1}) {
    auto again = rpc.http().Get(PathOf(links[i].fileLink).c_str());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 200);
    EXPECT_TRUE(again->body == bodies[i]) << "chunk " << i << " differs when read back from its spill file";
    auto part = rpc.http().Get(PathOf(links[i].fileLink).c_str(), httplib::Headers{{"Range", "bytes=10-99"}});
    ASSERT_TRUE(part);
    EXPECT_EQ(part->status, 206);
    EXPECT_TRUE(part->body == bodies[i].substr(10, 90));
  }
  auto refreshed = Fetch(rpc, ex.operationHandle, false, 100000, links[links.size() / 2].startRowOffset);
  ASSERT_FALSE(refreshed.results.resultLinks.empty());
  const auto& l = refreshed.results.resultLinks[0];
  EXPECT_EQ(l.startRowOffset, links[links.size() / 2].startRowOffset);
  auto again = rpc.http().Get(PathOf(l.fileLink).c_str());
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->body == bodies[links.size() / 2]);
  EXPECT_EQ(store->stats().memory_bytes, 0) << "a spilled chunk is read from its file, not brought back";
  EXPECT_GT(store->CountSpillFiles(), 0);
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(store->stats().chunks, 0);
  EXPECT_EQ(store->stats().spilled_bytes, 0);
  EXPECT_EQ(store->CountSpillFiles(), 0) << "the spill files went with the operation";
  EXPECT_EQ(disk->used_bytes(), 0);

  // A client that takes every link and downloads none: of the handed-out
  // chunks only the most recent kUnfetched stay in memory (the producer
  // moves older ones to disk), beside at most kUnfetched not yet handed out;
  // every chunk still downloads intact afterwards.
  auto ex2 = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex2.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex2.status.errorMessage;
  std::vector<t::TSparkArrowResultLink> taken;
  first = true;
  for (int pages = 0; pages < 10000; ++pages) {
    auto page = Fetch(rpc, ex2.operationHandle, first);
    first = false;
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    taken.insert(taken.end(), page.results.resultLinks.begin(), page.results.resultLinks.end());
    const auto now = store->stats();
    EXPECT_LE(now.chunks - now.spilled_chunks, 2 * kUnfetched) << "after " << taken.size() << " links";
    if (!page.hasMoreRows) break;
  }
  ASSERT_EQ(taken.size(), links.size());
  EXPECT_GE(store->stats().spilled_chunks, static_cast<int64_t>(taken.size()) - 2 * kUnfetched);
  next_row = 0;
  EXPECT_EQ(DownloadAll(rpc, taken, md.lz4Compressed, f.pool.get(), &next_row), table->orderkeys);
  EXPECT_EQ(CloseOp(rpc, ex2.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(store->CountSpillFiles(), 0);
  CloseSession(rpc, s);
}

}  // namespace
}  // namespace quiver::server
