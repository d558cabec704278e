// quiver/objstore/s3_client.cc — see s3_client.h.
#include "quiver/objstore/s3_client.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <strings.h>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

namespace quiver::objstore {

struct S3Client::Request {
  std::string method;  // GET PUT POST DELETE HEAD
  std::string key;     // object key (unencoded); empty = the bucket
  std::string query;   // canonical: sorted, encoded, every name with '='
  std::span<const uint8_t> body;
  bool has_body = false;
  std::vector<std::string> headers;
  int64_t max_reply_bytes = int64_t{1} << 20;
  bool not_found_ok = false;  // 404 is an answer, not a failure
  int max_attempts = 0;       // > 0: instead of the options' budget
  int64_t retry_budget_ms = 0;
  uint8_t* into = nullptr;  // when set, a 206 reply's body goes here (at most into_capacity bytes)
  int64_t into_capacity = 0;
};

namespace {

constexpr size_t kMaxIdleHandles = 16;

struct ReadState {
  std::span<const uint8_t> body;
  size_t offset = 0;
};

size_t ReadBody(char* out, size_t size, size_t n, void* user) {
  auto* s = static_cast<ReadState*>(user);
  const size_t want = std::min(size * n, s->body.size() - s->offset);
  if (want > 0) std::memcpy(out, s->body.data() + s->offset, want);
  s->offset += want;
  return want;
}

int SeekBody(void* user, curl_off_t offset, int origin) {
  auto* s = static_cast<ReadState*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > s->body.size()) return CURL_SEEKFUNC_FAIL;
  s->offset = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

struct WriteState {
  std::string* body;
  int64_t max_bytes;
  bool too_long = false;
  // A destination for a 206 body (GetRangeInto); other replies (errors, a
  // store that ignores Range) still go to `body`.
  CURL* easy = nullptr;
  uint8_t* into = nullptr;
  int64_t into_capacity = 0;
  int64_t* into_bytes = nullptr;
  int into_mode = 0;  // 0 not known yet, 1 into, 2 body
};

size_t WriteReply(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<WriteState*>(user);
  const size_t bytes = size * n;
  if (s->into != nullptr) {
    if (s->into_mode == 0) {
      long code = 0;  // the status line has arrived before any body byte
      Curl().easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
      s->into_mode = code == 206 ? 1 : 2;
    }
    if (s->into_mode == 1) {
      if (*s->into_bytes + static_cast<int64_t>(bytes) > s->into_capacity) {
        s->too_long = true;
        return 0;
      }
      std::memcpy(s->into + *s->into_bytes, data, bytes);
      *s->into_bytes += static_cast<int64_t>(bytes);
      return bytes;
    }
  }
  if (static_cast<int64_t>(s->body->size() + bytes) > s->max_bytes) {
    s->too_long = true;
    return 0;
  }
  s->body->append(data, bytes);
  return bytes;
}

// Keeps the ETag header of a reply (header names are case-insensitive).
size_t KeepEtag(char* data, size_t size, size_t n, void* user) {
  const size_t bytes = size * n;
  std::string_view line(data, bytes);
  if (line.size() > 5 && strncasecmp(line.data(), "etag:", 5) == 0) {
    line.remove_prefix(5);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
    *static_cast<std::string*>(user) = std::string(line);
  }
  return bytes;
}

std::string Base64(const unsigned char* data, size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<size_t>(len));
  return out;
}

// The text between <tag> and </tag> from `from`; npos-safe.
std::string XmlValue(const std::string& body, const std::string& tag, size_t* from) {
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  const size_t a = body.find(open, *from);
  if (a == std::string::npos) {
    *from = std::string::npos;
    return "";
  }
  const size_t b = body.find(close, a + open.size());
  if (b == std::string::npos) {
    *from = std::string::npos;
    return "";
  }
  *from = b + close.size();
  return body.substr(a + open.size(), b - a - open.size());
}

std::string XmlUnescape(std::string s) {
  static const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : kEntities) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + 1)) {
      s.replace(p, std::strlen(from), to);
    }
  }
  return s;
}

void Md5(const unsigned char* data, size_t n, unsigned char out[16]) {
  unsigned int len = 0;
  EVP_Digest(data, n, out, &len, EVP_md5(), nullptr);
}

