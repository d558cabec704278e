// Tests of the link signer (HMAC-SHA256 links).
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "quiver/fetch/chunk_store.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/fetch/tests/chunk_fixtures.h"

namespace quiver::fetch {
namespace {
using testing::FixedSecret;

TEST(LinkSigner, KnownHmacValue) {
  // HMAC-SHA256(key = 00 01 .. 1f, "0123456789abcdef0123456789abcdef\n1700000000000"),
  // computed independently with Python's hmac module.
  LinkSigner signer(FixedSecret(0));
  const std::string sig = signer.Sign("0123456789abcdef0123456789abcdef", 1700000000000);
  EXPECT_EQ(sig.size(), 64u);
  EXPECT_EQ(sig, "a68e964414f8b2fcfa0eb1806b4ff81c587d3bc4663da07f2018be0079fd62e9");
}

TEST(LinkSigner, VerifyOutcomes) {
  LinkSigner signer(FixedSecret(1));
  const std::string id = NewChunkId().value();
  ASSERT_TRUE(IsValidChunkId(id));
  const int64_t now = 1'800'000'000'000;
  const std::string sig = signer.Sign(id, now + 1000);
  const std::string exp = std::to_string(now + 1000);
  EXPECT_EQ(signer.Verify(id, exp, sig, now), LinkCheck::kOk);
  EXPECT_EQ(signer.Verify(id, exp, sig, now + 1000), LinkCheck::kExpired);
  // Forged: another secret, a changed expiry, a flipped digit, another id.
  EXPECT_EQ(LinkSigner(FixedSecret(2)).Verify(id, exp, sig, now), LinkCheck::kBadSignature);
  EXPECT_EQ(signer.Verify(id, std::to_string(now + 99999), sig, now), LinkCheck::kBadSignature);
  std::string flipped = sig;
  flipped[10] = flipped[10] == 'a' ? 'b' : 'a';
  EXPECT_EQ(signer.Verify(id, exp, flipped, now), LinkCheck::kBadSignature);
  std::string other = id;
  other[0] = other[0] == '0' ? '1' : '0';
  EXPECT_EQ(signer.Verify(other, exp, sig, now), LinkCheck::kBadSignature);
  // Malformed: truncated signature, uppercase, path tricks, junk expiry.
  EXPECT_EQ(signer.Verify(id, exp, sig.substr(0, 63), now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify("../../etc/passwd", exp, sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, "12x", sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, "", sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, "0" + exp, sig, now), LinkCheck::kMalformed);
  EXPECT_EQ(signer.Verify(id, std::string(40, '9'), sig, now), LinkCheck::kMalformed);
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

}  // namespace
}  // namespace quiver::fetch
