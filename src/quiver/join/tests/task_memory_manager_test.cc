// Tests of the task memory manager: both memory modes charge the same pool
// tree, limits give OutOfMemory naming needed and available bytes, pages
// and reservations are RAII, off-heap pages are unmapped when freed.
#include "quiver/join/task_memory_manager.h"
#include "quiver/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace quiver::join {
namespace {

class TaskMemoryModes : public ::testing::TestWithParam<MemoryMode> {};

TEST_P(TaskMemoryModes, PagesAreChargedAndReturned) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  auto pool = root->MakeChild({.name = "task"});
  TaskMemoryOptions o;
  o.mode = GetParam();
  {
    TaskMemoryManager tmm(pool.get(), o);
    MemoryConsumer consumer(&tmm, "test");
    auto p = consumer.AllocatePage(100000);
    ASSERT_OK(p);
    EXPECT_EQ(p->size_bytes(), 100000);
    EXPECT_GE(p->charged_bytes(), 100000);
    EXPECT_EQ(p->mode(), GetParam());
    std::memset(p->data(), 0xAB, 100000);
    EXPECT_EQ(pool->held_bytes(), p->charged_bytes());
    EXPECT_EQ(root->held_bytes(), p->charged_bytes());
    EXPECT_EQ(tmm.held_bytes(), p->charged_bytes());
    EXPECT_EQ(consumer.used_bytes(), p->charged_bytes());
    if (GetParam() == MemoryMode::kOffHeap) {
      EXPECT_EQ(tmm.mapped_bytes(), p->charged_bytes());
      EXPECT_EQ(p->charged_bytes() % kBasePageBytes, 0);
    } else {
      EXPECT_EQ(tmm.mapped_bytes(), 0);
    }
    MemoryPage moved = std::move(*p);
    EXPECT_TRUE(p->empty());
    EXPECT_FALSE(moved.empty());
    moved.Free();
    EXPECT_EQ(pool->held_bytes(), 0);
    EXPECT_EQ(tmm.held_bytes(), 0);
    EXPECT_EQ(tmm.mapped_bytes(), 0);
    EXPECT_EQ(consumer.used_bytes(), 0);
    EXPECT_GT(tmm.stats().peak_held_bytes, 0);
  }
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST_P(TaskMemoryModes, LimitGivesOutOfMemoryNamingNeededAndAvailable) {
  auto root = MemoryPool::MakeRoot({.name = "root", .limit_bytes = 1 << 20});
  auto pool = root->MakeChild({.name = "task"});
  TaskMemoryOptions o;
  o.mode = GetParam();
  TaskMemoryManager tmm(pool.get(), o);
  auto first = tmm.AllocatePage(256 << 10, nullptr);
  ASSERT_OK(first);
  auto big = tmm.AllocatePage(2 << 20, nullptr);
  ASSERT_RAISES(OutOfMemory, big);
  EXPECT_NE(big.status().message().find("needs"), std::string::npos) << big.status().ToString();
  EXPECT_NE(big.status().message().find("available"), std::string::npos) << big.status().ToString();
  EXPECT_NE(big.status().message().find("root"), std::string::npos) << big.status().ToString();
  EXPECT_EQ(pool->held_bytes(), first->charged_bytes());
  auto r = tmm.Reserve(4 << 20, "a build");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a build needs 4194304 bytes but pool 'root' has " +
                                      std::to_string((1 << 20) - first->charged_bytes()) + " bytes available (held " +
                                      std::to_string(first->charged_bytes()) + " of limit 1048576)");
  first->Free();
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(tmm.mapped_bytes(), 0);
}

TEST_P(TaskMemoryModes, ReservationPaysForPages) {
  auto root = MemoryPool::MakeRoot({.name = "root", .limit_bytes = 8 << 20});
  TaskMemoryOptions o;
  o.mode = GetParam();
  TaskMemoryManager tmm(root.get(), o);
  auto r = tmm.Reserve(1 << 20, "test");
  ASSERT_OK(r);
  EXPECT_EQ(root->held_bytes(), 1 << 20);
  EXPECT_EQ(tmm.held_bytes(), 1 << 20);
  auto p = tmm.AllocatePage(512 << 10, nullptr, &*r);
  ASSERT_OK(p);
  EXPECT_EQ(r->remaining_bytes(), (1 << 20) - (512 << 10));
  EXPECT_EQ(root->held_bytes(), 1 << 20);  // no double charge
  r->Release();
  EXPECT_EQ(root->held_bytes(), 512 << 10);
  p->Free();
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(tmm.held_bytes(), 0);
}

