// quiver/memory/allocator.cc — the four byte sources: glibc malloc, a
// private (symbol-renamed, statically linked) jemalloc, mimalloc opened with
// dlopen(RTLD_LOCAL), and one private anonymous mapping per block.
//
// None of them replaces the process's malloc: jemalloc's public symbols are
// renamed quiver_je_* at build time (cmake/rename_jemalloc.cmake) and
// mimalloc's overriding malloc stays in a local symbol scope, so `system`
// really is glibc.
#include "quiver/memory/allocator.h"

#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "quiver/base/checked_math.h"

// The renamed jemalloc entry points (jemalloc 5 API, see jemalloc(3)).
extern "C" {
void* quiver_je_mallocx(size_t size, int flags);
void* quiver_je_rallocx(void* ptr, size_t size, int flags);
size_t quiver_je_xallocx(void* ptr, size_t size, size_t extra, int flags);
size_t quiver_je_nallocx(size_t size, int flags);
void quiver_je_sdallocx(void* ptr, size_t size, int flags);
int quiver_je_mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen);
}

namespace quiver {

std::string_view AllocatorKindName(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kSystem: return "system";
    case AllocatorKind::kJemalloc: return "jemalloc";
    case AllocatorKind::kMimalloc: return "mimalloc";
    case AllocatorKind::kMmap: return "mmap";
  }
  return "unknown";
}

Result<AllocatorKind> ParseAllocatorKind(std::string_view name) {
  for (AllocatorKind kind :
       {AllocatorKind::kSystem, AllocatorKind::kJemalloc, AllocatorKind::kMimalloc, AllocatorKind::kMmap}) {
    if (name == AllocatorKindName(kind)) return kind;
  }
  return Status::Invalid("unknown allocator '" + std::string(name) + "' (expected system, jemalloc, mimalloc or mmap)");
}

uint8_t* Allocator::Reallocate(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes,
                               int64_t alignment) noexcept {
  uint8_t* moved = Allocate(new_size_bytes, alignment);
  if (moved == nullptr) return nullptr;
  const int64_t keep = old_size_bytes < new_size_bytes ? old_size_bytes : new_size_bytes;
  if (keep > 0) std::memcpy(moved, ptr, static_cast<size_t>(keep));
  Free(ptr, old_size_bytes, alignment);
  return moved;
}

namespace {

// True for the block shapes every allocator accepts (see Allocator::Allocate).
bool ValidRequest(int64_t size_bytes, int64_t alignment) {
  return size_bytes > 0 && alignment >= 8 && alignment <= 4096 && (alignment & (alignment - 1)) == 0;
}

// -------------------------------------------------------------- jemalloc ---

// MALLOCX_LG_ALIGN(la) of jemalloc's public header: the flag is log2(align).
int JemallocFlags(int64_t alignment) { return __builtin_ctzll(static_cast<uint64_t>(alignment)); }

class JemallocAllocator final : public Allocator {
 public:
  AllocatorKind kind() const noexcept override { return AllocatorKind::kJemalloc; }

  uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept override {
    if (!ValidRequest(size_bytes, alignment)) return nullptr;
    return static_cast<uint8_t*>(quiver_je_mallocx(static_cast<size_t>(size_bytes), JemallocFlags(alignment)));
  }

  void Free(uint8_t* ptr, int64_t size_bytes, int64_t alignment) noexcept override {
    if (ptr == nullptr) return;
    quiver_je_sdallocx(ptr, static_cast<size_t>(size_bytes), JemallocFlags(alignment));
  }

  // In place only when jemalloc resizes the block to exactly the size class
  // of the new size (large extents shrink in place; small size classes do
  // not move between classes in place).
  bool ShrinkInPlace(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes,
                     int64_t alignment) noexcept override {
    if (ptr == nullptr || new_size_bytes <= 0 || new_size_bytes >= old_size_bytes) return false;
    const int flags = JemallocFlags(alignment);
    const size_t target = quiver_je_nallocx(static_cast<size_t>(new_size_bytes), flags);
    if (target == 0) return false;
    return quiver_je_xallocx(ptr, static_cast<size_t>(new_size_bytes), 0, flags) == target;
  }

