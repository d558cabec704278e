// quiver/server/failover.h — a statement outlives the server that runs it
// (issue 39). With a shared store, a running operation's manifest is its
// owner's heartbeat (shared_state.h). A server that loads a manifest whose
// heartbeat is older than owner_stale_ms takes the owner for dead and, for
// a statement (every statement quiver runs is read-only; its text is in
// ops/<op>/statement), runs it again under the same handle:
//   1. the lease: a conditional write of ops/<op>/lease-<attempt + 1>, so
//      that of the servers noticing at once exactly one re-runs it (the
//      others answer RUNNING from the store until its new manifest shows);
//   2. the dead attempt's chunks go (those its manifest listed and, through
//      the chunk group of that attempt, those written after it);
//   3. the statement is started here as attempt + 1 and planned again in
//      the session's dialect on its own operation thread once the planning
//      gate admits it (as ExecuteStatement's statements are: never on the
//      RPC worker that noticed); its manifest replaces the stale one. The client
//      keeps polling the same handle and reads every row once (before
//      FINISHED a client has read nothing of a shared-store result).
// Past max_reruns attempts, or where the statement cannot be run again (a
// metadata operation), GetOperationStatus reports ERROR_STATE with SQLSTATE
// 08S01 naming what happened, never an HTTP error that a driver retries.
// A dead owner that comes back finds the later lease at its next heartbeat
// or at publishing (SharedState::Superseded), stops, and publishes nothing.
//
// Internal to the server layer. Thread safety: Handle may be called from
// any RPC thread; the counters are atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "quiver/columnar/record_batch_stream.h"
#include "quiver/server/operation.h"
#include "quiver/server/result_service.h"
#include "quiver/server/shared_state.h"
#include "quiver/server/statement_executor.h"
#include "quiver/server/thrift_messages.h"

namespace quiver::server {

class Failover {
 public:
  /// Registers and starts a re-run of op->statement in `session` (the
  /// service's launch path: a planning-gate ticket, the plan on the
  /// operation's thread, registry, announce); an error status when it could
  /// not start (53400 when the planning queue is full).
  using Launch = std::function<t::TStatus(const std::shared_ptr<Operation>&, StatementSession session)>;

  /// `docs` and `options` are not owned and outlive this.
  Failover(SharedState* docs, const ResultServiceOptions& options, Launch launch);

  /// For an operation SharedState::Load found with a stale owner
  /// (op->owner_stale, op->failed with the "stopped" error): the operation
  /// to answer with: the re-run started here, the stale one reporting
  /// RUNNING while another server re-runs it, or the stale one failed
  /// (08S01) when it cannot or may not run again.
  std::shared_ptr<Operation> Handle(std::shared_ptr<Operation> stale);

  /// Re-runs started here; statements failed past max_reruns.
  int64_t reruns() const { return reruns_; }
  int64_t exhausted() const { return exhausted_; }

 private:
  std::shared_ptr<Operation> Fail(std::shared_ptr<Operation> op, const std::string& why);

  SharedState* docs_;
  const ResultServiceOptions& o_;
  Launch launch_;
  std::string token_;  ///< this server's lease body (random)
  std::atomic<int64_t> reruns_{0}, exhausted_{0};
  /// Attempts ("<guid hex>#<attempt>") this server is claiming or has
  /// started: the lease body is this server's token, and the store answers
  /// a repeated conditional write of the same body as a success (a retried
  /// PUT whose reply was lost), so RPC threads of one server polling a
  /// stale handle at once would otherwise both "win" and start the
  /// statement twice under one handle (the second registration replaced
  /// the first, whose thread then destroyed its own Operation: std::terminate).
  /// An empty pointer: being claimed now. Entries whose operation is gone are
  /// dropped when the next claim starts. Guarded by claims_mu_.
  std::mutex claims_mu_;
  std::map<std::string, std::weak_ptr<Operation>> claims_;
};

}  // namespace quiver::server
