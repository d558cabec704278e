// quiver/memory/memory_pool.cc — the accounting tree.
//
// Charging: a request's granted size is reserved in this pool and every
// ancestor with one compare-and-swap loop per pool (so a limit is never
// passed, even by racing threads), BEFORE the allocator is asked; the
// already-charged pools are rolled back when an ancestor's limit is hit or
// the allocator fails.
//
// Every counter of a pool includes its descendants' allocations (a root's
// stats describe the whole tree), as held_bytes does.
#include "quiver/memory/memory_pool.h"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "quiver/base/checked_math.h"

namespace quiver {

namespace {

// The address handed out for zero-byte requests: non-null, aligned to every
// alignment a pool accepts, never written and never freed.
alignas(4096) uint8_t zero_size_area[1];

// Pools of this process with an injected failure armed (InjectFailureAt
// with nth > 0). While it is 0, allocations skip the attempt counters: one
// relaxed load of a read-mostly word instead of an atomic add on every
// pool of the chain (cache lines that the workers of a statement share).
std::atomic<int64_t> armed_pools{0};

bool IsZeroSizeBlock(const PoolAllocation& allocation) {
  return allocation.data == zero_size_area || allocation.granted_bytes == 0;
}

bool ValidAlignment(int64_t alignment) {
  return alignment >= 8 && alignment <= 4096 && (alignment & (alignment - 1)) == 0;
}

void RaiseToAtLeast(std::atomic<int64_t>& peak, int64_t value) {
  int64_t cur = peak.load(std::memory_order_relaxed);
  while (cur < value && !peak.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

int64_t GrantedBytes(RoundingPolicy policy, int64_t requested_bytes) {
  if (policy == RoundingPolicy::kExact || requested_bytes <= 0 || requested_bytes >= kRoundingChunkBytes) {
    return requested_bytes;
  }
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(requested_bytes)));
}

// ------------------------------------------------------------ construction --

MemoryPool::MemoryPool(MemoryPoolOptions options, std::shared_ptr<MemoryPool> parent, Allocator* allocator)
    : options_(std::move(options)), parent_(std::move(parent)), allocator_(allocator) {
  options_.allocator = allocator_;
}

MemoryPool::~MemoryPool() {
  if (inject_at_.load(std::memory_order_relaxed) > 0) armed_pools.fetch_sub(1, std::memory_order_relaxed);
}

std::shared_ptr<MemoryPool> MemoryPool::MakeRoot(MemoryPoolOptions options) {
  Allocator* allocator = options.allocator;
  if (allocator == nullptr) allocator = *GetAllocator(AllocatorKind::kSystem);  // never fails
  // The constructor is private, so make_shared cannot reach it; the pointer
  // is owned by the shared_ptr from the start.
  return std::shared_ptr<MemoryPool>(new MemoryPool(std::move(options), nullptr, allocator));
}

std::shared_ptr<MemoryPool> MemoryPool::MakeChild(MemoryPoolOptions options) {
  Allocator* allocator = options.allocator != nullptr ? options.allocator : allocator_;
  return std::shared_ptr<MemoryPool>(new MemoryPool(std::move(options), shared_from_this(), allocator));
}

std::string MemoryPool::path() const {
  if (parent_ == nullptr) return options_.name;
  return parent_->path() + "/" + options_.name;
}

// ------------------------------------------------------------- room left --

namespace {
// The limited pool with the least room on the path from `pool` to the root
// (nullptr when none has a limit), and that room (>= 0).
const MemoryPool* TightestPool(const MemoryPool* pool, int64_t* room_bytes) {
  const MemoryPool* tight = nullptr;
  *room_bytes = -1;
  for (const MemoryPool* p = pool; p != nullptr; p = p->parent()) {
    if (p->limit_bytes() < 0) continue;
    const int64_t room = std::max<int64_t>(0, p->limit_bytes() - p->held_bytes());
    if (tight == nullptr || room < *room_bytes) {
      tight = p;
      *room_bytes = room;
    }
  }
  return tight;
}
}  // namespace

int64_t MemoryPool::AvailableBytes() const {
  int64_t room;
  TightestPool(this, &room);
  return room;
}

Status MemoryPool::OutOfMemoryError(std::string_view what, int64_t needed_bytes) const {
  int64_t room;
  const MemoryPool* tight = TightestPool(this, &room);
  std::string msg = std::string(what) + " needs " + std::to_string(needed_bytes) + " bytes";
  if (tight != nullptr) {
    msg += " but pool '" + tight->path() + "' has " + std::to_string(room) + " bytes available (held " +
           std::to_string(tight->held_bytes()) + " of limit " + std::to_string(tight->limit_bytes()) + ")";
  } else {
    msg += " but the pool refused them (no limit set: the byte count overflowed)";
  }
  return Status::OutOfMemory(std::move(msg));
}

// ------------------------------------------------------------- accounting --

Status MemoryPool::ReserveChain(int64_t bytes, int64_t requested_bytes) {
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    const int64_t limit = pool->options_.limit_bytes;
    int64_t held = pool->held_.load(std::memory_order_relaxed);
    while (true) {
      int64_t next;
      if (!CheckedAdd(held, bytes, &next) || (limit >= 0 && next > limit)) {
        // Roll back the pools charged so far (this .. pool, exclusive).
        for (MemoryPool* p = this; p != pool; p = p->parent_.get()) {
          p->held_.fetch_sub(bytes, std::memory_order_relaxed);
        }
        std::string msg = "cannot allocate " + std::to_string(requested_bytes) + " bytes";
        if (bytes != requested_bytes) msg += " (" + std::to_string(bytes) + " after rounding)";
        msg += " in pool '" + pool->path() + "': held " + std::to_string(held) + " of limit " + std::to_string(limit) +
               " bytes";
        if (pool != this) msg += " (requested in '" + path() + "')";
        return Status::OutOfMemory(std::move(msg));
      }
      if (pool->held_.compare_exchange_weak(held, next, std::memory_order_relaxed)) {
        RaiseToAtLeast(pool->peak_, next);
        break;
      }
    }
  }
  return Status::OK();
}

void MemoryPool::ReleaseChain(int64_t bytes) {
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    pool->held_.fetch_sub(bytes, std::memory_order_relaxed);
  }
}