  uint8_t* Reallocate(uint8_t* ptr, int64_t, int64_t new_size_bytes, int64_t alignment) noexcept override {
    if (!ValidRequest(new_size_bytes, alignment)) return nullptr;
    return static_cast<uint8_t*>(quiver_je_rallocx(ptr, static_cast<size_t>(new_size_bytes), JemallocFlags(alignment)));
  }

  int64_t reserved_bytes() const noexcept override {
    uint64_t epoch = 1;
    size_t epoch_len = sizeof(epoch);
    if (quiver_je_mallctl("epoch", &epoch, &epoch_len, &epoch, sizeof(epoch)) != 0) return -1;
    size_t resident = 0;
    size_t resident_len = sizeof(resident);
    if (quiver_je_mallctl("stats.resident", &resident, &resident_len, nullptr, 0) != 0) return -1;
    return static_cast<int64_t>(resident);
  }

  // "arena.<MALLCTL_ARENAS_ALL>.purge" (MALLCTL_ARENAS_ALL is 4096).
  void ReleaseFreeMemory() noexcept override { quiver_je_mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0); }
};

// -------------------------------------------------------------- mimalloc ---

// mimalloc entry points resolved from libmimalloc.so.2 (mimalloc.h, v2).
struct MimallocApi {
  void* (*malloc_aligned)(size_t, size_t) = nullptr;
  void* (*realloc_aligned)(void*, size_t, size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void* (*expand)(void*, size_t) = nullptr;
  size_t (*usable_size)(const void*) = nullptr;
  size_t (*good_size)(size_t) = nullptr;
  // Optional: reserved_bytes reports -1 without it.
  void (*process_info)(size_t*, size_t*, size_t*, size_t*, size_t*, size_t*, size_t*, size_t*) = nullptr;
  void (*collect)(bool) = nullptr;  // optional (mi_collect)
};

// Loads libmimalloc.so.2 once. RTLD_LOCAL keeps its malloc/free out of the
// global symbol scope; the handle is never closed (the allocator lives until
// process exit).
Result<const MimallocApi*> LoadMimalloc() {
  static const Result<const MimallocApi*> loaded = []() -> Result<const MimallocApi*> {
#ifdef QUIVER_WITHOUT_MIMALLOC  // CMake option QUIVER_WITH_MIMALLOC=OFF
    return Status::NotImplemented("the mimalloc allocator is not built in (QUIVER_WITH_MIMALLOC=OFF)");
#endif
    void* handle = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return Status::IOError(std::string("cannot load the mimalloc allocator: ") +
                             (why ? why : "dlopen(libmimalloc.so.2) failed"));
    }
    static MimallocApi api;
    std::string missing;
    auto resolve = [&](auto& fn, const char* symbol) {
      void* sym = dlsym(handle, symbol);
      if (sym == nullptr && !missing.empty()) missing += ", ";
      if (sym == nullptr) missing += symbol;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    resolve(api.malloc_aligned, "mi_malloc_aligned");
    resolve(api.realloc_aligned, "mi_realloc_aligned");
    resolve(api.free, "mi_free");
    resolve(api.expand, "mi_expand");
    resolve(api.usable_size, "mi_usable_size");
    resolve(api.good_size, "mi_good_size");
    if (!missing.empty()) {
      return Status::IOError("cannot load the mimalloc allocator: libmimalloc.so.2 lacks " + missing);
    }
    api.process_info = reinterpret_cast<decltype(api.process_info)>(dlsym(handle, "mi_process_info"));
    api.collect = reinterpret_cast<decltype(api.collect)>(dlsym(handle, "mi_collect"));
    return &api;
  }();
  return loaded;
}

class MimallocAllocator final : public Allocator {
 public:
  explicit MimallocAllocator(const MimallocApi* api) : api_(api) {}

  AllocatorKind kind() const noexcept override { return AllocatorKind::kMimalloc; }

  uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept override {
    if (!ValidRequest(size_bytes, alignment)) return nullptr;
    return static_cast<uint8_t*>(api_->malloc_aligned(static_cast<size_t>(size_bytes), static_cast<size_t>(alignment)));
  }

