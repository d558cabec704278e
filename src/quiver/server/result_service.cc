// quiver/server/result_service.cc — the TCLIService handler: each Thrift
// RPC mapped onto the parts of the service (result_service.h):
//   operation_registry.h  sessions, operations, handles, caps, expiry, cancel
//   statement_runner.h    an operation's producer thread, chunks, publishing
//   result_pages.h        status, metadata and pages the client reads
//   shared_state.h        the documents in a shared object store
//   hive_types.h          Arrow types as Hive types; TIME as text
//   thrift_messages.h     TStatus replies, SQLSTATEs, Thrift bytes
// With the fuzz target and the tests, the server's files that include the
// generated Thrift service code.
#include "quiver/server/result_service.h"

#include <thrift/TConfiguration.h>
#include <thrift/TOutput.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/catalog_results.h"
#include "quiver/server/failover.h"
#include "quiver/server/hive_types.h"
#include "quiver/server/operation.h"
#include "quiver/server/operation_registry.h"
#include "quiver/server/planning_gate.h"
#include "quiver/server/result_pages.h"
#include "quiver/server/shared_state.h"
#include "quiver/server/statement_runner.h"
#include "quiver/server/thrift_messages.h"

namespace quiver::server {
using apache::thrift::transport::TMemoryBuffer;
using fetch::NowEpochMs;

namespace {

// One reservation on a pool for bytes held elsewhere (Thrift buffers).
class ScopedReservation {
 public:
  ScopedReservation(MemoryPool* pool, int64_t bytes) : pool_(pool) {
    if (pool_->Reserve(bytes).ok()) bytes_ = bytes;
  }
  ~ScopedReservation() {
    if (bytes_ > 0) pool_->Unreserve(bytes_);
  }
  bool ok() const { return bytes_ >= 0; }
  ScopedReservation(const ScopedReservation&) = delete;
  ScopedReservation& operator=(const ScopedReservation&) = delete;

 private:
  MemoryPool* pool_;
  int64_t bytes_ = -1;
};

// The client of the RPC being dispatched on this thread (Dispatch sets it
// for the handler calls the Thrift processor makes).
thread_local std::string_view tls_client;
// The Thrift sequence id of that RPC's message header (0 when the client
// sends none: C++ and Python Thrift clients always send 0).
thread_local int32_t tls_seqid = 0;

t::TStatus InvalidOperationHandle() {
  return ErrorStatus("invalid operation handle", t::TStatusCode::INVALID_HANDLE_STATUS);
}

}  // namespace

// ---------------------------------------------------------------------------

class ResultService::Impl : public t::TCLIServiceIf {
 public:
  Impl(ResultServiceOptions o, std::unique_ptr<PlanningGate> gate)
      : o_(o),
        exec_pool_(o.pool->MakeChild({.name = "exec"})),
        chunk_pool_(o.pool->MakeChild({.name = "chunks"})),
        thrift_pool_(o.pool->MakeChild({.name = "thrift"})),
        shared_(o.store->shared()),
        gate_(std::move(gate)),
        registry_(o_,
                  o.cluster_secret.empty() ? RandomHandleBytes(false) + RandomHandleBytes(false) : o.cluster_secret),
        store_docs_(o.store, o_),
        runner_(o_, chunk_pool_.get(), exec_pool_.get(), shared_ ? &store_docs_ : nullptr),
        pages_(o_, exec_pool_.get()),
        failover_(&store_docs_, o_, [this](const std::shared_ptr<Operation>& op, StatementSession session) {
          return Relaunch(op, std::move(session));
        }) {
    config_ = std::make_shared<apache::thrift::TConfiguration>(
        static_cast<int>(std::min<int64_t>(o.max_message_bytes, INT32_MAX)),
        static_cast<int>(std::min<int64_t>(o.max_message_bytes, INT32_MAX)), 64);
  }

  ~Impl() override {
    for (auto& op : registry_.TakeAll()) runner_.Finish(op);
  }

