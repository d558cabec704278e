// quiver/server/statement_runner.cc — an operation's producer thread:
// execution, chunking, backpressure and publishing (statement_runner.h).
#include "quiver/server/statement_runner.h"

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "quiver/fetch/chunk_writer.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/server/hive_types.h"
#include "quiver/server/shared_state.h"
#include "quiver/server/thrift_messages.h"

namespace quiver::server {
using fetch::NowEpochMs;

namespace {

std::string TimeLimitError(const ResultServiceOptions& o) {
  return "statement cancelled: it ran past the server's statement time limit of " +
         std::to_string(o.statement_timeout_ms) + " ms";
}

}  // namespace

// One chunk upload in flight beside the producer (shared store: a PUT
// takes as long as encoding the next chunk). The chunk's bytes stay
// charged to the chunks pool until its upload ends.
class StatementRunner::UploadPipeline {
 public:
  UploadPipeline(StatementRunner* runner, Operation* op) : runner_(runner), op_(op) {}
  ~UploadPipeline() { (void)Finish(); }
  void Start(fetch::Chunk chunk) {
    chunk_ = std::move(chunk);
    // Grouped by attempt, so that a server running the statement again
    // after this one died finds every chunk it wrote (Failover).
    id_ = std::async(std::launch::async,
                     [store = runner_->o_.store, bytes = chunk_->bytes, group = ChunkGroup(op_->guid, op_->attempt)] {
                       return store->PutGrouped(bytes, 0, group);
                     });
  }
  // Waits for the upload in flight and registers its chunk.
  Status Finish() {
    if (!chunk_) return Status::OK();
    auto id = id_.get();
    fetch::Chunk chunk = std::move(*chunk_);
    chunk_.reset();
    if (!id.ok()) return id.status();
    runner_->AddChunk(op_, chunk, *id);
    return Status::OK();
  }

