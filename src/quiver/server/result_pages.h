// quiver/server/result_pages.h — what the client reads of an operation:
// its status (TGetOperationStatusResp), its result metadata
// (TGetResultSetMetadataResp) and its pages of results (TFetchResultsResp:
// inline Arrow batches or signed links), from the operation's chunks and
// cursor. A page may wait up to fetch_wait_ms for the next chunk (or the
// result format) under the operation's condition variable, then replies
// with what exists (hasMoreRows stays true); at most max_waiting_rpcs RPCs
// wait at once, the others reply at once (so waits never hold every RPC
// worker: issue 35 #3).
//
// Internal to the server layer. Thread safety: every method may be called
// from any thread; it takes the operation's mu itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/server/operation.h"
#include "quiver/server/result_service.h"

namespace quiver::server {

class SharedState;

class ResultPages {
 public:
  /// `options` (its store, fetch_wait_ms, max_links_per_fetch,
  /// link_expiry_ms) and `pool` (inline payloads being re-framed) are not
  /// owned and outlive this.
  ResultPages(const ResultServiceOptions& options, MemoryPool* pool) : o_(options), pool_(pool) {}

  /// PENDING while the statement waits to be planned or plans, RUNNING
  /// until the result format is decided, then FINISHED; ERROR with the
  /// statement's message and SQLSTATE; CANCELED.
  void FillStatus(Operation* op, t::TGetOperationStatusResp* r);

  /// Waits (bounded, like a page) until the statement has been planned or
  /// has failed; true when planning failed (its error and SQLSTATE are
  /// set), false for an error in execution after planning.
  bool WaitPlanned(Operation* op);

  /// RPCs waiting now, and those that did not wait because
  /// max_waiting_rpcs others were (since the service started).
  int64_t waiting_rpcs() const { return waiting_.load(); }
  int64_t waits_declined() const { return waits_declined_.load(); }

  /// Waits (bounded) for the result format; then the Hive and Arrow
  /// schemas, the format, LZ4 and (once finished) the whole-result sizes.
  /// STILL_EXECUTING when the format is not decided within the wait.
  void FillMetadata(Operation* op, t::TGetResultSetMetadataResp* r);

  /// One page of results from the cursor (FETCH_FIRST rewinds it;
  /// `start_row_offset` >= 0 starts at the chunk holding that row). Inline:
  /// at least one chunk, then up to `max_rows` rows and 16 MiB of IPC
  /// bytes; links: up to max_links_per_fetch. `seqid` is the request's
  /// Thrift sequence id (0 = none): a FETCH_NEXT without startRowOffset
  /// whose seqid is that of the last page served is a retry of that
  /// request (the reply was lost, or a balancer re-sent it to another
  /// server) and gets the same chunks again, unless the client sent that
  /// seqid with its ExecuteStatement too (a constant seqid says nothing);
  /// *replayed (when given) says so. Any other page becomes the last page,
  /// and advances what a paused producer counts as handed out.
  void FillPage(Operation* op, bool first, int64_t start_row_offset, int64_t max_rows, t::TFetchResultsResp* r,
                int32_t seqid, bool* replayed);

  /// getDirectResults: r->directResults gets the status (after waiting,
  /// bounded, for the result format), then unless it failed the metadata
  /// and the first page (up to d.maxRows); with `cursor_store` (shared
  /// store) the cursor is saved. Returns true when that page is the whole
  /// result inline: the client will not call CloseOperation, so the caller
  /// closes the operation and sets directResults.closeOperation.
  bool FillDirect(Operation* op, const t::TSparkGetDirectResults& d, SharedState* cursor_store,
                  t::TExecuteStatementResp* r);

 private:
  template <typename Pred>
  bool WaitFor(Operation* op, std::unique_lock<std::mutex>& lock, Pred pred);
  // A chunk as one inline TSparkArrowBatch: its record batch messages
  // (schema and end-of-stream cut off), LZ4-framed when asked.
  Result<std::string> InlinePayload(const ChunkRef& c, bool lz4);

  const ResultServiceOptions& o_;
  MemoryPool* pool_;
  std::atomic<int> waiting_{0};
  std::atomic<int64_t> waits_declined_{0};
};

}  // namespace quiver::server