int64_t JitterMs(int64_t cap_ms) {
  if (cap_ms <= 0) return 0;
  uint64_t r = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&r), sizeof r) != 1) r = 12345;
  return static_cast<int64_t>(r % static_cast<uint64_t>(cap_ms));
}

}  // namespace

std::string S3ErrorCode(const std::string& body) {
  size_t from = 0;
  return XmlValue(body, "Code", &from);
}

Result<S3Location> ParseS3Location(const std::string& text) {
  if (text.rfind("s3://", 0) != 0) return Status::Invalid("chunk store '" + text + "': expected s3://BUCKET/PREFIX");
  std::string rest = text.substr(5);
  S3Location loc;
  const size_t slash = rest.find('/');
  loc.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) loc.prefix = rest.substr(slash + 1);
  while (!loc.prefix.empty() && loc.prefix.back() == '/') loc.prefix.pop_back();
  bool ok = loc.bucket.size() >= 3 && loc.bucket.size() <= 63;
  for (char c : loc.bucket) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-');
  if (!ok) {
    return Status::Invalid("chunk store '" + text + "': bucket name '" + loc.bucket +
                           "' must be 3..63 characters of a-z 0-9 . -");
  }
  return loc;
}

Result<std::unique_ptr<S3Client>> S3Client::Make(S3ClientOptions o) {
  const bool https = o.endpoint.rfind("https://", 0) == 0;
  const bool http = o.endpoint.rfind("http://", 0) == 0;
  if (!https && !http) return Status::Invalid("S3 endpoint must start with https:// (got '" + o.endpoint + "')");
  const std::string hostport = o.endpoint.substr(https ? 8 : 7);
  if (hostport.empty() || hostport.find_first_of("/?#@") != std::string::npos) {
    return Status::Invalid("S3 endpoint must be https://HOST[:PORT] without a path (got '" + o.endpoint + "')");
  }
  if (o.bucket.empty()) return Status::Invalid("S3 client: no bucket");
  if (o.credentials.access_key_id.empty() || o.credentials.secret_access_key.empty()) {
    return Status::Invalid("S3 client: no credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)");
  }
  if (o.max_attempts < 1 || o.retry_budget_ms < 0 || o.delete_max_attempts < 1 || o.delete_retry_budget_ms < 0 ||
      o.backoff_base_ms < 0 || o.backoff_max_ms < 0 || o.part_bytes < (int64_t{5} << 20) ||
      o.multipart_threshold_bytes < o.part_bytes || o.connect_timeout_ms < 1 || o.low_speed_time_s < 1) {
    return Status::Invalid(
        "S3 client: max_attempts >= 1, non-negative retry budget and backoff, part_bytes >= 5 MiB, "
        "multipart_threshold_bytes >= part_bytes and positive "
        "timeouts are required");
  }
  QUIVER_RETURN_NOT_OK(LoadCurl().status());  // libcurl is loaded on first use
  return std::unique_ptr<S3Client>(new S3Client(std::move(o)));
}

S3Client::S3Client(S3ClientOptions o) : o_(std::move(o)) {
  const bool https = o_.endpoint.rfind("https://", 0) == 0;
  host_ = o_.endpoint.substr(https ? 8 : 7);
  // The default port is not part of the Host header clients send.
  if (https && host_.size() > 4 && host_.compare(host_.size() - 4, 4, ":443") == 0) host_.resize(host_.size() - 4);
  if (!https && host_.size() > 3 && host_.compare(host_.size() - 3, 3, ":80") == 0) host_.resize(host_.size() - 3);
  sigv4_ = "aws:amz:" + o_.region + ":s3";
  userpwd_ = o_.credentials.access_key_id + ":" + o_.credentials.secret_access_key;
}

S3Client::~S3Client() = default;

std::string S3Client::Describe() const { return "object store " + o_.endpoint + " bucket '" + o_.bucket + "'"; }

S3ClientStats S3Client::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

CurlEasyPtr S3Client::TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      CurlEasyPtr h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  return CurlEasyPtr(Curl().easy_init());
}

void S3Client::ReturnHandle(CurlEasyPtr h) {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(h));
}

