// quiver/server/operation_registry.h — the sessions and operations one
// result server holds: their handles (guid + secret, the secret an HMAC of
// the guid so that handles validate themselves across servers), the caps
// (global, per session, per token), idle expiry and the statement time
// limit, and cancel.
//
// The registry only indexes: it never joins an operation's thread or
// touches the store. What it takes out (Take*, Expire) the caller finishes
// (StatementRunner::Finish).
//
// Internal to the server layer. Thread safety: every method may be called
// from any thread (one mutex over both maps; an operation's own mu is taken
// inside it, never the other way round).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "quiver/server/operation.h"
#include "quiver/server/result_service.h"

namespace quiver::server {

class OperationRegistry {
 public:
  /// `options` is not owned and outlives the registry. `handle_key` is the
  /// HMAC key of handle secrets (the cluster secret, or random bytes).
  OperationRegistry(const ResultServiceOptions& options, std::string handle_key)
      : o_(options), handle_key_(std::move(handle_key)) {}

  // ---- handles ----
  // A handle belongs to the client (the bearer token's id) whose session it
  // is: its secret is bound to that client, and every lookup below takes
  // the client of the RPC and finds nothing for another client's handle,
  // so another token gets exactly what an unknown handle gets. (Servers of
  // one deployment must name their tokens alike: the same tokens in the
  // same order.)
  /// The handle secret of a guid: HMAC-SHA256(key, kind || 0 || client ||
  /// 0 || guid), 16 bytes.
  std::string HandleSecret(std::string_view kind, const std::string& guid, std::string_view client) const;
  /// Whether `id` is a handle this deployment issued for `kind` ("session"
  /// or "operation") to `client`, whichever server did.
  bool ValidHandle(std::string_view kind, const t::THandleIdentifier& id, std::string_view client) const;

  // ---- sessions ----
  /// Registers a new session; an ERROR status naming the cap when
  /// max_sessions or max_sessions_per_token is reached (not registered).
  t::TStatus AddSession(const std::shared_ptr<Session>& session);
  /// The session of a handle (its last use set to now), or nullptr. With
  /// `adopt` (shared store), a valid handle of a session another server
  /// opened is registered here (within max_sessions).
  std::shared_ptr<Session> FindSession(const t::THandleIdentifier& id, std::string_view client, bool adopt);
  /// Drops a session from the index (closed on another server).
  void ForgetSession(const std::string& guid);
  /// Removes a session and takes its operations into *ops. False (nothing
  /// changed) when the handle is not a session here and not (with
  /// `accept_valid`) a valid handle of another server's session.
  bool CloseSession(const t::THandleIdentifier& id, std::string_view client, bool accept_valid,
                    std::vector<std::shared_ptr<Operation>>* ops);

  // ---- operations ----
  /// An ERROR status naming the first cap a new operation in `session`
  /// would pass (max_operations, per session, per token), else SUCCESS:
  /// a statement is refused before it is planned.
  t::TStatus CheckOperationCaps(const Session& session);
  /// Registers an operation after the same checks, atomically with them
  /// (and INVALID_HANDLE when its session was closed meanwhile; ERROR, the
  /// registry unchanged, when an operation of the same guid is here).
  t::TStatus AddOperation(const std::shared_ptr<Operation>& op, const Session& session);
  /// Removes an operation (and, with forget_session, its session) from the
  /// index without finishing it (a start that failed).
  void RemoveOperation(const std::string& guid, const std::string& forget_session);
  /// Sets op->worker under the registry's lock (so Take* never sees it half set).
  void SetWorker(Operation* op, std::thread worker);

  enum class Lookup { kFound, kClosed, kNotHere };
  /// The operation of a handle as this server holds it (last use of it and
  /// its session set to now): kFound with *op when it is registered here
  /// and not yet published; kClosed when another server asked to close it;
  /// kNotHere otherwise (unknown, or published: the store answers).
  Lookup FindOperation(const t::THandleIdentifier& id, std::string_view client, std::shared_ptr<Operation>* op);
  /// Removes and returns the operation of a handle (secret and client
  /// checked), or nullptr.
  std::shared_ptr<Operation> TakeOperation(const t::THandleIdentifier& id, std::string_view client);
  /// Removes and returns an operation by guid, or nullptr.
  std::shared_ptr<Operation> TakeOperation(const std::string& guid);
  /// Removes and returns everything (the service's destruction).
  std::vector<std::shared_ptr<Operation>> TakeAll();

  /// Cancels a local operation: the producer stops at its next poll and
  /// the operation reports CANCELED (unless it already ended).
  static void Cancel(Operation* op);

  // ---- expiry ----
  /// Takes out the sessions idle past session_idle_timeout_ms (with their
  /// operations) and the operations idle past operation_idle_timeout_ms,
  /// and cancels the statements running past statement_timeout_ms (marked
  /// timed_out; they stay registered). *sessions_closed counts the sessions.
  std::vector<std::shared_ptr<Operation>> Expire(int64_t now_ms, int64_t* sessions_closed);
  /// Shared store, every sweep: takes out the operations that ended and
  /// were published (or ended unpublished more than owner_stale_ms ago)
  /// into *reap, and lists those still running into *running.
  void SharedSweepLists(int64_t now_ms, std::vector<std::shared_ptr<Operation>>* running,
                        std::vector<std::shared_ptr<Operation>>* reap);
  void CountExpiredOperations(int64_t n) { expired_operations_ += n; }

  /// Fills the session and operation counters of *s.
  void FillStats(ResultServiceStats* s);

 private:
  std::vector<std::shared_ptr<Operation>> TakeSessionOpsLocked(const std::string& session_guid);
  int ClientOpsLocked(const std::string& client) const;
  int SessionOpsLocked(const std::string& session_guid) const;

  const ResultServiceOptions& o_;
  const std::string handle_key_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Session>> sessions_;
  std::unordered_map<std::string, std::shared_ptr<Operation>> ops_;
  std::atomic<int64_t> expired_sessions_{0}, expired_operations_{0}, orphaned_operations_{0};
};

}  // namespace quiver::server
