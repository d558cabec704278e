// quiver/server/statement_runner.h — runs an operation's statement on its
// own thread: its batches go through a ChunkWriter into the ChunkStore
// (backpressure: the producer pauses at max_unfetched_chunks unfetched
// chunks), the result format (inline or links) is decided from the first
// chunks, and the outcome is set on the Operation — or, with a shared store,
// published as its manifest (SharedState) before any RPC sees it FINISHED.
// Finish cancels, joins and removes what an operation holds.
//
// Internal to the server layer. Thread safety: Launch and Finish may be
// called from any thread; one Finish per operation (after it was taken out
// of the registry).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "quiver/base/status.h"
#include "quiver/fetch/chunk_store.h"
#include "quiver/fetch/chunk_writer.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/server/operation.h"
#include "quiver/server/result_service.h"

namespace quiver::server {

class SharedState;

class StatementRunner {
 public:
  /// `options`, `chunk_pool` (charged with chunk bytes being written),
  /// `exec_pool` (a planned statement's schema message) and `shared`
  /// (nullptr without a shared store) are not owned and outlive the runner.
  StatementRunner(const ResultServiceOptions& options, MemoryPool* chunk_pool, MemoryPool* exec_pool,
                  SharedState* shared)
      : o_(options), chunk_pool_(chunk_pool), exec_pool_(exec_pool), shared_(shared) {}

  /// The body of an operation's thread. A statement (op->plan set) first
  /// waits for op->plan_ticket's turn at the planning gate (giving up when
  /// cancelled), plans, gives the slot back, and sets its schema and
  /// `planned`; a planning error (syntax, 54001, the planning deadline's
  /// 57014, ...) fails the operation with its SQLSTATE. Then produces
  /// op->stream's chunks until it ends, fails, is cancelled or passes
  /// max_result_bytes (SQLSTATE 54000); a statement cancelled for
  /// statement_timeout_ms fails with 57014. Releases op->stream when the
  /// producer ends.
  void Run(Operation* op);

  /// Sets op->plan to plan `sql` in `session` with options.executor (the
  /// result's TIME columns as text: WithTimeAsText, hive_types.h), the same
  /// for ExecuteStatement's statements and failover re-runs; Run calls it on
  /// the operation's thread once op->plan_ticket is admitted.
  void SetPlan(Operation* op, std::string sql, StatementSession session) const;

  /// Cancels, joins and removes the chunks of an operation already taken
  /// out of the registry. A published operation (shared store) belongs to
  /// the store: its chunks and documents are removed only when
  /// `remove_documents` (the client closed it), otherwise the expiry sweep
  /// of any server does it.
  void Finish(const std::shared_ptr<Operation>& op, bool remove_documents = false);

  /// Counters since the runner started (ResultServiceStats).
  int64_t finished_operations() const { return finished_operations_; }
  int64_t producer_pauses() const { return producer_pauses_; }
  int64_t chunks_written() const { return chunks_written_; }
  int64_t chunk_ipc_bytes() const { return chunk_ipc_bytes_; }
  int64_t chunk_served_bytes() const { return chunk_served_bytes_; }

 private:
  class UploadPipeline;
  // Decides inline or links (op->mu held): not before the whole result is
  // in a shared store; inline when the client cannot download or the whole
  // result is at most inline_threshold_bytes; links once it is larger or
  // has two chunks.
  void DecideLocked(Operation* op);
  // Registers a stored chunk with its operation (the client may fetch it).
  void AddChunk(Operation* op, const fetch::Chunk& chunk, const std::string& id);
  // Shared store: the producer has ended; its outcome goes to the store as
  // the manifest before any RPC can see FINISHED, so every server answers
  // the same. A failed or cancelled statement's chunks are removed at once;
  // one closed from another server (close marker) leaves nothing behind.
  void Publish(Operation* op, const Status& error);
  // Waits at the gate and plans op->plan (Run's first step).
  Status Plan(Operation* op);

  const ResultServiceOptions& o_;
  MemoryPool* chunk_pool_;
  MemoryPool* exec_pool_;
  SharedState* shared_;
  std::atomic<int64_t> finished_operations_{0}, producer_pauses_{0}, chunks_written_{0}, chunk_ipc_bytes_{0},
      chunk_served_bytes_{0};
};

}  // namespace quiver::server
