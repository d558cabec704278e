// quiver/server/planning_gate.h — how many statements of a result server
// are parsed and planned at once (issue 35 #2). Planning is CPU work whose
// length a client chooses (a long CASE chain binds for seconds), so it is
// admitted through this gate: at most max_planning statements plan at once,
// at most max_planning_per_token of one client (bearer token), the rest wait
// in a bounded queue and are admitted round-robin over clients, so one
// token's 80 statements cannot put another token's one-row query behind
// them. Past the queue's bound a statement is refused at once (SQLSTATE
// 53400, naming the limit).
//
// The gate only counts and orders: a statement waits on its own operation
// thread (never on an RPC worker) and plans there (StatementRunner).
//
// Internal to the server layer. Thread safety: every method may be called
// from any thread; a Ticket is used by one thread at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "quiver/base/result.h"

namespace quiver::server {

struct PlanningGateOptions {
  /// Statements planning at once, in all (>= 1).
  int max_planning = 2;
  /// Statements of one client planning at once (1 .. max_planning).
  int max_planning_per_token = 1;
  /// Statements waiting for their turn, in all and of one client (>= 1,
  /// per token <= in all); a statement past either is refused.
  int max_queued = 64;
  int max_queued_per_token = 32;
};

/// Counters of a gate (ResultServiceStats, /metrics).
struct PlanningGateStats {
  int64_t planning = 0;   ///< statements planning now
  int64_t queued = 0;     ///< statements waiting now
  int64_t admitted = 0;   ///< since the gate was made
  int64_t refused = 0;    ///< refused at the queue's bound since then
  int64_t abandoned = 0;  ///< left the queue cancelled (closed, timed out)
};

struct ResultServiceOptions;

/// The gate of a result service: max_planning (0 = the hardware threads,
/// at least 2), half of it per token (at least 1); max_queued_plans, half
/// of it per token (at least 1). Pure.
PlanningGateOptions PlanningGateOptionsFor(const ResultServiceOptions& o);

class PlanningGate {
 public:
  /// A statement's place: in the queue until admitted, then a planning
  /// slot until it is destroyed (or Release). Destroying a ticket gives
  /// back whichever it holds. Must not outlive its gate.
  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    /// Waits until the ticket is admitted (true) or `cancel` turns true
    /// (false: the ticket has left the queue). `cancel` is polled at least
    /// every 50 ms. Called at most once.
    bool Wait(const std::atomic<bool>& cancel);
    /// Gives the planning slot (or the queue place) back now; idempotent.
    void Release();
    /// Whether it has been admitted (it may plan), released or not.
    bool admitted() const;

   private:
    friend class PlanningGate;
    Ticket(PlanningGate* gate, std::string client) : gate_(gate), client_(std::move(client)) {}
    PlanningGate* gate_;
    std::string client_;
    bool admitted_ = false;  // under gate_->mu_
    bool released_ = false;  // under gate_->mu_
  };

  /// Errors: Invalid for options out of range (naming them).
  static Result<std::unique_ptr<PlanningGate>> Make(PlanningGateOptions options);

  /// A place for a statement of `client` (any string; "" is one client):
  /// admitted at once when a slot is free for it, else queued. Refused with
  /// Invalid, SQLSTATE 53400 naming max_queued / max_queued_per_token, when
  /// it would have to wait and the queue (or the client's share of it) is
  /// full.
  Result<std::unique_ptr<Ticket>> Enter(const std::string& client);

  PlanningGateStats stats() const;
  const PlanningGateOptions& options() const { return o_; }

 private:
  explicit PlanningGate(PlanningGateOptions o) : o_(o) {}
  struct Client {
    std::deque<Ticket*> waiting;
    int planning = 0;
  };
  // Admits waiting tickets while slots are free: clients in turn, starting
  // after the one admitted last, skipping those at max_planning_per_token.
  void AdmitLocked();
  void ReleaseLocked(Ticket* t);

  const PlanningGateOptions o_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Client> clients_;  // clients with a ticket
  std::string last_admitted_;              // round-robin position
  int planning_ = 0, queued_ = 0;
  int64_t admitted_ = 0, refused_ = 0, abandoned_ = 0;
};

}  // namespace quiver::server
