// quiver/join/task_memory_manager.h — per-task memory for the join path:
// a memory mode chosen per task, pages handed to memory consumers, and
// up-front reservations (Spark's TaskMemoryManager / MemoryConsumer, as used
// by LongToUnsafeRowMap since SPARK-54116, rebuilt on quiver's pool tree).
//
// Two memory modes (design notes, "Memory words"):
//   on-heap  — pages come from the task pool's allocator through
//              MemoryPool::Allocate (glibc, jemalloc, mimalloc or mmap, as
//              the pool was configured).
//   off-heap — pages are private anonymous mappings made by this manager
//              (mmap MAP_PRIVATE | MAP_ANONYMOUS), optionally advised as
//              transparent huge pages, charged to the pool with
//              MemoryPool::Reserve *before* they are mapped, and unmapped
//              (returned to the OS) when freed.
// Both modes charge the same pool tree, so the pool's limits hold for both.
// Asking for bytes past a limit is a recoverable OutOfMemory naming the
// bytes needed and the bytes available: never a hang, never an abort.
//
// Counters: held (bytes this manager has charged now: pages plus unspent
// reservations), peak held, mapped (off-heap bytes mapped now) and peak
// mapped, pages live.
//
// Thread safety: every method of TaskMemoryManager is thread-safe; a
// MemoryPage or MemoryReservation object is used by one thread at a time
// (moving it to another thread is fine). Lifetime: the manager must outlive
// every page, reservation and consumer it handed out, and the pool must
// outlive the manager.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::join {

/// Where a task's pages come from (Spark's MemoryMode ON_HEAP / OFF_HEAP).
enum class MemoryMode { kOnHeap, kOffHeap };

/// "on-heap" or "off-heap".
std::string_view MemoryModeName(MemoryMode mode);

/// Parses "on-heap" / "off-heap" (also "onheap", "offheap"). Invalid names
/// the accepted spellings.
Result<MemoryMode> ParseMemoryMode(std::string_view name);

/// Configuration of one task's memory. Defaults: on-heap, no huge pages,
/// no pre-faulting, nothing retained.
struct TaskMemoryOptions {
  MemoryMode mode = MemoryMode::kOnHeap;
  /// Off-heap only: madvise(MADV_HUGEPAGE) pages of at least
  /// kHugePageBytes, mapped 2 MiB-aligned and rounded up to 2 MiB (the
  /// rounding is charged). Transparent huge pages must be in `madvise` or
  /// `always` mode for this to take effect; it is a hint, never an error.
  /// Off by default: huge pages make random lookups into large relations
  /// much cheaper (fewer TLB misses: `quiver bench join` measures ~30 vs
  /// ~50 ns per lookup at 10M keys), but on the VMs this project runs on
  /// a first-touched 2 MiB page costs 5-10x more per byte than 4 KiB pages
  /// recycled by the kernel, so they pay off for relations that are built
  /// into retained pages (retain_freed_bytes) or probed for long.
  bool huge_pages = false;
  /// Fault every page in when it is acquired, so that the code filling it
  /// pays no first-touch faults: off-heap by madvise(MADV_POPULATE_WRITE)
  /// (Linux 5.14+; falls back to touching one byte per 4 KiB), on-heap by
  /// touching one byte per 4 KiB. Costs the same faults, earlier and (off
  /// heap) in one batch, which is several times cheaper per page on VMs.
  bool prefault = false;
  /// Keep up to this many bytes of freed pages mapped (still charged to the
  /// pool and counted as held and mapped) and hand them to later page
  /// requests of a similar size (at least the request, at most 1.25x + 2
  /// MiB), so that a task building relation after relation (partitions,
  /// repeated joins) does not fault the same memory in again. 0 (the
  /// default) returns every freed page at once. TrimRetained() or the
  /// manager's destructor returns the kept pages (off-heap: unmapped).
  int64_t retain_freed_bytes = 0;
};

/// Size of a transparent huge page on x86-64 Linux.
inline constexpr int64_t kHugePageBytes = int64_t{2} << 20;
/// Size of a base page.
inline constexpr int64_t kBasePageBytes = 4096;

class TaskMemoryManager;
class MemoryConsumer;