  void Free(uint8_t* ptr, int64_t, int64_t) noexcept override { api_->free(ptr); }

  // mi_expand accepts any shrink but never gives bytes back, so a shrink
  // counts as in place only when the block already is the size class the
  // new size would get (no hidden slack); otherwise the pool moves it.
  bool ShrinkInPlace(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes, int64_t) noexcept override {
    if (ptr == nullptr || new_size_bytes <= 0 || new_size_bytes >= old_size_bytes) return false;
    const size_t new_size = static_cast<size_t>(new_size_bytes);
    if (api_->good_size(new_size) < api_->usable_size(ptr)) return false;
    return api_->expand(ptr, new_size) == ptr;
  }

  uint8_t* Reallocate(uint8_t* ptr, int64_t, int64_t new_size_bytes, int64_t alignment) noexcept override {
    if (!ValidRequest(new_size_bytes, alignment)) return nullptr;
    return static_cast<uint8_t*>(
        api_->realloc_aligned(ptr, static_cast<size_t>(new_size_bytes), static_cast<size_t>(alignment)));
  }

  // mimalloc's committed bytes (process-wide, all of its heaps).
  int64_t reserved_bytes() const noexcept override {
    if (api_->process_info == nullptr) return -1;
    size_t elapsed = 0, user = 0, sys = 0, rss = 0, peak_rss = 0, commit = 0, peak_commit = 0, faults = 0;
    api_->process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
    return static_cast<int64_t>(commit);
  }

  void ReleaseFreeMemory() noexcept override {
    if (api_->collect != nullptr) api_->collect(true);
  }

 private:
  const MimallocApi* api_;
};

// ------------------------------------------------------------------ mmap ---

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

class MmapAllocator final : public Allocator {
 public:
  MmapAllocator() : page_bytes_(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096) {}

  AllocatorKind kind() const noexcept override { return AllocatorKind::kMmap; }