  Result<std::string> Dispatch(std::span<const uint8_t> request, std::string_view client) {
    struct ClientScope {
      ClientScope(std::string_view c, int32_t seqid) {
        tls_client = c;
        tls_seqid = seqid;
      }
      ~ClientScope() {
        tls_client = {};
        tls_seqid = 0;
      }
    } client_scope(client, ThriftSeqId(request));
    ++rpcs_;
    if (static_cast<int64_t>(request.size()) > o_.max_message_bytes) {
      ++rpc_errors_;
      return Status::Invalid("thrift: message of " + std::to_string(request.size()) + " bytes exceeds the limit " +
                             std::to_string(o_.max_message_bytes));
    }
    ScopedReservation in_bytes(thrift_pool_.get(), static_cast<int64_t>(request.size()));
    if (!in_bytes.ok())
      return Status::OutOfMemory("thrift: no memory for a request of " + std::to_string(request.size()) + " bytes");
    try {
      auto in = std::make_shared<TMemoryBuffer>(const_cast<uint8_t*>(request.data()),
                                                static_cast<uint32_t>(request.size()), TMemoryBuffer::OBSERVE, config_);
      auto out = std::make_shared<TMemoryBuffer>();
      const int32_t limit = static_cast<int32_t>(std::min<int64_t>(o_.max_message_bytes, INT32_MAX));
      auto iprot =
          std::make_shared<apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer>>(in, limit, limit, true, true);
      auto oprot = std::make_shared<apache::thrift::protocol::TBinaryProtocolT<TMemoryBuffer>>(out);
      processor_->process(iprot, oprot, nullptr);
      std::string reply = out->getBufferAsString();
      if (reply.empty()) {
        ++rpc_errors_;
        return Status::Invalid("thrift: the message was not a call (no reply)");
      }
      return reply;
    } catch (const std::exception& e) {
      ++rpc_errors_;
      return Status::Invalid(std::string("thrift: malformed message: ") + e.what());
    }
  }

  void SetProcessor(std::shared_ptr<t::TCLIServiceIf> self) {
    processor_ = std::make_shared<t::TCLIServiceProcessor>(std::move(self));
  }

