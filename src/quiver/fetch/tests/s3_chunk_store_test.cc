// S3ChunkStore and S3Client against a real S3 store (Ceph RGW). These run
// only when QUIVER_S3_ENDPOINT, QUIVER_S3_CA, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY are set (tests/objstore/run.sh starts RGW and sets
// them); otherwise they skip.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

#include "quiver/fetch/link_signer.h"
#include "quiver/fetch/s3_chunk_store.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/objstore/curl_util.h"

namespace quiver::fetch {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoint_ = Env("QUIVER_S3_ENDPOINT");
    if (endpoint_.empty() || Env("AWS_ACCESS_KEY_ID").empty()) GTEST_SKIP() << "no S3 store (QUIVER_S3_ENDPOINT)";
    pool_ = MemoryPool::MakeRoot({.name = "s3test"});
    bucket_ = Env("QUIVER_S3_TEST_BUCKET").empty() ? "quiver-unit" : Env("QUIVER_S3_TEST_BUCKET");
    auto client = objstore::S3Client::Make(ClientOptions(bucket_));
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    const Status created = (*client)->CreateBucket();
    ASSERT_TRUE(created.ok()) << created.ToString();
  }

  objstore::S3ClientOptions ClientOptions(const std::string& bucket) {
    objstore::S3ClientOptions o;
    o.endpoint = endpoint_;
    o.bucket = bucket;
    o.credentials = *objstore::S3CredentialsFromEnv();
    o.tls.ca_cert_path = Env("QUIVER_S3_CA");
    o.backoff_base_ms = 10;
    o.backoff_max_ms = 50;
    return o;
  }

  Result<std::unique_ptr<S3ChunkStore>> MakeStore(objstore::S3ClientOptions client,
                                                  const std::string& prefix = "unit") {
    S3ChunkStoreOptions so;
    so.client = std::move(client);
    so.prefix = prefix;
    so.pool = pool_.get();
    return S3ChunkStore::Make(so);
  }

  std::shared_ptr<Buffer> Bytes(int64_t n, uint8_t seed) {
    auto b = *Buffer::Allocate(pool_.get(), n);
    for (int64_t i = 0; i < n; ++i) b->mutable_data()[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 9));
    return b;
  }

  // A GET of a URL as a client would do it: status and body.
  objstore::HttpResponse Download(const std::string& url) {
    auto easy = *objstore::MakeEasy();
    objstore::HttpRequest r;
    r.url = url;
    r.tls.ca_cert_path = Env("QUIVER_S3_CA");
    r.timeout_ms = 30000;
    auto resp = objstore::Perform(easy.get(), r);
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    return resp.ok() ? *resp : objstore::HttpResponse{};
  }

  std::string endpoint_, bucket_;
  std::shared_ptr<MemoryPool> pool_;
};

TEST_F(S3StoreTest, PutThenPresignedGetReturnsTheBytesThenRemoveDeletes) {
  auto store = MakeStore(ClientOptions(bucket_));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto bytes = Bytes(300000, 3);
  auto id = (*store)->Put(bytes, 0);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto link = (*store)->Link(*id, NowEpochMs() + 60000);
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->url.rfind(endpoint_ + "/" + bucket_ + "/unit/chunks/" + *id + "?X-Amz-Algorithm=", 0), 0u);
  auto got = Download(link->url);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, std::string(bytes->view()));
  auto back = (*store)->Get(*id);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)->view(), bytes->view());
  (*store)->Remove(*id);
  EXPECT_EQ(Download(link->url).status, 404);
  EXPECT_FALSE((*store)->Get(*id).ok());
}

