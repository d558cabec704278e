// Stateless servers over a shared store, without a real object store: two
// ResultServices share an in-memory ChunkStore that says shared() and one
// cluster secret; every RPC of one statement alternates between them (as a
// round-robin balancer would), and the result comes back once, in order; a
// handle signed with another secret is refused; closing leaves nothing.
#include <gtest/gtest.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "quiver/fetch/chunk_store.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/server/operation.h"
#include "quiver/server/result_service.h"
#include "quiver/tcli/TCLIService.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::server {
namespace {
namespace t = ::quiver::tcli;
using apache::thrift::transport::TMemoryBuffer;

// Chunks and documents in memory, visible to every service given it.
class SharedMemoryStore : public fetch::ChunkStore {
 public:
  Result<std::string> Put(std::shared_ptr<Buffer> bytes, int64_t) override {
    QUIVER_ASSIGN_OR_RETURN(auto id, fetch::NewChunkId());
    std::lock_guard<std::mutex> lock(mu_);
    chunks_[id] = std::move(bytes);
    return id;
  }
  Result<std::string> PutGrouped(std::shared_ptr<Buffer> bytes, int64_t, std::string_view group) override {
    QUIVER_ASSIGN_OR_RETURN(auto id, fetch::NewGroupedChunkId(group));
    std::lock_guard<std::mutex> lock(mu_);
    chunks_[id] = std::move(bytes);
    return id;
  }
  Result<std::vector<std::string>> ListChunkIds(std::string_view group) const override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& [id, bytes] : chunks_)
      if (id.rfind(group, 0) == 0) out.push_back(id);
    return out;
  }
  // As S3ChunkStore answers it: a write of the bytes already there (a
  // retried PUT whose reply was lost) is a success too.
  Result<bool> PutDocumentIfAbsent(const std::string& name, std::string_view bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = docs_.emplace(name, std::string(bytes));
    return inserted || it->second == bytes;
  }
  Result<fetch::ChunkLink> Link(const std::string& id, int64_t expiry_ms) const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!chunks_.count(id)) return Status::KeyError("no chunk " + id);
    return fetch::ChunkLink{"https://store.invalid/chunks/" + id, expiry_ms};
  }
  Result<std::shared_ptr<Buffer>> Get(const std::string& id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = chunks_.find(id);
    if (it == chunks_.end()) return Status::KeyError("no chunk " + id);
    return it->second;
  }
  void Remove(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu_);
    chunks_.erase(id);
  }
  bool shared() const override { return true; }
  /// Called (outside the lock) before each PutDocument: a test holds a
  /// server between two writes with it. Set before the servers start.
  std::function<void(const std::string&)> before_put;
  Status PutDocument(const std::string& name, std::string_view bytes) override {
    if (before_put) before_put(name);
    std::lock_guard<std::mutex> lock(mu_);
    docs_[name] = std::string(bytes);
    return Status::OK();
  }
  Result<std::optional<std::string>> GetDocument(const std::string& name) const override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = docs_.find(name);
    if (it == docs_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Status RemoveDocument(const std::string& name) override {
    std::lock_guard<std::mutex> lock(mu_);
    docs_.erase(name);
    return Status::OK();
  }
  Result<std::vector<std::string>> ListDocuments(const std::string& prefix) const override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& [k, v] : docs_)
      if (k.rfind(prefix, 0) == 0) out.push_back(k);
    return out;
  }
  size_t chunks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return chunks_.size();
  }
  size_t documents() const {
    std::lock_guard<std::mutex> lock(mu_);
    return docs_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Buffer>> chunks_;
  std::map<std::string, std::string> docs_;
};

// 20 batches of 1,000 int64 rows (x = row number).
class CountingExecutor : public StatementExecutor {
 public:
  explicit CountingExecutor(MemoryPool* pool) {
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int64(), false)};
    schema_ = schema;
    for (int b = 0; b < 20; ++b) {
      auto data = Buffer::Allocate(pool, 8000).value();
      for (int i = 0; i < 1000; ++i) reinterpret_cast<int64_t*>(data->mutable_data())[i] = b * 1000 + i;
      auto a = std::make_shared<ArrayData>();
      a->type = int64();
      a->length = 1000;
      a->buffers = {nullptr, data};
      auto batch = std::make_shared<RecordBatch>();
      batch->schema = schema;
      batch->num_rows = 1000;
      batch->columns = {a};
      batches_.push_back(batch);
    }
  }
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view, const std::atomic<bool>*, MemoryPool*) override {
    return std::unique_ptr<RecordBatchStream>(new BatchVectorStream(schema_, batches_));
  }
  std::vector<TableInfo> ListTables() const override { return {{"t", schema_}}; }

 private:
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> batches_;
};

