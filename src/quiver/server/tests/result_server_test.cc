// End-to-end tests of the result server: RPCs through the generated Thrift
// client over HTTPS (cpp-httplib client trusting the generated certificate),
// chunk downloads, links, limits, bad input and cleanup.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <thread>

#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/chunk_writer.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/server/http_server.h"
#include "quiver/tcli/TCLIService.h"
#include "quiver/testing/sanitizers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::server {
namespace {
namespace t = ::quiver::tcli;
using apache::thrift::transport::TMemoryBuffer;

const std::string kToken = "test-token-0123";

// A lineitem table written to a temp file; its l_orderkey column (0) and row count.
struct TableFile {
  std::string path;
  std::vector<int64_t> orderkeys;
  std::vector<int64_t> linenumbers;
  ~TableFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

std::unique_ptr<TableFile> MakeLineitem(int64_t rows, const std::string& tag) {
  auto pool = MemoryPool::MakeRoot({});
  datagen::GenOptions go;
  go.kind = datagen::GenKind::kLineitem;
  go.num_rows = rows;
  go.max_bytes_per_batch = 256 << 10;
  go.pool = pool.get();
  auto batches = datagen::GenerateBatches(go).value();
  auto tf = std::make_unique<TableFile>();
  tf->path = "/tmp/quiver-server-test-" + std::to_string(getpid()) + "-" + tag + ".arrow";
  auto sink = ipc::OpenOutputStream(tf->path).value();
  ipc::WriteOptions wo;
  wo.pool = pool.get();
  EXPECT_OK(ipc::WriteTable(sink.get(), datagen::GenSchema(go.kind), batches, ipc::IpcFormat::kFile, wo));
  sink.reset();
  for (const auto& b : batches) {
    const auto* k = b->columns[0]->GetValues<int64_t>(1) + b->columns[0]->offset;
    tf->orderkeys.insert(tf->orderkeys.end(), k, k + b->num_rows);
  }
  return tf;
}

// All l_orderkey values of an IPC stream held in `bytes`.
std::vector<int64_t> OrderKeys(std::shared_ptr<Buffer> bytes, MemoryPool* pool) {
  ipc::ReadOptions ro;
  ro.pool = pool;
  auto reader = ipc::RecordBatchReader::Open(std::move(bytes), ro);
  EXPECT_OK(reader);
  std::vector<int64_t> out;
  if (!reader.ok()) return out;
  while (true) {
    auto b = (*reader)->Next();
    EXPECT_OK(b);
    if (!b.ok() || !*b) break;
    const auto& col = (*b)->columns[0];
    const auto* k = col->GetValues<int64_t>(1) + col->offset;
    out.insert(out.end(), k, k + (*b)->num_rows);
  }
  return out;
}

class Rpc {
 public:
  Rpc(const ResultServer& server, const std::string& token = kToken)
      : http_("127.0.0.1", server.port()), path_(server.rpc_path()), token_(token) {
    http_.set_ca_cert_path(server.cert_path());
    http_.enable_server_certificate_verification(true);
    http_.set_read_timeout(30, 0);
    out_ = std::make_shared<TMemoryBuffer>();
    in_ = std::make_shared<TMemoryBuffer>();
    client_ = std::make_unique<t::TCLIServiceClient>(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in_),
                                                     std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out_));
  }
  t::TCLIServiceClient& c() { return *client_; }
  // Sends what the client wrote; returns the HTTP status and loads the reply.
  int Send(const std::string& body) {
    httplib::Headers h;
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    auto r = http_.Post(path_.c_str(), h, body, "application/x-thrift");
    if (!r) return -1;
    last_body_ = r->body;

    if (last_body_.empty()) {
      in_->resetBuffer();  // (TMemoryBuffer's COPY of 0 bytes memcpy's to a null base)
    } else {
      in_->resetBuffer(reinterpret_cast<uint8_t*>(last_body_.data()), static_cast<uint32_t>(last_body_.size()),
                       TMemoryBuffer::COPY);
    }
    return r->status;
  }
  std::string Take() {
    std::string s = out_->getBufferAsString();
    out_->resetBuffer();
    return s;
  }
  httplib::SSLClient& http() { return http_; }
  const std::string& last_body() const { return last_body_; }

 private:
  httplib::SSLClient http_;
  std::string path_;
  std::string token_;
  std::string last_body_;
  std::shared_ptr<TMemoryBuffer> out_, in_;
  std::unique_ptr<t::TCLIServiceClient> client_;
};

// RPC where ASSERT cannot return (a function with a value).
#define RPC_NO_ASSERT(rpc, Name, req, resp)            \
  do {                                                 \
    (rpc).c().send_##Name(req);                        \
    EXPECT_EQ((rpc).Send((rpc).Take()), 200) << #Name; \
    (rpc).c().recv_##Name(resp);                       \
  } while (0)

#define RPC(rpc, Name, req, resp)                      \
  do {                                                 \
    (rpc).c().send_##Name(req);                        \
    ASSERT_EQ((rpc).Send((rpc).Take()), 200) << #Name; \
    (rpc).c().recv_##Name(resp);                       \
  } while (0)

struct Fixture {
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({.name = "test"});
  TableExecutor executor;
  std::unique_ptr<ResultServer> server;

  void Start(ServerOptions so) {
    so.token = kToken;
    so.service.pool = pool.get();
    so.service.executor = &executor;
    auto s = ResultServer::Start(so);
    ASSERT_OK(s);
    server = std::move(s).value();
  }
};