TEST_P(TaskMemoryModes, InjectedFailureIsRecoverable) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  TaskMemoryOptions o;
  o.mode = GetParam();
  TaskMemoryManager tmm(root.get(), o);
  tmm.InjectFailureAt(2);
  auto a = tmm.AllocatePage(4096, nullptr);
  auto b = tmm.AllocatePage(4096, nullptr);
  auto c = tmm.AllocatePage(4096, nullptr);
  EXPECT_OK(a);
  ASSERT_RAISES(OutOfMemory, b);
  EXPECT_NE(b.status().message().find("injected"), std::string::npos);
  EXPECT_OK(c);
  EXPECT_EQ(tmm.page_attempts(), 3);
  a->Free();
  c->Free();
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST_P(TaskMemoryModes, PrefaultAndHugePages) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  TaskMemoryOptions o;
  o.mode = GetParam();
  o.prefault = true;
  o.huge_pages = true;
  TaskMemoryManager tmm(root.get(), o);
  auto p = tmm.AllocatePage(5 << 20, nullptr);
  ASSERT_OK(p);
  if (GetParam() == MemoryMode::kOffHeap) {
    EXPECT_EQ(p->charged_bytes(), 6 << 20);  // rounded to 2 MiB
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p->data()) % kHugePageBytes, 0u);
    for (int64_t i = 0; i < p->size_bytes(); i += 4096) ASSERT_EQ(p->data()[i], 0);  // zeroed
  }
  EXPECT_EQ(tmm.PageChargeBytes(5 << 20), p->charged_bytes());
  std::memset(p->data(), 1, static_cast<size_t>(p->size_bytes()));
  p->Free();
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST_P(TaskMemoryModes, ThreadsShareOneManager) {
  auto root = MemoryPool::MakeRoot({.name = "root", .limit_bytes = 64 << 20});
  TaskMemoryOptions o;
  o.mode = GetParam();
  TaskMemoryManager tmm(root.get(), o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto p = tmm.AllocatePage(64 << 10, nullptr);
        ASSERT_OK(p);
        p->data()[0] = 1;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(tmm.stats().live_pages, 0);
  EXPECT_EQ(tmm.stats().pages_allocated, 200);
}

TEST_P(TaskMemoryModes, RetainedPagesAreReusedAndTrimmed) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  TaskMemoryOptions o;
  o.mode = GetParam();
  o.retain_freed_bytes = 8 << 20;
  auto tmm = std::make_unique<TaskMemoryManager>(root.get(), o);
  MemoryConsumer consumer(tmm.get(), "c");
  auto a = consumer.AllocatePage(3 << 20);
  ASSERT_OK(a);
  uint8_t* where = a->data();
  const int64_t charged = a->charged_bytes();
  a->Free();
  EXPECT_EQ(consumer.used_bytes(), 0);
  EXPECT_EQ(tmm->stats().retained_bytes, charged);
  EXPECT_EQ(root->held_bytes(), charged);  // kept pages stay charged
  auto r = tmm->Reserve(3 << 20, "reuse");
  ASSERT_OK(r);
  auto b = tmm->AllocatePage(3 << 20, &consumer, &*r);  // same size: the kept page
  ASSERT_OK(b);
  EXPECT_EQ(b->data(), where);
  EXPECT_FALSE(b->zeroed());
  EXPECT_EQ(tmm->stats().pages_reused, 1);
  EXPECT_EQ(tmm->stats().retained_bytes, 0);
  r->Release();
  EXPECT_EQ(root->held_bytes(), charged);
  auto small = tmm->AllocatePage(64 << 10, nullptr);  // much smaller: a new page
  ASSERT_OK(small);
  EXPECT_NE(small->data(), where);
  b->Free();
  small->Free();
  EXPECT_GT(root->held_bytes(), 0);
  tmm->TrimRetained();
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(tmm->mapped_bytes(), 0);
  auto c = tmm->AllocatePage(1 << 20, nullptr);
  ASSERT_OK(c);
  c->Free();
  tmm.reset();  // the destructor trims
  EXPECT_EQ(root->held_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, TaskMemoryModes, ::testing::Values(MemoryMode::kOnHeap, MemoryMode::kOffHeap),
                         [](const auto& info) { return info.param == MemoryMode::kOnHeap ? "OnHeap" : "OffHeap"; });

TEST(TaskMemory, PagesLargerThan8GiB) {
  // 64-bit sizes throughout: a 9 GiB off-heap page maps (virtual memory;
  // only the two touched base pages become resident).
  auto root = MemoryPool::MakeRoot({.name = "root"});
  TaskMemoryOptions o;
  o.mode = MemoryMode::kOffHeap;
  o.huge_pages = false;
  TaskMemoryManager tmm(root.get(), o);
  const int64_t size = int64_t{9} << 30;
  auto p = tmm.AllocatePage(size, nullptr);
  ASSERT_OK(p);
  p->data()[0] = 1;
  p->data()[size - 1] = 2;
  EXPECT_EQ(root->held_bytes(), size);
  EXPECT_EQ(tmm.mapped_bytes(), size);
  p->Free();
  EXPECT_EQ(root->held_bytes(), 0);
}

TEST(TaskMemory, ParseMemoryMode) {
  EXPECT_EQ(*ParseMemoryMode("on-heap"), MemoryMode::kOnHeap);
  EXPECT_EQ(*ParseMemoryMode("off-heap"), MemoryMode::kOffHeap);
  auto bad = ParseMemoryMode("heap");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("on-heap or off-heap"), std::string::npos);
  EXPECT_EQ(MemoryModeName(MemoryMode::kOffHeap), "off-heap");
}

TEST(TaskMemory, PoolInjectionAppliesToOnHeapPages) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  TaskMemoryManager tmm(root.get(), {});
  root->InjectFailureAt(1);
  auto p = tmm.AllocatePage(4096, nullptr);
  ASSERT_RAISES(OutOfMemory, p);
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(tmm.held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::join
