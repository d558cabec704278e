// quiver/fetch/s3_chunk_store.cc — see s3_chunk_store.h.
#include "quiver/fetch/s3_chunk_store.h"

#include <algorithm>
#include <cstring>

#include "quiver/fetch/link_signer.h"

namespace quiver::fetch {
namespace {
constexpr size_t kMaxPendingRemoves = 100000;
}  // namespace

Result<std::unique_ptr<S3ChunkStore>> S3ChunkStore::Make(S3ChunkStoreOptions options) {
  if (!options.pool) return Status::Invalid("S3 chunk store: a pool is required");
  if (!options.prefix.empty() && (options.prefix.front() == '/' || options.prefix.back() == '/')) {
    return Status::Invalid("S3 chunk store: the prefix must not start or end with '/'");
  }
  QUIVER_ASSIGN_OR_RETURN(auto client, objstore::S3Client::Make(options.client));
  if (options.check_bucket) {
    QUIVER_RETURN_NOT_OK(client->CheckBucket());
    if (options.lifecycle_days > 0) {
      const Status st =
          client->PutLifecycle(options.prefix.empty() ? "" : options.prefix + "/", options.lifecycle_days);
      if (!st.ok()) return Status::IOError("S3 chunk store: setting the lifecycle rule: " + st.message());
    }
  }
  return std::unique_ptr<S3ChunkStore>(new S3ChunkStore(std::move(options), std::move(client)));
}

S3ChunkStore::S3ChunkStore(S3ChunkStoreOptions options, std::unique_ptr<objstore::S3Client> client)
    : o_(std::move(options)), client_(std::move(client)) {}

std::string S3ChunkStore::Key(const std::string& name) const {
  return o_.prefix.empty() ? name : o_.prefix + "/" + name;
}

std::string S3ChunkStore::ChunkKey(const std::string& id) const { return Key("chunks/" + id); }

std::string S3ChunkStore::Describe() const {
  return client_->Describe() + (o_.prefix.empty() ? "" : " prefix '" + o_.prefix + "'");
}

Result<std::string> S3ChunkStore::Put(std::shared_ptr<Buffer> bytes, int64_t expiry_ms) {
  return PutGrouped(std::move(bytes), expiry_ms, {});
}

Result<std::vector<std::string>> S3ChunkStore::ListChunkIds(std::string_view group) const {
  QUIVER_ASSIGN_OR_RETURN(auto keys, client_->List(ChunkKey(std::string(group))));
  for (auto& k : keys) k = k.substr(std::min(k.size(), k.rfind('/') + 1));
  return keys;
}

Result<bool> S3ChunkStore::PutDocumentIfAbsent(const std::string& name, std::string_view bytes) {
  QUIVER_ASSIGN_OR_RETURN(
      bool created, client_->PutIfAbsent(Key(name), std::span<const uint8_t>(
                                                        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
  if (created) return true;
  QUIVER_ASSIGN_OR_RETURN(auto existing, client_->Get(Key(name), int64_t{1} << 20));
  return existing.has_value() && *existing == bytes;
}

Result<std::string> S3ChunkStore::PutGrouped(std::shared_ptr<Buffer> bytes, int64_t expiry_ms, std::string_view group) {
  if (!bytes) return Status::Invalid("S3 chunk store: null chunk");
  QUIVER_ASSIGN_OR_RETURN(auto id, group.empty() ? NewChunkId() : NewGroupedChunkId(group));
  const Status st = client_->Put(ChunkKey(id), bytes->span());
  if (!st.ok()) {
    // The store may have kept the object although the reply was lost (it
    // went down mid-request): Sweep deletes the key once it answers again.
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (pending_.size() < kMaxPendingRemoves) pending_.push_back(ChunkKey(id));
    return st;
  }
  return id;
}

Result<ChunkLink> S3ChunkStore::Link(const std::string& id, int64_t link_expiry_ms) const {
  if (!IsValidChunkId(id)) return Status::KeyError("S3 chunk store: malformed chunk id");
  const int64_t now_ms = NowEpochMs();
  const int64_t now_s = now_ms / 1000;
  // Whole seconds from the signing second, rounded up, within 1 s .. 7 days.
  int64_t expires_s = (link_expiry_ms - now_s * 1000 + 999) / 1000;
  expires_s = std::clamp<int64_t>(expires_s, 1, objstore::kMaxPresignExpirySeconds);
  QUIVER_ASSIGN_OR_RETURN(auto url, client_->PresignGet(ChunkKey(id), now_s, expires_s));
  return ChunkLink{std::move(url), std::min(link_expiry_ms, (now_s + expires_s) * 1000)};
}

Result<std::shared_ptr<Buffer>> S3ChunkStore::Get(const std::string& id) const {
  if (!IsValidChunkId(id)) return Status::KeyError("S3 chunk store: malformed chunk id");
  QUIVER_ASSIGN_OR_RETURN(auto body, client_->Get(ChunkKey(id), o_.max_get_bytes));
  if (!body) return Status::KeyError("S3 chunk store: chunk " + id + " is not in " + Describe());
  QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(o_.pool, static_cast<int64_t>(body->size())));
  if (!body->empty()) std::memcpy(buf->mutable_data(), body->data(), body->size());
  return buf;
}

void S3ChunkStore::Remove(const std::string& id) {
  if (!IsValidChunkId(id)) return;
  const std::string key = ChunkKey(id);
  if (!client_->Delete(key).ok()) {
    ++failed_removes_;
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (pending_.size() < kMaxPendingRemoves) pending_.push_back(key);
  }
}

size_t S3ChunkStore::pending_removes() const {
  std::lock_guard<std::mutex> lock(pending_mu_);
  return pending_.size();
}

void S3ChunkStore::Sweep(int64_t now_ms) {
  std::vector<std::string> keys;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (pending_.empty() || now_ms - last_retry_ms_ < 5000) return;
    last_retry_ms_ = now_ms;
    keys.swap(pending_);
  }
  std::vector<std::string> still;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!client_->Delete(keys[i]).ok()) {
      still.assign(keys.begin() + static_cast<std::ptrdiff_t>(i), keys.end());  // still down: try later
      break;
    }
  }
  std::lock_guard<std::mutex> lock(pending_mu_);
  pending_.insert(pending_.end(), still.begin(), still.end());
}

Status S3ChunkStore::PutDocument(const std::string& name, std::string_view bytes) {
  return client_->Put(Key(name),
                      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

Result<std::optional<std::string>> S3ChunkStore::GetDocument(const std::string& name) const {
  return client_->Get(Key(name), int64_t{64} << 20);
}

Status S3ChunkStore::RemoveDocument(const std::string& name) {
  Status st = client_->Delete(Key(name));
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (pending_.size() < kMaxPendingRemoves) pending_.push_back(Key(name));
  }
  return st;
}

Result<std::vector<std::string>> S3ChunkStore::ListDocuments(const std::string& prefix) const {
  QUIVER_ASSIGN_OR_RETURN(auto keys, client_->List(Key(prefix)));
  const size_t cut = o_.prefix.empty() ? 0 : o_.prefix.size() + 1;
  for (auto& k : keys) k = k.substr(std::min(cut, k.size()));
  return keys;
}

}  // namespace quiver::fetch
