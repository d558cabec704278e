// Untrusted bytes through the Thrift dispatch and the link verifier: the
// committed fuzz corpus (fuzz/corpus/*) and byte-mutation sweeps (every
// truncation and a flip of every byte) of valid calls of each RPC. Every
// input must end in a reply or an Invalid status, with no request bytes left
// charged and the service still answering afterwards.
#include <gtest/gtest.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "quiver/fetch/chunk_store.h"
#include "quiver/server/catalog_results.h"
#include "quiver/server/result_service.h"
#include "quiver/tcli/TCLIService.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::server {
namespace {
namespace t = ::quiver::tcli;
namespace fs = std::filesystem;
using apache::thrift::transport::TMemoryBuffer;

class OneBatchExecutor : public StatementExecutor {
 public:
  explicit OneBatchExecutor(MemoryPool* pool) {
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int64(), false)};
    schema_ = schema;
    auto data = Buffer::Allocate(pool, 800).value();
    for (int i = 0; i < 100; ++i) reinterpret_cast<int64_t*>(data->mutable_data())[i] = i;
    auto a = std::make_shared<ArrayData>();
    a->type = int64();
    a->length = 100;
    a->buffers = {nullptr, data};
    auto b = std::make_shared<RecordBatch>();
    b->schema = schema;
    b->num_rows = 100;
    b->columns = {a};
    batch_ = b;
  }
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const std::atomic<bool>*,
                                                     MemoryPool*) override {
    if (statement.find("fail") != std::string_view::npos) return Status::NotImplemented("'fail'");
    if (statement.find("divide") != std::string_view::npos) {
      return Status::Invalid("division by zero").WithSqlState("22012");
    }
    return std::unique_ptr<RecordBatchStream>(new BatchVectorStream(schema_, {batch_}));
  }
  std::vector<TableInfo> ListTables() const override { return {{"t", schema_}}; }

 private:
  SchemaPtr schema_;
  RecordBatchPtr batch_;
};

struct World {
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({.name = "bad-input"});
  std::unique_ptr<OneBatchExecutor> executor = std::make_unique<OneBatchExecutor>(pool.get());
  std::unique_ptr<fetch::LocalChunkStore> store;
  std::unique_ptr<ResultService> service;
  World() {
    fetch::LocalChunkStoreOptions so;
    so.link_base_url = "https://127.0.0.1:1";
    store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
    ResultServiceOptions o;
    o.pool = pool.get();
    o.executor = executor.get();
    o.store = store.get();
    o.max_sessions = 1000;
    o.max_operations = 1000;
    o.fetch_wait_ms = 100;
    service = ResultService::Make(o).value();
  }
};

// Valid calls of every RPC (a real session and operation where one is needed).
std::vector<std::pair<std::string, std::string>> ValidCalls(World& w) {
  auto out = std::make_shared<TMemoryBuffer>();
  auto in = std::make_shared<TMemoryBuffer>();
  t::TCLIServiceClient c(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in),
                         std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out));
  auto take = [&] {
    std::string s = out->getBufferAsString();
    out->resetBuffer();
    return s;
  };
  auto feed = [&](const std::string& reply) {
    in->resetBuffer(reinterpret_cast<uint8_t*>(const_cast<char*>(reply.data())), static_cast<uint32_t>(reply.size()),
                    TMemoryBuffer::COPY);
  };
  std::vector<std::pair<std::string, std::string>> calls;
  t::TOpenSessionReq open;
  open.__set_client_protocol_i64(t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8);
  c.send_OpenSession(open);
  calls.emplace_back("OpenSession", take());
  feed(w.service
           ->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(calls.back().second.data()),
                                               calls.back().second.size()))
           .value());
  t::TOpenSessionResp open_resp;
  c.recv_OpenSession(open_resp);
  const auto session = open_resp.sessionHandle;
  t::TExecuteStatementReq ex;
  ex.sessionHandle = session;
  ex.statement = "SELECT * FROM t";
  ex.__set_runAsync(true);
  ex.__set_canDownloadResult(true);
  t::TSparkGetDirectResults d;
  d.maxRows = 10;
  ex.__set_getDirectResults(d);
  c.send_ExecuteStatement(ex);
  calls.emplace_back("ExecuteStatement", take());
  feed(w.service
           ->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(calls.back().second.data()),
                                               calls.back().second.size()))
           .value());
  t::TExecuteStatementResp ex_resp;
  c.recv_ExecuteStatement(ex_resp);
  const auto op = ex_resp.operationHandle;
  t::TGetOperationStatusReq gs;
  gs.operationHandle = op;
  c.send_GetOperationStatus(gs);
  calls.emplace_back("GetOperationStatus", take());
  t::TGetResultSetMetadataReq md;
  md.operationHandle = op;
  c.send_GetResultSetMetadata(md);
  calls.emplace_back("GetResultSetMetadata", take());
  t::TFetchResultsReq fr;
  fr.operationHandle = op;
  fr.orientation = t::TFetchOrientation::FETCH_FIRST;
  fr.maxRows = 1000;
  fr.__set_startRowOffset(5);
  c.send_FetchResults(fr);
  calls.emplace_back("FetchResults", take());
  t::TGetColumnsReq gc;
  gc.sessionHandle = session;
  gc.__set_tableName("t");
  c.send_GetColumns(gc);
  calls.emplace_back("GetColumns", take());
  t::TGetInfoReq gi;
  gi.sessionHandle = session;
  gi.infoType = t::TGetInfoType::CLI_DBMS_VER;
  c.send_GetInfo(gi);
  calls.emplace_back("GetInfo", take());
  t::TCancelOperationReq co;
  co.operationHandle = op;
  c.send_CancelOperation(co);
  calls.emplace_back("CancelOperation", take());
  t::TCloseOperationReq cl;
  cl.operationHandle = op;
  c.send_CloseOperation(cl);
  calls.emplace_back("CloseOperation", take());
  t::TCloseSessionReq cs;
  cs.sessionHandle = session;
  c.send_CloseSession(cs);
  calls.emplace_back("CloseSession", take());
  return calls;
}