bool MemoryPool::ShouldInjectFailure() {
  if (armed_pools.load(std::memory_order_relaxed) == 0) return false;
  bool inject = false;
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    const int64_t attempt = pool->attempts_.fetch_add(1, std::memory_order_relaxed) + 1;
    const int64_t at = pool->inject_at_.load(std::memory_order_relaxed);
    if (at > 0 && attempt == at) inject = true;
  }
  return inject;
}

void MemoryPool::InjectFailureAt(int64_t nth) {
  const int64_t was = inject_at_.exchange(0, std::memory_order_relaxed);
  attempts_.store(0, std::memory_order_relaxed);
  const int64_t now = nth < 0 ? 0 : nth;
  if ((was > 0) != (now > 0)) armed_pools.fetch_add(now > 0 ? 1 : -1, std::memory_order_relaxed);
  inject_at_.store(now, std::memory_order_relaxed);
}

int64_t MemoryPool::attempts_since_injection() const { return attempts_.load(std::memory_order_relaxed); }

// ------------------------------------------------------------ allocation --

Result<PoolAllocation> MemoryPool::Allocate(int64_t size_bytes, int64_t alignment) {
  if (closed_.load(std::memory_order_acquire)) {
    return Status::Invalid("cannot allocate " + std::to_string(size_bytes) + " bytes: pool '" + path() + "' is closed");
  }
  if (size_bytes < 0) {
    return Status::Invalid("cannot allocate a negative size (" + std::to_string(size_bytes) + " bytes) in pool '" +
                           path() + "'");
  }
  if (!ValidAlignment(alignment)) {
    return Status::Invalid("alignment " + std::to_string(alignment) + " is not a power of two in [8, 4096]");
  }
  if (size_bytes == 0) return PoolAllocation{zero_size_area, 0, 0, alignment};

  const int64_t granted = GrantedBytes(options_.rounding, size_bytes);
  Status st;
  if (ShouldInjectFailure()) {
    st = Status::OutOfMemory("cannot allocate " + std::to_string(size_bytes) + " bytes in pool '" + path() +
                             "': injected failure");
  } else {
    st = ReserveChain(granted, size_bytes);
  }
  uint8_t* data = nullptr;
  if (st.ok()) {
    data = allocator_->Allocate(granted, alignment);
    if (data == nullptr) {
      ReleaseChain(granted);
      st = Status::OutOfMemory("cannot allocate " + std::to_string(size_bytes) + " bytes in pool '" + path() +
                               "': the " + std::string(allocator_->name()) + " allocator returned no memory (" +
                               std::to_string(granted) + " bytes, alignment " + std::to_string(alignment) + ")");
    }
  }

  if (!st.ok()) {
    for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
      pool->failed_allocations_.fetch_add(1, std::memory_order_relaxed);
      for (const auto& listener : pool->ListenersSnapshot()) {
        listener->OnFailure(*this, size_bytes, st);
      }
    }
    return st;
  }

  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    pool->total_allocated_.fetch_add(granted, std::memory_order_relaxed);
    pool->requested_total_.fetch_add(size_bytes, std::memory_order_relaxed);
    pool->num_allocations_.fetch_add(1, std::memory_order_relaxed);
    pool->live_allocations_.fetch_add(1, std::memory_order_relaxed);
  }
  NotifyAllocate(size_bytes, granted);
  return PoolAllocation{data, size_bytes, granted, alignment};
}