struct Server {
  std::unique_ptr<ResultService> service;
  Server(MemoryPool* pool, StatementExecutor* executor, fetch::ChunkStore* store, const std::string& secret,
         const std::function<void(ResultServiceOptions&)>& tweak = {}) {
    ResultServiceOptions o;
    o.pool = pool;
    o.executor = executor;
    o.store = store;
    o.chunk_bytes = 16 << 10;  // ~10 chunks
    o.inline_threshold_bytes = 1024;
    o.max_links_per_fetch = 3;
    o.fetch_wait_ms = 2000;
    o.cluster_secret = secret;
    if (tweak) tweak(o);
    service = ResultService::Make(o).value();
  }
  // One RPC: send_X through a Thrift client into Dispatch, recv_X back.
  // `seqid` replaces the message header's sequence id (the C++ client
  // always sends 0; the Node driver's Thrift client counts its calls).
  template <typename Send, typename Recv>
  void Call(Send send, Recv recv, int32_t seqid = 0) {
    auto out = std::make_shared<TMemoryBuffer>();
    auto in = std::make_shared<TMemoryBuffer>();
    t::TCLIServiceClient c(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in),
                           std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out));
    send(c);
    std::string request = out->getBufferAsString();
    if (seqid != 0) {
      // Strict binary header: version|type (4), name length (4), name, seqid (4).
      ASSERT_GE(request.size(), 8u);
      const uint32_t name_bytes = (uint32_t(uint8_t(request[4])) << 24) | (uint32_t(uint8_t(request[5])) << 16) |
                                  (uint32_t(uint8_t(request[6])) << 8) | uint32_t(uint8_t(request[7]));
      ASSERT_GE(request.size(), 12u + name_bytes);
      for (int i = 0; i < 4; ++i) request[8 + name_bytes + i] = static_cast<char>(uint32_t(seqid) >> (24 - 8 * i));
    }
    auto reply =
        service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(request.data()), request.size()));
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    in->resetBuffer(reinterpret_cast<uint8_t*>(const_cast<char*>(reply->data())), static_cast<uint32_t>(reply->size()),
                    TMemoryBuffer::COPY);
    recv(c);
  }
};

