// SigV4 presigned URLs against AWS's published worked example.
#include "quiver/objstore/s3_sigv4.h"

#include <gtest/gtest.h>

namespace quiver::objstore {
namespace {

S3Credentials ExampleCredentials() { return {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""}; }

// "Authenticating Requests: Using Query Parameters (AWS Signature Version
// 4)", the GET Object example: examplebucket, test.txt, us-east-1,
// 2013-05-24T00:00:00Z, 86400 s.
TEST(S3Presign, MatchesTheAwsWorkedExample) {
  PresignRequest r;
  r.host = "examplebucket.s3.amazonaws.com";
  r.canonical_path = "/test.txt";
  r.region = "us-east-1";
  r.now_epoch_s = 1369353600;  // 2013-05-24T00:00:00Z
  r.expires_s = 86400;
  auto q = PresignQuery(r, ExampleCredentials());
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(*q,
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_"
            "request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature="
            "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(S3Presign, TheHostPortAndExpiryAreSigned) {
  PresignRequest r;
  r.host = "127.0.0.1:7480";
  r.canonical_path = "/b/k";
  r.now_epoch_s = 1369353600;
  auto a = PresignQuery(r, ExampleCredentials());
  r.host = "localhost:7480";
  auto b = PresignQuery(r, ExampleCredentials());
  r.host = "127.0.0.1:7480";
  r.expires_s = 901;
  auto c = PresignQuery(r, ExampleCredentials());
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_NE(a->substr(a->size() - 64), b->substr(b->size() - 64));
  EXPECT_NE(a->substr(a->size() - 64), c->substr(c->size() - 64));
}

TEST(S3Presign, RefusesExpiryBeyondSevenDays) {
  PresignRequest r;
  r.host = "h";
  r.canonical_path = "/b/k";
  r.expires_s = kMaxPresignExpirySeconds;
  EXPECT_TRUE(PresignQuery(r, ExampleCredentials()).ok());
  r.expires_s = kMaxPresignExpirySeconds + 1;
  EXPECT_FALSE(PresignQuery(r, ExampleCredentials()).ok());
  r.expires_s = 0;
  EXPECT_FALSE(PresignQuery(r, ExampleCredentials()).ok());
}

TEST(S3Presign, SessionTokenIsCarried) {
  PresignRequest r;
  r.host = "h";
  r.canonical_path = "/b/k";
  auto creds = ExampleCredentials();
  creds.session_token = "tok/en+=";
  auto q = PresignQuery(r, creds);
  ASSERT_TRUE(q.ok());
  EXPECT_NE(q->find("&X-Amz-Security-Token=tok%2Fen%2B%3D&X-Amz-SignedHeaders=host"), std::string::npos);
}

TEST(S3Presign, UriEncoding) {
  EXPECT_EQ(S3UriEncode("a b/c~d", true), "a%20b/c~d");
  EXPECT_EQ(S3UriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(AmzDate(0), "19700101T000000Z");
}

}  // namespace
}  // namespace quiver::objstore