/// A counters snapshot of one TaskMemoryManager (bytes unless named).
struct TaskMemoryStats {
  int64_t held_bytes = 0;         ///< charged now: live pages + unspent reservations
  int64_t peak_held_bytes = 0;    ///< highest held_bytes
  int64_t mapped_bytes = 0;       ///< off-heap bytes mapped now
  int64_t peak_mapped_bytes = 0;  ///< highest mapped_bytes
  int64_t live_pages = 0;         ///< pages not yet freed
  int64_t pages_allocated = 0;    ///< pages ever handed out
  int64_t prefault_ns = 0;        ///< time spent pre-faulting pages, nanoseconds
  int64_t retained_bytes = 0;     ///< freed pages kept for reuse (charged, mapped)
  int64_t pages_reused = 0;       ///< page requests served from kept pages
};

/// Bytes already charged to the pool for a purpose, to be spent on pages
/// (so that a build that fits its estimate never meets the limit half-way,
/// and one that does not fit fails before any work). Move-only; the unspent
/// remainder is returned to the pool by the destructor or Release().
class MemoryReservation {
 public:
  MemoryReservation() = default;
  MemoryReservation(MemoryReservation&& other) noexcept;
  MemoryReservation& operator=(MemoryReservation&& other) noexcept;
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  ~MemoryReservation() { Release(); }

  /// Bytes still reserved (charged but not yet spent on pages).
  int64_t remaining_bytes() const { return remaining_bytes_; }
  /// Returns the unspent bytes to the pool. Idempotent.
  void Release();

 private:
  friend class TaskMemoryManager;
  TaskMemoryManager* manager_ = nullptr;
  int64_t remaining_bytes_ = 0;
};

/// One page: a contiguous, 64-byte-aligned (off-heap: 4 KiB or 2 MiB
/// aligned) block of `size_bytes`, writable, contents unspecified (off-heap
/// pages start zeroed). Move-only owner; the destructor (or Free()) returns
/// the page to its manager. A moved-from or default page is empty
/// (data() == nullptr).
class MemoryPage {
 public:
  MemoryPage() = default;
  MemoryPage(MemoryPage&& other) noexcept;
  MemoryPage& operator=(MemoryPage&& other) noexcept;
  MemoryPage(const MemoryPage&) = delete;
  MemoryPage& operator=(const MemoryPage&) = delete;
  ~MemoryPage() { Free(); }

  uint8_t* data() const { return data_; }
  /// Usable bytes (what the consumer asked for).
  int64_t size_bytes() const { return size_bytes_; }
  /// Bytes charged for the page (>= size_bytes: off-heap rounding).
  int64_t charged_bytes() const { return charged_bytes_; }
  MemoryMode mode() const { return mode_; }
  /// True when the page is known to read as zeros (a fresh off-heap
  /// mapping); on-heap and reused pages hold unspecified bytes.
  bool zeroed() const { return zeroed_; }
  bool empty() const { return data_ == nullptr; }
  /// Returns the page to its manager (unmapped off-heap). Idempotent.
  void Free();

 private:
  friend class TaskMemoryManager;
  TaskMemoryManager* manager_ = nullptr;
  MemoryConsumer* consumer_ = nullptr;
  uint8_t* data_ = nullptr;
  int64_t size_bytes_ = 0;
  int64_t charged_bytes_ = 0;
  int64_t mapped_bytes_ = 0;    // off-heap: length of the mapping
  PoolAllocation allocation_;   // on-heap: the pool allocation
  int64_t capacity_bytes_ = 0;  // usable bytes of the block (>= size_bytes_)
  MemoryMode mode_ = MemoryMode::kOnHeap;
  bool zeroed_ = false;
};

/// Hands out pages and reservations for one task, in one memory mode,
/// charged to one pool. Not copyable or movable (pages point back to it).
class TaskMemoryManager {
 public:
  /// `pool` must outlive the manager; all charges go to it (and its
  /// ancestors, with their limits).
  TaskMemoryManager(MemoryPool* pool, TaskMemoryOptions options);
  ~TaskMemoryManager();
  TaskMemoryManager(const TaskMemoryManager&) = delete;
  TaskMemoryManager& operator=(const TaskMemoryManager&) = delete;

  MemoryMode mode() const { return options_.mode; }
  const TaskMemoryOptions& options() const { return options_; }
  MemoryPool* pool() const { return pool_; }

  /// Charges `bytes` (>= 0) to the pool now, for pages allocated later with
  /// this reservation. `purpose` names the request in errors.
  /// Errors: OutOfMemory "<purpose> needs N bytes but pool 'P' has A bytes
  /// available (held H of limit L)" (A = the least free room of the pool
  /// and its limited ancestors); nothing is charged on error.
  Result<MemoryReservation> Reserve(int64_t bytes, std::string_view purpose);

