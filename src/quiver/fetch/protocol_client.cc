// quiver/fetch/protocol_client.cc — see protocol_client.h. The only file of
// the client that includes the generated Thrift headers.
#include "quiver/fetch/protocol_client.h"

#include <curl/curl.h>
#include <thrift/TConfiguration.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "quiver/ipc/reader.h"
#include "quiver/objstore/curl_util.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::fetch {

namespace tcli = ::quiver::tcli;
using apache::thrift::TConfiguration;
using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TMemoryBuffer;

Result<SchemaPtr> DecodeSchemaMessage(const std::string& message, MemoryPool* pool) {
  // The schema message plus an end-of-stream marker is a complete stream.
  std::string stream = message;
  const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  stream.append(reinterpret_cast<const char*>(eos), sizeof eos);
  QUIVER_ASSIGN_OR_RETURN(auto buf,
                          Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(stream.data()), stream.size()}));
  ipc::ReadOptions ro;
  ro.pool = pool;
  QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::Open(buf, ro));
  return reader->schema();
}

namespace {

std::string ServerError(const char* rpc, const tcli::TStatus& s) {
  std::string msg = std::string("server error in ") + rpc + ": ";
  if (s.__isset.displayMessage && !s.displayMessage.empty()) {
    msg += s.displayMessage;
  } else if (s.__isset.errorMessage && !s.errorMessage.empty()) {
    msg += s.errorMessage;
  } else {
    msg += "status code " + std::to_string(static_cast<int>(s.statusCode)) + " without a message";
  }
  if (s.__isset.sqlState && !s.sqlState.empty()) msg += " (sqlState " + s.sqlState + ")";
  if (s.__isset.errorCode) msg += " (errorCode " + std::to_string(s.errorCode) + ")";
  return msg;
}

Status CheckStatus(const char* rpc, const tcli::TStatus& s) {
  if (s.statusCode == tcli::TStatusCode::SUCCESS_STATUS ||
      s.statusCode == tcli::TStatusCode::SUCCESS_WITH_INFO_STATUS ||
      s.statusCode == tcli::TStatusCode::STILL_EXECUTING_STATUS) {
    return Status::OK();
  }
  return Status::IOError(ServerError(rpc, s));
}

tcli::TOperationHandle ToThrift(const OperationHandle& op) {
  tcli::TOperationHandle h;
  h.operationId.guid = op.guid;
  h.operationId.secret = op.secret;
  h.operationType = static_cast<tcli::TOperationType::type>(op.operation_type);
  h.hasResultSet = op.has_result_set;
  return h;
}

OperationHandle FromThrift(const tcli::TOperationHandle& h) {
  OperationHandle op;
  op.guid = h.operationId.guid;
  op.secret = h.operationId.secret;
  op.operation_type = static_cast<int32_t>(h.operationType);
  op.has_result_set = h.hasResultSet;
  return op;
}

FetchPage PageFromThrift(const tcli::TFetchResultsResp& r) {
  FetchPage p;
  p.has_more_rows = r.__isset.hasMoreRows && r.hasMoreRows;
  if (r.__isset.results) {
    p.start_row_offset = r.results.startRowOffset;
    for (const auto& l : r.results.resultLinks) {
      ResultLink link;
      link.file_link = l.fileLink;
      link.expiry_time_ms = l.expiryTime;
      link.start_row_offset = l.startRowOffset;
      link.row_count = l.rowCount;
      link.bytes_num = l.bytesNum;
      for (const auto& [k, v] : l.httpHeaders) link.http_headers.emplace_back(k, v);
      p.links.push_back(std::move(link));
    }
    for (const auto& b : r.results.arrowBatches) p.arrow_batches.push_back({b.batch, b.rowCount});
  }
  return p;
}

}  // namespace

class ProtocolClient::Impl {
 public:
  explicit Impl(ConnectionOptions o) : o_(std::move(o)) {}
  ~Impl() = default;

