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

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace quiver::bench
