// The S3 client's retry policy (s3_client.h) against a local HTTP server
// that answers what a throttled or failing store answers: 503 SlowDown,
// 500 InternalError, 403. No S3 store needed.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "quiver/objstore/s3_client.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::objstore {
namespace {

// A store that answers the first `failures` requests with `status` (and the
// S3 error `code`), then 200; it counts the requests it saw.
class FlakyStore {
 public:
  FlakyStore(int failures, int status, std::string code)
      : failures_(failures), status_(status), code_(std::move(code)) {
    server_.Put(".*", [this](const httplib::Request&, httplib::Response& res) { Answer(res); });
    server_.Get(".*", [this](const httplib::Request&, httplib::Response& res) { Answer(res); });
    server_.Delete(".*", [this](const httplib::Request&, httplib::Response& res) { Answer(res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FlakyStore() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }

 private:
  void Answer(httplib::Response& res) {
    const int n = requests_.fetch_add(1);
    if (failures_ < 0 || n < failures_) {
      res.status = status_;
      res.set_content("<Error><Code>" + code_ + "</Code></Error>", "application/xml");
      return;
    }
    res.status = 200;
    res.set_content("payload", "application/octet-stream");
  }

  const int failures_, status_;
  const std::string code_;
  std::atomic<int> requests_{0};
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

S3ClientOptions Options(const std::string& endpoint) {
  S3ClientOptions o;
  o.endpoint = endpoint;
  o.bucket = "b";
  o.credentials = {"AKID", "secret", ""};
  o.backoff_base_ms = 1;
  o.backoff_max_ms = 4;
  return o;
}

std::span<const uint8_t> Bytes() {
  static const uint8_t kBytes[] = {1, 2, 3, 4, 5};
  return kBytes;
}

TEST(S3Retry, BackoffCapDoublesFromTheBaseUpToTheMaximum) {
  S3ClientOptions o;
  o.backoff_base_ms = 100;
  o.backoff_max_ms = 5000;
  EXPECT_EQ(S3BackoffCapMs(o, 0), 100);
  EXPECT_EQ(S3BackoffCapMs(o, 1), 200);
  EXPECT_EQ(S3BackoffCapMs(o, 5), 3200);
  EXPECT_EQ(S3BackoffCapMs(o, 6), 5000);
  EXPECT_EQ(S3BackoffCapMs(o, 1000000), 5000);  // no overflow
  EXPECT_TRUE(S3RetryableStatus(503));
  EXPECT_TRUE(S3RetryableStatus(500));
  EXPECT_TRUE(S3RetryableStatus(429));
  EXPECT_FALSE(S3RetryableStatus(403));
  EXPECT_FALSE(S3RetryableStatus(404));
}

TEST(S3Retry, SlowDownIsRetriedUntilItSucceedsAndCounted) {
  FlakyStore store(6, 503, "SlowDown");  // more than the old 4 attempts
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(Options(store.endpoint())));
  ASSERT_OK(client->Put("chunks/1", Bytes()));
  EXPECT_EQ(store.requests(), 7);
  const S3ClientStats s = client->stats();
  EXPECT_EQ(s.requests, 7);
  EXPECT_EQ(s.retries, 6);
  EXPECT_EQ(s.throttled, 6);
  EXPECT_EQ(s.server_errors, 0);
  EXPECT_EQ(s.failures, 0);
  EXPECT_GE(s.backoff_ms, 6);  // each wait is at least 1 ms
  EXPECT_EQ(s.put_bytes, 5);
}

TEST(S3Retry, InternalErrorIsRetriedAsAServerError) {
  FlakyStore store(2, 500, "InternalError");
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(Options(store.endpoint())));
  ASSERT_OK_AND_ASSIGN(auto got, client->Get("k", 1024));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, "payload");
  EXPECT_EQ(client->stats().server_errors, 2);
  EXPECT_EQ(client->stats().throttled, 0);
}

TEST(S3Retry, AccessDeniedIsNotRetried) {
  FlakyStore store(-1, 403, "AccessDenied");
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(Options(store.endpoint())));
  const Status st = client->Put("chunks/1", Bytes());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(store.requests(), 1);
  EXPECT_NE(st.message().find("PUT 'chunks/1' answered HTTP 403 AccessDenied"), std::string::npos) << st.ToString();
  EXPECT_EQ(client->stats().retries, 0);
}

TEST(S3Retry, AttemptBudgetSpentIsNamedInTheError) {
  FlakyStore store(-1, 503, "SlowDown");
  auto o = Options(store.endpoint());
  o.max_attempts = 5;
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(o));
  const Status st = client->Put("chunks/9", Bytes());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(store.requests(), 5);
  EXPECT_NE(st.message().find("object store " + store.endpoint() +
                              " bucket 'b': PUT 'chunks/9' answered HTTP 503 "
                              "SlowDown after 5 attempts in "),
            std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("(retry budget 5 attempts or 30.0 s)"), std::string::npos) << st.ToString();
  EXPECT_EQ(client->stats().failures, 1);
  EXPECT_EQ(client->stats().throttled, 5);
}

TEST(S3Retry, TimeBudgetStopsRetriesBeforeTheAttemptsRunOut) {
  FlakyStore store(-1, 503, "SlowDown");
  auto o = Options(store.endpoint());
  o.max_attempts = 1000;
  o.backoff_base_ms = 100;
  o.backoff_max_ms = 100;
  o.retry_budget_ms = 400;
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(o));
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = client->Put("chunks/2", Bytes());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(st.ok());
  EXPECT_LT(s, 2.0);
  EXPECT_GE(store.requests(), 2);
  EXPECT_LT(store.requests(), 1000);
  EXPECT_NE(st.message().find("time budget reached"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("retry budget 1000 attempts or 0.4 s"), std::string::npos) << st.ToString();
}

TEST(S3Retry, DeleteHasItsOwnShorterBudget) {
  FlakyStore store(-1, 503, "SlowDown");
  auto o = Options(store.endpoint());
  o.delete_max_attempts = 3;
  ASSERT_OK_AND_ASSIGN(auto client, S3Client::Make(o));
  const Status st = client->Delete("chunks/3");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(store.requests(), 3);
  EXPECT_NE(st.message().find("after 3 attempts"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("(retry budget 3 attempts or 2.0 s)"), std::string::npos) << st.ToString();
}

TEST(S3Retry, ANegativeBudgetIsRefused) {
  auto o = Options("http://127.0.0.1:9");
  o.retry_budget_ms = -1;
  EXPECT_FALSE(S3Client::Make(o).ok());
}

}  // namespace
}  // namespace quiver::objstore
