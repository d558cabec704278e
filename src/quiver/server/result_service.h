// quiver/server/result_service.h — the TCLIService (Databricks SQL
// protocol, HiveServer2 Thrift) behind quiver's result server: sessions,
// operations, results cut into CloudFetch chunks, inline Arrow batches and
// signed links (../shared/docs/fetch-protocol.md).
//
// Transport-free: Dispatch() takes one Thrift binary message (the body of a
// POST to the warehouse path) and returns the reply message; the HTTPS server
// (http_server.h) feeds it. The generated Thrift code stays inside the
// server's sources and internal headers: result_service.cc maps each RPC
// onto the operation registry (operation_registry.h), the statement runner
// (statement_runner.h), the result pages (result_pages.h) and, with a
// shared store, the documents in it (shared_state.h).
//
// Operations run on a thread each: a statement waits there for the planning
// gate (planning_gate.h) and is planned there, never on the RPC worker that
// received ExecuteStatement (PENDING meanwhile); then its batches go through a
// ChunkWriter into the ChunkStore while the client polls; the operation is
// FINISHED (results fetchable) as soon as the result format is decided (the
// first chunks exist), so the first links are handed out before the last
// batch exists. CloseOperation, CloseSession, idle expiry and the service's
// destruction cancel and join the operation and remove its chunks.
//
// Memory: pools "exec" (statement results), "chunks" (chunk bytes in
// memory) and "thrift" (request and reply bytes) are children of
// options.pool. Thread safety: Dispatch and ExpireIdle may be called from any
// number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "quiver/base/result.h"
#include "quiver/fetch/chunk_store.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/server/statement_executor.h"

