// One contract suite run over every allocator kind, plus the proof that
// `system` really is glibc malloc (neither jemalloc nor mimalloc interposes).
#include "quiver/memory/allocator.h"
#include "quiver/testing/sanitizers.h"
#include "quiver/testing/status_assertions.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace quiver {
namespace {

// AddressSanitizer replaces malloc itself (and aborts on impossible sizes),
// so the tests about glibc's heap do not apply under it.
constexpr bool kMallocIsSanitized = testing::kAddressSanitizer;

constexpr AllocatorKind kAllKinds[] = {AllocatorKind::kSystem, AllocatorKind::kJemalloc, AllocatorKind::kMimalloc,
                                       AllocatorKind::kMmap};

void Fill(uint8_t* p, int64_t n, uint8_t seed) {
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(seed + i * 31);
}

::testing::AssertionResult Holds(const uint8_t* p, int64_t n, uint8_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<uint8_t>(seed + i * 31)) {
      return ::testing::AssertionFailure() << "byte " << i << " of " << n << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

class AllocatorContractTest : public ::testing::TestWithParam<AllocatorKind> {
 protected:
  void SetUp() override {
    Result<Allocator*> allocator = GetAllocator(GetParam());
    ASSERT_OK(allocator);
    allocator_ = *allocator;
  }
  Allocator* allocator_ = nullptr;
};

TEST_P(AllocatorContractTest, KindAndName) {
  EXPECT_EQ(allocator_->kind(), GetParam());
  EXPECT_EQ(allocator_->name(), AllocatorKindName(GetParam()));
  Result<Allocator*> again = GetAllocator(GetParam());
  ASSERT_OK(again);
  EXPECT_EQ(*again, allocator_) << "GetAllocator returns the process-wide instance";
}

TEST_P(AllocatorContractTest, AllocateFreeSizesAndAlignments) {
  const int64_t sizes[] = {1, 7, 8, 63, 64, 100, 4095, 4096, 4097, 65536, 1 << 20, (3 << 20) + 5};
  const int64_t alignments[] = {8, 16, 64, 256, 4096};
  for (int64_t size : sizes) {
    for (int64_t alignment : alignments) {
      SCOPED_TRACE("size " + std::to_string(size) + " alignment " + std::to_string(alignment));
      uint8_t* p = allocator_->Allocate(size, alignment);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(alignment), 0u);
      Fill(p, size, static_cast<uint8_t>(size));
      EXPECT_TRUE(Holds(p, size, static_cast<uint8_t>(size)));
      allocator_->Free(p, size, alignment);
    }
  }
}

TEST_P(AllocatorContractTest, RejectsInvalidRequestsWithNull) {
  EXPECT_EQ(allocator_->Allocate(0, 64), nullptr);
  EXPECT_EQ(allocator_->Allocate(-5, 64), nullptr);
  EXPECT_EQ(allocator_->Allocate(64, 3), nullptr);
  EXPECT_EQ(allocator_->Allocate(64, 4), nullptr);
  EXPECT_EQ(allocator_->Allocate(64, 8192), nullptr);
}

TEST_P(AllocatorContractTest, HugeRequestFailsWithoutAborting) {
  if (kMallocIsSanitized && GetParam() == AllocatorKind::kSystem) GTEST_SKIP();
  EXPECT_EQ(allocator_->Allocate(int64_t{1} << 62, 64), nullptr);
}

TEST_P(AllocatorContractTest, ShrinkInPlaceKeepsAddressAndData) {
  struct Case {
    int64_t old_size, new_size;
  };
  for (Case c : {Case{100, 97}, Case{4096, 100}, Case{4 << 20, 1 << 20}, Case{(4 << 20) + 3, 5000}}) {
    SCOPED_TRACE(std::to_string(c.old_size) + " -> " + std::to_string(c.new_size));
    uint8_t* p = allocator_->Allocate(c.old_size, 64);
    ASSERT_NE(p, nullptr);
    Fill(p, c.old_size, 7);
    if (allocator_->ShrinkInPlace(p, c.old_size, c.new_size, 64)) {
      EXPECT_TRUE(Holds(p, c.new_size, 7));
      allocator_->Free(p, c.new_size, 64);
    } else {
      EXPECT_TRUE(Holds(p, c.old_size, 7)) << "a refused shrink leaves the block unchanged";
      allocator_->Free(p, c.old_size, 64);
    }
  }
}

TEST_P(AllocatorContractTest, ShrinkInPlaceRefusesNonShrinks) {
  uint8_t* p = allocator_->Allocate(8192, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(allocator_->ShrinkInPlace(p, 8192, 8192, 64));
  EXPECT_FALSE(allocator_->ShrinkInPlace(p, 8192, 9000, 64));
  EXPECT_FALSE(allocator_->ShrinkInPlace(p, 8192, 0, 64));
  allocator_->Free(p, 8192, 64);
}

// Which kinds shrink large blocks in place is part of their contract.
TEST_P(AllocatorContractTest, LargeShrinkInPlaceWhereSupported) {
  const int64_t old_size = 8 << 20;
  const int64_t new_size = (1 << 20) + 10;
  uint8_t* p = allocator_->Allocate(old_size, 64);
  ASSERT_NE(p, nullptr);
  const int64_t reserved_before = allocator_->reserved_bytes();
  const bool shrunk = allocator_->ShrinkInPlace(p, old_size, new_size, 64);
  switch (GetParam()) {
    case AllocatorKind::kJemalloc:
    case AllocatorKind::kSystem:  // both sizes are past kSystemMapBlockBytes: mapped blocks
    case AllocatorKind::kMmap: EXPECT_TRUE(shrunk); break;
    case AllocatorKind::kMimalloc:
      EXPECT_FALSE(shrunk);  // mimalloc would keep the slack
      break;
  }
  if (GetParam() == AllocatorKind::kMmap) {
    EXPECT_EQ(reserved_before - allocator_->reserved_bytes(), old_size - ((new_size + 4095) & ~4095));
  }
  if (GetParam() == AllocatorKind::kSystem) {  // mapped by size class: 1 MiB + 64 KiB
    EXPECT_EQ(SystemMappedBlockBytes(new_size), (int64_t{1} << 20) + (64 << 10));
    EXPECT_EQ(reserved_before - allocator_->reserved_bytes(), old_size - SystemMappedBlockBytes(new_size));
  }
  allocator_->Free(p, shrunk ? new_size : old_size, 64);
}

TEST_P(AllocatorContractTest, ReallocateKeepsData) {
  for (int64_t alignment : {int64_t{8}, int64_t{16}, int64_t{64}, int64_t{4096}}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    int64_t size = 100;
    uint8_t* p = allocator_->Allocate(size, alignment);
    ASSERT_NE(p, nullptr);
    Fill(p, size, 3);
    for (int64_t next : {int64_t{5000}, int64_t{3 << 20}, int64_t{9 << 20}, int64_t{70000}, int64_t{50}}) {
      uint8_t* q = allocator_->Reallocate(p, size, next, alignment);
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % static_cast<uintptr_t>(alignment), 0u);
      EXPECT_TRUE(Holds(q, std::min(size, next), 3));
      Fill(q, next, 3);
      p = q;
      size = next;
    }
    allocator_->Free(p, size, alignment);
  }
}

TEST_P(AllocatorContractTest, ReservedBytes) {
  if (GetParam() == AllocatorKind::kMmap) {
    const int64_t reserved = allocator_->reserved_bytes();
    uint8_t* p = allocator_->Allocate(10000, 64);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(allocator_->reserved_bytes() - reserved, 12288);
    allocator_->Free(p, 10000, 64);
    EXPECT_EQ(allocator_->reserved_bytes(), reserved);
  } else if (!(kMallocIsSanitized && GetParam() == AllocatorKind::kSystem)) {
    // In a fresh process an allocator may not have reserved anything yet
    // (mimalloc commits lazily): hold a block while asking.
    uint8_t* p = allocator_->Allocate(1 << 20, 64);
    ASSERT_NE(p, nullptr);
    EXPECT_GT(allocator_->reserved_bytes(), 0) << "system, jemalloc and mimalloc all report their reservation";
    allocator_->Free(p, 1 << 20, 64);
  }
}

TEST_P(AllocatorContractTest, ThreadSafe) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::pair<uint8_t*, int64_t>> live;
      for (int i = 0; i < 500; ++i) {
        const int64_t size = 1 + (i * 7919 + t * 104729) % 20000;
        uint8_t* p = allocator_->Allocate(size, 64);
        if (p == nullptr) {
          failures++;
          continue;
        }
        Fill(p, size, static_cast<uint8_t>(t));
        live.emplace_back(p, size);
        if (live.size() > 8) {
          if (!Holds(live.front().first, live.front().second, static_cast<uint8_t>(t))) failures++;
          allocator_->Free(live.front().first, live.front().second, 64);
          live.erase(live.begin());
        }
      }
      for (auto [p, size] : live) allocator_->Free(p, size, 64);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, AllocatorContractTest, ::testing::ValuesIn(kAllKinds),
                         [](const auto& info) { return std::string(AllocatorKindName(info.param)); });

