// quiver/memory/memory_pool.h — accounting pools arranged as a tree
// (design notes "Memory in three roles"; Velox MemoryPool, Arrow Java
// BufferAllocator with its RoundingPolicy and AllocationListener).
//
// A pool charges every allocation to itself and to each ancestor up to the
// root, reserving atomically before any byte is taken from the allocator
// (so two threads can never both pass a limit check), and rolling the
// reservation back when the allocator fails.
//
// Words (design notes): held = bytes charged now; peak = highest held;
// requested = what callers asked for; granted = what the rounding policy
// charged (>= requested).
//
// Thread safety: all methods are thread-safe. Ownership: pools are shared
// (std::shared_ptr); a child keeps its parent alive; every Buffer keeps its
// pool alive.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/allocator.h"

namespace quiver {

class MemoryPool;

/// How a request is turned into the granted (charged) size.
enum class RoundingPolicy {
  kExact,       ///< granted == requested (quiver's default)
  kPowerOfTwo,  ///< below 16 MiB: next power of two; at or above: exact
                ///< (Arrow Java DefaultRoundingPolicy, chunk size 16 MiB)
};

/// Power-of-two rounding chunk size (Arrow Java: 16 MiB).
inline constexpr int64_t kRoundingChunkBytes = int64_t{16} << 20;

/// Granted size for a request under a policy; a pure function. Returns
/// `requested_bytes` unchanged when rounding would overflow.
int64_t GrantedBytes(RoundingPolicy policy, int64_t requested_bytes);

/// Observer of a pool's allocations (Arrow Java AllocationListener). Called
/// synchronously on the allocating thread, after accounting; must not
/// allocate from the same pool.
class AllocationListener {
 public:
  virtual ~AllocationListener() = default;
  virtual void OnAllocate(const MemoryPool& pool, int64_t requested_bytes, int64_t granted_bytes) {}
  virtual void OnRelease(const MemoryPool& pool, int64_t granted_bytes) {}
  virtual void OnFailure(const MemoryPool& pool, int64_t requested_bytes, const Status& error) {}
  /// Bytes charged / uncharged with Reserve / Unreserve (memory that did not
  /// come from the pool's allocator, e.g. off-heap pages), after the charge
  /// took effect (OnReserve) or was released (OnUnreserve).
  virtual void OnReserve(const MemoryPool& pool, int64_t bytes) {}
  virtual void OnUnreserve(const MemoryPool& pool, int64_t bytes) {}
};

struct MemoryPoolOptions {
  std::string name = "root";
  /// Byte limit for this pool's held bytes (including its children); -1 = none.
  int64_t limit_bytes = -1;
  RoundingPolicy rounding = RoundingPolicy::kExact;
  /// Byte source; nullptr = the parent's (for a root: the system allocator).
  Allocator* allocator = nullptr;
};

/// A snapshot of a pool's counters.
struct MemoryPoolStats {
  int64_t held_bytes = 0;             ///< charged now (granted sizes)
  int64_t peak_bytes = 0;             ///< highest held_bytes
  int64_t total_allocated_bytes = 0;  ///< sum of granted sizes ever charged
  int64_t num_allocations = 0;        ///< successful allocations ever
  int64_t requested_bytes = 0;        ///< sum of requested sizes ever
  int64_t granted_bytes = 0;          ///< sum of granted sizes ever
  int64_t live_allocations = 0;       ///< allocations not yet freed
  int64_t failed_allocations = 0;
};

/// One allocation from a pool: the pointer and the sizes charged.
struct PoolAllocation {
  uint8_t* data = nullptr;
  int64_t requested_bytes = 0;
  int64_t granted_bytes = 0;  ///< what the allocator block holds and the pool charged
  int64_t alignment = 64;
};

class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  /// A root pool. Its allocator defaults to the system allocator.
  static std::shared_ptr<MemoryPool> MakeRoot(MemoryPoolOptions options = {});

  /// A child charged to this pool and its ancestors. The child's allocator
  /// defaults to this pool's.
  std::shared_ptr<MemoryPool> MakeChild(MemoryPoolOptions options);

  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  /// Reserves the granted size of `size_bytes` (>= 0) up to the root, then
  /// takes the bytes from the allocator, aligned to `alignment` (power of two,
  /// 8..4096). A zero-byte request returns a non-null static zero-size
  /// pointer and charges nothing.
  /// Errors: OutOfMemory naming the request, the pool whose limit was hit,
  /// its held bytes and its limit; or naming the allocator when it failed.
  /// On error nothing stays charged.
  Result<PoolAllocation> Allocate(int64_t size_bytes, int64_t alignment = 64);

  /// Returns an allocation of this pool (exactly once).
  void Free(const PoolAllocation& allocation);