t::TSessionHandle Open(Rpc& rpc) {
  t::TOpenSessionReq req;
  req.client_protocol = t::TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10;
  req.__set_client_protocol_i64(t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8);
  t::TOpenSessionResp resp;
  rpc.c().send_OpenSession(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_OpenSession(resp);
  EXPECT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(resp.sessionHandle.sessionId.guid.size(), 16u);
  // A version 7 UUID (RFC 9562): it carries the time it was issued.
  EXPECT_EQ(static_cast<uint8_t>(resp.sessionHandle.sessionId.guid[6]) >> 4, 7) << "UUID version 7";
  EXPECT_EQ(static_cast<uint8_t>(resp.sessionHandle.sessionId.guid[8]) >> 6, 2) << "RFC 9562 variant";
  return resp.sessionHandle;
}

t::TExecuteStatementResp Execute(Rpc& rpc, const t::TSessionHandle& s, const std::string& sql, bool download,
                                 bool lz4_inline = false, int64_t direct_rows = -1) {
  t::TExecuteStatementReq req;
  req.sessionHandle = s;
  req.statement = sql;
  req.__set_runAsync(true);
  req.__set_canReadArrowResult(true);
  req.__set_canDownloadResult(download);
  if (lz4_inline) req.__set_canDecompressLZ4Result(true);
  if (direct_rows >= 0) {
    t::TSparkGetDirectResults d;
    d.maxRows = direct_rows;
    req.__set_getDirectResults(d);
  }
  t::TExecuteStatementResp resp;
  rpc.c().send_ExecuteStatement(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_ExecuteStatement(resp);
  return resp;
}

t::TOperationState::type WaitFinished(Rpc& rpc, const t::TOperationHandle& op) {
  for (int i = 0; i < 500; ++i) {
    t::TGetOperationStatusReq req;
    req.operationHandle = op;
    t::TGetOperationStatusResp resp;
    rpc.c().send_GetOperationStatus(req);
    EXPECT_EQ(rpc.Send(rpc.Take()), 200);
    rpc.c().recv_GetOperationStatus(resp);
    if (resp.status.statusCode != t::TStatusCode::SUCCESS_STATUS) {
      ADD_FAILURE() << "GetOperationStatus: " << resp.status.errorMessage;
      return t::TOperationState::UKNOWN_STATE;
    }
    if (resp.operationState != t::TOperationState::RUNNING_STATE &&
        resp.operationState != t::TOperationState::INITIALIZED_STATE &&
        resp.operationState != t::TOperationState::PENDING_STATE) {
      return resp.operationState;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return t::TOperationState::TIMEDOUT_STATE;
}

t::TGetResultSetMetadataResp Metadata(Rpc& rpc, const t::TOperationHandle& op) {
  t::TGetResultSetMetadataReq req;
  req.operationHandle = op;
  t::TGetResultSetMetadataResp resp;
  rpc.c().send_GetResultSetMetadata(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_GetResultSetMetadata(resp);
  return resp;
}

t::TFetchResultsResp Fetch(Rpc& rpc, const t::TOperationHandle& op, bool first, int64_t max_rows = 100000,
                           int64_t start_row = -1) {
  t::TFetchResultsReq req;
  req.operationHandle = op;
  req.orientation = first ? t::TFetchOrientation::FETCH_FIRST : t::TFetchOrientation::FETCH_NEXT;
  req.maxRows = max_rows;
  if (start_row >= 0) req.__set_startRowOffset(start_row);
  t::TFetchResultsResp resp;
  rpc.c().send_FetchResults(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_FetchResults(resp);
  return resp;
}

t::TStatus CloseOp(Rpc& rpc, const t::TOperationHandle& op) {
  t::TCloseOperationReq req;
  req.operationHandle = op;
  t::TCloseOperationResp resp;
  rpc.c().send_CloseOperation(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_CloseOperation(resp);
  return resp.status;
}

void CloseSession(Rpc& rpc, const t::TSessionHandle& s) {
  t::TCloseSessionReq req;
  req.sessionHandle = s;
  t::TCloseSessionResp resp;
  rpc.c().send_CloseSession(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_CloseSession(resp);
  EXPECT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
}

std::string PathOf(const std::string& url) {
  const size_t p = url.find("/files/");
  return p == std::string::npos ? url : url.substr(p);
}

// Downloads and decodes all links of a result; checks the link fields.
std::vector<int64_t> DownloadAll(Rpc& rpc, const std::vector<t::TSparkArrowResultLink>& links, bool lz4,
                                 MemoryPool* pool, int64_t* next_row) {
  std::vector<int64_t> keys;
  for (const auto& l : links) {
    EXPECT_EQ(l.startRowOffset, *next_row);
    auto r = rpc.http().Get(PathOf(l.fileLink).c_str());
    EXPECT_TRUE(r);
    if (!r) return keys;
    EXPECT_EQ(r->status, 200);
    auto raw =
        Buffer::CopyOf(pool, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r->body.data()), r->body.size()))
            .value();
    std::shared_ptr<Buffer> ipc = raw;
    if (lz4) {
      auto d = fetch::Lz4FrameDecompress(raw->span(), pool, int64_t{1} << 30);
      EXPECT_OK(d);
      ipc = *d;
    }
    EXPECT_EQ(ipc->size(), l.bytesNum) << "bytesNum is the uncompressed IPC size";
    auto k = OrderKeys(ipc, pool);
    EXPECT_EQ(static_cast<int64_t>(k.size()), l.rowCount);
    keys.insert(keys.end(), k.begin(), k.end());
    *next_row += l.rowCount;
  }
  return keys;
}

TEST(ResultServer, CloudFetchLz4SeveralChunksPagesAndSpill) {
  auto table = MakeLineitem(60000, "cf");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 512 << 10;
  so.service.inline_threshold_bytes = 64 << 10;
  so.service.max_links_per_fetch = 3;
  so.store.memory_budget_bytes = 1 << 20;  // smaller than the result: spills
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "select * from lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
  auto md = Metadata(rpc, ex.operationHandle);
  ASSERT_EQ(md.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(md.resultFormat, t::TSparkRowSetType::URL_BASED_SET);
  EXPECT_TRUE(md.lz4Compressed);
  ASSERT_EQ(md.schema.columns.size(), 16u);
  EXPECT_EQ(md.schema.columns[0].columnName, "l_orderkey");
  EXPECT_EQ(md.schema.columns[0].typeDesc.types[0].primitiveEntry.type, t::TTypeId::BIGINT_TYPE);
  EXPECT_EQ(md.schema.columns[0].position, 1);
  EXPECT_FALSE(md.arrowSchema.empty());

  std::vector<int64_t> keys;
  int64_t next_row = 0;
  int pages = 0;
  bool first = true;
  std::vector<t::TSparkArrowResultLink> all_links;
  while (true) {
    auto page = Fetch(rpc, ex.operationHandle, first);
    first = false;
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    ++pages;
    EXPECT_LE(page.results.resultLinks.size(), 3u);
    auto k = DownloadAll(rpc, page.results.resultLinks, true, f.pool.get(), &next_row);
    keys.insert(keys.end(), k.begin(), k.end());
    all_links.insert(all_links.end(), page.results.resultLinks.begin(), page.results.resultLinks.end());
    if (!page.hasMoreRows) break;
    ASSERT_LT(pages, 1000);
  }
  EXPECT_GE(pages, 2);
  EXPECT_GE(all_links.size(), 4u);
  EXPECT_EQ(keys, table->orderkeys);
  // Once the statement has finished, the metadata carries the whole sizes.
  auto md_done = Metadata(rpc, ex.operationHandle);
  int64_t ipc_total = 0;
  for (const auto& l : all_links) ipc_total += l.bytesNum;
  EXPECT_EQ(md_done.uncompressedBytes, ipc_total);
  EXPECT_GT(md_done.compressedBytes, 0);
  EXPECT_LT(md_done.compressedBytes, md_done.uncompressedBytes) << "LZ4 frames are smaller than the IPC streams";
  EXPECT_GT(f.server->store()->stats().total_spilled_chunks, 0) << "budget below the result spills";

  // startRowOffset: links again from the chunk that holds a given row.
  const auto& third = all_links[2];
  auto again = Fetch(rpc, ex.operationHandle, false, 100000, third.startRowOffset + 1);
  ASSERT_FALSE(again.results.resultLinks.empty());
  EXPECT_EQ(again.results.resultLinks[0].startRowOffset, third.startRowOffset);
  // FETCH_FIRST restarts.
  auto restart = Fetch(rpc, ex.operationHandle, true);
  ASSERT_FALSE(restart.results.resultLinks.empty());
  EXPECT_EQ(restart.results.resultLinks[0].startRowOffset, 0);

  // Links: Range -> 206 with the right bytes; forged and expired -> 403.
  const std::string path = PathOf(all_links[0].fileLink);
  auto full = rpc.http().Get(path.c_str());
  ASSERT_TRUE(full);
  ASSERT_EQ(full->status, 200);
  auto part = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=100-1099"}});
  ASSERT_TRUE(part);
  EXPECT_EQ(part->status, 206);
  EXPECT_EQ(part->body, full->body.substr(100, 1000));
  auto tail = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=-10"}});
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->status, 206);
  EXPECT_EQ(tail->body, full->body.substr(full->body.size() - 10));
  // A start at or past the end is 416 with "bytes */size" (cpp-httplib alone
  // answered 206 with a Content-Length near 2^64 and hung the connection);
  // an open end past the size is cut at the size; several ranges get the
  // whole chunk (200); an error body ignores Range.
  const std::string size_text = std::to_string(full->body.size());
  for (const std::string& r : std::vector<std::string>{"bytes=" + size_text + "-", "bytes=999999999999-", "bytes=-0"}) {
    auto bad = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", r}});
    ASSERT_TRUE(bad) << r;
    EXPECT_EQ(bad->status, 416) << r;
    EXPECT_EQ(bad->get_header_value("Content-Range"), "bytes */" + size_text) << r;
  }
  auto open_end = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=5-99999999999"}});
  ASSERT_TRUE(open_end);
  EXPECT_EQ(open_end->status, 206);
  EXPECT_EQ(open_end->body, full->body.substr(5));
  auto multi = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=0-1,5-6,10-"}});
  ASSERT_TRUE(multi);
  EXPECT_EQ(multi->status, 200);
  EXPECT_EQ(multi->body, full->body);
  auto bad_id = rpc.http().Get("/files/abc", httplib::Headers{{"Range", "bytes=-5"}});
  ASSERT_TRUE(bad_id);
  EXPECT_EQ(bad_id->status, 400);
  EXPECT_EQ(bad_id->body, "not a chunk id\n");
  std::string forged = path;
  char& last = forged.back();
  last = last == '0' ? '1' : '0';
  EXPECT_EQ(rpc.http().Get(forged.c_str())->status, 403);
  const std::string id = path.substr(7, 32);
  const int64_t past = fetch::NowEpochMs() - 1000;
  const std::string expired = "/files/" + id + "?" + f.server->store()->signer().Query(id, past);
  EXPECT_EQ(rpc.http().Get(expired.c_str())->status, 403);
  EXPECT_EQ(rpc.http().Get(("/files/" + id).c_str())->status, 403) << "no signature";
  EXPECT_EQ(rpc.http().Get(("/files/" + id + "?e=1&s=").c_str())->status, 403) << "truncated";
  EXPECT_EQ(rpc.http().Get("/files/..%2F..%2Fetc%2Fpasswd")->status, 404) << "decoded to a path outside /files/<id>";
  EXPECT_EQ(rpc.http().Get("/files/..")->status, 400);
  EXPECT_EQ(rpc.http().Get(("/files/" + id.substr(0, 31) + "G?" + path.substr(path.find('?') + 1)).c_str())->status,
            400);
  EXPECT_EQ(rpc.http().Get("/files/../../etc/passwd")->status / 100, 4);

  // Removed: after CloseOperation the same signed link answers 404.
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(rpc.http().Get(path.c_str())->status, 404);
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  CloseSession(rpc, s);
  EXPECT_EQ(f.server->store()->stats().chunks, 0);
  EXPECT_EQ(f.server->store()->CountSpillFiles(), 0);
  EXPECT_EQ(f.server->service()->chunk_pool()->held_bytes(), 0);
  EXPECT_EQ(f.server->service()->exec_pool()->held_bytes(), 0);
}

// Inline results: arrowSchema + arrowBatches decode to the table's values.
std::vector<int64_t> InlineKeys(const t::TGetResultSetMetadataResp& md, const std::vector<t::TSparkArrowBatch>& batches,
                                bool lz4, MemoryPool* pool, int64_t* rows) {
  std::string stream = md.arrowSchema;
  for (const auto& b : batches) {
    *rows += b.rowCount;
    if (lz4) {
      auto d = fetch::Lz4FrameDecompress(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.batch.data()), b.batch.size()), pool, 1 << 30);
      EXPECT_OK(d);
      stream += std::string((*d)->view());
    } else {
      stream += b.batch;
    }
  }
  stream += std::string("\xff\xff\xff\xff\0\0\0\0", 8);
  auto buf =
      Buffer::CopyOf(pool, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.data()), stream.size()));
  return OrderKeys(*buf, pool);
}

TEST(ResultServer, InlineResultsPagesLz4AndDirectResults) {
  auto table = MakeLineitem(5000, "inline");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 128 << 10;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  for (bool lz4 : {false, true}) {
    auto ex = Execute(rpc, s, "SELECT * FROM lineitem", false, lz4);
    ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
    auto md = Metadata(rpc, ex.operationHandle);
    EXPECT_EQ(md.resultFormat, t::TSparkRowSetType::ARROW_BASED_SET);
    EXPECT_EQ(md.lz4Compressed, lz4);
    std::vector<int64_t> keys;
    int64_t rows = 0;
    int pages = 0;
    for (bool first = true;; first = false) {
      auto page = Fetch(rpc, ex.operationHandle, first, 2000);
      ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
      EXPECT_TRUE(page.results.resultLinks.empty());
      EXPECT_EQ(page.results.startRowOffset, rows);
      auto k = InlineKeys(md, page.results.arrowBatches, lz4, f.pool.get(), &rows);
      keys.insert(keys.end(), k.begin(), k.end());
      ++pages;
      if (!page.hasMoreRows) break;
      ASSERT_LT(pages, 100);
    }
    EXPECT_GE(pages, 2);
    EXPECT_EQ(keys, table->orderkeys);
    EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  }
  // Direct results with the whole (small) result: closeOperation is set and
  // the operation is gone.
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem LIMIT 7", true, false, 100000);
  ASSERT_TRUE(ex.__isset.directResults);
  ASSERT_TRUE(ex.directResults.__isset.resultSet);
  EXPECT_EQ(ex.directResults.operationStatus.operationState, t::TOperationState::FINISHED_STATE);
  EXPECT_TRUE(ex.directResults.__isset.closeOperation);
  EXPECT_FALSE(ex.directResults.resultSet.hasMoreRows);
  int64_t rows = 0;
  auto keys = InlineKeys(ex.directResults.resultSetMetadata, ex.directResults.resultSet.results.arrowBatches, false,
                         f.pool.get(), &rows);
  EXPECT_EQ(rows, 7);
  EXPECT_EQ(keys, std::vector<int64_t>(table->orderkeys.begin(), table->orderkeys.begin() + 7));
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  // Empty result.
  auto empty = Execute(rpc, s, "SELECT * FROM lineitem LIMIT 0", true, false, 100000);
  ASSERT_TRUE(empty.__isset.directResults);
  EXPECT_FALSE(empty.directResults.resultSet.hasMoreRows);
  EXPECT_TRUE(empty.directResults.resultSet.results.arrowBatches.empty());
  CloseSession(rpc, s);
  EXPECT_EQ(f.server->service()->stats().open_operations, 0);
  EXPECT_EQ(f.server->store()->stats().chunks, 0);
}

TEST(ResultServer, StatementErrorsMetadataAndBadInput) {
  auto table = MakeLineitem(100, "err");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.max_body_bytes = 64 << 10;
  so.service.max_sessions = 3;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto bad = Execute(rpc, s, "SELECT l_orderkey FROM lineitem WHERE 1 = 1", false);
  EXPECT_EQ(bad.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(bad.status.displayMessage.find("not supported"), std::string::npos) << bad.status.displayMessage;
  auto missing = Execute(rpc, s, "SELECT * FROM nope", false);
  EXPECT_EQ(missing.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(missing.status.displayMessage.find("nope"), std::string::npos);

  // GetTables / GetColumns are Arrow results.
  {
    t::TGetColumnsReq req;
    req.sessionHandle = s;
    req.__set_tableName("line%");
    req.__set_columnName("l_order%");
    t::TGetColumnsResp resp;
    RPC(rpc, GetColumns, req, resp);
    ASSERT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    ASSERT_EQ(WaitFinished(rpc, resp.operationHandle), t::TOperationState::FINISHED_STATE);
    auto md = Metadata(rpc, resp.operationHandle);
    ASSERT_GE(md.schema.columns.size(), 5u);
    EXPECT_EQ(md.schema.columns[3].columnName, "COLUMN_NAME");
    auto page = Fetch(rpc, resp.operationHandle, true);
    ASSERT_EQ(page.results.arrowBatches.size(), 1u);
    EXPECT_EQ(page.results.arrowBatches[0].rowCount, 1);  // l_orderkey
    EXPECT_NE(page.results.arrowBatches[0].batch.find("l_orderkey"), std::string::npos);
    EXPECT_EQ(CloseOp(rpc, resp.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  }
  {
    t::TGetTablesReq req;
    req.sessionHandle = s;
    t::TGetTablesResp resp;
    RPC(rpc, GetTables, req, resp);
    ASSERT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    auto page = Fetch(rpc, resp.operationHandle, true);
    ASSERT_EQ(page.results.arrowBatches.size(), 1u);
    EXPECT_EQ(page.results.arrowBatches[0].rowCount, 1);
    EXPECT_NE(page.results.arrowBatches[0].batch.find("lineitem"), std::string::npos);
  }
  {
    t::TGetInfoReq req;
    req.sessionHandle = s;
    req.infoType = t::TGetInfoType::CLI_DBMS_NAME;
    t::TGetInfoResp resp;
    RPC(rpc, GetInfo, req, resp);
    EXPECT_EQ(resp.infoValue.stringValue, "quiver");
  }

  // Unknown handles.
  t::TOperationHandle fake;
  fake.operationId.guid = std::string(16, 'x');
  fake.operationId.secret = std::string(16, 'y');
  t::TGetOperationStatusReq sreq;
  sreq.operationHandle = fake;
  t::TGetOperationStatusResp sresp;
  RPC(rpc, GetOperationStatus, sreq, sresp);
  EXPECT_EQ(sresp.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  auto fetch_fake = Fetch(rpc, fake, true);
  EXPECT_EQ(fetch_fake.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  t::TSessionHandle wrong_secret = s;
  wrong_secret.sessionId.secret[0] ^= 1;
  auto ws = Execute(rpc, wrong_secret, "SELECT * FROM lineitem", false);
  EXPECT_EQ(ws.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);

  // Session limit.
  Open(rpc);
  Open(rpc);
  {
    t::TOpenSessionReq req;
    t::TOpenSessionResp resp;
    RPC(rpc, OpenSession, req, resp);
    EXPECT_EQ(resp.status.statusCode, t::TStatusCode::ERROR_STATUS);
    EXPECT_NE(resp.status.errorMessage.find("too many open sessions"), std::string::npos);
  }

  // HTTP-level bad input.
  {
    t::TOpenSessionReq req;
    rpc.c().send_OpenSession(req);
    const std::string good = rpc.Take();
    Rpc no_token(*f.server, "");
    EXPECT_EQ(no_token.Send(good), 401);
    Rpc wrong(*f.server, "wrong-token-0123");
    EXPECT_EQ(wrong.Send(good), 401);
    EXPECT_EQ(rpc.Send("garbage that is not thrift"), 400);
    EXPECT_EQ(rpc.Send(good.substr(0, good.size() / 2)), 400);
    EXPECT_EQ(rpc.Send(std::string(100 << 10, 'a')), 413);
    // A string length field claiming 2 GiB.
    EXPECT_EQ(
        rpc.Send(std::string(
            "\x80\x01\x00\x01\x00\x00\x00\x0bOpenSession\x00\x00\x00\x00\x0c\x00\x01\x0b\x00\x02\x7f\xff\xff\xff", 34)),
        400);
    // Every truncation of a valid message is refused without a crash.
    for (size_t n = 0; n < good.size(); n += 3) EXPECT_EQ(rpc.Send(good.substr(0, n)), 400) << n;
    auto r = rpc.http().Post("/sql/1.0/warehouses/other", httplib::Headers{{"Authorization", "Bearer " + kToken}}, good,
                             "application/x-thrift");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    auto m = rpc.http().Get("/metrics", httplib::Headers{{"Authorization", "Bearer " + kToken}});
    ASSERT_TRUE(m);
    EXPECT_NE(m->body.find("pool test/chunks held_bytes="), std::string::npos) << m->body;
    EXPECT_EQ(rpc.http().Get("/metrics")->status, 401);
  }
  // Still serving.
  auto s2 = f.server->service()->stats();
  EXPECT_GT(s2.rpc_errors, 0);
  CloseSession(rpc, s);
}

// Chunk files leave in batches of TLS records written straight to the
// socket (http_server.h): multi-MiB files arrive byte for byte as stored,
// whole and as a Range crossing batch boundaries, one after another on the
// same keep-alive connection, and an RPC still follows on it.
TEST(ResultServer, LargeChunkFilesArriveExactlyInBatches) {
  auto table = MakeLineitem(60000, "batches");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.lz4 = false;  // raw IPC: files as large as the chunks
  so.service.chunk_bytes = 3 << 20;
  so.service.inline_threshold_bytes = 0;
  f.Start(so);
  Rpc rpc(*f.server);
  rpc.http().set_keep_alive(true);  // every request below on one connection
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
  std::vector<t::TSparkArrowResultLink> links;
  for (bool first = true;; first = false) {
    auto page = Fetch(rpc, ex.operationHandle, first);
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    links.insert(links.end(), page.results.resultLinks.begin(), page.results.resultLinks.end());
    if (!page.hasMoreRows) break;
  }
  ASSERT_GE(links.size(), 2u);
  int64_t multi_batch_files = 0;
  for (const auto& l : links) {
    const std::string path = PathOf(l.fileLink);
    auto stored = f.server->store()->Get(path.substr(7, 32));
    ASSERT_OK(stored);
    const std::string want(reinterpret_cast<const char*>((*stored)->data()), static_cast<size_t>((*stored)->size()));
    multi_batch_files += want.size() > (size_t{512} << 10) ? 1 : 0;  // three batches or more
    auto whole = rpc.http().Get(path.c_str());
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->status, 200);
    EXPECT_EQ(whole->get_header_value("Content-Length"), std::to_string(want.size()));
    EXPECT_TRUE(whole->body == want) << "file bytes differ from the stored chunk";
    if (want.size() < 600000) continue;
    auto part = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=200000-599999"}});
    ASSERT_TRUE(part);
    EXPECT_EQ(part->status, 206);
    EXPECT_TRUE(part->body == want.substr(200000, 400000));
  }
  EXPECT_GE(multi_batch_files, 2);
  int64_t next_row = 0;
  auto keys = DownloadAll(rpc, links, false, f.pool.get(), &next_row);
  EXPECT_EQ(keys, table->orderkeys);
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  CloseSession(rpc, s);
  auto metrics = rpc.http().Get("/metrics", httplib::Headers{{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("http connections=1 "), std::string::npos) << "one keep-alive connection:\n"
                                                                          << metrics->body;
}

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
  so.service.orphan_timeout_ms = 400;
  so.service.operation_idle_timeout_ms = 600000;
  so.sweep_interval_ms = 50;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  // The producer fills its two unfetched chunks and pauses; nobody fetches.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (f.server->service()->stats().orphaned_operations == 0 && std::chrono::steady_clock::now() < deadline)
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

}  // namespace
}  // namespace quiver::server

namespace quiver::server {
namespace {

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

// ---- HTTP hardening: idle and slow clients, header and body limits, strict
// parsing, connection caps (raw TLS clients over OpenSSL) ----
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>

namespace quiver::server {
namespace {

// A raw TLS client: sends exactly the bytes given, when given.
class RawTls {
 public:
  explicit RawTls(int port, bool handshake = true) {
    std::signal(SIGPIPE, SIG_IGN);  // writes to a connection the server closed fail instead
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    if (handshake) connected_ = SSL_connect(ssl_) == 1;
  }
  ~RawTls() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
    SSL_CTX_free(ctx_);
  }
  bool connected() const { return connected_; }
  // False once the server has closed (or reset) the connection.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const int n = SSL_write(ssl_, bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), 1 << 16)));
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Everything the server sends until it closes or `timeout_ms` passes.
  std::string ReadUntilClose(int timeout_ms = 5000) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buf[16384];
    while (std::chrono::steady_clock::now() < end) {
      if (SSL_pending(ssl_) == 0) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 50) == 0) continue;
      }
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // What arrives within `timeout_ms` (one read), "" when nothing did or
  // the server closed (open() then says which).
  std::string ReadSome(int timeout_ms) {
    if (SSL_pending(ssl_) == 0) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) == 0) return "";
    }
    char buf[16384];
    const int n = SSL_read(ssl_, buf, sizeof buf);
    if (n <= 0) {
      open_ = false;
      return "";
    }
    return std::string(buf, static_cast<size_t>(n));
  }
  bool open() const { return open_; }
  // The status code of the first response line, or -1.
  static int StatusOf(const std::string& response) {
    if (response.compare(0, 9, "HTTP/1.1 ") != 0 || response.size() < 12) return -1;
    return std::atoi(response.substr(9, 3).c_str());
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
  bool open_ = true;
};

int RawTcp(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  long total = 0, resident = 0;
  if (f == nullptr) return -1;
  if (fscanf(f, "%ld %ld", &total, &resident) != 2) resident = -1;
  fclose(f);
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

std::string RpcHead(const ResultServer& server, const std::string& extra) {
  return "POST " + server.rpc_path() + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra + "\r\n";
}

// Runs the 5-row query from a fresh client; returns its seconds, or -1.
double FiveRowQuerySeconds(const ResultServer& server) {
  const auto t0 = std::chrono::steady_clock::now();
  Rpc rpc(server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem LIMIT 5", false);
  if (ex.status.statusCode != t::TStatusCode::SUCCESS_STATUS) {
    ADD_FAILURE() << "ExecuteStatement: " << ex.status.errorMessage;
    return -1;
  }
  const auto state = WaitFinished(rpc, ex.operationHandle);
  if (state != t::TOperationState::FINISHED_STATE) {
    ADD_FAILURE() << "state " << state << " after "
                  << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s";
    return -1;
  }
  auto page = Fetch(rpc, ex.operationHandle, true);
  int64_t rows = 0;
  for (const auto& b : page.results.arrowBatches) rows += b.rowCount;
  if (rows != 5) {
    ADD_FAILURE() << rows << " rows";
    return -1;
  }
  CloseOp(rpc, ex.operationHandle);
  CloseSession(rpc, s);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// 256 idle TCP connections and 32 TLS clients sending their header one byte
// at a time hold no worker: with 4 workers a legitimate query answers at
// once. (cpp-httplib 0.11 kept a worker in a read on each of them.)
TEST(ResultServerHttp, IdleAndSlowConnectionsDoNotStopTheService) {
  auto table = MakeLineitem(100, "idlehttp");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.worker_threads = 4;
  so.max_connections_per_address = 512;  // 288 from 127.0.0.1 (the default allows 4096 / 16)
  f.Start(so);
  const int64_t rss_before = ResidentBytes();
  std::vector<int> idle;
  for (int i = 0; i < 256; ++i) {
    const int fd = RawTcp(f.server->port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  std::vector<std::unique_ptr<RawTls>> slow;
  for (int i = 0; i < 32; ++i) {
    slow.push_back(std::make_unique<RawTls>(f.server->port()));
    ASSERT_TRUE(slow.back()->connected());
  }
  std::atomic<bool> stop{false};
  std::thread dripper([&] {
    const std::string head = RpcHead(*f.server, "Authorization: Bearer " + kToken + "\r\n");
    for (size_t at = 0; !stop && at < head.size(); ++at) {
      for (auto& c : slow) c->Send(head.substr(at, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double seconds = FiveRowQuerySeconds(*f.server);
  const int64_t rss_with_idle = ResidentBytes();
  stop = true;
  dripper.join();
  EXPECT_GE(seconds, 0);
  EXPECT_LT(seconds, 2.0) << "a query while 256 idle and 32 slow connections are open";
  const std::string metrics = f.server->MetricsText();
  EXPECT_NE(metrics.find("http connections="), std::string::npos) << metrics;
  // Client and server share this process: both sides' buffers count.
  EXPECT_LT(rss_with_idle - rss_before, int64_t{64} << 20) << "288 idle connections";
  std::printf("5-row query %.3f s with 288 idle/slow connections; RSS +%.1f MiB (client and server)\n", seconds,
              static_cast<double>(rss_with_idle - rss_before) / (1 << 20));
  for (int fd : idle) close(fd);
}

// Each step has a total deadline however slowly bytes come: a TLS client
// that drips its header is closed after header_timeout_ms; one that never
// finishes its handshake too.
TEST(ResultServerHttp, HeaderDeadlineIsTotal) {
  Fixture f;
  ServerOptions so;
  so.header_timeout_ms = 600;
  f.Start(so);
  RawTls slow(f.server->port());
  ASSERT_TRUE(slow.connected());
  const std::string head = RpcHead(*f.server, "Authorization: Bearer " + kToken + "\r\n");
  const auto t0 = std::chrono::steady_clock::now();
  bool open = true;
  for (size_t at = 0; at < head.size() && open; ++at) {
    open = slow.Send(head.substr(at, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(5)) break;
  }
  // Either a write already failed, or the server closes without an answer.
  if (open) {
    EXPECT_EQ(slow.ReadUntilClose(5000), "");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_NE(f.server->MetricsText().find("timeouts=1"), std::string::npos) << f.server->MetricsText();

  const int fd = RawTcp(f.server->port());  // no TLS handshake at all
  ASSERT_GE(fd, 0);
  char byte;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_LE(read(fd, &byte, 1), 0) << "closed by the server";
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(3));
  close(fd);
}

// Issue 35 #10: a kept-alive connection idle between requests stays open
// for keep_alive_timeout_ms, not the header deadline of a new connection
// (a driver pausing longer than that between RPCs reused a socket the
// server had closed: "socket hang up"); past it the server closes it. The
// header deadline still bounds a header section from its first byte.
TEST(ResultServerHttp, KeepAliveIdleIsNotTheHeaderDeadline) {
  Fixture f;
  ServerOptions so;
  so.header_timeout_ms = 400;
  so.keep_alive_timeout_ms = 2000;
  f.Start(so);
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kToken + "\r\n\r\n";
  // One whole response (header section and Content-Length bytes), or "".
  auto read_response = [](RawTls& c) {
    std::string got;
    for (int i = 0; i < 100; ++i) {
      const size_t end = got.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t cl = got.find("Content-Length: ");
        if (cl != std::string::npos && cl < end &&
            got.size() >= end + 4 + std::strtoull(got.c_str() + cl + 16, nullptr, 10)) {
          return got;
        }
      }
      const std::string more = c.ReadSome(100);
      if (more.empty() && !c.open()) break;
      got += more;
    }
    return std::string();
  };
  RawTls c(f.server->port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.Send(get));
  EXPECT_EQ(RawTls::StatusOf(read_response(c)), 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // 2.5 x the header deadline, idle
  ASSERT_TRUE(c.Send(get));
  EXPECT_EQ(RawTls::StatusOf(read_response(c)), 200) << "the idle keep-alive connection was closed";
  // The header deadline runs from the next request's first byte.
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.Send("G"));
  EXPECT_EQ(c.ReadUntilClose(3000), "");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  // Idle past keep_alive_timeout_ms: closed, and counted.
  RawTls idle(f.server->port());
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.Send(get));
  EXPECT_EQ(RawTls::StatusOf(read_response(idle)), 200);
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(idle.ReadUntilClose(5000), "");
  const auto idle_for = std::chrono::steady_clock::now() - t1;
  EXPECT_GT(idle_for, std::chrono::milliseconds(1800));
  EXPECT_LT(idle_for, std::chrono::milliseconds(4000));
  // (The close is counted when the read ends, just after the socket closes.)
  for (int i = 0; i < 100 && f.server->MetricsText().find("keep_alive_closes=1") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(f.server->MetricsText().find("keep_alive_closes=1"), std::string::npos) << f.server->MetricsText();
}

// A header line without an end, or a flood of header fields, is cut at
// max_header_bytes / max_header_fields with 431 and costs no memory beyond.
TEST(ResultServerHttp, LongHeaderLinesAndManyFieldsAreRefused) {
  Fixture f;
  f.Start(ServerOptions{});
  const int64_t rss_before = ResidentBytes();
  {
    RawTls c(f.server->port());
    ASSERT_TRUE(c.connected());
    c.Send("GET /metrics HTTP/1.1\r\nX-Long: ");
    const std::string mib(1 << 20, 'a');
    int sent_mib = 0;
    while (sent_mib < 64 && c.Send(mib)) ++sent_mib;
    EXPECT_LT(sent_mib, 64) << "the server stopped reading";
    const std::string reply = c.ReadUntilClose();
    if (!reply.empty()) {
      EXPECT_EQ(RawTls::StatusOf(reply), 431) << reply;
    }
  }
  {
    RawTls c(f.server->port());
    ASSERT_TRUE(c.connected());
    std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 200; ++i) head += "X-" + std::to_string(i) + ": y\r\n";
    c.Send(head + "\r\n");
    EXPECT_EQ(RawTls::StatusOf(c.ReadUntilClose()), 431);
  }
  EXPECT_LT(ResidentBytes() - rss_before, int64_t{32} << 20);
  // Still serving.
  Rpc rpc(*f.server);
  CloseSession(rpc, Open(rpc));
}

// The token, the Content-Length and the body cap are checked from the
// header section alone: a refused request's body is never read (nothing
// is charged to the thrift pool), and the answer comes at once.
TEST(ResultServerHttp, BodiesOfRefusedRequestsAreNotRead) {
  Fixture f;
  ServerOptions so;
  so.max_body_bytes = 1 << 20;
  f.Start(so);
  const auto t0 = std::chrono::steady_clock::now();
  auto status = [&](const std::string& head) {
    RawTls c(f.server->port());
    EXPECT_TRUE(c.connected());
    c.Send(head);
    return RawTls::StatusOf(c.ReadUntilClose());
  };
  const std::string auth = "Authorization: Bearer " + kToken + "\r\n";
  EXPECT_EQ(status(RpcHead(*f.server, "Content-Length: 1048576\r\n")), 401) << "no token";
  EXPECT_EQ(status(RpcHead(*f.server, "Authorization: Bearer wrong-token-0123\r\nContent-Length: 1048576\r\n")), 401);
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Content-Length: 1048577\r\n")), 413) << "a length over the cap";
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Content-Length: 99999999999999\r\n")), 413);
  EXPECT_EQ(status(RpcHead(*f.server, auth)), 411) << "POST without Content-Length";
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Transfer-Encoding: chunked\r\n")), 411);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "no answer waited for a body";
  EXPECT_EQ(f.server->service()->thrift_pool()->peak_bytes(), 0) << "no body was read";
  // 64 unauthenticated clients each announcing the largest body, at once.
  std::vector<std::unique_ptr<RawTls>> clients;
  for (int i = 0; i < 64; ++i) {
    clients.push_back(std::make_unique<RawTls>(f.server->port()));
    clients.back()->Send(RpcHead(*f.server, "Content-Length: 1048576\r\n") + std::string(1000, 'x'));
  }
  for (auto& c : clients) EXPECT_EQ(RawTls::StatusOf(c->ReadUntilClose()), 401);
  EXPECT_EQ(f.server->service()->thrift_pool()->peak_bytes(), 0);
}

// Strict framing: two Content-Length fields (equal or not), Content-Length
// with chunked, a NUL in a field value: 400. Request smuggling needs one of them.
TEST(ResultServerHttp, AmbiguousFramingIsRefused) {
  Fixture f;
  f.Start(ServerOptions{});
  auto status = [&](const std::string& head) {
    RawTls c(f.server->port());
    EXPECT_TRUE(c.connected());
    c.Send(head);
    return RawTls::StatusOf(c.ReadUntilClose());
  };
  const std::string auth = "Authorization: Bearer " + kToken + "\r\n";
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Content-Length: 5\r\nContent-Length: 6\r\n") + "abcdef"), 400);
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Content-Length: 5\r\nContent-Length: 5\r\n") + "abcde"), 400);
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n") + "abcde"), 400);
  EXPECT_EQ(status(RpcHead(*f.server, auth + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n") + "abcde"), 400);
  const int nul = status(RpcHead(*f.server, std::string("Authorization: Bearer ") + kToken +
                                                std::string("\0x\r\nContent-Length: 5\r\n", 23)) +
                         "abcde");
  EXPECT_TRUE(nul == 400 || nul == 401) << nul;
  EXPECT_EQ(status("GET /metrics HTTP/1.1\r\nHost: x\r\n" + auth + "Connection: close\r\n\r\n"), 200);
  EXPECT_EQ(status("GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 404);
  EXPECT_EQ(status("GARBAGE\r\n\r\n"), 400);
}

// Connection caps: past max_connections_per_address a new connection is
// closed at once; closing one makes room again.
TEST(ResultServerHttp, ConnectionCapsPerAddress) {
  Fixture f;
  ServerOptions so;
  so.max_connections_per_address = 4;
  f.Start(so);
  std::vector<std::unique_ptr<RawTls>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawTls>(f.server->port()));
    ASSERT_TRUE(held.back()->connected());
  }
  RawTls refused(f.server->port());
  EXPECT_FALSE(refused.connected());
  EXPECT_NE(f.server->MetricsText().find("refused_connections=1"), std::string::npos) << f.server->MetricsText();
  held.pop_back();
  bool ok = false;
  for (int i = 0; i < 50 && !ok; ++i) {  // the server notices the close
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RawTls again(f.server->port());
    ok = again.connected();
  }
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace quiver::server

namespace quiver::server {
namespace {

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
      if (kRssIsMeaningful) EXPECT_LT(after_burst - after_first, int64_t{64} << 20);
      EXPECT_NE(f.server->MetricsText().find("process_resident_bytes="), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace quiver::server
