// quiver/fetch/link_signer.cc — HMAC-SHA256 link signatures.
#include "quiver/fetch/link_signer.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstdio>

namespace quiver::fetch {
namespace {

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

constexpr size_t kSignatureHexChars = 64;

}  // namespace

bool IsValidChunkId(std::string_view id) {
  if (id.size() != kChunkIdChars) return false;
  for (char c : id) {
    if (!IsLowerHex(c)) return false;
  }
  return true;
}

std::string_view LinkCheckName(LinkCheck check) {
  switch (check) {
    case LinkCheck::kOk: return "ok";
    case LinkCheck::kMalformed: return "malformed";
    case LinkCheck::kBadSignature: return "bad signature";
    case LinkCheck::kExpired: return "expired";
  }
  return "unknown";
}

Result<LinkSigner> LinkSigner::MakeRandom() {
  std::array<uint8_t, kSecretBytes> secret{};
  if (RAND_bytes(secret.data(), static_cast<int>(secret.size())) != 1) {
    return Status::IOError("link signer: RAND_bytes failed to draw a secret");
  }
  return LinkSigner(secret);
}

std::string LinkSigner::Sign(std::string_view id, int64_t expiry_ms) const {
  std::string message(id);
  message += '\n';
  message += std::to_string(expiry_ms);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(mac_len * 2);
  for (unsigned int i = 0; i < mac_len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

std::string LinkSigner::Query(std::string_view id, int64_t expiry_ms) const {
  return "e=" + std::to_string(expiry_ms) + "&s=" + Sign(id, expiry_ms);
}

LinkCheck LinkSigner::Verify(std::string_view id, std::string_view expiry_text, std::string_view signature_hex,
                             int64_t now_ms) const {
  if (!IsValidChunkId(id)) return LinkCheck::kMalformed;
  if (expiry_text.empty() || expiry_text.size() > 18) return LinkCheck::kMalformed;
  int64_t expiry_ms = 0;
  for (char c : expiry_text) {
    if (c < '0' || c > '9') return LinkCheck::kMalformed;
    expiry_ms = expiry_ms * 10 + (c - '0');  // <= 18 digits: no overflow
  }
  // Canonical text only (no leading zeros), so one link has one spelling.
  if (expiry_text.size() > 1 && expiry_text[0] == '0') return LinkCheck::kMalformed;
  if (signature_hex.size() != kSignatureHexChars) return LinkCheck::kMalformed;
  for (char c : signature_hex) {
    if (!IsLowerHex(c)) return LinkCheck::kMalformed;
  }
  const std::string expected = Sign(id, expiry_ms);
  if (!ConstantTimeEquals(expected, signature_hex)) return LinkCheck::kBadSignature;
  if (expiry_ms <= now_ms) return LinkCheck::kExpired;
  return LinkCheck::kOk;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

int64_t NowEpochMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace quiver::fetch