void MemoryPool::Free(const PoolAllocation& allocation) {
  if (allocation.data == nullptr || IsZeroSizeBlock(allocation)) return;
  allocator_->Free(allocation.data, allocation.granted_bytes, allocation.alignment);
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    pool->held_.fetch_sub(allocation.granted_bytes, std::memory_order_relaxed);
    pool->live_allocations_.fetch_sub(1, std::memory_order_relaxed);
  }
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    for (const auto& listener : pool->ListenersSnapshot()) {
      listener->OnRelease(*this, allocation.granted_bytes);
    }
  }
}

Status MemoryPool::Reallocate(PoolAllocation* allocation, int64_t new_size_bytes) {
  if (closed_.load(std::memory_order_acquire)) {
    return Status::Invalid("cannot reallocate to " + std::to_string(new_size_bytes) + " bytes: pool '" + path() +
                           "' is closed");
  }
  if (new_size_bytes < 0) {
    return Status::Invalid("cannot reallocate to a negative size (" + std::to_string(new_size_bytes) +
                           " bytes) in pool '" + path() + "'");
  }
  if (allocation->data == nullptr || IsZeroSizeBlock(*allocation)) {
    QUIVER_ASSIGN_OR_RETURN(*allocation, Allocate(new_size_bytes, allocation->alignment));
    return Status::OK();
  }
  if (new_size_bytes == 0) {
    Free(*allocation);
    *allocation = PoolAllocation{zero_size_area, 0, 0, allocation->alignment};
    return Status::OK();
  }

  const int64_t old_granted = allocation->granted_bytes;
  const int64_t new_granted = GrantedBytes(options_.rounding, new_size_bytes);
  const int64_t alignment = allocation->alignment;

  if (new_granted == old_granted) {
    allocation->requested_bytes = new_size_bytes;
    return Status::OK();
  }

  if (new_granted < old_granted) {
    // Shrink: in place when the allocator can, else a move. The transient
    // copy of a move is not charged (glibc and jemalloc mostly shrink in
    // place anyway), so a shrink never fails on a limit.
    uint8_t* data = allocation->data;
    if (!allocator_->ShrinkInPlace(data, old_granted, new_granted, alignment)) {
      data = allocator_->Reallocate(data, old_granted, new_granted, alignment);
      if (data == nullptr) {
        return Status::OutOfMemory("cannot shrink an allocation from " + std::to_string(old_granted) + " to " +
                                   std::to_string(new_granted) + " bytes in pool '" + path() + "': the " +
                                   std::string(allocator_->name()) + " allocator returned no memory");
      }
    }
    ReleaseChain(old_granted - new_granted);
    for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
      for (const auto& listener : pool->ListenersSnapshot()) {
        listener->OnRelease(*this, old_granted - new_granted);
      }
    }
    *allocation = PoolAllocation{data, new_size_bytes, new_granted, alignment};
    return Status::OK();
  }

  // Grow: reserve the difference first.
  const int64_t delta = new_granted - old_granted;
  Status st;
  if (ShouldInjectFailure()) {
    st = Status::OutOfMemory("cannot grow an allocation to " + std::to_string(new_size_bytes) + " bytes in pool '" +
                             path() + "': injected failure");
  } else {
    st = ReserveChain(delta, delta)
             .WithContext("growing an allocation from " + std::to_string(old_granted) + " to " +
                          std::to_string(new_granted) + " bytes");
  }
  uint8_t* data = nullptr;
  if (st.ok()) {
    data = allocator_->Reallocate(allocation->data, old_granted, new_granted, alignment);
    if (data == nullptr) {
      ReleaseChain(delta);
      st = Status::OutOfMemory("cannot grow an allocation from " + std::to_string(old_granted) + " to " +
                               std::to_string(new_granted) + " bytes in pool '" + path() + "': the " +
                               std::string(allocator_->name()) + " allocator returned no memory");
    }
  }
  if (!st.ok()) {
    for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
      pool->failed_allocations_.fetch_add(1, std::memory_order_relaxed);
      for (const auto& listener : pool->ListenersSnapshot()) {
        listener->OnFailure(*this, new_size_bytes, st);
      }
    }
    return st;
  }
  const int64_t requested_delta =
      new_size_bytes > allocation->requested_bytes ? new_size_bytes - allocation->requested_bytes : 0;
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    pool->total_allocated_.fetch_add(delta, std::memory_order_relaxed);
    pool->requested_total_.fetch_add(requested_delta, std::memory_order_relaxed);
  }
  NotifyAllocate(requested_delta, delta);
  *allocation = PoolAllocation{data, new_size_bytes, new_granted, alignment};
  return Status::OK();
}