 private:
  StatementRunner* runner_;
  Operation* op_;
  std::optional<fetch::Chunk> chunk_;
  std::future<Result<std::string>> id_;
};

void StatementRunner::DecideLocked(Operation* op) {
  if (op->decided) return;
  if (shared_ && !op->done) return;  // FINISHED = the whole result is in the store
  if (!op->can_download) {
    op->decided = true;
    op->inline_mode = true;
  } else if (op->done) {
    op->decided = true;
    op->inline_mode = op->total_ipc_bytes <= o_.inline_threshold_bytes;
  } else if (op->total_ipc_bytes > o_.inline_threshold_bytes || op->chunks.size() >= 2) {
    op->decided = true;
    op->inline_mode = false;
  }
}

void StatementRunner::AddChunk(Operation* op, const fetch::Chunk& chunk, const std::string& id) {
  const int64_t served_bytes = chunk.bytes->size();
  ++chunks_written_;
  chunk_ipc_bytes_ += chunk.ipc_bytes;
  chunk_served_bytes_ += served_bytes;
  ChunkRef ref{id,           chunk.start_row_offset,     chunk.row_count, chunk.ipc_bytes,
               served_bytes, chunk.schema_message_bytes, chunk.lz4};
  std::lock_guard<std::mutex> lock(op->mu);
  op->total_ipc_bytes += chunk.ipc_bytes;
  op->total_served_bytes += served_bytes;
  op->chunks.push_back(std::move(ref));
  DecideLocked(op);
  op->cv.notify_all();
}

Status StatementRunner::Plan(Operation* op) {
  if (op->plan_ticket && !op->plan_ticket->Wait(op->cancel)) {
    return Status::Cancelled("the statement was cancelled while it waited to be planned");
  }
  auto stream = op->plan();
  if (op->plan_ticket) op->plan_ticket->Release();  // the next statement may plan
  op->plan = nullptr;
  if (!stream.ok()) return stream.status();
  QUIVER_ASSIGN_OR_RETURN(std::string message, SchemaMessage((*stream)->schema(), exec_pool_));
  op->stream = std::move(stream).value();
  std::lock_guard<std::mutex> lock(op->mu);
  op->schema = op->stream->schema();
  op->arrow_schema = std::move(message);
  op->planned = true;
  op->cv.notify_all();
  return Status::OK();
}

void StatementRunner::SetPlan(Operation* op, std::string sql, StatementSession session) const {
  op->plan = [this, sql = std::move(sql), session = std::move(session),
              cancel = &op->cancel]() -> Result<std::unique_ptr<RecordBatchStream>> {
    QUIVER_ASSIGN_OR_RETURN(auto stream, o_.executor->Execute(sql, session, cancel, exec_pool_));
    return WithTimeAsText(std::move(stream), exec_pool_);
  };
}

void StatementRunner::Run(Operation* op) {
  Status error;
  if (op->plan) error = Plan(op);
  UploadPipeline uploads(this, op);
  fetch::ChunkWriterOptions wo;
  wo.pool = chunk_pool_;
  wo.target_chunk_bytes = o_.chunk_bytes;
  wo.lz4 = op->chunk_lz4;
  if (error.ok()) {
    auto writer = fetch::ChunkWriter::Make(op->stream.get(), wo);
    if (!writer.ok()) error = writer.status();
    while (error.ok()) {
      if (op->cancel) break;
      if (o_.max_unfetched_chunks > 0 && !shared_) {
        // Backpressure: wait until the client has taken enough chunks.
        std::unique_lock<std::mutex> lock(op->mu);
        while (!op->cancel && op->chunks.size() - op->handed_out >= static_cast<size_t>(o_.max_unfetched_chunks)) {
          if (!op->paused) {
            ++producer_pauses_;
            op->paused_since_ms = NowEpochMs();
          }
          op->paused = true;
          op->cv.wait_for(lock, std::chrono::milliseconds(100));
        }
        if (op->paused) op->paused_total_ms += NowEpochMs() - op->paused_since_ms;
        op->paused = false;
        if (op->cancel) break;
        // Handed out but not downloaded: beyond the most recent
        // max_unfetched_chunks they go to disk (a download reads the file;
        // a chunk already downloaded in full is there already).
        std::vector<std::string> to_disk;
        const size_t keep = static_cast<size_t>(o_.max_unfetched_chunks);
        while (op->handed_out > keep && op->moved_to_disk < op->handed_out - keep) {
          to_disk.push_back(op->chunks[op->moved_to_disk++].id);
        }
        lock.unlock();
        for (const auto& id : to_disk) o_.store->SpillServed(id);
      }
      auto next = (*writer)->Next();  // with a shared store: encodes chunk k+1 while chunk k uploads
      if (!next.ok()) {
        error = next.status();
        break;
      }
      if (const Status st = uploads.Finish(); !st.ok()) {
        error = st;
        break;
      }
      if (!next->has_value()) break;
      fetch::Chunk chunk = std::move(**next);
      if (o_.max_result_bytes > 0) {
        // Every earlier chunk is registered here (the upload in flight
        // was finished above), so the total is what the store holds.
        int64_t stored = 0;
        size_t count = 0;
        {
          std::lock_guard<std::mutex> lock(op->mu);
          stored = op->total_served_bytes;
          count = op->chunks.size();
        }
        if (stored + chunk.bytes->size() > o_.max_result_bytes) {
          error =
              Status::Invalid("result too large: chunk " + std::to_string(count) + " would bring it to " +
                              std::to_string(stored + chunk.bytes->size()) + " bytes in the " + o_.store->Describe() +
                              ", past the server's limit of " + std::to_string(o_.max_result_bytes) +
                              " bytes per result (max_result_bytes); add a LIMIT or select fewer columns")
                  .WithSqlState("54000");
          break;
        }
      }
      if (shared_) {
        uploads.Start(std::move(chunk));
        continue;
      }
      auto id = o_.store->Put(chunk.bytes, 0);
      if (!id.ok()) {
        error = id.status();
        break;
      }
      AddChunk(op, chunk, *id);
    }
    // The upload in flight (also after an error or a cancel: its chunk is
    // then registered, so it is removed with the others).
    if (const Status st = uploads.Finish(); !st.ok() && error.ok()) error = st;
  }
  op->stream.reset();  // releases the statement's memory (exec pool) now
  ++finished_operations_;
  if (shared_) {
    Publish(op, error);
    return;
  }
  std::lock_guard<std::mutex> lock(op->mu);
  op->completed_ms = NowEpochMs();
  if (op->timed_out) {
    op->failed = true;
    op->error = TimeLimitError(o_);
    op->sql_state = "57014";
  } else if (op->cancel) {
    op->cancelled = true;  // also when the producer stopped with Cancelled
  } else if (!error.ok()) {
    op->failed = true;
    op->error = error.ToString();
    op->sql_state = SqlStateFor(error);
  } else {
    op->done = true;
    DecideLocked(op);
  }
  op->cv.notify_all();
}

void StatementRunner::Publish(Operation* op, const Status& error) {
  if (op->superseded || shared_->Superseded(*op)) {
    // Another server took the statement over (this one's status went
    // stale): its attempt publishes; this one's chunks go.
    op->superseded = true;
    std::lock_guard<std::mutex> lock(op->mu);
    for (const auto& c : op->chunks) o_.store->Remove(c.id);
    op->chunks.clear();
    op->ended = true;
    op->failed = true;
    op->error = "another server took this statement over";
    op->sql_state = "HY000";
    op->cv.notify_all();
    return;
  }
  std::string state, text;
  std::vector<std::string> drop;
  // A heartbeat writing "running" finishes before this manifest is built;
  // none starts after (ended).
  std::unique_lock<std::mutex> manifest_lock(op->manifest_mu);
  {
    std::lock_guard<std::mutex> lock(op->mu);
    op->ended = true;
    op->completed_ms = NowEpochMs();
    op->expiry_ms = op->completed_ms + o_.operation_idle_timeout_ms;
    if (op->timed_out) {
      op->error = TimeLimitError(o_);
      op->sql_state = "57014";
      state = "failed";
    } else if (op->cancel) {
      state = "cancelled";
    } else if (!error.ok()) {
      op->error = error.ToString();
      op->sql_state = SqlStateFor(error);
      state = "failed";
    } else {
      state = "finished";
      op->inline_mode = !op->can_download || op->total_ipc_bytes <= o_.inline_threshold_bytes;
    }
    if (state != "finished") {
      for (const auto& c : op->chunks) drop.push_back(c.id);
      op->chunks.clear();
    }
    text = ManifestText(*op, state);
  }
  for (const auto& id : drop) o_.store->Remove(id);
  const Status st = shared_->WriteOutcome(*op, text, op->close_requested);
  std::lock_guard<std::mutex> lock(op->mu);
  if (!st.ok() && state == "finished") {
    // Without a manifest no server can answer for the result: fail it.
    for (const auto& c : op->chunks) o_.store->Remove(c.id);
    op->chunks.clear();
    state = "failed";
    op->error = "the result could not be recorded in the store: " + st.ToString();
    op->sql_state = "HY000";
  }
  // Published: the store answers for it from now on (a failed or
  // cancelled one too, until it expires or is closed).
  op->published = st.ok() && !op->close_requested;
  if (state == "finished") {
    op->done = true;
    op->decided = true;
  } else if (state == "failed") {
    op->failed = true;
  } else {
    op->cancelled = true;
  }
  op->cv.notify_all();
}

void StatementRunner::Finish(const std::shared_ptr<Operation>& op, bool remove_documents) {
  op->cancel = true;
  {
    std::lock_guard<std::mutex> lock(op->mu);
    op->cv.notify_all();
  }
  if (op->worker.joinable()) op->worker.join();
  std::lock_guard<std::mutex> lock(op->mu);
  if (shared_ && op->published) {
    if (remove_documents) shared_->RemovePublished(*op);
  } else if (op->superseded) {
    for (const auto& c : op->chunks) o_.store->Remove(c.id);  // the documents are the later attempt's
  } else {
    for (const auto& c : op->chunks) o_.store->Remove(c.id);
    if (shared_) shared_->RemoveDocuments(*op);
  }
  op->chunks.clear();
  op->stream.reset();
}

}  // namespace quiver::server