Result<S3Client::Response> S3Client::PerformOnce(CURL* easy, const Request& r, int attempt) {
  (void)attempt;
  Curl().easy_reset(easy);
  std::string url = o_.endpoint + "/" + o_.bucket;
  if (!r.key.empty()) url += "/" + S3UriEncode(r.key, true);
  if (!r.query.empty()) url += "?" + r.query;
  curl_slist* raw = nullptr;
  raw = Curl().slist_append(raw, "x-amz-content-sha256:UNSIGNED-PAYLOAD");
  if (!o_.credentials.session_token.empty()) {
    raw = Curl().slist_append(raw, ("x-amz-security-token:" + o_.credentials.session_token).c_str());
  }
  for (const auto& h : r.headers) raw = Curl().slist_append(raw, h.c_str());
  // No "Expect:" override: libcurl 7.88 would sign the empty header and the
  // store refuses the signature; RGW answers 100-continue at once.
  CurlSlistPtr headers(raw);
  Response resp;
  WriteState sink{&resp.body, r.max_reply_bytes};
  sink.easy = easy;
  sink.into = r.into;
  sink.into_capacity = r.into_capacity;
  sink.into_bytes = &resp.into_bytes;
  ReadState source{r.body, 0};
  Curl().easy_setopt(easy, CURLOPT_URL, url.c_str());
  Curl().easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());
  Curl().easy_setopt(easy, CURLOPT_AWS_SIGV4, sigv4_.c_str());
  Curl().easy_setopt(easy, CURLOPT_USERPWD, userpwd_.c_str());
  if (r.method == "PUT" || (r.method == "POST" && r.has_body)) {
    if (r.method == "PUT") {
      Curl().easy_setopt(easy, CURLOPT_UPLOAD, 1L);
      Curl().easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    } else {
      Curl().easy_setopt(easy, CURLOPT_POST, 1L);
      Curl().easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    }
    Curl().easy_setopt(easy, CURLOPT_READFUNCTION, ReadBody);
    Curl().easy_setopt(easy, CURLOPT_READDATA, &source);
    Curl().easy_setopt(easy, CURLOPT_SEEKFUNCTION, SeekBody);
    Curl().easy_setopt(easy, CURLOPT_SEEKDATA, &source);
  } else if (r.method == "POST") {
    Curl().easy_setopt(easy, CURLOPT_POST, 1L);
    Curl().easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(0));
    Curl().easy_setopt(easy, CURLOPT_POSTFIELDS, "");
  } else if (r.method == "HEAD") {
    Curl().easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (r.method != "GET") {
    Curl().easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  // Larger reads for bodies written in place (fewer callbacks; curl's
  // default is 16 KiB).
  if (r.into != nullptr) Curl().easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L << 10);
  Curl().easy_setopt(easy, CURLOPT_WRITEFUNCTION, WriteReply);
  Curl().easy_setopt(easy, CURLOPT_WRITEDATA, &sink);
  Curl().easy_setopt(easy, CURLOPT_HEADERFUNCTION, KeepEtag);
  Curl().easy_setopt(easy, CURLOPT_HEADERDATA, &resp.etag);
  Curl().easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  Curl().easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o_.connect_timeout_ms));
  Curl().easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(o_.low_speed_bytes_per_s));
  Curl().easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o_.low_speed_time_s));
  if (std::getenv("QUIVER_S3_DEBUG")) Curl().easy_setopt(easy, CURLOPT_VERBOSE, 1L);
  Curl().easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "https,http");
  ApplyTls(easy, o_.tls);
  char err[CURL_ERROR_SIZE] = {0};
  Curl().easy_setopt(easy, CURLOPT_ERRORBUFFER, err);
  const CURLcode rc = Curl().easy_perform(easy);
  Curl().easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
  Curl().easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
  Curl().easy_setopt(easy, CURLOPT_USERPWD, nullptr);
  Curl().easy_setopt(easy, CURLOPT_HEADERDATA, nullptr);
  Curl().easy_setopt(easy, CURLOPT_HEADERFUNCTION, nullptr);
  if (sink.too_long) {
    return Status::Invalid(Describe() + ": " + r.method + " '" + r.key + "': reply exceeds " +
                           std::to_string(r.max_reply_bytes) + " bytes");
  }
  if (rc != CURLE_OK) {
    return Status::IOError(std::string(Curl().easy_strerror(rc)) + (err[0] ? std::string(" (") + err + ")" : ""));
  }
  Curl().easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_off_t length = -1;
  if (Curl().easy_getinfo(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length >= 0) {
    resp.content_length = static_cast<int64_t>(length);
  }
  return resp;
}

