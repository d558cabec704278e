// quiver/fetch/s3_chunk_store.h — result chunks as objects in an S3 store
// (Ceph RGW, AWS S3, ...), handed out as SigV4 presigned GET links, so that
// downloads go to the store and never touch a quiver server.
//
// Layout under s3://BUCKET/PREFIX:
//   PREFIX/chunks/<id>   one chunk (its served bytes: an LZ4 frame or raw IPC)
//   PREFIX/<document>    documents (ChunkStore::PutDocument): manifests etc.
//
// Memory: Put uploads straight from the chunk's buffer (charged by the
// chunk writer to its pool, normally the service's "chunks" pool) without a
// copy, and the store keeps no reference after Put returns, so an uploaded
// chunk costs the server nothing. Get (inline results only) copies the
// object into a buffer of `options.pool`.
//
// Links: presigned for the endpoint's host:port (the name clients must
// use; it must be in the store certificate), expiring at the requested
// time, capped at 7 days (the SigV4 limit); ChunkLink.expiry_ms reports the
// real expiry.
//
// Errors: IOError naming the store, method, key and HTTP status (see
// s3_client.h). A Remove (or document removal) that fails, e.g. while the
// store is down, is kept and retried by Sweep; the bucket's lifecycle rule
// is the backstop for a server that dies.
//
// Thread safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "quiver/fetch/chunk_store.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/objstore/s3_client.h"

namespace quiver::fetch {

struct S3ChunkStoreOptions {
  /// The client (endpoint, bucket, credentials, retries). Required.
  objstore::S3ClientOptions client;
  /// Key prefix (no leading/trailing '/'; may be empty).
  std::string prefix;
  /// Pool for Get's buffers. Required.
  MemoryPool* pool = nullptr;
  /// Largest object Get reads (bytes).
  int64_t max_get_bytes = int64_t{1} << 30;
  /// At Make: check the bucket answers (HEAD) so that a missing bucket or
  /// wrong credentials fail at start, and set the lifecycle backstop rule
  /// (objects under the prefix expire after lifecycle_days; 0 = no rule).
  bool check_bucket = true;
  int lifecycle_days = 1;
};

class S3ChunkStore : public ChunkStore {
 public:
  /// Errors: Invalid for options; IOError when check_bucket and the bucket
  /// is missing, refuses the credentials or the store does not answer.
  static Result<std::unique_ptr<S3ChunkStore>> Make(S3ChunkStoreOptions options);

  Result<std::string> Put(std::shared_ptr<Buffer> bytes, int64_t expiry_ms) override;
  /// Chunk keys "chunks/<id>" with the id starting with `group`.
  Result<std::string> PutGrouped(std::shared_ptr<Buffer> bytes, int64_t expiry_ms, std::string_view group) override;
  /// A LIST of "chunks/<group>".
  Result<std::vector<std::string>> ListChunkIds(std::string_view group) const override;
  Result<ChunkLink> Link(const std::string& id, int64_t link_expiry_ms) const override;
  Result<std::shared_ptr<Buffer>> Get(const std::string& id) const override;
  void Remove(const std::string& id) override;

  bool shared() const override { return true; }
  Status PutDocument(const std::string& name, std::string_view bytes) override;
  /// S3Client::PutIfAbsent; a 412 whose object holds `bytes` (this call's
  /// own write, whose reply was lost and retried) is a win too.
  Result<bool> PutDocumentIfAbsent(const std::string& name, std::string_view bytes) override;
  Result<std::optional<std::string>> GetDocument(const std::string& name) const override;
  Status RemoveDocument(const std::string& name) override;
  Result<std::vector<std::string>> ListDocuments(const std::string& prefix) const override;
  std::string Describe() const override;
  /// Retries the removals that failed (store down), at most every 5 s.
  void Sweep(int64_t now_ms) override;

  /// The object key of chunk `id` (PREFIX/chunks/<id>).
  std::string ChunkKey(const std::string& id) const;
  objstore::S3Client* client() const { return client_.get(); }
  int64_t failed_removes() const { return failed_removes_; }
  /// Keys whose DELETE failed and will be retried by Sweep.
  size_t pending_removes() const;

 private:
  S3ChunkStore(S3ChunkStoreOptions options, std::unique_ptr<objstore::S3Client> client);
  std::string Key(const std::string& name) const;

  S3ChunkStoreOptions o_;
  std::unique_ptr<objstore::S3Client> client_;
  std::atomic<int64_t> failed_removes_{0};
  mutable std::mutex pending_mu_;
  std::vector<std::string> pending_;  // keys to DELETE again (bounded)
  int64_t last_retry_ms_ = 0;
};

}  // namespace quiver::fetch
