// libFuzzer target: any bytes as link parameters (id, expiry, signature,
// split at the first two newlines) checked by the link signer. Verify must
// never crash, and only a signature the signer made may pass.
// Corpus: fuzz/corpus/link_verify.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "quiver/fetch/link_signer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quiver::fetch;
  static const LinkSigner signer([] {
    std::array<uint8_t, LinkSigner::kSecretBytes> s{};
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(i * 31 + 7);
    return s;
  }());
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t a = in.find('\n');
  const size_t b = a == std::string_view::npos ? a : in.find('\n', a + 1);
  const std::string_view id = in.substr(0, a);
  const std::string_view expiry =
      a == std::string_view::npos ? std::string_view()
                                  : in.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1);
  const std::string_view sig = b == std::string_view::npos ? std::string_view() : in.substr(b + 1);
  const LinkCheck check = signer.Verify(id, expiry, sig, 1'700'000'000'000);
  if (check == LinkCheck::kOk || check == LinkCheck::kExpired) {
    // Passing the signature check means the signer made exactly this text.
    int64_t e = 0;
    for (char c : expiry) e = e * 10 + (c - '0');
    if (signer.Sign(id, e) != sig) __builtin_trap();
  }
  return 0;
}
