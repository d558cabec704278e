#include "quiver/memory/memory_pool.h"
#include "quiver/testing/status_assertions.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace quiver {
namespace {

std::shared_ptr<MemoryPool> Root(int64_t limit_bytes = -1, RoundingPolicy rounding = RoundingPolicy::kExact,
                                 Allocator* allocator = nullptr) {
  MemoryPoolOptions options;
  options.limit_bytes = limit_bytes;
  options.rounding = rounding;
  options.allocator = allocator;
  return MemoryPool::MakeRoot(options);
}

MemoryPoolOptions Named(std::string name, int64_t limit_bytes = -1) {
  MemoryPoolOptions options;
  options.name = std::move(name);
  options.limit_bytes = limit_bytes;
  return options;
}

// A system-backed allocator that refuses every allocation from the
// `fail_from`-th on (1-based), and counts calls.
class FailingAllocator final : public Allocator {
 public:
  explicit FailingAllocator(int64_t fail_from) : fail_from_(fail_from) {}
  AllocatorKind kind() const noexcept override { return AllocatorKind::kSystem; }
  uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept override {
    if (++calls_ >= fail_from_) return nullptr;
    return system_->Allocate(size_bytes, alignment);
  }
  void Free(uint8_t* ptr, int64_t size_bytes, int64_t alignment) noexcept override {
    ++frees_;
    system_->Free(ptr, size_bytes, alignment);
  }
  int64_t calls() const { return calls_; }
  int64_t frees() const { return frees_; }

 private:
  Allocator* system_ = *GetAllocator(AllocatorKind::kSystem);
  int64_t fail_from_;
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> frees_{0};
};

TEST(GrantedBytesTest, Policies) {
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kExact, 1000), 1000);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 0), 0);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 1), 1);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 1000), 1024);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 1024), 1024);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 1025), 2048);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, (16 << 20) - 1), 16 << 20);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 16 << 20), 16 << 20);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, 17 << 20), 17 << 20);
  EXPECT_EQ(GrantedBytes(RoundingPolicy::kPowerOfTwo, INT64_MAX), INT64_MAX);
}

TEST(MemoryPoolTest, AllocateChargesAndFreeReleases) {
  auto pool = Root();
  Result<PoolAllocation> a = pool->Allocate(1000, 64);
  ASSERT_OK(a);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data) % 64, 0u);
  EXPECT_EQ(a->requested_bytes, 1000);
  EXPECT_EQ(a->granted_bytes, 1000);
  std::memset(a->data, 0xab, 1000);
  EXPECT_EQ(pool->held_bytes(), 1000);
  pool->Free(*a);
  EXPECT_EQ(pool->held_bytes(), 0);
  MemoryPoolStats s = pool->stats();
  EXPECT_EQ(s.peak_bytes, 1000);
  EXPECT_EQ(s.num_allocations, 1);
  EXPECT_EQ(s.total_allocated_bytes, 1000);
  EXPECT_EQ(s.live_allocations, 0);
  EXPECT_EQ(s.failed_allocations, 0);
  pool->ResetPeak();
  EXPECT_EQ(pool->peak_bytes(), 0);
  EXPECT_OK(pool->Close());
}

TEST(MemoryPoolTest, ZeroByteAllocationIsStaticAndFree) {
  auto pool = Root(0);
  for (int64_t alignment : {8, 64, 4096}) {
    Result<PoolAllocation> a = pool->Allocate(0, alignment);
    ASSERT_OK(a);
    EXPECT_NE(a->data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data) % static_cast<uintptr_t>(alignment), 0u);
    EXPECT_EQ(a->granted_bytes, 0);
    pool->Free(*a);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  EXPECT_EQ(pool->stats().num_allocations, 0);
}

TEST(MemoryPoolTest, RejectsBadArguments) {
  auto pool = Root();
  EXPECT_TRUE(pool->Allocate(-1).status().IsInvalid());
  EXPECT_TRUE(pool->Allocate(64, 3).status().IsInvalid());
  EXPECT_TRUE(pool->Allocate(64, 8192).status().IsInvalid());
  EXPECT_TRUE(pool->Reserve(-1).IsInvalid());
}

