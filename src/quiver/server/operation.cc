// quiver/server/operation.cc — handle ids and their hex form (operation.h).
#include "quiver/server/operation.h"

#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace quiver::server {

std::string RandomHandleBytes(bool uuid_v4) {
  uint8_t b[kHandleBytes];
  if (RAND_bytes(b, kHandleBytes) != 1) {
    // RAND_bytes failing is extraordinary; fall back to the clock so that
    // handles stay unique (they are not the authority: the secret is compared too).
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    std::memcpy(b, &now, sizeof now);
    std::memcpy(b + 8, &now, sizeof now);
  }
  if (uuid_v4) {  // RFC 4122: version 4, variant 10xx
    b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);
  }
  return std::string(reinterpret_cast<char*>(b), kHandleBytes);
}

std::string TimedHandleBytes(int64_t now_ms) {
  std::string b = RandomHandleBytes(false);
  const auto ms = static_cast<uint64_t>(std::max<int64_t>(now_ms, 0));
  for (int i = 0; i < 6; ++i) b[static_cast<size_t>(i)] = static_cast<char>((ms >> (8 * (5 - i))) & 0xFF);
  b[6] = static_cast<char>((static_cast<uint8_t>(b[6]) & 0x0F) | 0x70);  // version 7
  b[8] = static_cast<char>((static_cast<uint8_t>(b[8]) & 0x3F) | 0x80);  // variant 10xx
  return b;
}

std::optional<int64_t> HandleIssuedMs(const std::string& guid) {
  if (guid.size() != kHandleBytes || (static_cast<uint8_t>(guid[6]) >> 4) != 7) return std::nullopt;
  uint64_t ms = 0;
  for (int i = 0; i < 6; ++i) ms = (ms << 8) | static_cast<uint8_t>(guid[static_cast<size_t>(i)]);
  return static_cast<int64_t>(ms);
}

void SetSessionDialect(std::string* guid, sql::SqlDialect dialect) {
  if (guid->size() != kHandleBytes) return;
  auto b = static_cast<uint8_t>((*guid)[7]);
  b = dialect == sql::SqlDialect::kPostgres ? static_cast<uint8_t>(b | 1) : static_cast<uint8_t>(b & ~1);
  (*guid)[7] = static_cast<char>(b);
}

sql::SqlDialect SessionDialectOf(const std::string& guid) {
  if (guid.size() != kHandleBytes) return sql::SqlDialect::kSpark;
  return (static_cast<uint8_t>(guid[7]) & 1) ? sql::SqlDialect::kPostgres : sql::SqlDialect::kSpark;
}

std::string ChunkGroup(const std::string& guid, int attempt) {
  char tail[8];
  std::snprintf(tail, sizeof tail, "%04x", static_cast<unsigned>(attempt) & 0xFFFFu);
  return Hex(guid).substr(0, 12) + tail;
}

std::string Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<std::string> Unhex(std::string_view hex) {
  if (hex.size() % 2) return std::nullopt;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = val(hex[2 * i]), lo = val(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace quiver::server
