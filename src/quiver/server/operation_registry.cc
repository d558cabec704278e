// quiver/server/operation_registry.cc — sessions and operations of one
// server: handles, caps, expiry, cancel (operation_registry.h).
#include "quiver/server/operation_registry.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/thrift_messages.h"

namespace quiver::server {
using fetch::NowEpochMs;

namespace {

t::TStatus GlobalOpsError(const ResultServiceOptions& o) {
  return ErrorStatus("too many open operations: the server allows " + std::to_string(o.max_operations) +
                     "; close finished operations and retry");
}
t::TStatus SessionOpsError(const ResultServiceOptions& o) {
  return ErrorStatus("too many open operations in this session: the server allows " +
                     std::to_string(o.max_operations_per_session) +
                     " per session; close finished operations and retry");
}
t::TStatus TokenOpsError(const ResultServiceOptions& o) {
  return ErrorStatus("too many open operations for this token: the server allows " +
                     std::to_string(o.max_operations_per_token) + " per token; close finished operations and retry");
}

}  // namespace

std::string OperationRegistry::HandleSecret(std::string_view kind, const std::string& guid,
                                            std::string_view client) const {
  std::string message(kind);
  message += '\0';
  message += client;
  message += '\0';
  message += guid;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), handle_key_.data(), static_cast<int>(handle_key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
  return std::string(reinterpret_cast<const char*>(mac), kHandleBytes);
}

bool OperationRegistry::ValidHandle(std::string_view kind, const t::THandleIdentifier& id,
                                    std::string_view client) const {
  return id.guid.size() == kHandleBytes && fetch::ConstantTimeEquals(HandleSecret(kind, id.guid, client), id.secret);
}

t::TStatus OperationRegistry::AddSession(const std::shared_ptr<Session>& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(sessions_.size()) >= o_.max_sessions) {
    return ErrorStatus("too many open sessions: the server allows " + std::to_string(o_.max_sessions) +
                       "; close one and retry");
  }
  int mine = 0;
  for (const auto& [g, other] : sessions_) mine += other->client == s->client;
  if (mine >= o_.max_sessions_per_token) {
    return ErrorStatus("too many open sessions for this token: the server allows " +
                       std::to_string(o_.max_sessions_per_token) + " per token; close one and retry");
  }
  sessions_[s->guid] = s;
  return OkStatus();
}

std::shared_ptr<Session> OperationRegistry::FindSession(const t::THandleIdentifier& id, std::string_view client,
                                                        bool adopt) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id.guid);
  if (it == sessions_.end() && adopt && ValidHandle("session", id, client) &&
      static_cast<int>(sessions_.size()) < o_.max_sessions) {
    // A session another server of the deployment opened (for this client).
    auto s = std::make_shared<Session>();
    s->guid = id.guid;
    s->secret = id.secret;
    s->client = std::string(client);
    s->dialect = SessionDialectOf(s->guid);
    it = sessions_.emplace(s->guid, s).first;
  }
  if (it == sessions_.end() || !fetch::ConstantTimeEquals(it->second->secret, id.secret) ||
      it->second->client != client) {
    return nullptr;
  }
  it->second->last_used_ms = NowEpochMs();
  return it->second;
}

void OperationRegistry::ForgetSession(const std::string& guid) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(guid);
}

bool OperationRegistry::CloseSession(const t::THandleIdentifier& id, std::string_view client, bool accept_valid,
                                     std::vector<std::shared_ptr<Operation>>* ops) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id.guid);
  const bool local =
      it != sessions_.end() && fetch::ConstantTimeEquals(it->second->secret, id.secret) && it->second->client == client;
  if (!local && !(accept_valid && ValidHandle("session", id, client))) return false;
  if (!local && it != sessions_.end() && it->second->client != client) return false;
  if (it != sessions_.end()) sessions_.erase(it);
  *ops = TakeSessionOpsLocked(id.guid);
  return true;
}

t::TStatus OperationRegistry::CheckOperationCaps(const Session& session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(ops_.size()) >= o_.max_operations) return GlobalOpsError(o_);
  if (SessionOpsLocked(session.guid) >= o_.max_operations_per_session) return SessionOpsError(o_);
  if (ClientOpsLocked(session.client) >= o_.max_operations_per_token) return TokenOpsError(o_);
  return OkStatus();
}

t::TStatus OperationRegistry::AddOperation(const std::shared_ptr<Operation>& op, const Session& session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(ops_.size()) >= o_.max_operations) return GlobalOpsError(o_);
  if (ClientOpsLocked(op->client) >= o_.max_operations_per_token) return TokenOpsError(o_);
  if (sessions_.find(session.guid) == sessions_.end()) {
    return ErrorStatus("session closed while the statement started", t::TStatusCode::INVALID_HANDLE_STATUS);
  }
  if (SessionOpsLocked(session.guid) >= o_.max_operations_per_session) return SessionOpsError(o_);
  // Never over an operation already here: the one replaced would lose its
  // index entry while its thread runs (and its handle would find the other).
  if (!ops_.emplace(op->guid, op).second) return ErrorStatus("an operation with this handle is already running here");
  return OkStatus();
}

void OperationRegistry::RemoveOperation(const std::string& guid, const std::string& forget_session) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_.erase(guid);
  if (!forget_session.empty()) sessions_.erase(forget_session);
}

void OperationRegistry::SetWorker(Operation* op, std::thread worker) {
  std::lock_guard<std::mutex> lock(mu_);
  op->worker = std::move(worker);
}