void DispatchAndCheck(World& w, const std::string& bytes) {
  auto r = w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!r.ok()) {
    ASSERT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  }
  ASSERT_EQ(w.service->thrift_pool()->held_bytes(), 0);
}

TEST(DispatchBadInput, TruncationsAndByteFlipsOfEveryRpc) {
  World w;
  const auto calls = ValidCalls(w);
  ASSERT_EQ(calls.size(), 10u);
  for (const auto& [name, bytes] : calls) {
    SCOPED_TRACE(name);
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto r = w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), n));
      ASSERT_RAISES(Invalid, r) << "truncated to " << n << " of " << bytes.size() << " bytes";
    }
    for (size_t i = 0; i < bytes.size(); ++i) {
      std::string m = bytes;
      m[i] = static_cast<char>(m[i] ^ 0xFF);
      DispatchAndCheck(w, m);
    }
    DispatchAndCheck(w, bytes);
  }
  w.service->ExpireIdle(INT64_MAX / 2);  // closes what the mutations opened
  EXPECT_EQ(w.service->stats().open_sessions, 0);
  EXPECT_EQ(w.service->stats().open_operations, 0);
  EXPECT_EQ(w.store->stats().chunks, 0);
  EXPECT_EQ(w.service->chunk_pool()->held_bytes(), 0);
  EXPECT_EQ(w.service->exec_pool()->held_bytes(), 0);
}

