// quiver/server/result_pages.cc — operation status, result metadata and
// pages of inline batches or links (result_pages.h).
#include "quiver/server/result_pages.h"

#include <chrono>
#include <vector>

#include "quiver/fetch/chunk_writer.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/server/hive_types.h"
#include "quiver/server/shared_state.h"
#include "quiver/server/thrift_messages.h"

namespace quiver::server {
using fetch::NowEpochMs;

namespace {

// IPC end-of-stream marker length (0xFFFFFFFF, then int32 0).
constexpr int64_t kEosBytes = 8;
// Largest IPC bytes of inline batches in one FetchResults reply (beyond the
// first chunk, which always goes).
constexpr int64_t kMaxInlinePageBytes = int64_t{16} << 20;

}  // namespace

template <typename Pred>
bool ResultPages::WaitFor(Operation* op, std::unique_lock<std::mutex>& lock, Pred pred) {
  if (pred() || o_.fetch_wait_ms == 0) return pred();
  // A worker waits only while fewer than max_waiting_rpcs others do: the
  // rest answer with what exists now (issue 35 #3).
  if (waiting_.fetch_add(1) >= o_.max_waiting_rpcs) {
    waiting_.fetch_sub(1);
    ++waits_declined_;
    return false;
  }
  const bool out = op->cv.wait_for(lock, std::chrono::milliseconds(o_.fetch_wait_ms), [&] {
    return pred() || op->failed || op->cancelled || op->cancel.load();
  }) && pred();
  waiting_.fetch_sub(1);
  return out;
}

bool ResultPages::WaitPlanned(Operation* op) {
  std::unique_lock<std::mutex> lock(op->mu);
  WaitFor(op, lock, [&] { return op->planned; });
  return op->failed && !op->planned;  // not an execution error after planning
}

void ResultPages::FillStatus(Operation* op, t::TGetOperationStatusResp* r) {
  std::unique_lock<std::mutex> lock(op->mu);
  r->__set_operationStarted(op->started_ms);
  r->__set_hasResultSet(true);
  if (op->failed) {
    r->__set_operationState(t::TOperationState::ERROR_STATE);
    r->__set_errorMessage(op->error);
    r->__set_displayMessage(op->error);
    r->__set_sqlState(op->sql_state);
    r->__set_errorCode(3);
    r->__set_operationCompleted(op->completed_ms);
  } else if (op->cancelled) {
    r->__set_operationState(t::TOperationState::CANCELED_STATE);
  } else if (op->decided) {
    r->__set_operationState(t::TOperationState::FINISHED_STATE);
    if (op->completed_ms) r->__set_operationCompleted(op->completed_ms);
  } else if (!op->planned && !op->remote) {
    r->__set_operationState(t::TOperationState::PENDING_STATE);  // queued or planning
  } else {
    r->__set_operationState(t::TOperationState::RUNNING_STATE);
  }
}

void ResultPages::FillMetadata(Operation* op, t::TGetResultSetMetadataResp* r) {
  std::unique_lock<std::mutex> lock(op->mu);
  WaitFor(op, lock, [&] { return op->decided; });
  if (op->failed) {
    r->status = ErrorStatus(op->error, t::TStatusCode::ERROR_STATUS, op->sql_state);
    return;
  }
  if (!op->decided) {
    r->status = ErrorStatus("the operation is still running: poll GetOperationStatus until FINISHED",
                            t::TStatusCode::STILL_EXECUTING_STATUS);
    return;
  }
  r->status = OkStatus();
  r->__set_schema(op->hive_schema ? *op->hive_schema : HiveSchema(*op->schema));
  r->__set_resultFormat(op->inline_mode ? t::TSparkRowSetType::ARROW_BASED_SET : t::TSparkRowSetType::URL_BASED_SET);
  r->__set_lz4Compressed(op->inline_mode ? op->inline_lz4 : op->chunk_lz4);
  r->__set_arrowSchema(op->arrow_schema);
  if (op->done) {
    // Whole-result sizes, known once the statement has finished: the IPC
    // bytes, and the bytes the chunk files hold (LZ4 frames or raw IPC).
    r->__set_uncompressedBytes(op->total_ipc_bytes);
    r->__set_compressedBytes(op->total_served_bytes);
  }
  r->__set_isStagingOperation(false);
}

void ResultPages::FillPage(Operation* op, bool first, int64_t start_row_offset, int64_t max_rows,
                           t::TFetchResultsResp* r, int32_t seqid, bool* replayed) {
  std::vector<ChunkRef> refs;
  bool inline_mode = false;
  bool inline_lz4 = false;
  int64_t page_start = 0;
  {
    std::unique_lock<std::mutex> lock(op->mu);
    size_t end = SIZE_MAX;
    const bool replay = !first && start_row_offset < 0 && seqid != 0 && seqid != op->exec_seqid &&
                        op->last_seqid == seqid && op->last_end > op->last_begin && op->last_end <= op->chunks.size();
    if (replay) {
      op->cursor = op->last_begin;
      end = op->last_end;
    }
    if (replayed) *replayed = replay;
    if (first) op->cursor = 0;
    if (start_row_offset >= 0) {
      // Wait until the chunk holding that row exists (or the result ended).
      WaitFor(op, lock, [&] {
        return op->done || (!op->chunks.empty() &&
                            op->chunks.back().start_row_offset + op->chunks.back().row_count > start_row_offset);
      });
      size_t k = 0;
      while (k < op->chunks.size() && op->chunks[k].start_row_offset + op->chunks[k].row_count <= start_row_offset) ++k;
      op->cursor = k;
    }
    WaitFor(op, lock, [&] { return op->decided && (op->cursor < op->chunks.size() || op->done); });
    if (op->failed) {
      r->status = ErrorStatus(op->error, t::TStatusCode::ERROR_STATUS, op->sql_state);
      return;
    }
    if (op->cancelled || op->cancel) {
      r->status = ErrorStatus("the operation was cancelled", t::TStatusCode::ERROR_STATUS, "HY008");
      return;
    }
    if (!op->decided) {
      r->status = OkStatus();
      r->__set_hasMoreRows(true);
      r->results.startRowOffset = 0;
      r->__isset.results = true;
      return;
    }
    inline_mode = op->inline_mode;
    inline_lz4 = op->inline_lz4;
    page_start = op->cursor < op->chunks.size() ? op->chunks[op->cursor].start_row_offset
                 : op->chunks.empty()           ? 0
                                                : op->chunks.back().start_row_offset + op->chunks.back().row_count;
    const size_t page_begin = op->cursor;
    int64_t rows = 0;
    int64_t page_ipc_bytes = 0;
    while (op->cursor < op->chunks.size() && op->cursor < end) {
      const ChunkRef& c = op->chunks[op->cursor];
      if (inline_mode) {
        // A page holds at least one chunk, then stops at maxRows rows or
        // kMaxInlinePageBytes IPC bytes (one reply stays bounded).
        if (!refs.empty() &&
            ((max_rows > 0 && rows + c.row_count > max_rows) || page_ipc_bytes + c.ipc_bytes > kMaxInlinePageBytes)) {
          break;
        }
        page_ipc_bytes += c.ipc_bytes;
      } else if (static_cast<int>(refs.size()) >= o_.max_links_per_fetch) {
        break;
      }
      rows += c.row_count;
      if (c.row_count > 0) refs.push_back(c);
      ++op->cursor;
    }
    r->__set_hasMoreRows(!(op->done && op->cursor >= op->chunks.size()));
    if (!replay) {
      op->last_seqid = seqid;
      op->last_begin = page_begin;
      op->last_end = op->cursor;
    }
    if (op->cursor > op->handed_out) {
      op->handed_out = op->cursor;
      op->cv.notify_all();  // a paused producer may go on
    }
  }
  r->status = OkStatus();
  r->results.startRowOffset = page_start;
  r->__isset.results = true;
  if (inline_mode) {
    std::vector<t::TSparkArrowBatch> batches;
    for (const auto& c : refs) {
      auto payload = InlinePayload(c, inline_lz4);
      if (!payload.ok()) {
        r->status = ErrorStatus("inline result chunk at row " + std::to_string(c.start_row_offset) + ": " +
                                payload.status().ToString());
        return;
      }
      t::TSparkArrowBatch b;
      b.batch = std::move(payload).value();
      b.rowCount = c.row_count;
      batches.push_back(std::move(b));
    }
    r->results.__set_arrowBatches(std::move(batches));
  } else {
    std::vector<t::TSparkArrowResultLink> links;
    const int64_t expiry = NowEpochMs() + o_.link_expiry_ms;
    for (const auto& c : refs) {
      auto link = o_.store->Link(c.id, expiry);
      if (!link.ok()) {
        r->status =
            ErrorStatus("result chunk at row " + std::to_string(c.start_row_offset) + ": " + link.status().ToString());
        return;
      }
      t::TSparkArrowResultLink l;
      l.fileLink = link->url;
      l.expiryTime = link->expiry_ms;
      l.startRowOffset = c.start_row_offset;
      l.rowCount = c.row_count;
      l.bytesNum = c.ipc_bytes;
      l.__set_httpHeaders({});
      links.push_back(std::move(l));
    }
    r->results.__set_resultLinks(std::move(links));
  }
}

Result<std::string> ResultPages::InlinePayload(const ChunkRef& c, bool lz4) {
  QUIVER_ASSIGN_OR_RETURN(auto bytes, o_.store->Get(c.id));
  if (c.lz4) {
    QUIVER_ASSIGN_OR_RETURN(bytes, fetch::Lz4FrameDecompress(bytes->span(), pool_, c.ipc_bytes));
  }
  if (bytes->size() != c.ipc_bytes || c.ipc_bytes < c.schema_message_bytes + kEosBytes) {
    return Status::Invalid("chunk holds " + std::to_string(bytes->size()) + " IPC bytes, expected " +
                           std::to_string(c.ipc_bytes));
  }
  std::span<const uint8_t> messages(bytes->data() + c.schema_message_bytes,
                                    static_cast<size_t>(c.ipc_bytes - c.schema_message_bytes - kEosBytes));
  if (lz4) {
    QUIVER_ASSIGN_OR_RETURN(auto frame, fetch::Lz4FrameCompress(messages, pool_));
    return std::string(frame->view());
  }
  return std::string(reinterpret_cast<const char*>(messages.data()), messages.size());
}

bool ResultPages::FillDirect(Operation* op, const t::TSparkGetDirectResults& d, SharedState* cursor_store,
                             t::TExecuteStatementResp* r) {
  t::TSparkDirectResults dr;
  t::TGetOperationStatusResp st;
  st.status = OkStatus();
  {
    std::unique_lock<std::mutex> lock(op->mu);
    WaitFor(op, lock, [&] { return op->decided; });
  }
  FillStatus(op, &st);
  dr.__set_operationStatus(st);
  bool decided, failed;
  {
    std::lock_guard<std::mutex> lock(op->mu);
    decided = op->decided;
    failed = op->failed;
  }
  bool complete_inline = false;
  if (decided && !failed) {
    t::TGetResultSetMetadataResp m;
    FillMetadata(op, &m);
    dr.__set_resultSetMetadata(m);
    t::TFetchResultsResp page;
    FillPage(op, false, -1, d.maxRows, &page, /*seqid=*/0, nullptr);
    if (cursor_store && page.status.statusCode == t::TStatusCode::SUCCESS_STATUS) {
      const Status saved = cursor_store->SaveCursor(op);
      if (!saved.ok()) page.status = ErrorStatus("saving the fetch cursor: " + saved.ToString());
    }
    const bool complete = page.status.statusCode == t::TStatusCode::SUCCESS_STATUS && !page.hasMoreRows;
    {
      std::lock_guard<std::mutex> lock(op->mu);
      complete_inline = complete && op->inline_mode;
    }
    dr.__set_resultSet(page);
  }
  r->__set_directResults(dr);
  return complete_inline;
}

}  // namespace quiver::server
