// quiver/sql/execution/task_scheduler.h — the worker pool that runs the
// pipelines of SQL statements (morsel-driven parallelism: Leis et al.,
// "Morsel-Driven Parallelism", SIGMOD 2014; DuckDB's TaskScheduler).
//
// One pool of threads is shared by every statement of a process (or of a
// server): a statement asks for at most ExecuteOptions::threads workers per
// pipeline, so N concurrent statements share the cores instead of each
// starting its own threads. The thread that asks for parallel work always
// takes part in it (it runs the tasks no worker has started yet), so a
// pipeline finishes even when every worker is busy with other statements,
// and nested pipelines (a scalar subquery run from inside a worker) cannot
// deadlock the pool.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "quiver/base/status.h"

namespace quiver::sql {

class TaskScheduler {
 public:
  /// Starts `num_threads` workers (0 is allowed: every task then runs on
  /// the thread that waits for it).
  explicit TaskScheduler(int num_threads);
  /// Finishes the queued tasks, then joins the workers.
  ~TaskScheduler();
  TaskScheduler(const TaskScheduler&) = delete;
  TaskScheduler& operator=(const TaskScheduler&) = delete;

  int num_threads() const { return static_cast<int>(threads_.size()); }

  /// Queues `task` for a worker. The task must not throw and must not wait
  /// for another queued task (ParallelFor's callers take part instead).
  void Submit(std::function<void()> task);

  /// The process-wide pool: one worker per hardware thread (at least 1),
  /// started on first use and kept for the life of the process.
  static std::shared_ptr<TaskScheduler> Default();

  /// The machine's hardware threads (std::thread::hardware_concurrency,
  /// at least 1): the default degree of parallelism.
  static int HardwareThreads();

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

/// Runs body(i) for every i in [0, n) on up to n threads: n - 1 tasks are
/// queued on `scheduler` and the calling thread runs the indices no worker
/// has taken yet, then waits for those that are running. Returns the first
/// error a body returned (the others still run to their end; a body that
/// sees `*stop` become true should return early — ParallelFor sets it on
/// the first error when given). n <= 0 does nothing; n == 1 or a null
/// scheduler runs everything on the calling thread.
/// `body` is referenced only until ParallelFor returns.
Status ParallelFor(TaskScheduler* scheduler, int n, const std::function<Status(int)>& body,
                   std::atomic<bool>* stop = nullptr);

}  // namespace quiver::sql