// A request enum outside its range (the generated reader stores any i32 in
// the enum field) is answered as an unsupported value, never read through
// the enum type: under UBSan that read stopped the sweep above at GetInfo
// with infoType 0xFF000012 ("not a valid value for type TGetInfoType").
TEST(DispatchBadInput, RequestEnumsOutsideTheirRangeAreUnsupportedValues) {
  World w;
  auto out = std::make_shared<TMemoryBuffer>();
  auto in = std::make_shared<TMemoryBuffer>();
  t::TCLIServiceClient c(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in),
                         std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out));
  // Dispatches the call `c` wrote (its i32 field `id` holding `from` set to
  // `to` on the wire when from != to) and feeds the reply back to `c`.
  auto call = [&](int16_t id, uint32_t from, uint32_t to) {
    std::string bytes = out->getBufferAsString();
    out->resetBuffer();
    if (from != to) {
      const char field[] = {8,
                            0,
                            static_cast<char>(id),
                            static_cast<char>(from >> 24),
                            static_cast<char>(from >> 16),
                            static_cast<char>(from >> 8),
                            static_cast<char>(from)};
      const size_t at = bytes.rfind(std::string(field, sizeof field));
      ASSERT_NE(at, std::string::npos);
      for (int k = 0; k < 4; ++k) bytes[at + 3 + k] = static_cast<char>(to >> (24 - 8 * k));
    }
    auto reply =
        w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    ASSERT_OK(reply);
    in->resetBuffer(reinterpret_cast<uint8_t*>(const_cast<char*>(reply->data())), static_cast<uint32_t>(reply->size()),
                    TMemoryBuffer::COPY);
  };
  t::TOpenSessionReq open;
  open.__set_client_protocol_i64(t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8);
  c.send_OpenSession(open);
  call(0, 0, 0);
  t::TOpenSessionResp session;
  c.recv_OpenSession(session);
  ASSERT_EQ(session.status.statusCode, t::TStatusCode::SUCCESS_STATUS);

  t::TGetInfoReq gi;
  gi.sessionHandle = session.sessionHandle;
  gi.infoType = t::TGetInfoType::CLI_DBMS_VER;
  t::TGetInfoResp info;
  c.send_GetInfo(gi);
  call(2, t::TGetInfoType::CLI_DBMS_VER, 0xFF000012u);
  c.recv_GetInfo(info);
  EXPECT_EQ(info.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(info.status.errorMessage.find("info type -16777198 is not supported"), std::string::npos)
      << info.status.errorMessage;
  c.send_GetInfo(gi);  // the same call in range still answers
  call(2, 0, 0);
  c.recv_GetInfo(info);
  EXPECT_EQ(info.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(info.infoValue.stringValue, "0.1.0");

  t::TExecuteStatementReq ex;
  ex.sessionHandle = session.sessionHandle;
  ex.statement = "SELECT * FROM t";
  ex.__set_runAsync(true);
  c.send_ExecuteStatement(ex);
  call(0, 0, 0);
  t::TExecuteStatementResp executed;
  c.recv_ExecuteStatement(executed);
  ASSERT_EQ(executed.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  t::TFetchResultsReq fr;
  fr.operationHandle = executed.operationHandle;
  fr.orientation = t::TFetchOrientation::FETCH_FIRST;
  fr.maxRows = 1000;
  t::TFetchResultsResp fetched;
  c.send_FetchResults(fr);
  call(2, t::TFetchOrientation::FETCH_FIRST, 0x7F000004u);
  c.recv_FetchResults(fetched);
  EXPECT_EQ(fetched.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(fetched.status.errorMessage.find("got orientation 2130706436"), std::string::npos)
      << fetched.status.errorMessage;
  w.service->ExpireIdle(INT64_MAX / 2);
  EXPECT_EQ(w.service->stats().open_operations, 0);
}

// fuzz/corpus of the checkout's sources.
fs::path CorpusDir(const std::string& name) { return ::quiver::testing::SourceDir() / "fuzz" / "corpus" / name; }

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(DispatchBadInput, CommittedCorpus) {
  const fs::path dir = CorpusDir("thrift_dispatch");
  if (dir.empty() || !fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  World w;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    const std::string bytes = ReadFile(e.path());
    DispatchAndCheck(w, bytes);
    const std::string name = e.path().filename().string();
    auto r =
        w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    // Malformed on purpose: the 2 GiB string length, and inputs the fuzzer
    // found (regression_*); every other corpus file is a well-formed call.
    if (name == "huge_string_length" || name.rfind("regression_", 0) == 0) {
      EXPECT_FALSE(r.ok());
    } else {
      EXPECT_OK(r) << name;  // a reply (maybe INVALID_HANDLE / ERROR)
    }
    ++n;
  }
  EXPECT_GE(n, 15);
}

TEST(LinkVerifyBadInput, CommittedCorpus) {
  const fs::path dir = CorpusDir("link_verify");
  if (dir.empty() || !fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  std::array<uint8_t, fetch::LinkSigner::kSecretBytes> secret{};
  for (size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<uint8_t>(i * 31 + 7);
  fetch::LinkSigner signer(secret);
  const std::map<std::string, fetch::LinkCheck> expected = {{"valid", fetch::LinkCheck::kOk},
                                                            {"expired", fetch::LinkCheck::kExpired},
                                                            {"forged", fetch::LinkCheck::kBadSignature},
                                                            {"truncated", fetch::LinkCheck::kMalformed},
                                                            {"path_trick", fetch::LinkCheck::kMalformed},
                                                            {"leading_zero", fetch::LinkCheck::kMalformed}};
  for (const auto& [name, want] : expected) {
    const std::string text = ReadFile(dir / name);
    const size_t a = text.find('\n');
    const size_t b = text.find('\n', a + 1);
    ASSERT_NE(b, std::string::npos) << name;
    EXPECT_EQ(signer.Verify(std::string_view(text).substr(0, a), std::string_view(text).substr(a + 1, b - a - 1),
                            std::string_view(text).substr(b + 1), 1'700'000'000'000),
              want)
        << name;
  }
}

// ---- pipelining, store limits, operation limits, cancel -----------------------

// Yields `total` batches of 1000 int64 rows; after `gate_after` batches it
// waits until open() (or cancel).
class GatedExecutor : public StatementExecutor {
 public:
  GatedExecutor(int total, int gate_after) : total_(total), gate_after_(gate_after) {
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int64(), false)};
    schema_ = schema;
  }
  void open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  std::atomic<int> produced{0};

  class Stream : public RecordBatchStream {
   public:
    Stream(GatedExecutor* ex, const std::atomic<bool>* cancel, MemoryPool* pool)
        : ex_(ex), cancel_(cancel), pool_(pool) {}
    const SchemaPtr& schema() const override { return ex_->schema_; }
    Result<RecordBatchPtr> Next() override {
      if (i_ == ex_->total_) return RecordBatchPtr();
      if (i_ == ex_->gate_after_) {
        std::unique_lock<std::mutex> l(ex_->mu_);
        while (!ex_->open_) {
          if (cancel_->load()) return Status::Cancelled("gated stream cancelled");
          ex_->cv_.wait_for(l, std::chrono::milliseconds(10));
        }
      }
      QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool_, 8000));
      for (int k = 0; k < 1000; ++k) reinterpret_cast<int64_t*>(data->mutable_data())[k] = i_ * 1000 + k;
      auto a = std::make_shared<ArrayData>();
      a->type = int64();
      a->length = 1000;
      a->buffers = {nullptr, data};
      auto b = std::make_shared<RecordBatch>();
      b->schema = ex_->schema_;
      b->num_rows = 1000;
      b->columns = {a};
      ++i_;
      ++ex_->produced;
      return RecordBatchPtr(b);
    }

   private:
    GatedExecutor* ex_;
    const std::atomic<bool>* cancel_;
    MemoryPool* pool_;
    int i_ = 0;
  };

  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view, const std::atomic<bool>* cancel,
                                                     MemoryPool* pool) override {
    return std::unique_ptr<RecordBatchStream>(new Stream(this, cancel, pool));
  }
  std::vector<TableInfo> ListTables() const override { return {}; }

 private:
  SchemaPtr schema_;
  int total_, gate_after_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Calls RPCs on a service in memory with the generated client.
class Caller {
 public:
  explicit Caller(ResultService* s, std::string client = {}) : s_(s), client_(std::move(client)) {
    out_ = std::make_shared<TMemoryBuffer>();
    in_ = std::make_shared<TMemoryBuffer>();
    c_ = std::make_unique<t::TCLIServiceClient>(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in_),
                                                std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out_));
  }
  t::TCLIServiceClient& c() { return *c_; }
  void Round() {
    std::string req = out_->getBufferAsString();
    out_->resetBuffer();
    auto r = s_->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(req.data()), req.size()), client_);
    ASSERT_OK(r);
    reply_ = std::move(r).value();
    in_->resetBuffer(reinterpret_cast<uint8_t*>(reply_.data()), static_cast<uint32_t>(reply_.size()),
                     TMemoryBuffer::COPY);
  }

 private:
  ResultService* s_;
  std::string client_;
  std::string reply_;
  std::shared_ptr<TMemoryBuffer> out_, in_;
  std::unique_ptr<t::TCLIServiceClient> c_;
};