  // Alignment <= 4096 <= page size: every mapping is aligned.
  uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept override {
    if (!ValidRequest(size_bytes, alignment)) return nullptr;
    int64_t mapped_bytes;
    if (!CheckedRoundUp(size_bytes, page_bytes_, &mapped_bytes)) return nullptr;
    void* p =
        mmap(nullptr, static_cast<size_t>(mapped_bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    mapped_bytes_.fetch_add(mapped_bytes, std::memory_order_relaxed);
    return static_cast<uint8_t*>(p);
  }

  void Free(uint8_t* ptr, int64_t size_bytes, int64_t) noexcept override {
    if (ptr == nullptr) return;
    const int64_t mapped_bytes = RoundUpToPage(size_bytes);
    if (munmap(ptr, static_cast<size_t>(mapped_bytes)) == 0) {
      mapped_bytes_.fetch_sub(mapped_bytes, std::memory_order_relaxed);
    }
  }

  // Unmaps the whole pages past the new end; always in place.
  bool ShrinkInPlace(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes, int64_t) noexcept override {
    if (ptr == nullptr || new_size_bytes <= 0 || new_size_bytes >= old_size_bytes) return false;
    const int64_t old_mapped = RoundUpToPage(old_size_bytes);
    const int64_t new_mapped = RoundUpToPage(new_size_bytes);
    if (new_mapped < old_mapped) {
      if (munmap(ptr + new_mapped, static_cast<size_t>(old_mapped - new_mapped)) != 0) {
        return false;
      }
      mapped_bytes_.fetch_sub(old_mapped - new_mapped, std::memory_order_relaxed);
    }
    return true;
  }

  // Grows with mremap (the kernel moves page tables, not bytes).
  // ThreadSanitizer does not intercept mremap: the pages a block moves away
  // from keep their old shadow, and the next mapping placed there reports
  // the previous owner's writes as a race (seen in ResultServerMemory under
  // TSan). Sanitized builds therefore grow by map + copy + unmap, which it
  // sees.
  uint8_t* Reallocate(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes,
                      int64_t alignment) noexcept override {
    if (!ValidRequest(new_size_bytes, alignment)) return nullptr;
    if (new_size_bytes < old_size_bytes && ShrinkInPlace(ptr, old_size_bytes, new_size_bytes, alignment)) {
      return ptr;
    }
    const int64_t old_mapped = RoundUpToPage(old_size_bytes);
    int64_t new_mapped;
    if (!CheckedRoundUp(new_size_bytes, page_bytes_, &new_mapped)) return nullptr;
    if (new_mapped == old_mapped) return ptr;
    if constexpr (kThreadSanitizer) return Allocator::Reallocate(ptr, old_size_bytes, new_size_bytes, alignment);
    void* p = mremap(ptr, static_cast<size_t>(old_mapped), static_cast<size_t>(new_mapped), MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return nullptr;
    mapped_bytes_.fetch_add(new_mapped - old_mapped, std::memory_order_relaxed);
    return static_cast<uint8_t*>(p);
  }

  // Bytes mapped by live blocks.
  int64_t reserved_bytes() const noexcept override { return mapped_bytes_.load(std::memory_order_relaxed); }

  // Sizes given back to Free / ShrinkInPlace were rounded once already in
  // Allocate, so this cannot overflow.
  int64_t RoundUpToPage(int64_t n) const { return (n + page_bytes_ - 1) & ~(page_bytes_ - 1); }

 private:
  const int64_t page_bytes_;
  std::atomic<int64_t> mapped_bytes_{0};
};

// ---------------------------------------------------------------- system ---

// glibc malloc for blocks under kSystemMapBlockBytes; larger blocks get
// their own private mapping (the mmap allocator above). glibc maps large
// blocks itself, but its threshold is dynamic: once a mapped block is freed
// the threshold rises to that block's size (up to 32 MiB), and every later
// block of that size comes from an arena, where freed chunk buffers stay
// resident between statements. `quiver bench serve` measured the burst of
// 12 large statements leaving +215 MiB resident this way (+2.6 MiB with the
// threshold fixed, +1.4 MiB with the mmap allocator). Which path a block
// took follows from the size it is freed or resized with, so no header is
// kept.
//
// Freed mappings are kept for reuse, up to kCachedBytes and kCachedBlocks
// in all: a statement's batches take and give back blocks of the same few
// sizes (64 Ki rows of a decimal column: 1 MiB), its relations and
// aggregate tables pages of tens of MiB, and the next statement asks for
// the same again; a fresh mapping costs a page fault per 4 KiB when first
// written (about 2.7 us here: TPC-H Q18 at scale 1 spent a quarter of its
// time faulting in 180 MiB it had freed one statement earlier). Mapped
// blocks are sized by class (SystemMappedBlockBytes: a sixteenth of a
// power of two), so requests a few KiB apart, as a column chunk's pages and
// dictionaries are, map the same size: without classes a Parquet scan
// faulted in a fresh mapping per page (TPC-H Q7 over Parquet at scale 1:
// 43,854 faults, about a third of its time on this host). A request
// takes the kept mapping of exactly its class's size, else the
// smallest kept one of at most twice its size, whose tail is unmapped
// (ShrinkInPlace). A freed mapping past the limits pushes the oldest kept
// ones out; one larger than kCachedBytes is unmapped at once. Kept
// mappings idle for kCacheIdleNs go back at the next mapped Allocate or
// Free, and ReleaseFreeMemory unmaps them all (the server calls it once its
// statements have ended), so a process that stops allocating holds them
// until it allocates again or releases.
class SystemAllocator final : public Allocator {
 public:
  static constexpr int64_t kCachedBytes = int64_t{256} << 20;
  static constexpr size_t kCachedBlocks = 64;
  static constexpr int64_t kCacheIdleNs = int64_t{2'000'000'000};

  SystemAllocator() { cache_.reserve(kCachedBlocks); }  // Free never allocates
  ~SystemAllocator() override { ReleaseCached(); }

  AllocatorKind kind() const noexcept override { return AllocatorKind::kSystem; }

  uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept override {
    if (!ValidRequest(size_bytes, alignment)) return nullptr;
    if (Mapped(size_bytes)) {
      const int64_t mapped = SystemMappedBlockBytes(size_bytes);
      if (mapped < 0) return nullptr;
      if (uint8_t* p = TakeCached(mapped)) return p;
      return large_.Allocate(mapped, alignment);
    }
    void* p = nullptr;
    if (posix_memalign(&p, static_cast<size_t>(alignment), static_cast<size_t>(size_bytes)) != 0) {
      return nullptr;
    }
    return static_cast<uint8_t*>(p);
  }

  void Free(uint8_t* ptr, int64_t size_bytes, int64_t alignment) noexcept override {
    if (Mapped(size_bytes)) {
      const int64_t mapped = SystemMappedBlockBytes(size_bytes);  // valid: Allocate took this size
      if (ptr == nullptr || mapped > kCachedBytes) return large_.Free(ptr, mapped, alignment);
      const int64_t now = NowNs();
      std::lock_guard lock(cache_mutex_);
      EvictLocked(now, mapped);
      cache_.push_back({ptr, mapped, now});
      cached_bytes_ += mapped;
      return;
    }
    std::free(ptr);
  }

  // Only a mapped block that stays mapped shrinks in place (its tail pages
  // are unmapped); a block crossing the threshold moves.
  bool ShrinkInPlace(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes,
                     int64_t alignment) noexcept override {
    if (!Mapped(old_size_bytes) || !Mapped(new_size_bytes) || new_size_bytes >= old_size_bytes) return false;
    const int64_t old_mapped = SystemMappedBlockBytes(old_size_bytes);
    const int64_t new_mapped = SystemMappedBlockBytes(new_size_bytes);
    if (ptr == nullptr) return false;
    if (new_mapped == old_mapped) return true;  // one class: nothing to unmap
    return large_.ShrinkInPlace(ptr, old_mapped, new_mapped, alignment);
  }

  // Mapped to mapped: mremap. glibc to glibc: realloc where malloc's
  // natural alignment (16 bytes) is enough. Otherwise (a larger alignment,
  // or a block crossing the threshold): Allocate + copy + Free.
  uint8_t* Reallocate(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes,
                      int64_t alignment) noexcept override {
    if (!ValidRequest(new_size_bytes, alignment)) return nullptr;
    const bool old_mapped = Mapped(old_size_bytes), new_mapped = Mapped(new_size_bytes);
    if (old_mapped && new_mapped) {
      const int64_t new_class = SystemMappedBlockBytes(new_size_bytes);
      if (new_class < 0) return nullptr;
      return large_.Reallocate(ptr, SystemMappedBlockBytes(old_size_bytes), new_class, alignment);
    }
    if (!old_mapped && !new_mapped && alignment <= static_cast<int64_t>(alignof(std::max_align_t))) {
      return static_cast<uint8_t*>(std::realloc(ptr, static_cast<size_t>(new_size_bytes)));
    }
    return Allocator::Reallocate(ptr, old_size_bytes, new_size_bytes, alignment);
  }

  // glibc's view of what it took from the OS (arena bytes: sbrk and the
  // per-thread heaps, plus its own mapped chunks) and the large blocks'
  // mappings.
  int64_t reserved_bytes() const noexcept override {
    struct mallinfo2 info = mallinfo2();
    return static_cast<int64_t>(info.arena + info.hblkhd) + large_.reserved_bytes();
  }

  void ReleaseFreeMemory() noexcept override {
    ReleaseCached();
    malloc_trim(0);
  }

 private:
  static bool Mapped(int64_t size_bytes) { return size_bytes >= kSystemMapBlockBytes; }

  static int64_t NowNs() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Unmaps kept mappings from the oldest on while they are idle, or while
  // keeping `incoming` more bytes (a mapping about to be kept; 0 when
  // none) would pass kCachedBytes or kCachedBlocks (cache_mutex_ held).
  void EvictLocked(int64_t now, int64_t incoming) noexcept {
    size_t drop = 0;
    while (drop < cache_.size() &&
           (now - cache_[drop].freed_ns > kCacheIdleNs || cached_bytes_ + incoming > kCachedBytes ||
            (incoming > 0 && cache_.size() - drop >= kCachedBlocks))) {
      large_.Free(cache_[drop].ptr, cache_[drop].bytes, 64);
      cached_bytes_ -= cache_[drop].bytes;
      ++drop;
    }
    cache_.erase(cache_.begin(), cache_.begin() + static_cast<std::ptrdiff_t>(drop));
  }

  // A kept mapping for a block of `want` bytes (its size class, see the
  // class comment), or nullptr. Drops the idle ones first.
  uint8_t* TakeCached(int64_t want) noexcept {
    const int64_t now = NowNs();
    std::lock_guard lock(cache_mutex_);
    EvictLocked(now, 0);
    size_t best = cache_.size();
    for (size_t i = cache_.size(); i-- > 0;) {  // newest first
      const int64_t have = cache_[i].bytes;
      if (have == want) {
        best = i;
        break;
      }
      if (have > want && have / 2 <= want && (best == cache_.size() || have < cache_[best].bytes)) best = i;
    }
    if (best == cache_.size()) return nullptr;
    const Block b = cache_[best];
    if (b.bytes != want && !large_.ShrinkInPlace(b.ptr, b.bytes, want, 64)) return nullptr;
    cache_.erase(cache_.begin() + static_cast<std::ptrdiff_t>(best));
    cached_bytes_ -= b.bytes;
    return b.ptr;
  }

  void ReleaseCached() noexcept {
    std::lock_guard lock(cache_mutex_);
    for (const Block& b : cache_) large_.Free(b.ptr, b.bytes, 64);
    cache_.clear();  // keeps its capacity
    cached_bytes_ = 0;
  }

  struct Block {
    uint8_t* ptr;
    int64_t bytes;     // page-rounded
    int64_t freed_ns;  // steady clock
  };
  MmapAllocator large_;
  std::mutex cache_mutex_;
  std::vector<Block> cache_;  // freed mappings, newest last
  int64_t cached_bytes_ = 0;
};

}  // namespace

int64_t SystemMappedBlockBytes(int64_t size_bytes) noexcept {
  if (size_bytes <= 0) return -1;
  const int64_t power = int64_t{1} << (63 - __builtin_clzll(static_cast<unsigned long long>(size_bytes)));
  const int64_t step = std::max<int64_t>(power / 16, 4096);
  if (size_bytes > INT64_MAX - (step - 1)) return -1;
  return (size_bytes + step - 1) / step * step;
}

bool ConfigureProcessMalloc() noexcept {
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kSystemMapBlockBytes)) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(kProcessTrimThresholdBytes)) == 1;
  return mmap_ok && trim_ok;
}

Result<Allocator*> GetAllocator(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kSystem: {
      static SystemAllocator system;
      return &system;
    }
    case AllocatorKind::kJemalloc: {
      // A binary may be linked with stubs instead of jemalloc (the Python
      // module: jemalloc's initial-exec TLS cannot be loaded by dlopen);
      // their mallctl fails, so "version" tells which this binary has.
      static const bool available = [] {
        const char* version = nullptr;
        size_t len = sizeof(version);
        return quiver_je_mallctl("version", &version, &len, nullptr, 0) == 0;
      }();
      if (!available) {
        return Status::NotImplemented(
            "the jemalloc allocator is not linked into this binary (the Python module leaves it out: "
            "its initial-exec TLS cannot be loaded by dlopen); use system, mimalloc or mmap");
      }
      static JemallocAllocator jemalloc;
      return &jemalloc;
    }
    case AllocatorKind::kMimalloc: {
      QUIVER_ASSIGN_OR_RETURN(const MimallocApi* api, LoadMimalloc());
      static MimallocAllocator mimalloc(api);
      return &mimalloc;
    }
    case AllocatorKind::kMmap: {
      static MmapAllocator mmap_allocator;
      return &mmap_allocator;
    }
  }
  return Status::Invalid("unknown allocator kind " + std::to_string(static_cast<int>(kind)));
}

Result<AllocatorKind> AllocatorKindFromEnvironment() {
  const char* value = std::getenv("QUIVER_ALLOCATOR");
  if (value == nullptr || value[0] == '\0') return AllocatorKind::kSystem;
  Result<AllocatorKind> kind = ParseAllocatorKind(value);
  if (!kind.ok()) return kind.status().WithContext("QUIVER_ALLOCATOR");
  return kind;
}

}  // namespace quiver
