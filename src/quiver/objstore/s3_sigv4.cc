// quiver/objstore/s3_sigv4.cc — SigV4 query-string signing with OpenSSL.
#include "quiver/objstore/s3_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <cstdlib>
#include <ctime>

namespace quiver::objstore {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string ToHex(const unsigned char* data, size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

// HMAC-SHA256(key, message) as 32 raw bytes.
std::string Hmac(std::string_view key, std::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac, &mac_len);
  return std::string(reinterpret_cast<const char*>(mac), mac_len);
}

}  // namespace

Result<S3Credentials> S3CredentialsFromEnv() {
  S3Credentials c;
  const char* id = std::getenv("AWS_ACCESS_KEY_ID");
  const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
  const char* token = std::getenv("AWS_SESSION_TOKEN");
  if (!id || !*id) return Status::Invalid("S3 credentials: AWS_ACCESS_KEY_ID is not set");
  if (!secret || !*secret) return Status::Invalid("S3 credentials: AWS_SECRET_ACCESS_KEY is not set");
  c.access_key_id = id;
  c.secret_access_key = secret;
  if (token) c.session_token = token;
  return c;
}

std::string S3UriEncode(std::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      static constexpr char kUpper[] = "0123456789ABCDEF";
      out += '%';
      out += kUpper[c >> 4];
      out += kUpper[c & 15];
    }
  }
  return out;
}

std::string AmzDate(int64_t epoch_s) {
  const std::time_t t = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return ToHex(digest, sizeof digest);
}

Result<std::string> PresignQuery(const PresignRequest& r, const S3Credentials& credentials) {
  if (r.expires_s < 1 || r.expires_s > kMaxPresignExpirySeconds) {
    return Status::Invalid("presign: X-Amz-Expires must be 1.." + std::to_string(kMaxPresignExpirySeconds) +
                           " seconds, got " + std::to_string(r.expires_s));
  }
  if (r.host.empty() || r.canonical_path.empty() || r.canonical_path[0] != '/') {
    return Status::Invalid("presign: a host and an absolute path are required");
  }
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return Status::Invalid("presign: no credentials");
  }
  const std::string amz_date = AmzDate(r.now_epoch_s);
  const std::string day = amz_date.substr(0, 8);
  const std::string scope = day + "/" + r.region + "/" + r.service + "/aws4_request";
  // Parameters in byte order of their names (they are all X-Amz-*, sorted).
  std::string query = "X-Amz-Algorithm=AWS4-HMAC-SHA256";
  query += "&X-Amz-Credential=" + S3UriEncode(credentials.access_key_id + "/" + scope, false);
  query += "&X-Amz-Date=" + amz_date;
  query += "&X-Amz-Expires=" + std::to_string(r.expires_s);
  if (!credentials.session_token.empty()) {
    query += "&X-Amz-Security-Token=" + S3UriEncode(credentials.session_token, false);
  }
  query += "&X-Amz-SignedHeaders=host";
  const std::string canonical_request =
      r.method + "\n" + r.canonical_path + "\n" + query + "\nhost:" + r.host + "\n\nhost\nUNSIGNED-PAYLOAD";
  const std::string string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(canonical_request);
  std::string key = Hmac("AWS4" + credentials.secret_access_key, day);
  key = Hmac(key, r.region);
  key = Hmac(key, r.service);
  key = Hmac(key, "aws4_request");
  const std::string sig = Hmac(key, string_to_sign);
  query += "&X-Amz-Signature=" + ToHex(reinterpret_cast<const unsigned char*>(sig.data()), sig.size());
  return query;
}

}  // namespace quiver::objstore