TEST(AllocatorKindTest, NamesRoundTrip) {
  for (AllocatorKind kind : kAllKinds) {
    Result<AllocatorKind> parsed = ParseAllocatorKind(AllocatorKindName(kind));
    ASSERT_OK(parsed);
    EXPECT_EQ(*parsed, kind);
  }
  Result<AllocatorKind> bad = ParseAllocatorKind("tcmalloc");
  ASSERT_RAISES(Invalid, bad);
  EXPECT_EQ(bad.status().message(), "unknown allocator 'tcmalloc' (expected system, jemalloc, mimalloc or mmap)");
}

TEST(AllocatorKindTest, FromEnvironment) {
  ASSERT_EQ(unsetenv("QUIVER_ALLOCATOR"), 0);
  Result<AllocatorKind> kind = AllocatorKindFromEnvironment();
  ASSERT_OK(kind);
  EXPECT_EQ(*kind, AllocatorKind::kSystem);

  ASSERT_EQ(setenv("QUIVER_ALLOCATOR", "jemalloc", 1), 0);
  kind = AllocatorKindFromEnvironment();
  ASSERT_OK(kind);
  EXPECT_EQ(*kind, AllocatorKind::kJemalloc);

  ASSERT_EQ(setenv("QUIVER_ALLOCATOR", "nope", 1), 0);
  kind = AllocatorKindFromEnvironment();
  ASSERT_RAISES(Invalid, kind);
  EXPECT_NE(kind.status().message().find("QUIVER_ALLOCATOR: unknown allocator 'nope'"), std::string::npos);
  ASSERT_EQ(unsetenv("QUIVER_ALLOCATOR"), 0);
}

