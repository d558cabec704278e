// quiver/fetch/chunk_decoder.cc — see chunk_decoder.h.
#include "quiver/fetch/chunk_decoder.h"

#define LZ4F_STATIC_LINKING_ONLY  // LZ4F_createDecompressionContext_advanced, LZ4F_getErrorCode
#include <lz4frame.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "quiver/base/checked_math.h"

namespace quiver::fetch {

std::string_view ChunkPolicyName(ChunkPolicy policy) {
  switch (policy) {
    case ChunkPolicy::kHeap: return "heap";
    case ChunkPolicy::kMmapAfter: return "mmap-after";
    case ChunkPolicy::kStreamMmap: return "stream-mmap";
  }
  return "?";
}

Result<ChunkPolicy> ParseChunkPolicy(std::string_view name) {
  if (name == "heap") return ChunkPolicy::kHeap;
  if (name == "mmap-after") return ChunkPolicy::kMmapAfter;
  if (name == "stream-mmap") return ChunkPolicy::kStreamMmap;
  return Status::Invalid("unknown chunk policy '" + std::string(name) + "' (expected heap, mmap-after or stream-mmap)");
}

namespace {

std::atomic<int64_t> g_live_mappings{0};
std::atomic<int64_t> g_mapped_bytes{0};
std::atomic<int64_t> g_peak_mapped_bytes{0};
std::atomic<int64_t> g_heap_fallbacks{0};
std::atomic<int64_t> g_mremap_grows{0};
std::atomic<int64_t> g_tail_trims{0};

void AddMapped(int64_t delta) {
  const int64_t now = g_mapped_bytes.fetch_add(delta) + delta;
  int64_t peak = g_peak_mapped_bytes.load();
  while (now > peak && !g_peak_mapped_bytes.compare_exchange_weak(peak, now)) {
  }
}

int64_t PageBytes() {
  static const int64_t page = [] {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<int64_t>(p) : int64_t{4096};
  }();
  return page;
}

int64_t RoundToPage(int64_t n) {
  const int64_t p = PageBytes();
  return (n + p - 1) / p * p;
}

std::string Bytes(int64_t n) { return std::to_string(n) + " bytes"; }

// A Buffer owning the decompressed bytes of one chunk: a private anonymous
// mapping (munmapped and uncharged on destruction) or a pool allocation.
class ChunkBuffer final : public Buffer {
 public:
  ChunkBuffer(uint8_t* data, int64_t size, int64_t map_bytes, PoolAllocation heap, std::shared_ptr<MemoryPool> pool)
      : Buffer(data, size, false), map_bytes_(map_bytes), heap_(heap), pool_(std::move(pool)) {}
  ~ChunkBuffer() override {
    if (map_bytes_ > 0) {
      munmap(const_cast<uint8_t*>(data_), static_cast<size_t>(map_bytes_));
      pool_->Unreserve(map_bytes_);
      g_live_mappings.fetch_sub(1);
      AddMapped(-map_bytes_);
    } else if (heap_.data != nullptr) {
      pool_->Free(heap_);
    }
  }
  int64_t capacity_bytes() const override { return map_bytes_ > 0 ? map_bytes_ : heap_.granted_bytes; }

 private:
  int64_t map_bytes_;
  PoolAllocation heap_;
  std::shared_ptr<MemoryPool> pool_;
};

// Growable output memory: a mapping when allowed, else (or on failure) a
// pool allocation. Capacity is always charged to the pool.
constexpr int64_t kHugePage = int64_t{2} << 20;

// A private anonymous mapping of `bytes` (a page multiple); from 2 MiB up it
// starts on a 2 MiB boundary, so that transparent huge pages (MADV_HUGEPAGE)
// cover all of it but the tail instead of leaving up to 2 MiB of 4 KiB pages
// (one costly fault each) at the head. MAP_FAILED on failure.
void* MapAligned(int64_t bytes) {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  if (bytes < kHugePage) return mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, flags, -1, 0);
  void* p = mmap(nullptr, static_cast<size_t>(bytes + kHugePage), PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) return p;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHugePage - 1) & ~static_cast<uintptr_t>(kHugePage - 1);
  const size_t head = aligned - start;
  const size_t tail = static_cast<size_t>(kHugePage) - head;
  if (head > 0) munmap(p, head);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + static_cast<uintptr_t>(bytes)), tail);
  return reinterpret_cast<void*>(aligned);
}