std::string HexOf(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// "SELECT x FROM t" in `session`, asynchronous, CloudFetch allowed.
t::TExecuteStatementReq SelectX(const t::TSessionHandle& session) {
  t::TExecuteStatementReq ex;
  ex.sessionHandle = session;
  ex.statement = "SELECT x FROM t";
  ex.__set_runAsync(true);
  ex.__set_canDownloadResult(true);
  return ex;
}

class StatelessServiceTest : public ::testing::Test {
 protected:
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({.name = "stateless"});
  CountingExecutor executor_{pool_.get()};
  SharedMemoryStore store_;
  std::string secret_ = "a cluster secret of 32 bytes...!";
};

TEST_F(StatelessServiceTest, EveryCallOnAnotherServerReturnsEveryRowOnceAndCloseLeavesNothing) {
  Server a(pool_.get(), &executor_, &store_, secret_);
  Server b(pool_.get(), &executor_, &store_, secret_);
  Server* servers[] = {&a, &b};
  int turn = 0;
  auto next = [&]() -> Server& { return *servers[turn++ % 2]; };

  t::TOpenSessionResp open;
  next().Call([](auto& c) { c.send_OpenSession(t::TOpenSessionReq()); }, [&](auto& c) { c.recv_OpenSession(open); });
  ASSERT_EQ(open.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  const t::TExecuteStatementReq ex = SelectX(open.sessionHandle);
  t::TExecuteStatementResp exr;
  next().Call([&](auto& c) { c.send_ExecuteStatement(ex); }, [&](auto& c) { c.recv_ExecuteStatement(exr); });
  ASSERT_EQ(exr.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << exr.status.errorMessage;
  const t::TOperationHandle op = exr.operationHandle;

  // Status from either server until FINISHED (the whole result is in the store).
  int state = -1;
  for (int i = 0; i < 100 && state != t::TOperationState::FINISHED_STATE; ++i) {
    t::TGetOperationStatusReq sr;
    sr.operationHandle = op;
    t::TGetOperationStatusResp st;
    next().Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
    ASSERT_EQ(st.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << st.status.errorMessage;
    state = st.operationState;
    if (state != t::TOperationState::FINISHED_STATE) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(state, t::TOperationState::FINISHED_STATE);
  t::TGetResultSetMetadataReq mr;
  mr.operationHandle = op;
  t::TGetResultSetMetadataResp meta;
  next().Call([&](auto& c) { c.send_GetResultSetMetadata(mr); }, [&](auto& c) { c.recv_GetResultSetMetadata(meta); });
  ASSERT_EQ(meta.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << meta.status.errorMessage;
  ASSERT_EQ(meta.schema.columns.size(), 1u);
  EXPECT_EQ(meta.schema.columns[0].columnName, "x");
  EXPECT_EQ(meta.resultFormat, t::TSparkRowSetType::URL_BASED_SET);

  // FETCH_FIRST, then FETCH_NEXT (no offset: the cursor is in the store).
  int64_t next_row = 0;
  int pages = 0;
  bool more = true;
  for (bool first = true; more && pages < 100; first = false, ++pages) {
    t::TFetchResultsReq fr;
    fr.operationHandle = op;
    fr.orientation = first ? t::TFetchOrientation::FETCH_FIRST : t::TFetchOrientation::FETCH_NEXT;
    fr.maxRows = 100000;
    t::TFetchResultsResp page;
    next().Call([&](auto& c) { c.send_FetchResults(fr); }, [&](auto& c) { c.recv_FetchResults(page); });
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    for (const auto& l : page.results.resultLinks) {
      EXPECT_EQ(l.startRowOffset, next_row) << "page " << pages;
      next_row = l.startRowOffset + l.rowCount;
      EXPECT_EQ(l.fileLink.rfind("https://store.invalid/chunks/", 0), 0u);
    }
    more = page.hasMoreRows;
  }
  EXPECT_EQ(next_row, 20000);
  EXPECT_GT(pages, 2);

  // A refetch by startRowOffset on the other server starts at that row's chunk.
  t::TFetchResultsReq again;
  again.operationHandle = op;
  again.orientation = t::TFetchOrientation::FETCH_NEXT;
  again.__set_startRowOffset(12345);
  t::TFetchResultsResp refetch;
  next().Call([&](auto& c) { c.send_FetchResults(again); }, [&](auto& c) { c.recv_FetchResults(refetch); });
  ASSERT_EQ(refetch.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  ASSERT_FALSE(refetch.results.resultLinks.empty());
  const auto& l0 = refetch.results.resultLinks[0];
  EXPECT_LE(l0.startRowOffset, 12345);
  EXPECT_GT(l0.startRowOffset + l0.rowCount, 12345);

  EXPECT_GT(store_.chunks(), 2u);
  t::TCloseOperationReq cr;
  cr.operationHandle = op;
  t::TCloseOperationResp closed;
  next().Call([&](auto& c) { c.send_CloseOperation(cr); }, [&](auto& c) { c.recv_CloseOperation(closed); });
  ASSERT_EQ(closed.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << closed.status.errorMessage;
  // The operation is gone for both servers.
  for (Server* s : servers) {
    t::TGetOperationStatusReq sr;
    sr.operationHandle = op;
    t::TGetOperationStatusResp st;
    s->Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
    EXPECT_EQ(st.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  }
  t::TCloseSessionReq cs;
  cs.sessionHandle = open.sessionHandle;
  t::TCloseSessionResp csr;
  next().Call([&](auto& c) { c.send_CloseSession(cs); }, [&](auto& c) { c.recv_CloseSession(csr); });
  EXPECT_EQ(csr.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  // Both services sweep (hand their published operations to the store).
  a.service->ExpireIdle(fetch::NowEpochMs());
  b.service->ExpireIdle(fetch::NowEpochMs());
  EXPECT_EQ(store_.chunks(), 0u);
  // Only the closed session's marker and its expiry entry are left.
  auto docs = store_.ListDocuments("").value();
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0], "closed-sessions/" + HexOf(open.sessionHandle.sessionId.guid));
  EXPECT_EQ(docs[1].rfind("expiry/", 0), 0u);
  EXPECT_EQ(a.service->chunk_pool()->held_bytes(), 0);
  EXPECT_EQ(b.service->chunk_pool()->held_bytes(), 0);
}

// Opens a session and runs "SELECT x FROM t" (CloudFetch) on `s`, then waits
// until it is FINISHED; returns the operation handle.
// `seqid`: of every call (0 as from C++ Thrift).
t::TOperationHandle RunToFinished(Server& s, t::TSessionHandle* session, int32_t seqid = 0) {
  t::TOpenSessionResp open;
  s.Call([](auto& c) { c.send_OpenSession(t::TOpenSessionReq()); }, [&](auto& c) { c.recv_OpenSession(open); }, seqid);
  EXPECT_EQ(open.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  *session = open.sessionHandle;
  const t::TExecuteStatementReq ex = SelectX(open.sessionHandle);
  t::TExecuteStatementResp exr;
  s.Call([&](auto& c) { c.send_ExecuteStatement(ex); }, [&](auto& c) { c.recv_ExecuteStatement(exr); }, seqid);
  EXPECT_EQ(exr.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << exr.status.errorMessage;
  for (int i = 0; i < 200; ++i) {
    t::TGetOperationStatusReq sr;
    sr.operationHandle = exr.operationHandle;
    t::TGetOperationStatusResp st;
    s.Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
    if (st.operationState == t::TOperationState::FINISHED_STATE || st.operationState == t::TOperationState::ERROR_STATE)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exr.operationHandle;
}

// FETCH_NEXT without startRowOffset, as @databricks/sql 2.1.0 sends it
// (every such request is byte-identical but for the Thrift seqid): the
// first row of each link and the rows of the page.
struct PageRows {
  std::vector<int64_t> starts;
  int64_t rows = 0;
  bool more = false;
};
PageRows FetchNext(Server& s, const t::TOperationHandle& op, bool first, int32_t seqid) {
  t::TFetchResultsReq fr;
  fr.operationHandle = op;
  fr.orientation = first ? t::TFetchOrientation::FETCH_FIRST : t::TFetchOrientation::FETCH_NEXT;
  fr.maxRows = 100000;
  t::TFetchResultsResp page;
  s.Call([&](auto& c) { c.send_FetchResults(fr); }, [&](auto& c) { c.recv_FetchResults(page); }, seqid);
  EXPECT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
  PageRows out;
  for (const auto& l : page.results.resultLinks) {
    out.starts.push_back(l.startRowOffset);
    out.rows += l.rowCount;
  }
  out.more = page.hasMoreRows;
  return out;
}

// A server that saved the advanced cursor and died before its reply left
// (or a balancer that re-sent the request after a timeout): the retry, the
// same bytes on another server, gets the same page, and the next request
// goes on after it; no page is skipped or served twice.
TEST_F(StatelessServiceTest, ARetriedFetchNextGetsTheSamePageOnAnotherServer) {
  Server a(pool_.get(), &executor_, &store_, secret_);
  Server b(pool_.get(), &executor_, &store_, secret_);
  t::TSessionHandle session;
  const t::TOperationHandle op = RunToFinished(a, &session);

  int32_t seqid = 100;
  PageRows p1 = FetchNext(b, op, /*first=*/true, ++seqid);
  ASSERT_EQ(p1.starts.size(), 3u);  // max_links_per_fetch
  EXPECT_EQ(p1.starts[0], 0);
  int64_t next_row = p1.rows;
  // Page 2 on a; its reply is "lost", and the same request goes to b.
  const int32_t lost = ++seqid;
  PageRows p2 = FetchNext(a, op, false, lost);
  PageRows retry = FetchNext(b, op, false, lost);
  ASSERT_FALSE(p2.starts.empty());
  EXPECT_EQ(p2.starts[0], next_row);
  EXPECT_EQ(retry.starts, p2.starts);
  EXPECT_EQ(retry.rows, p2.rows);
  // ... and once more on a (two retries in a row).
  EXPECT_EQ(FetchNext(a, op, false, lost).starts, p2.starts);
  next_row += p2.rows;
  // The following requests carry new seqids: they go on after page 2.
  int pages = 0;
  for (bool more = retry.more; more && pages < 100; ++pages) {
    PageRows p = FetchNext(pages % 2 ? a : b, op, false, ++seqid);
    ASSERT_FALSE(p.starts.empty());
    EXPECT_EQ(p.starts[0], next_row) << "page " << pages + 3;
    next_row += p.rows;
    more = p.more;
  }
  EXPECT_EQ(next_row, 20000);
  EXPECT_GE(pages, 1);

  // Clients that send no seqid (0) are not replayed: each FETCH_NEXT moves on.
  PageRows f = FetchNext(a, op, /*first=*/true, 0);
  PageRows n1 = FetchNext(b, op, false, 0);
  PageRows n2 = FetchNext(a, op, false, 0);
  ASSERT_FALSE(n1.starts.empty());
  ASSERT_FALSE(n2.starts.empty());
  EXPECT_EQ(n1.starts[0], f.rows);
  EXPECT_EQ(n2.starts[0], f.rows + n1.rows);

  // Nor are clients that send one constant seqid with every call (their
  // ExecuteStatement's too): every FETCH_NEXT moves on.
  t::TSessionHandle session2;
  const t::TOperationHandle op2 = RunToFinished(b, &session2, 42);
  PageRows c1 = FetchNext(a, op2, /*first=*/true, 42);
  PageRows c2 = FetchNext(b, op2, false, 42);
  PageRows c3 = FetchNext(a, op2, false, 42);
  ASSERT_FALSE(c2.starts.empty());
  ASSERT_FALSE(c3.starts.empty());
  EXPECT_EQ(c2.starts[0], c1.rows);
  EXPECT_EQ(c3.starts[0], c1.rows + c2.rows);
}

// The owner's manifest says FINISHED (other servers answer so from it)
// before the owner itself publishes (it still writes the expiry entry):
// a FETCH_FIRST the owner serves from its own operation in that window
// moves the shared cursor, so the FETCH_NEXT on another server goes on
// after it instead of starting at row 0 again.
TEST_F(StatelessServiceTest, APageTheOwnerServesBeforeItPublishesMovesTheSharedCursor) {
  std::mutex m;
  std::condition_variable cv;
  bool holding = false, release = false;
  store_.before_put = [&](const std::string& name) {
    if (name.rfind("expiry/", 0) != 0 || name.find("session") != std::string::npos) return;
    std::unique_lock<std::mutex> lock(m);
    if (release) return;
    holding = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  Server a(pool_.get(), &executor_, &store_, secret_);
  Server b(pool_.get(), &executor_, &store_, secret_);
  t::TOpenSessionResp open;
  a.Call([](auto& c) { c.send_OpenSession(t::TOpenSessionReq()); }, [&](auto& c) { c.recv_OpenSession(open); });
  t::TExecuteStatementResp exr;
  a.Call([&](auto& c) { c.send_ExecuteStatement(SelectX(open.sessionHandle)); },
         [&](auto& c) { c.recv_ExecuteStatement(exr); });
  ASSERT_EQ(exr.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << exr.status.errorMessage;
  const t::TOperationHandle op = exr.operationHandle;
  {
    std::unique_lock<std::mutex> lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return holding; })) << "the owner never published";
  }
  // b reads the manifest: FINISHED, while a has not published yet.
  t::TGetOperationStatusReq sr;
  sr.operationHandle = op;
  t::TGetOperationStatusResp st;
  b.Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
  ASSERT_EQ(st.operationState, t::TOperationState::FINISHED_STATE) << st.errorMessage;
  PageRows p1;
  std::thread first([&] { p1 = FetchNext(a, op, /*first=*/true, 201); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
  }
  cv.notify_all();
  first.join();
  ASSERT_FALSE(p1.starts.empty());
  EXPECT_EQ(p1.starts[0], 0);
  PageRows p2 = FetchNext(b, op, false, 202);
  ASSERT_FALSE(p2.starts.empty());
  EXPECT_EQ(p2.starts[0], p1.rows) << "page 2 on another server goes on after page 1";
}

// The same with the local store (one server): a request the balancer
// re-sends to the same server after a response timeout.
TEST_F(StatelessServiceTest, ARetriedFetchNextGetsTheSamePageWithTheLocalStore) {
  fetch::LocalChunkStoreOptions so;
  so.link_base_url = "https://127.0.0.1:1";
  auto local = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
  Server a(pool_.get(), &executor_, local.get(), "");
  t::TSessionHandle session;
  const t::TOperationHandle op = RunToFinished(a, &session);
  PageRows p1 = FetchNext(a, op, true, 7);
  PageRows p2 = FetchNext(a, op, false, 8);
  PageRows again = FetchNext(a, op, false, 8);
  PageRows p3 = FetchNext(a, op, false, 9);
  ASSERT_FALSE(p2.starts.empty());
  ASSERT_FALSE(p3.starts.empty());
  EXPECT_EQ(p2.starts[0], p1.rows);
  EXPECT_EQ(again.starts, p2.starts);
  EXPECT_EQ(p3.starts[0], p1.rows + p2.rows);
}

// CloseSession on one server: the session's handle and its operations are
// refused by every server, including one that had already used the session;
// the marker that says so is kept while the handle could be taken, and once
// the handle is past its lifetime every server refuses it without the
// marker too (issue 35 #8: a closed session came back once its marker
// expired).
TEST_F(StatelessServiceTest, ASessionClosedOnOneServerIsClosedOnEveryServer) {
  constexpr int64_t kLifetimeMs = 1500;
  auto short_sessions = [](ResultServiceOptions& o) {
    o.session_idle_timeout_ms = 60000;
    o.session_max_lifetime_ms = kLifetimeMs;
  };
  Server a(pool_.get(), &executor_, &store_, secret_, short_sessions);
  Server b(pool_.get(), &executor_, &store_, secret_, short_sessions);
  Server c(pool_.get(), &executor_, &store_, secret_, short_sessions);
  t::TSessionHandle session;
  const t::TOperationHandle op = RunToFinished(a, &session);
  auto get_info = [&](Server& s) {
    t::TGetInfoReq gi;
    gi.sessionHandle = session;
    gi.infoType = t::TGetInfoType::CLI_SERVER_NAME;
    t::TGetInfoResp r;
    s.Call([&](auto& cl) { cl.send_GetInfo(gi); }, [&](auto& cl) { cl.recv_GetInfo(r); });
    return r.status.statusCode;
  };
  auto execute = [&](Server& s) {
    t::TExecuteStatementReq ex;
    ex.sessionHandle = session;
    ex.statement = "SELECT x FROM t";
    t::TExecuteStatementResp r;
    s.Call([&](auto& cl) { cl.send_ExecuteStatement(ex); }, [&](auto& cl) { cl.recv_ExecuteStatement(r); });
    return r.status.statusCode;
  };
  auto op_status = [&](Server& s) {
    t::TGetOperationStatusReq sr;
    sr.operationHandle = op;
    t::TGetOperationStatusResp r;
    s.Call([&](auto& cl) { cl.send_GetOperationStatus(sr); }, [&](auto& cl) { cl.recv_GetOperationStatus(r); });
    return r.status.statusCode;
  };
  // Before: every server accepts both (b adopts the session).
  for (Server* s : {&a, &b, &c}) {
    EXPECT_EQ(get_info(*s), t::TStatusCode::SUCCESS_STATUS);
    EXPECT_EQ(op_status(*s), t::TStatusCode::SUCCESS_STATUS);
  }
  t::TCloseSessionReq cs;
  cs.sessionHandle = session;
  t::TCloseSessionResp csr;
  c.Call([&](auto& cl) { cl.send_CloseSession(cs); }, [&](auto& cl) { cl.recv_CloseSession(csr); });
  ASSERT_EQ(csr.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << csr.status.errorMessage;
  for (Server* s : {&a, &b, &c}) {
    EXPECT_EQ(get_info(*s), t::TStatusCode::INVALID_HANDLE_STATUS);
    EXPECT_EQ(execute(*s), t::TStatusCode::INVALID_HANDLE_STATUS);
    EXPECT_EQ(op_status(*s), t::TStatusCode::INVALID_HANDLE_STATUS);
  }
  EXPECT_EQ(store_.chunks(), 0u);
  EXPECT_TRUE(store_.GetDocument("closed-sessions/" + HexOf(session.sessionId.guid)).value().has_value());
  // The guid carries its issue time; the marker is kept until the handle's
  // lifetime (and a minute of skew) is over, and no sweep before removes it.
  const std::optional<int64_t> issued = HandleIssuedMs(session.sessionId.guid);
  ASSERT_TRUE(issued.has_value());
  EXPECT_LE(std::llabs(*issued - fetch::NowEpochMs()), 10000);
  b.service->ExpireIdle(*issued + kLifetimeMs + 30000);
  EXPECT_TRUE(store_.GetDocument("closed-sessions/" + HexOf(session.sessionId.guid)).value().has_value());
  // Past the handle's lifetime: a server that never saw the session refuses
  // it although the marker is gone, as every other server does.
  while (fetch::NowEpochMs() <= *issued + kLifetimeMs) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  b.service->ExpireIdle(*issued + kLifetimeMs + 61000);
  EXPECT_EQ(store_.documents(), 0u);
  Server d(pool_.get(), &executor_, &store_, secret_, short_sessions);
  for (Server* s : {&a, &b, &c, &d}) {
    EXPECT_EQ(get_info(*s), t::TStatusCode::INVALID_HANDLE_STATUS);
    EXPECT_EQ(execute(*s), t::TStatusCode::INVALID_HANDLE_STATUS);
  }
  a.service->ExpireIdle(fetch::NowEpochMs());
  c.service->ExpireIdle(fetch::NowEpochMs());
  EXPECT_EQ(a.service->chunk_pool()->held_bytes(), 0);
}

// A result larger than max_result_bytes fails with SQLSTATE 54000 naming
// the limit, on every server, and leaves no chunk in the store.
TEST_F(StatelessServiceTest, AResultPastMaxResultBytesFailsAndLeavesNoChunk) {
  auto limited = [](ResultServiceOptions& o) {
    o.lz4 = false;  // stored bytes = IPC bytes: ~16 KiB chunks, the third one passes the limit
    o.max_result_bytes = 40000;
  };
  Server a(pool_.get(), &executor_, &store_, secret_, limited);
  Server b(pool_.get(), &executor_, &store_, secret_, limited);
  t::TSessionHandle session;
  const t::TOperationHandle op = RunToFinished(a, &session);
  t::TGetOperationStatusReq sr;
  sr.operationHandle = op;
  for (Server* s : {&a, &b}) {
    t::TGetOperationStatusResp st;
    s->Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
    ASSERT_EQ(st.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    EXPECT_EQ(st.operationState, t::TOperationState::ERROR_STATE);
    EXPECT_EQ(st.sqlState, "54000");
    EXPECT_NE(st.errorMessage.find("past the server's limit of 40000 bytes per result (max_result_bytes)"),
              std::string::npos)
        << st.errorMessage;
  }
  EXPECT_EQ(store_.chunks(), 0u);
  EXPECT_GE(a.service->stats().chunks_written, 2);  // some chunks were stored, then removed
  // Without the limit the same statement succeeds (the result is ~160 KB of IPC).
  Server unlimited(pool_.get(), &executor_, &store_, secret_);
  const t::TOperationHandle ok = RunToFinished(unlimited, &session);
  sr.operationHandle = ok;
  t::TGetOperationStatusResp st;
  unlimited.Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
  EXPECT_EQ(st.operationState, t::TOperationState::FINISHED_STATE);
}

TEST_F(StatelessServiceTest, HandlesSignedWithAnotherSecretAreRefused) {
  Server a(pool_.get(), &executor_, &store_, secret_);
  Server other(pool_.get(), &executor_, &store_, "another secret of the same size!");
  t::TOpenSessionResp open;
  a.Call([](auto& c) { c.send_OpenSession(t::TOpenSessionReq()); }, [&](auto& c) { c.recv_OpenSession(open); });
  ASSERT_EQ(open.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  t::TExecuteStatementReq ex;
  ex.sessionHandle = open.sessionHandle;
  ex.statement = "SELECT x FROM t";
  t::TExecuteStatementResp exr;
  other.Call([&](auto& c) { c.send_ExecuteStatement(ex); }, [&](auto& c) { c.recv_ExecuteStatement(exr); });
  EXPECT_EQ(exr.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  // A forged secret on the right server too.
  ex.sessionHandle.sessionId.secret[0] ^= 1;
  Server b(pool_.get(), &executor_, &store_, secret_);
  b.Call([&](auto& c) { c.send_ExecuteStatement(ex); }, [&](auto& c) { c.recv_ExecuteStatement(exr); });
  EXPECT_EQ(exr.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
}

}  // namespace
}  // namespace quiver::server

namespace quiver::server {
namespace {

// Records the session each statement ran in.
class DialectRecordingExecutor : public CountingExecutor {
 public:
  using CountingExecutor::CountingExecutor;
  using StatementExecutor::Execute;
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const StatementSession& session,
                                                     const std::atomic<bool>* cancel, MemoryPool* pool) override {
    dialect = session.dialect;
    can_set = static_cast<bool>(session.set_dialect);
    return CountingExecutor::Execute(statement, cancel, pool);
  }
  sql::SqlDialect dialect = sql::SqlDialect::kSpark;
  bool can_set = true;
};

// Issue 37: with a shared store, every server reads a session's statements
// in the dialect it was opened in (carried by its guid), and the dialect is
// fixed at OpenSession (SET dialect would hold on one server only).
TEST_F(StatelessServiceTest, EveryServerReadsASessionInTheDialectItWasOpenedIn) {
  DialectRecordingExecutor recording(pool_.get());
  Server a(pool_.get(), &recording, &store_, secret_);
  Server b(pool_.get(), &recording, &store_, secret_);
  auto open = [&](Server& s, std::map<std::string, std::string> conf) {
    t::TOpenSessionReq req;
    req.__set_configuration(conf);
    t::TOpenSessionResp r;
    s.Call([&](auto& cl) { cl.send_OpenSession(req); }, [&](auto& cl) { cl.recv_OpenSession(r); });
    EXPECT_EQ(r.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << r.status.errorMessage;
    return r;
  };
  auto execute = [&](Server& s, const t::TSessionHandle& session) {
    t::TExecuteStatementReq ex;
    ex.sessionHandle = session;
    ex.statement = "SELECT x FROM t";
    t::TExecuteStatementResp r;
    s.Call([&](auto& cl) { cl.send_ExecuteStatement(ex); }, [&](auto& cl) { cl.recv_ExecuteStatement(r); });
    EXPECT_EQ(r.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << r.status.errorMessage;
    t::TCloseOperationReq close;
    close.operationHandle = r.operationHandle;
    t::TCloseOperationResp closed;
    s.Call([&](auto& cl) { cl.send_CloseOperation(close); }, [&](auto& cl) { cl.recv_CloseOperation(closed); });
  };
  const t::TOpenSessionResp pg = open(a, {{"dialect", "postgres"}});
  EXPECT_EQ(pg.configuration.at("dialect"), "postgres");
  execute(b, pg.sessionHandle);
  EXPECT_EQ(recording.dialect, sql::SqlDialect::kPostgres) << "adopted on b in the dialect a opened it in";
  EXPECT_FALSE(recording.can_set) << "SET dialect is refused with a shared store";
  execute(a, pg.sessionHandle);
  EXPECT_EQ(recording.dialect, sql::SqlDialect::kPostgres);
  const t::TOpenSessionResp spark = open(b, {});
  EXPECT_EQ(spark.configuration.at("dialect"), "spark");
  execute(a, spark.sessionHandle);
  EXPECT_EQ(recording.dialect, sql::SqlDialect::kSpark);
  // The dialect bit is authenticated with the rest of the guid.
  t::TSessionHandle forged = pg.sessionHandle;
  SetSessionDialect(&forged.sessionId.guid, sql::SqlDialect::kSpark);
  t::TExecuteStatementReq ex;
  ex.sessionHandle = forged;
  ex.statement = "SELECT x FROM t";
  t::TExecuteStatementResp r;
  b.Call([&](auto& cl) { cl.send_ExecuteStatement(ex); }, [&](auto& cl) { cl.recv_ExecuteStatement(r); });
  EXPECT_EQ(r.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
}

}  // namespace
}  // namespace quiver::server

namespace quiver::server {
namespace {

// Issue 39: the first run of each statement hangs until released (its
// server "dies": no heartbeat, no progress); later runs return at once.
class FirstRunHangsExecutor : public CountingExecutor {
 public:
  using CountingExecutor::CountingExecutor;
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const std::atomic<bool>* cancel,
                                                     MemoryPool* pool) override {
    if (runs_++ > 0) return CountingExecutor::Execute(statement, cancel, pool);
    struct Hanging : RecordBatchStream {
      const std::atomic<bool>* release;
      const std::atomic<bool>* cancel;
      SchemaPtr schema_;
      const SchemaPtr& schema() const override { return schema_; }
      Result<RecordBatchPtr> Next() override {
        while (!*release && !*cancel) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return RecordBatchPtr{};
      }
    };
    auto h = std::make_unique<Hanging>();
    h->release = &release;
    h->cancel = cancel;
    h->schema_ = ListTables()[0].schema;
    return std::unique_ptr<RecordBatchStream>(std::move(h));
  }
  std::atomic<int> runs_{0};
  std::atomic<bool> release{false};
};

class FailoverTest : public StatelessServiceTest {
 protected:
  static void Fast(ResultServiceOptions& o) { o.owner_stale_ms = 300; }
  t::TOperationHandle Start(Server& s, t::TSessionHandle* session) {
    t::TOpenSessionResp open;
    s.Call([](auto& c) { c.send_OpenSession(t::TOpenSessionReq()); }, [&](auto& c) { c.recv_OpenSession(open); });
    *session = open.sessionHandle;
    t::TExecuteStatementResp exr;
    s.Call([&](auto& c) { c.send_ExecuteStatement(SelectX(open.sessionHandle)); },
           [&](auto& c) { c.recv_ExecuteStatement(exr); });
    EXPECT_EQ(exr.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << exr.status.errorMessage;
    return exr.operationHandle;
  }
  static t::TGetOperationStatusResp Status(Server& s, const t::TOperationHandle& op) {
    t::TGetOperationStatusReq sr;
    sr.operationHandle = op;
    t::TGetOperationStatusResp st;
    s.Call([&](auto& c) { c.send_GetOperationStatus(sr); }, [&](auto& c) { c.recv_GetOperationStatus(st); });
    return st;
  }
  // Polls `s` until the operation leaves PENDING and RUNNING (a re-run is
  // PENDING until the planning gate admits and plans it; bounded: 10 s).
  static t::TGetOperationStatusResp WaitEnd(Server& s, const t::TOperationHandle& op) {
    t::TGetOperationStatusResp st;
    for (int i = 0; i < 1000; ++i) {
      st = Status(s, op);
      if (st.operationState != t::TOperationState::RUNNING_STATE &&
          st.operationState != t::TOperationState::PENDING_STATE)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return st;
  }
};

// The owner stops (no heartbeat) before FINISHED: the server the client
// polls next runs the statement again under the same handle; the client
// reads every row once; the dead owner, coming back, publishes nothing;
// closing leaves nothing in the store.
TEST_F(FailoverTest, AStatementWhoseServerStoppedIsRunAgainUnderItsHandle) {
  FirstRunHangsExecutor exec(pool_.get());
  Server a(pool_.get(), &exec, &store_, secret_, Fast);
  Server b(pool_.get(), &exec, &store_, secret_, Fast);
  t::TSessionHandle session;
  const t::TOperationHandle op = Start(a, &session);
  EXPECT_EQ(Status(b, op).operationState, t::TOperationState::RUNNING_STATE) << "a's heartbeat is fresh";
  const auto t0 = std::chrono::steady_clock::now();
  const t::TGetOperationStatusResp st = WaitEnd(b, op);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(st.operationState, t::TOperationState::FINISHED_STATE) << st.errorMessage;
  std::printf("failover: owner silent, re-run finished on another server after %.2f s (owner_stale_ms 300)\n", s);
  EXPECT_LT(s, 5.0);
  EXPECT_EQ(b.service->stats().failover_reruns, 1);
  EXPECT_EQ(exec.runs_, 2);
  int64_t rows = 0;
  PageRows page{{}, 0, true};
  for (int i = 0; page.more && i < 100; ++i) {
    page = FetchNext(b, op, i == 0, 0);  // a still holds its hung run until its next sweep
    rows += page.rows;
  }
  EXPECT_EQ(rows, 20000) << "every row once";
  // The dead owner wakes up: it finds the later lease and publishes nothing.
  exec.release = true;
  a.service->ExpireIdle(fetch::NowEpochMs());
  for (int i = 0; i < 200 && a.service->stats().running_operations > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    a.service->ExpireIdle(fetch::NowEpochMs());
  }
  EXPECT_EQ(Status(a, op).operationState, t::TOperationState::FINISHED_STATE);
  t::TCloseOperationReq cr;
  cr.operationHandle = op;
  t::TCloseOperationResp closed;
  a.Call([&](auto& c) { c.send_CloseOperation(cr); }, [&](auto& c) { c.recv_CloseOperation(closed); });
  EXPECT_EQ(closed.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << closed.status.errorMessage;
  a.service->ExpireIdle(fetch::NowEpochMs());
  b.service->ExpireIdle(fetch::NowEpochMs());
  EXPECT_EQ(store_.chunks(), 0u);
  const std::vector<std::string> left = store_.ListDocuments("ops/").value();
  for (const auto& d : left) ADD_FAILURE() << "left behind: " << d;
}

// Servers noticing the same dead owner at once: exactly one runs it again
// (the lease), the others answer RUNNING until its result shows.
TEST_F(FailoverTest, OfServersNoticingAtOnceExactlyOneRunsItAgain) {
  FirstRunHangsExecutor exec(pool_.get());
  Server a(pool_.get(), &exec, &store_, secret_, Fast);
  Server b(pool_.get(), &exec, &store_, secret_, Fast);
  Server c(pool_.get(), &exec, &store_, secret_, Fast);
  Server d(pool_.get(), &exec, &store_, secret_, Fast);
  t::TSessionHandle session;
  const t::TOperationHandle op = Start(a, &session);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a's heartbeat goes stale
  std::vector<std::thread> pollers;
  std::atomic<int> finished{0};
  for (Server* s : {&b, &c, &d}) {
    pollers.emplace_back([&, s] {
      if (WaitEnd(*s, op).operationState == t::TOperationState::FINISHED_STATE) ++finished;
    });
  }
  for (auto& p : pollers) p.join();
  EXPECT_EQ(finished, 3);
  EXPECT_EQ(
      b.service->stats().failover_reruns + c.service->stats().failover_reruns + d.service->stats().failover_reruns, 1);
  EXPECT_EQ(exec.runs_, 2);
  exec.release = true;
}

// Threads of one server polling the stale handle at once: the lease body
// is the server's own token, which the store accepts again, so without a
// claim per attempt inside the server both threads started the statement
// and the server aborted (std::terminate from a replaced operation's
// thread; objstore section 3f, QUIVER_OBJSTORE_LEASE_RACE). Exactly one
// re-run, every poller sees FINISHED, the server lives.
TEST_F(FailoverTest, ThreadsOfOneServerNoticingAtOnceStartOneRerun) {
  FirstRunHangsExecutor exec(pool_.get());
  Server a(pool_.get(), &exec, &store_, secret_, Fast);
  Server b(pool_.get(), &exec, &store_, secret_, Fast);
  t::TSessionHandle session;
  const t::TOperationHandle op = Start(a, &session);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a's heartbeat goes stale
  std::vector<std::thread> pollers;
  std::atomic<int> finished{0};
  for (int i = 0; i < 6; ++i) {
    pollers.emplace_back([&] {
      if (WaitEnd(b, op).operationState == t::TOperationState::FINISHED_STATE) ++finished;
    });
  }
  for (auto& p : pollers) p.join();
  EXPECT_EQ(finished, 6);
  EXPECT_EQ(b.service->stats().failover_reruns, 1);
  EXPECT_EQ(exec.runs_, 2);
  exec.release = true;
}

// Past max_reruns: a clear error (08S01) naming the runs, not a handle the
// driver retries until its budget runs out.
TEST_F(FailoverTest, PastMaxRerunsTheStatementFailsClearly) {
  FirstRunHangsExecutor exec(pool_.get());
  auto none = [](ResultServiceOptions& o) {
    o.owner_stale_ms = 300;
    o.max_reruns = 0;
  };
  Server a(pool_.get(), &exec, &store_, secret_, none);
  Server b(pool_.get(), &exec, &store_, secret_, none);
  t::TSessionHandle session;
  const t::TOperationHandle op = Start(a, &session);
  const t::TGetOperationStatusResp st = WaitEnd(b, op);
  EXPECT_EQ(st.operationState, t::TOperationState::ERROR_STATE);
  EXPECT_EQ(st.sqlState, "08S01");
  EXPECT_NE(st.errorMessage.find("the server running this statement stopped"), std::string::npos) << st.errorMessage;
  EXPECT_NE(st.errorMessage.find("max_reruns"), std::string::npos) << st.errorMessage;
  EXPECT_EQ(b.service->stats().failover_exhausted, 1);
  EXPECT_EQ(exec.runs_, 1);
  exec.release = true;
}

}  // namespace
}  // namespace quiver::server
