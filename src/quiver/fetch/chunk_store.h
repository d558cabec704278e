// quiver/fetch/chunk_store.h — where served result chunks live between the
// chunk writer and the downloads (CloudFetch files).
//
// ChunkStore is the small interface (put, link, get, remove) a server needs;
// LocalChunkStore keeps chunks in memory up to a byte budget and spills the
// rest to files in a private directory. A later store can put chunks into
// object storage and hand out that store's presigned links instead.
//
// Lifetimes: a chunk lives until Remove(id), RemoveExpired(now) past its
// expiry, or the store's destruction; at each of these its memory is released
// (the store's reference; a download in progress may keep the bytes alive
// until it ends) and its spill file is unlinked. Nothing outlives the store:
// the destructor removes every chunk and the spill directory it created.
//
// Thread safety: all methods are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/disk_budget.h"

namespace quiver::fetch {

/// A signed link to a stored chunk (TSparkArrowResultLink fileLink + expiryTime).
struct ChunkLink {
  std::string url;
  int64_t expiry_ms = 0;  ///< epoch milliseconds
};

class ChunkStore {
 public:
  virtual ~ChunkStore() = default;
  /// Stores `bytes` (a chunk's served bytes) until `expiry_ms` (epoch ms;
  /// <= 0: no expiry) and returns its id (kChunkIdChars hex digits). Errors:
  /// OutOfMemory / IOError when neither the budget nor the spill can take it
  /// (the message names both); nothing is kept then.
  virtual Result<std::string> Put(std::shared_ptr<Buffer> bytes, int64_t expiry_ms) = 0;
  /// Put, with an id that starts with `group` (kChunkGroupChars lower-case
  /// hex digits; the rest random), so that every chunk of one group (one
  /// attempt at an operation) can be found again by ListChunkIds, also the
  /// ones a server that died wrote after it last said which it had. The
  /// default ignores the group (a process-local store dies with its
  /// server). Errors: Invalid for a malformed group; as Put.
  virtual Result<std::string> PutGrouped(std::shared_ptr<Buffer> bytes, int64_t expiry_ms, std::string_view group) {
    return Put(std::move(bytes), expiry_ms);
  }
  /// The ids of the chunks of `group` (PutGrouped), in byte order.
  /// NotImplemented for stores that are not shared; IOError from the store.
  virtual Result<std::vector<std::string>> ListChunkIds(std::string_view group) const {
    return Status::NotImplemented("this chunk store does not list chunks");
  }
  /// A link that downloads the chunk until `link_expiry_ms`. NotFound-style
  /// KeyError when the id is unknown.
  virtual Result<ChunkLink> Link(const std::string& id, int64_t link_expiry_ms) const = 0;
  /// The chunk's bytes (memory, or a read-only mapping of its spill file
  /// that stays valid after a Remove). KeyError when unknown or removed.
  virtual Result<std::shared_ptr<Buffer>> Get(const std::string& id) const = 0;
  /// Removes a chunk (idempotent: unknown ids are ignored).
  virtual void Remove(const std::string& id) = 0;
  /// Moves a chunk that is in memory to disk (LocalChunkStore: a spill
  /// file within the disk budget); later Gets read it from there. Returns
  /// whether it moved. The default (stores that keep nothing in memory)
  /// moves nothing.
  virtual bool SpillServed(const std::string& id) { return false; }

  // Documents: small named objects beside the chunks (operation manifests,
  // cancel markers, session indexes) that let servers sharing one store
  // answer for each other's operations. Only shared stores hold them.