int64_t S3BackoffCapMs(const S3ClientOptions& o, int attempts_made) {
  const int64_t base = std::max<int64_t>(o.backoff_base_ms, 0);
  const int64_t cap = std::max<int64_t>(o.backoff_max_ms, 0);
  int64_t wait = base;
  for (int i = 0; i < attempts_made && wait < cap; ++i) wait *= 2;
  return std::min(wait, cap);
}

bool S3RetryableStatus(long s) { return s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

namespace {
std::string Seconds(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}
}  // namespace

Result<S3Client::Response> S3Client::Perform(const Request& r) {
  CurlEasyPtr easy = TakeHandle();
  if (!easy) return Status::OutOfMemory("curl_easy_init failed");
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed_ms = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count(); };
  Status last_error;
  Response last;
  int attempts = 0;
  bool budget_spent = false;
  const int max_attempts = r.max_attempts > 0 ? r.max_attempts : o_.max_attempts;
  const int64_t budget_ms = r.max_attempts > 0 ? r.retry_budget_ms : o_.retry_budget_ms;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.requests;
      if (attempts > 0) ++stats_.retries;
    }
    auto resp = PerformOnce(easy.get(), r, attempts);
    ++attempts;
    if (!resp.ok()) {
      if (resp.status().code() == StatusCode::kInvalid) {
        ReturnHandle(std::move(easy));
        return resp.status();
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.transport_errors;
      last_error = resp.status();
      last = Response{};
    } else if (S3RetryableStatus(resp->status)) {
      const bool throttled = resp->status == 429 || S3ErrorCode(resp->body) == "SlowDown";
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++(throttled ? stats_.throttled : stats_.server_errors);
      }
      last_error = Status::OK();
      last = std::move(resp).value();
    } else {
      ReturnHandle(std::move(easy));
      return resp;
    }
    if (attempts >= max_attempts) break;
    // Full jitter: a uniform wait below the exponential cap; stop when the
    // wait would end past the request's time budget.
    const int64_t wait_ms = JitterMs(S3BackoffCapMs(o_, attempts)) + 1;
    if (elapsed_ms() + wait_ms > budget_ms) {
      budget_spent = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    std::lock_guard<std::mutex> lock(mu_);
    stats_.backoff_ms += wait_ms;
  }
  // A failed connection is not worth keeping.
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.failures;
  }
  const std::string spent = " after " + std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts") + " in " +
                            Seconds(elapsed_ms()) + " (retry budget " + std::to_string(max_attempts) + " attempts or " +
                            Seconds(budget_ms) + (budget_spent ? ", time budget reached" : "") + ")";
  if (!last_error.ok()) {
    return Status::IOError(Describe() + ": " + r.method + " '" + r.key + "' failed" + spent + ": " +
                           last_error.message());
  }
  Status st = Failed(r, last);
  return Status::IOError(st.message() + spent);
}

Status S3Client::Failed(const Request& r, const Response& resp) const {
  std::string code = S3ErrorCode(resp.body);
  std::string msg = Describe() + ": " + r.method + " '" + r.key + "' answered HTTP " + std::to_string(resp.status);
  if (!code.empty()) msg += " " + code;
  return Status::IOError(msg);
}

Status S3Client::Put(const std::string& key, std::span<const uint8_t> bytes) {
  if (static_cast<int64_t>(bytes.size()) > o_.multipart_threshold_bytes) return PutMultipart(key, bytes);
  Request r;
  r.method = "PUT";
  r.key = key;
  r.body = bytes;
  r.has_body = true;
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status != 200) return Failed(r, resp);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.put_bytes += static_cast<int64_t>(bytes.size());
  return Status::OK();
}

Result<bool> S3Client::PutIfAbsent(const std::string& key, std::span<const uint8_t> bytes) {
  if (static_cast<int64_t>(bytes.size()) > o_.multipart_threshold_bytes) {
    return Status::Invalid(Describe() + ": conditional PUT of '" + key + "': " + std::to_string(bytes.size()) +
                           " bytes is above the single-part limit");
  }
  Request r;
  r.method = "PUT";
  r.key = key;
  r.body = bytes;
  r.has_body = true;
  r.headers.push_back("If-None-Match: *");
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  // 409 ConditionalRequestConflict: another conditional write of the key
  // was in flight (S3); it exists, or is about to.
  if (resp.status == 412 || resp.status == 409) return false;
  if (resp.status != 200) return Failed(r, resp);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.put_bytes += static_cast<int64_t>(bytes.size());
  return true;
}

