// quiver/server/operation.h — the state of one session and one operation
// (a statement or metadata call and its result chunks) of the result
// service, shared by the operation registry, the statement runner, the
// shared-state documents and the RPC handlers; and the 16-byte handle ids
// they are known by.
//
// Internal to the server layer (includes the generated TCLIService types).
// Thread safety: the fields under "mu" are read and written with
// Operation::mu held; atomics anywhere; the fields set before the operation
// is registered (guid, secret, session, client, type, flags) are read-only
// afterwards; a statement's schema, arrow_schema and stream are set by its
// own thread once planned (schema fields under mu, read after `planned`).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/server/planning_gate.h"
#include "quiver/sql/dialect.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::server {
namespace t = ::quiver::tcli;

/// Bytes of a session or operation guid (and of its secret).
constexpr int kHandleBytes = 16;

/// 16 random bytes (RAND_bytes; the clock if that ever fails), as an RFC
/// 4122 version 4 UUID when `uuid_v4`.
std::string RandomHandleBytes(bool uuid_v4);

/// A session handle's guid that carries the time it was issued: a UUID of
/// version 7 (RFC 9562 section 5.7: the first 48 bits the Unix time in
/// milliseconds, big-endian; the rest random but for the version and
/// variant bits). The handle's secret authenticates the guid, so the time
/// cannot be forged.
std::string TimedHandleBytes(int64_t now_ms);

/// The issue time (Unix ms) of a TimedHandleBytes guid; nullopt for a guid
/// of another form (not 16 bytes, or not version 7).
std::optional<int64_t> HandleIssuedMs(const std::string& guid);

/// The dialect a session was opened in, carried by its guid so that every
/// server of a shared-store deployment reads the session's statements alike
/// (the handle's secret authenticates the guid): the lowest bit of byte 7
/// (part of the version 7 UUID's random `rand_a` field, RFC 9562 section
/// 5.7), 1 for postgres, 0 for spark. `guid` must be kHandleBytes long
/// (otherwise nothing is changed, and SessionDialectOf says spark).
void SetSessionDialect(std::string* guid, sql::SqlDialect dialect);
sql::SqlDialect SessionDialectOf(const std::string& guid);

/// Lower-case hex of `bytes`, and back (nullopt for odd length or a
/// character outside [0-9a-f]).
std::string Hex(std::string_view bytes);
std::optional<std::string> Unhex(std::string_view hex);

/// One result chunk as its operation knows it: the store id and the sizes
/// the links and inline batches announce.
struct ChunkRef {
  std::string id;
  int64_t start_row_offset = 0;
  int64_t row_count = 0;
  int64_t ipc_bytes = 0;     ///< uncompressed IPC stream bytes (bytesNum)
  int64_t served_bytes = 0;  ///< bytes stored (LZ4 frame or raw IPC)
  int64_t schema_message_bytes = 0;
  bool lz4 = false;
};

struct Session {
  std::string guid;
  std::string secret;
  std::string client;  ///< who opened it (the per-token caps)
  std::atomic<int64_t> last_used_ms{0};
  /// The dialect its statements are read in: SessionDialectOf(guid) at
  /// OpenSession (or adoption), then what `SET dialect = ...` chose
  /// (local sessions only: a shared-store session keeps its guid's).
  std::atomic<sql::SqlDialect> dialect{sql::SqlDialect::kSpark};
};

struct Operation {
  std::string guid;
  std::string secret;
  std::string session_guid;
  std::string client;  ///< the session's client (the per-token caps)
  t::TOperationType::type type = t::TOperationType::EXECUTE_STATEMENT;
  bool can_download = false;
  bool inline_lz4 = false;
  bool chunk_lz4 = false;
  /// ExecuteStatement: plans the statement (executor, TIME as text) and
  /// returns its stream. Run on the operation's thread once plan_ticket is
  /// admitted (StatementRunner), never on an RPC worker; the runner then
  /// sets schema, arrow_schema and stream and `planned`. Empty for metadata
  /// operations, whose stream, schema and arrow_schema are set at Start.
  std::function<Result<std::unique_ptr<RecordBatchStream>>()> plan;
  std::unique_ptr<PlanningGate::Ticket> plan_ticket;
  /// Set before `planned` (under mu) for a planned statement; read-only
  /// afterwards.
  SchemaPtr schema;
  std::string arrow_schema;
  std::unique_ptr<RecordBatchStream> stream;
  std::atomic<bool> cancel{false};
  std::atomic<bool> timed_out{false};  ///< cancelled for statement_timeout_ms
  std::atomic<int64_t> last_used_ms{0};
  int64_t started_ms = 0;
  std::thread worker;

