// Tests of the local chunk store (budget, spill, removal, expiry).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "quiver/fetch/chunk_store.h"
#include "quiver/fetch/tests/chunk_fixtures.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::fetch {
namespace {

using testing::FixedSecret;

// The private spill directory is made at the first spill, not with the
// store: a store (a server) that never spills, or is killed, leaves no
// empty quiver-spill-* directory in $TMPDIR.
TEST(ChunkStore, PrivateSpillDirectoryIsMadeAtTheFirstSpill) {
  char parent_buf[] = "/tmp/quiver-chunkstore-test-XXXXXX";
  ASSERT_NE(mkdtemp(parent_buf), nullptr);
  const std::string parent = parent_buf;
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", parent.c_str(), 1);
  auto entries = [&] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(parent)) ++n;
    return n;
  };
  auto pool = MemoryPool::MakeRoot({});
  LocalChunkStoreOptions o;
  o.memory_budget_bytes = 1500;
  o.link_base_url = "https://127.0.0.1:1";
  {
    auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(3))).value();
    EXPECT_EQ(store->spill_dir(), "");
    EXPECT_EQ(store->CountSpillFiles(), 0);
    auto small = Buffer::Allocate(pool.get(), 1000).value();
    std::memset(small->mutable_data(), 'x', 1000);
    ASSERT_TRUE(store->Put(small, 0).ok());
    EXPECT_EQ(entries(), 0) << "in memory: no directory";
    auto spilled = Buffer::Allocate(pool.get(), 1000).value();
    std::memset(spilled->mutable_data(), 'y', 1000);
    auto id = store->Put(spilled, 0);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(entries(), 1) << "the first spill made the directory";
    EXPECT_EQ(store->spill_dir().rfind(parent + "/quiver-spill-" + std::to_string(::getpid()) + "-", 0), 0u)
        << store->spill_dir();  // swept by the next server if this process dies
    EXPECT_EQ(store->CountSpillFiles(), 1);
    auto got = store->Get(*id).value();
    EXPECT_EQ(got->data()[999], 'y');
  }
  EXPECT_EQ(entries(), 0) << "the destructor removed it";
  // A TMPDIR where no directory can be made fails the spilling Put only.
  setenv("TMPDIR", (parent + "/missing/deeper").c_str(), 1);
  {
    auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(3))).value();
    auto a = Buffer::Allocate(pool.get(), 1000).value();
    ASSERT_TRUE(store->Put(a, 0).ok());
    auto b = Buffer::Allocate(pool.get(), 1000).value();
    auto st = store->Put(b, 0);
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(st.status().IsIOError()) << st.status().ToString();
    EXPECT_NE(st.status().message().find("cannot create directory '" + parent + "/missing/deeper/quiver-spill-"),
              std::string::npos)
        << st.status().ToString();
    EXPECT_EQ(store->stats().spilled_bytes, 0);
    EXPECT_EQ(store->stats().chunks, 1);
  }
  if (saved.empty()) {
    unsetenv("TMPDIR");
  } else {
    setenv("TMPDIR", saved.c_str(), 1);
  }
  std::filesystem::remove_all(parent);
}

// Issue 35 #11: a chunk served in full leaves memory for a spill file, from
// which it is read again; with spilling disabled it stays.
TEST(ChunkStore, AChunkServedInFullLeavesMemory) {
  auto pool = MemoryPool::MakeRoot({});
  LocalChunkStoreOptions o;
  o.link_base_url = "https://127.0.0.1:1";
  auto store = LocalChunkStore::Make(o, LinkSigner(FixedSecret(5))).value();
  auto bytes = Buffer::Allocate(pool.get(), 4096).value();
  std::memset(bytes->mutable_data(), 'z', 4096);
  bytes->mutable_data()[4095] = 'q';
  const std::string id = store->Put(bytes, 0).value();
  bytes.reset();
  EXPECT_EQ(store->stats().memory_bytes, 4096);
  EXPECT_TRUE(store->SpillServed(id));
  EXPECT_EQ(store->stats().memory_bytes, 0);
  EXPECT_EQ(store->stats().spilled_bytes, 4096);
  EXPECT_EQ(pool->held_bytes(), 0) << "the in-memory bytes went";
  EXPECT_FALSE(store->SpillServed(id)) << "already spilled";
  EXPECT_FALSE(store->SpillServed("0123456789abcdef0123456789abcdef")) << "unknown";
  auto again = store->Get(id).value();
  ASSERT_EQ(again->size(), 4096);
  EXPECT_EQ(again->data()[0], 'z');
  EXPECT_EQ(again->data()[4095], 'q');
  again.reset();
  store->Remove(id);
  EXPECT_EQ(store->CountSpillFiles(), 0);
  o.spill_limit_bytes = 0;  // spilling disabled: served chunks stay
  auto kept = LocalChunkStore::Make(o, LinkSigner(FixedSecret(5))).value();
  auto b2 = Buffer::Allocate(pool.get(), 100).value();
  const std::string id2 = kept->Put(b2, 0).value();
  EXPECT_FALSE(kept->SpillServed(id2));
  EXPECT_EQ(kept->stats().memory_bytes, 100);
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
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().sql_state(), "53100") << r.status().ToString();  // disk_full (issue 35 #7)
  EXPECT_NE(r.status().message().find("spill limit"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(store->stats().chunks, 2);
}

}  // namespace
}  // namespace quiver::fetch