#define CALL(caller, Name, req, resp) \
  do {                                \
    (caller).c().send_##Name(req);    \
    (caller).Round();                 \
    (caller).c().recv_##Name(resp);   \
  } while (0)

struct GatedWorld {
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({.name = "gated"});
  GatedExecutor executor;
  std::unique_ptr<fetch::LocalChunkStore> store;
  std::unique_ptr<ResultService> service;
  GatedWorld(int total, int gate_after, int64_t budget, int64_t spill_limit, int max_operations = 16,
             int64_t statement_timeout_ms = 0, int64_t max_statement_bytes = int64_t{1} << 20)
      : executor(total, gate_after) {
    fetch::LocalChunkStoreOptions so;
    so.link_base_url = "https://127.0.0.1:1";
    so.memory_budget_bytes = budget;
    so.spill_limit_bytes = spill_limit;
    store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
    ResultServiceOptions o;
    o.pool = pool.get();
    o.executor = &executor;
    o.store = store.get();
    o.chunk_bytes = 16 << 10;  // two batches per chunk
    o.inline_threshold_bytes = 1024;
    o.max_links_per_fetch = 100;
    o.max_operations = max_operations;
    o.fetch_wait_ms = 2000;
    o.statement_timeout_ms = statement_timeout_ms;
    o.max_statement_bytes = max_statement_bytes;
    service = ResultService::Make(o).value();
  }
};

t::TSessionHandle OpenIn(Caller& c) {
  t::TOpenSessionReq req;
  t::TOpenSessionResp resp;
  CALL(c, OpenSession, req, resp);
  return resp.sessionHandle;
}

t::TExecuteStatementResp ExecuteIn(Caller& c, const t::TSessionHandle& s,
                                   const std::string& sql = "SELECT * FROM gated") {
  t::TExecuteStatementReq req;
  req.sessionHandle = s;
  req.statement = sql;
  req.__set_runAsync(true);
  req.__set_canDownloadResult(true);
  t::TExecuteStatementResp resp;
  CALL(c, ExecuteStatement, req, resp);
  return resp;
}

