// quiver/formats/s3_files.h — table files in an S3 object store (issue 36
// section 3): `s3://BUCKET/KEY` URLs opened as RandomAccessSources (ReadAt
// is a ranged GET), `s3://BUCKET/PREFIX/*.parquet` patterns expanded by a
// listing, and the ends of objects (where Parquet keeps its footer) cached
// per process so that a repeated query reads no footer again.
//
// Opening an object: one HEAD (size and ETag; 404 -> the bucket is checked
// so that the error says "no such bucket" or "no such object"), then, unless
// the cache holds it, one GET of the object's last tail_bytes. The cache is
// keyed by (URL, ETag, size): an object replaced under the same key has
// another ETag and is read afresh; every later ranged GET of a source
// carries `If-Match: ETAG`, so bytes of another version never mix with the
// footer read (HTTP 412 is an IOError naming the URL). ReadAt inside the
// cached tail is a view of it (no request); elsewhere it is a ranged GET
// (retried by the client, objstore/s3_client.h) of exactly the bytes asked
// for, copied into a buffer from the caller's pool. ReadRanges (what the
// Parquet reader calls with the column chunks of one row group) merges
// ranges whose gap is at most coalesce_gap_bytes and sends up to
// max_parallel_gets GETs at once.
//
// Errors name the URL and the HTTP status: 403 (credentials), 404 (no such
// bucket / no such object: KeyError with SQLSTATE 42P01, as a missing local
// file), 412 (object replaced while read), and the retry budget spent.
//
// Thread safety: S3Files and the sources it opens may be used from any
// number of threads (clients, cache and counters are synchronised).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/source.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/objstore/s3_client.h"

namespace quiver::formats {

/// True when `path` starts with "s3://".
bool IsS3Url(std::string_view path);

/// "s3://BUCKET/KEY" split (the key may be empty or end in '/'). Errors:
/// Invalid naming the URL for another scheme or a malformed bucket name.
struct S3Url {
  std::string bucket;
  std::string key;
};
Result<S3Url> ParseS3Url(const std::string& url);

/// Byte ranges merged for fewer requests: `ranges` (any order, lengths
/// >= 0) sorted by offset, and neighbours whose gap is at most
/// `max_gap_bytes` (overlaps included) joined while the joined range stays
/// within `max_merged_bytes` (a range longer than that on its own stays as
/// it is). Pure.
std::vector<ByteRange> CoalesceByteRanges(std::span<const ByteRange> ranges, int64_t max_gap_bytes,
                                          int64_t max_merged_bytes);

struct S3FilesOptions {
  /// Endpoint, region, credentials, TLS and the retry budget of every
  /// request; `bucket` is ignored (each URL names its own).
  objstore::S3ClientOptions client;
  /// Where the cached object tails live (required; charged while cached).
  MemoryPool* pool = nullptr;
  /// Bytes read from an object's end when it is opened (a Parquet footer
  /// and its length within it need no second request). 8 .. 64 MiB.
  int64_t tail_bytes = int64_t{64} << 10;
  /// The most bytes of tails kept; the least recently used go first.
  int64_t cache_capacity_bytes = int64_t{64} << 20;
  /// ReadRanges: ranges this close are fetched as one GET (the bytes
  /// between are read and dropped), up to max_merged_bytes per GET.
  int64_t coalesce_gap_bytes = int64_t{8} << 10;
  int64_t max_merged_bytes = int64_t{64} << 20;
  /// ReadRanges: GETs in flight at once for one call (>= 1).
  int max_parallel_gets = 4;
  /// Objects a pattern may expand to at most.
  int64_t max_listed_objects = 100000;
};

/// Counters since Make (monotonic; relaxed, exact once calls returned).
struct S3FilesStats {
  int64_t heads = 0;            ///< HEAD requests (one per open)
  int64_t gets = 0;             ///< ranged GETs (tails and data)
  int64_t get_bytes = 0;        ///< bytes those GETs returned
  int64_t lists = 0;            ///< listings (one per pattern or folder)
  int64_t tail_cache_hits = 0;  ///< opens that found the tail cached
  int64_t tail_cache_misses = 0;
};

class S3Files : public std::enable_shared_from_this<S3Files> {
 public:
  /// Errors: Invalid for a missing pool, an endpoint the client refuses
  /// (checked with a placeholder bucket), limits out of range.
  static Result<std::shared_ptr<S3Files>> Make(S3FilesOptions options);
  ~S3Files();

  /// Opens object `url` ("s3://BUCKET/KEY"): see the file comment. The
  /// source holds this S3Files alive. Errors: KeyError 42P01 naming the
  /// URL ("no such object" / "no such bucket"); IOError (403, 5xx after
  /// retries, naming the URL and status); Invalid for a malformed URL or
  /// a key ending in '/'.
  Result<std::shared_ptr<RandomAccessSource>> Open(const std::string& url);

  /// The object URLs `pattern` names, sorted: a key with glob characters
  /// (`*`, `?`, `[...]`, matched per path segment as fnmatch(3) with
  /// FNM_PATHNAME) lists the keys under its fixed prefix; a key ending in
  /// one of `extensions` is itself (not checked here: Open says whether it
  /// exists); another key that is an object (HEAD) is itself; otherwise (or for a key ending in '/') the
  /// objects under KEY/ whose names end in one of `extensions` (hidden
  /// names, '.' or '_' first, skipped). Errors: KeyError 42P01 naming the
  /// pattern when nothing matches; IOError from the store (403, no such
  /// bucket); Invalid past max_listed_objects.
  Result<std::vector<std::string>> Expand(const std::string& pattern, std::span<const std::string_view> extensions);

  S3FilesStats stats() const;
  /// "object store https://HOST:PORT" (for messages).
  std::string Describe() const;

 private:
  friend class S3Source;
  explicit S3Files(S3FilesOptions options) : o_(std::move(options)) {}
  Result<std::shared_ptr<objstore::S3Client>> ClientFor(const std::string& bucket);
  std::shared_ptr<Buffer> CachedTail(const std::string& cache_key);
  void CacheTail(const std::string& cache_key, std::shared_ptr<Buffer> tail);
  Status NotFound(objstore::S3Client* client, const std::string& url, const std::string& what);

  S3FilesOptions o_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<objstore::S3Client>> clients_;
  struct CacheEntry {
    std::shared_ptr<Buffer> tail;
    uint64_t last_use = 0;
  };
  std::map<std::string, CacheEntry> cache_;
  int64_t cache_bytes_ = 0;
  uint64_t clock_ = 0;
  std::atomic<int64_t> heads_{0}, gets_{0}, get_bytes_{0}, lists_{0}, hits_{0}, misses_{0};
};

}  // namespace quiver::formats
