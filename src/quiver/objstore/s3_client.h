// quiver/objstore/s3_client.h — a small S3 client: PUT (single or
// multipart), GET (whole or a byte range), HEAD (size), DELETE, list,
// bucket lifecycle, and presigned GET links, against any S3-compatible
// store (tested with Ceph RGW). The objstore layer knows nothing above it:
// the result server's chunk store (fetch/s3_chunk_store.h) and table
// readers (formats/) use it.
//
// Requests are signed with SigV4 headers by libcurl (CURLOPT_AWS_SIGV4,
// payload UNSIGNED-PAYLOAD); presigned links by s3_sigv4.h. Addressing is
// path-style: ENDPOINT/BUCKET/KEY. Uploads stream from the caller's bytes
// (CURLOPT_READFUNCTION over the span): no copy is made. Objects larger than
// multipart_threshold_bytes go up as a multipart upload in parts of
// part_bytes (aborted on failure, so nothing is left behind).
//
// Failures and retries (the policy of the AWS SDKs' "standard" retry mode):
// a connection or transfer error, and HTTP 500, 502, 503 (503 SlowDown
// included), 504 and 429, are retried; other 4xx are not. Before attempt
// k + 1 (k >= 1 attempts made) the client waits a uniformly random time in
// [0, min(backoff_max_ms, backoff_base_ms * 2^k)) ms ("full jitter", so
// that servers throttled together do not come back together). A request
// stops after max_attempts attempts (default 10), or when the next wait
// would end later than retry_budget_ms (default 30 s) after its first
// attempt began: whichever comes first (DELETE has a shorter budget of its
// own, see S3ClientOptions). Every request has a connect timeout
// and a low-speed limit, so a store that stops answering fails the request
// instead of hanging it. Retries, throttled answers and time spent waiting
// are counted in S3ClientStats (the server's /metrics prints them). Errors
// are IOError with a message naming the store (endpoint and bucket), the
// method, the key, the HTTP status and the S3 error code (e.g. "HTTP 403
// SignatureDoesNotMatch"), and, after retries, the budget spent ("after 10
// attempts in 13.2 s; retry budget 10 attempts or 30 s"); credentials and
// link signatures never appear in messages.
//
// Thread safety: all methods may be called from any number of threads; the
// client keeps a small cache of idle curl handles (keep-alive).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/objstore/curl_util.h"
#include "quiver/objstore/s3_sigv4.h"

namespace quiver::objstore {

/// "s3://BUCKET/PREFIX" split; the prefix has no leading or trailing '/'
/// (may be empty).
struct S3Location {
  std::string bucket;
  std::string prefix;
};

/// Parses "s3://BUCKET[/PREFIX]". Errors: Invalid for another scheme, an
/// empty or malformed bucket name (3..63 of a-z 0-9 . -).
Result<S3Location> ParseS3Location(const std::string& text);

struct S3ClientOptions {
  /// "https://HOST[:PORT]" (http:// allowed for tests); no path. Required.
  /// Links are signed for this host:port, so it must be the name clients use.
  std::string endpoint;
  std::string bucket;
  std::string region = "us-east-1";
  S3Credentials credentials;
  TlsOptions tls;
  /// Retry budget per request (see the file comment): at most max_attempts
  /// attempts (>= 1), and no wait that would end past retry_budget_ms
  /// (>= 0) after the first attempt began. Attempt k + 1 waits a uniformly
  /// random time in [0, min(backoff_max_ms, backoff_base_ms * 2^k)) ms.
  int max_attempts = 10;
  int64_t retry_budget_ms = 30000;
  int64_t backoff_base_ms = 100;
  int64_t backoff_max_ms = 5000;
  /// DELETE's own, shorter budget: a removal that fails is kept and
  /// retried later by its owner (S3ChunkStore::Sweep), so a statement's
  /// cleanup while the store is down does not wait out the full budget for
  /// every chunk.
  int delete_max_attempts = 3;
  int64_t delete_retry_budget_ms = 2000;
  int64_t connect_timeout_ms = 5000;
  /// A transfer slower than low_speed_bytes_per_s for low_speed_time_s is
  /// aborted (and retried).
  int64_t low_speed_bytes_per_s = 1024;
  int64_t low_speed_time_s = 10;
  /// Objects above this size go up in multipart parts of part_bytes
  /// (>= 5 MiB, the S3 minimum for all but the last part).
  int64_t multipart_threshold_bytes = int64_t{64} << 20;
  int64_t part_bytes = int64_t{16} << 20;
};

/// Counters (monotonic since the client was made).
struct S3ClientStats {
  int64_t requests = 0;          ///< attempts sent (first attempts and retries)
  int64_t retries = 0;           ///< attempts after the first
  int64_t throttled = 0;         ///< answers 503 SlowDown or 429 (all retried)
  int64_t server_errors = 0;     ///< other retryable answers: 500, 502, 503, 504
  int64_t transport_errors = 0;  ///< connection/transfer failures (retried)
  int64_t backoff_ms = 0;        ///< total time spent waiting between attempts
  int64_t failures = 0;          ///< requests that failed after their retry budget
  int64_t put_bytes = 0;
  int64_t multipart_uploads = 0;
};

/// The longest wait before attempt `attempts_made + 1`:
/// min(backoff_max_ms, backoff_base_ms * 2^attempts_made) ms (the wait is
/// drawn uniformly below it). Overflow-safe for any attempts_made >= 0.
int64_t S3BackoffCapMs(const S3ClientOptions& options, int attempts_made);

/// True for the HTTP answers the client retries: 429, 500, 502, 503, 504.
bool S3RetryableStatus(long http_status);

class S3Client {
 public:
  /// Errors: Invalid for a malformed endpoint, empty bucket or credentials,
  /// or out-of-range limits.
  static Result<std::unique_ptr<S3Client>> Make(S3ClientOptions options);
  ~S3Client();

