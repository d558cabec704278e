// quiver/server/shared_state.cc — the service's documents in a shared
// object store (shared_state.h).
#include "quiver/server/shared_state.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/hive_types.h"
#include "quiver/server/thrift_messages.h"

namespace quiver::server {
using fetch::NowEpochMs;

namespace {

// Document names in a shared store.
std::string ManifestDoc(const std::string& op_hex) { return "ops/" + op_hex + "/manifest"; }
std::string CursorDoc(const std::string& op_hex) { return "ops/" + op_hex + "/cursor"; }

// The fetch cursor document: "NEXT SEQID BEGIN END" (decimal): the chunk the
// next FETCH_NEXT starts at, then the last page served (Operation::last_*).
// A document of NEXT alone (older servers) reads with no last page.
std::string CursorText(const Operation& op) {
  return std::to_string(op.cursor) + " " + std::to_string(op.last_seqid) + " " + std::to_string(op.last_begin) + " " +
         std::to_string(op.last_end);
}

// Sets op's cursor and last page from a cursor document (mu held), each
// clamped to the chunks that exist.
void ParseCursor(const std::string& text, Operation* op) {
  std::istringstream in(text);
  unsigned long long next = 0, begin = 0, end = 0;
  long long seqid = 0;
  in >> next;
  if (!(in >> seqid >> begin >> end)) seqid = begin = end = 0;
  const size_t n = op->chunks.size();
  op->cursor = std::min<size_t>(next, n);
  op->last_seqid = static_cast<int32_t>(seqid);
  op->last_begin = std::min<size_t>(begin, n);
  op->last_end = std::min<size_t>(std::max(begin, end), n);
}
std::string CancelDoc(const std::string& op_hex) { return "ops/" + op_hex + "/cancel"; }
// Failover: the statement's text and how it was asked for (written once, by
// the first run), and the lease of each re-run (a conditional write: the one
// server that creates lease-<n> runs attempt n).
std::string StatementDoc(const std::string& op_hex) { return "ops/" + op_hex + "/statement"; }
std::string LeaseDoc(const std::string& op_hex, int attempt) {
  return "ops/" + op_hex + "/lease-" + std::to_string(attempt);
}
// A closed session's marker: every server refuses the session's handle
// while it exists (the handle itself validates forever). Its body is the
// epoch ms it expires at; its expiry index entry is ExpiryDoc(ms,
// "session-" + hex).
std::string ClosedSessionDoc(const std::string& session_hex) { return "closed-sessions/" + session_hex; }
constexpr std::string_view kSessionExpiryTag = "session-";
std::string SessionOpDoc(const std::string& session_hex, const std::string& op_hex) {
  return "sessions/" + session_hex + "/" + op_hex;
}
// The expiry index: "expiry/<ms, 15 digits>-<op hex>" (or "-session-<hex>"
// for a closed-session marker), so a listing is in time order.
std::string ExpiryDoc(int64_t expiry_ms, const std::string& id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%015lld", static_cast<long long>(expiry_ms));
  return std::string("expiry/") + buf + "-" + id;
}

// The manifest: one "key value" line each, then one "chunk ..." line per
// chunk. Text so that an operator can read it with any S3 tool.
std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string ManifestText(const Operation& op, const std::string& state) {
  std::ostringstream m;
  m << "quiver-manifest 1\n";
  m << "state " << state << "\n";
  m << "session " << Hex(op.session_guid) << "\n";
  m << "type " << static_cast<int>(op.type) << "\n";
  m << "exec_seqid " << op.exec_seqid << "\n";
  m << "started_ms " << op.started_ms << "\n";
  m << "completed_ms " << op.completed_ms << "\n";
  m << "heartbeat_ms " << NowEpochMs() << "\n";
  m << "attempt " << op.attempt << "\n";
  m << "expiry_ms " << op.expiry_ms << "\n";
  m << "inline " << (op.inline_mode ? 1 : 0) << "\n";
  m << "inline_lz4 " << (op.inline_lz4 ? 1 : 0) << "\n";
  m << "chunk_lz4 " << (op.chunk_lz4 ? 1 : 0) << "\n";
  m << "total_ipc_bytes " << op.total_ipc_bytes << "\n";
  m << "total_served_bytes " << op.total_served_bytes << "\n";
  m << "sql_state " << (op.sql_state.empty() ? "-" : op.sql_state) << "\n";
  m << "error " << OneLine(op.error) << "\n";
  m << "arrow_schema " << Hex(op.arrow_schema) << "\n";
  if (op.schema) m << "hive_schema " << Hex(ThriftBytes(HiveSchema(*op.schema))) << "\n";
  for (const auto& c : op.chunks) {
    m << "chunk " << c.id << " " << c.start_row_offset << " " << c.row_count << " " << c.ipc_bytes << " "
      << c.served_bytes << " " << c.schema_message_bytes << " " << (c.lz4 ? 1 : 0) << "\n";
  }
  return m.str();
}

// Fills a remote Operation from a manifest; false when malformed.
bool ParseManifest(const std::string& text, Operation* op, std::string* state) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "quiver-manifest 1") return false;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    auto num = [&] { return std::strtoll(value.c_str(), nullptr, 10); };
    if (key == "state")
      *state = value;
    else if (key == "session")
      op->session_guid = Unhex(value).value_or("");
    else if (key == "type")
      op->type = static_cast<t::TOperationType::type>(num());
    else if (key == "exec_seqid")
      op->exec_seqid = static_cast<int32_t>(num());
    else if (key == "started_ms")
      op->started_ms = num();
    else if (key == "completed_ms")
      op->completed_ms = num();
    else if (key == "heartbeat_ms")
      op->heartbeat_ms = num();
    else if (key == "attempt")
      op->attempt = static_cast<int>(std::clamp<long long>(num(), 0, 1 << 16));
    else if (key == "expiry_ms")
      op->expiry_ms = num();
    else if (key == "inline")
      op->inline_mode = num() != 0;
    else if (key == "inline_lz4")
      op->inline_lz4 = num() != 0;
    else if (key == "chunk_lz4")
      op->chunk_lz4 = num() != 0;
    else if (key == "total_ipc_bytes")
      op->total_ipc_bytes = num();
    else if (key == "total_served_bytes")
      op->total_served_bytes = num();
    else if (key == "sql_state")
      op->sql_state = value == "-" ? "" : value;
    else if (key == "error")
      op->error = value;
    else if (key == "arrow_schema")
      op->arrow_schema = Unhex(value).value_or("");
    else if (key == "hive_schema") {
      t::TTableSchema schema;
      auto bytes = Unhex(value);
      if (!bytes || !FromThriftBytes(*bytes, &schema)) return false;
      op->hive_schema = std::move(schema);
    } else if (key == "chunk") {
      std::istringstream f(value);
      ChunkRef c;
      int lz4 = 0;
      if (!(f >> c.id >> c.start_row_offset >> c.row_count >> c.ipc_bytes >> c.served_bytes >> c.schema_message_bytes >>
            lz4) ||
          !fetch::IsValidChunkId(c.id)) {
        return false;
      }
      c.lz4 = lz4 != 0;
      op->chunks.push_back(std::move(c));
    }
  }
  return !state->empty();
}