Status S3Client::PutMultipart(const std::string& key, std::span<const uint8_t> bytes) {
  Request init;
  init.method = "POST";
  init.key = key;
  init.query = "uploads=";
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(init));
  if (resp.status != 200) return Failed(init, resp);
  size_t from = 0;
  const std::string upload_id = XmlValue(resp.body, "UploadId", &from);
  if (upload_id.empty()) return Status::IOError(Describe() + ": multipart upload of '" + key + "': no UploadId");
  const std::string id_q = "uploadId=" + S3UriEncode(upload_id, false);
  auto abort = [&] {
    Request a;
    a.method = "DELETE";
    a.key = key;
    a.query = id_q;
    (void)Perform(a);
  };
  std::string complete = "<CompleteMultipartUpload>";
  int part = 1;
  for (size_t off = 0; off < bytes.size(); off += static_cast<size_t>(o_.part_bytes), ++part) {
    Request p;
    p.method = "PUT";
    p.key = key;
    p.query = "partNumber=" + std::to_string(part) + "&" + id_q;
    p.body = bytes.subspan(off, std::min(bytes.size() - off, static_cast<size_t>(o_.part_bytes)));
    p.has_body = true;
    auto pr = Perform(p);
    if (!pr.ok() || pr->status != 200) {
      Status st = pr.ok() ? Failed(p, *pr) : pr.status();
      abort();
      return st;
    }
    // A part's ETag is the MD5 of its bytes (S3 and RGW without SSE), so
    // the completion list needs no response headers.
    unsigned char md5[16];
    Md5(p.body.data(), p.body.size(), md5);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string etag;
    for (unsigned char c : md5) {
      etag += kHex[c >> 4];
      etag += kHex[c & 15];
    }
    complete += "<Part><PartNumber>" + std::to_string(part) + "</PartNumber><ETag>\"" + etag + "\"</ETag></Part>";
  }
  complete += "</CompleteMultipartUpload>";
  Request c;
  c.method = "POST";
  c.key = key;
  c.query = id_q;
  c.body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(complete.data()), complete.size());
  c.has_body = true;
  c.headers.push_back("Content-Type: application/xml");
  auto cr = Perform(c);
  if (!cr.ok() || cr->status != 200 || cr->body.find("<Error>") != std::string::npos) {
    Status st = !cr.ok() ? cr.status() : Failed(c, *cr);
    abort();
    return st;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.put_bytes += static_cast<int64_t>(bytes.size());
  ++stats_.multipart_uploads;
  return Status::OK();
}

Result<std::optional<std::string>> S3Client::Get(const std::string& key, int64_t max_bytes) {
  Request r;
  r.method = "GET";
  r.key = key;
  r.max_reply_bytes = std::max<int64_t>(max_bytes, 4096);
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 404 && S3ErrorCode(resp.body) == "NoSuchKey") return std::optional<std::string>();
  if (resp.status != 200) return Failed(r, resp);
  if (static_cast<int64_t>(resp.body.size()) > max_bytes) {
    return Status::Invalid(Describe() + ": object '" + key + "' exceeds " + std::to_string(max_bytes) + " bytes");
  }
  return std::optional<std::string>(std::move(resp.body));
}

Result<std::optional<std::string>> S3Client::GetRange(const std::string& key, int64_t offset, int64_t length,
                                                      const std::string& if_match) {
  std::string bytes;
  if (length >= 1 && length <= (int64_t{1} << 30)) bytes.resize(static_cast<size_t>(length));
  QUIVER_ASSIGN_OR_RETURN(auto got,
                          GetRangeInto(key, offset, length, reinterpret_cast<uint8_t*>(bytes.data()), if_match));
  if (!got) return std::optional<std::string>();
  bytes.resize(static_cast<size_t>(*got));
  return std::optional<std::string>(std::move(bytes));
}

