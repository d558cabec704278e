// quiver/server/planning_gate.cc — the cap on statements planning at once,
// its bounded queue and round-robin admission over clients
// (planning_gate.h).
#include "quiver/server/planning_gate.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "quiver/server/result_service.h"

namespace quiver::server {

PlanningGateOptions PlanningGateOptionsFor(const ResultServiceOptions& o) {
  PlanningGateOptions g;
  g.max_planning =
      o.max_planning > 0 ? o.max_planning : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  g.max_planning_per_token = std::max(1, g.max_planning / 2);
  g.max_queued = o.max_queued_plans;
  g.max_queued_per_token = std::max(1, o.max_queued_plans / 2);
  return g;
}

Result<std::unique_ptr<PlanningGate>> PlanningGate::Make(PlanningGateOptions o) {
  if (o.max_planning < 1 || o.max_planning_per_token < 1 || o.max_planning_per_token > o.max_planning ||
      o.max_queued < 1 || o.max_queued_per_token < 1 || o.max_queued_per_token > o.max_queued) {
    return Status::Invalid("planning gate: max_planning (" + std::to_string(o.max_planning) + ") and max_queued (" +
                           std::to_string(o.max_queued) + ") must be >= 1, their per-token shares (" +
                           std::to_string(o.max_planning_per_token) + ", " + std::to_string(o.max_queued_per_token) +
                           ") between 1 and them");
  }
  return std::unique_ptr<PlanningGate>(new PlanningGate(o));
}

Result<std::unique_ptr<PlanningGate::Ticket>> PlanningGate::Enter(const std::string& client) {
  std::unique_ptr<Ticket> t(new Ticket(this, client));
  std::lock_guard<std::mutex> lock(mu_);
  Client& c = clients_[client];
  c.waiting.push_back(t.get());
  ++queued_;
  AdmitLocked();
  if (!t->admitted_ && (queued_ > o_.max_queued || static_cast<int>(c.waiting.size()) > o_.max_queued_per_token)) {
    const bool own = static_cast<int>(c.waiting.size()) > o_.max_queued_per_token;
    c.waiting.pop_back();  // it is the last: nothing was admitted after it
    --queued_;
    if (c.waiting.empty() && c.planning == 0) clients_.erase(client);
    t->released_ = true;
    ++refused_;
    return Status::Invalid(own ? "too many statements of this client waiting to be planned: " +
                                     std::to_string(o_.max_queued_per_token) +
                                     " are queued behind the ones planning (max_queued_plans_per_token); retry later"
                               : "too many statements waiting to be planned: " + std::to_string(o_.max_queued) +
                                     " are queued behind the ones planning (max_queued_plans); retry later")
        .WithSqlState("53400");
  }
  return t;
}

void PlanningGate::AdmitLocked() {
  bool any = false;
  while (planning_ < o_.max_planning) {
    // The next client after the one admitted last (wrapping) with a waiting
    // ticket and room under its own cap.
    Client* pick = nullptr;
    std::string pick_name;
    auto consider = [&](auto first, auto last) {
      for (auto it = first; it != last && pick == nullptr; ++it) {
        if (!it->second.waiting.empty() && it->second.planning < o_.max_planning_per_token) {
          pick = &it->second;
          pick_name = it->first;
        }
      }
    };
    const auto start = clients_.upper_bound(last_admitted_);
    consider(start, clients_.end());
    consider(clients_.begin(), start);
    if (pick == nullptr) break;
    Ticket* t = pick->waiting.front();
    pick->waiting.pop_front();
    --queued_;
    ++pick->planning;
    ++planning_;
    ++admitted_;
    t->admitted_ = true;
    last_admitted_ = pick_name;
    any = true;
  }
  if (any) cv_.notify_all();
}

void PlanningGate::ReleaseLocked(Ticket* t) {
  if (t->released_) return;
  t->released_ = true;
  auto it = clients_.find(t->client_);
  if (it == clients_.end()) return;
  Client& c = it->second;
  if (t->admitted_) {
    --c.planning;
    --planning_;
  } else {
    auto w = std::find(c.waiting.begin(), c.waiting.end(), t);
    if (w != c.waiting.end()) {
      c.waiting.erase(w);
      --queued_;
      ++abandoned_;
    }
  }
  if (c.waiting.empty() && c.planning == 0) clients_.erase(it);
  AdmitLocked();
}

bool PlanningGate::Ticket::Wait(const std::atomic<bool>& cancel) {
  std::unique_lock<std::mutex> lock(gate_->mu_);
  while (!admitted_ && !released_) {
    if (cancel.load()) {
      gate_->ReleaseLocked(this);
      return false;
    }
    gate_->cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return admitted_ && !released_;
}

void PlanningGate::Ticket::Release() {
  std::lock_guard<std::mutex> lock(gate_->mu_);
  gate_->ReleaseLocked(this);
}

bool PlanningGate::Ticket::admitted() const {
  std::lock_guard<std::mutex> lock(gate_->mu_);
  return admitted_;
}

PlanningGate::Ticket::~Ticket() { Release(); }

PlanningGateStats PlanningGate::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return PlanningGateStats{planning_, queued_, admitted_, refused_, abandoned_};
}

}  // namespace quiver::server