t::TOperationState::type StateOf(Caller& c, const t::TOperationHandle& op) {
  t::TGetOperationStatusReq req;
  req.operationHandle = op;
  t::TGetOperationStatusResp resp;
  CALL(c, GetOperationStatus, req, resp);
  return resp.operationState;
}

TEST(ResultServicePipelining, FirstLinksBeforeTheLastBatchExists) {
  GatedWorld w(/*total=*/20, /*gate_after=*/8, /*budget=*/-1, -1);
  Caller c(w.service.get());
  auto s = OpenIn(c);
  auto ex = ExecuteIn(c, s);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto state = t::TOperationState::RUNNING_STATE;
  for (int i = 0; i < 500 && state == t::TOperationState::RUNNING_STATE; ++i) {
    state = StateOf(c, ex.operationHandle);
    if (state == t::TOperationState::RUNNING_STATE) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(state, t::TOperationState::FINISHED_STATE);
  t::TFetchResultsReq fr;
  fr.operationHandle = ex.operationHandle;
  fr.orientation = t::TFetchOrientation::FETCH_FIRST;
  fr.maxRows = 1000000;
  t::TFetchResultsResp page;
  CALL(c, FetchResults, fr, page);
  ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_TRUE(page.hasMoreRows);
  ASSERT_FALSE(page.results.resultLinks.empty());
  EXPECT_LE(w.executor.produced.load(), 8) << "the producer is still held at the gate";
  int64_t rows = 0;
  for (const auto& l : page.results.resultLinks) {
    EXPECT_EQ(l.startRowOffset, rows);
    rows += l.rowCount;
  }
  EXPECT_LE(rows, 8000);
  w.executor.open();
  fr.orientation = t::TFetchOrientation::FETCH_NEXT;
  while (page.hasMoreRows) {
    CALL(c, FetchResults, fr, page);
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    for (const auto& l : page.results.resultLinks) {
      EXPECT_EQ(l.startRowOffset, rows);
      rows += l.rowCount;
    }
  }
  EXPECT_EQ(rows, 20000);
  t::TCloseSessionReq cs;
  cs.sessionHandle = s;
  t::TCloseSessionResp csr;
  CALL(c, CloseSession, cs, csr);
  EXPECT_EQ(w.store->stats().chunks, 0);
  EXPECT_EQ(w.service->chunk_pool()->held_bytes(), 0);
  EXPECT_EQ(w.service->exec_pool()->held_bytes(), 0);
}

TEST(ResultServicePipelining, CancelStopsTheProducer) {
  GatedWorld w(20, 8, -1, -1);
  Caller c(w.service.get());
  auto s = OpenIn(c);
  auto ex = ExecuteIn(c, s);
  t::TCancelOperationReq cr;
  cr.operationHandle = ex.operationHandle;
  t::TCancelOperationResp cresp;
  CALL(c, CancelOperation, cr, cresp);
  EXPECT_EQ(cresp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto state = t::TOperationState::FINISHED_STATE;
  for (int i = 0; i < 200; ++i) {
    state = StateOf(c, ex.operationHandle);
    if (state == t::TOperationState::CANCELED_STATE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(state, t::TOperationState::CANCELED_STATE);
  t::TFetchResultsReq fr;
  fr.operationHandle = ex.operationHandle;
  fr.orientation = t::TFetchOrientation::FETCH_NEXT;
  fr.maxRows = 10;
  t::TFetchResultsResp page;
  CALL(c, FetchResults, fr, page);
  EXPECT_EQ(page.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(page.status.errorMessage.find("cancelled"), std::string::npos);
  t::TCloseOperationReq close;
  close.operationHandle = ex.operationHandle;
  t::TCloseOperationResp closed;
  CALL(c, CloseOperation, close, closed);
  EXPECT_EQ(closed.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(w.store->stats().chunks, 0);
}

TEST(ResultServiceLimits, FullStoreFailsTheStatementNotTheServer) {
  GatedWorld w(20, 1000, /*budget=*/32 << 10, /*spill_limit=*/32 << 10);
  w.executor.open();
  Caller c(w.service.get());
  auto s = OpenIn(c);
  auto ex = ExecuteIn(c, s);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  t::TGetOperationStatusResp st;
  for (int i = 0; i < 500; ++i) {
    t::TGetOperationStatusReq req;
    req.operationHandle = ex.operationHandle;
    CALL(c, GetOperationStatus, req, st);
    if (st.operationState == t::TOperationState::ERROR_STATE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(st.operationState, t::TOperationState::ERROR_STATE);
  EXPECT_NE(st.displayMessage.find("fits neither the memory budget"), std::string::npos) << st.displayMessage;
  t::TFetchResultsReq fr;
  fr.operationHandle = ex.operationHandle;
  fr.orientation = t::TFetchOrientation::FETCH_FIRST;
  fr.maxRows = 10;
  t::TFetchResultsResp page;
  CALL(c, FetchResults, fr, page);
  EXPECT_EQ(page.status.statusCode, t::TStatusCode::ERROR_STATUS);
  t::TCloseOperationReq close;
  close.operationHandle = ex.operationHandle;
  t::TCloseOperationResp closed;
  CALL(c, CloseOperation, close, closed);
  EXPECT_EQ(w.store->stats().chunks, 0);
  EXPECT_EQ(w.store->CountSpillFiles(), 0);
  // The service still answers.
  t::TGetInfoReq gi;
  gi.sessionHandle = s;
  gi.infoType = t::TGetInfoType::CLI_SERVER_NAME;
  t::TGetInfoResp gir;
  CALL(c, GetInfo, gi, gir);
  EXPECT_EQ(gir.infoValue.stringValue, "quiver");
  EXPECT_EQ(w.service->chunk_pool()->held_bytes(), 0);
}

TEST(ResultServiceLimits, OperationLimit) {
  GatedWorld w(2, 1000, -1, -1, /*max_operations=*/2);
  w.executor.open();
  Caller c(w.service.get());
  auto s = OpenIn(c);
  EXPECT_EQ(ExecuteIn(c, s).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(ExecuteIn(c, s).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto third = ExecuteIn(c, s);
  EXPECT_EQ(third.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(third.status.errorMessage.find("too many open operations"), std::string::npos);
}

// The sqlState of an error is the field it was raised with (issue 21 item
// 6), else one for its code; GetInfo answers what ODBC/JDBC bridges ask.
TEST(ResultServiceErrors, SqlStateIsTheErrorsFieldAndGetInfoAnswers) {
  World w;
  Caller c(w.service.get());
  auto s = OpenIn(c);
  for (auto [sql, state] : {std::pair<const char*, const char*>{"SELECT 1/0 -- divide", "22012"},
                            std::pair<const char*, const char*>{"fail", "0A000"}}) {
    t::TExecuteStatementReq req;
    req.sessionHandle = s;
    req.statement = sql;
    t::TExecuteStatementResp resp;
    CALL(c, ExecuteStatement, req, resp);
    EXPECT_EQ(resp.status.statusCode, t::TStatusCode::ERROR_STATUS) << sql;
    EXPECT_EQ(resp.status.sqlState, state) << sql;
  }
  for (auto type : {t::TGetInfoType::CLI_SERVER_NAME, t::TGetInfoType::CLI_DBMS_VER,
                    t::TGetInfoType::CLI_IDENTIFIER_QUOTE_CHAR, t::TGetInfoType::CLI_TXN_CAPABLE,
                    t::TGetInfoType::CLI_MAX_COLUMN_NAME_LEN, t::TGetInfoType::CLI_SEARCH_PATTERN_ESCAPE,
                    t::TGetInfoType::CLI_OJ_CAPABILITIES, t::TGetInfoType::CLI_DATA_SOURCE_NAME}) {
    t::TGetInfoReq gi;
    gi.sessionHandle = s;
    gi.infoType = type;
    t::TGetInfoResp gir;
    CALL(c, GetInfo, gi, gir);
    EXPECT_EQ(gir.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << static_cast<int>(type);
  }
}

// The statement text is checked before the executor sees it: a NUL byte
// (the text after it used to be dropped silently) and a text over
// max_statement_bytes are errors with their SQLSTATE, and no operation runs.
TEST(ResultServiceLimits, StatementTextIsCheckedBeforeTheExecutor) {
  GatedWorld w(2, 1000, -1, -1, 16, 0, /*max_statement_bytes=*/64);
  w.executor.open();
  Caller c(w.service.get());
  auto s = OpenIn(c);
  auto nul = ExecuteIn(c, s, std::string("SELECT * FROM gated\0; DROP everything", 38));
  EXPECT_EQ(nul.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_EQ(nul.status.sqlState, "42601");
  EXPECT_NE(nul.status.errorMessage.find("NUL byte at offset 19"), std::string::npos) << nul.status.errorMessage;
  auto long_text = ExecuteIn(c, s, "SELECT * FROM gated WHERE " + std::string(100, 'x'));
  EXPECT_EQ(long_text.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_EQ(long_text.status.sqlState, "54000");
  EXPECT_NE(long_text.status.errorMessage.find("at most 64"), std::string::npos) << long_text.status.errorMessage;
  EXPECT_EQ(w.service->stats().open_operations, 0);
  EXPECT_EQ(w.executor.produced.load(), 0);
  EXPECT_EQ(ExecuteIn(c, s).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
}

// A statement past statement_timeout_ms is cancelled by the sweep and fails
// with SQLSTATE 57014 naming the limit; the service goes on.
TEST(ResultServiceLimits, StatementTimeLimitCancelsTheStatement) {
  GatedWorld w(20, 2, -1, -1, 16, /*statement_timeout_ms=*/100);  // never opened: runs until cancelled
  Caller c(w.service.get());
  auto s = OpenIn(c);
  auto ex = ExecuteIn(c, s);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  w.service->ExpireIdle(fetch::NowEpochMs());
  t::TGetOperationStatusResp st;
  for (int i = 0; i < 400; ++i) {
    t::TGetOperationStatusReq req;
    req.operationHandle = ex.operationHandle;
    CALL(c, GetOperationStatus, req, st);
    if (st.operationState == t::TOperationState::ERROR_STATE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(st.operationState, t::TOperationState::ERROR_STATE);
  EXPECT_EQ(st.sqlState, "57014");
  EXPECT_NE(st.displayMessage.find("time limit of 100 ms"), std::string::npos) << st.displayMessage;
  EXPECT_EQ(w.service->exec_pool()->held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::server

namespace quiver::server {
namespace {

// Backpressure: a result nobody fetches stops after max_unfetched_chunks
// chunks (the producer pauses; the store holds no more), and goes on as the
// client takes them.
TEST(ResultServiceLimits, UnfetchedResultPausesItsProducer) {
  fetch::LocalChunkStoreOptions so;
  so.link_base_url = "https://127.0.0.1:1";
  auto store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
  auto pool = MemoryPool::MakeRoot({.name = "bp"});
  GatedExecutor executor(40, 1000);  // 40 batches of 1000 rows, 2 per chunk: 20 chunks
  executor.open();
  ResultServiceOptions o;
  o.pool = pool.get();
  o.executor = &executor;
  o.store = store.get();
  o.chunk_bytes = 16 << 10;
  o.inline_threshold_bytes = 1024;
  o.max_links_per_fetch = 2;
  o.max_unfetched_chunks = 3;
  o.fetch_wait_ms = 2000;
  auto service = ResultService::Make(o).value();
  Caller c(service.get());
  auto s = OpenIn(c);
  auto ex = ExecuteIn(c, s);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(executor.produced.load(), 10) << "3 unfetched chunks of 2 batches, and the one being cut";
  EXPECT_LE(store->stats().chunks, 3);
  EXPECT_EQ(service->stats().paused_operations, 1);
  EXPECT_EQ(service->stats().running_operations, 1);
  int64_t rows = 0;
  for (bool first = true;; first = false) {
    t::TFetchResultsReq fr;
    fr.operationHandle = ex.operationHandle;
    fr.orientation = first ? t::TFetchOrientation::FETCH_FIRST : t::TFetchOrientation::FETCH_NEXT;
    fr.maxRows = 100000;
    t::TFetchResultsResp page;
    CALL(c, FetchResults, fr, page);
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    for (const auto& l : page.results.resultLinks) rows += l.rowCount;
    if (!page.hasMoreRows) break;
  }
  EXPECT_EQ(rows, 40000);
  EXPECT_EQ(executor.produced.load(), 40);
  EXPECT_GT(service->stats().producer_pauses, 0);
}

}  // namespace
}  // namespace quiver::server

namespace quiver::server {
namespace {

// Issue 35 #9: statements have a time limit by default (1 hour), and the
// time a producer spends paused for a slow client is not the statement's:
// a result read slowly is not cancelled for it (it was, at the limit, when
// the limit counted wall time from ExecuteStatement).
TEST(ResultServiceLimits, StatementTimeLimitIsOnByDefaultAndSkipsTimePausedForTheClient) {
  EXPECT_EQ(ResultServiceOptions{}.statement_timeout_ms, 3600 * 1000);
  fetch::LocalChunkStoreOptions so;
  so.link_base_url = "https://127.0.0.1:1";
  auto store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
  auto pool = MemoryPool::MakeRoot({.name = "paused-limit"});
  GatedExecutor executor(40, 1000);  // 20 chunks of 2 batches
  executor.open();
  ResultServiceOptions o;
  o.pool = pool.get();
  o.executor = &executor;
  o.store = store.get();
  o.chunk_bytes = 16 << 10;
  o.inline_threshold_bytes = 1024;
  o.max_links_per_fetch = 2;
  o.max_unfetched_chunks = 3;
  o.fetch_wait_ms = 2000;
  o.statement_timeout_ms = 300;
  auto service = ResultService::Make(o).value();
  Caller c(service.get());
  auto s = OpenIn(c);
  auto ex = ExecuteIn(c, s);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  int64_t rows = 0;
  for (bool first = true;; first = false) {
    // The client takes a page every 200 ms: 10 pages, 2 s in all, the
    // producer paused for most of it.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    service->ExpireIdle(fetch::NowEpochMs());
    t::TFetchResultsReq fr;
    fr.operationHandle = ex.operationHandle;
    fr.orientation = first ? t::TFetchOrientation::FETCH_FIRST : t::TFetchOrientation::FETCH_NEXT;
    fr.maxRows = 100000;
    t::TFetchResultsResp page;
    CALL(c, FetchResults, fr, page);
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    for (const auto& l : page.results.resultLinks) rows += l.rowCount;
    if (!page.hasMoreRows) break;
  }
  EXPECT_EQ(rows, 40000);
  EXPECT_GT(service->stats().producer_pauses, 0);
}

// Fairness: one session leaking operations hits its own cap, not the
// global one; another session still runs statements.
TEST(ResultServiceLimits, OperationsPerSessionAreCappedApartFromTheGlobalCap) {
  fetch::LocalChunkStoreOptions so;
  so.link_base_url = "https://127.0.0.1:1";
  auto store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
  auto pool = MemoryPool::MakeRoot({.name = "fair"});
  GatedExecutor executor(2, 1000);
  executor.open();
  ResultServiceOptions o;
  o.pool = pool.get();
  o.executor = &executor;
  o.store = store.get();
  o.max_operations = 10;
  o.max_operations_per_session = 3;
  auto service = ResultService::Make(o).value();
  Caller c(service.get());
  auto leaky = OpenIn(c);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ExecuteIn(c, leaky).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto refused = ExecuteIn(c, leaky);
  EXPECT_EQ(refused.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(refused.status.errorMessage.find("in this session"), std::string::npos) << refused.status.errorMessage;
  auto other = OpenIn(c);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ExecuteIn(c, other).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(service->stats().open_operations, 6);
}

// Issue 19 (fairness): one token at its session and operation caps does
// not stop a second token; the global caps still hold over both.
TEST(ResultServiceLimits, SessionsAndOperationsPerTokenAreCappedApartFromTheGlobalCaps) {
  fetch::LocalChunkStoreOptions so;
  so.link_base_url = "https://127.0.0.1:1";
  auto store = fetch::LocalChunkStore::Make(so, fetch::LinkSigner::MakeRandom().value()).value();
  auto pool = MemoryPool::MakeRoot({.name = "per-token"});
  GatedExecutor executor(2, 1000);
  executor.open();
  ResultServiceOptions o;
  o.pool = pool.get();
  o.executor = &executor;
  o.store = store.get();
  o.max_sessions = 5;
  o.max_operations = 7;
  o.max_sessions_per_token = 2;
  o.max_operations_per_token = 3;
  auto service = ResultService::Make(o).value();
  Caller leaky(service.get(), "token-0");
  Caller polite(service.get(), "token-1");
  auto a = OpenIn(leaky);
  auto b = OpenIn(leaky);
  t::TOpenSessionReq req;
  t::TOpenSessionResp third;
  CALL(leaky, OpenSession, req, third);
  EXPECT_EQ(third.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(third.status.errorMessage.find("for this token"), std::string::npos) << third.status.errorMessage;
  // Operations over both of the leaky token's sessions count together.
  EXPECT_EQ(ExecuteIn(leaky, a).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(ExecuteIn(leaky, b).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(ExecuteIn(leaky, b).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto refused = ExecuteIn(leaky, a);
  EXPECT_EQ(refused.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(refused.status.errorMessage.find("for this token"), std::string::npos) << refused.status.errorMessage;
  // Metadata operations count too.
  t::TGetTablesReq tables;
  tables.sessionHandle = a;
  t::TGetTablesResp tables_resp;
  CALL(leaky, GetTables, tables, tables_resp);
  EXPECT_EQ(tables_resp.status.statusCode, t::TStatusCode::ERROR_STATUS);
  // The second token is not locked out.
  auto p1 = OpenIn(polite);
  auto p2 = OpenIn(polite);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(ExecuteIn(polite, i % 2 ? p1 : p2).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(service->stats().open_operations, 6);
  // The global caps still hold: a third token gets one session (5 total)
  // and one operation (7 total).
  Caller third_token(service.get(), "token-2");
  auto t1 = OpenIn(third_token);
  EXPECT_EQ(ExecuteIn(third_token, t1).status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  auto over = ExecuteIn(third_token, t1);
  EXPECT_EQ(over.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(over.status.errorMessage.find("the server allows 7"), std::string::npos) << over.status.errorMessage;
  t::TOpenSessionResp sixth;
  CALL(third_token, OpenSession, req, sixth);
  EXPECT_EQ(sixth.status.statusCode, t::TStatusCode::ERROR_STATUS);
}

}  // namespace
}  // namespace quiver::server