TEST(MemoryPoolTest, LimitOutOfMemoryText) {
  auto root = Root(268435456);
  auto child = root->MakeChild(Named("ipc-read"));
  EXPECT_EQ(child->path(), "root/ipc-read");
  ASSERT_OK(root->Reserve(268000000));
  Result<PoolAllocation> a = child->Allocate(1048576);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().ToString(),
            "OutOfMemory: cannot allocate 1048576 bytes in pool 'root': held 268000000 of limit "
            "268435456 bytes (requested in 'root/ipc-read')");
  root->Unreserve(268000000);

  auto limited = root->MakeChild(Named("ipc-write", 1000));
  Result<PoolAllocation> b = limited->Allocate(600);
  ASSERT_OK(b);
  Result<PoolAllocation> c = limited->Allocate(500);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().ToString(),
            "OutOfMemory: cannot allocate 500 bytes in pool 'root/ipc-write': held 600 of limit "
            "1000 bytes");
  EXPECT_EQ(limited->stats().failed_allocations, 1);
  EXPECT_EQ(limited->held_bytes(), 600);
  EXPECT_EQ(root->held_bytes(), 600);
  limited->Free(*b);
}

TEST(MemoryPoolTest, AvailableBytesIsTheLeastRoomUpToTheRoot) {
  auto root = MemoryPool::MakeRoot({"root", 1000});
  auto mid = root->MakeChild({"mid"});  // no limit of its own
  auto leaf = mid->MakeChild({"leaf", 600});
  EXPECT_EQ(leaf->AvailableBytes(), 600);
  EXPECT_EQ(mid->AvailableBytes(), 1000);
  auto other = mid->MakeChild({"other"});
  auto a = other->Allocate(500);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(leaf->AvailableBytes(), 1000 - a->granted_bytes);  // the root is now tighter
  EXPECT_EQ(MemoryPool::MakeRoot({"free"})->AvailableBytes(), -1);
  other->Free(*a);
  EXPECT_EQ(leaf->AvailableBytes(), 600);
}

TEST(MemoryPoolTest, OutOfMemoryErrorNamesTheTightestPool) {
  auto root = MemoryPool::MakeRoot({"root", 1000});
  auto leaf = root->MakeChild({"leaf", 600});
  ASSERT_TRUE(leaf->Reserve(100).ok());
  Status st = leaf->OutOfMemoryError("a page", 4096);
  EXPECT_TRUE(st.IsOutOfMemory());
  EXPECT_EQ(st.message(),
            "a page needs 4096 bytes but pool 'root/leaf' has 500 bytes available (held 100 of limit 600)");
  Status none = MemoryPool::MakeRoot({"free"})->OutOfMemoryError("a page", 8);
  EXPECT_EQ(none.message(), "a page needs 8 bytes but the pool refused them (no limit set: the byte count overflowed)");
  leaf->Unreserve(100);
}

TEST(MemoryPoolTest, TreeChargingAndAncestorRollback) {
  auto root = Root(10000);
  auto mid = root->MakeChild(Named("mid", 5000));
  auto leaf = mid->MakeChild(Named("leaf"));
  EXPECT_EQ(leaf->path(), "root/mid/leaf");
  EXPECT_EQ(leaf->parent(), mid.get());
  EXPECT_EQ(leaf->allocator(), root->allocator());

  Result<PoolAllocation> a = leaf->Allocate(3000);
  ASSERT_OK(a);
  EXPECT_EQ(leaf->held_bytes(), 3000);
  EXPECT_EQ(mid->held_bytes(), 3000);
  EXPECT_EQ(root->held_bytes(), 3000);
  EXPECT_EQ(root->stats().num_allocations, 1);
  EXPECT_EQ(root->stats().live_allocations, 1);

  // mid's limit stops the request: leaf's charge is rolled back.
  Result<PoolAllocation> b = leaf->Allocate(2500);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("in pool 'root/mid': held 3000 of limit 5000 bytes"), std::string::npos)
      << b.status().ToString();
  EXPECT_EQ(leaf->held_bytes(), 3000);
  EXPECT_EQ(mid->held_bytes(), 3000);
  EXPECT_EQ(root->held_bytes(), 3000);

  // root's limit stops a sibling after charging it.
  auto other = root->MakeChild(Named("other"));
  ASSERT_OK(root->Reserve(6000));
  Result<PoolAllocation> c = other->Allocate(2000);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(other->held_bytes(), 0);
  EXPECT_EQ(root->held_bytes(), 9000);
  root->Unreserve(6000);

  leaf->Free(*a);
  EXPECT_EQ(leaf->held_bytes(), 0);
  EXPECT_EQ(mid->held_bytes(), 0);
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(root->peak_bytes(), 9000);
}