class OutputRegion {
 public:
  OutputRegion(MemoryPool* pool, bool want_map, int64_t max_live)
      : pool_(pool), want_map_(want_map), max_live_(max_live) {}
  ~OutputRegion() { Clear(); }

  uint8_t* data() const { return data_; }
  int64_t capacity() const { return capacity_; }
  bool heap_fallback() const { return fell_back_; }

  void Clear() {
    if (map_bytes_ > 0) {
      munmap(data_, static_cast<size_t>(map_bytes_));
      pool_->Unreserve(map_bytes_);
      g_live_mappings.fetch_sub(1);
      AddMapped(-map_bytes_);
    } else if (heap_.data != nullptr) {
      pool_->Free(heap_);
    }
    data_ = nullptr;
    capacity_ = 0;
    map_bytes_ = 0;
    heap_ = {};
  }

  // Grows to at least `want` bytes (keeping the first `used` bytes).
  Status Grow(int64_t want, int64_t used) {
    if (want <= capacity_) return Status::OK();
    if (data_ == nullptr) return Create(want);
    if (map_bytes_ > 0) {
      const int64_t new_map = RoundToPage(want);
      QUIVER_RETURN_NOT_OK(pool_->Reserve(new_map - map_bytes_));
      void* p = mremap(data_, static_cast<size_t>(map_bytes_), static_cast<size_t>(new_map), MREMAP_MAYMOVE);
      if (p != MAP_FAILED) {
        AddMapped(new_map - map_bytes_);
        g_mremap_grows.fetch_add(1);
        data_ = static_cast<uint8_t*>(p);
        map_bytes_ = capacity_ = new_map;
        return Status::OK();
      }
      pool_->Unreserve(new_map - map_bytes_);
      // Move to the heap.
      QUIVER_ASSIGN_OR_RETURN(PoolAllocation a, pool_->Allocate(want, 64));
      std::memcpy(a.data, data_, static_cast<size_t>(used));
      Clear();
      g_heap_fallbacks.fetch_add(1);
      fell_back_ = true;
      heap_ = a;
      data_ = a.data;
      capacity_ = want;
      return Status::OK();
    }
    PoolAllocation a = heap_;
    QUIVER_RETURN_NOT_OK(pool_->Reallocate(&a, want));
    heap_ = a;
    data_ = a.data;
    capacity_ = want;
    return Status::OK();
  }

  // Hands the first `size` bytes to a Buffer (tail given back).
  Result<std::shared_ptr<Buffer>> Release(int64_t size) {
    std::shared_ptr<MemoryPool> pool = pool_->shared_from_this();
    if (size == 0) {
      Clear();
      return Buffer::Unowned(reinterpret_cast<const uint8_t*>(""), 0);
    }
    if (map_bytes_ > 0) {
      const int64_t keep = RoundToPage(size);
      if (keep < map_bytes_) {
        // Shrinking in place never moves and frees the tail pages.
        void* p = mremap(data_, static_cast<size_t>(map_bytes_), static_cast<size_t>(keep), 0);
        if (p != MAP_FAILED) {
          pool_->Unreserve(map_bytes_ - keep);
          AddMapped(keep - map_bytes_);
          g_tail_trims.fetch_add(1);
          map_bytes_ = keep;
        }
      }
      auto b = std::make_shared<ChunkBuffer>(data_, size, map_bytes_, PoolAllocation{}, pool);
      data_ = nullptr;
      capacity_ = map_bytes_ = 0;
      return std::shared_ptr<Buffer>(std::move(b));
    }
    if (size < heap_.granted_bytes) {
      PoolAllocation a = heap_;
      if (pool_->Reallocate(&a, size).ok()) heap_ = a;  // keep the larger block on failure
    }
    auto b = std::make_shared<ChunkBuffer>(heap_.data, size, 0, heap_, pool);
    heap_ = {};
    data_ = nullptr;
    capacity_ = 0;
    return std::shared_ptr<Buffer>(std::move(b));
  }