  /// A page of `size_bytes` (> 0) for `consumer` (may be null). When
  /// `reservation` is given and still holds at least the page's charge, the
  /// page is paid from it (on-heap: the reserved bytes are handed back to
  /// the pool an instant before MemoryPool::Allocate charges them again;
  /// off-heap: the charge moves from the reservation to the page, no pool
  /// call). Otherwise the page is charged to the pool on its own.
  /// Errors: OutOfMemory from the pool (limit or allocator, naming bytes
  /// needed and available), from mmap, or from injected failures; nothing
  /// stays charged or mapped on error.
  Result<MemoryPage> AllocatePage(int64_t size_bytes, MemoryConsumer* consumer,
                                  MemoryReservation* reservation = nullptr);

  /// Bytes a page of `size_bytes` is charged in this manager's mode (the
  /// pool's rounding on-heap; 4 KiB, or 2 MiB with huge pages, off-heap).
  /// Pure; for sizing reservations. Returns size_bytes on overflow.
  int64_t PageChargeBytes(int64_t size_bytes) const;

  /// Fails the `nth` (1-based) page allocation from now on with
  /// OutOfMemory "injected failure" (both modes; the pool's own
  /// InjectFailureAt also applies to on-heap pages); 0 disables.
  void InjectFailureAt(int64_t nth);
  /// Returns the pages kept by retain_freed_bytes (off-heap: unmapped).
  void TrimRetained();

  /// Page allocation attempts since the last InjectFailureAt.
  int64_t page_attempts() const { return attempts_.load(std::memory_order_relaxed); }

  TaskMemoryStats stats() const;
  int64_t held_bytes() const { return held_.load(std::memory_order_relaxed); }
  int64_t mapped_bytes() const { return mapped_.load(std::memory_order_relaxed); }

 private:
  friend class MemoryPage;
  friend class MemoryReservation;
  void FreePage(MemoryPage* page);
  void ReleasePage(MemoryPage* page);
  bool TakeRetained(int64_t size_bytes, MemoryPage* page);
  void ReleaseReservation(int64_t bytes);
  void AddHeld(int64_t bytes);
  void AddMapped(int64_t bytes);
  /// pool_->OutOfMemoryError (memory_pool.h): the one OutOfMemory text.
  Status OutOfMemoryError(std::string_view purpose, int64_t needed_bytes) const;
  Status MapPage(int64_t size_bytes, MemoryPage* page);

  MemoryPool* pool_;
  TaskMemoryOptions options_;
  std::atomic<int64_t> held_{0};
  std::atomic<int64_t> peak_held_{0};
  std::atomic<int64_t> mapped_{0};
  std::atomic<int64_t> peak_mapped_{0};
  std::atomic<int64_t> live_pages_{0};
  std::atomic<int64_t> pages_allocated_{0};
  std::atomic<int64_t> prefault_ns_{0};
  std::atomic<int64_t> inject_at_{0};
  std::atomic<int64_t> attempts_{0};
  std::atomic<int64_t> pages_reused_{0};
  mutable std::mutex retained_mutex_;
  std::vector<MemoryPage> retained_;  // guarded by retained_mutex_
  int64_t retained_bytes_ = 0;        // guarded by retained_mutex_
};

/// Something that holds task memory (a hashed relation, a join's output
/// buffers): Spark's MemoryConsumer. Tracks the bytes of its live pages.
/// Thread safety: used_bytes() may be read from any thread.
class MemoryConsumer {
 public:
  /// `manager` must outlive the consumer. `name` appears in reports.
  MemoryConsumer(TaskMemoryManager* manager, std::string name) : manager_(manager), name_(std::move(name)) {}
  virtual ~MemoryConsumer() = default;
  MemoryConsumer(const MemoryConsumer&) = delete;
  MemoryConsumer& operator=(const MemoryConsumer&) = delete;

  TaskMemoryManager* memory_manager() const { return manager_; }
  const std::string& consumer_name() const { return name_; }
  /// Bytes charged for this consumer's live pages.
  int64_t used_bytes() const { return used_.load(std::memory_order_relaxed); }

  /// A page charged to this consumer (TaskMemoryManager::AllocatePage).
  Result<MemoryPage> AllocatePage(int64_t size_bytes, MemoryReservation* reservation = nullptr) {
    return manager_->AllocatePage(size_bytes, this, reservation);
  }

 private:
  friend class TaskMemoryManager;
  TaskMemoryManager* manager_;
  std::string name_;
  std::atomic<int64_t> used_{0};
};

}  // namespace quiver::join