  Status Init() {
    QUIVER_RETURN_NOT_OK(objstore::CheckServerUrl(o_.server_url, o_.allow_http));
    QUIVER_ASSIGN_OR_RETURN(easy_, objstore::MakeEasy());
    return Status::OK();
  }

  // One RPC: serialise with send_X, POST, parse with recv_X.
  template <typename Send, typename Recv>
  Status Call(const char* rpc, Send&& send, Recv&& recv, const std::atomic<bool>* abort = nullptr) {
    if (closed_) return Status::Invalid(std::string(rpc) + ": the session is closed");
    ++stats_.rpcs;
    std::string request;
    try {
      auto out = std::make_shared<TMemoryBuffer>();
      auto proto = std::make_shared<TBinaryProtocol>(out);
      tcli::TCLIServiceClient client(proto);
      send(client);
      request = out->getBufferAsString();
    } catch (const std::exception& e) {
      return Status::Invalid(std::string(rpc) + ": cannot serialise the request: " + e.what());
    }
    QUIVER_ASSIGN_OR_RETURN(std::string reply, Post(rpc, request, abort));
    try {
      // The maximum message size is the reply's length: Thrift refuses any
      // string or container whose claimed size exceeds the bytes left.
      auto config =
          std::make_shared<TConfiguration>(static_cast<int>(reply.size()) + 1, static_cast<int>(reply.size()) + 1, 64);
      auto in = std::make_shared<TMemoryBuffer>(reinterpret_cast<uint8_t*>(reply.data()),
                                                static_cast<uint32_t>(reply.size()), TMemoryBuffer::OBSERVE, config);
      auto proto = std::make_shared<TBinaryProtocol>(in);
      proto->setStringSizeLimit(static_cast<int32_t>(reply.size()));
      proto->setContainerSizeLimit(static_cast<int32_t>(reply.size()));
      tcli::TCLIServiceClient client(proto);
      recv(client);
    } catch (const std::exception& e) {
      return Status::Invalid(std::string("the reply to ") + rpc + " (" + std::to_string(reply.size()) +
                             " bytes) does not parse: " + e.what());
    }
    return Status::OK();
  }

  Result<std::string> Post(const char* rpc, const std::string& body, const std::atomic<bool>* abort = nullptr) {
    objstore::HttpRequest req;
    req.url = o_.server_url;
    req.post_body = &body;
    req.headers = {"Content-Type: application/x-thrift", "Accept: application/x-thrift"};
    req.bearer_token = &o_.token;
    req.tls = objstore::TlsOptions{o_.ca_cert_path, o_.insecure};
    req.connect_timeout_ms = o_.connect_timeout_ms;
    req.timeout_ms = o_.rpc_timeout_ms;
    req.max_body_bytes = o_.max_reply_bytes;
    req.abort = abort;
    QUIVER_ASSIGN_OR_RETURN(objstore::HttpResponse resp, objstore::Perform(easy_.get(), req));
    if (resp.status != 200) {
      std::string snippet = resp.body.substr(0, 200);
      for (char& c : snippet) {
        if (c == '\n' || c == '\r') c = ' ';
      }
      return Status::IOError(std::string(rpc) + ": HTTP " + std::to_string(resp.status) + " from " +
                             objstore::RedactUrl(o_.server_url) + (snippet.empty() ? "" : ": " + snippet));
    }
    return std::move(resp.body);
  }

  ConnectionOptions o_;
  objstore::CurlEasyPtr easy_;
  tcli::TSessionHandle session_;
  bool session_open_ = false;
  bool closed_ = false;
  ProtocolStats stats_;
};

ProtocolClient::ProtocolClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ProtocolClient::~ProtocolClient() {
  if (impl_ && impl_->session_open_) (void)Close();
}

const ProtocolStats& ProtocolClient::stats() const { return impl_->stats_; }
const ConnectionOptions& ProtocolClient::options() const { return impl_->o_; }

