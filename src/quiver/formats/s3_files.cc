// quiver/formats/s3_files.cc — see s3_files.h.
#include "quiver/formats/s3_files.h"

#include <fnmatch.h>

#include <algorithm>
#include <thread>

namespace quiver::formats {

namespace {

constexpr int64_t kMaxGetBytes = int64_t{1} << 30;  // S3Client::GetRange's bound per request

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

/// An object opened by S3Files::Open (see s3_files.h).
class S3Source final : public RandomAccessSource {
 public:
  S3Source(std::shared_ptr<S3Files> files, std::shared_ptr<objstore::S3Client> client, std::string url, std::string key,
           std::string etag, int64_t size_bytes, std::shared_ptr<Buffer> tail)
      : files_(std::move(files)),
        client_(std::move(client)),
        url_(std::move(url)),
        key_(std::move(key)),
        etag_(std::move(etag)),
        size_bytes_(size_bytes),
        tail_(std::move(tail)) {}
  int64_t size() const override { return size_bytes_; }
  const std::string& name() const override { return url_; }
  bool remote() const override { return true; }

  Result<std::shared_ptr<Buffer>> ReadAt(int64_t offset, int64_t length, MemoryPool* pool) override {
    QUIVER_RETURN_NOT_OK(CheckRange(offset, length));
    const int64_t tail_start = size_bytes_ - (tail_ ? tail_->size() : 0);
    if (length == 0) return Buffer::Allocate(pool, 0);
    if (tail_ && offset >= tail_start) return Buffer::Slice(tail_, offset - tail_start, length);
    QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::Allocate(pool, length));
    for (int64_t done = 0; done < length;) {
      const int64_t piece = std::min(length - done, kMaxGetBytes);
      files_->gets_.fetch_add(1, std::memory_order_relaxed);
      // Straight into the pool buffer (no string grown and copied).
      auto got = client_->GetRangeInto(key_, offset + done, piece, out->mutable_data() + done, etag_);
      if (!got.ok()) return Status::IOError(url_ + ": " + got.status().message());
      if (!got->has_value()) {
        return Status::IOError(url_ + ": the object is gone (HTTP 404 on a ranged GET after it was opened)");
      }
      const int64_t bytes = **got;
      files_->get_bytes_.fetch_add(bytes, std::memory_order_relaxed);
      if (bytes != piece) {
        return Status::IOError(url_ + ": GET of bytes [" + std::to_string(offset + done) + ", +" +
                               std::to_string(piece) + ") answered " + std::to_string(bytes) +
                               " bytes (the object is shorter than when opened)");
      }
      done += piece;
    }
    return out;
  }

  Result<std::vector<std::shared_ptr<Buffer>>> ReadRanges(std::span<const ByteRange> ranges,
                                                          MemoryPool* pool) override {
    for (const ByteRange& r : ranges) QUIVER_RETURN_NOT_OK(CheckRange(r.offset, r.length));
    if (ranges.empty()) return std::vector<std::shared_ptr<Buffer>>{};
    const S3FilesOptions& o = files_->o_;
    const std::vector<ByteRange> merged = CoalesceByteRanges(ranges, o.coalesce_gap_bytes, o.max_merged_bytes);
    std::vector<Result<std::shared_ptr<Buffer>>> got(merged.size(), Status::Invalid("not read"));
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next.fetch_add(1); i < merged.size(); i = next.fetch_add(1)) {
        got[i] = ReadAt(merged[i].offset, merged[i].length, pool);
      }
    };
    const size_t helpers = std::min<size_t>(merged.size(), static_cast<size_t>(o.max_parallel_gets)) - 1;
    std::vector<std::thread> threads;
    threads.reserve(helpers);
    for (size_t t = 0; t < helpers; ++t) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    for (auto& g : got) QUIVER_RETURN_NOT_OK(g.status());
    // Each range is a view of the merged read that holds it.
    std::vector<std::shared_ptr<Buffer>> out;
    out.reserve(ranges.size());
    for (const ByteRange& r : ranges) {
      auto it = std::upper_bound(merged.begin(), merged.end(), r.offset,
                                 [](int64_t off, const ByteRange& m) { return off < m.offset; });
      const size_t m = static_cast<size_t>(it - merged.begin()) - 1;  // merged[0].offset <= every offset
      if (r.offset + r.length > merged[m].offset + merged[m].length) {
        return Status::Invalid(url_ + ": range [" + std::to_string(r.offset) + ", +" + std::to_string(r.length) +
                               ") outside its merged read (a bug)");
      }
      out.push_back(Buffer::Slice(*got[m], r.offset - merged[m].offset, r.length));
    }
    return out;
  }

 private:
  std::shared_ptr<S3Files> files_;
  std::shared_ptr<objstore::S3Client> client_;
  std::string url_, key_, etag_;
  int64_t size_bytes_ = 0;
  std::shared_ptr<Buffer> tail_;  // the object's last bytes (cached; never changed)
};