TEST(MemoryPoolTest, AllocatorFailureRollsBack) {
  FailingAllocator failing(/*fail_from=*/2);
  auto root = Root(1 << 20, RoundingPolicy::kExact, &failing);
  auto child = root->MakeChild(Named("child"));
  Result<PoolAllocation> a = child->Allocate(100);
  ASSERT_OK(a);
  Result<PoolAllocation> b = child->Allocate(200);
  ASSERT_RAISES(OutOfMemory, b);
  EXPECT_EQ(b.status().message(),
            "cannot allocate 200 bytes in pool 'root/child': the system allocator returned no "
            "memory (200 bytes, alignment 64)");
  EXPECT_EQ(child->held_bytes(), 100);
  EXPECT_EQ(root->held_bytes(), 100);
  EXPECT_EQ(root->stats().failed_allocations, 1);
  EXPECT_EQ(child->stats().num_allocations, 1);
  child->Free(*a);
  EXPECT_EQ(failing.frees(), 1);
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST(MemoryPoolTest, ConcurrentAllocationNeverPassesTheLimit) {
  constexpr int64_t kLimit = 24 << 10;
  auto root = Root(kLimit);
  std::atomic<bool> over_limit{false};
  std::atomic<int64_t> successes{0};
  std::atomic<int64_t> failures{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    auto child = root->MakeChild(Named("worker" + std::to_string(t)));
    threads.emplace_back([&, child, t] {
      ready++;
      while (ready.load() < 4) std::this_thread::yield();  // start together
      std::vector<PoolAllocation> live;
      for (int i = 0; i < 3000; ++i) {
        const int64_t size = 1 + (i * 7919 + t * 104729) % 9000;
        Result<PoolAllocation> a = child->Allocate(size);
        if (root->held_bytes() > kLimit) over_limit = true;
        if (a.ok()) {
          successes++;
          live.push_back(*a);
        } else {
          failures++;
        }
        if (live.size() > 5 || !a.ok()) {
          if (!live.empty()) {
            child->Free(live.front());
            live.erase(live.begin());
          }
        }
      }
      for (const PoolAllocation& a : live) child->Free(a);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(over_limit.load());
  EXPECT_LE(root->peak_bytes(), kLimit);
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_GT(successes.load(), 0);
  EXPECT_GT(failures.load(), 0) << "the workload should push against the limit";
  EXPECT_EQ(root->stats().num_allocations, successes.load());
  EXPECT_EQ(root->stats().failed_allocations, failures.load());
}

TEST(MemoryPoolTest, PowerOfTwoRounding) {
  auto pool = Root(-1, RoundingPolicy::kPowerOfTwo);
  Result<PoolAllocation> a = pool->Allocate(1000);
  ASSERT_OK(a);
  EXPECT_EQ(a->requested_bytes, 1000);
  EXPECT_EQ(a->granted_bytes, 1024);
  Result<PoolAllocation> b = pool->Allocate(17 << 20);
  ASSERT_OK(b);
  EXPECT_EQ(b->granted_bytes, 17 << 20);
  MemoryPoolStats s = pool->stats();
  EXPECT_EQ(s.requested_bytes, 1000 + (17 << 20));
  EXPECT_EQ(s.granted_bytes, 1024 + (17 << 20));
  EXPECT_EQ(s.held_bytes, 1024 + (17 << 20));
  pool->Free(*a);
  pool->Free(*b);
  EXPECT_EQ(pool->held_bytes(), 0);

  auto limited = Root(1500, RoundingPolicy::kPowerOfTwo);
  Result<PoolAllocation> c = limited->Allocate(1000);
  ASSERT_OK(c);
  Result<PoolAllocation> d = limited->Allocate(300);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "cannot allocate 300 bytes (512 after rounding) in pool 'root': held 1024 of limit "
            "1500 bytes");
  limited->Free(*c);
}

struct RecordingListener : AllocationListener {
  void OnAllocate(const MemoryPool& pool, int64_t requested, int64_t granted) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("alloc " + pool.path() + " " + std::to_string(requested) + "/" + std::to_string(granted));
  }
  void OnRelease(const MemoryPool& pool, int64_t granted) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("release " + pool.path() + " " + std::to_string(granted));
  }
  void OnFailure(const MemoryPool& pool, int64_t requested, const Status& error) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("failure " + pool.path() + " " + std::to_string(requested) + " " +
                     std::string(StatusCodeName(error.code())));
  }
  void OnReserve(const MemoryPool& pool, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("reserve " + pool.path() + " " + std::to_string(bytes) + " held " +
                     std::to_string(pool.held_bytes()));
  }
  void OnUnreserve(const MemoryPool& pool, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("unreserve " + pool.path() + " " + std::to_string(bytes) + " held " +
                     std::to_string(pool.held_bytes()));
  }
  std::mutex mu;
  std::vector<std::string> events;
};