  /// PUTs `bytes` as object `key` (streamed from the span, which must stay
  /// valid until the call returns). Multipart above the threshold.
  Status Put(const std::string& key, std::span<const uint8_t> bytes);
  /// PUTs `bytes` as object `key` only if no object `key` exists (a
  /// conditional write, `If-None-Match: *`, RFC 9110 section 13.1.2; S3 and
  /// Ceph RGW answer 412 Precondition Failed when it exists, and of racing
  /// writers exactly one gets 200). Returns true when this call created it.
  /// A retry after a lost reply may meet its own object: the caller tells
  /// them apart by the body (Get). Single-part only: Invalid above the
  /// multipart threshold. Errors: IOError as Put.
  Result<bool> PutIfAbsent(const std::string& key, std::span<const uint8_t> bytes);
  /// GETs object `key`; std::nullopt when it does not exist (404). Errors:
  /// IOError; Invalid when the object exceeds max_bytes.
  Result<std::optional<std::string>> Get(const std::string& key, int64_t max_bytes);
  /// GETs bytes [offset, offset + length) of object `key` (a Range
  /// request; the store answers 206 Partial Content). Fewer bytes come back
  /// only when the object ends before offset + length (none when it ends
  /// at or before offset); std::nullopt when the object does not exist.
  /// Errors: Invalid for offset < 0 or length outside 1 .. 1 GiB; IOError.
  ///
  /// With `if_match` non-empty (an ETag as Head returned it) the request
  /// carries `If-Match`: an object replaced since is an IOError naming the
  /// key and "HTTP 412 PreconditionFailed" instead of bytes of another
  /// version.
  Result<std::optional<std::string>> GetRange(const std::string& key, int64_t offset, int64_t length,
                                              const std::string& if_match = "");
  /// GetRange with the bytes written straight into `dest` (room for
  /// `length` bytes, owned by the caller) as they arrive: no string grown
  /// and copied (a table scan's chunks land in its pool's buffers). Returns
  /// the bytes written (length, or fewer as GetRange), std::nullopt when the
  /// object does not exist. `dest` may hold partial bytes after an error.
  /// Errors: as GetRange.
  Result<std::optional<int64_t>> GetRangeInto(const std::string& key, int64_t offset, int64_t length, uint8_t* dest,
                                              const std::string& if_match = "");
  /// An object's size and entity tag (HEAD).
  struct ObjectInfo {
    int64_t size_bytes = 0;
    std::string etag;  ///< as the store sent it, quotes included; may be empty
  };
  /// HEAD of object `key`; std::nullopt when it does not exist (404).
  /// Errors: IOError naming the store, key and HTTP status (403 ...), also
  /// when the store sends no length.
  Result<std::optional<ObjectInfo>> Head(const std::string& key);
  /// The size in bytes of object `key` (HEAD); std::nullopt when it does
  /// not exist. Errors: IOError (also when the store sends no length).
  Result<std::optional<int64_t>> Size(const std::string& key);
  /// DELETEs object `key` (a missing object is success).
  Status Delete(const std::string& key);
  /// Keys under `prefix` (every page), at most max_keys.
  Result<std::vector<std::string>> List(const std::string& prefix, int64_t max_keys = 100000);
  /// HEAD of the bucket: OK when it exists and the credentials may use it.
  Status CheckBucket();
  /// Creates the bucket (an existing bucket owned by the caller is success).
  Status CreateBucket();
  /// Sets quiver's lifecycle rule for `prefix` (ID LifecycleRuleId(prefix)):
  /// objects under it expire after `days` (>= 1) days and incomplete
  /// multipart uploads are aborted after as long. The bucket's other rules
  /// are kept: the configuration is read (GET ?lifecycle), the rule with
  /// this ID (or an older quiver rule "quiver-results" for the same prefix)
  /// replaced or the rule added, and the merged configuration written
  /// back. Not atomic: two servers with different prefixes setting their
  /// rules at the same moment may each write a configuration without the
  /// other's rule (the next start of that server puts it back). Errors:
  /// IOError from the store; Invalid when the bucket's configuration
  /// cannot be parsed (nothing is written then).
  Status PutLifecycle(const std::string& prefix, int days);
  /// The bucket's lifecycle configuration (XML as the store returns it);
  /// std::nullopt when it has none (404 NoSuchLifecycleConfiguration).
  Result<std::optional<std::string>> GetLifecycle();
  /// Replaces the bucket's whole lifecycle configuration by `xml`.
  Status PutLifecycleConfiguration(const std::string& xml);