bool IsS3Url(std::string_view path) { return path.substr(0, 5) == "s3://"; }

Result<S3Url> ParseS3Url(const std::string& url) {
  if (!IsS3Url(url)) return Status::Invalid("'" + url + "' is not an s3://BUCKET/KEY URL");
  const std::string rest = url.substr(5);
  const size_t slash = rest.find('/');
  S3Url u;
  u.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) u.key = rest.substr(slash + 1);
  bool ok = u.bucket.size() >= 3 && u.bucket.size() <= 63;
  for (char c : u.bucket) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-');
  if (!ok) return Status::Invalid("'" + url + "': bucket name '" + u.bucket + "' must be 3..63 of a-z 0-9 . -");
  return u;
}

std::vector<ByteRange> CoalesceByteRanges(std::span<const ByteRange> ranges, int64_t max_gap_bytes,
                                          int64_t max_merged_bytes) {
  std::vector<ByteRange> sorted(ranges.begin(), ranges.end());
  std::sort(sorted.begin(), sorted.end(), [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  std::vector<ByteRange> out;
  for (const ByteRange& r : sorted) {
    if (!out.empty()) {
      ByteRange& last = out.back();
      const int64_t end = last.offset + last.length;
      const int64_t new_end = std::max(end, r.offset + r.length);
      if (r.offset - end <= max_gap_bytes && new_end - last.offset <= max_merged_bytes) {
        last.length = new_end - last.offset;
        continue;
      }
      if (r.offset + r.length <= end) {
        // Inside the last range, which is already too long to grow.
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

Result<std::shared_ptr<S3Files>> S3Files::Make(S3FilesOptions options) {
  if (options.pool == nullptr) return Status::Invalid("S3 files: no pool for the cached object tails");
  if (options.tail_bytes < 8 || options.tail_bytes > (int64_t{64} << 20) || options.cache_capacity_bytes < 0 ||
      options.coalesce_gap_bytes < 0 || options.max_merged_bytes < 1 || options.max_parallel_gets < 1 ||
      options.max_listed_objects < 1) {
    return Status::Invalid(
        "S3 files: tail_bytes 8 .. 64 MiB, cache capacity and coalesce gap >= 0, max_merged_bytes, "
        "max_parallel_gets and max_listed_objects >= 1 are required");
  }
  objstore::S3ClientOptions check = options.client;
  check.bucket = "placeholder";
  QUIVER_RETURN_NOT_OK(objstore::S3Client::Make(std::move(check)).status());
  return std::shared_ptr<S3Files>(new S3Files(std::move(options)));
}

S3Files::~S3Files() = default;

std::string S3Files::Describe() const { return "object store " + o_.client.endpoint; }

S3FilesStats S3Files::stats() const {
  S3FilesStats s;
  s.heads = heads_.load(std::memory_order_relaxed);
  s.gets = gets_.load(std::memory_order_relaxed);
  s.get_bytes = get_bytes_.load(std::memory_order_relaxed);
  s.lists = lists_.load(std::memory_order_relaxed);
  s.tail_cache_hits = hits_.load(std::memory_order_relaxed);
  s.tail_cache_misses = misses_.load(std::memory_order_relaxed);
  return s;
}

Result<std::shared_ptr<objstore::S3Client>> S3Files::ClientFor(const std::string& bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clients_.find(bucket);
  if (it != clients_.end()) return it->second;
  objstore::S3ClientOptions co = o_.client;
  co.bucket = bucket;
  QUIVER_ASSIGN_OR_RETURN(auto client, objstore::S3Client::Make(std::move(co)));
  std::shared_ptr<objstore::S3Client> shared(std::move(client));
  clients_.emplace(bucket, shared);
  return shared;
}

std::shared_ptr<Buffer> S3Files::CachedTail(const std::string& cache_key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(cache_key);
  if (it == cache_.end()) return nullptr;
  it->second.last_use = ++clock_;
  return it->second.tail;
}

void S3Files::CacheTail(const std::string& cache_key, std::shared_ptr<Buffer> tail) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tail->size() > o_.cache_capacity_bytes || cache_.count(cache_key)) return;
  while (cache_bytes_ + tail->size() > o_.cache_capacity_bytes && !cache_.empty()) {
    auto oldest = std::min_element(cache_.begin(), cache_.end(),
                                   [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
    cache_bytes_ -= oldest->second.tail->size();
    cache_.erase(oldest);
  }
  cache_bytes_ += tail->size();
  cache_.emplace(cache_key, CacheEntry{std::move(tail), ++clock_});
}

Status S3Files::NotFound(objstore::S3Client* client, const std::string& url, const std::string& what) {
  Status bucket = client->CheckBucket();
  if (bucket.ok()) return Status::KeyError(url + ": " + what + " (HTTP 404)").WithSqlState("42P01");
  if (bucket.message().find("no such bucket") != std::string::npos) {
    return Status::KeyError(url + ": no such bucket '" + client->options().bucket + "' (HTTP 404 from " + Describe() +
                            ")")
        .WithSqlState("42P01");
  }
  return Status::IOError(url + ": " + bucket.message());
}

Result<std::shared_ptr<RandomAccessSource>> S3Files::Open(const std::string& url) {
  QUIVER_ASSIGN_OR_RETURN(S3Url u, ParseS3Url(url));
  if (u.key.empty() || u.key.back() == '/') return Status::Invalid("'" + url + "' names a folder, not an object");
  QUIVER_ASSIGN_OR_RETURN(auto client, ClientFor(u.bucket));
  heads_.fetch_add(1, std::memory_order_relaxed);
  auto head = client->Head(u.key);
  if (!head.ok()) return Status::IOError(url + ": " + head.status().message());
  if (!head->has_value()) return NotFound(client.get(), url, "no such object");
  const objstore::S3Client::ObjectInfo info = **head;
  const std::string cache_key = url + "\n" + info.etag + "\n" + std::to_string(info.size_bytes);
  const int64_t tail_length = std::min(info.size_bytes, o_.tail_bytes);
  std::shared_ptr<Buffer> tail;
  if (tail_length > 0) {
    tail = CachedTail(cache_key);
    if (tail) {
      hits_.fetch_add(1, std::memory_order_relaxed);
    } else {
      misses_.fetch_add(1, std::memory_order_relaxed);
      gets_.fetch_add(1, std::memory_order_relaxed);
      auto got = client->GetRange(u.key, info.size_bytes - tail_length, tail_length, info.etag);
      if (!got.ok()) return Status::IOError(url + ": " + got.status().message());
      if (!got->has_value()) return NotFound(client.get(), url, "no such object");
      const std::string& bytes = **got;
      get_bytes_.fetch_add(static_cast<int64_t>(bytes.size()), std::memory_order_relaxed);
      if (static_cast<int64_t>(bytes.size()) != tail_length) {
        return Status::IOError(url + ": its last " + std::to_string(tail_length) + " bytes came back as " +
                               std::to_string(bytes.size()) + " (the object changed while it was opened?)");
      }
      QUIVER_ASSIGN_OR_RETURN(
          tail, Buffer::CopyOf(o_.pool,
                               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
      CacheTail(cache_key, tail);
    }
  }
  return std::shared_ptr<RandomAccessSource>(std::make_shared<S3Source>(
      shared_from_this(), std::move(client), url, u.key, info.etag, info.size_bytes, std::move(tail)));
}

Result<std::vector<std::string>> S3Files::Expand(const std::string& pattern,
                                                 std::span<const std::string_view> extensions) {
  QUIVER_ASSIGN_OR_RETURN(S3Url u, ParseS3Url(pattern));
  QUIVER_ASSIGN_OR_RETURN(auto client, ClientFor(u.bucket));
  const std::string base = "s3://" + u.bucket + "/";
  auto list = [&](const std::string& prefix) -> Result<std::vector<std::string>> {
    lists_.fetch_add(1, std::memory_order_relaxed);
    auto keys = client->List(prefix, o_.max_listed_objects + 1);
    if (!keys.ok()) {
      std::string msg = keys.status().message();
      if (msg.find("HTTP 404") != std::string::npos && msg.find("NoSuchBucket") != std::string::npos) {
        return Status::KeyError(pattern + ": no such bucket '" + u.bucket + "' (HTTP 404 from " + Describe() + ")")
            .WithSqlState("42P01");
      }
      return Status::IOError(pattern + ": " + msg);
    }
    if (static_cast<int64_t>(keys->size()) > o_.max_listed_objects) {
      return Status::Invalid(pattern + ": more than " + std::to_string(o_.max_listed_objects) + " objects");
    }
    return keys;
  };
  std::vector<std::string> out;
  const size_t glob_at = u.key.find_first_of("*?[");
  if (glob_at != std::string::npos) {
    const std::string prefix = u.key.substr(0, glob_at);
    QUIVER_ASSIGN_OR_RETURN(auto keys, list(prefix));
    for (const auto& k : keys) {
      if (fnmatch(u.key.c_str(), k.c_str(), FNM_PATHNAME) == 0) out.push_back(base + k);
    }
    if (out.empty()) return Status::KeyError("no object matches '" + pattern + "'").WithSqlState("42P01");
  } else {
    // A key with the format's extension is an object (Open says whether it
    // exists); another is an object or else a folder.
    const bool named =
        std::any_of(extensions.begin(), extensions.end(), [&](std::string_view e) { return EndsWith(u.key, e); });
    if (named) return std::vector<std::string>{pattern};
    if (!u.key.empty() && u.key.back() != '/') {
      heads_.fetch_add(1, std::memory_order_relaxed);
      auto head = client->Head(u.key);
      if (!head.ok()) return Status::IOError(pattern + ": " + head.status().message());
      if (head->has_value()) return std::vector<std::string>{pattern};
    }
    const std::string folder = u.key.empty() || u.key.back() == '/' ? u.key : u.key + "/";
    QUIVER_ASSIGN_OR_RETURN(auto keys, list(folder));
    for (const auto& k : keys) {
      // Hidden names ('.' or '_' first in any segment under the folder) are skipped.
      bool hidden = false;
      for (size_t at = folder.size(); at < k.size();) {
        hidden = hidden || k[at] == '.' || k[at] == '_';
        const size_t slash = k.find('/', at);
        at = slash == std::string::npos ? k.size() : slash + 1;
      }
      const bool wanted =
          std::any_of(extensions.begin(), extensions.end(), [&](std::string_view e) { return EndsWith(k, e); });
      if (!hidden && wanted && !k.empty() && k.back() != '/') out.push_back(base + k);
    }
    if (out.empty()) {
      if (keys.empty()) return NotFound(client.get(), pattern, "no such object or folder");
      return Status::KeyError("no table file in the folder '" + pattern + "'").WithSqlState("42P01");
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace quiver::formats
