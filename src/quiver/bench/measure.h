// quiver/bench/measure.h — what the benchmarks measure with: clocks, the one
// median, and the process's memory as the OS reports it.
//
// Benchmarks quote medians over rounds measured side by side (design notes,
// "Machine notes"): wall time from a steady clock, thread CPU time where
// other threads must not count, and resident memory from /proc.
//
// Thread safety: pure functions; ThreadCpuSeconds reads the calling
// thread's clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

using Clock = std::chrono::steady_clock;

/// Wall seconds from `begin` to `end`.
double Seconds(Clock::time_point begin, Clock::time_point end);

/// The median of `values` (the mean of the two middle values for an even
/// count); 0 for no values.
double Median(std::vector<double> values);

/// CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID).
double ThreadCpuSeconds();

/// CPU seconds (user + system) the whole process has used, every thread
/// included, child processes not (getrusage RUSAGE_SELF).
double ProcessCpuSeconds();

/// The process's resident set in bytes (/proc/self/statm), 0 when unreadable.
int64_t ResidentBytes();

/// A byte value of /proc/self/status, e.g. "VmRSS" or "VmHWM" (the file
/// gives kB; this returns bytes); -1 when the key is absent or unreadable.
int64_t ProcStatusBytes(const char* key);

/// printf(3) into a string of any length (the report lines of the
/// benchmarks); `fmt` and the arguments as for printf.
[[gnu::format(printf, 1, 2)]] std::string StringPrintf(const char* fmt, ...);

/// Highest held bytes seen per pool path, for a pool and its descendants:
/// on every allocation the pool and each ancestor is sampled (held is read
/// after accounting, so the maximum over allocations is the pool's peak over
/// the observed interval). Reset() starts a new interval.
/// Thread safety: the listener may be called from any thread (it locks).
class PeakByPath : public AllocationListener {
 public:
  void OnAllocate(const MemoryPool& pool, int64_t, int64_t) override { Sample(pool); }
  void OnReserve(const MemoryPool& pool, int64_t) override { Sample(pool); }  // off-heap pages
  void Sample(const MemoryPool& pool) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const MemoryPool* p = &pool; p != nullptr; p = p->parent()) {
      int64_t& v = peak_[p->path()];
      v = std::max(v, p->held_bytes());
    }
  }
  // Highest held of the first path ending in `suffix` (-1 when not seen).
  int64_t Peak(const std::string& suffix) const {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t best = -1;
    for (const auto& [path, v] : peak_) {
      if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        best = std::max(best, v);
      }
    }
    return best;
  }
  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> peak_;
};

}  // namespace quiver::bench