  /// A presigned GET URL of `key` valid for `expires_s` seconds from
  /// now_epoch_s (1 .. 7 days).
  Result<std::string> PresignGet(const std::string& key, int64_t now_epoch_s, int64_t expires_s) const;

  /// "object store https://HOST:PORT bucket 'B'" (for messages).
  std::string Describe() const;
  const S3ClientOptions& options() const { return o_; }
  S3ClientStats stats() const;

  struct Request;
  struct Response {
    long status = 0;
    std::string body;
    int64_t content_length = -1;  ///< the Content-Length header; -1 when absent
    int64_t into_bytes = 0;       ///< a 206 body's bytes written to Request's `into`
    std::string etag;             ///< the ETag header; empty when absent
  };

 private:
  explicit S3Client(S3ClientOptions options);
  Result<Response> Perform(const Request& r);
  Result<Response> PerformOnce(CURL* easy, const Request& r, int attempt);
  Status PutMultipart(const std::string& key, std::span<const uint8_t> bytes);
  Status Failed(const Request& r, const Response& resp) const;
  CurlEasyPtr TakeHandle();
  void ReturnHandle(CurlEasyPtr h);

  S3ClientOptions o_;
  std::string host_;   // host[:port] as signed
  std::string sigv4_;  // "aws:amz:REGION:s3"
  std::string userpwd_;
  mutable std::mutex mu_;
  std::vector<CurlEasyPtr> idle_;
  S3ClientStats stats_;
};

/// The S3 error code in an error reply body ("<Code>X</Code>"), or "".
std::string S3ErrorCode(const std::string& body);

/// The ID of quiver's lifecycle rule for a key prefix: "quiver-results:" +
/// prefix, or "quiver-results:sha256:" + the prefix's SHA-256 (hex) when
/// that would pass S3's 255 characters.
std::string LifecycleRuleId(const std::string& prefix);

/// `existing` (a bucket's lifecycle configuration XML; empty = none) with
/// quiver's rule for `prefix` put in: the <Rule> whose <ID> is
/// LifecycleRuleId(prefix), or whose ID is the older "quiver-results" and
/// whose <Prefix> is `prefix`, is replaced; every other rule is kept as it
/// was. Errors: Invalid when `existing` is not a LifecycleConfiguration or
/// a <Rule> is not closed, or days < 1.
Result<std::string> MergeLifecycleRule(const std::string& existing, const std::string& prefix, int days);

}  // namespace quiver::objstore