 private:
  Status Create(int64_t want) {
    if (want_map_) {
      const int64_t limit = max_live_ > 0 ? max_live_ : SystemMaxMapCount() / 4;
      const int64_t map = RoundToPage(want);
      if (g_live_mappings.fetch_add(1) < limit) {
        QUIVER_RETURN_NOT_OK([&]() -> Status {
          Status st = pool_->Reserve(map);
          if (!st.ok()) g_live_mappings.fetch_sub(1);
          return st;
        }());
        void* p = MapAligned(map);
        if (p != MAP_FAILED) {
          if (map >= kHugePage) madvise(p, static_cast<size_t>(map), MADV_HUGEPAGE);
          AddMapped(map);
          data_ = static_cast<uint8_t*>(p);
          map_bytes_ = capacity_ = map;
          return Status::OK();
        }
        pool_->Unreserve(map);
      }
      g_live_mappings.fetch_sub(1);
      g_heap_fallbacks.fetch_add(1);
      fell_back_ = true;
    }
    QUIVER_ASSIGN_OR_RETURN(heap_, pool_->Allocate(want, 64));
    data_ = heap_.data;
    capacity_ = want;
    return Status::OK();
  }

  MemoryPool* pool_;
  bool want_map_;
  int64_t max_live_;
  uint8_t* data_ = nullptr;
  int64_t capacity_ = 0;
  int64_t map_bytes_ = 0;
  PoolAllocation heap_;
  bool fell_back_ = false;
};

// LZ4F's own buffers (a block of input, a block of output and the 64 KiB
// history: ~8 MiB for 4 MiB blocks) are charged to the decoder's pool and,
// when large, mapped privately, so that they go back to the OS when the
// context is freed instead of staying in a malloc arena (the fragmentation the
// seed measured).
struct ScratchState {
  MemoryPool* pool = nullptr;
  std::atomic<int64_t> held{0};
};

constexpr size_t kScratchHeader = 64;               // keeps 64-byte alignment
constexpr size_t kScratchMapThreshold = 256 << 10;  // mapped at or above

void* ScratchAlloc(void* opaque, size_t size) {
  auto* st = static_cast<ScratchState*>(opaque);
  const size_t total = size + kScratchHeader;
  const bool map = total >= kScratchMapThreshold;
  const int64_t charge = map ? RoundToPage(static_cast<int64_t>(total)) : static_cast<int64_t>(total);
  if (!st->pool->Reserve(charge).ok()) return nullptr;  // LZ4F reports allocation_failed
  void* p = nullptr;
  if (map) {
    p = mmap(nullptr, static_cast<size_t>(charge), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) p = nullptr;
  } else {
    p = std::malloc(total);
  }
  if (p == nullptr) {
    st->pool->Unreserve(charge);
    return nullptr;
  }
  st->held += charge;
  auto* header = static_cast<int64_t*>(p);
  header[0] = charge;
  header[1] = map ? 1 : 0;
  return static_cast<uint8_t*>(p) + kScratchHeader;
}

void* ScratchCalloc(void* opaque, size_t size) {
  void* p = ScratchAlloc(opaque, size);
  if (p != nullptr) {
    const auto* header = reinterpret_cast<const int64_t*>(static_cast<uint8_t*>(p) - kScratchHeader);
    if (header[1] == 0) std::memset(p, 0, size);  // mappings are zero already
  }
  return p;
}

void ScratchFree(void* opaque, void* address) {
  if (address == nullptr) return;
  auto* st = static_cast<ScratchState*>(opaque);
  uint8_t* base = static_cast<uint8_t*>(address) - kScratchHeader;
  const auto* header = reinterpret_cast<const int64_t*>(base);
  const int64_t charge = header[0];
  if (header[1] != 0) {
    munmap(base, static_cast<size_t>(charge));
  } else {
    std::free(base);
  }
  st->held -= charge;
  st->pool->Unreserve(charge);
}

}  // namespace