  // ---- sessions ----
  void OpenSession(t::TOpenSessionResp& r, const t::TOpenSessionReq& req) override {
    r.serverProtocolVersion = t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8;
    if (req.__isset.client_protocol_i64 &&
        req.client_protocol_i64 >= t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V1 &&
        req.client_protocol_i64 < t::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8) {
      r.serverProtocolVersion = static_cast<t::TProtocolVersion::type>(req.client_protocol_i64);
    }
    sql::SqlDialect dialect = o_.default_dialect;
    if (req.__isset.configuration) {
      for (const auto& [key, value] : req.configuration) {
        if (key != "dialect" && key != "quiver.dialect") continue;  // others are accepted and ignored
        auto parsed = sql::ParseSqlDialect(value);
        if (!parsed.ok()) {
          r.status = ErrorStatus("OpenSession: configuration " + key + ": " + parsed.status().message(),
                                 t::TStatusCode::ERROR_STATUS, "22023");
          return;
        }
        dialect = *parsed;
      }
    }
    auto s = std::make_shared<Session>();
    s->guid = TimedHandleBytes(NowEpochMs());
    SetSessionDialect(&s->guid, dialect);
    s->dialect = dialect;
    s->client = std::string(tls_client);
    s->secret = registry_.HandleSecret("session", s->guid, s->client);
    s->last_used_ms = NowEpochMs();
    r.status = registry_.AddSession(s);
    if (r.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return;
    t::TSessionHandle h;
    h.sessionId.guid = s->guid;
    h.sessionId.secret = s->secret;
    r.__set_sessionHandle(h);
    r.__set_canUseMultipleCatalogs(true);
    r.__set_configuration({{"dialect", sql::SqlDialectName(dialect)}});
  }

  void CloseSession(t::TCloseSessionResp& r, const t::TCloseSessionReq& req) override {
    std::vector<std::shared_ptr<Operation>> ops;
    const auto& id = req.sessionHandle.sessionId;
    if ((shared_ && !WithinLifetime(id.guid)) || !registry_.CloseSession(id, tls_client, shared_, &ops)) {
      r.status =
          ErrorStatus("invalid session handle (unknown, closed or expired)", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    // Shared store: the marker first: from now on no server starts an
    // operation in the session (Start checks it after indexing its
    // operation, so an operation either is refused or is in the listing
    // CloseSessionOperations reads).
    const Status marked = shared_ ? store_docs_.MarkSessionClosed(id.guid) : Status::OK();
    for (auto& op : ops) runner_.Finish(op, /*remove_documents=*/true);
    if (shared_) store_docs_.CloseSessionOperations(id.guid);
    r.status = marked.ok()
                   ? OkStatus()
                   : ErrorStatus("CloseSession: the session could not be marked closed for the other servers: " +
                                 marked.ToString());
  }

  void GetInfo(t::TGetInfoResp& r, const t::TGetInfoReq& req) override {
    if (!FindSession(req.sessionHandle)) {
      r.status = ErrorStatus("invalid session handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      r.infoValue.__set_stringValue("");
      return;
    }
    r.status = OkStatus();
    if (!FillInfoValue(WireEnum(req.infoType), o_.max_operations, &r.infoValue)) {
      r.status = ErrorStatus("GetInfo: info type " + std::to_string(WireEnum(req.infoType)) + " is not supported");
      r.infoValue.__set_stringValue("");
    }
  }

  // ---- statements and metadata operations ----
  void ExecuteStatement(t::TExecuteStatementResp& r, const t::TExecuteStatementReq& req) override {
    auto session = FindSession(req.sessionHandle);
    if (!session) {
      r.status = ErrorStatus("invalid session handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    ++statements_;
    // The text is checked before anything parses or plans it.
    const std::string& sql = req.statement;
    if (static_cast<int64_t>(sql.size()) > o_.max_statement_bytes) {
      r.status = ErrorStatus("statement text is " + std::to_string(sql.size()) + " bytes; the server accepts at most " +
                                 std::to_string(o_.max_statement_bytes) + " (max_statement_bytes)",
                             t::TStatusCode::ERROR_STATUS, "54000");
      return;
    }
    if (const size_t nul = sql.find('\0'); nul != std::string::npos) {
      r.status = ErrorStatus("statement text has a NUL byte at offset " + std::to_string(nul),
                             t::TStatusCode::ERROR_STATUS, "42601");
      return;
    }
    // Refused at the operation caps before it is planned (Start checks again).
    r.status = registry_.CheckOperationCaps(*session);
    if (r.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return;
    // Planned on its operation's thread once the planning gate admits it
    // (statement_runner.h), never on this RPC worker; 53400 past the queue.
    auto op = std::make_shared<Operation>();
    StatementSession in_session;
    in_session.dialect = session->dialect.load();
    if (!shared_) {
      // Local sessions keep a SET dialect; shared-store ones are fixed at
      // OpenSession (every server reads the dialect from the guid).
      in_session.set_dialect = [weak = std::weak_ptr<Session>(session)](sql::SqlDialect d) {
        if (auto s = weak.lock()) s->dialect = d;
      };
    }
    if (shared_) {
      // What another server needs to run it again if this one dies.
      op->statement = req.statement;
      op->dialect = in_session.dialect;
    }
    auto ticket = gate_->Enter(session->client);
    if (!ticket.ok()) {
      r.status = ErrorStatus(ticket.status().message(), t::TStatusCode::ERROR_STATUS, SqlStateFor(ticket.status()));
      return;
    }
    op->plan_ticket = std::move(ticket).value();
    runner_.SetPlan(op.get(), req.statement, std::move(in_session));
    const bool can_download = req.__isset.canDownloadResult && req.canDownloadResult;
    const bool client_lz4 = req.__isset.canDecompressLZ4Result && req.canDecompressLZ4Result;
    Start(r, op, session, t::TOperationType::EXECUTE_STATEMENT, nullptr, can_download, client_lz4,
          req.__isset.getDirectResults ? &req.getDirectResults : nullptr);
  }

  template <typename Resp, typename Req>
  void MetadataOp(Resp& r, const Req& req, t::TOperationType::type type) {
    auto session = FindSession(req.sessionHandle);
    if (!session) {
      r.status = ErrorStatus("invalid session handle", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    auto stream = MetadataResult(req, *o_.executor, exec_pool_.get());
    if (!stream.ok()) {
      r.status = ErrorStatus(stream.status().ToString(), t::TStatusCode::ERROR_STATUS, SqlStateFor(stream.status()));
      return;
    }
    auto op = std::make_shared<Operation>();
    t::TExecuteStatementResp er;
    Start(er, op, session, type, std::move(stream).value(), false, false,
          req.__isset.getDirectResults ? &req.getDirectResults : nullptr);
    r.status = er.status;
    if (er.__isset.operationHandle) r.__set_operationHandle(er.operationHandle);
    if (er.__isset.directResults) r.__set_directResults(er.directResults);
  }

  void GetTypeInfo(t::TGetTypeInfoResp& r, const t::TGetTypeInfoReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_TYPE_INFO);
  }
  void GetCatalogs(t::TGetCatalogsResp& r, const t::TGetCatalogsReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_CATALOGS);
  }
  void GetSchemas(t::TGetSchemasResp& r, const t::TGetSchemasReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_SCHEMAS);
  }
  void GetTables(t::TGetTablesResp& r, const t::TGetTablesReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_TABLES);
  }
  void GetColumns(t::TGetColumnsResp& r, const t::TGetColumnsReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_COLUMNS);
  }
  void GetFunctions(t::TGetFunctionsResp& r, const t::TGetFunctionsReq& req) override {
    MetadataOp(r, req, t::TOperationType::GET_FUNCTIONS);
  }

  // ---- operation RPCs ----
  void GetOperationStatus(t::TGetOperationStatusResp& r, const t::TGetOperationStatusReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status =
          ErrorStatus("invalid operation handle (unknown, closed or expired)", t::TStatusCode::INVALID_HANDLE_STATUS);
      return;
    }
    r.status = OkStatus();
    pages_.FillStatus(op.get(), &r);
  }

  void CancelOperation(t::TCancelOperationResp& r, const t::TCancelOperationReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status = InvalidOperationHandle();
      return;
    }
    if (op->remote) {
      // Another server runs it: leave a marker its owner polls.
      {
        std::lock_guard<std::mutex> lock(op->mu);
        if (op->done || op->failed || op->cancelled) {
          r.status = OkStatus();
          return;
        }
      }
      const Status st = store_docs_.RequestCancel(op->guid);
      r.status = st.ok() ? OkStatus() : ErrorStatus("CancelOperation: " + st.ToString());
      return;
    }
    OperationRegistry::Cancel(op.get());
    r.status = OkStatus();
  }

  void CloseOperation(t::TCloseOperationResp& r, const t::TCloseOperationReq& req) override {
    const auto& id = req.operationHandle.operationId;
    if (auto op = registry_.TakeOperation(id, tls_client)) {
      runner_.Finish(op, /*remove_documents=*/true);
      r.status = OkStatus();
      return;
    }
    if (!shared_ || !registry_.ValidHandle("operation", id, tls_client)) {
      r.status = InvalidOperationHandle();
      return;
    }
    // Another server's operation (or one published and reaped here).
    const Status st = store_docs_.Close(Hex(id.guid));
    r.status = st.ok()           ? OkStatus()
               : st.IsKeyError() ? ErrorStatus("invalid operation handle (unknown, closed or expired)",
                                               t::TStatusCode::INVALID_HANDLE_STATUS)
                                 : ErrorStatus("CloseOperation: " + st.ToString());
  }

  void GetResultSetMetadata(t::TGetResultSetMetadataResp& r, const t::TGetResultSetMetadataReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status = InvalidOperationHandle();
      return;
    }
    pages_.FillMetadata(op.get(), &r);
  }

  void FetchResults(t::TFetchResultsResp& r, const t::TFetchResultsReq& req) override {
    auto op = FindOperation(req.operationHandle);
    if (!op) {
      r.status = InvalidOperationHandle();
      return;
    }
    const int32_t orientation = WireEnum(req.orientation);
    if (orientation != t::TFetchOrientation::FETCH_NEXT && orientation != t::TFetchOrientation::FETCH_FIRST) {
      r.status = ErrorStatus("FetchResults: only FETCH_NEXT and FETCH_FIRST are supported, got orientation " +
                             std::to_string(orientation));
      return;
    }
    if (req.__isset.fetchType && req.fetchType != 0) {
      r.status = ErrorStatus("FetchResults: fetchType " + std::to_string(req.fetchType) + " (logs) is not supported");
      return;
    }
    const bool first = orientation == t::TFetchOrientation::FETCH_FIRST;
    const int64_t start_row = req.__isset.startRowOffset ? req.startRowOffset : -1;
    const bool shared_cursor = shared_ && op->published;
    if (shared_cursor && !first && start_row < 0) {
      // FETCH_NEXT continues from the cursor the last server saved (and a
      // retry of the request that saved it gets that page again).
      if (const Status st = store_docs_.LoadCursor(op.get()); !st.ok()) {
        r.status = ErrorStatus("FetchResults: reading the fetch cursor: " + st.ToString());
        return;
      }
    }
    bool replayed = false;
    pages_.FillPage(op.get(), first, start_row, req.maxRows, &r, tls_seqid, &replayed);
    // Also before `published`: other servers answer FINISHED once the manifest is written.
    if (shared_ && !replayed && r.status.statusCode == t::TStatusCode::SUCCESS_STATUS) {
      const Status st = store_docs_.SaveCursor(op.get());
      if (!st.ok()) r.status = ErrorStatus("FetchResults: saving the fetch cursor: " + st.ToString());
    }
    if (req.__isset.includeResultSetMetadata && req.includeResultSetMetadata) {
      t::TGetResultSetMetadataResp m;
      pages_.FillMetadata(op.get(), &m);
      r.__set_resultSetMetadata(m);
    }
  }

  // ---- housekeeping ----
  int64_t ExpireIdle(int64_t now_ms) {
    if (shared_) SharedSweep(now_ms);
    int64_t n = 0;
    auto ops = registry_.Expire(now_ms, &n);
    n += static_cast<int64_t>(ops.size());
    for (auto& op : ops) runner_.Finish(op);
    return n;
  }

  ResultServiceStats Stats() {
    ResultServiceStats s;
    registry_.FillStats(&s);
    s.failover_reruns = failover_.reruns();
    s.failover_exhausted = failover_.exhausted();
    s.rpcs = rpcs_;
    s.rpc_errors = rpc_errors_;
    s.statements = statements_;
    s.finished_operations = runner_.finished_operations();
    s.producer_pauses = runner_.producer_pauses();
    s.chunks_written = runner_.chunks_written();
    s.chunk_ipc_bytes = runner_.chunk_ipc_bytes();
    s.chunk_served_bytes = runner_.chunk_served_bytes();
    const PlanningGateStats g = gate_->stats();
    s.planning = g.planning;
    s.queued_plans = g.queued;
    s.refused_plans = g.refused;
    s.waiting_rpcs = pages_.waiting_rpcs();
    s.waits_declined = pages_.waits_declined();
    return s;
  }

  ResultServiceOptions o_;
  std::shared_ptr<MemoryPool> exec_pool_, chunk_pool_, thrift_pool_;

 private:
  // The session of a handle, or nullptr (unknown, wrong secret, closed on
  // any server). Shared store: a valid handle of a session another server
  // opened is adopted here.
  template <typename Handle>
  std::shared_ptr<Session> FindSession(const Handle& h) {
    if (shared_ && !WithinLifetime(h.sessionId.guid)) {
      registry_.ForgetSession(h.sessionId.guid);
      return nullptr;
    }
    if (shared_ && registry_.ValidHandle("session", h.sessionId, tls_client) &&
        store_docs_.SessionClosed(h.sessionId.guid)) {
      // Closed on another server: forget it here too.
      registry_.ForgetSession(h.sessionId.guid);
      return nullptr;
    }
    return registry_.FindSession(h.sessionId, tls_client, shared_);
  }

  // Shared store: whether a session guid was issued (TimedHandleBytes) at
  // most session_max_lifetime_ms ago, and not more than a minute ahead of
  // this server's clock.
  bool WithinLifetime(const std::string& guid) const {
    const std::optional<int64_t> issued = HandleIssuedMs(guid);
    const int64_t now = NowEpochMs();
    return issued && *issued <= now + 60 * 1000 && now - *issued <= o_.session_max_lifetime_ms;
  }

  // The operation of a handle: this server's, or (shared store) as its
  // manifest in the store says; nullptr when there is none.
  std::shared_ptr<Operation> FindOperation(const t::TOperationHandle& h) {
    std::shared_ptr<Operation> op;
    switch (registry_.FindOperation(h.operationId, tls_client, &op)) {
      case OperationRegistry::Lookup::kFound: return op;
      case OperationRegistry::Lookup::kClosed: return nullptr;
      case OperationRegistry::Lookup::kNotHere: break;
    }
    if (!shared_ || !registry_.ValidHandle("operation", h.operationId, tls_client)) return nullptr;
    op = store_docs_.Load(h.operationId.guid);
    if (op) {
      op->secret = h.operationId.secret;
      op->client = std::string(tls_client);
      if (op->owner_stale) op = failover_.Handle(std::move(op));
    }
    return op;
  }

  // Registers a new operation over `stream` and starts its producer; the
  // reply carries its handle (and direct results when asked).
  void Start(t::TExecuteStatementResp& r, const std::shared_ptr<Operation>& op, const std::shared_ptr<Session>& session,
             t::TOperationType::type type, std::unique_ptr<RecordBatchStream> stream, bool can_download,
             bool client_lz4, const t::TSparkGetDirectResults* direct) {
    op->guid = RandomHandleBytes(true);
    op->session_guid = session->guid;
    op->client = session->client;
    op->secret = registry_.HandleSecret("operation", op->guid, op->client);
    op->type = type;
    op->exec_seqid = tls_seqid;
    op->can_download = can_download;
    op->client_lz4 = client_lz4;
    r.status = Launch(op, *session, std::move(stream));
    if (r.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return;
    if (op->plan_ticket && op->plan_ticket->admitted() && pages_.WaitPlanned(op.get())) {
      // Admitted at once and failed within the short wait: the error is this
      // reply's (a later one is the operation's ERROR state).
      if (auto taken = registry_.TakeOperation(op->guid)) runner_.Finish(taken, /*remove_documents=*/true);
      std::lock_guard<std::mutex> lock(op->mu);
      r.status = ErrorStatus(op->error, t::TStatusCode::ERROR_STATUS, op->sql_state);
      return;
    }
    t::TOperationHandle h;
    h.operationId.guid = op->guid;
    h.operationId.secret = op->secret;
    h.operationType = type;
    h.hasResultSet = true;
    r.__set_operationHandle(h);
    if (direct && pages_.FillDirect(op.get(), *direct, shared_ ? &store_docs_ : nullptr, &r)) {
      // The whole result is in this reply: the client will not call
      // CloseOperation, so the operation closes now.
      if (auto taken = registry_.TakeOperation(op->guid)) runner_.Finish(taken, /*remove_documents=*/true);
      t::TCloseOperationResp c;
      c.status = OkStatus();
      r.directResults.__set_closeOperation(c);
    }
  }

  // Registers `op` (guid, session, client, type and flags set) over
  // `stream`, announces it to the other servers (shared store) and starts
  // its producer.
  t::TStatus Launch(const std::shared_ptr<Operation>& op, const Session& session,
                    std::unique_ptr<RecordBatchStream> stream) {
    {
      std::lock_guard<std::mutex> lock(op->mu);  // a failover re-run's op is polled meanwhile
      op->chunk_lz4 = op->can_download && o_.lz4;
      op->inline_lz4 = op->client_lz4 && o_.lz4;
      op->started_ms = op->last_used_ms = op->heartbeat_ms = NowEpochMs();
    }
    if (stream) {
      // Planned already (a metadata operation; a failover re-run has none);
      // a statement without a stream is planned by its thread (op->plan).
      auto schema_message = SchemaMessage(stream->schema(), exec_pool_.get());
      if (!schema_message.ok()) return ErrorStatus("result schema: " + schema_message.status().ToString());
      op->schema = stream->schema();
      op->stream = std::move(stream);
      op->arrow_schema = std::move(schema_message).value();
      op->planned = true;
    }
    t::TStatus added = registry_.AddOperation(op, session);
    if (added.statusCode != t::TStatusCode::SUCCESS_STATUS) return added;
    if (shared_) {
      // Visible to the other servers before the handle is handed out.
      bool closed = false;
      const Status st = store_docs_.Announce(op.get(), &closed);
      if (!st.ok() || closed) {
        registry_.RemoveOperation(op->guid, closed ? session.guid : std::string());
        return closed ? ErrorStatus("invalid session handle (closed)", t::TStatusCode::INVALID_HANDLE_STATUS)
                      : ErrorStatus("the statement cannot start: " + st.ToString());
      }
    }
    registry_.SetWorker(op.get(), std::thread([this, op] { runner_.Run(op.get()); }));
    return OkStatus();
  }

  // Failover: a statement whose server died, started here again under its
  // handle, in its session (adopted here: the session secret is derived),
  // planned through the gate like any statement.
  t::TStatus Relaunch(const std::shared_ptr<Operation>& op, StatementSession in_session) {
    t::THandleIdentifier sid;
    sid.guid = op->session_guid;
    sid.secret = registry_.HandleSecret("session", sid.guid, op->client);
    auto session = registry_.FindSession(sid, op->client, /*adopt=*/true);
    if (!session) return ErrorStatus("its session is gone", t::TStatusCode::INVALID_HANDLE_STATUS);
    auto ticket = gate_->Enter(session->client);
    if (!ticket.ok())
      return ErrorStatus(ticket.status().message(), t::TStatusCode::ERROR_STATUS, SqlStateFor(ticket.status()));
    op->plan_ticket = std::move(ticket).value();
    runner_.SetPlan(op.get(), op->statement, std::move(in_session));
    return Launch(op, *session, nullptr);
  }

  // Shared store, every sweep: refreshes the status documents of the
  // statements running here, polls their cancel markers, hands the
  // published ones over to the store (joins their finished threads), and
  // every 5 s removes what has expired in the store.
  void SharedSweep(int64_t now_ms) {
    std::vector<std::shared_ptr<Operation>> running, reap;
    registry_.SharedSweepLists(now_ms, &running, &reap);
    for (auto& op : reap) runner_.Finish(op);
    for (auto& op : running) store_docs_.Heartbeat(op.get());
    if (now_ms - last_expiry_sweep_ms_ >= 5000) {
      last_expiry_sweep_ms_ = now_ms;
      registry_.CountExpiredOperations(store_docs_.ExpireDocuments(now_ms));
    }
  }

  bool shared_ = false;
  std::unique_ptr<PlanningGate> gate_;  // before the operations: their tickets go first
  OperationRegistry registry_;
  SharedState store_docs_;
  StatementRunner runner_;
  ResultPages pages_;
  Failover failover_;
  std::shared_ptr<apache::thrift::TConfiguration> config_;
  std::shared_ptr<t::TCLIServiceProcessor> processor_;
  int64_t last_expiry_sweep_ms_ = 0;
  std::atomic<int64_t> rpcs_{0}, rpc_errors_{0}, statements_{0};
};

namespace {
// The processor holds a shared_ptr to its handler; the service owns the
// handler, so the processor gets a non-owning alias.
struct NoDelete {
  void operator()(t::TCLIServiceIf*) const {}
};
}  // namespace

Result<std::unique_ptr<ResultService>> ResultService::Make(ResultServiceOptions options) {
  if (!options.pool || !options.executor || !options.store) {
    return Status::Invalid("result service: pool, executor and store are required");
  }
  if (options.chunk_bytes < 1 || options.max_links_per_fetch < 1 || options.max_sessions < 1 ||
      options.max_operations < 1 || options.max_message_bytes < 1024 || options.link_expiry_ms < 1 ||
      options.fetch_wait_ms < 0 || options.max_statement_bytes < 1 || options.statement_timeout_ms < 0 ||
      options.max_unfetched_chunks == 1 || options.max_unfetched_chunks < 0 || options.max_operations_per_session < 1 ||
      options.max_sessions_per_token < 1 || options.max_operations_per_token < 1 || options.max_result_bytes < 0 ||
      options.owner_stale_ms < 1 || options.max_reruns < 0 || options.max_waiting_rpcs < 0 ||
      options.max_planning < 0 || options.max_queued_plans < 1) {
    return Status::Invalid(
        "result service: chunk_bytes, max_links_per_fetch, max_sessions, max_operations, max_operations_per_session, "
        "max_sessions_per_token, max_operations_per_token, max_statement_bytes, max_queued_plans, "
        "link_expiry_ms and owner_stale_ms must be >= 1, max_message_bytes >= 1024, fetch_wait_ms, "
        "statement_timeout_ms, max_result_bytes, max_reruns, max_waiting_rpcs and max_planning >= 0, "
        "max_unfetched_chunks 0 (none) or >= 2");
  }
  // Thrift's processor reports malformed messages on stderr; the service
  // answers them (Invalid -> HTTP 400) and counts them in rpc_errors instead.
  apache::thrift::GlobalOutput.setOutputFunction([](const char*) {});
  QUIVER_ASSIGN_OR_RETURN(auto gate, PlanningGate::Make(PlanningGateOptionsFor(options)));
  auto impl = std::make_unique<Impl>(options, std::move(gate));
  impl->SetProcessor(std::shared_ptr<t::TCLIServiceIf>(impl.get(), NoDelete{}));
  return std::unique_ptr<ResultService>(new ResultService(std::move(impl)));
}

Result<std::string> ReadClusterSecret(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cluster secret file '" + path + "' cannot be read");
  std::string secret((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < 16) {
    return Status::Invalid("cluster secret file '" + path + "' holds " + std::to_string(secret.size()) +
                           " bytes; at least 16 are required");
  }
  return secret;
}

ResultService::ResultService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultService::~ResultService() = default;

Result<std::string> ResultService::Dispatch(std::span<const uint8_t> request, std::string_view client) {
  return impl_->Dispatch(request, client);
}
int64_t ResultService::ExpireIdle(int64_t now_ms) { return impl_->ExpireIdle(now_ms); }
ResultServiceStats ResultService::stats() const { return impl_->Stats(); }
MemoryPool* ResultService::exec_pool() const { return impl_->exec_pool_.get(); }
MemoryPool* ResultService::chunk_pool() const { return impl_->chunk_pool_.get(); }
MemoryPool* ResultService::thrift_pool() const { return impl_->thrift_pool_.get(); }

}  // namespace quiver::server