// Reserve / Unreserve (off-heap pages) are seen by the listeners of the pool
// and its ancestors, after the charge is taken / released; a refused
// reservation is not reported as one.
TEST(MemoryPoolTest, ListenersSeeReservations) {
  auto root = Root(-1, RoundingPolicy::kExact);
  auto child = root->MakeChild(Named("c", 5000));
  auto on_root = std::make_shared<RecordingListener>();
  root->AddListener(on_root);
  ASSERT_TRUE(child->Reserve(4096).ok());
  EXPECT_TRUE(child->Reserve(4096).IsOutOfMemory());
  child->Unreserve(4096);
  EXPECT_EQ(on_root->events,
            (std::vector<std::string>{"reserve root/c 4096 held 4096", "unreserve root/c 4096 held 0"}));
}

TEST(MemoryPoolTest, ListenersSeeTheirPoolAndDescendants) {
  auto root = Root(-1, RoundingPolicy::kPowerOfTwo);
  MemoryPoolOptions child_options = Named("c", 2000);
  child_options.rounding = RoundingPolicy::kPowerOfTwo;  // each pool has its own policy
  auto child = root->MakeChild(child_options);
  auto on_root = std::make_shared<RecordingListener>();
  auto on_child = std::make_shared<RecordingListener>();
  root->AddListener(on_root);
  child->AddListener(on_child);

  Result<PoolAllocation> a = child->Allocate(1000);
  ASSERT_OK(a);
  EXPECT_FALSE(child->Allocate(1500).ok());
  child->Free(*a);
  Result<PoolAllocation> b = root->Allocate(10);
  ASSERT_OK(b);
  root->Free(*b);

  const std::vector<std::string> child_events = {"alloc root/c 1000/1024", "failure root/c 1500 OutOfMemory",
                                                 "release root/c 1024"};
  EXPECT_EQ(on_child->events, child_events);
  const std::vector<std::string> root_events = {"alloc root/c 1000/1024", "failure root/c 1500 OutOfMemory",
                                                "release root/c 1024", "alloc root 10/16", "release root 16"};
  EXPECT_EQ(on_root->events, root_events);
}

// A workload of several allocations across a small tree, released by RAII
// on every path. Returns the first error.
Status Workload(MemoryPool* root) {
  struct Owned {
    // A constructor, not aggregate initialization: make_unique's
    // parenthesized aggregate init is C++20 that clang 14/16 lack.
    Owned(MemoryPool* p, PoolAllocation alloc) : pool(p), a(alloc) {}
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    ~Owned() { pool->Free(a); }
    MemoryPool* pool;
    PoolAllocation a;
  };
  auto child = root->MakeChild(Named("w"));
  std::vector<std::unique_ptr<Owned>> owned;
  for (int i = 0; i < 6; ++i) {
    MemoryPool* pool = i % 2 ? child.get() : root;
    QUIVER_ASSIGN_OR_RETURN(PoolAllocation a, pool->Allocate(100 * (i + 1)));
    owned.push_back(std::make_unique<Owned>(pool, a));
  }
  PoolAllocation grown = owned.back()->a;
  QUIVER_RETURN_NOT_OK(child->Reallocate(&grown, 5000));
  owned.back()->a = grown;
  return Status::OK();
}