// An LZ4F context with its scratch accounting (ScratchState is the custom
// allocator's opaque pointer, so it lives as long as the context).
struct Lz4ContextCache::Context {
  ScratchState scratch;
  LZ4F_dctx* dctx = nullptr;
  ~Context() {
    if (dctx != nullptr) LZ4F_freeDecompressionContext(dctx);
  }
  // A new context whose scratch is charged to `pool`; null when LZ4F
  // cannot make one.
  static Lz4ContextCache::ContextPtr Make(MemoryPool* pool) {
    Lz4ContextCache::ContextPtr c(new Context());
    c->scratch.pool = pool;
    LZ4F_CustomMem mem{ScratchAlloc, ScratchCalloc, ScratchFree, &c->scratch};
    c->dctx = LZ4F_createDecompressionContext_advanced(mem, LZ4F_VERSION);
    if (c->dctx == nullptr) return nullptr;
    return c;
  }
};

void Lz4ContextCache::ContextDeleter::operator()(Context* context) const { delete context; }

Lz4ContextCache::Lz4ContextCache(int max_contexts) : max_contexts_(max_contexts) {}
Lz4ContextCache::~Lz4ContextCache() = default;

Lz4ContextCache::ContextPtr Lz4ContextCache::Take(MemoryPool* pool) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if ((*it)->scratch.pool != pool) continue;
    ContextPtr c = std::move(*it);
    kept_.erase(it);
    return c;
  }
  return nullptr;
}

void Lz4ContextCache::Give(ContextPtr context) {
  if (!context) return;
  LZ4F_resetDecompressionContext(context->dctx);  // keeps its buffers for the next frame
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(kept_.size()) < max_contexts_) kept_.push_back(std::move(context));
}

void Lz4ContextCache::Clear() {
  std::vector<ContextPtr> drop;  // freed after the lock
  std::lock_guard<std::mutex> lock(mu_);
  drop.swap(kept_);
}

int Lz4ContextCache::kept() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(kept_.size());
}

namespace {

class ChunkDecoderImpl final : public ChunkDecoder {
 public:
  explicit ChunkDecoderImpl(ChunkDecoderOptions o)
      : o_(std::move(o)), out_(o_.pool, o_.policy != ChunkPolicy::kHeap, o_.max_live_mappings) {}
  ~ChunkDecoderImpl() override { FreeHeld(); }

  Status Init() {
    if (o_.lz4_contexts) ctx_ = o_.lz4_contexts->Take(o_.pool);
    if (!ctx_) ctx_ = Lz4ContextCache::Context::Make(o_.pool);
    if (!ctx_) return Status::OutOfMemory(o_.chunk_label + ": cannot create an LZ4 decompression context");
    return Status::OK();
  }

  Status Consume(std::span<const uint8_t> bytes) override {
    if (!error_.ok()) return error_;
    Status st = ConsumeImpl(bytes);
    if (!st.ok()) Fail(st);
    return st;
  }

  void Reset() override {
    FreeHeld();
    out_.Clear();
    // A fresh context: its scratch buffers go back too.
    ctx_.reset();
    if (!Init().ok()) error_ = Status::OutOfMemory(Label() + ": cannot create an LZ4 decompression context");
    received_ = produced_ = 0;
    in_frame_ = false;
    hdr_len_ = 0;
    hdr_size_ = 0;
    frames_ = 0;
    skip_left_ = 0;
    if (ctx_) error_ = Status::OK();
  }

  Result<std::shared_ptr<Buffer>> Finish() override {
    if (!error_.ok()) return error_;
    auto r = FinishImpl();
    if (!r.ok()) {
      Fail(r.status());
    } else if (o_.lz4_contexts) {
      o_.lz4_contexts->Give(std::move(ctx_));  // every frame ended: the next chunk reuses its buffers
    }
    return r;
  }

  int64_t received_bytes() const override { return received_; }
  int64_t held_bytes() const override {
    return out_.capacity() + held_.granted_bytes + (ctx_ ? ctx_->scratch.held.load() : 0);
  }
  bool used_heap_fallback() const override { return out_.heap_fallback(); }

 private:
  bool Streaming() const { return !o_.lz4 || o_.policy == ChunkPolicy::kStreamMmap; }
  bool Exact() const { return o_.bytes_num_is_exact && o_.expected_bytes > 0; }

