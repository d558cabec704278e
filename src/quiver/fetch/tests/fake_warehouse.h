// quiver/fetch/tests/fake_warehouse.h — a fault-injecting Databricks SQL
// protocol server for the fetch client's tests: HTTPS (cpp-httplib with a
// self-signed certificate made at start, SAN IP:127.0.0.1) on an ephemeral
// port of 127.0.0.1, Bearer token checked, TCLIService RPCs dispatched by the
// generated TCLIServiceProcessor over TMemoryBuffer + TBinaryProtocol, and
// /files/<i>?sig=..&exp=.. serving the chunk bodies the test prepared, with
// the faults it asks for (per file and attempt).
//
// Test code: errors throw std::runtime_error. Thread safety: the server runs
// its own threads; counters are atomics; the config must not change after
// Start.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace quiver::fetch::testing {

/// One CloudFetch file as served: `wire` is the body; the link announces
/// start_row, row_count and bytes_num (tests may make them lie).
struct FakeFile {
  std::string wire;
  int64_t start_row = 0;
  int64_t row_count = 0;
  int64_t bytes_num = 0;
};

enum class GetFault {
  kNone,
  kHttp500,            ///< 500 with a short body
  kHttp403,            ///< 403 (as for an expired or revoked link)
  kCutShort,           ///< Content-Length of the whole body, half the bytes, then close
  kResetAfterHeaders,  ///< headers, then close without a body byte
  kStall,              ///< half the body, then no byte for stall_ms, then close
  kEndless,            ///< chunked body (no Content-Length): the file, then its bytes again, forever
};

/// Which hostile FetchResults reply to send instead of the real one.
enum class HostileReply { kNone, kHugeList, kHugeString, kGarbage };

struct FakeConfig {
  std::string token = "secret-test-token";
  std::vector<FakeFile> files;
  /// The Arrow IPC schema message sent as arrowSchema (empty = none).
  std::string arrow_schema;
  bool lz4 = true;
  int links_per_page = 2;
  /// Empty FetchResults pages (hasMoreRows=true) before the first links.
  int empty_pages_first = 0;
  /// Lifetime of a signed link; an expired link gets 403.
  int64_t link_ttl_ms = 600000;
  /// Serve Range requests (and say "Accept-Ranges: bytes").
  bool range_support = true;
  int64_t uncompressed_bytes = -1;
  /// (file index, attempt index) -> fault of that GET.
  std::map<std::pair<int, int>, GetFault> faults;
  int64_t stall_ms = 3000;
  HostileReply hostile_fetch = HostileReply::kNone;
  /// GetOperationStatus answers RUNNING this many times, then FINISHED.
  int running_polls = 1;
  /// Non-empty: the statement ends in ERROR_STATE with this displayMessage.
  std::string fail_statement_message;
  /// Delay before serving each file body (ms), to make cancellation midway
  /// deterministic.
  int64_t file_delay_ms = 0;
  /// Inline Arrow results (ARROW_BASED_SET): each entry is one record batch
  /// message (LZ4-framed when lz4) and its rowCount; `files` is then unused.
  std::vector<std::pair<std::string, int64_t>> inline_batches;
  /// Send the first page (and metadata) as direct results of ExecuteStatement.
  bool direct_results = false;
  /// GetResultSetMetadata answers STILL_EXECUTING (no resultFormat) this
  /// many times after FINISHED, as a balanced server that lags may.
  int still_executing_metadata = 0;
};

struct FakeCounters {
  std::atomic<int64_t> rpcs{0};
  std::atomic<int64_t> fetch_results{0};
  std::atomic<int64_t> refresh_fetches{0};  ///< FetchResults for an offset already served
  std::atomic<int64_t> gets{0};
  std::atomic<int64_t> range_gets{0};
  std::atomic<int64_t> forbidden{0};
  std::atomic<int64_t> cancels{0};
  std::atomic<int64_t> close_operations{0};
  std::atomic<int64_t> metadata_calls{0};
  std::atomic<int64_t> close_sessions{0};
  std::atomic<int64_t> bad_auth{0};
};

class FakeWarehouse {
 public:
  /// Starts serving (throws on failure).
  static std::unique_ptr<FakeWarehouse> Start(FakeConfig config);
  ~FakeWarehouse();

  /// "https://127.0.0.1:PORT/sql/1.0/warehouses/fake".
  std::string url() const;
  /// PEM file of the server's self-signed certificate (to trust it).
  const std::string& ca_cert_path() const;
  FakeCounters& counters();
  /// GET attempts of file i so far.
  int attempts(int file) const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::fetch::testing
