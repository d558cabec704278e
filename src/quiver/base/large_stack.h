// quiver/base/large_stack.h — run a function on a thread with a large
// stack, for recursive passes over trees whose depth comes from outside (a
// statement's parse tree: issue 35 #1), as defence in depth behind the
// limits that bound that depth.
//
// The threads are reused, never ended: libraries keep per-thread state
// (libpg_query creates one pthread key per thread it first runs on and
// never deletes it; glibc has 1,024 keys), so a thread per call would
// exhaust the process's keys after a thousand statements.
#pragma once

#include <cstdint>
#include <functional>

#include "quiver/base/status.h"

namespace quiver {

#if defined(__SANITIZE_ADDRESS__)
#define QUIVER_LARGE_STACK_SCALE 4
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QUIVER_LARGE_STACK_SCALE 4
#endif
#endif
#ifndef QUIVER_LARGE_STACK_SCALE
#define QUIVER_LARGE_STACK_SCALE 1
#endif

/// The stack size of the shared threads: 64 MiB of address space each,
/// committed by the kernel only as far as a function actually recurses.
/// AddressSanitizer builds get 4x: its redzones around every local make the
/// binder's frames about that much larger, and the depth limits (4,000
/// binder levels) are the same in every build.
inline constexpr int64_t kLargeStackBytes = (int64_t{64} << 20) * QUIVER_LARGE_STACK_SCALE;
/// How many shared threads may exist; calls beyond wait for one (FIFO).
inline constexpr int kMaxLargeStackThreads = 64;

/// Runs `fn` on one of the process's large-stack threads (kLargeStackBytes
/// each, at most kMaxLargeStackThreads, started on demand and kept) and
/// waits for it to return; called from such a thread, runs `fn` at once on
/// it. `fn` must not throw; thread-locals of the caller are not visible to
/// it. Returns IOError when no thread exists and none can be started
/// (naming the errno and the size); otherwise OK once `fn` has run.
/// Thread-safe; the cost is two context switches.
Status RunOnLargeStack(const std::function<void()>& fn);

}  // namespace quiver