  void Fail(const Status& st) {
    error_ = st;
    FreeHeld();
    out_.Clear();
    ctx_.reset();  // its scratch goes back now, not when the decoder is destroyed
  }
  void FreeHeld() {
    if (held_.data != nullptr) o_.pool->Free(held_);
    held_ = {};
    held_used_ = 0;
  }

  // Largest output the bytes seen so far can honestly produce.
  int64_t OutputBound() const {
    int64_t bound = o_.max_decompressed_bytes;
    if (Exact()) bound = std::min(bound, o_.expected_bytes);
    const int64_t slack = int64_t{4} << 20;  // one LZ4 block may be decoded ahead
    int64_t by_ratio;
    if (!Exact() && o_.expected_bytes > 0) {
      // A hint (uncompressed size, or the compressed size as other servers
      // send it) bounds what the chunk may become by LZ4's largest ratio
      // (over the hint or the announced length, not the bytes received): an
      // endless body is cut instead of growing to max_decompressed_bytes.
      if (CheckedMul(std::max(o_.expected_bytes, o_.compressed_length), o_.max_expansion_ratio, &by_ratio) &&
          CheckedAdd(by_ratio, slack, &by_ratio)) {
        bound = std::min(bound, by_ratio);
      }
    }
    const int64_t base = o_.compressed_length >= 0 ? o_.compressed_length : received_;
    if (o_.lz4) {
      if (CheckedMul(base, o_.max_expansion_ratio, &by_ratio) && CheckedAdd(by_ratio, slack, &by_ratio)) {
        bound = std::min(bound, by_ratio);
      }
    } else {
      bound = std::min(bound, o_.compressed_length >= 0 ? o_.compressed_length : received_);
    }
    return bound;
  }

  std::string Label() const { return o_.chunk_label; }

  // Output bytes that may be written: the capacity (pages for a mapping)
  // but never past what the chunk may produce.
  int64_t Usable() const { return std::min(out_.capacity(), OutputBound()); }

  Status ConsumeImpl(std::span<const uint8_t> bytes) {
    int64_t total;
    if (!CheckedAdd(received_, static_cast<int64_t>(bytes.size()), &total)) {
      return Status::Invalid(Label() + ": body length overflows");
    }
    if (o_.compressed_length >= 0 && total > o_.compressed_length) {
      return Status::Invalid(Label() + ": received more than the announced length: expected " +
                             Bytes(o_.compressed_length) + ", actual at least " + Bytes(total));
    }
    received_ = total;
    if (!Streaming()) return Hold(bytes);
    if (!o_.lz4) return Copy(bytes);
    return Decompress(bytes);
  }

  // heap / mmap-after: keep the compressed bytes (doubling heap buffer).
  Status Hold(std::span<const uint8_t> bytes) {
    const int64_t need = held_used_ + static_cast<int64_t>(bytes.size());
    if (need > held_.granted_bytes) {
      int64_t want = std::max<int64_t>(need, held_.granted_bytes * 2);
      if (o_.compressed_length >= 0) want = std::max(need, std::min(want, o_.compressed_length));
      want = std::max<int64_t>(want, 64 << 10);
      if (held_.data == nullptr) {
        QUIVER_ASSIGN_OR_RETURN(held_, o_.pool->Allocate(want, 64));
      } else {
        PoolAllocation a = held_;
        QUIVER_RETURN_NOT_OK(o_.pool->Reallocate(&a, want));
        held_ = a;
      }
    }
    if (!bytes.empty()) std::memcpy(held_.data + held_used_, bytes.data(), bytes.size());
    held_used_ = need;
    return Status::OK();
  }

  // Makes room for at least one more output byte.
  Status Room(int64_t hint_total) {
    const int64_t bound = OutputBound();
    if (produced_ >= bound) {
      if (Exact() && produced_ >= o_.expected_bytes) {
        return Status::Invalid(Label() + ": decompressed size exceeds bytesNum: expected " + Bytes(o_.expected_bytes) +
                               ", actual more");
      }
      return Status::Invalid(Label() + ": decompressed size exceeds the limit of " + Bytes(bound) + " (received " +
                             Bytes(received_) + ")");
    }
    int64_t want;
    if (out_.capacity() == 0) {
      want = hint_total > 0 ? hint_total : int64_t{1} << 20;
    } else {
      want = std::max(out_.capacity() * 2, hint_total);
    }
    want = std::min(std::max(want, produced_ + 1), bound);
    Status st = out_.Grow(want, produced_);
    if (st.IsOutOfMemory() && !Exact() && out_.capacity() == 0 && want > (int64_t{1} << 20)) {
      // A hint too large for the pool: start smaller and grow as data comes.
      st = out_.Grow(std::max(produced_ + 1, int64_t{1} << 20), produced_);
    }
    return st;
  }