Result<std::unique_ptr<ProtocolClient>> ProtocolClient::Connect(ConnectionOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  QUIVER_RETURN_NOT_OK(impl->Init());
  tcli::TOpenSessionReq req;
  req.client_protocol = tcli::TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10;
  req.__set_client_protocol_i64(static_cast<int64_t>(tcli::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8));
  req.__set_canUseMultipleCatalogs(true);
  req.__set_configuration(impl->o_.session_configuration);
  tcli::TOpenSessionResp resp;
  QUIVER_RETURN_NOT_OK(impl->Call(
      "OpenSession", [&](tcli::TCLIServiceClient& c) { c.send_OpenSession(req); },
      [&](tcli::TCLIServiceClient& c) { c.recv_OpenSession(resp); }));
  QUIVER_RETURN_NOT_OK(CheckStatus("OpenSession", resp.status));
  if (!resp.__isset.sessionHandle) return Status::Invalid("OpenSession: the reply has no sessionHandle");
  impl->session_ = resp.sessionHandle;
  impl->session_open_ = true;
  return std::unique_ptr<ProtocolClient>(new ProtocolClient(std::move(impl)));
}

Result<StatementResult> ProtocolClient::Execute(const std::string& sql, int64_t direct_max_rows) {
  Impl& im = *impl_;
  tcli::TExecuteStatementReq req;
  req.sessionHandle = im.session_;
  req.statement = sql;
  req.__set_runAsync(true);
  req.__set_queryTimeout(0);
  req.__set_canReadArrowResult(true);
  req.__set_canDownloadResult(true);
  req.__set_canDecompressLZ4Result(true);
  req.__set_useArrowNativeTypes(true);
  if (direct_max_rows > 0) {
    tcli::TSparkGetDirectResults d;
    d.maxRows = direct_max_rows;
    d.__set_maxBytes(int64_t{10} << 20);
    req.__set_getDirectResults(d);
  }
  tcli::TExecuteStatementResp resp;
  QUIVER_RETURN_NOT_OK(im.Call(
      "ExecuteStatement", [&](tcli::TCLIServiceClient& c) { c.send_ExecuteStatement(req); },
      [&](tcli::TCLIServiceClient& c) { c.recv_ExecuteStatement(resp); }));
  QUIVER_RETURN_NOT_OK(CheckStatus("ExecuteStatement", resp.status));
  if (!resp.__isset.operationHandle) return Status::Invalid("ExecuteStatement: the reply has no operationHandle");
  StatementResult result;
  result.operation = FromThrift(resp.operationHandle);
  // After the handle: direct results, status polling, metadata.
  auto finish = [&]() -> Status {
    const tcli::TOperationHandle th = resp.operationHandle;

    bool finished = false;
    bool have_metadata = false;
    tcli::TGetResultSetMetadataResp meta;
    if (resp.__isset.directResults) {
      const auto& dr = resp.directResults;
      if (dr.__isset.operationStatus) {
        QUIVER_RETURN_NOT_OK(CheckStatus("ExecuteStatement (direct operationStatus)", dr.operationStatus.status));
        if (dr.operationStatus.__isset.operationState &&
            dr.operationStatus.operationState == tcli::TOperationState::FINISHED_STATE) {
          finished = true;
        }
        if (dr.operationStatus.__isset.hasResultSet) result.operation.has_result_set = dr.operationStatus.hasResultSet;
      }
      if (dr.__isset.resultSetMetadata) {
        meta = dr.resultSetMetadata;
        have_metadata = true;
      }
      if (dr.__isset.resultSet) {
        QUIVER_RETURN_NOT_OK(CheckStatus("ExecuteStatement (direct resultSet)", dr.resultSet.status));
        result.first_page = PageFromThrift(dr.resultSet);
      }
      if (dr.__isset.closeOperation) result.closed_by_server = true;
    }

    // Poll until the statement finishes.
    int64_t delay_ms = im.o_.poll_initial_ms;
    while (!finished) {
      if (im.o_.cancel != nullptr && im.o_.cancel->load()) {
        (void)CancelOperation(result.operation);
        return Status::Cancelled("statement cancelled while running");
      }
      tcli::TGetOperationStatusReq sreq;
      sreq.operationHandle = th;
      sreq.__set_getProgressUpdate(false);
      tcli::TGetOperationStatusResp sresp;
      ++im.stats_.status_polls;
      QUIVER_RETURN_NOT_OK(im.Call(
          "GetOperationStatus", [&](tcli::TCLIServiceClient& c) { c.send_GetOperationStatus(sreq); },
          [&](tcli::TCLIServiceClient& c) { c.recv_GetOperationStatus(sresp); }));
      QUIVER_RETURN_NOT_OK(CheckStatus("GetOperationStatus", sresp.status));
      if (sresp.__isset.hasResultSet) result.operation.has_result_set = sresp.hasResultSet;
      const auto state = sresp.__isset.operationState ? sresp.operationState : tcli::TOperationState::UKNOWN_STATE;
      auto server_message = [&]() {
        std::string m = !sresp.displayMessage.empty() ? sresp.displayMessage
                        : !sresp.errorMessage.empty() ? sresp.errorMessage
                                                      : std::string("no message");
        if (!sresp.sqlState.empty()) m += " (sqlState " + sresp.sqlState + ")";
        return m;
      };
      switch (state) {
        case tcli::TOperationState::FINISHED_STATE: finished = true; break;
        case tcli::TOperationState::INITIALIZED_STATE:
        case tcli::TOperationState::RUNNING_STATE:
        case tcli::TOperationState::PENDING_STATE:
          std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
          delay_ms = std::min(delay_ms * 2, im.o_.poll_max_ms);
          break;
        case tcli::TOperationState::CANCELED_STATE:
          return Status::Cancelled("the statement was canceled on the server: " + server_message());
        case tcli::TOperationState::TIMEDOUT_STATE:
          return Status::Timeout("the statement timed out on the server: " + server_message());
        case tcli::TOperationState::ERROR_STATE: return Status::IOError("the statement failed: " + server_message());
        default:
          return Status::Invalid("GetOperationStatus: unexpected operation state " +
                                 std::to_string(static_cast<int>(state)) + ": " + server_message());
      }
    }
    if (!result.operation.has_result_set) return Status::OK();

    // STILL_EXECUTING metadata (a server behind a balancer that has not yet
    // seen the statement end) is asked again, with the poll's backoff.
    delay_ms = im.o_.poll_initial_ms;
    while (!have_metadata || meta.status.statusCode == tcli::TStatusCode::STILL_EXECUTING_STATUS) {
      if (have_metadata) {
        if (im.o_.cancel != nullptr && im.o_.cancel->load()) {
          (void)CancelOperation(result.operation);
          return Status::Cancelled("statement cancelled while running");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        delay_ms = std::min(delay_ms * 2, im.o_.poll_max_ms);
      }
      tcli::TGetResultSetMetadataReq mreq;
      mreq.operationHandle = th;
      meta = tcli::TGetResultSetMetadataResp();
      QUIVER_RETURN_NOT_OK(im.Call(
          "GetResultSetMetadata", [&](tcli::TCLIServiceClient& c) { c.send_GetResultSetMetadata(mreq); },
          [&](tcli::TCLIServiceClient& c) { c.recv_GetResultSetMetadata(meta); }));
      have_metadata = true;
    }
    QUIVER_RETURN_NOT_OK(CheckStatus("GetResultSetMetadata", meta.status));
    ResultSetInfo& info = result.info;
    info.result_format = meta.__isset.resultFormat ? static_cast<int32_t>(meta.resultFormat) : -1;
    info.lz4_compressed = meta.__isset.lz4Compressed && meta.lz4Compressed;
    if (meta.__isset.arrowSchema) info.arrow_schema_message = meta.arrowSchema;
    if (meta.__isset.uncompressedBytes) info.uncompressed_bytes = meta.uncompressedBytes;
    if (meta.__isset.compressedBytes) info.compressed_bytes = meta.compressedBytes;
    if (meta.__isset.schema) {
      for (const auto& c : meta.schema.columns) info.column_names.push_back(c.columnName);
    }
    if (info.result_format != static_cast<int32_t>(tcli::TSparkRowSetType::URL_BASED_SET) &&
        info.result_format != static_cast<int32_t>(tcli::TSparkRowSetType::ARROW_BASED_SET)) {
      return Status::NotImplemented("result format " + std::to_string(info.result_format) +
                                    " (only Arrow inline and CloudFetch URL results are read)");
    }
    return Status::OK();
  };
  Status st = finish();
  if (!st.ok()) {
    // The server keeps a failed, cancelled or unread operation (and its
    // chunks) until it is closed: close it now, best effort.
    if (!result.closed_by_server) (void)CloseOperation(result.operation);
    return st;
  }
  return result;
}

Result<FetchPage> ProtocolClient::Fetch(const OperationHandle& op, bool first, int64_t start_row_offset,
                                        int64_t max_rows, const std::atomic<bool>* abort) {
  tcli::TFetchResultsReq req;
  req.operationHandle = ToThrift(op);
  req.orientation = first ? tcli::TFetchOrientation::FETCH_FIRST : tcli::TFetchOrientation::FETCH_NEXT;
  req.maxRows = max_rows;
  req.__set_maxBytes(int64_t{1} << 30);
  if (start_row_offset >= 0) req.__set_startRowOffset(start_row_offset);
  tcli::TFetchResultsResp resp;
  ++impl_->stats_.fetch_results_calls;
  QUIVER_RETURN_NOT_OK(impl_->Call(
      "FetchResults", [&](tcli::TCLIServiceClient& c) { c.send_FetchResults(req); },
      [&](tcli::TCLIServiceClient& c) { c.recv_FetchResults(resp); }, abort));
  QUIVER_RETURN_NOT_OK(CheckStatus("FetchResults", resp.status));
  return PageFromThrift(resp);
}

Status ProtocolClient::CancelOperation(const OperationHandle& op) {
  tcli::TCancelOperationReq req;
  req.operationHandle = ToThrift(op);
  tcli::TCancelOperationResp resp;
  QUIVER_RETURN_NOT_OK(impl_->Call(
      "CancelOperation", [&](tcli::TCLIServiceClient& c) { c.send_CancelOperation(req); },
      [&](tcli::TCLIServiceClient& c) { c.recv_CancelOperation(resp); }));
  return CheckStatus("CancelOperation", resp.status);
}

Status ProtocolClient::CloseOperation(const OperationHandle& op) {
  tcli::TCloseOperationReq req;
  req.operationHandle = ToThrift(op);
  tcli::TCloseOperationResp resp;
  QUIVER_RETURN_NOT_OK(impl_->Call(
      "CloseOperation", [&](tcli::TCLIServiceClient& c) { c.send_CloseOperation(req); },
      [&](tcli::TCLIServiceClient& c) { c.recv_CloseOperation(resp); }));
  return CheckStatus("CloseOperation", resp.status);
}

Status ProtocolClient::Close() {
  if (!impl_->session_open_) return Status::OK();
  impl_->session_open_ = false;
  tcli::TCloseSessionReq req;
  req.sessionHandle = impl_->session_;
  tcli::TCloseSessionResp resp;
  Status st = impl_->Call(
      "CloseSession", [&](tcli::TCLIServiceClient& c) { c.send_CloseSession(req); },
      [&](tcli::TCLIServiceClient& c) { c.recv_CloseSession(resp); });
  impl_->closed_ = true;
  QUIVER_RETURN_NOT_OK(st);
  return CheckStatus("CloseSession", resp.status);
}

}  // namespace quiver::fetch
