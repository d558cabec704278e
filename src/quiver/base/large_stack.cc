// quiver/base/large_stack.cc — see large_stack.h.
#include "quiver/base/large_stack.h"

#include <pthread.h>
#include <unistd.h>

#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>

namespace quiver {
namespace {

thread_local bool tls_on_large_stack = false;

struct Task {
  const std::function<void()>* fn = nullptr;
  bool done = false;
};

// Never destroyed (its threads outlive static destruction, waiting).
class LargeStackPool {
 public:
  Status Run(const std::function<void()>& fn) {
    if (tls_on_large_stack) {
      fn();
      return Status::OK();
    }
    Task task{&fn, false};
    std::unique_lock<std::mutex> lock(mu_);
    queue_.push_back(&task);
    if (static_cast<size_t>(idle_) < queue_.size() && threads_ < kMaxLargeStackThreads) {
      Status st = StartThread();
      if (!st.ok() && threads_ == 0) {
        queue_.pop_back();
        return st;
      }
    }
    work_.notify_one();
    done_.wait(lock, [&] { return task.done; });
    return Status::OK();
  }

 private:
  Status StartThread() {
    const auto page = static_cast<int64_t>(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
    int64_t size = (kLargeStackBytes + page - 1) / page * page;
    if (size < static_cast<int64_t>(PTHREAD_STACK_MIN)) size = static_cast<int64_t>(PTHREAD_STACK_MIN);
    pthread_attr_t attr;
    if (int rc = pthread_attr_init(&attr); rc != 0)
      return Status::IOError(std::string("pthread_attr_init failed: ") + std::strerror(rc));
    struct AttrGuard {
      pthread_attr_t* a;
      ~AttrGuard() { pthread_attr_destroy(a); }
    } guard{&attr};
    if (int rc = pthread_attr_setstacksize(&attr, static_cast<size_t>(size)); rc != 0)
      return Status::IOError("pthread_attr_setstacksize(" + std::to_string(size) + ") failed: " + std::strerror(rc));
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    if (int rc = pthread_create(&thread, &attr, &LargeStackPool::Main, this); rc != 0)
      return Status::IOError("could not start a thread with a " + std::to_string(size >> 20) +
                             " MiB stack: " + std::strerror(rc));
    ++threads_;
    return Status::OK();
  }

  static void* Main(void* arg) {
    tls_on_large_stack = true;
    auto* self = static_cast<LargeStackPool*>(arg);
    std::unique_lock<std::mutex> lock(self->mu_);
    while (true) {
      ++self->idle_;
      self->work_.wait(lock, [&] { return !self->queue_.empty(); });
      --self->idle_;
      Task* task = self->queue_.front();
      self->queue_.pop_front();
      lock.unlock();
      (*task->fn)();
      lock.lock();
      task->done = true;
      self->done_.notify_all();
    }
    return nullptr;
  }

  std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<Task*> queue_;
  int threads_ = 0;
  int idle_ = 0;
};

}  // namespace

Status RunOnLargeStack(const std::function<void()>& fn) {
  static LargeStackPool* pool = new LargeStackPool();
  return pool->Run(fn);
}

}  // namespace quiver
