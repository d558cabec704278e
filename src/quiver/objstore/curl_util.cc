// quiver/objstore/curl_util.cc — see curl_util.h.
#include "quiver/objstore/curl_util.h"

namespace quiver::objstore {

Result<CurlEasyPtr> MakeEasy() {
  QUIVER_ASSIGN_OR_RETURN(const CurlLibrary* curl, LoadCurl());
  CurlEasyPtr easy(curl->easy_init());
  if (!easy) return Status::OutOfMemory("curl_easy_init failed");
  return easy;
}

void ApplyTls(CURL* easy, const TlsOptions& tls) {
  if (!tls.ca_cert_path.empty()) Curl().easy_setopt(easy, CURLOPT_CAINFO, tls.ca_cert_path.c_str());
  Curl().easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, tls.insecure ? 0L : 1L);
  Curl().easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, tls.insecure ? 0L : 2L);
}

Status CheckServerUrl(const std::string& url, bool allow_http) {
  const bool https = url.rfind("https://", 0) == 0;
  const bool http = url.rfind("http://", 0) == 0;
  if (!https && !(allow_http && http)) {
    return Status::Invalid("server URL must start with https:// (got '" + RedactUrl(url) + "')");
  }
  const size_t host = url.find("://") + 3;
  if (host >= url.size() || url[host] == '/' || url[host] == ':') {
    return Status::Invalid("server URL has no host: '" + RedactUrl(url) + "'");
  }
  return Status::OK();
}

std::string RedactUrl(const std::string& url) {
  const size_t q = url.find_first_of("?#");
  return q == std::string::npos ? url : url.substr(0, q) + "?…";
}

namespace {

struct Sink {
  std::string* body;
  int64_t max_bytes;
  bool too_long = false;
};

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  const size_t bytes = size * n;
  if (static_cast<int64_t>(s->body->size() + bytes) > s->max_bytes) {
    s->too_long = true;
    return 0;  // aborts the transfer
  }
  s->body->append(data, bytes);
  return bytes;
}

}  // namespace

Result<HttpResponse> Perform(CURL* easy, const HttpRequest& r) {
  HttpResponse resp;
  Sink sink{&resp.body, r.max_body_bytes};
  curl_slist* raw = nullptr;
  for (const auto& h : r.headers) raw = Curl().slist_append(raw, h.c_str());
  if (r.bearer_token != nullptr && !r.bearer_token->empty()) {
    raw = Curl().slist_append(raw, ("Authorization: Bearer " + *r.bearer_token).c_str());
  }
  raw = Curl().slist_append(raw, "Expect:");
  CurlSlistPtr headers(raw);
  Curl().easy_setopt(easy, CURLOPT_URL, r.url.c_str());
  Curl().easy_setopt(easy, CURLOPT_HTTPHEADER, headers.get());
  if (r.post_body != nullptr) {
    Curl().easy_setopt(easy, CURLOPT_POST, 1L);
    Curl().easy_setopt(easy, CURLOPT_POSTFIELDS, r.post_body->data());
    Curl().easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.post_body->size()));
  } else {
    Curl().easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  }
  Curl().easy_setopt(easy, CURLOPT_WRITEFUNCTION, WriteBody);
  Curl().easy_setopt(easy, CURLOPT_WRITEDATA, &sink);
  Curl().easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  Curl().easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout_ms));
  Curl().easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout_ms));
  Curl().easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "https,http");
  ApplyTls(easy, r.tls);
  char err[CURL_ERROR_SIZE] = {0};
  Curl().easy_setopt(easy, CURLOPT_ERRORBUFFER, err);
  if (r.abort != nullptr) {
    Curl().easy_setopt(
        easy, CURLOPT_XFERINFOFUNCTION, +[](void* flag, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> int {
          return static_cast<const std::atomic<bool>*>(flag)->load() ? 1 : 0;
        });
    Curl().easy_setopt(easy, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(r.abort));
    Curl().easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  }
  const CURLcode rc = Curl().easy_perform(easy);
  Curl().easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
  Curl().easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
  if (r.abort != nullptr) {
    Curl().easy_setopt(easy, CURLOPT_NOPROGRESS, 1L);
    Curl().easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, nullptr);
    Curl().easy_setopt(easy, CURLOPT_XFERINFODATA, nullptr);
  }
  if (rc == CURLE_ABORTED_BY_CALLBACK) return Status::Cancelled("request to " + RedactUrl(r.url) + " abandoned");
  if (sink.too_long) {
    return Status::Invalid("reply from " + RedactUrl(r.url) + " exceeds the limit of " +
                           std::to_string(r.max_body_bytes) + " bytes");
  }
  if (rc != CURLE_OK) {
    return Status::IOError("request to " + RedactUrl(r.url) + " failed: " + Curl().easy_strerror(rc) +
                           (err[0] ? std::string(" (") + err + ")" : std::string()));
  }
  Curl().easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &resp.status);
  curl_off_t cl = -1;
  Curl().easy_getinfo(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
  if (cl >= 0 && static_cast<curl_off_t>(resp.body.size()) != cl) {
    return Status::Invalid("reply from " + RedactUrl(r.url) + " is " + std::to_string(resp.body.size()) +
                           " bytes, Content-Length " + std::to_string(cl));
  }
  return resp;
}

}  // namespace quiver::objstore