// ---- `system` is glibc, and the other allocators never use glibc's heap ----

void* LibcSymbol(const char* name) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) return nullptr;
  void* sym = dlsym(libc, name);
  dlclose(libc);
  return sym;
}

int64_t GlibcHeapInUse() {
  struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

TEST(SystemIsGlibcTest, MallocSymbolsResolveToLibc) {
  if (kMallocIsSanitized) GTEST_SKIP() << "ASan interposes malloc";
  // Load every allocator first: neither jemalloc nor mimalloc may take over.
  for (AllocatorKind kind : kAllKinds) ASSERT_OK(GetAllocator(kind));
  for (const char* name : {"malloc", "free", "realloc", "calloc", "posix_memalign"}) {
    SCOPED_TRACE(name);
    void* libc = LibcSymbol(name);
    ASSERT_NE(libc, nullptr);
    EXPECT_EQ(dlsym(RTLD_DEFAULT, name), libc);
  }
}

TEST(SystemIsGlibcTest, OnlySystemAllocationsShowInGlibcHeap) {
  if (kMallocIsSanitized) GTEST_SKIP() << "ASan interposes malloc";
  for (AllocatorKind kind : kAllKinds) ASSERT_OK(GetAllocator(kind));
  const int64_t size = 768 << 10;  // under kSystemMapBlockBytes: glibc's
  static_assert(768 << 10 < kSystemMapBlockBytes);
  for (AllocatorKind kind : kAllKinds) {
    SCOPED_TRACE(std::string(AllocatorKindName(kind)));
    Allocator* allocator = *GetAllocator(kind);
    const int64_t before = GlibcHeapInUse();
    uint8_t* p = allocator->Allocate(size, 64);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, static_cast<size_t>(size));
    const int64_t growth = GlibcHeapInUse() - before;
    allocator->Free(p, size, 64);
    if (kind == AllocatorKind::kSystem) {
      EXPECT_GE(growth, size);
      EXPECT_LT(growth, size + (1 << 20));
    } else {
      EXPECT_LT(growth, 128 << 10) << "the " << allocator->name() << " allocator must not take bytes from glibc";
    }
  }
}

int64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long pages = 0, resident = 0;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE) : -1;
}

