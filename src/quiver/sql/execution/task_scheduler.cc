// quiver/sql/execution/task_scheduler.cc — see task_scheduler.h.
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {

TaskScheduler::TaskScheduler(int num_threads) {
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { Loop(); });
}

TaskScheduler::~TaskScheduler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void TaskScheduler::Submit(std::function<void()> task) {
  if (threads_.empty()) {
    task();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void TaskScheduler::Loop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

int TaskScheduler::HardwareThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::shared_ptr<TaskScheduler> TaskScheduler::Default() {
  static std::shared_ptr<TaskScheduler> pool = std::make_shared<TaskScheduler>(HardwareThreads());
  return pool;
}

namespace {

// What the tasks of one ParallelFor share; kept alive by queued tasks that
// start after the call returned (they find no index left and do nothing).
struct ForState {
  std::mutex mutex;
  std::condition_variable done_cv;
  int next = 0;
  int n = 0;
  int finished = 0;
  Status first_error;
  const std::function<Status(int)>* body = nullptr;
  std::atomic<bool>* stop = nullptr;

  // Claims and runs indices until none is left. `body` is read only while
  // an index is claimed, so it is valid (the caller waits for it).
  void Drain() {
    while (true) {
      int i;
      const std::function<Status(int)>* b;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next >= n) return;
        i = next++;
        b = body;
      }
      Status st = (*b)(i);
      std::lock_guard<std::mutex> lock(mutex);
      if (!st.ok() && first_error.ok()) {
        first_error = st;
        if (stop) stop->store(true);
      }
      if (++finished == n) done_cv.notify_all();
    }
  }
};

}  // namespace

Status ParallelFor(TaskScheduler* scheduler, int n, const std::function<Status(int)>& body, std::atomic<bool>* stop) {
  if (n <= 0) return Status::OK();
  if (n == 1 || scheduler == nullptr || scheduler->num_threads() == 0) {
    Status first;
    for (int i = 0; i < n; ++i) {
      Status st = body(i);
      if (!st.ok() && first.ok()) {
        first = st;
        if (stop) stop->store(true);
      }
    }
    return first;
  }
  auto state = std::make_shared<ForState>();
  state->n = n;
  state->body = &body;
  state->stop = stop;
  for (int t = 0; t < n - 1; ++t) scheduler->Submit([state] { state->Drain(); });
  state->Drain();
  std::unique_lock<std::mutex> lock(state->mutex);
  state->done_cv.wait(lock, [&] { return state->finished == n; });
  state->body = nullptr;
  return state->first_error;
}

}  // namespace quiver::sql