  /// Changes an allocation's size. Shrinking tries the allocator's in-place
  /// shrink, then a move; growing reserves first. On error the allocation is
  /// unchanged (still valid, still charged). On success *allocation is
  /// updated (its data may have moved).
  Status Reallocate(PoolAllocation* allocation, int64_t new_size_bytes);

  /// Charges / uncharges bytes that did not come from this pool's allocator
  /// (e.g. an off-heap page mapped elsewhere). Same limit rules as Allocate.
  Status Reserve(int64_t bytes);
  void Unreserve(int64_t bytes);

  /// Fails the `nth` (1-based) allocation attempted from now on in this pool
  /// or any descendant with OutOfMemory ("injected failure"); 0 disables.
  /// For tests that fail every allocation index in turn.
  void InjectFailureAt(int64_t nth);
  /// Allocation attempts since the last InjectFailureAt call. Attempts are
  /// counted only while some pool of the process has a failure armed
  /// (nth > 0), so that production allocations skip the counters.
  int64_t attempts_since_injection() const;

  /// Reports outstanding allocations as an error and marks the pool closed
  /// (later allocations fail with Invalid). Never aborts. OK when held is 0.
  Status Close();

  /// Adds an observer of the allocations, releases and failures of this pool
  /// and of its descendants (callbacks receive the pool the request was made
  /// in). The pool keeps the listener alive. Listeners cannot be removed.
  void AddListener(std::shared_ptr<AllocationListener> listener);

  const std::string& name() const { return options_.name; }
  /// Slash-separated names from the root, e.g. "root/ipc-read".
  std::string path() const;
  int64_t limit_bytes() const { return options_.limit_bytes; }
  RoundingPolicy rounding() const { return options_.rounding; }
  Allocator* allocator() const { return allocator_; }
  MemoryPool* parent() const { return parent_.get(); }

  int64_t held_bytes() const { return held_.load(std::memory_order_relaxed); }
  int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }

  /// Room left for new charges here: the smallest (limit - held), never
  /// negative, over this pool and its ancestors that have a limit; -1 when
  /// none of them has one. A snapshot (other threads may charge the pools
  /// right after): use it to refuse early with a clear message, never as
  /// the reservation itself — Allocate and Reserve still reserve first.
  int64_t AvailableBytes() const;

  /// The one OutOfMemory text for "`what` cannot get `needed_bytes` here",
  /// naming the limited pool with the least room on the path to the root:
  ///   "<what> needs N bytes but pool 'P' has R bytes available (held H of
  ///   limit L)", or, when no pool on the path has a limit,
  ///   "<what> needs N bytes but the pool refused them (no limit set: the
  ///   byte count overflowed)". Thread-safe (reads counters only).
  Status OutOfMemoryError(std::string_view what, int64_t needed_bytes) const;
  MemoryPoolStats stats() const;
  /// Resets peak to the current held.
  void ResetPeak();

 private:
  MemoryPool(MemoryPoolOptions options, std::shared_ptr<MemoryPool> parent, Allocator* allocator);

  // Impl details are in memory_pool.cc.
  Status ReserveChain(int64_t bytes, int64_t requested_bytes);
  void ReleaseChain(int64_t bytes);
  bool ShouldInjectFailure();
  // A copy of the listeners, taken under listeners_mutex_ so that callbacks
  // run without the lock.
  std::vector<std::shared_ptr<AllocationListener>> ListenersSnapshot() const;
  // Calls OnAllocate on the listeners of this pool and of every ancestor.
  void NotifyAllocate(int64_t requested_bytes, int64_t granted_bytes);

  MemoryPoolOptions options_;
  std::shared_ptr<MemoryPool> parent_;
  Allocator* allocator_;
  std::atomic<int64_t> held_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> total_allocated_{0};
  std::atomic<int64_t> num_allocations_{0};
  std::atomic<int64_t> requested_total_{0};
  std::atomic<int64_t> live_allocations_{0};
  std::atomic<int64_t> failed_allocations_{0};
  std::atomic<int64_t> inject_at_{0};
  std::atomic<int64_t> attempts_{0};
  std::atomic<bool> closed_{false};
  mutable std::mutex listeners_mutex_;
  std::atomic<bool> has_listeners_{false};  // set once, by the first AddListener
  std::vector<std::shared_ptr<AllocationListener>> listeners_;
};

/// A root pool over the allocator named by QUIVER_ALLOCATOR (or system),
/// with no limit. For tools and tests; library code takes pools explicitly.
Result<std::shared_ptr<MemoryPool>> MakeDefaultRootPool(std::string name = "root", int64_t limit_bytes = -1);

}  // namespace quiver