TEST_F(S3StoreTest, ForgedExpiredOtherKeyAndOtherHostLinksAreRefusedByTheStore) {
  auto store = MakeStore(ClientOptions(bucket_));
  ASSERT_TRUE(store.ok());
  auto id = (*store)->Put(Bytes(1000, 5), 0);
  ASSERT_TRUE(id.ok());
  auto link = (*store)->Link(*id, NowEpochMs() + 60000);
  ASSERT_TRUE(link.ok());
  ASSERT_EQ(Download(link->url).status, 200);
  std::string forged = link->url;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(Download(forged).status, 403);
  // Expired: signed 120 s ago for 60 s.
  auto expired = (*store)->client()->PresignGet((*store)->ChunkKey(*id), NowEpochMs() / 1000 - 120, 60);
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(Download(*expired).status, 403);
  // The same query string on another object.
  auto other = (*store)->Put(Bytes(10, 1), 0);
  ASSERT_TRUE(other.ok());
  std::string moved = link->url;
  moved.replace(moved.find(*id), id->size(), *other);
  EXPECT_EQ(Download(moved).status, 403);
  // Another user's key that does not own the bucket.
  if (!Env("QUIVER_OTHER_ACCESS_KEY_ID").empty()) {
    auto o = ClientOptions(bucket_);
    o.credentials = {Env("QUIVER_OTHER_ACCESS_KEY_ID"), Env("QUIVER_OTHER_SECRET_ACCESS_KEY"), ""};
    auto c = objstore::S3Client::Make(o);
    ASSERT_TRUE(c.ok());
    auto url = (*c)->PresignGet((*store)->ChunkKey(*id), NowEpochMs() / 1000, 60);
    ASSERT_TRUE(url.ok());
    EXPECT_EQ(Download(*url).status, 403);
  }
  // Signed for localhost, used on 127.0.0.1.
  if (endpoint_.find("127.0.0.1") != std::string::npos) {
    auto o = ClientOptions(bucket_);
    o.endpoint.replace(o.endpoint.find("127.0.0.1"), 9, "localhost");
    auto c = objstore::S3Client::Make(o);
    ASSERT_TRUE(c.ok());
    auto url = (*c)->PresignGet((*store)->ChunkKey(*id), NowEpochMs() / 1000, 60);
    ASSERT_TRUE(url.ok());
    std::string swapped = *url;
    swapped.replace(swapped.find("localhost"), 9, "127.0.0.1");
    EXPECT_EQ(Download(swapped).status, 403);
  }
  (*store)->Remove(*id);
  (*store)->Remove(*other);
}

TEST_F(S3StoreTest, RangedGetsAndSizeOfAnObject) {
  auto client = objstore::S3Client::Make(ClientOptions(bucket_));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto bytes = Bytes(100000, 3);
  ASSERT_TRUE((*client)->Put("unit/ranged", bytes->span()).ok());
  auto size = (*client)->Size("unit/ranged");
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(size->value_or(-1), 100000);
  auto mid = (*client)->GetRange("unit/ranged", 54321, 1000);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  ASSERT_TRUE(mid->has_value());
  EXPECT_EQ(**mid, std::string(bytes->view().substr(54321, 1000)));
  auto tail = (*client)->GetRange("unit/ranged", 99990, 100);  // past the end: short
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_EQ(**tail, std::string(bytes->view().substr(99990)));
  auto past = (*client)->GetRange("unit/ranged", 200000, 10);  // 416: nothing
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ(**past, "");
  auto missing = (*client)->Size("unit/no-such-object");
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_FALSE(missing->has_value());
  EXPECT_TRUE((*client)->Delete("unit/ranged").ok());
}

TEST_F(S3StoreTest, LargeObjectsGoUpInMultipartParts) {
  auto o = ClientOptions(bucket_);
  o.part_bytes = int64_t{5} << 20;
  o.multipart_threshold_bytes = int64_t{5} << 20;
  auto store = MakeStore(o);
  ASSERT_TRUE(store.ok());
  auto bytes = Bytes((int64_t{12} << 20) + 12345, 9);
  auto id = (*store)->Put(bytes, 0);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ((*store)->client()->stats().multipart_uploads, 1);
  auto got = Download((*(*store)->Link(*id, NowEpochMs() + 60000)).url);
  EXPECT_EQ(got.status, 200);
  EXPECT_TRUE(got.body == bytes->view());
  (*store)->Remove(*id);
}

TEST_F(S3StoreTest, DocumentsRoundTripAndList) {
  auto store = MakeStore(ClientOptions(bucket_), "unit-docs");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->PutDocument("ops/a/manifest", "{\"x\":1}").ok());
  ASSERT_TRUE((*store)->PutDocument("ops/b/manifest", "{}").ok());
  auto got = (*store)->GetDocument("ops/a/manifest");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, "{\"x\":1}");
  auto names = (*store)->ListDocuments("ops/");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"ops/a/manifest", "ops/b/manifest"}));
  ASSERT_TRUE((*store)->RemoveDocument("ops/a/manifest").ok());
  ASSERT_TRUE((*store)->RemoveDocument("ops/b/manifest").ok());
  auto none = (*store)->GetDocument("ops/a/manifest");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(S3StoreTest, AMissingBucketOrWrongCredentialsFailAtStartNamingTheStoreAndStatus) {
  auto missing = MakeStore(ClientOptions("quiver-no-such-bucket"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("bucket 'quiver-no-such-bucket'"), std::string::npos)
      << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("HTTP 404"), std::string::npos) << missing.status().ToString();
  auto o = ClientOptions(bucket_);
  o.credentials.secret_access_key = "wrong" + o.credentials.secret_access_key;
  auto wrong = MakeStore(o);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("HTTP 403"), std::string::npos) << wrong.status().ToString();
  EXPECT_EQ(wrong.status().message().find(o.credentials.secret_access_key), std::string::npos);
}