  int64_t InitialHint() const {
    if (o_.expected_bytes > 0) return o_.expected_bytes;
    if (o_.compressed_length > 0) return o_.lz4 ? o_.compressed_length * 4 : o_.compressed_length;
    return 0;
  }

  Status Copy(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      if (produced_ >= Usable()) QUIVER_RETURN_NOT_OK(Room(InitialHint()));
      const int64_t n = std::min<int64_t>(Usable() - produced_, static_cast<int64_t>(bytes.size()));
      std::memcpy(out_.data() + produced_, bytes.data(), static_cast<size_t>(n));
      produced_ += n;
      bytes = bytes.subspan(static_cast<size_t>(n));
    }
    return Status::OK();
  }

  Status OnFrameHeader(const LZ4F_frameInfo_t& info) {
    ++frames_;
    if (info.frameType != LZ4F_frame) return Status::OK();  // skippable: no output
    int64_t content = static_cast<int64_t>(info.contentSize);
    if (info.contentSize == 0 || content < 0) {
      if (out_.capacity() == 0) return Room(InitialHint());
      return Status::OK();
    }
    int64_t end;
    if (!CheckedAdd(produced_, content, &end)) {
      return Status::Invalid(Label() + ": LZ4 frame content size overflows");
    }
    if (Exact() && end > o_.expected_bytes) {
      return Status::Invalid(Label() + ": LZ4 frame " + std::to_string(frames_ - 1) + " content size " +
                             Bytes(content) + " exceeds bytesNum: expected " + Bytes(o_.expected_bytes) +
                             " in total, frames announce at least " + Bytes(end));
    }
    const int64_t bound = OutputBound();
    if (end > bound) {
      return Status::Invalid(Label() + ": LZ4 frame content size " + Bytes(content) +
                             " is more than the compressed bytes can produce (limit " + Bytes(bound) + ")");
    }
    if (end > out_.capacity()) {
      int64_t want = end;
      if (Exact()) want = o_.expected_bytes;
      QUIVER_RETURN_NOT_OK(out_.Grow(want, produced_));
    }
    return Status::OK();
  }