// Issue 19: the system allocator's large blocks go back to the OS without
// glibc keeping them. glibc alone raises its mmap threshold to the size of
// a freed mapped block, so the same blocks afterwards come from its heap
// and, freed below a live block, stay resident (64 MiB here) until
// malloc_trim; quiver's system allocator maps them itself, keeps at most
// 256 MiB of them for the next statement, and ReleaseFreeMemory unmaps
// those.
TEST(SystemIsGlibcTest, LargeBlocksGoBackToTheOsWhenReleased) {
  if (kMallocIsSanitized) GTEST_SKIP() << "ASan interposes malloc";
  Allocator* system = *GetAllocator(AllocatorKind::kSystem);
  system->ReleaseFreeMemory();
  const int64_t size = 4 << 20;
  uint8_t* first = system->Allocate(size, 64);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, static_cast<size_t>(size));
  system->Free(first, size, 64);  // glibc would raise its threshold to 4 MiB here
  std::vector<uint8_t*> blocks;
  for (int i = 0; i < 16; ++i) {
    uint8_t* p = system->Allocate(size, 64);
    ASSERT_NE(p, nullptr);
    std::memset(p, 2, static_cast<size_t>(size));
    blocks.push_back(p);
  }
  uint8_t* pin = system->Allocate(4096, 64);  // a live block above them
  ASSERT_NE(pin, nullptr);
  const int64_t held = ResidentBytes();
  for (uint8_t* p : blocks) system->Free(p, size, 64);
  const int64_t kept = ResidentBytes();
  system->ReleaseFreeMemory();
  const int64_t after = ResidentBytes();
  system->Free(pin, 4096, 64);
  ASSERT_GT(held, 0);
  EXPECT_GE(kept, held - (int64_t{8} << 20)) << "freed mappings are kept for reuse: RSS " << held << " -> " << kept;
  EXPECT_GE(held - after, int64_t{56} << 20) << "RSS held " << held << " after release " << after;
}

// Freed mappings (from 1 MiB) are kept (at most 64 of them, 256 MiB) and
// handed, already resident, to the next request of the same page-rounded
// size, or of at least half a kept block's size (its tail is unmapped): a
// statement's batches, relations and aggregate tables cost no page faults
// when the previous statement's pages can be had. The oldest make room for
// new ones; ReleaseFreeMemory unmaps them all.
TEST(SystemIsGlibcTest, MappingsAreReusedUntilReleased) {
  Allocator* system = *GetAllocator(AllocatorKind::kSystem);
  system->ReleaseFreeMemory();
  const int64_t base = system->reserved_bytes();
  const int64_t size = (1 << 20) + 100;  // 257 pages
  uint8_t* a = system->Allocate(size, 64);
  ASSERT_NE(a, nullptr);
  std::memset(a, 3, static_cast<size_t>(size));
  system->Free(a, size, 64);
  uint8_t* b = system->Allocate(size, 64);
  EXPECT_EQ(b, a) << "the same size takes the kept mapping";
  ASSERT_NE(b, nullptr);
  std::memset(b, 4, static_cast<size_t>(size));    // writable, and ours alone
  uint8_t* c = system->Allocate(size + 8192, 64);  // nothing kept: a new mapping
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, b);
  system->Free(b, size, 64);
  system->Free(c, size + 8192, 64);
  EXPECT_GE(system->reserved_bytes() - base, 2 * size) << "both kept";
  system->ReleaseFreeMemory();
  EXPECT_LT(system->reserved_bytes() - base, int64_t{1} << 20) << "every kept mapping unmapped";

  // A smaller request takes a kept block of at most twice its size, whose
  // tail goes back; a request under half of every kept block maps anew.
  const int64_t big = 6 << 20;
  uint8_t* d = system->Allocate(big, 64);
  ASSERT_NE(d, nullptr);
  std::memset(d, 5, static_cast<size_t>(big));
  system->Free(d, big, 64);
  uint8_t* tiny = system->Allocate(2 << 20, 64);  // 2 MiB < 6 MiB / 2
  ASSERT_NE(tiny, nullptr);
  EXPECT_NE(tiny, d);
  uint8_t* e = system->Allocate(4 << 20, 64);  // 4 MiB >= 6 MiB / 2
  EXPECT_EQ(e, d) << "the kept 6 MiB block serves a 4 MiB request";
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e[(4 << 20) - 1], 5) << "already resident: the old bytes are there";
  EXPECT_LT(system->reserved_bytes() - base, int64_t{7} << 20) << "the 2 MiB tail was unmapped";
  system->Free(e, 4 << 20, 64);
  system->Free(tiny, 2 << 20, 64);

  // 80 blocks of 1 MiB freed: at most 64 stay.
  system->ReleaseFreeMemory();
  std::vector<uint8_t*> blocks;
  for (int i = 0; i < 80; ++i) blocks.push_back(system->Allocate(1 << 20, 64));
  for (uint8_t* p : blocks) {
    ASSERT_NE(p, nullptr);
    system->Free(p, 1 << 20, 64);
  }
  // (reserved_bytes also counts glibc's arenas: up to 1 MiB of slack)
  EXPECT_LE(system->reserved_bytes() - base, int64_t{65} << 20);
  EXPECT_GE(system->reserved_bytes() - base, int64_t{63} << 20);
  // A full cache makes room for a size asked for now: the oldest go.
  const int64_t other = 3 << 20;
  uint8_t* f = system->Allocate(other, 64);
  ASSERT_NE(f, nullptr);
  system->Free(f, other, 64);
  EXPECT_LE(system->reserved_bytes() - base, int64_t{68} << 20);
  EXPECT_EQ(system->Allocate(other, 64), f) << "kept although the cache was full";
  system->Free(f, other, 64);
  // A block larger than the whole cache is unmapped at once.
  system->ReleaseFreeMemory();
  const int64_t huge = int64_t{300} << 20;
  uint8_t* g = system->Allocate(huge, 64);
  ASSERT_NE(g, nullptr);
  system->Free(g, huge, 64);
  EXPECT_LT(system->reserved_bytes() - base, int64_t{1} << 20) << "a 300 MiB block is not kept";
  system->ReleaseFreeMemory();
  EXPECT_LT(system->reserved_bytes() - base, int64_t{1} << 20) << "every kept mapping unmapped";
}