bool SharedState::SessionClosed(const std::string& session_guid) {
  auto doc = store_->GetDocument(ClosedSessionDoc(Hex(session_guid)));
  return doc.ok() && doc->has_value();
}

Status SharedState::MarkSessionClosed(const std::string& session_guid) {
  const std::string sid = Hex(session_guid);
  // Kept while any server could still take the session's handle (its
  // lifetime, from the time its guid carries, and a minute of clock skew).
  int64_t until = NowEpochMs() + o_.session_idle_timeout_ms;
  if (const std::optional<int64_t> issued = HandleIssuedMs(session_guid))
    until = std::max(until, *issued + o_.session_max_lifetime_ms + 60 * 1000);
  QUIVER_RETURN_NOT_OK(store_->PutDocument(ClosedSessionDoc(sid), std::to_string(until)));
  return store_->PutDocument(ExpiryDoc(until, std::string(kSessionExpiryTag) + sid), "");
}

void SharedState::CloseSessionOperations(const std::string& session_guid) {
  const std::string sid = Hex(session_guid);
  auto names = store_->ListDocuments("sessions/" + sid + "/");
  if (!names.ok()) return;
  for (const auto& name : *names) {
    const std::string op_hex = name.substr(name.rfind('/') + 1);
    (void)Close(op_hex);
    (void)store_->RemoveDocument(name);
  }
}

Status SharedState::Announce(Operation* op, bool* session_closed) {
  const std::string index = SessionOpDoc(Hex(op->session_guid), Hex(op->guid));
  Status st = store_->PutDocument(index, "");
  // A CloseSession on another server writes its marker before it lists
  // the session's operations: either it lists this one or this sees it.
  *session_closed = st.ok() && SessionClosed(op->session_guid);
  if (st.ok() && !*session_closed && op->attempt == 0 && !op->statement.empty()) {
    st = store_->PutDocument(StatementDoc(Hex(op->guid)), StatementText(*op));
  }
  if (st.ok() && !*session_closed) st = store_->PutDocument(ManifestDoc(Hex(op->guid)), ManifestText(*op, "running"));
  if (!st.ok() || *session_closed) (void)store_->RemoveDocument(index);
  return st;
}