namespace quiver::server {

struct ResultServiceOptions {
  /// Parent of the service's pools. Required.
  MemoryPool* pool = nullptr;
  /// Runs statements; not owned, outlives the service. Required.
  StatementExecutor* executor = nullptr;
  /// Holds chunks and makes their links; not owned, outlives the service. Required.
  fetch::ChunkStore* store = nullptr;
  /// Target uncompressed IPC bytes per chunk.
  int64_t chunk_bytes = int64_t{20} << 20;
  /// Serve CloudFetch chunks as LZ4 frames (and inline batches too, when the
  /// client sent canDecompressLZ4Result).
  bool lz4 = true;
  /// Results whose whole IPC size is at most this go inline (arrowBatches);
  /// larger ones as links when the client can download (canDownloadResult).
  int64_t inline_threshold_bytes = int64_t{1} << 20;
  /// Lifetime of a link (TSparkArrowResultLink.expiryTime = now + this).
  int64_t link_expiry_ms = 15 * 60 * 1000;
  /// Sessions and operations untouched for this long are closed by ExpireIdle.
  int64_t session_idle_timeout_ms = 60 * 60 * 1000;
  int64_t operation_idle_timeout_ms = 30 * 60 * 1000;
  /// Shared store only: a session handle is valid for at most this long
  /// after OpenSession, on every server (its guid carries the time it was
  /// issued, TimedHandleBytes), so that the closed-session marker, kept that
  /// long, covers every handle that could name the session.
  int64_t session_max_lifetime_ms = int64_t{7} * 24 * 3600 * 1000;
  /// Concurrent open sessions / operations; past them a request gets an
  /// ERROR status naming the limit.
  int max_sessions = 64;
  int max_operations = 256;
  /// Open operations of one session at most (fairness: one client leaking
  /// operations in its session cannot take the whole max_operations).
  int max_operations_per_session = 64;
  /// Open sessions / operations of one client (the client id Dispatch is
  /// given: the bearer token the HTTP layer matched) at most, apart from the
  /// global caps, so that one leaking client cannot lock out the others.
  /// Defaults: half the global defaults. >= 1.
  int max_sessions_per_token = 32;
  int max_operations_per_token = 128;
  /// Links per FetchResults reply (a page); >= 1.
  int max_links_per_fetch = 32;
  /// Largest Thrift message accepted; strings and containers inside are
  /// bounded by it too (TConfiguration). Bytes.
  int64_t max_message_bytes = int64_t{16} << 20;
  /// The dialect a session's statements are read in unless OpenSession's
  /// configuration map names one ("dialect" or "quiver.dialect": "spark" or
  /// "postgres", any case; an unknown name fails OpenSession with 22023).
  /// Spark by default, as a Databricks SQL warehouse in ANSI mode
  /// (sql/dialect.h, docs/sql.md "Dialects"). `SET dialect = ...` changes a
  /// session's dialect where sessions live on one server; with a shared
  /// store the dialect is fixed at OpenSession (carried in the session's
  /// guid, SetSessionDialect) and such a SET fails with 0A000.
  sql::SqlDialect default_dialect = sql::SqlDialect::kSpark;
  /// How long FetchResults / GetResultSetMetadata / direct results wait for
  /// the next chunk (or the result format) before replying with what exists
  /// (hasMoreRows stays true; STILL_EXECUTING metadata), and how long
  /// ExecuteStatement waits for the statement to be planned before it
  /// replies with the operation PENDING (a planning error within the wait
  /// is ExecuteStatement's own error). Milliseconds, >= 0. Short, so a
  /// worker is held briefly: clients loop on hasMoreRows.
  int64_t fetch_wait_ms = 100;
  /// RPCs that may wait (fetch_wait_ms) at once; the others reply at once
  /// with what exists, so looping FetchResults on slow statements can never
  /// hold every RPC worker (keep it well below the server's worker
  /// threads). 0 = no RPC waits. Default 16 (a quarter of 64 workers).
  int max_waiting_rpcs = 16;
  /// Statements parsed and planned at once (0 = the machine's hardware
  /// threads, at least 2), at most half of them (at least 1) of one client
  /// (token); the others wait in a queue, admitted round-robin over
  /// clients, on their operation's own thread: ExecuteStatement returns
  /// with the operation PENDING (planning_gate.h). Past max_queued_plans
  /// waiting statements in all, or half of it of one client, a statement
  /// is refused at once with SQLSTATE 53400 naming the limit.
  int max_planning = 0;
  int max_queued_plans = 64;
  /// Longest statement text accepted (bytes, >= 1); a longer one is refused
  /// with SQLSTATE 54000 before it reaches the executor (nothing is parsed
  /// or planned). A statement containing a NUL byte is refused (42601)
  /// whatever its length.
  int64_t max_statement_bytes = int64_t{1} << 20;
  /// Wall-time limit of a statement, from ExecuteStatement to its last
  /// chunk, less the time its producer spent paused waiting for the client
  /// to fetch (max_unfetched_chunks) (ms); 0 = none. Past it the statement
  /// is cancelled by the next ExpireIdle and fails with SQLSTATE 57014
  /// naming the limit. Default 1 hour.
  int64_t statement_timeout_ms = 60 * 60 * 1000;
  /// An operation whose producer is paused waiting for its client
  /// (max_unfetched_chunks) and whose client has not called for it for this
  /// long (ms) is taken to be orphaned: ExpireIdle cancels and frees it (its
  /// chunks go), as an idle operation. 0 = never. Default 2 minutes.
  int64_t orphan_timeout_ms = 120 * 1000;
  /// Backpressure: an operation's producer pauses while this many of its
  /// chunks have been produced and not yet handed to the client by
  /// FetchResults (links or inline batches), and resumes as they are; so an
  /// unfetched result holds at most this many chunks (of chunk_bytes) in the
  /// store. 0 = no bound; otherwise >= 2 (the result format is decided from
  /// the first two chunks).
  int max_unfetched_chunks = 8;
  /// Secret shared by the servers of one deployment (raw bytes, >= 16, or
  /// empty = a random secret drawn at start). Session and operation handle
  /// secrets are HMAC-SHA256(secret, kind || guid), so handles validate
  /// themselves. With a shared store (ChunkStore::shared(), an S3 store)
  /// the service is stateless apart from the store: a finished operation's
  /// manifest (schema, chunk ids, startRowOffset/rowCount/bytesNum per
  /// chunk, expiry) and its fetch cursor are documents in the store, so
  /// any server with the same store and secret answers GetOperationStatus,
  /// GetResultSetMetadata, FetchResults (fresh links) and CloseOperation; a
  /// running operation's status document is refreshed every sweep and
  /// CancelOperation on another server leaves a cancel marker its owner
  /// polls. In that mode an operation reports FINISHED once its whole
  /// result is in the store, and max_unfetched_chunks does not apply (the
  /// store, not the server, holds the unfetched chunks; max_result_bytes
  /// bounds them instead).
  ///
  /// CloseSession on any server leaves a marker document
  /// ("closed-sessions/<id>", removed by the expiry sweep of any server
  /// once the handle is past session_max_lifetime_ms, or
  /// session_idle_timeout_ms after the close if that is later): from then
  /// on every server answers the
  /// session's handle with INVALID_HANDLE (also one that had already used
  /// it), and its operations' manifests are removed, so their handles are
  /// refused too. An operation still running on another server is refused
  /// by the others at once and by its owner from its next sweep (the
  /// owner polls the close marker). The marker outlives the handle: a
  /// session handle past session_max_lifetime_ms is refused by every
  /// server whether or not a marker says it was closed.
  ///
  /// FetchResults is safe to retry (a balancer re-sending a request whose
  /// reply was lost, to the same or another server): with startRowOffset
  /// the page is the chunk holding that row; a FETCH_NEXT without it whose
  /// Thrift seqid equals that of the last page served (the cursor
  /// document keeps both) gets that same page again, and any other seqid
  /// moves on. Clients whose seqid does not change (0 from C++ and Python
  /// Thrift; any seqid equal to that of the ExecuteStatement, kept in the
  /// manifest) and that send no startRowOffset get no such protection
  /// (every FETCH_NEXT moves on); quiver's client and
  /// the Databricks Python connector send startRowOffset, the Node driver
  /// (@databricks/sql) counts its seqids.
  std::string cluster_secret;
  /// Largest result one operation may store: once its chunks (the bytes
  /// stored: LZ4 frames or raw IPC) would pass this, the statement fails
  /// with SQLSTATE 54000 naming the limit and its chunks are removed.
  /// 0 = no limit. Meant for a shared store, where a result is whole in
  /// the store before FINISHED (so nothing else bounds it); it applies to
  /// the local store too. Bytes, >= 0.
  int64_t max_result_bytes = 0;
  /// Shared store: a running operation whose status document (rewritten
  /// every sweep, about 1 s, by its owner) is older than this is taken for
  /// dead: the server that notices runs the statement again (failover.h).
  /// Milliseconds, >= 1.
  int64_t owner_stale_ms = 5000;
  /// Shared store: how many times a statement whose server died is run
  /// again, at most; past it (or with 0) GetOperationStatus reports
  /// ERROR_STATE, SQLSTATE 08S01, naming the runs.
  int max_reruns = 2;
};

/// Reads a cluster secret file (its bytes, trailing newline removed).
/// Errors: IOError when unreadable, Invalid when shorter than 16 bytes.
Result<std::string> ReadClusterSecret(const std::string& path);

/// Counters for /metrics and --stats.
struct ResultServiceStats {
  int64_t open_sessions = 0;
  int64_t open_operations = 0;
  int64_t running_operations = 0;
  int64_t rpcs = 0;
  int64_t rpc_errors = 0;  ///< malformed messages (Dispatch errors)
  int64_t statements = 0;
  /// Operations whose producer has ended (done, failed or cancelled).
  int64_t finished_operations = 0;
  /// Producers waiting for the client now (max_unfetched_chunks), and how
  /// many times a producer paused since the service started.
  int64_t paused_operations = 0;
  int64_t producer_pauses = 0;
  int64_t chunks_written = 0;
  /// Since the service started, over every chunk written: the uncompressed
  /// Arrow IPC bytes (sum of bytesNum) and the bytes served for them (the
  /// LZ4 frames when chunks are compressed, else equal to chunk_ipc_bytes).
  int64_t chunk_ipc_bytes = 0;
  int64_t chunk_served_bytes = 0;
  int64_t expired_sessions = 0;
  int64_t expired_operations = 0;
  /// Of those, operations freed because their client had gone (paused
  /// past orphan_timeout_ms).
  int64_t orphaned_operations = 0;
  /// Shared store: statements this server ran again after their server
  /// died, and statements failed past max_reruns (failover.h).
  int64_t failover_reruns = 0;
  int64_t failover_exhausted = 0;
  /// The planning gate: statements planning and waiting to plan now; those
  /// refused at its queue's bound (53400) since the service started.
  int64_t planning = 0;
  int64_t queued_plans = 0;
  int64_t refused_plans = 0;
  /// RPCs waiting (fetch_wait_ms) now, and those that replied at once
  /// because max_waiting_rpcs others were waiting.
  int64_t waiting_rpcs = 0;
  int64_t waits_declined = 0;
};

class ResultService {
 public:
  /// Errors: Invalid for a missing pool / executor / store or a bad limit.
  static Result<std::unique_ptr<ResultService>> Make(ResultServiceOptions options);
  /// Cancels and joins every operation and removes their chunks.
  ~ResultService();

