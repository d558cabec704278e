// quiver/fetch/link_signer.h — signed, expiring download links for result
// chunks (CloudFetch). A link names a chunk id and an expiry time in epoch
// milliseconds; its signature is HMAC-SHA256 (OpenSSL) over both, keyed by a
// secret the server draws at start. Downloads carry no Authorization header
// (real clients send none), so the signature is the only authority.
//
// Link query syntax (what Sign produces and Verify accepts):
//   /files/<id>?e=<expiry_ms decimal>&s=<64 lowercase hex digits>
// Ids are 32 lowercase hex digits (ChunkStore ids); anything else is refused.
//
// Thread safety: a LinkSigner is immutable after construction; all methods
// may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver::fetch {

/// Length of a chunk id in characters (128 random bits as lowercase hex).
inline constexpr size_t kChunkIdChars = 32;

/// True when `id` is exactly kChunkIdChars lowercase hex digits. Pure.
bool IsValidChunkId(std::string_view id);

/// The outcome of verifying a link's parameters.
enum class LinkCheck {
  kOk,
  kMalformed,     ///< id, expiry or signature text not in the link syntax
  kBadSignature,  ///< well-formed but not signed by this server's secret
  kExpired,       ///< signature good, expiry_ms <= now_ms
};

/// "ok", "malformed", "bad signature", "expired".
std::string_view LinkCheckName(LinkCheck check);

class LinkSigner {
 public:
  /// Secret length in bytes (the HMAC-SHA256 block-size-friendly 32).
  static constexpr size_t kSecretBytes = 32;

  /// A signer with a fresh random secret from OpenSSL's RAND_bytes.
  /// Errors: IOError when the random generator fails.
  static Result<LinkSigner> MakeRandom();

  /// A signer with a given secret (tests, or servers sharing a secret).
  explicit LinkSigner(const std::array<uint8_t, kSecretBytes>& secret) : secret_(secret) {}

  /// The signature of (id, expiry_ms): 64 lowercase hex digits of
  /// HMAC-SHA256(secret, id || "\n" || decimal(expiry_ms)). Pure.
  std::string Sign(std::string_view id, int64_t expiry_ms) const;

  /// The query string "e=<expiry_ms>&s=<signature>" for a link to `id`.
  std::string Query(std::string_view id, int64_t expiry_ms) const;

  /// Checks link parameters as received (untrusted text of any length):
  /// the id syntax, `expiry_text` as 1..19 decimal digits, `signature_hex` as
  /// 64 hex digits, the signature with a constant-time comparison, then the
  /// expiry against `now_ms`. Never allocates more than a constant.
  LinkCheck Verify(std::string_view id, std::string_view expiry_text, std::string_view signature_hex,
                   int64_t now_ms) const;

 private:
  std::array<uint8_t, kSecretBytes> secret_;
};

/// Constant-time equality of two byte strings (the time depends only on the
/// lengths, which are not secret). Used for signatures and bearer tokens.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

/// Milliseconds since the Unix epoch (system clock).
int64_t NowEpochMs();

}  // namespace quiver::fetch
