// quiver/objstore/curl_util.h — the small libcurl layer shared by the S3
// client (s3_client.h) and the fetch client above (its RPC POSTs and file
// GETs): RAII handles, TLS settings, URL checks, one blocking request.
//
// libcurl itself is loaded on first use (curl_library.h): MakeEasy loads it;
// the deleters and Perform call it through Curl(), valid once a handle exists.
//
// Thread safety: a CURL easy handle is used by one thread at a time.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/objstore/curl_library.h"

namespace quiver::objstore {

struct CurlEasyDeleter {
  void operator()(CURL* c) const { Curl().easy_cleanup(c); }
};
using CurlEasyPtr = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlSlistDeleter {
  void operator()(curl_slist* l) const { Curl().slist_free_all(l); }
};
using CurlSlistPtr = std::unique_ptr<curl_slist, CurlSlistDeleter>;

/// A new easy handle (loads libcurl on first use: LoadCurl's IOError when it
/// cannot). OutOfMemory when libcurl cannot make one.
Result<CurlEasyPtr> MakeEasy();

struct TlsOptions {
  std::string ca_cert_path;  ///< extra trusted CA PEM file; empty = system store
  bool insecure = false;     ///< no peer or host verification
};

/// Applies TLS verification settings (on by default) to a handle.
void ApplyTls(CURL* easy, const TlsOptions& tls);

/// Invalid unless `url` is https:// (or http:// with allow_http) with a host.
Status CheckServerUrl(const std::string& url, bool allow_http);

/// The URL without its query string and fragment (signed links carry their
/// signature there); for messages.
std::string RedactUrl(const std::string& url);

struct HttpRequest {
  std::string url;
  const std::string* post_body = nullptr;     ///< POST when set, else GET
  std::vector<std::string> headers;           ///< "Name: value"
  const std::string* bearer_token = nullptr;  ///< sent as Authorization; never logged
  TlsOptions tls;
  int64_t connect_timeout_ms = 10000;
  int64_t timeout_ms = 120000;
  int64_t max_body_bytes = int64_t{256} << 20;  ///< longer replies fail (Invalid)
  /// When set, the request is abandoned once *abort is true (checked by
  /// libcurl's progress callback: often while bytes move, about once a
  /// second while the server is silent) and Perform returns Cancelled. The
  /// flag is borrowed for the call.
  const std::atomic<bool>* abort = nullptr;
};

struct HttpResponse {
  long status = 0;
  std::string body;
};

/// One blocking request on `easy` (kept alive between calls: keep-alive).
/// IOError names the URL (redacted) and libcurl's error text; Invalid when
/// the body exceeds max_body_bytes or is shorter than its Content-Length;
/// Cancelled when request.abort was set.
Result<HttpResponse> Perform(CURL* easy, const HttpRequest& request);

}  // namespace quiver::objstore