Status MemoryPool::Reserve(int64_t bytes) {
  if (closed_.load(std::memory_order_acquire)) {
    return Status::Invalid("cannot reserve " + std::to_string(bytes) + " bytes: pool '" + path() + "' is closed");
  }
  if (bytes < 0) {
    return Status::Invalid("cannot reserve a negative size (" + std::to_string(bytes) + " bytes) in pool '" + path() +
                           "'");
  }
  if (bytes == 0) return Status::OK();
  QUIVER_RETURN_NOT_OK(ReserveChain(bytes, bytes));
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    for (const auto& listener : pool->ListenersSnapshot()) listener->OnReserve(*this, bytes);
  }
  return Status::OK();
}

void MemoryPool::Unreserve(int64_t bytes) {
  if (bytes <= 0) return;
  ReleaseChain(bytes);
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    for (const auto& listener : pool->ListenersSnapshot()) listener->OnUnreserve(*this, bytes);
  }
}

// ------------------------------------------------------------- listeners --

void MemoryPool::AddListener(std::shared_ptr<AllocationListener> listener) {
  if (listener == nullptr) return;
  std::lock_guard<std::mutex> lock(listeners_mutex_);
  listeners_.push_back(std::move(listener));
  has_listeners_.store(true, std::memory_order_release);
}

std::vector<std::shared_ptr<AllocationListener>> MemoryPool::ListenersSnapshot() const {
  // Listeners are only ever added: a pool that never had one (nearly all)
  // answers without the mutex, which every allocation and free of every
  // pool in the chain would otherwise take.
  if (!has_listeners_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(listeners_mutex_);
  return listeners_;
}

void MemoryPool::NotifyAllocate(int64_t requested_bytes, int64_t granted_bytes) {
  for (MemoryPool* pool = this; pool != nullptr; pool = pool->parent_.get()) {
    for (const auto& listener : pool->ListenersSnapshot()) {
      listener->OnAllocate(*this, requested_bytes, granted_bytes);
    }
  }
}

// ------------------------------------------------------------ life, stats --

Status MemoryPool::Close() {
  closed_.store(true, std::memory_order_release);
  const int64_t held = held_.load(std::memory_order_relaxed);
  const int64_t live = live_allocations_.load(std::memory_order_relaxed);
  if (held == 0 && live == 0) return Status::OK();
  return Status::Invalid("pool '" + path() + "' closed with " + std::to_string(held) + " bytes still held in " +
                         std::to_string(live) + " live allocation" + (live == 1 ? "" : "s"));
}

MemoryPoolStats MemoryPool::stats() const {
  MemoryPoolStats s;
  s.held_bytes = held_.load(std::memory_order_relaxed);
  s.peak_bytes = peak_.load(std::memory_order_relaxed);
  s.total_allocated_bytes = total_allocated_.load(std::memory_order_relaxed);
  s.num_allocations = num_allocations_.load(std::memory_order_relaxed);
  s.requested_bytes = requested_total_.load(std::memory_order_relaxed);
  s.granted_bytes = s.total_allocated_bytes;
  s.live_allocations = live_allocations_.load(std::memory_order_relaxed);
  s.failed_allocations = failed_allocations_.load(std::memory_order_relaxed);
  return s;
}

void MemoryPool::ResetPeak() { peak_.store(held_.load(std::memory_order_relaxed)); }

Result<std::shared_ptr<MemoryPool>> MakeDefaultRootPool(std::string name, int64_t limit_bytes) {
  QUIVER_ASSIGN_OR_RETURN(AllocatorKind kind, AllocatorKindFromEnvironment());
  QUIVER_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(kind));
  MemoryPoolOptions options;
  options.name = std::move(name);
  options.limit_bytes = limit_bytes;
  options.allocator = allocator;
  return MemoryPool::MakeRoot(std::move(options));
}

}  // namespace quiver
