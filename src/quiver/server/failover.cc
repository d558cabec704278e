// quiver/server/failover.cc — running a statement again when its server
// died (failover.h).
#include "quiver/server/failover.h"

#include "quiver/fetch/link_signer.h"

namespace quiver::server {
using fetch::NowEpochMs;

Failover::Failover(SharedState* docs, const ResultServiceOptions& options, Launch launch)
    : docs_(docs), o_(options), launch_(std::move(launch)), token_(Hex(RandomHandleBytes(false))) {}

std::shared_ptr<Operation> Failover::Fail(std::shared_ptr<Operation> op, const std::string& why) {
  std::lock_guard<std::mutex> lock(op->mu);
  op->failed = true;
  op->error = why;
  op->sql_state = "08S01";
  return op;
}

std::shared_ptr<Operation> Failover::Handle(std::shared_ptr<Operation> stale) {
  const std::string stopped = stale->error;  // "the server running this statement stopped (...)"
  if (stale->type != t::TOperationType::EXECUTE_STATEMENT) {
    return Fail(std::move(stale), stopped);
  }
  if (const Status st = docs_->LoadStatement(stale.get()); !st.ok()) {
    return Fail(std::move(stale), stopped + " and it cannot be run again here: " + st.ToString());
  }
  int next = stale->attempt + 1;
  // The winner of attempt `next` replaces the stale manifest at once; one
  // still stale long after shows that winner died before it could.
  if (NowEpochMs() - stale->heartbeat_ms > 3 * o_.owner_stale_ms) ++next;
  if (next > o_.max_reruns) {
    ++exhausted_;
    return Fail(std::move(stale), stopped + "; it was run " + std::to_string(next) +
                                      " times, each time on a server that stopped (the limit is " +
                                      std::to_string(o_.max_reruns) + " re-runs, max_reruns); run it again");
  }
  // One claim per attempt on this server (claims_ in failover.h).
  const std::string key = Hex(stale->guid) + "#" + std::to_string(next);
  bool ours = false;
  {
    std::lock_guard<std::mutex> lock(claims_mu_);
    auto it = claims_.find(key);
    if (it != claims_.end()) {
      if (auto running = it->second.lock()) return running;  // started here already
    } else {
      for (auto c = claims_.begin(); c != claims_.end();) {
        c = c->second.expired() && c->first != key ? claims_.erase(c) : std::next(c);
      }
      claims_.emplace(key, std::weak_ptr<Operation>());
      ours = true;
    }
  }
  auto claimed = ours ? docs_->ClaimAttempt(stale->guid, next, token_) : Result<bool>(false);
  if (!claimed.ok()) {
    std::lock_guard<std::mutex> lock(claims_mu_);
    claims_.erase(key);
    return Fail(std::move(stale), stopped + " and running it again failed: " + claimed.status().ToString());
  }
  if (!*claimed) {
    // Another server (or another thread of this one) runs it again:
    // RUNNING until its manifest shows.
    std::lock_guard<std::mutex> lock(stale->mu);
    stale->failed = false;
    stale->error.clear();
    stale->sql_state.clear();
    stale->owner_stale = false;
    return stale;
  }
  docs_->RemoveAttemptChunks(*stale);
  auto op = std::make_shared<Operation>();
  op->guid = stale->guid;
  op->secret = stale->secret;
  op->session_guid = stale->session_guid;
  op->client = stale->client;
  op->type = stale->type;
  op->exec_seqid = stale->exec_seqid;
  op->statement = stale->statement;
  op->dialect = stale->dialect;
  op->can_download = stale->can_download;
  op->client_lz4 = stale->client_lz4;
  op->attempt = next;
  {
    std::lock_guard<std::mutex> lock(claims_mu_);
    claims_[key] = op;
  }
  StatementSession session;
  session.dialect = op->dialect;  // set_dialect null: a shared-store session's dialect is fixed
  const t::TStatus started = launch_(op, std::move(session));
  if (started.statusCode != t::TStatusCode::SUCCESS_STATUS) {
    // Every server must see the outcome: a failed manifest of this attempt.
    {
      std::lock_guard<std::mutex> lock(op->mu);
      op->failed = true;
      op->error = "the server running this statement stopped, and running it again failed: " + started.errorMessage;
      op->sql_state = started.__isset.sqlState && !started.sqlState.empty() ? started.sqlState : "08S01";
      op->completed_ms = NowEpochMs();
      op->expiry_ms = op->completed_ms + o_.operation_idle_timeout_ms;
    }
    op->remote = true;
    (void)docs_->WriteOutcome(*op, ManifestText(*op, "failed"), false);
    return op;
  }
  ++reruns_;
  return op;
}

}  // namespace quiver::server
