// Tests of the local chunk store (budget, spill, removal, expiry).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "quiver/fetch/chunk_store.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::fetch {
namespace {

std::array<uint8_t, LinkSigner::kSecretBytes> FixedSecret(uint8_t seed) {
  std::array<uint8_t, LinkSigner::kSecretBytes> s{};
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(seed + i);
  return s;
}

TEST(ChunkStore, BudgetSpillsAndRemovesEverything) {
  auto pool = MemoryPool::MakeRoot({});
  LocalChunkStoreOptions o;
  o.memory_budget_bytes = 1500;
  o.link_base_url = "https://127.0.0.1:1";
  std::string dir;
  {
    auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(3))).value();
    dir = store->spill_dir();
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
      auto b = Buffer::Allocate(pool.get(), 1000).value();
      std::memset(b->mutable_data(), 'a' + i, 1000);
      ids.push_back(store->Put(b, 0).value());
    }
    EXPECT_EQ(pool->held_bytes(), 1000) << "only the in-memory chunk stays charged";
    auto st = store->stats();
    EXPECT_EQ(st.chunks, 4);
    EXPECT_EQ(st.memory_bytes, 1000);
    EXPECT_EQ(st.spilled_chunks, 3);
    EXPECT_EQ(store->CountSpillFiles(), 3);
    for (int i = 0; i < 4; ++i) {
      auto got = store->Get(ids[i]).value();
      ASSERT_EQ(got->size(), 1000);
      EXPECT_EQ(got->data()[999], 'a' + i);
    }
    auto link = store->Link(ids[2], 1234).value();
    EXPECT_EQ(link.url, "https://127.0.0.1:1/files/" + ids[2] + "?e=1234&s=" + store->signer().Sign(ids[2], 1234));
    store->Remove(ids[0]);
    store->Remove(ids[1]);
    store->Remove(ids[1]);  // idempotent
    EXPECT_TRUE(store->Get(ids[1]).status().IsKeyError());
    EXPECT_TRUE(store->Link(ids[1], 1).status().IsKeyError());
    EXPECT_EQ(pool->held_bytes(), 0);
    EXPECT_EQ(store->CountSpillFiles(), 2);
    // Expiry.
    auto b = Buffer::Allocate(pool.get(), 10).value();
    auto id = store->Put(b, 5000).value();
    b.reset();
    EXPECT_EQ(store->RemoveExpired(4999), 0);
    EXPECT_EQ(store->RemoveExpired(5000), 1);
    EXPECT_TRUE(store->Get(id).status().IsKeyError());
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  std::ifstream gone(dir);
  EXPECT_FALSE(gone.good()) << "private spill dir removed: " << dir;
}

TEST(ChunkStore, FullBudgetAndSpillLimitFailsCleanly) {
  auto pool = MemoryPool::MakeRoot({});
  LocalChunkStoreOptions o;
  o.memory_budget_bytes = 100;
  o.spill_limit_bytes = 150;
  auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(4))).value();
  auto b = Buffer::Allocate(pool.get(), 100).value();
  ASSERT_OK(store->Put(b, 0));
  ASSERT_OK(store->Put(b, 0));  // spilled
  auto r = store->Put(b, 0);
  ASSERT_TRUE(r.status().IsOutOfMemory());
  EXPECT_NE(r.status().message().find("spill limit"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(store->stats().chunks, 2);
}

}  // namespace
}  // namespace quiver::fetch