std::shared_ptr<Operation> SharedState::Load(const std::string& guid) {
  auto text = store_->GetDocument(ManifestDoc(Hex(guid)));
  auto op = std::make_shared<Operation>();
  op->guid = guid;
  op->remote = true;
  if (!text.ok()) {
    // The store failed: an operation in ERROR naming it, not a bad handle.
    op->failed = true;
    op->error = "the result store could not be read: " + text.status().ToString();
    op->sql_state = "HY000";
    return op;
  }
  if (!text->has_value()) return nullptr;
  std::string state;
  if (!ParseManifest(**text, op.get(), &state)) {
    op->failed = true;
    op->error = "the operation's manifest in the result store is malformed";
    return op;
  }
  if (state == "finished") {
    op->published = true;
    op->done = true;
    op->decided = true;
  } else if (state == "failed") {
    op->failed = true;
  } else if (state == "cancelled") {
    op->cancelled = true;
  } else if (auto marker = store_->GetDocument(CancelDoc(Hex(guid)));
             marker.ok() && marker->has_value() && **marker == "close") {
    return nullptr;  // closed (its session or itself) on another server; the owner is removing it
  } else if (NowEpochMs() - op->heartbeat_ms > o_.owner_stale_ms) {
    op->owner_stale = true;  // the caller may run it again (Failover)
    op->failed = true;
    op->error = "the server running this statement stopped (no status update for " +
                std::to_string((NowEpochMs() - op->heartbeat_ms) / 1000) + " s); run it again";
    op->sql_state = "HY000";
  }
  return op;
}

Status SharedState::Close(const std::string& op_hex) {
  auto guid = Unhex(op_hex);
  if (!guid || guid->size() != kHandleBytes) return Status::KeyError("malformed operation id");
  QUIVER_ASSIGN_OR_RETURN(auto text, store_->GetDocument(ManifestDoc(op_hex)));
  if (!text) return Status::KeyError("no such operation");
  Operation op;
  std::string state;
  if (ParseManifest(*text, &op, &state) && state == "running" && NowEpochMs() - op.heartbeat_ms <= o_.owner_stale_ms) {
    return store_->PutDocument(CancelDoc(op_hex), "close");
  }
  QUIVER_RETURN_NOT_OK(store_->RemoveDocument(ManifestDoc(op_hex)));
  for (const auto& c : op.chunks) store_->Remove(c.id);
  RemoveSideDocuments(op_hex, op.session_guid, op.expiry_ms);
  return Status::OK();
}

void SharedState::RemovePublished(const Operation& op) {
  (void)store_->RemoveDocument(ManifestDoc(Hex(op.guid)));
  for (const auto& c : op.chunks) store_->Remove(c.id);
  RemoveSideDocuments(Hex(op.guid), op.session_guid, op.expiry_ms);
}

void SharedState::RemoveDocuments(const Operation& op) {
  (void)store_->RemoveDocument(ManifestDoc(Hex(op.guid)));
  RemoveSideDocuments(Hex(op.guid), op.session_guid, op.expiry_ms);
}

void SharedState::RemoveSideDocuments(const std::string& op_hex, const std::string& session_guid, int64_t expiry_ms) {
  (void)store_->RemoveDocument(CursorDoc(op_hex));
  (void)store_->RemoveDocument(CancelDoc(op_hex));
  if (!session_guid.empty()) (void)store_->RemoveDocument(SessionOpDoc(Hex(session_guid), op_hex));
  if (expiry_ms > 0) (void)store_->RemoveDocument(ExpiryDoc(expiry_ms, op_hex));
  (void)store_->RemoveDocument(StatementDoc(op_hex));
  for (int a = 1; a <= o_.max_reruns; ++a) (void)store_->RemoveDocument(LeaseDoc(op_hex, a));
}

std::string StatementText(const Operation& op) {
  std::ostringstream m;
  m << "quiver-statement 1\n";
  m << "dialect " << sql::SqlDialectName(op.dialect) << "\n";
  m << "can_download " << (op.can_download ? 1 : 0) << "\n";
  m << "client_lz4 " << (op.client_lz4 ? 1 : 0) << "\n";
  m << "\n" << op.statement;
  return m.str();
}

bool ParseStatement(const std::string& text, Operation* op) {
  const size_t body = text.find("\n\n");
  if (body == std::string::npos || text.rfind("quiver-statement 1\n", 0) != 0) return false;
  std::istringstream in(text.substr(0, body));
  std::string line;
  bool dialect = false;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp), value = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "dialect") {
      auto d = sql::ParseSqlDialect(value);
      if (!d.ok()) return false;
      op->dialect = *d;
      dialect = true;
    } else if (key == "can_download") {
      op->can_download = value == "1";
    } else if (key == "client_lz4") {
      op->client_lz4 = value == "1";
    }
  }
  op->statement = text.substr(body + 2);
  return dialect && !op->statement.empty();
}

