// quiver/fetch/fetch_result.h — a query result fetched from a Databricks
// SQL-protocol server, as a RecordBatchStream delivering batches strictly in
// row order.
//
// CloudFetch results (URL_BASED_SET) go through the DownloadEngine (parallel,
// byte-bounded, retried, refreshed); each chunk is decoded zero-copy by the
// IPC reader from its mapping, so every batch's buffers point into the chunk
// and the chunk's mapping is released when its last batch is. The chunk's
// window share is returned once all its batches were delivered (or earlier,
// when they are all dropped): a consumer that keeps every batch (fetch all)
// holds them in its pool, outside the window.
// Inline Arrow results (ARROW_BASED_SET) are paged synchronously.
//
// Integrity, beyond the engine's: each chunk's schema must equal the
// result's (arrowSchema when the server sent it, else the first chunk's);
// exactly rowCount rows are delivered from each chunk — extra rows are
// server padding and dropped (counted in rows_dropped()), fewer rows are
// Invalid naming the chunk, its row range and expected vs actual; at the end
// the rows delivered equal the rows announced, and the decompressed bytes
// equal the metadata's uncompressedBytes when the server sent it.
//
// Thread safety: Next() from one thread; Cancel() from any thread (e.g. a
// signal-watching thread); stats from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "quiver/columnar/record_batch_stream.h"
#include "quiver/fetch/download_engine.h"
#include "quiver/fetch/protocol_client.h"

namespace quiver::fetch {

struct FetchOptions {
  /// Download settings; download.pool is required and is also the IPC
  /// reader's pool. An empty download.tls takes the connection's CA file
  /// and insecure flag.
  DownloadOptions download;
  /// Rows asked as direct results with ExecuteStatement (0 = none).
  int64_t direct_max_rows = 0;
  /// Check the decompressed total against uncompressedBytes when sent.
  bool check_total_bytes = true;
};

class FetchResult : public RecordBatchStream {
 public:
  /// Connects, runs `sql`, and opens its result. The client is owned by the
  /// result (its session closed when the result is destroyed).
  static Result<std::unique_ptr<FetchResult>> Query(ConnectionOptions connection, const std::string& sql,
                                                    FetchOptions options);
  /// Opens the result of a finished statement of `client`.
  static Result<std::unique_ptr<FetchResult>> Open(std::shared_ptr<ProtocolClient> client, StatementResult statement,
                                                   FetchOptions options);
  ~FetchResult() override;

  /// The result's schema (arrowSchema, else the first chunk's; an empty
  /// schema for a statement without a result set).
  const SchemaPtr& schema() const override;
  /// The next batch in row order, nullptr after the last. Errors as in the
  /// file comment and the engine's; Cancelled after Cancel().
  Result<RecordBatchPtr> Next() override;

  /// Cancels the fetch and the operation on the server. Thread-safe.
  void Cancel();

  /// Engine counters; null for inline results.
  const DownloadStats* download_stats() const;
  int64_t rows_delivered() const { return rows_delivered_.load(); }
  int64_t rows_dropped() const { return rows_dropped_.load(); }
  int64_t chunks_consumed() const { return chunks_consumed_.load(); }
  /// The protocol client (for its stats).
  const ProtocolClient& client() const { return *client_; }

  class Impl;

 private:
  FetchResult() = default;
  std::shared_ptr<ProtocolClient> client_;
  std::unique_ptr<Impl> impl_;
  std::atomic<int64_t> rows_delivered_{0};
  std::atomic<int64_t> rows_dropped_{0};
  std::atomic<int64_t> chunks_consumed_{0};
};

}  // namespace quiver::fetch
