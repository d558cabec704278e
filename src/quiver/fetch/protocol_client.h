// quiver/fetch/protocol_client.h — the Databricks SQL protocol (HiveServer2
// TCLIService over HTTPS, ../shared/docs/fetch-protocol.md) spoken with
// libcurl: OpenSession, ExecuteStatement (runAsync, direct results),
// GetOperationStatus polling with backoff, GetResultSetMetadata,
// FetchResults paging (and link refresh from a row offset),
// CancelOperation, CloseOperation, CloseSession.
//
// Each RPC is one HTTPS POST of a strict binary-protocol Thrift message
// (Authorization: Bearer <token>, Content-Type: application/x-thrift). The
// reply is read whole, at most options.max_reply_bytes, and parsed with a
// Thrift TConfiguration whose maximum message size is the reply's length, so a
// string or list claiming more bytes or elements than the reply holds (e.g.
// 2^31) is refused before anything is allocated for it.
//
// Errors: IOError for transport failures and HTTP statuses other than 200
// (naming the RPC and the status, never the token); Invalid when a reply does
// not parse or breaks the protocol; a server-side error status (TStatus
// ERROR / INVALID_HANDLE, operation state ERROR) is IOError carrying the
// server's displayMessage (else errorMessage) and sqlState; a canceled
// operation is Cancelled, a timed-out one Timeout.
//
// Thread safety: one thread at a time per client (the download engine's
// thread owns it during a fetch); the token is held only inside the client.
// The generated Thrift types never appear in this header.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"

namespace quiver::fetch {

/// How to reach and authenticate to a server.
struct ConnectionOptions {
  /// "https://HOST:PORT/PATH" (the warehouse's HTTP path). http:// is refused
  /// unless allow_http (tests of plain transports only).
  std::string server_url;
  /// Bearer token; sent only in the Authorization header, never logged.
  std::string token;
  /// PEM file of extra trusted CA certificates (a self-signed server).
  std::string ca_cert_path;
  /// Disables TLS certificate and host verification. Dangerous; the CLI
  /// says so loudly.
  bool insecure = false;
  bool allow_http = false;
  int64_t connect_timeout_ms = 10000;
  /// Whole-RPC timeout (connect + request + reply).
  int64_t rpc_timeout_ms = 120000;
  /// Largest reply accepted, in bytes (also the Thrift maximum message size).
  int64_t max_reply_bytes = int64_t{256} << 20;
  /// GetOperationStatus polling: first delay, doubled up to the maximum.
  /// The cap bounds how late a finished statement is noticed (a 1 s cap
  /// added up to ~0.9 s to a 1 s join); the Databricks drivers poll every
  /// ~100 ms.
  int64_t poll_initial_ms = 10;
  int64_t poll_max_ms = 100;
  /// Set by another thread to stop polling (Cancelled); may be null.
  const std::atomic<bool>* cancel = nullptr;
  /// OpenSession's configuration map (TOpenSessionReq.configuration): e.g.
  /// {"dialect", "postgres"} for a quiver server (docs/server.md).
  std::map<std::string, std::string> session_configuration;
};

/// An operation handle (opaque: guid and secret bytes as the server sent).
struct OperationHandle {
  std::string guid;
  std::string secret;
  int32_t operation_type = 0;
  bool has_result_set = false;
};

/// One CloudFetch link (TSparkArrowResultLink).
struct ResultLink {
  std::string file_link;
  int64_t expiry_time_ms = 0;  ///< epoch milliseconds
  int64_t start_row_offset = 0;
  int64_t row_count = 0;
  int64_t bytes_num = 0;  ///< uncompressed Arrow IPC bytes of the file
  std::vector<std::pair<std::string, std::string>> http_headers;
};

/// One inline Arrow batch (TSparkArrowBatch): a record batch message.
struct InlineBatch {
  std::string batch;
  int64_t row_count = 0;
};

/// One FetchResults reply.
struct FetchPage {
  bool has_more_rows = false;
  int64_t start_row_offset = 0;
  std::vector<ResultLink> links;
  std::vector<InlineBatch> arrow_batches;
};

/// GetResultSetMetadata, reduced to what the client uses.
struct ResultSetInfo {
  int32_t result_format = 0;  ///< 0 ARROW_BASED_SET, 3 URL_BASED_SET
  bool lz4_compressed = false;
  /// The Arrow IPC schema message (encapsulated, no end-of-stream); empty
  /// when the server sent none.
  std::string arrow_schema_message;
  /// Decoded arrow_schema_message, or null.
  SchemaPtr arrow_schema;
  std::vector<std::string> column_names;
  int64_t uncompressed_bytes = -1;  ///< -1 = not sent
  int64_t compressed_bytes = -1;
};

/// A statement that finished on the server.
struct StatementResult {
  OperationHandle operation;
  ResultSetInfo info;
  /// The first page when the server sent direct results.
  std::optional<FetchPage> first_page;
  /// The server closed the operation already (direct results held it all).
  bool closed_by_server = false;
};

/// Wall-clock counters of a client.
struct ProtocolStats {
  int64_t rpcs = 0;
  int64_t fetch_results_calls = 0;
  int64_t status_polls = 0;
};

class ProtocolClient {
 public:
  /// Opens a session (OpenSession, protocol SPARK V8). Errors as in the file
  /// comment; Invalid for a malformed URL.
  static Result<std::unique_ptr<ProtocolClient>> Connect(ConnectionOptions options);
  /// Closes the session if still open (errors ignored).
  ~ProtocolClient();

  /// ExecuteStatement (runAsync, Arrow results, CloudFetch, LZ4 allowed,
  /// direct results of at most `direct_max_rows`), then polls
  /// GetOperationStatus until FINISHED, then GetResultSetMetadata (unless the
  /// direct results carried it; asked again, with the poll's backoff, while
  /// it answers STILL_EXECUTING, as a balanced server that lags may). On any
  /// error after the operation handle came back, the operation is closed
  /// (CloseOperation, best effort) so the server drops its chunks now.
  Result<StatementResult> Execute(const std::string& sql, int64_t direct_max_rows = 0);

  /// FetchResults. `first` sends FETCH_FIRST, otherwise FETCH_NEXT;
  /// `start_row_offset` >= 0 is sent as startRowOffset (paging by explicit
  /// offset, and link refresh). `max_rows` is the page size requested.
  /// `abort` (borrowed, may be null): once true, a call still waiting for
  /// the reply (a server may hold FetchResults until rows exist) is
  /// abandoned within about a second with Cancelled; the client stays
  /// usable (the next call opens a new connection).
  Result<FetchPage> Fetch(const OperationHandle& op, bool first, int64_t start_row_offset, int64_t max_rows = 100000,
                          const std::atomic<bool>* abort = nullptr);

  Status CancelOperation(const OperationHandle& op);
  Status CloseOperation(const OperationHandle& op);
  /// CloseSession; later RPCs fail with Invalid.
  Status Close();

  const ProtocolStats& stats() const;
  const ConnectionOptions& options() const;

  class Impl;

 private:
  explicit ProtocolClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Decodes an Arrow IPC schema message (as in arrowSchema) into a schema.
Result<SchemaPtr> DecodeSchemaMessage(const std::string& message, MemoryPool* pool);

}  // namespace quiver::fetch