Result<std::optional<int64_t>> S3Client::GetRangeInto(const std::string& key, int64_t offset, int64_t length,
                                                      uint8_t* dest, const std::string& if_match) {
  constexpr int64_t kMaxRangeBytes = int64_t{1} << 30;
  if (offset < 0 || length < 1 || length > kMaxRangeBytes || offset > INT64_MAX - length || dest == nullptr) {
    return Status::Invalid(Describe() + ": GET '" + key + "': range offset " + std::to_string(offset) + " length " +
                           std::to_string(length) + " (expected offset >= 0, 1 <= length <= 1 GiB, a destination)");
  }
  Request r;
  r.method = "GET";
  r.key = key;
  r.headers.push_back("Range: bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1));
  if (!if_match.empty()) r.headers.push_back("If-Match: " + if_match);
  r.max_reply_bytes = std::max<int64_t>(length, 4096);
  r.into = dest;
  r.into_capacity = length;
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 404 && S3ErrorCode(resp.body) == "NoSuchKey") return std::optional<int64_t>();
  if (resp.status == 416) return std::optional<int64_t>(0);  // the object ends before offset
  if (resp.status == 200) {
    // A store that ignores Range sends the whole object (bounded above by
    // max_reply_bytes, so only small objects get here).
    if (static_cast<int64_t>(resp.body.size()) <= offset) return std::optional<int64_t>(0);
    const int64_t n = std::min<int64_t>(length, static_cast<int64_t>(resp.body.size()) - offset);
    std::memcpy(dest, resp.body.data() + offset, static_cast<size_t>(n));
    return std::optional<int64_t>(n);
  }
  if (resp.status != 206) return Failed(r, resp);
  return std::optional<int64_t>(resp.into_bytes);
}

Result<std::optional<int64_t>> S3Client::Size(const std::string& key) {
  Request r;
  r.method = "HEAD";
  r.key = key;
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 404) return std::optional<int64_t>();
  if (resp.status != 200) return Failed(r, resp);
  if (resp.content_length < 0) {
    return Status::IOError(Describe() + ": HEAD '" + key + "' answered without a Content-Length");
  }
  return std::optional<int64_t>(resp.content_length);
}

Result<std::optional<S3Client::ObjectInfo>> S3Client::Head(const std::string& key) {
  Request r;
  r.method = "HEAD";
  r.key = key;
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 404) return std::optional<ObjectInfo>();
  if (resp.status != 200) return Failed(r, resp);
  if (resp.content_length < 0) {
    return Status::IOError(Describe() + ": HEAD '" + key + "' answered without a Content-Length");
  }
  return std::optional<ObjectInfo>(ObjectInfo{resp.content_length, std::move(resp.etag)});
}

Status S3Client::Delete(const std::string& key) {
  Request r;
  r.method = "DELETE";
  r.key = key;
  r.max_attempts = o_.delete_max_attempts;
  r.retry_budget_ms = o_.delete_retry_budget_ms;
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 204 || resp.status == 200 || (resp.status == 404 && S3ErrorCode(resp.body) == "NoSuchKey")) {
    return Status::OK();
  }
  return Failed(r, resp);
}

Result<std::vector<std::string>> S3Client::List(const std::string& prefix, int64_t max_keys) {
  std::vector<std::string> keys;
  std::string token;
  while (static_cast<int64_t>(keys.size()) < max_keys) {
    Request r;
    r.method = "GET";
    // Canonical order: continuation-token < list-type < prefix.
    if (!token.empty()) r.query = "continuation-token=" + S3UriEncode(token, false) + "&";
    r.query += "list-type=2&prefix=" + S3UriEncode(prefix, false);
    r.max_reply_bytes = int64_t{16} << 20;
    QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
    if (resp.status != 200) return Failed(r, resp);
    size_t from = 0;
    while (from != std::string::npos) {
      std::string k = XmlValue(resp.body, "Key", &from);
      if (from != std::string::npos) keys.push_back(XmlUnescape(std::move(k)));
    }
    from = 0;
    const std::string truncated = XmlValue(resp.body, "IsTruncated", &from);
    from = 0;
    token = XmlUnescape(XmlValue(resp.body, "NextContinuationToken", &from));
    if (truncated != "true" || token.empty()) break;
  }
  return keys;
}

Status S3Client::CheckBucket() {
  Request r;
  r.method = "HEAD";
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 200) return Status::OK();
  std::string msg = Describe() + ": HEAD bucket answered HTTP " + std::to_string(resp.status);
  if (resp.status == 404) msg += " (no such bucket)";
  if (resp.status == 403) msg += " (access denied: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)";
  return Status::IOError(msg);
}