// The bucket's other lifecycle rules survive quiver's rule (RGW): a rule of
// another tool stays, two prefixes get a rule each, and setting a rule
// again replaces it instead of adding a second.
TEST_F(S3StoreTest, TheLifecycleRuleIsMergedIntoTheBucketsOtherRules) {
  // Fresh buckets (a configuration outlives the test).
  const std::string run = std::to_string(NowEpochMs() % 100000000);
  const std::string bucket = bucket_ + "-lc-" + run;
  auto client = objstore::S3Client::Make(ClientOptions(bucket));
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->CreateBucket().ok());
  const Status other = (*client)->PutLifecycleConfiguration(
      "<LifecycleConfiguration><Rule><ID>keep-me</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled"
      "</Status><Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>");
  ASSERT_TRUE(other.ok()) << other.ToString();
  auto count = [](const std::string& xml, const std::string& what) {
    int n = 0;
    for (size_t p = xml.find(what); p != std::string::npos; p = xml.find(what, p + 1)) ++n;
    return n;
  };
  ASSERT_TRUE(MakeStore(ClientOptions(bucket), "unit-a").ok());
  ASSERT_TRUE(MakeStore(ClientOptions(bucket), "unit-b").ok());
  ASSERT_TRUE(MakeStore(ClientOptions(bucket), "unit-a").ok());  // again: replaced, not added
  auto got = (*client)->GetLifecycle();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  const std::string& xml = **got;
  EXPECT_EQ(count(xml, "<Rule>"), 3) << xml;
  EXPECT_EQ(count(xml, "<ID>keep-me</ID>"), 1) << xml;
  EXPECT_EQ(count(xml, "<Days>30</Days>"), 1) << xml;
  EXPECT_EQ(count(xml, "<ID>quiver-results:unit-a/</ID>"), 1) << xml;
  EXPECT_EQ(count(xml, "<ID>quiver-results:unit-b/</ID>"), 1) << xml;
  // A bucket without a configuration answers none, and gets just quiver's rule.
  const std::string bare = bucket_ + "-lc2-" + run;
  auto bare_client = objstore::S3Client::Make(ClientOptions(bare));
  ASSERT_TRUE((*bare_client)->CreateBucket().ok());
  auto none = (*bare_client)->GetLifecycle();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value()) << **none;
  ASSERT_TRUE(MakeStore(ClientOptions(bare), "unit-c").ok());
  auto one = (*bare_client)->GetLifecycle();
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ(count(**one, "<Rule>"), 1) << **one;
  EXPECT_EQ(count(**one, "<ID>quiver-results:unit-c/</ID>"), 1) << **one;
}

TEST(S3Lifecycle, MergeKeepsOtherRulesAndReplacesOursAndTheOlderRuleOfTheSamePrefix) {
  const std::string existing =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/"
      "2006-03-01/\"><Rule><ID>keep-me</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"
      "<Expiration><Days>30</Days></Expiration></Rule><Rule><ID>quiver-results</ID><Filter><Prefix>t1/</Prefix>"
      "</Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>quiver-results"
      "</ID><Filter><Prefix>t2/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
      "</Rule><Rule><ID>quiver-results:t1/</ID><Filter><Prefix>t1/</Prefix></Filter><Status>Enabled</Status>"
      "<Expiration><Days>9</Days></Expiration></Rule></LifecycleConfiguration>";
  auto merged = objstore::MergeLifecycleRule(existing, "t1/", 2);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(*merged,
            "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Rule><ID>keep-me</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"
            "<Expiration><Days>30</Days></Expiration></Rule>"
            "<Rule><ID>quiver-results</ID><Filter><Prefix>t2/</Prefix></Filter><Status>Enabled</Status>"
            "<Expiration><Days>1</Days></Expiration></Rule>"
            "<Rule><ID>quiver-results:t1/</ID><Filter><Prefix>t1/</Prefix></Filter><Status>Enabled</Status>"
            "<Expiration><Days>2</Days></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>2"
            "</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>");
  auto fresh = objstore::MergeLifecycleRule("", "a&b<c/", 1);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->find("<ID>quiver-results:a&amp;b&lt;c/</ID><Filter><Prefix>a&amp;b&lt;c/</Prefix>"),
            std::string::npos)
      << *fresh;
  EXPECT_FALSE(objstore::MergeLifecycleRule("<Error/>", "t1/", 1).ok());
  EXPECT_FALSE(objstore::MergeLifecycleRule("<LifecycleConfiguration><Rule><ID>x</ID>", "t1/", 1).ok());
  EXPECT_FALSE(objstore::MergeLifecycleRule("", "t1/", 0).ok());
  EXPECT_EQ(objstore::LifecycleRuleId(std::string(300, 'p')).size(), std::string("quiver-results:sha256:").size() + 64);
}