  Status Decompress(std::span<const uint8_t> in) {
    while (!in.empty()) {
      if (skip_left_ > 0) {
        const int64_t n = std::min<int64_t>(skip_left_, static_cast<int64_t>(in.size()));
        skip_left_ -= n;
        in = in.subspan(static_cast<size_t>(n));
        continue;
      }
      if (!in_frame_) {
        // Gather the frame header (5..19 bytes) before any output is sized.
        size_t need = hdr_len_ < LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH ? LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH : hdr_size_;
        size_t take = std::min(need - hdr_len_, in.size());
        std::memcpy(hdr_ + hdr_len_, in.data(), take);
        hdr_len_ += take;
        in = in.subspan(take);
        if (hdr_len_ < LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH) return Status::OK();
        if (hdr_len_ == LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH && hdr_size_ == 0) {
          size_t hs = LZ4F_headerSize(hdr_, hdr_len_);
          if (LZ4F_isError(hs) || hs > sizeof hdr_) {
            return Status::Invalid(
                Label() + ": frame " + std::to_string(frames_) + " at byte " +
                std::to_string(received_ - static_cast<int64_t>(in.size()) - static_cast<int64_t>(hdr_len_)) +
                " is not an LZ4 frame: " + LZ4F_getErrorName(hs));
          }
          hdr_size_ = hs;
        }
        if (hdr_len_ < hdr_size_) {
          if (in.empty()) return Status::OK();
          continue;
        }
        uint32_t magic = 0;
        std::memcpy(&magic, hdr_, 4);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
          // A skippable frame (4-byte magic, 4-byte little-endian size): no output.
          uint32_t size = 0;
          std::memcpy(&size, hdr_ + 4, 4);
          skip_left_ = size;
          ++frames_;
          hdr_len_ = 0;
          hdr_size_ = 0;
          continue;
        }
        LZ4F_frameInfo_t info{};
        size_t consumed = hdr_len_;
        size_t r = LZ4F_getFrameInfo(ctx_->dctx, &info, hdr_, &consumed);
        if (LZ4F_isError(r) || consumed != hdr_len_) {
          return Status::Invalid(Label() + ": bad LZ4 frame header (frame " + std::to_string(frames_) +
                                 "): " + (LZ4F_isError(r) ? LZ4F_getErrorName(r) : "short header"));
        }
        hdr_len_ = 0;
        hdr_size_ = 0;
        in_frame_ = true;
        QUIVER_RETURN_NOT_OK(OnFrameHeader(info));
        continue;
      }
      bool progress = false;
      QUIVER_RETURN_NOT_OK(Step(&in, &progress));
      if (!progress) QUIVER_RETURN_NOT_OK(Room(InitialHint()));
    }
    return Status::OK();
  }

  // One LZ4F_decompress call into the room there is (possibly none: the
  // frame's end mark and checksum need no output). *progress is false when
  // it neither consumed nor produced a byte (it needs output room, or input).
  Status Step(std::span<const uint8_t>* in, bool* progress) {
    static uint8_t dummy = 0;
    size_t dst = static_cast<size_t>(std::max<int64_t>(0, Usable() - produced_));
    uint8_t* out = out_.data() != nullptr ? out_.data() + produced_ : &dummy;
    size_t src = in->size();
    LZ4F_decompressOptions_t dopts{};
    dopts.skipChecksums = o_.verify_lz4_checksums ? 0 : 1;
    size_t r = LZ4F_decompress(ctx_->dctx, out, &dst, in->empty() ? &dummy : in->data(), &src, &dopts);
    if (LZ4F_isError(r)) {
      if (LZ4F_getErrorCode(r) == LZ4F_ERROR_allocation_failed) {
        return Status::OutOfMemory(Label() + ": LZ4 frame buffers refused by pool " + o_.pool->path() + " (held " +
                                   Bytes(o_.pool->held_bytes()) + ", limit " + Bytes(o_.pool->limit_bytes()) + ")");
      }
      return Status::Invalid(Label() + ": corrupt LZ4 data in frame " + std::to_string(frames_ - 1) + ": " +
                             LZ4F_getErrorName(r));
    }
    produced_ += static_cast<int64_t>(dst);
    *in = in->subspan(src);
    if (r == 0) in_frame_ = false;
    *progress = dst > 0 || src > 0 || r == 0;
    return Status::OK();
  }

  Result<std::shared_ptr<Buffer>> FinishImpl() {
    if (o_.compressed_length >= 0 && received_ != o_.compressed_length) {
      return Status::Invalid(Label() + ": body cut short: expected " + Bytes(o_.compressed_length) + ", actual " +
                             Bytes(received_));
    }
    if (!Streaming()) {
      // heap / mmap-after: decompress the held body now, then drop it.
      QUIVER_RETURN_NOT_OK(Decompress({held_.data, static_cast<size_t>(held_used_)}));
      FreeHeld();
    }
    if (o_.lz4) {
      // Flush output LZ4F still holds (the output was full at the last call).
      while (in_frame_) {
        std::span<const uint8_t> none;
        bool progress = false;
        QUIVER_RETURN_NOT_OK(Step(&none, &progress));
        if (!in_frame_ || progress) continue;
        if (produced_ < Usable() || (Exact() && produced_ >= o_.expected_bytes)) {
          return Status::Invalid(Label() + ": truncated LZ4 frame " + std::to_string(frames_ - 1) + " after " +
                                 Bytes(received_) + " (" + Bytes(produced_) + " decompressed)");
        }
        QUIVER_RETURN_NOT_OK(Room(InitialHint()));
      }
      if (hdr_len_ > 0 || skip_left_ > 0) {
        return Status::Invalid(Label() + ": truncated LZ4 frame header at the end (" + std::to_string(hdr_len_) +
                               " bytes)");
      }
      if (frames_ == 0 && received_ > 0) {
        return Status::Invalid(Label() + ": no LZ4 frame in " + Bytes(received_));
      }
    }
    if (Exact() && produced_ != o_.expected_bytes) {
      return Status::Invalid(Label() + ": decompressed size differs from bytesNum: expected " +
                             Bytes(o_.expected_bytes) + ", actual " + Bytes(produced_));
    }
    return out_.Release(produced_);
  }

  ChunkDecoderOptions o_;
  OutputRegion out_;
  Lz4ContextCache::ContextPtr ctx_;  // the LZ4F context (null after a failure or once given back)
  PoolAllocation held_;
  int64_t held_used_ = 0;
  int64_t received_ = 0;
  int64_t produced_ = 0;
  bool in_frame_ = false;
  uint8_t hdr_[LZ4F_HEADER_SIZE_MAX] = {};
  size_t hdr_len_ = 0;
  size_t hdr_size_ = 0;
  int64_t frames_ = 0;
  int64_t skip_left_ = 0;  // bytes of a skippable frame still to skip
  Status error_;
};

}  // namespace