Status S3Client::CreateBucket() {
  Request r;
  r.method = "PUT";
  r.has_body = true;
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 200) return Status::OK();
  if (resp.status == 409 && S3ErrorCode(resp.body) == "BucketAlreadyOwnedByYou") return Status::OK();
  return Failed(r, resp);
}

std::string LifecycleRuleId(const std::string& prefix) {
  std::string id = "quiver-results:" + prefix;
  if (id.size() > 255) id = "quiver-results:sha256:" + Sha256Hex(prefix);
  return id;
}

namespace {
std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}
}  // namespace

Result<std::string> MergeLifecycleRule(const std::string& existing, const std::string& prefix, int days) {
  if (days < 1) return Status::Invalid("lifecycle: days must be >= 1");
  const std::string id = LifecycleRuleId(prefix);
  std::string out = "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  if (!existing.empty()) {
    if (existing.find("<LifecycleConfiguration") == std::string::npos) {
      return Status::Invalid("lifecycle: the bucket's configuration is not a LifecycleConfiguration");
    }
    static const std::string kOpen = "<Rule>", kClose = "</Rule>";
    for (size_t from = existing.find(kOpen); from != std::string::npos; from = existing.find(kOpen, from)) {
      const size_t end = existing.find(kClose, from);
      if (end == std::string::npos)
        return Status::Invalid("lifecycle: the bucket's configuration has an unclosed Rule");
      const std::string rule = existing.substr(from, end + kClose.size() - from);
      from = end + kClose.size();
      size_t at = 0;
      const std::string rule_id = XmlUnescape(XmlValue(rule, "ID", &at));
      at = 0;
      const std::string rule_prefix = XmlUnescape(XmlValue(rule, "Prefix", &at));
      if (rule_id == id || (rule_id == "quiver-results" && rule_prefix == prefix)) continue;  // ours: replaced
      out += rule;
    }
  }
  out += "<Rule><ID>" + XmlEscape(id) + "</ID><Filter><Prefix>" + XmlEscape(prefix) +
         "</Prefix></Filter><Status>Enabled</Status><Expiration><Days>" + std::to_string(days) +
         "</Days></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>" + std::to_string(days) +
         "</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>";
  return out;
}

Result<std::optional<std::string>> S3Client::GetLifecycle() {
  Request r;
  r.method = "GET";
  r.query = "lifecycle=";
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status == 404 && S3ErrorCode(resp.body) == "NoSuchLifecycleConfiguration") {
    return std::optional<std::string>();
  }
  if (resp.status != 200) return Failed(r, resp);
  return std::optional<std::string>(std::move(resp.body));
}

Status S3Client::PutLifecycleConfiguration(const std::string& xml) {
  unsigned char md5[16];
  Md5(reinterpret_cast<const unsigned char*>(xml.data()), xml.size(), md5);
  Request r;
  r.method = "PUT";
  r.query = "lifecycle=";
  r.body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(xml.data()), xml.size());
  r.has_body = true;
  r.headers.push_back("Content-MD5: " + Base64(md5, sizeof md5));
  r.headers.push_back("Content-Type: application/xml");
  QUIVER_ASSIGN_OR_RETURN(auto resp, Perform(r));
  if (resp.status != 200) return Failed(r, resp);
  return Status::OK();
}

Status S3Client::PutLifecycle(const std::string& prefix, int days) {
  QUIVER_ASSIGN_OR_RETURN(auto existing, GetLifecycle());
  QUIVER_ASSIGN_OR_RETURN(auto merged, MergeLifecycleRule(existing.value_or(""), prefix, days));
  return PutLifecycleConfiguration(merged);
}

Result<std::string> S3Client::PresignGet(const std::string& key, int64_t now_epoch_s, int64_t expires_s) const {
  PresignRequest p;
  p.host = host_;
  p.canonical_path = "/" + o_.bucket + "/" + S3UriEncode(key, true);
  p.region = o_.region;
  p.now_epoch_s = now_epoch_s;
  p.expires_s = expires_s;
  QUIVER_ASSIGN_OR_RETURN(auto query, PresignQuery(p, o_.credentials));
  return o_.endpoint + p.canonical_path + "?" + query;
}

}  // namespace quiver::objstore