// Issue 39: a failover re-run is taken with a lease, a conditional PUT
// (If-None-Match: *) of ops/<op>/lease-<attempt> (server/failover.h). Of
// servers that notice the same dead owner at once, the store must let
// exactly one create it. 8 clients (one store each, connections already
// open) send their PUT of one name at the same instant (a spin barrier),
// 12 rounds on fresh names: each round exactly one is told it created the
// lease, the others that it exists, and the document holds the winner's body.
TEST_F(S3StoreTest, OfConditionalPutsOfOneNameAtTheSameInstantExactlyOneCreatesIt) {
  constexpr int kClients = 8;
  constexpr int kRounds = 12;
  std::vector<std::unique_ptr<S3ChunkStore>> stores;
  for (int i = 0; i < kClients; ++i) {
    auto store = MakeStore(ClientOptions(bucket_), "unit-lease");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->GetDocument("ops/warm").ok());  // the connection is open before the race
    stores.push_back(std::move(*store));
  }
  const std::string run = std::to_string(NowEpochMs());
  for (int round = 0; round < kRounds; ++round) {
    const std::string name = "ops/" + run + "-" + std::to_string(round) + "/lease-1";
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<Result<bool>> got(kClients, Result<bool>(false));
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i) {
      threads.emplace_back([&, i] {
        ++ready;
        while (!go.load()) std::this_thread::yield();
        got[static_cast<size_t>(i)] =
            stores[static_cast<size_t>(i)]->PutDocumentIfAbsent(name, "server-" + std::to_string(i));
      });
    }
    while (ready.load() < kClients) std::this_thread::yield();
    go = true;
    for (auto& t : threads) t.join();
    int winners = 0, winner = -1;
    for (int i = 0; i < kClients; ++i) {
      const auto& r = got[static_cast<size_t>(i)];
      ASSERT_TRUE(r.ok()) << "round " << round << " client " << i << ": " << r.status().ToString();
      if (*r) {
        ++winners;
        winner = i;
      }
    }
    EXPECT_EQ(winners, 1) << "round " << round << ": " << winners << " of " << kClients << " clients created " << name;
    auto body = stores[0]->GetDocument(name);
    ASSERT_TRUE(body.ok() && body->has_value()) << name;
    EXPECT_EQ(**body, "server-" + std::to_string(winner)) << "round " << round;
    // A later claim of the same lease is refused too.
    auto again = stores[1]->PutDocumentIfAbsent(name, "late");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_FALSE(*again);
    ASSERT_TRUE(stores[0]->RemoveDocument(name).ok());
  }
}

TEST_F(S3StoreTest, AStoreThatDoesNotAnswerFailsFastInsteadOfHanging) {
  auto o = ClientOptions(bucket_);
  o.endpoint = "https://127.0.0.1:9";  // discard port: nothing listens
  o.max_attempts = 2;
  auto client = objstore::S3Client::Make(o);
  ASSERT_TRUE(client.ok());
  const auto t0 = std::chrono::steady_clock::now();
  auto bytes = Bytes(100, 1);
  const Status st = (*client)->Put("unit/x", bytes->span());
  const auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("object store https://127.0.0.1:9"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("after 2 attempts"), std::string::npos) << st.ToString();
  EXPECT_LT(s, 10.0);
}

}  // namespace
}  // namespace quiver::fetch
