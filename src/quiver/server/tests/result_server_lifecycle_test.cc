// End-to-end tests of the result server's lifecycle: concurrent clients,
// idle expiry, orphaned operations, handles bound to their token, stalled
// connections and stopping.
#include "quiver/server/tests/result_server_test_util.h"

namespace quiver::server {
namespace {
using namespace rs_test;  // NOLINT: the shared helpers

TEST(ResultServer, ConcurrentClientsReleaseEverything) {
  auto table = MakeLineitem(20000, "conc");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 256 << 10;
  so.service.inline_threshold_bytes = 256 << 10;
  so.store.memory_budget_bytes = 2 << 20;  // several results at once spill
  so.worker_threads = 8;
  f.Start(so);
  const int64_t baseline = f.pool->held_bytes();
  constexpr int kClients = 8;
  constexpr int kStatements = 25;  // 200 statements
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto pool = MemoryPool::MakeRoot({});
      Rpc rpc(*f.server);
      auto s = Open(rpc);
      for (int i = 0; i < kStatements; ++i) {
        const bool download = (i + c) % 2 == 0;
        const int64_t limit = (i % 5 == 0) ? 20000 : 50 + 97 * i;
        auto ex = Execute(rpc, s, "SELECT * FROM lineitem LIMIT " + std::to_string(limit), download);
        if (ex.status.statusCode != t::TStatusCode::SUCCESS_STATUS) continue;
        if (WaitFinished(rpc, ex.operationHandle) != t::TOperationState::FINISHED_STATE) continue;
        auto md = Metadata(rpc, ex.operationHandle);
        std::vector<int64_t> keys;
        int64_t next_row = 0;
        for (bool first = true;; first = false) {
          auto page = Fetch(rpc, ex.operationHandle, first);
          if (page.status.statusCode != t::TStatusCode::SUCCESS_STATUS) break;
          std::vector<int64_t> k;
          if (md.resultFormat == t::TSparkRowSetType::URL_BASED_SET) {
            k = DownloadAll(rpc, page.results.resultLinks, md.lz4Compressed, pool.get(), &next_row);
          } else {
            k = InlineKeys(md, page.results.arrowBatches, md.lz4Compressed, pool.get(), &next_row);
          }
          keys.insert(keys.end(), k.begin(), k.end());
          if (!page.hasMoreRows) break;
        }
        if (i % 7 != 3) CloseOp(rpc, ex.operationHandle);  // the rest close with the session
        if (keys == std::vector<int64_t>(table->orderkeys.begin(), table->orderkeys.begin() + limit)) ++good;
      }
      CloseSession(rpc, s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), kClients * kStatements);
  EXPECT_GT(f.server->store()->stats().total_spilled_chunks, 0);
  EXPECT_EQ(f.server->service()->stats().open_operations, 0);
  EXPECT_EQ(f.server->store()->stats().chunks, 0);
  EXPECT_EQ(f.server->store()->CountSpillFiles(), 0);
  EXPECT_EQ(f.server->service()->chunk_pool()->held_bytes(), 0);
  EXPECT_EQ(f.server->service()->exec_pool()->held_bytes(), 0);
  EXPECT_EQ(f.server->service()->thrift_pool()->held_bytes(), 0);
  EXPECT_EQ(f.pool->held_bytes(), baseline);
  EXPECT_GT(f.server->service()->chunk_pool()->peak_bytes(), 0);
  const std::string spill_dir = f.server->store()->spill_dir();
  f.server->Stop();
  EXPECT_NE(access(spill_dir.c_str(), F_OK), 0) << "private spill dir removed";
}

TEST(ResultServer, IdleExpiryClosesSessionsAndOperations) {
  auto table = MakeLineitem(3000, "idle");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 64 << 10;
  so.service.inline_threshold_bytes = 1;
  so.service.operation_idle_timeout_ms = 300;
  so.service.session_idle_timeout_ms = 600;
  so.sweep_interval_ms = 50;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
  auto page = Fetch(rpc, ex.operationHandle, true);
  ASSERT_FALSE(page.results.resultLinks.empty());
  EXPECT_GT(f.server->store()->stats().chunks, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_EQ(f.server->store()->stats().chunks, 0);
  EXPECT_EQ(rpc.http().Get(PathOf(page.results.resultLinks[0].fileLink).c_str())->status, 404);
  auto st = f.server->service()->stats();
  EXPECT_EQ(st.open_operations, 0);
  EXPECT_EQ(st.open_sessions, 0);
  auto again = Execute(rpc, s, "SELECT * FROM lineitem", true);
  EXPECT_EQ(again.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
}

// Issue 35 #11: an operation whose producer waits for a client that has gone
// (no call for orphan_timeout_ms) is cancelled and freed, long before its
// idle timeout; one whose client keeps fetching is not.
TEST(ResultServer, AnOrphanedOperationIsFreed) {
  auto table = MakeLineitem(20000, "orphan");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 32 << 10;
  so.service.inline_threshold_bytes = 1;
  so.service.max_unfetched_chunks = 2;
  so.service.orphan_timeout_ms = 2000;  // a fetch round under TSan can take 0.5 s
  so.service.operation_idle_timeout_ms = 600000;
  so.sweep_interval_ms = 50;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  // The producer fills its two unfetched chunks and pauses; nobody fetches.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // The orphan count rises before the operation's chunks are released:
  // wait for both (the chunks must still go within the deadline).
  while ((f.server->service()->stats().orphaned_operations == 0 || f.server->store()->stats().chunks != 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto st = f.server->service()->stats();
  EXPECT_EQ(st.orphaned_operations, 1);
  EXPECT_EQ(st.open_operations, 0);
  EXPECT_EQ(f.server->store()->stats().chunks, 0) << "its chunks went with it";
  EXPECT_EQ(Fetch(rpc, ex.operationHandle, true).status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  // A client that keeps fetching (slower than the producer) keeps its
  // operation, and reads every row.
  auto ex2 = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex2.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex2.status.errorMessage;
  std::vector<int64_t> keys;
  int64_t next_row = 0;
  bool first = true;
  for (int pages = 0; pages < 10000; ++pages) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto page = Fetch(rpc, ex2.operationHandle, first);
    first = false;
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    auto k = DownloadAll(rpc, page.results.resultLinks, true, f.pool.get(), &next_row);
    keys.insert(keys.end(), k.begin(), k.end());
    if (!page.hasMoreRows) break;
  }
  EXPECT_EQ(keys, table->orderkeys);
  EXPECT_EQ(f.server->service()->stats().orphaned_operations, 1);
  EXPECT_EQ(CloseOp(rpc, ex2.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  CloseSession(rpc, s);
}

// Issue 35 #6: handles belong to the token that opened the session. With a
// leaked session and operation handle, a second token gets, for every call,
// exactly the reply an unknown handle gets (FetchResults, GetOperationStatus,
// GetResultSetMetadata, CancelOperation, CloseOperation, ExecuteStatement in
// the session, CloseSession), and the first token's work goes on untouched.
TEST(ResultServer, HandlesBelongToTheTokenThatOpenedTheSession) {
  Fixture f;
  auto table = MakeLineitem(5000, "owner");
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.tokens = {"second-token-4567"};
  f.Start(so);
  Rpc owner(*f.server);
  Rpc other(*f.server, "second-token-4567");
  auto s = Open(owner);
  auto ex = Execute(owner, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  ASSERT_EQ(WaitFinished(owner, ex.operationHandle), t::TOperationState::FINISHED_STATE);
  // The same calls with handles nobody issued, for the replies to match.
  t::TSessionHandle unknown_s = s;
  unknown_s.sessionId.guid[0] ^= 1;
  t::TOperationHandle unknown_op = ex.operationHandle;
  unknown_op.operationId.guid[0] ^= 1;
  auto status_of = [&](Rpc& rpc, const t::TSessionHandle& sh, const t::TOperationHandle& oh) {
    std::vector<std::string> out;
    auto add = [&](const t::TStatus& st) {
      out.push_back(std::to_string(st.statusCode) + " " + st.sqlState + " " + st.errorMessage);
    };
    {
      t::TFetchResultsReq req;
      req.operationHandle = oh;
      req.orientation = t::TFetchOrientation::FETCH_NEXT;
      req.maxRows = 1000;
      t::TFetchResultsResp resp;
      RPC_NO_ASSERT(rpc, FetchResults, req, resp);
      add(resp.status);
      EXPECT_FALSE(resp.__isset.results && !resp.results.resultLinks.empty());
    }
    {
      t::TGetOperationStatusReq req;
      req.operationHandle = oh;
      t::TGetOperationStatusResp resp;
      RPC_NO_ASSERT(rpc, GetOperationStatus, req, resp);
      add(resp.status);
    }
    {
      t::TGetResultSetMetadataReq req;
      req.operationHandle = oh;
      t::TGetResultSetMetadataResp resp;
      RPC_NO_ASSERT(rpc, GetResultSetMetadata, req, resp);
      add(resp.status);
    }
    {
      t::TCancelOperationReq req;
      req.operationHandle = oh;
      t::TCancelOperationResp resp;
      RPC_NO_ASSERT(rpc, CancelOperation, req, resp);
      add(resp.status);
    }
    {
      t::TCloseOperationReq req;
      req.operationHandle = oh;
      t::TCloseOperationResp resp;
      RPC_NO_ASSERT(rpc, CloseOperation, req, resp);
      add(resp.status);
    }
    add(Execute(rpc, sh, "SELECT 1", true).status);
    {
      t::TCloseSessionReq req;
      req.sessionHandle = sh;
      t::TCloseSessionResp resp;
      RPC_NO_ASSERT(rpc, CloseSession, req, resp);
      add(resp.status);
    }
    return out;
  };
  const auto as_unknown = status_of(other, unknown_s, unknown_op);
  const auto as_other = status_of(other, s, ex.operationHandle);
  ASSERT_EQ(as_other.size(), 7u);
  for (size_t i = 0; i < as_other.size(); ++i) {
    EXPECT_EQ(as_other[i], as_unknown[i]) << "call " << i;
    EXPECT_EQ(as_other[i].rfind(std::to_string(t::TStatusCode::INVALID_HANDLE_STATUS) + " ", 0), 0u) << as_other[i];
  }
  EXPECT_EQ(f.server->service()->stats().statements, 1) << "the other token ran nothing in the session";
  // The owner's operation and session are whole: every row, then close.
  int64_t rows = 0;
  for (bool first = true;; first = false) {
    auto page = Fetch(owner, ex.operationHandle, first);
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    for (const auto& l : page.results.resultLinks) rows += l.rowCount;
    for (const auto& b : page.results.arrowBatches) rows += b.rowCount;
    if (!page.hasMoreRows) break;
  }
  EXPECT_EQ(rows, 5000);
  CloseSession(owner, s);
  EXPECT_EQ(f.server->service()->stats().open_sessions, 0);
}

TEST(ResultServer, StalledConnectionsDoNotHoldWorkers) {
  Fixture f;
  ServerOptions so;
  so.worker_threads = 2;
  so.header_timeout_ms = 1000;
  f.Start(so);
  // Connections that never finish the TLS handshake, more than the workers.
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(f.server->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const char partial[] = "\x16\x03\x01";  // the start of a TLS record, then silence
    ASSERT_EQ(write(fd, partial, 3), 3);
    stalled.push_back(fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 10.0) << "a worker came free after the read timeout";
  CloseSession(rpc, s);
  for (int fd : stalled) close(fd);
}

// A server stopped at once, before any request, stops: cpp-httplib 0.11
// ignores stop() until its accept loop runs, so Start waits for the loop
// (this hung until the test timeout before).
TEST(ResultServer, StopRightAfterStartReturns) {
  for (int i = 0; i < 20; ++i) {
    Fixture f;
    f.Start(ServerOptions{});
    ASSERT_NE(f.server, nullptr);
    EXPECT_GT(f.server->port(), 0);
    const auto begin = std::chrono::steady_clock::now();
    f.server->Stop();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5)) << "round " << i;
  }
}

}  // namespace
}  // namespace quiver::server