  /// True when other servers may see this store's chunks and documents
  /// (an object store); false for a process-local store.
  virtual bool shared() const { return false; }
  /// Writes (replaces) document `name` ("a/b" style, [A-Za-z0-9/_.-]).
  /// NotImplemented for stores that are not shared; IOError from the store.
  virtual Status PutDocument(const std::string& name, std::string_view bytes) {
    return Status::NotImplemented("this chunk store keeps no documents");
  }
  /// The document's bytes, std::nullopt when absent. Errors as PutDocument.
  virtual Result<std::optional<std::string>> GetDocument(const std::string& name) const {
    return Status::NotImplemented("this chunk store keeps no documents");
  }
  /// Removes a document (absent is success). Errors as PutDocument.
  virtual Status RemoveDocument(const std::string& name) {
    return Status::NotImplemented("this chunk store keeps no documents");
  }
  /// Writes document `name` only if it does not exist (a conditional
  /// write: of servers racing for one name exactly one gets true; a lease).
  /// NotImplemented for stores that are not shared; IOError from the store.
  virtual Result<bool> PutDocumentIfAbsent(const std::string& name, std::string_view bytes) {
    return Status::NotImplemented("this chunk store keeps no documents");
  }
  /// Names of the documents starting with `prefix`, in byte order.
  virtual Result<std::vector<std::string>> ListDocuments(const std::string& prefix) const {
    return Status::NotImplemented("this chunk store keeps no documents");
  }
  /// Periodic housekeeping (the server's sweep): a remote store retries
  /// the removals that failed while it was unreachable.
  virtual void Sweep(int64_t now_ms) {}
  /// One line describing where chunks go (for logs and messages).
  virtual std::string Describe() const { return "local chunk store"; }
};

struct LocalChunkStoreOptions {
  /// Bytes of chunks kept in memory; chunks beyond spill to `spill_dir`.
  /// 0 = spill everything; -1 = no budget (never spill).
  int64_t memory_budget_bytes = int64_t{1} << 30;
  /// Directory for spill files; empty = a private directory made under
  /// $TMPDIR (or /tmp) at the first spill ("quiver-spill-<pid>-<n>", swept
  /// by the next server when this process dies: memory/spill_directory.h)
  /// and removed by the destructor (a store that never spills makes
  /// none). A given directory must exist;
  /// only the store's own files are removed.
  std::string spill_dir;
  /// Bytes of spill files at most; -1 = no limit; 0 = spilling disabled.
  /// Ignored when `disk_budget` is given (its limits apply).
  int64_t spill_limit_bytes = -1;
  /// Where the bytes of spill files are charged before they are written
  /// and given back when they are removed (memory/disk_budget.h): a
  /// server's one budget, shared with its statements' operator spill.
  /// Null: a private budget of `spill_limit_bytes`.
  std::shared_ptr<DiskBudget> disk_budget;
  /// Base of links, e.g. "https://127.0.0.1:8443" (no trailing slash); the
  /// link is base + "/files/<id>?e=..&s=..".
  std::string link_base_url;
};

/// Counters of a LocalChunkStore.
struct ChunkStoreStats {
  int64_t chunks = 0;          ///< live chunks
  int64_t memory_bytes = 0;    ///< bytes of live in-memory chunks
  int64_t spilled_bytes = 0;   ///< bytes of live spill files
  int64_t spilled_chunks = 0;  ///< live spilled chunks
  int64_t peak_memory_bytes = 0;
  int64_t total_spilled_chunks = 0;  ///< chunks ever spilled
};

class LocalChunkStore : public ChunkStore {
 public:
  /// Errors: IOError when a given spill directory does not exist, Invalid
  /// for a spill_limit_bytes below -1 (a private
  /// one that cannot be made fails the first Put that spills, IOError).
  static Result<std::unique_ptr<LocalChunkStore>> Make(LocalChunkStoreOptions options, LinkSigner signer);
  ~LocalChunkStore() override;

  Result<std::string> Put(std::shared_ptr<Buffer> bytes, int64_t expiry_ms) override;
  Result<ChunkLink> Link(const std::string& id, int64_t link_expiry_ms) const override;
  Result<std::shared_ptr<Buffer>> Get(const std::string& id) const override;
  void Remove(const std::string& id) override;
  /// Removes the chunks whose expiry is <= now_ms; returns how many.
  int64_t RemoveExpired(int64_t now_ms);
  /// A chunk that has been served in full (or handed out long enough ago)
  /// leaves memory: written to a spill file (within the spill limit) and
  /// read from there if it is asked for (again: a retried download); the memory goes once the last reader of
  /// the in-memory bytes lets go. Returns whether it moved: false for an
  /// unknown or already spilled chunk, with spilling disabled, past the
  /// spill limit or when the write fails (the chunk then stays in memory,
  /// nothing is lost). Thread-safe.
  bool SpillServed(const std::string& id) override;

  const LinkSigner& signer() const { return signer_; }
  /// The spill directory: the given one, or the private one once made
  /// (empty before the first spill). Thread-safe.
  std::string spill_dir() const;
  ChunkStoreStats stats() const;
  /// Count of regular files now in the spill directory (tests: 0 after
  /// cleanup; 0 before the first spill made a private directory).
  int64_t CountSpillFiles() const;

 private:
  struct Entry {
    std::shared_ptr<Buffer> memory;  // null when spilled
    std::string spill_path;          // empty when in memory
    DiskReservation disk;            // the spill file's bytes
    int64_t size_bytes = 0;
    int64_t expiry_ms = 0;
  };
  LocalChunkStore(LocalChunkStoreOptions options, LinkSigner signer, std::string spill_dir, bool own_dir);
  void EraseLocked(std::map<std::string, Entry>::iterator it);

  LocalChunkStoreOptions options_;
  std::shared_ptr<DiskBudget> disk_;  // options_.disk_budget or a private one
  LinkSigner signer_;
  // Makes the private spill directory if it is not made yet (mu_ held).
  Status MakeSpillDirLocked();
  std::string spill_dir_;  // guarded by mu_ (set once, at the first spill, when private)
  bool own_spill_dir_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  ChunkStoreStats stats_;
};

/// A fresh random chunk id (kChunkIdChars lowercase hex, 128 bits from
/// RAND_bytes). Errors: IOError when the generator fails.
Result<std::string> NewChunkId();

/// Hex digits of a chunk group (ChunkStore::PutGrouped): the first
/// kChunkGroupChars of a grouped chunk's id; the other kChunkIdChars -
/// kChunkGroupChars (64 bits) stay random.
inline constexpr size_t kChunkGroupChars = 16;

/// NewChunkId whose first kChunkGroupChars digits are `group`. Errors:
/// Invalid unless `group` is kChunkGroupChars lower-case hex digits;
/// IOError as NewChunkId.
Result<std::string> NewGroupedChunkId(std::string_view group);

}  // namespace quiver::fetch