Status SharedState::LoadStatement(Operation* op) {
  QUIVER_ASSIGN_OR_RETURN(auto text, store_->GetDocument(StatementDoc(Hex(op->guid))));
  if (!text) return Status::KeyError("the statement is not in the result store (not a re-runnable statement)");
  if (!ParseStatement(*text, op)) return Status::Invalid("the statement document in the result store is malformed");
  return Status::OK();
}

Result<bool> SharedState::ClaimAttempt(const std::string& guid, int attempt, const std::string& server_token) {
  return store_->PutDocumentIfAbsent(LeaseDoc(Hex(guid), attempt), server_token);
}

bool SharedState::Superseded(const Operation& op) {
  auto lease = store_->GetDocument(LeaseDoc(Hex(op.guid), op.attempt + 1));
  return lease.ok() && lease->has_value();
}

void SharedState::RemoveAttemptChunks(const Operation& dead) {
  for (const auto& c : dead.chunks) store_->Remove(c.id);
  auto ids = store_->ListChunkIds(ChunkGroup(dead.guid, dead.attempt));
  if (ids.ok()) {
    for (const auto& id : *ids) store_->Remove(id);
  }
}

Status SharedState::WriteOutcome(const Operation& op, const std::string& text, bool close_requested) {
  const std::string op_hex = Hex(op.guid);
  if (close_requested) {
    const Status st = store_->RemoveDocument(ManifestDoc(op_hex));
    RemoveSideDocuments(op_hex, op.session_guid, 0);
    return st;
  }
  QUIVER_RETURN_NOT_OK(store_->PutDocument(ManifestDoc(op_hex), text));
  return store_->PutDocument(ExpiryDoc(op.expiry_ms, op_hex), "");
}

Status SharedState::RequestCancel(const std::string& guid) {
  return store_->PutDocument(CancelDoc(Hex(guid)), "cancel");
}

Status SharedState::SaveCursor(Operation* op) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(op->mu);
    text = CursorText(*op);
  }
  return store_->PutDocument(CursorDoc(Hex(op->guid)), text);
}

Status SharedState::LoadCursor(Operation* op) {
  QUIVER_ASSIGN_OR_RETURN(auto cursor, store_->GetDocument(CursorDoc(Hex(op->guid))));
  std::lock_guard<std::mutex> lock(op->mu);
  ParseCursor(cursor.value_or("0"), op);
  return Status::OK();
}

void SharedState::Heartbeat(Operation* op) {
  const std::string op_hex = Hex(op->guid);
  auto marker = store_->GetDocument(CancelDoc(op_hex));
  if (marker.ok() && marker->has_value()) {
    if (**marker == "close") op->close_requested = true;
    op->cancel = true;
    std::lock_guard<std::mutex> lock(op->mu);
    op->cv.notify_all();
    return;
  }
  if (Superseded(*op)) {
    // Another server found this one's status stale and runs the statement
    // again: this run stops and leaves the documents to it.
    op->superseded = true;
    op->cancel = true;
    std::lock_guard<std::mutex> lock(op->mu);
    op->cv.notify_all();
    return;
  }
  std::lock_guard<std::mutex> manifest_lock(op->manifest_mu);
  std::string text;
  {
    std::lock_guard<std::mutex> lock(op->mu);
    if (op->ended || op->done || op->failed || op->cancelled) return;
    text = ManifestText(*op, "running");
  }
  (void)store_->PutDocument(ManifestDoc(op_hex), text);
}

int64_t SharedState::ExpireDocuments(int64_t now_ms) {
  auto names = store_->ListDocuments("expiry/");
  if (!names.ok()) return 0;
  int64_t expired = 0;
  for (const auto& name : *names) {
    const std::string tail = name.substr(7);
    const size_t dash = tail.find('-');
    if (dash == std::string::npos) continue;
    const int64_t expiry = std::strtoll(tail.substr(0, dash).c_str(), nullptr, 10);
    if (expiry > now_ms) break;
    const std::string op_hex = tail.substr(dash + 1);
    if (op_hex.rfind(kSessionExpiryTag, 0) == 0) {
      // A closed session's marker has served its time.
      if (store_->RemoveDocument(ClosedSessionDoc(op_hex.substr(kSessionExpiryTag.size()))).ok()) {
        (void)store_->RemoveDocument(name);
      }
      continue;
    }
    const Status st = Close(op_hex);
    if (st.ok() || st.IsKeyError()) {
      (void)store_->RemoveDocument(name);
      ++expired;
    }
  }
  return expired;
}

}  // namespace quiver::server
