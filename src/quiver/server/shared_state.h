// quiver/server/shared_state.h — the result service's state in a shared
// object store (ChunkStore::shared(), an S3 store), so that any server of a
// deployment with the same store and cluster secret answers for any
// operation (result_service.h, ResultServiceOptions::cluster_secret).
//
// Documents (text, readable with any S3 tool):
//   ops/<op hex>/manifest   "quiver-manifest 1", then "key value" lines
//                           (state running|finished|failed|cancelled,
//                           session, type, seqid, times, sizes, error,
//                           schemas) and one "chunk ID START ROWS IPC
//                           SERVED SCHEMA LZ4" line per chunk. A running
//                           operation's manifest is its heartbeat, rewritten
//                           every sweep by its owner.
//   ops/<op hex>/cursor     "NEXT SEQID BEGIN END": the chunk the next
//                           FETCH_NEXT starts at and the last page served.
//   ops/<op hex>/cancel     "cancel" or "close": a marker the owner polls.
//   ops/<op hex>/statement  "quiver-statement 1", "key value" lines
//                           (dialect, can_download, client_lz4), an empty
//                           line, the statement's text: what a re-run needs.
//   ops/<op hex>/lease-<n>  the server running attempt n >= 1 (a conditional
//                           write: exactly one server creates it).
//   sessions/<s hex>/<op>   the session's operations (an index, empty).
//   closed-sessions/<s hex> a closed session's marker (body: its expiry ms).
//   expiry/<ms, 15 digits>-<op hex | session-<s hex>>  the expiry index,
//                           listed in time order by the sweep.
//
// Internal to the server layer. Thread safety: every method may be called
// from any thread; an Operation's fields are read and written under its mu
// as operation.h says.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "quiver/base/status.h"
#include "quiver/fetch/chunk_store.h"
#include "quiver/server/operation.h"
#include "quiver/server/result_service.h"

namespace quiver::server {

/// The manifest document of `op` in state `state` (heartbeat_ms = now).
std::string ManifestText(const Operation& op, const std::string& state);

/// Fills `op` from a manifest and sets *state; false when malformed (no
/// header, a bad schema or chunk line, no state).
bool ParseManifest(const std::string& text, Operation* op, std::string* state);

/// The statement document of `op` (its text, dialect and result options:
/// what a re-run needs), and back; false when malformed.
std::string StatementText(const Operation& op);
bool ParseStatement(const std::string& text, Operation* op);

class SharedState {
 public:
  /// `store` and `options` are not owned and outlive this.
  SharedState(fetch::ChunkStore* store, const ResultServiceOptions& options) : store_(store), o_(options) {}

  /// Whether the session was closed (on any server). A store that cannot
  /// be read says no: the RPC then meets the store's error itself (a
  /// statement cannot start without writing to it).
  bool SessionClosed(const std::string& session_guid);

  /// Leaves the closed-session marker (and its expiry entry,
  /// session_idle_timeout_ms from now). Errors: the store's.
  Status MarkSessionClosed(const std::string& session_guid);

  /// Closes every operation the session's index lists, on whichever server
  /// runs it (Close), and removes the index entries.
  void CloseSessionOperations(const std::string& session_guid);

  /// Makes a started operation visible to the other servers before its
  /// handle is handed out: its session index entry, then (unless the
  /// session was closed meanwhile: *session_closed) its "running"
  /// manifest. On an error or a closed session the index entry is removed
  /// again. Errors: the store's.
  Status Announce(Operation* op, bool* session_closed);

  /// An operation as its manifest says (remote; secret left empty), or
  /// nullptr when there is none (closed, expired, never started) or a close
  /// marker says it is going. A store that cannot be read or a malformed
  /// manifest gives a failed operation naming it, not a bad handle.
  std::shared_ptr<Operation> Load(const std::string& guid);

  /// Removes a shared operation's documents and chunks (CloseOperation on a
  /// server that does not run it). A running operation whose owner is
  /// alive gets a close marker instead: its owner stops it and removes
  /// everything. Errors: KeyError when no manifest exists (or the id is
  /// malformed), the store's otherwise.
  Status Close(const std::string& op_hex);

  /// Removes a published operation's manifest, chunks and side documents
  /// (op->mu held by the caller).
  void RemovePublished(const Operation& op);
  /// The same without the chunks (the caller removed them).
  void RemoveDocuments(const Operation& op);

  /// Removes an operation's cursor, cancel marker, session index entry and
  /// (expiry_ms > 0) expiry entry.
  void RemoveSideDocuments(const std::string& op_hex, const std::string& session_guid, int64_t expiry_ms);

  /// The producer has ended: `text` becomes the manifest and its expiry
  /// entry is written (or, when another server asked to close it, the
  /// manifest and side documents are removed). Errors: the store's.
  Status WriteOutcome(const Operation& op, const std::string& text, bool close_requested);

  /// CancelOperation of an operation another server runs: a "cancel"
  /// marker its owner polls. Errors: the store's.
  Status RequestCancel(const std::string& guid);

  /// The fetch cursor document of `op`: written from, or read into, op's
  /// cursor and last page (each clamped to the chunks that exist).
  Status SaveCursor(Operation* op);
  Status LoadCursor(Operation* op);

  /// One sweep's work for an operation running here: polls its cancel
  /// marker (sets cancel, and close_requested for "close") or else
  /// refreshes its "running" manifest.
  void Heartbeat(Operation* op);

  /// Failover (issue 39). Fills op's statement, dialect and result options
  /// from its statement document. Errors: KeyError when there is none (a
  /// metadata operation), Invalid when malformed, the store's.
  Status LoadStatement(Operation* op);
  /// Takes the lease of attempt `attempt` at operation `guid` (a
  /// conditional write of ops/<op>/lease-<attempt>): true for the one
  /// server that gets it. Errors: the store's (NotImplemented for a store
  /// without conditional writes).
  Result<bool> ClaimAttempt(const std::string& guid, int attempt, const std::string& server_token);
  /// Whether a later attempt than op's holds a lease (op must stop).
  bool Superseded(const Operation& op);
  /// Removes the chunks of a dead attempt: those its last manifest listed
  /// and every other chunk of its group (written after that manifest).
  void RemoveAttemptChunks(const Operation& dead);
  /// Removes the results and closed-session markers whose expiry has
  /// passed, whichever server made them; returns the operations removed.
  int64_t ExpireDocuments(int64_t now_ms);

 private:
  fetch::ChunkStore* store_;
  const ResultServiceOptions& o_;
};

}  // namespace quiver::server
