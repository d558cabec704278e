// S3Client::GetRange, GetRangeInto and Size against a local HTTP server that serves one
// object with Range support (as S3 and RGW do: 206 with the bytes asked
// for). The same calls run against Ceph RGW in the objstore test
// (fetch's S3StoreTest).
#include <gtest/gtest.h>
#include <httplib.h>

#include <string>
#include <thread>

#include "quiver/objstore/s3_client.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::objstore {
namespace {

class ObjectServer {
 public:
  explicit ObjectServer(std::string object) : object_(std::move(object)) {
    auto answer = [this](const httplib::Request& req, httplib::Response& res) {
      if (req.path != "/b/data/object.bin") {
        // S3 answers a missing key's ranged GET with the whole error body
        // (httplib would cut it to the range).
        const_cast<httplib::Request&>(req).ranges.clear();
        res.status = 404;
        res.set_content("<Error><Code>NoSuchKey</Code></Error>", "application/xml");
        return;
      }
      last_range_ = req.get_header_value("Range");
      res.set_content(object_, "application/octet-stream");  // httplib applies the Range: 206
    };
    server_.Get(".*", answer);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~ObjectServer() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& last_range() const { return last_range_; }

 private:
  std::string object_;
  std::string last_range_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

std::string RangeTestObject() {
  std::string s;
  for (int i = 0; i < 10000; ++i) s += static_cast<char>('a' + (i * 7) % 26);
  return s;
}

S3ClientOptions RangeClientOptions(const std::string& endpoint) {
  S3ClientOptions o;
  o.endpoint = endpoint;
  o.bucket = "b";
  o.credentials = {"AKID", "secret", ""};
  o.backoff_base_ms = 1;
  o.backoff_max_ms = 4;
  return o;
}

TEST(S3Range, GetRangeReturnsExactlyTheBytesAskedFor) {
  const std::string object = RangeTestObject();
  ObjectServer server(object);
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(RangeClientOptions(server.endpoint())));
  ASSERT_OK_AND_ASSIGN(auto head, client->GetRange("data/object.bin", 0, 4));
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(*head, object.substr(0, 4));
  EXPECT_EQ(server.last_range(), "bytes=0-3");
  ASSERT_OK_AND_ASSIGN(auto mid, client->GetRange("data/object.bin", 1234, 2000));
  EXPECT_EQ(*mid, object.substr(1234, 2000));
  EXPECT_EQ(server.last_range(), "bytes=1234-3233");
  // A range past the end comes back short (the footer read of a reader
  // that guessed a length larger than the file).
  ASSERT_OK_AND_ASSIGN(auto tail, client->GetRange("data/object.bin", 9990, 100));
  EXPECT_EQ(*tail, object.substr(9990));
}

TEST(S3Range, GetRangeIntoWritesTheBytesInPlace) {
  const std::string object = RangeTestObject();
  ObjectServer server(object);
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(RangeClientOptions(server.endpoint())));
  std::string dest(3000, '#');
  auto* d = reinterpret_cast<uint8_t*>(dest.data());
  ASSERT_OK_AND_ASSIGN(auto mid, client->GetRangeInto("data/object.bin", 1234, 2000, d + 500));
  ASSERT_TRUE(mid.has_value());
  EXPECT_EQ(*mid, 2000);
  EXPECT_EQ(dest.substr(500, 2000), object.substr(1234, 2000));
  EXPECT_EQ(dest.substr(0, 500), std::string(500, '#'));  // nothing outside the range written
  EXPECT_EQ(dest.substr(2500), std::string(500, '#'));
  EXPECT_EQ(server.last_range(), "bytes=1234-3233");
  // Short at the object's end; a missing object is nullopt (its 404 body
  // is not written into the destination); bad arguments are refused.
  ASSERT_OK_AND_ASSIGN(auto tail, client->GetRangeInto("data/object.bin", 9990, 100, d));
  EXPECT_EQ(*tail, 10);
  EXPECT_EQ(dest.substr(0, 10), object.substr(9990));
  dest.assign(3000, '#');
  ASSERT_OK_AND_ASSIGN(auto missing, client->GetRangeInto("data/other.bin", 0, 100, d));
  EXPECT_FALSE(missing.has_value());
  EXPECT_EQ(dest, std::string(3000, '#'));
  EXPECT_RAISES(Invalid, client->GetRangeInto("data/object.bin", 0, 10, nullptr));
  EXPECT_RAISES(Invalid, client->GetRangeInto("data/object.bin", -1, 10, d));
}

TEST(S3Range, AMissingObjectIsNulloptAndBadRangesAreRefused) {
  ObjectServer server(RangeTestObject());
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(RangeClientOptions(server.endpoint())));
  ASSERT_OK_AND_ASSIGN(auto missing, client->GetRange("data/other.bin", 0, 10));
  EXPECT_FALSE(missing.has_value());
  ASSERT_OK_AND_ASSIGN(auto size, client->Size("data/object.bin"));
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(*size, 10000);
  ASSERT_OK_AND_ASSIGN(auto no_size, client->Size("data/other.bin"));
  EXPECT_FALSE(no_size.has_value());
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "range offset -1 length 10", client->GetRange("data/object.bin", -1, 10));
  EXPECT_RAISES(Invalid, client->GetRange("data/object.bin", 0, 0));
  EXPECT_RAISES(Invalid, client->GetRange("data/object.bin", 0, (int64_t{1} << 30) + 1));
}

}  // namespace
}  // namespace quiver::objstore
