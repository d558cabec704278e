// quiver/objstore/s3_sigv4.h — AWS Signature Version 4 for S3 query-string
// authentication (presigned URLs), computed by quiver with OpenSSL's
// HMAC-SHA256 (AWS "Authenticating Requests: Using Query Parameters").
//
// A presigned GET URL carries X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
// X-Amz-Expires, X-Amz-SignedHeaders=host (and X-Amz-Security-Token with
// temporary credentials) and X-Amz-Signature; the payload is UNSIGNED-PAYLOAD.
// The Host header (with a non-default port) is signed, so a URL works only
// against exactly the host:port it was made for.
//
// Header-signed requests (PUT, DELETE, multipart) use libcurl's
// CURLOPT_AWS_SIGV4 instead (s3_client.h).
//
// Thread safety: pure functions; callable from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver::objstore {

/// Credentials of an S3 user. Never logged or put into error messages.
struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< empty unless temporary credentials
};

/// The credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
/// (optional) AWS_SESSION_TOKEN. Errors: Invalid naming the missing
/// variable (never its value).
Result<S3Credentials> S3CredentialsFromEnv();

/// Longest lifetime S3 accepts for a presigned URL: 7 days, in seconds.
inline constexpr int64_t kMaxPresignExpirySeconds = 7 * 24 * 3600;

struct PresignRequest {
  std::string method = "GET";
  /// The Host header clients will send: "name" or "name:port" (the port
  /// only when it is not the scheme's default).
  std::string host;
  /// The absolute path as sent, already made of URI-safe characters, e.g.
  /// "/bucket/prefix/key" (path-style); see S3UriEncode.
  std::string canonical_path;
  std::string region = "us-east-1";
  std::string service = "s3";
  /// Signing time, seconds since the Unix epoch (UTC).
  int64_t now_epoch_s = 0;
  /// X-Amz-Expires: 1 .. kMaxPresignExpirySeconds.
  int64_t expires_s = 900;
};

/// The query string (no leading '?') of a presigned URL for `request`:
/// the X-Amz-* parameters in canonical order, X-Amz-Signature last.
/// Errors: Invalid for expires_s out of range, an empty host or a path not
/// starting with '/', or missing credentials.
Result<std::string> PresignQuery(const PresignRequest& request, const S3Credentials& credentials);

/// SigV4 URI encoding: unreserved characters (A-Z a-z 0-9 - . _ ~) kept,
/// everything else as %XX (uppercase); '/' kept when `keep_slash`.
std::string S3UriEncode(std::string_view text, bool keep_slash);

/// "YYYYMMDDTHHMMSSZ" of an epoch time (UTC).
std::string AmzDate(int64_t epoch_s);

/// Lowercase hex of SHA-256(bytes).
std::string Sha256Hex(std::string_view bytes);

}  // namespace quiver::objstore