// Attempts are counted only while a failure is armed somewhere in the
// process (production allocations skip the shared counters); arming counts
// from zero, also in an armed pool's descendants, and disarming stops it.
TEST(MemoryPoolTest, AttemptsAreCountedWhileAFailureIsArmed) {
  auto root = Root();
  auto child = root->MakeChild({.name = "child"});
  auto allocate_and_free = [&](MemoryPool* pool) {
    auto a = pool->Allocate(100, 64);
    ASSERT_TRUE(a.ok());
    pool->Free(*a);
  };
  allocate_and_free(child.get());
  EXPECT_EQ(root->attempts_since_injection(), 0);
  root->InjectFailureAt(1000);
  allocate_and_free(child.get());
  allocate_and_free(root.get());
  EXPECT_EQ(root->attempts_since_injection(), 2);
  EXPECT_EQ(child->attempts_since_injection(), 1);
  root->InjectFailureAt(0);
  EXPECT_EQ(root->attempts_since_injection(), 0);
  allocate_and_free(child.get());
  EXPECT_EQ(root->attempts_since_injection(), 0) << "nothing armed: nothing counted";
  // A pool destroyed while armed disarms the process.
  {
    auto armed = Root();
    armed->InjectFailureAt(5);
  }
  allocate_and_free(child.get());
  EXPECT_EQ(root->attempts_since_injection(), 0);
}

// Listeners added to a pool see its and its descendants' allocations and
// frees; pools without listeners skip the listener lock.
TEST(MemoryPoolTest, ListenerAddedLaterSeesLaterAllocations) {
  struct Counting : AllocationListener {
    std::atomic<int64_t> allocated{0}, released{0};
    void OnAllocate(const MemoryPool&, int64_t, int64_t granted) override { allocated += granted; }
    void OnRelease(const MemoryPool&, int64_t granted) override { released += granted; }
  };
  auto root = Root();
  auto child = root->MakeChild({.name = "child"});
  auto before = child->Allocate(64, 64);
  ASSERT_TRUE(before.ok());
  auto listener = std::make_shared<Counting>();
  root->AddListener(listener);
  auto after = child->Allocate(128, 64);
  ASSERT_TRUE(after.ok());
  child->Free(*after);
  child->Free(*before);
  EXPECT_EQ(listener->allocated.load(), 128);
  EXPECT_EQ(listener->released.load(), 128 + 64);
}

TEST(MemoryPoolTest, FailureInjectionAtEveryIndex) {
  auto root = Root();
  int64_t n = 1;
  for (;; ++n) {
    root->InjectFailureAt(n);
    Status st = Workload(root.get());
    EXPECT_EQ(root->held_bytes(), 0) << "n=" << n;
    if (st.ok()) {
      EXPECT_LT(root->attempts_since_injection(), n);
      break;
    }
    EXPECT_TRUE(st.IsOutOfMemory()) << st.ToString();
    EXPECT_NE(st.message().find("injected failure"), std::string::npos) << st.ToString();
    EXPECT_EQ(root->attempts_since_injection(), n);
  }
  EXPECT_EQ(n, 8) << "six allocations and one growth, each failed once";
  root->InjectFailureAt(0);
  EXPECT_OK(Workload(root.get()));
  EXPECT_EQ(root->stats().failed_allocations, 7);
}

TEST(MemoryPoolTest, InjectionInAncestorCountsDescendantAttempts) {
  auto root = Root();
  auto child = root->MakeChild(Named("child"));
  root->InjectFailureAt(2);
  Result<PoolAllocation> a = child->Allocate(10);
  ASSERT_OK(a);
  Result<PoolAllocation> b = child->Allocate(10);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().ToString(), "OutOfMemory: cannot allocate 10 bytes in pool 'root/child': injected failure");
  child->Free(*a);
}

TEST(MemoryPoolTest, CloseReportsOutstandingBytes) {
  auto root = Root();
  auto pool = root->MakeChild(Named("scan"));
  Result<PoolAllocation> a = pool->Allocate(100);
  Result<PoolAllocation> b = pool->Allocate(23);
  ASSERT_OK(a);
  ASSERT_OK(b);
  Status st = pool->Close();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.ToString(), "Invalid: pool 'root/scan' closed with 123 bytes still held in 2 live allocations");
  Result<PoolAllocation> c = pool->Allocate(1);
  ASSERT_RAISES(Invalid, c);
  EXPECT_NE(c.status().message().find("is closed"), std::string::npos);
  pool->Free(*a);
  pool->Free(*b);  // frees still work after Close
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_OK(pool->Close());
  EXPECT_OK(root->Close());
}