MappingStats GetMappingStats() {
  MappingStats s;
  s.live_mappings = g_live_mappings.load();
  s.mapped_bytes = g_mapped_bytes.load();
  s.peak_mapped_bytes = g_peak_mapped_bytes.load();
  s.heap_fallbacks = g_heap_fallbacks.load();
  s.mremap_grows = g_mremap_grows.load();
  s.tail_trims = g_tail_trims.load();
  return s;
}

void ResetMappingPeak() { g_peak_mapped_bytes.store(g_mapped_bytes.load()); }

int64_t SystemMaxMapCount() {
  static const int64_t value = [] {
    std::ifstream f("/proc/sys/vm/max_map_count");
    int64_t v = 0;
    if (f >> v && v > 0) return v;
    return int64_t{65530};
  }();
  return value;
}

Result<std::unique_ptr<ChunkDecoder>> ChunkDecoder::Make(ChunkDecoderOptions options) {
  if (options.pool == nullptr) return Status::Invalid("ChunkDecoder: pool is required");
  if (options.max_expansion_ratio < 1) options.max_expansion_ratio = 1;
  if (!options.bytes_num_is_exact) {
    // A hint only seeds the first guess: an absurd one is clamped, not refused.
    options.expected_bytes = std::min(options.expected_bytes, options.max_decompressed_bytes);
  }
  if (options.expected_bytes > options.max_decompressed_bytes) {
    return Status::Invalid(options.chunk_label + ": bytesNum " + Bytes(options.expected_bytes) +
                           " exceeds the limit of " + Bytes(options.max_decompressed_bytes));
  }
  if (options.compressed_length >= 0 && options.expected_bytes > 0 && options.bytes_num_is_exact) {
    int64_t bound = 0;
    const int64_t ratio = options.lz4 ? options.max_expansion_ratio : 1;
    const int64_t slack = options.lz4 ? int64_t{64} << 10 : 0;
    if (CheckedMul(options.compressed_length, ratio, &bound) && CheckedAdd(bound, slack, &bound) &&
        options.expected_bytes > bound) {
      return Status::Invalid(options.chunk_label + ": bytesNum " + Bytes(options.expected_bytes) + " is more than " +
                             Bytes(options.compressed_length) +
                             (options.lz4 ? " of LZ4 data can produce" : " of uncompressed data hold"));
    }
  }
  auto d = std::make_unique<ChunkDecoderImpl>(std::move(options));
  QUIVER_RETURN_NOT_OK(d->Init());
  return std::unique_ptr<ChunkDecoder>(std::move(d));
}

Result<std::shared_ptr<Buffer>> DecodeChunk(std::span<const uint8_t> body, ChunkDecoderOptions options) {
  if (options.compressed_length < 0) options.compressed_length = static_cast<int64_t>(body.size());
  QUIVER_ASSIGN_OR_RETURN(auto d, ChunkDecoder::Make(std::move(options)));
  QUIVER_RETURN_NOT_OK(d->Consume(body));
  return d->Finish();
}

}  // namespace quiver::fetch