OperationRegistry::Lookup OperationRegistry::FindOperation(const t::THandleIdentifier& id, std::string_view client,
                                                           std::shared_ptr<Operation>* op) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ops_.find(id.guid);
  if (it == ops_.end() || !fetch::ConstantTimeEquals(it->second->secret, id.secret) || it->second->client != client) {
    return Lookup::kNotHere;
  }
  const int64_t now = NowEpochMs();
  it->second->last_used_ms = now;
  if (auto s = sessions_.find(it->second->session_guid); s != sessions_.end()) s->second->last_used_ms = now;
  if (it->second->close_requested) return Lookup::kClosed;  // closed on another server (marker seen)
  std::lock_guard<std::mutex> l2(it->second->mu);
  if (it->second->published) return Lookup::kNotHere;
  *op = it->second;
  return Lookup::kFound;
}

std::shared_ptr<Operation> OperationRegistry::TakeOperation(const t::THandleIdentifier& id, std::string_view client) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ops_.find(id.guid);
  if (it == ops_.end() || !fetch::ConstantTimeEquals(it->second->secret, id.secret) || it->second->client != client) {
    return nullptr;
  }
  auto op = it->second;
  ops_.erase(it);
  return op;
}

std::shared_ptr<Operation> OperationRegistry::TakeOperation(const std::string& guid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ops_.find(guid);
  if (it == ops_.end()) return nullptr;
  auto op = it->second;
  ops_.erase(it);
  return op;
}

std::vector<std::shared_ptr<Operation>> OperationRegistry::TakeAll() {
  std::vector<std::shared_ptr<Operation>> ops;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [k, op] : ops_) ops.push_back(op);
  ops_.clear();
  sessions_.clear();
  return ops;
}

void OperationRegistry::Cancel(Operation* op) {
  op->cancel = true;
  std::lock_guard<std::mutex> lock(op->mu);
  if (!op->done && !op->failed) op->cancelled = true;
  op->cv.notify_all();
}

std::vector<std::shared_ptr<Operation>> OperationRegistry::Expire(int64_t now_ms, int64_t* sessions_closed) {
  std::vector<std::shared_ptr<Operation>> ops;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now_ms - it->second->last_used_ms.load() > o_.session_idle_timeout_ms) {
      auto more = TakeSessionOpsLocked(it->first);
      ops.insert(ops.end(), more.begin(), more.end());
      it = sessions_.erase(it);
      ++*sessions_closed;
      ++expired_sessions_;
    } else {
      ++it;
    }
  }
  for (auto it = ops_.begin(); it != ops_.end();) {
    Operation* op = it->second.get();
    if (o_.statement_timeout_ms > 0 && now_ms - op->started_ms > o_.statement_timeout_ms && !op->cancel) {
      std::lock_guard<std::mutex> l2(op->mu);
      // Time paused for the client to fetch is not the statement's.
      const int64_t paused_ms = op->paused_total_ms + (op->paused ? now_ms - op->paused_since_ms : 0);
      if (!op->done && !op->failed && !op->cancelled && now_ms - op->started_ms - paused_ms > o_.statement_timeout_ms) {
        op->timed_out = true;
        op->cancel = true;  // the producer stops at its next poll; it reports the limit
      }
    }
    bool orphaned = false;
    if (o_.orphan_timeout_ms > 0) {
      std::lock_guard<std::mutex> l2(op->mu);
      // Paused for the client, and the client has not come back since.
      orphaned = op->paused && now_ms - std::max(op->paused_since_ms, op->last_used_ms.load()) > o_.orphan_timeout_ms;
    }
    if (orphaned) ++orphaned_operations_;
    if (orphaned || now_ms - it->second->last_used_ms.load() > o_.operation_idle_timeout_ms) {
      ops.push_back(it->second);
      it = ops_.erase(it);
      ++expired_operations_;
    } else {
      ++it;
    }
  }
  return ops;
}

void OperationRegistry::SharedSweepLists(int64_t now_ms, std::vector<std::shared_ptr<Operation>>* running,
                                         std::vector<std::shared_ptr<Operation>>* reap) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = ops_.begin(); it != ops_.end();) {
    std::lock_guard<std::mutex> l2(it->second->mu);
    if (it->second->published || it->second->failed || it->second->cancelled) {
      // Ended: answered from the store from now on.
      if (it->second->published || now_ms - it->second->completed_ms > o_.owner_stale_ms) {
        reap->push_back(it->second);
        it = ops_.erase(it);
        continue;
      }
    } else if (!it->second->done) {
      running->push_back(it->second);
    }
    ++it;
  }
}

void OperationRegistry::FillStats(ResultServiceStats* s) {
  std::lock_guard<std::mutex> lock(mu_);
  s->open_sessions = static_cast<int64_t>(sessions_.size());
  s->open_operations = static_cast<int64_t>(ops_.size());
  for (auto& [k, op] : ops_) {
    std::lock_guard<std::mutex> l2(op->mu);
    if (!op->done && !op->failed && !op->cancelled) ++s->running_operations;
    if (op->paused) ++s->paused_operations;
  }
  s->expired_sessions = expired_sessions_;
  s->expired_operations = expired_operations_;
  s->orphaned_operations = orphaned_operations_;
}

std::vector<std::shared_ptr<Operation>> OperationRegistry::TakeSessionOpsLocked(const std::string& session_guid) {
  std::vector<std::shared_ptr<Operation>> out;
  for (auto it = ops_.begin(); it != ops_.end();) {
    if (it->second->session_guid == session_guid) {
      out.push_back(it->second);
      it = ops_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

int OperationRegistry::ClientOpsLocked(const std::string& client) const {
  int n = 0;
  for (const auto& [k, op] : ops_) n += op->client == client;
  return n;
}

int OperationRegistry::SessionOpsLocked(const std::string& session_guid) const {
  int n = 0;
  for (const auto& [k, op] : ops_) n += op->session_guid == session_guid;
  return n;
}

}  // namespace quiver::server
