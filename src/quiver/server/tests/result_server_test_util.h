// Shared helpers of the result server's end-to-end tests: a lineitem
// table in a temp file, a Thrift client over HTTPS (Rpc), a started server
// (Fixture) and the RPC calls the tests make. Test-only; each helper
// fails the calling test through gtest assertions.
#pragma once

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
namespace rs_test {
namespace t = ::quiver::tcli;
using apache::thrift::transport::TMemoryBuffer;

inline const std::string kToken = "test-token-0123";

// A lineitem table written to a temp file; its l_orderkey column (0) and row count.
struct TableFile {
  std::string path;
  std::vector<int64_t> orderkeys;
  std::vector<int64_t> linenumbers;
  ~TableFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

inline std::unique_ptr<TableFile> MakeLineitem(int64_t rows, const std::string& tag) {
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
inline std::vector<int64_t> OrderKeys(std::shared_ptr<Buffer> bytes, MemoryPool* pool) {
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

inline t::TSessionHandle Open(Rpc& rpc) {
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

inline t::TExecuteStatementResp Execute(Rpc& rpc, const t::TSessionHandle& s, const std::string& sql, bool download,
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

inline t::TOperationState::type WaitFinished(Rpc& rpc, const t::TOperationHandle& op) {
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

inline t::TGetResultSetMetadataResp Metadata(Rpc& rpc, const t::TOperationHandle& op) {
  t::TGetResultSetMetadataReq req;
  req.operationHandle = op;
  t::TGetResultSetMetadataResp resp;
  rpc.c().send_GetResultSetMetadata(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_GetResultSetMetadata(resp);
  return resp;
}

inline t::TFetchResultsResp Fetch(Rpc& rpc, const t::TOperationHandle& op, bool first, int64_t max_rows = 100000,
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

inline t::TStatus CloseOp(Rpc& rpc, const t::TOperationHandle& op) {
  t::TCloseOperationReq req;
  req.operationHandle = op;
  t::TCloseOperationResp resp;
  rpc.c().send_CloseOperation(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_CloseOperation(resp);
  return resp.status;
}

inline void CloseSession(Rpc& rpc, const t::TSessionHandle& s) {
  t::TCloseSessionReq req;
  req.sessionHandle = s;
  t::TCloseSessionResp resp;
  rpc.c().send_CloseSession(req);
  EXPECT_EQ(rpc.Send(rpc.Take()), 200);
  rpc.c().recv_CloseSession(resp);
  EXPECT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
}

inline std::string PathOf(const std::string& url) {
  const size_t p = url.find("/files/");
  return p == std::string::npos ? url : url.substr(p);
}

// Downloads and decodes all links of a result; checks the link fields.
inline std::vector<int64_t> DownloadAll(Rpc& rpc, const std::vector<t::TSparkArrowResultLink>& links, bool lz4,
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

// Inline results: arrowSchema + arrowBatches decode to the table's values.
inline std::vector<int64_t> InlineKeys(const t::TGetResultSetMetadataResp& md,
                                       const std::vector<t::TSparkArrowBatch>& batches, bool lz4, MemoryPool* pool,
                                       int64_t* rows) {
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

// The process's resident set in bytes (-1 when /proc is unreadable).
inline int64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  long total = 0, resident = 0;
  if (f == nullptr) return -1;
  if (fscanf(f, "%ld %ld", &total, &resident) != 2) resident = -1;
  fclose(f);
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

}  // namespace rs_test
}  // namespace quiver::server