TEST(MemoryPoolTest, ReallocateGrowShrinkKeepsData) {
  for (AllocatorKind kind :
       {AllocatorKind::kSystem, AllocatorKind::kJemalloc, AllocatorKind::kMimalloc, AllocatorKind::kMmap}) {
    SCOPED_TRACE(std::string(AllocatorKindName(kind)));
    auto pool = Root(8 << 20, RoundingPolicy::kExact, *GetAllocator(kind));
    Result<PoolAllocation> r = pool->Allocate(1000);
    ASSERT_OK(r);
    PoolAllocation a = *r;
    for (int i = 0; i < 1000; ++i) a.data[i] = static_cast<uint8_t>(i);
    ASSERT_OK(pool->Reallocate(&a, 4 << 20));
    EXPECT_EQ(pool->held_bytes(), 4 << 20);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.data[i], static_cast<uint8_t>(i));

    // Growing past the limit fails and leaves the allocation as it was.
    PoolAllocation before = a;
    Status st = pool->Reallocate(&a, 9 << 20);
    ASSERT_TRUE(st.IsOutOfMemory()) << st.ToString();
    EXPECT_EQ(a.data, before.data);
    EXPECT_EQ(a.granted_bytes, before.granted_bytes);
    EXPECT_EQ(pool->held_bytes(), 4 << 20);

    // jemalloc shrinks a large block in place while it stays large.
    uint8_t* old_data = a.data;
    ASSERT_OK(pool->Reallocate(&a, 1 << 20));
    EXPECT_EQ(pool->held_bytes(), 1 << 20);
    if (kind == AllocatorKind::kMmap || kind == AllocatorKind::kJemalloc) {
      EXPECT_EQ(a.data, old_data) << "shrunk in place";
    }
    // A small size moves (except for mmap, which unmaps the tail pages).
    old_data = a.data;
    ASSERT_OK(pool->Reallocate(&a, 5000));
    EXPECT_EQ(pool->held_bytes(), 5000);
    EXPECT_EQ(a.granted_bytes, 5000);
    if (kind == AllocatorKind::kMmap) {
      EXPECT_EQ(a.data, old_data) << "shrunk in place";
    }
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.data[i], static_cast<uint8_t>(i));

    ASSERT_OK(pool->Reallocate(&a, 0));
    EXPECT_EQ(pool->held_bytes(), 0);
    ASSERT_OK(pool->Reallocate(&a, 10));
    EXPECT_EQ(pool->held_bytes(), 10);
    pool->Free(a);
    EXPECT_EQ(pool->held_bytes(), 0);
    EXPECT_EQ(pool->stats().live_allocations, 0);
  }
}

TEST(MemoryPoolTest, ReserveHonoursLimits) {
  auto root = Root(100);
  ASSERT_OK(root->Reserve(60));
  Status st = root->Reserve(41);
  EXPECT_EQ(st.ToString(), "OutOfMemory: cannot allocate 41 bytes in pool 'root': held 60 of limit 100 bytes");
  root->Unreserve(60);
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST(MemoryPoolTest, ChildAllocatorOverride) {
  auto root = Root();
  MemoryPoolOptions options = Named("mapped");
  options.allocator = *GetAllocator(AllocatorKind::kMmap);
  auto child = root->MakeChild(options);
  EXPECT_EQ(child->allocator()->kind(), AllocatorKind::kMmap);
  auto grandchild = child->MakeChild(Named("g"));
  EXPECT_EQ(grandchild->allocator()->kind(), AllocatorKind::kMmap);
}

TEST(MemoryPoolTest, DefaultRootPoolFollowsEnvironment) {
  ASSERT_EQ(setenv("QUIVER_ALLOCATOR", "mmap", 1), 0);
  Result<std::shared_ptr<MemoryPool>> pool = MakeDefaultRootPool("tool", 1 << 20);
  ASSERT_OK(pool);
  EXPECT_EQ((*pool)->allocator()->kind(), AllocatorKind::kMmap);
  EXPECT_EQ((*pool)->name(), "tool");
  EXPECT_EQ((*pool)->limit_bytes(), 1 << 20);
  ASSERT_EQ(setenv("QUIVER_ALLOCATOR", "bogus", 1), 0);
  EXPECT_TRUE(MakeDefaultRootPool().status().IsInvalid());
  ASSERT_EQ(unsetenv("QUIVER_ALLOCATOR"), 0);
  pool = MakeDefaultRootPool();
  ASSERT_OK(pool);
  EXPECT_EQ((*pool)->allocator()->kind(), AllocatorKind::kSystem);
}

}  // namespace
}  // namespace quiver