// Blocks a few KiB apart share a size class: a freed one's mapping (its
// pages resident) serves the next, as a column chunk's pages and
// dictionaries ask (1 MiB +- a few KiB each); shrinking within a class
// unmaps nothing.
TEST(SystemIsGlibcTest, NearlyEqualSizesShareAKeptMapping) {
  EXPECT_EQ(SystemMappedBlockBytes(int64_t{1} << 20), int64_t{1} << 20);
  EXPECT_EQ(SystemMappedBlockBytes((int64_t{1} << 20) + 1), (int64_t{1} << 20) + (64 << 10));
  EXPECT_EQ(SystemMappedBlockBytes((int64_t{9} << 20) + 1), (int64_t{9} << 20) + (512 << 10));
  EXPECT_EQ(SystemMappedBlockBytes(int64_t{300} << 20), int64_t{304} << 20);
  EXPECT_EQ(SystemMappedBlockBytes(INT64_MAX), -1);
  EXPECT_EQ(SystemMappedBlockBytes(0), -1);
  Allocator* system = *GetAllocator(AllocatorKind::kSystem);
  system->ReleaseFreeMemory();
  const int64_t page = (int64_t{1} << 20) + 3000;
  uint8_t* a = system->Allocate(page, 64);
  ASSERT_NE(a, nullptr);
  std::memset(a, 7, static_cast<size_t>(page));
  system->Free(a, page, 64);
  const int64_t next = (int64_t{1} << 20) + 40000;  // 37 KiB more, the same class
  uint8_t* b = system->Allocate(next, 64);
  EXPECT_EQ(b, a) << "the kept mapping of the class";
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b[next - 1], 0) << "the class's tail pages are mapped, zero until used";
  EXPECT_EQ(b[page - 1], 7) << "resident from the first block";
  const int64_t reserved = system->reserved_bytes();
  EXPECT_TRUE(system->ShrinkInPlace(b, next, page, 64));
  EXPECT_EQ(system->reserved_bytes(), reserved) << "within a class nothing is unmapped";
  system->Free(b, page, 64);
  system->ReleaseFreeMemory();
}

// Kept mappings that nobody asked for in 2 s go back at the next mapped
// allocation, without a ReleaseFreeMemory.
TEST(SystemIsGlibcTest, IdleMappingsGoBackAtTheNextAllocation) {
  Allocator* system = *GetAllocator(AllocatorKind::kSystem);
  system->ReleaseFreeMemory();
  const int64_t base = system->reserved_bytes();
  std::vector<uint8_t*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(system->Allocate(2 << 20, 64));
  for (uint8_t* p : blocks) {
    ASSERT_NE(p, nullptr);
    system->Free(p, 2 << 20, 64);
  }
  EXPECT_GE(system->reserved_bytes() - base, int64_t{16} << 20) << "kept";
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  uint8_t* p = system->Allocate(3 << 20, 64);  // no kept block fits; the idle ones go
  ASSERT_NE(p, nullptr);
  EXPECT_LT(system->reserved_bytes() - base, int64_t{4} << 20) << "only the new block is mapped";
  system->Free(p, 3 << 20, 64);
  system->ReleaseFreeMemory();
}

// The tool's malloc settings (ConfigureProcessMalloc) are accepted by glibc.
TEST(SystemIsGlibcTest, ProcessMallocSettingsAreAccepted) {
  if (kMallocIsSanitized) GTEST_SKIP() << "the sanitizer's malloc ignores mallopt";
  EXPECT_TRUE(ConfigureProcessMalloc());
}

}  // namespace
}  // namespace quiver