  /// Shared store: held across building and writing the manifest, so that a
  /// heartbeat's "running" manifest can never land after the final one.
  std::mutex manifest_mu;
  bool ended = false;  ///< Publish has begun (under mu): no more heartbeats

  std::mutex mu;
  std::condition_variable cv;
  std::vector<ChunkRef> chunks;
  /// The statement has been planned (its schema is known): PENDING before.
  bool planned = false;
  bool done = false;
  bool decided = false;
  bool inline_mode = false;
  bool failed = false;
  bool cancelled = false;
  std::string error;
  std::string sql_state;
  int64_t completed_ms = 0;
  int64_t total_ipc_bytes = 0;
  int64_t total_served_bytes = 0;
  size_t cursor = 0;
  /// The last page served by FETCH_NEXT / FETCH_FIRST: the request's Thrift
  /// seqid (0 = none) and its chunks [last_begin, last_end). The same seqid
  /// again is a retry of that request (a balancer re-sending it after the
  /// reply was lost) and gets the same page. Shared store: kept in the
  /// cursor document.
  int32_t last_seqid = 0;
  size_t last_begin = 0;
  size_t last_end = 0;
  /// The seqid of the ExecuteStatement (or metadata RPC) that started the
  /// operation: a client that sends the same seqid with every call (some
  /// Thrift libraries send a constant) shows it by fetching with that
  /// seqid, and is never replayed.
  int32_t exec_seqid = 0;
  /// Chunks handed to the client at least once (the cursor's high-water
  /// mark); the producer pauses while chunks.size() - handed_out reaches
  /// max_unfetched_chunks.
  size_t handed_out = 0;
  /// Chunks [0, moved_to_disk) were offered to ChunkStore::SpillServed by
  /// the producer: of the handed-out chunks, only the most recent
  /// max_unfetched_chunks stay in memory before their download (a client
  /// that takes links and downloads none holds no more memory than one
  /// that takes none).
  size_t moved_to_disk = 0;
  bool paused = false;
  /// Time the producer has spent paused for the client (not counted by
  /// the statement time limit), and when the current pause began.
  int64_t paused_total_ms = 0;
  int64_t paused_since_ms = 0;
  /// Shared store (stateless servers): the manifest is in the store and this
  /// server answers for the operation from there (published: the producer
  /// has ended; remote: loaded from another server's manifest).
  bool published = false;
  bool remote = false;
  std::optional<t::TTableSchema> hive_schema;
  std::atomic<bool> close_requested{false};  ///< a close marker from another server
  int64_t expiry_ms = 0;
  int64_t heartbeat_ms = 0;
  /// Failover (shared store, issue 39): which run of the statement this is
  /// (0 = the first; a server that finds the owner dead runs it again as
  /// attempt + 1 under the same handle), the statement's text and how it
  /// was asked for (kept in the store so another server can run it again),
  /// and, for an operation loaded from the store, whether its owner's
  /// status document went stale.
  int attempt = 0;
  std::string statement;
  sql::SqlDialect dialect = sql::SqlDialect::kSpark;
  bool client_lz4 = false;
  bool owner_stale = false;
  /// A later attempt took the statement over (its lease exists): this run
  /// stops and publishes nothing.
  std::atomic<bool> superseded{false};
};

/// The chunk group (fetch::ChunkStore::PutGrouped) of one attempt at an
/// operation: the first 12 hex digits of its guid (random in a version 4
/// UUID) and the attempt as 4 hex digits.
std::string ChunkGroup(const std::string& guid, int attempt);

}  // namespace quiver::server
