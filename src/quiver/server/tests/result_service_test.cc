// Untrusted bytes through the Thrift dispatch and the link verifier: the
// committed fuzz corpus (fuzz/corpus/*) and byte-mutation sweeps (every
// truncation and a flip of every byte) of valid calls of each RPC. Every
// input must end in a reply or an Invalid status, with no request bytes left
// charged and the service still answering afterwards.
#include <gtest/gtest.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "quiver/fetch/chunk_store.h"
#include "quiver/server/catalog_results.h"
#include "quiver/server/result_service.h"
#include "quiver/tcli/TCLIService.h"

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
  feed(w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(calls.back().second.data()),
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
  feed(w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(calls.back().second.data()),
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
  if (!r.ok()) ASSERT_TRUE(r.status().IsInvalid()) << r.status().ToString();
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
      ASSERT_FALSE(r.ok()) << "truncated to " << n << " of " << bytes.size() << " bytes";
      ASSERT_TRUE(r.status().IsInvalid());
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

// fuzz/corpus beside the checkout's sources (QUIVER_SHARED_DIR is
// "<source dir>/../shared").
fs::path CorpusDir(const std::string& name) {
  std::string shared = QUIVER_SHARED_DIR;
  const std::string suffix = "/../shared";
  if (shared.size() > suffix.size() && shared.compare(shared.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return fs::path(shared.substr(0, shared.size() - suffix.size())) / "fuzz" / "corpus" / name;
  }
  return {};
}

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
    auto r = w.service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    if (name == "huge_string_length") {
      EXPECT_FALSE(r.ok());
    } else {
      EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();  // a reply (maybe INVALID_HANDLE / ERROR)
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
  const std::map<std::string, fetch::LinkCheck> expected = {
      {"valid", fetch::LinkCheck::kOk},           {"expired", fetch::LinkCheck::kExpired},
      {"forged", fetch::LinkCheck::kBadSignature}, {"truncated", fetch::LinkCheck::kMalformed},
      {"path_trick", fetch::LinkCheck::kMalformed}, {"leading_zero", fetch::LinkCheck::kMalformed}};
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

}  // namespace
}  // namespace quiver::server