  /// Processes one Thrift binary-protocol message and returns the reply
  /// message (HTTP 200 body). Errors: Invalid naming what is malformed (bad
  /// message header, unknown method, a field or size beyond the limits,
  /// truncated data); the caller answers those with HTTP 400. RPC-level
  /// problems (unknown handles, statement errors, limits) are replies with
  /// an ERROR / INVALID_HANDLE TStatus instead.
  /// `client` identifies who sent it for the per-token caps (the HTTP
  /// layer passes "token-<k>"); every request with the same id is one
  /// client; empty = the anonymous client (also one client). Session and
  /// operation handles belong to the client that opened the session (their
  /// secrets are bound to it): another client presenting them gets exactly
  /// the reply an unknown handle gets, on every RPC. With a shared store,
  /// the servers of a deployment must therefore name clients alike (the
  /// same tokens in the same order).
  Result<std::string> Dispatch(std::span<const uint8_t> request, std::string_view client = {});

  /// Closes sessions and operations idle past their timeouts and cancels
  /// statements running past statement_timeout_ms; returns how many
  /// sessions and operations were closed.
  int64_t ExpireIdle(int64_t now_ms);

  ResultServiceStats stats() const;
  MemoryPool* exec_pool() const;
  MemoryPool* chunk_pool() const;
  MemoryPool* thrift_pool() const;

  class Impl;

 private:
  explicit ResultService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::server
