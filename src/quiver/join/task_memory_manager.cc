// quiver/join/task_memory_manager.cc — see task_memory_manager.h.
#include "quiver/join/task_memory_manager.h"

#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "quiver/base/checked_math.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace quiver::join {
namespace {

void RaiseToAtLeast(std::atomic<int64_t>& peak, int64_t value) {
  int64_t cur = peak.load(std::memory_order_relaxed);
  while (value > cur && !peak.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

// Writes one byte per base page so that each is faulted in now.
void TouchPages(uint8_t* data, int64_t size_bytes) {
  volatile uint8_t* p = data;
  for (int64_t i = 0; i < size_bytes; i += kBasePageBytes) p[i] = 0;
  if (size_bytes > 0) p[size_bytes - 1] = 0;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string_view MemoryModeName(MemoryMode mode) { return mode == MemoryMode::kOnHeap ? "on-heap" : "off-heap"; }

Result<MemoryMode> ParseMemoryMode(std::string_view name) {
  if (name == "on-heap" || name == "onheap") return MemoryMode::kOnHeap;
  if (name == "off-heap" || name == "offheap") return MemoryMode::kOffHeap;
  return Status::Invalid("unknown memory mode '" + std::string(name) + "' (expected on-heap or off-heap)");
}

// ------------------------------------------------------------ reservation --

MemoryReservation::MemoryReservation(MemoryReservation&& other) noexcept
    : manager_(std::exchange(other.manager_, nullptr)), remaining_bytes_(std::exchange(other.remaining_bytes_, 0)) {}

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& other) noexcept {
  if (this != &other) {
    Release();
    manager_ = std::exchange(other.manager_, nullptr);
    remaining_bytes_ = std::exchange(other.remaining_bytes_, 0);
  }
  return *this;
}

void MemoryReservation::Release() {
  if (manager_ != nullptr && remaining_bytes_ > 0) manager_->ReleaseReservation(remaining_bytes_);
  remaining_bytes_ = 0;
  manager_ = nullptr;
}

// ------------------------------------------------------------------- page --

MemoryPage::MemoryPage(MemoryPage&& other) noexcept
    : manager_(std::exchange(other.manager_, nullptr)),
      consumer_(std::exchange(other.consumer_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)),
      charged_bytes_(std::exchange(other.charged_bytes_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      allocation_(std::exchange(other.allocation_, PoolAllocation{})),
      capacity_bytes_(std::exchange(other.capacity_bytes_, 0)),
      mode_(other.mode_),
      zeroed_(std::exchange(other.zeroed_, false)) {}

MemoryPage& MemoryPage::operator=(MemoryPage&& other) noexcept {
  if (this != &other) {
    Free();
    manager_ = std::exchange(other.manager_, nullptr);
    consumer_ = std::exchange(other.consumer_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
    charged_bytes_ = std::exchange(other.charged_bytes_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    allocation_ = std::exchange(other.allocation_, PoolAllocation{});
    capacity_bytes_ = std::exchange(other.capacity_bytes_, 0);
    mode_ = other.mode_;
    zeroed_ = std::exchange(other.zeroed_, false);
  }
  return *this;
}

void MemoryPage::Free() {
  if (manager_ != nullptr && data_ != nullptr) manager_->FreePage(this);
  manager_ = nullptr;
  consumer_ = nullptr;
  data_ = nullptr;
  size_bytes_ = charged_bytes_ = mapped_bytes_ = capacity_bytes_ = 0;
  allocation_ = PoolAllocation{};
  zeroed_ = false;
}

// ---------------------------------------------------------------- manager --

TaskMemoryManager::TaskMemoryManager(MemoryPool* pool, TaskMemoryOptions options) : pool_(pool), options_(options) {}

TaskMemoryManager::~TaskMemoryManager() { TrimRetained(); }

void TaskMemoryManager::TrimRetained() {
  std::vector<MemoryPage> pages;
  {
    std::lock_guard<std::mutex> lock(retained_mutex_);
    pages.swap(retained_);
    retained_bytes_ = 0;
  }
  for (auto& p : pages) {
    ReleasePage(&p);
    p.manager_ = nullptr;
    p.data_ = nullptr;
  }
}

bool TaskMemoryManager::TakeRetained(int64_t size_bytes, MemoryPage* page) {
  std::lock_guard<std::mutex> lock(retained_mutex_);
  int best = -1;
  for (size_t i = 0; i < retained_.size(); ++i) {
    const int64_t cap = retained_[i].capacity_bytes_;
    if (cap < size_bytes || cap > size_bytes + size_bytes / 4 + kHugePageBytes) continue;
    if (best < 0 || cap < retained_[best].capacity_bytes_) best = static_cast<int>(i);
  }
  if (best < 0) return false;
  *page = std::move(retained_[best]);
  retained_.erase(retained_.begin() + best);
  retained_bytes_ -= page->charged_bytes_;
  page->size_bytes_ = size_bytes;
  page->zeroed_ = false;
  return true;
}

void TaskMemoryManager::AddHeld(int64_t bytes) {
  const int64_t now = held_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (bytes > 0) RaiseToAtLeast(peak_held_, now);
}

void TaskMemoryManager::AddMapped(int64_t bytes) {
  const int64_t now = mapped_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (bytes > 0) RaiseToAtLeast(peak_mapped_, now);
}

Status TaskMemoryManager::OutOfMemoryError(std::string_view purpose, int64_t needed_bytes) const {
  return pool_->OutOfMemoryError(purpose, needed_bytes);
}

Result<MemoryReservation> TaskMemoryManager::Reserve(int64_t bytes, std::string_view purpose) {
  if (bytes < 0) {
    return Status::Invalid(std::string(purpose) + ": cannot reserve a negative size (" + std::to_string(bytes) +
                           " bytes)");
  }
  MemoryReservation r;
  r.manager_ = this;
  if (bytes == 0) return r;
  Status st = pool_->Reserve(bytes);
  if (!st.ok()) {
    if (st.IsOutOfMemory()) return OutOfMemoryError(purpose, bytes);
    return st;
  }
  AddHeld(bytes);
  r.remaining_bytes_ = bytes;
  return r;
}

void TaskMemoryManager::ReleaseReservation(int64_t bytes) {
  pool_->Unreserve(bytes);
  AddHeld(-bytes);
}

int64_t TaskMemoryManager::PageChargeBytes(int64_t size_bytes) const {
  if (size_bytes <= 0) return 0;
  if (options_.mode == MemoryMode::kOnHeap) return GrantedBytes(pool_->rounding(), size_bytes);
  const bool huge = options_.huge_pages && size_bytes >= kHugePageBytes;
  int64_t charge;
  if (!CheckedRoundUp(size_bytes, huge ? kHugePageBytes : kBasePageBytes, &charge)) return size_bytes;
  return charge;
}

void TaskMemoryManager::InjectFailureAt(int64_t nth) {
  inject_at_.store(0, std::memory_order_relaxed);
  attempts_.store(0, std::memory_order_relaxed);
  inject_at_.store(nth < 0 ? 0 : nth, std::memory_order_relaxed);
}

Status TaskMemoryManager::MapPage(int64_t size_bytes, MemoryPage* page) {
  const bool huge = options_.huge_pages && size_bytes >= kHugePageBytes;
  const int64_t align = huge ? kHugePageBytes : kBasePageBytes;
  int64_t length;
  if (!CheckedRoundUp(size_bytes, align, &length)) {
    return Status::OutOfMemory("cannot map " + std::to_string(size_bytes) + " bytes: size overflows");
  }
  // Over-map by one alignment unit and trim, so that huge pages can back
  // every 2 MiB of the page.
  int64_t map_length = length;
  if (huge && !CheckedAdd(length, align, &map_length)) {
    return Status::OutOfMemory("cannot map " + std::to_string(size_bytes) + " bytes: size overflows");
  }
  void* raw = mmap(nullptr, static_cast<size_t>(map_length), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) {
    const int err = errno;
    return Status::OutOfMemory("mmap of " + std::to_string(map_length) +
                               " bytes for an off-heap page failed: " + std::strerror(err));
  }
  auto* base = static_cast<uint8_t*>(raw);
  uint8_t* data = base;
  if (huge) {
    const auto addr = reinterpret_cast<uintptr_t>(base);
    const uintptr_t aligned = (addr + static_cast<uintptr_t>(align) - 1) & ~static_cast<uintptr_t>(align - 1);
    data = reinterpret_cast<uint8_t*>(aligned);
    const size_t head = static_cast<size_t>(data - base);
    const size_t tail = static_cast<size_t>(map_length) - head - static_cast<size_t>(length);
    if (head > 0) munmap(base, head);
    if (tail > 0) munmap(data + length, tail);
    madvise(data, static_cast<size_t>(length), MADV_HUGEPAGE);  // a hint: errors ignored
  }
  if (options_.prefault) {
    const int64_t t0 = NowNs();
    if (madvise(data, static_cast<size_t>(length), MADV_POPULATE_WRITE) != 0) {
      TouchPages(data, length);
    }
    prefault_ns_.fetch_add(NowNs() - t0, std::memory_order_relaxed);
  }
  page->data_ = data;
  page->mapped_bytes_ = length;
  page->charged_bytes_ = length;
  page->capacity_bytes_ = length;
  page->zeroed_ = true;
  return Status::OK();
}

Result<MemoryPage> TaskMemoryManager::AllocatePage(int64_t size_bytes, MemoryConsumer* consumer,
                                                   MemoryReservation* reservation) {
  if (size_bytes <= 0) {
    return Status::Invalid("a page needs a positive size, got " + std::to_string(size_bytes) + " bytes");
  }
  const int64_t attempt = attempts_.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t inject_at = inject_at_.load(std::memory_order_relaxed);
  if (inject_at > 0 && attempt == inject_at) {
    return Status::OutOfMemory("cannot allocate a " + std::to_string(size_bytes) + "-byte " +
                               std::string(MemoryModeName(options_.mode)) + " page: injected failure");
  }
  if (reservation != nullptr && reservation->manager_ != this) reservation = nullptr;

  MemoryPage page;
  if (options_.retain_freed_bytes > 0 && TakeRetained(size_bytes, &page)) {
    // Already charged: what the reservation set aside for it goes back.
    if (reservation != nullptr) {
      const int64_t give_back = std::min(reservation->remaining_bytes_, PageChargeBytes(size_bytes));
      reservation->remaining_bytes_ -= give_back;
      ReleaseReservation(give_back);
    }
    page.consumer_ = consumer;
    if (consumer != nullptr) consumer->used_.fetch_add(page.charged_bytes_, std::memory_order_relaxed);
    live_pages_.fetch_add(1, std::memory_order_relaxed);
    pages_allocated_.fetch_add(1, std::memory_order_relaxed);
    pages_reused_.fetch_add(1, std::memory_order_relaxed);
    return page;
  }
  page.mode_ = options_.mode;
  page.size_bytes_ = size_bytes;
  if (options_.mode == MemoryMode::kOnHeap) {
    if (reservation != nullptr && reservation->remaining_bytes_ >= size_bytes) {
      // Hand the reserved bytes back, then charge them through Allocate.
      reservation->remaining_bytes_ -= size_bytes;
      ReleaseReservation(size_bytes);
    }
    auto alloc = pool_->Allocate(size_bytes, 64);
    if (!alloc.ok()) {
      const int64_t available = pool_->AvailableBytes();
      if (alloc.status().IsOutOfMemory() && available >= 0 && available < size_bytes) {
        return OutOfMemoryError("an on-heap page", size_bytes);
      }
      return alloc.status();
    }
    page.allocation_ = *alloc;
    page.data_ = alloc->data;
    page.charged_bytes_ = alloc->granted_bytes;
    page.capacity_bytes_ = size_bytes;
    if (options_.prefault) {
      const int64_t t0 = NowNs();
      TouchPages(page.data_, size_bytes);
      prefault_ns_.fetch_add(NowNs() - t0, std::memory_order_relaxed);
    }
    AddHeld(page.charged_bytes_);
  } else {
    // Charge first (reserve-then-map), from the reservation when it covers
    // the rounded size, else from the pool.
    const bool huge = options_.huge_pages && size_bytes >= kHugePageBytes;
    int64_t charge;
    if (!CheckedRoundUp(size_bytes, huge ? kHugePageBytes : kBasePageBytes, &charge)) {
      return Status::OutOfMemory("cannot map " + std::to_string(size_bytes) + " bytes: size overflows");
    }
    bool from_reservation = false;
    if (reservation != nullptr && reservation->remaining_bytes_ >= charge) {
      reservation->remaining_bytes_ -= charge;
      from_reservation = true;
    } else {
      Status st = pool_->Reserve(charge);
      if (!st.ok()) {
        if (st.IsOutOfMemory()) return OutOfMemoryError("an off-heap page", charge);
        return st;
      }
      AddHeld(charge);
    }
    Status st = MapPage(size_bytes, &page);
    if (!st.ok()) {
      if (from_reservation) {
        reservation->remaining_bytes_ += charge;  // give the charge back to the reservation
      } else {
        pool_->Unreserve(charge);
        AddHeld(-charge);
      }
      page.data_ = nullptr;
      return st;
    }
    AddMapped(page.mapped_bytes_);
  }
  page.manager_ = this;
  page.consumer_ = consumer;
  if (consumer != nullptr) consumer->used_.fetch_add(page.charged_bytes_, std::memory_order_relaxed);
  live_pages_.fetch_add(1, std::memory_order_relaxed);
  pages_allocated_.fetch_add(1, std::memory_order_relaxed);
  return page;
}

void TaskMemoryManager::FreePage(MemoryPage* page) {
  if (page->consumer_ != nullptr) {
    page->consumer_->used_.fetch_sub(page->charged_bytes_, std::memory_order_relaxed);
  }
  live_pages_.fetch_sub(1, std::memory_order_relaxed);
  if (options_.retain_freed_bytes > 0) {
    std::lock_guard<std::mutex> lock(retained_mutex_);
    if (retained_bytes_ + page->charged_bytes_ <= options_.retain_freed_bytes) {
      MemoryPage kept;
      kept.manager_ = this;
      kept.data_ = page->data_;
      kept.size_bytes_ = page->capacity_bytes_;
      kept.capacity_bytes_ = page->capacity_bytes_;
      kept.charged_bytes_ = page->charged_bytes_;
      kept.mapped_bytes_ = page->mapped_bytes_;
      kept.allocation_ = page->allocation_;
      kept.mode_ = page->mode_;
      retained_bytes_ += kept.charged_bytes_;
      retained_.push_back(std::move(kept));
      return;
    }
  }
  ReleasePage(page);
}

void TaskMemoryManager::ReleasePage(MemoryPage* page) {
  if (page->mode_ == MemoryMode::kOnHeap) {
    pool_->Free(page->allocation_);
  } else {
    munmap(page->data_, static_cast<size_t>(page->mapped_bytes_));
    AddMapped(-page->mapped_bytes_);
    pool_->Unreserve(page->charged_bytes_);
  }
  AddHeld(-page->charged_bytes_);
}

TaskMemoryStats TaskMemoryManager::stats() const {
  TaskMemoryStats s;
  s.held_bytes = held_.load(std::memory_order_relaxed);
  s.peak_held_bytes = peak_held_.load(std::memory_order_relaxed);
  s.mapped_bytes = mapped_.load(std::memory_order_relaxed);
  s.peak_mapped_bytes = peak_mapped_.load(std::memory_order_relaxed);
  s.live_pages = live_pages_.load(std::memory_order_relaxed);
  s.pages_allocated = pages_allocated_.load(std::memory_order_relaxed);
  s.prefault_ns = prefault_ns_.load(std::memory_order_relaxed);
  s.pages_reused = pages_reused_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(retained_mutex_);
    s.retained_bytes = retained_bytes_;
  }
  return s;
}

}  // namespace quiver::join
