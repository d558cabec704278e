// Tests of LongHashedRelation: dense and sparse modes, special keys,
// duplicates, nulls, the size estimate, serialization, failure injection
// at every allocation and the pool limit.
#include "quiver/join/long_hashed_relation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "quiver/join/tests/join_test_util.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::join {
namespace {

using testing::Batch;
using testing::Int64Array;
using testing::StringArray;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

SchemaPtr KV() {
  auto s = std::make_shared<Schema>();
  s->fields = {field("k", int64()), field("v", int64()), field("s", utf8())};
  return s;
}

struct Fixture {
  std::shared_ptr<MemoryPool> root = MemoryPool::MakeRoot({.name = "root"});
  std::shared_ptr<MemoryPool> pool = root->MakeChild({.name = "task"});
  std::unique_ptr<TaskMemoryManager> tmm;
  explicit Fixture(MemoryMode mode = MemoryMode::kOnHeap) {
    TaskMemoryOptions o;
    o.mode = mode;
    tmm = std::make_unique<TaskMemoryManager>(pool.get(), o);
  }
};

// Builds k, v = row number, s = "s<row>" (null every 7th row when asked).
RecordBatchPtr MakeKeys(MemoryPool* pool, const std::vector<std::optional<int64_t>>& keys, bool string_nulls = false) {
  std::vector<std::optional<int64_t>> v;
  std::vector<std::optional<std::string>> s;
  for (size_t i = 0; i < keys.size(); ++i) {
    v.push_back(static_cast<int64_t>(i));
    if (string_nulls && i % 7 == 3) {
      s.push_back(std::nullopt);
    } else {
      s.push_back(testing::Cat("s", std::to_string(i)));
    }
  }
  return Batch(KV(), {Int64Array(pool, keys), Int64Array(pool, v), StringArray(pool, s)});
}

// All rows of a key's chain as "v:s" strings, sorted.
std::vector<std::string> ChainOf(const LongHashedRelation& rel, int64_t key) {
  std::vector<std::string> out;
  const RowLayout& l = rel.layout();
  for (const uint8_t* r = rel.Find(key); r; r = RowLayout::Next(r)) {
    int64_t v;
    std::memcpy(&v, r + l.fields()[1].slot_offset, 8);
    std::string s = l.IsValid(r, 2) ? std::string(RowLayout::VarAt(r, l.fields()[2].slot_offset)) : "null";
    out.push_back(std::to_string(v) + ":" + s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

HashedRelationOptions Opts() {
  HashedRelationOptions o;
  o.key_columns = {0};
  return o;
}

class LongRelationModes : public ::testing::TestWithParam<MemoryMode> {};

TEST_P(LongRelationModes, SpecialKeysSparse) {
  Fixture f(GetParam());
  const std::vector<std::optional<int64_t>> keys = {kMin, -1, 0, kMax, kMin + 1, kMax - 1, 42, std::nullopt, -1};
  auto b = MakeKeys(f.pool.get(), keys);
  auto rel = LongHashedRelation::Build(*KV(), {b}, Opts(), f.tmm.get());
  ASSERT_OK(rel);
  const auto& r = **rel;
  EXPECT_FALSE(r.dense());  // the range spans all of int64
  EXPECT_EQ(r.min_key(), kMin);
  EXPECT_EQ(r.max_key(), kMax);
  EXPECT_FALSE(r.keys_unique());
  EXPECT_EQ(r.stats().input_rows, 9);
  EXPECT_EQ(r.stats().null_key_rows, 1);
  EXPECT_EQ(r.stats().stored_rows, 8);
  EXPECT_EQ(r.stats().num_keys, 7);
  EXPECT_EQ(ChainOf(r, kMin), std::vector<std::string>{"0:s0"});
  EXPECT_EQ(ChainOf(r, kMax), std::vector<std::string>{"3:s3"});
  EXPECT_EQ(ChainOf(r, -1), (std::vector<std::string>{"1:s1", "8:s8"}));
  EXPECT_EQ(ChainOf(r, 0), std::vector<std::string>{"2:s2"});
  EXPECT_TRUE(ChainOf(r, 1).empty());
  EXPECT_TRUE(ChainOf(r, kMin + 2).empty());
}

TEST_P(LongRelationModes, DenseRange) {
  Fixture f(GetParam());
  std::vector<std::optional<int64_t>> keys;
  for (int64_t k = 1000000; k <= 1001023; ++k) keys.push_back(k);
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(7));
  auto b = MakeKeys(f.pool.get(), keys);
  auto rel = LongHashedRelation::Build(*KV(), {b}, Opts(), f.tmm.get());
  ASSERT_OK(rel);
  const auto& r = **rel;
  EXPECT_TRUE(r.dense());
  EXPECT_TRUE(r.keys_unique());
  EXPECT_EQ(r.index_entries(), 1024);
  EXPECT_EQ(r.stats().index_bytes, 1024 * 8);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(ChainOf(r, *keys[i]), std::vector<std::string>{std::to_string(i) + ":s" + std::to_string(i)});
  }
  EXPECT_EQ(r.Find(999999), nullptr);
  EXPECT_EQ(r.Find(1001024), nullptr);
  EXPECT_EQ(r.Find(kMin), nullptr);
  EXPECT_EQ(r.Find(kMax), nullptr);
  // FindBatch agrees with Find, including out-of-range keys.
  std::vector<int64_t> probe = {kMin, 999999, 1000000, 1000500, 1001023, 1001024, kMax, -1, 0};
  std::vector<const uint8_t*> out(probe.size());
  r.FindBatch(probe.data(), nullptr, static_cast<int64_t>(probe.size()), out.data());
  for (size_t i = 0; i < probe.size(); ++i) EXPECT_EQ(out[i], r.Find(probe[i])) << probe[i];
}

TEST_P(LongRelationModes, DenseAtTheEdgesOfInt64) {
  Fixture f(GetParam());
  for (int64_t base : {kMin, kMax - 99, int64_t{-50}}) {
    std::vector<std::optional<int64_t>> keys;
    for (int64_t i = 0; i < 100; ++i) keys.push_back(base + i);
    auto rel = LongHashedRelation::Build(*KV(), {MakeKeys(f.pool.get(), keys)}, Opts(), f.tmm.get());
    ASSERT_OK(rel);
    EXPECT_TRUE((*rel)->dense());
    for (int64_t i = 0; i < 100; ++i) ASSERT_NE((*rel)->Find(base + i), nullptr);
    if (base != kMin) {
      EXPECT_EQ((*rel)->Find(base - 1), nullptr);
    }
    if (base != kMax - 99) {
      EXPECT_EQ((*rel)->Find(base + 100), nullptr);
    }
    EXPECT_EQ((*rel)->Find(base == kMin ? kMax : kMin), nullptr);
  }
}

TEST_P(LongRelationModes, RandomSparseMatchesAMap) {
  Fixture f(GetParam());
  std::mt19937_64 rng(11);
  std::vector<std::optional<int64_t>> keys;
  std::multimap<int64_t, int64_t> ref;
  for (int64_t i = 0; i < 20000; ++i) {
    if (rng() % 50 == 0) {
      keys.push_back(std::nullopt);
      continue;
    }
    const int64_t k = rng() % 3 == 0 ? static_cast<int64_t>(rng() % 2000) : static_cast<int64_t>(rng());
    keys.push_back(k);
    ref.emplace(k, i);
  }
  auto b = MakeKeys(f.pool.get(), keys, /*string_nulls=*/true);
  auto batches = testing::Split(b, 3000);
  auto rel = LongHashedRelation::Build(*KV(), batches, Opts(), f.tmm.get());
  ASSERT_OK(rel);
  const auto& r = **rel;
  EXPECT_FALSE(r.dense());
  EXPECT_EQ(r.stats().grow_count, 0);
  std::set<int64_t> distinct;
  for (auto& [k, v] : ref) distinct.insert(k);
  EXPECT_EQ(r.stats().num_keys, static_cast<int64_t>(distinct.size()));
  // Index bytes per distinct key stay under 24 (the bound).
  EXPECT_LE(static_cast<double>(r.stats().index_bytes) / distinct.size(), 24.0);
  for (int64_t k : distinct) {
    std::vector<std::string> want;
    auto [lo, hi] = ref.equal_range(k);
    for (auto it = lo; it != hi; ++it) {
      const int64_t i = it->second;
      want.push_back(testing::Cat(std::to_string(i) + ":", i % 7 == 3 ? "null" : testing::Cat("s", std::to_string(i))));
    }
    std::sort(want.begin(), want.end());
    ASSERT_EQ(ChainOf(r, k), want) << k;
  }
  for (int i = 0; i < 1000; ++i) {
    const int64_t k = static_cast<int64_t>(rng());
    if (!ref.count(k)) {
      ASSERT_EQ(r.Find(k), nullptr);
    }
  }
}

TEST_P(LongRelationModes, NullKeysKeptIgnoredAndNullAware) {
  Fixture f(GetParam());
  auto b = MakeKeys(f.pool.get(), {1, std::nullopt, 2, 2, std::nullopt, 3});
  {
    auto o = Opts();
    o.keep_null_keys = true;
    o.with_ordinals = true;
    auto rel = LongHashedRelation::Build(*KV(), {b}, o, f.tmm.get());
    ASSERT_OK(rel);
    EXPECT_EQ((*rel)->stats().stored_rows, 6);
    int64_t seen = 0;
    (*rel)->ForEachRow([&](const uint8_t* row) { EXPECT_EQ(RowLayout::Ordinal(row), seen++); });
    EXPECT_EQ(seen, 6);
  }
  {
    auto o = Opts();
    o.ignore_duplicate_keys = true;
    o.payload_columns = std::vector<int>{};
    auto rel = LongHashedRelation::Build(*KV(), {b}, o, f.tmm.get());
    ASSERT_OK(rel);
    EXPECT_EQ((*rel)->stats().stored_rows, 3);
    EXPECT_TRUE((*rel)->keys_unique());
    EXPECT_EQ((*rel)->layout().fixed_bytes(), 8);  // key-only rows: just the chain word
  }
  {
    auto o = Opts();
    o.null_aware = true;
    auto rel = LongHashedRelation::Build(*KV(), {b}, o, f.tmm.get());
    ASSERT_OK(rel);
    EXPECT_TRUE((*rel)->all_null_keys());
    EXPECT_EQ((*rel)->used_bytes(), 0);
  }
  EXPECT_EQ(f.tmm->held_bytes(), 0);
}

TEST_P(LongRelationModes, EmptyAndAllNullInputs) {
  Fixture f(GetParam());
  auto empty = MakeKeys(f.pool.get(), {});
  auto rel = LongHashedRelation::Build(*KV(), {empty}, Opts(), f.tmm.get());
  ASSERT_OK(rel);
  EXPECT_TRUE((*rel)->empty_input());
  EXPECT_EQ((*rel)->Find(0), nullptr);
  auto nulls = MakeKeys(f.pool.get(), {std::nullopt, std::nullopt});
  auto rel2 = LongHashedRelation::Build(*KV(), {nulls}, Opts(), f.tmm.get());
  ASSERT_OK(rel2);
  EXPECT_EQ((*rel2)->Find(0), nullptr);
  auto rel3 = LongHashedRelation::Build(*KV(), {}, Opts(), f.tmm.get());
  ASSERT_OK(rel3);
}

TEST_P(LongRelationModes, SerializeRoundTrip) {
  Fixture f(GetParam());
  std::mt19937_64 rng(5);
  for (bool dense : {false, true}) {
    std::vector<std::optional<int64_t>> keys;
    for (int i = 0; i < 5000; ++i) {
      keys.push_back(i % 97 == 0 ? std::optional<int64_t>()
                                 : (dense ? int64_t(rng() % 3000) : int64_t(rng() % 9000) * 1000003));
    }
    auto b = MakeKeys(f.pool.get(), keys, true);
    auto o = Opts();
    o.keep_null_keys = true;
    o.with_ordinals = true;
    auto rel = LongHashedRelation::Build(*KV(), testing::Split(b, 999), o, f.tmm.get());
    ASSERT_OK(rel);
    EXPECT_EQ((*rel)->dense(), dense);
    auto bytes = (*rel)->Serialize(f.pool.get());
    ASSERT_OK(bytes);
    Fixture g(GetParam() == MemoryMode::kOnHeap ? MemoryMode::kOffHeap : MemoryMode::kOnHeap);
    auto back = DeserializeHashedRelation(*KV(), **bytes, g.tmm.get());
    ASSERT_OK(back);
    auto* lr = dynamic_cast<LongHashedRelation*>(back->get());
    ASSERT_NE(lr, nullptr);
    EXPECT_EQ(lr->dense(), dense);
    EXPECT_EQ(lr->stats().stored_rows, (*rel)->stats().stored_rows);
    for (const auto& k : keys) {
      if (k) {
        ASSERT_EQ(ChainOf(*lr, *k), ChainOf(**rel, *k));
      }
    }
    std::vector<int64_t> ords;
    lr->ForEachRow([&](const uint8_t* r) { ords.push_back(RowLayout::Ordinal(r)); });
    ASSERT_EQ(static_cast<int64_t>(ords.size()), (*rel)->stats().stored_rows);
    for (size_t i = 0; i < ords.size(); ++i) ASSERT_EQ(ords[i], static_cast<int64_t>(i));
    // Serializing the copy gives the same bytes.
    auto again = lr->Serialize(f.pool.get());
    ASSERT_OK(again);
    EXPECT_TRUE((*again)->Equals(**bytes));
  }
}

TEST(LongRelation, CorruptSerializationIsRejectedCleanly) {
  Fixture f;
  auto b = MakeKeys(f.pool.get(), {5, 6, 6, 7, std::nullopt, 100});
  auto o = Opts();
  o.with_ordinals = true;
  o.keep_null_keys = true;
  o.allow_dense = false;
  auto rel = LongHashedRelation::Build(*KV(), {b}, o, f.tmm.get());
  ASSERT_OK(rel);
  auto bytes = (*rel)->Serialize(f.pool.get());
  ASSERT_OK(bytes);
  const auto& good = **bytes;
  const int64_t held_before = f.pool->held_bytes();
  // Flip each byte, truncate at each length: every result is OK or a clean
  // Invalid, and a relation that loads answers lookups without looping.
  for (int64_t i = 0; i < good.size(); ++i) {
    for (uint8_t x : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      auto copy = Buffer::CopyOf(f.pool.get(), good.span());
      ASSERT_OK(copy);
      (*copy)->mutable_data()[i] ^= x;
      auto r = DeserializeHashedRelation(*KV(), **copy, f.tmm.get());
      if (r.ok()) {
        for (int64_t k : {5, 6, 7, 100, 0, -1}) {
          for (const uint8_t* row = static_cast<LongHashedRelation*>(r->get())->Find(k); row;
               row = RowLayout::Next(row)) {
          }
        }
      } else {
        EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
      }
    }
  }
  for (int64_t len = 0; len < good.size(); ++len) {
    auto r = DeserializeHashedRelation(*KV(), *Buffer::Unowned(good.data(), len), f.tmm.get());
    ASSERT_RAISES(Invalid, r);
  }
  EXPECT_EQ(f.pool->held_bytes(), held_before);
}

TEST(LongRelation, EstimateIsPureAndReservedUpFront) {
  LongBuildStats st;
  st.input_rows = 1000000;
  st.distinct_estimate = 1000000;
  st.min_key = kMin;
  st.max_key = kMax;
  auto schema = KV();
  auto layout = RowLayout::Make(*schema, {1}, {});
  ASSERT_OK(layout);
  auto o = Opts();
  const auto e1 = LongHashedRelation::EstimateSize(st, *layout, o);
  const auto e2 = LongHashedRelation::EstimateSize(st, *layout, o);
  EXPECT_EQ(e1.total_bytes, e2.total_bytes);
  EXPECT_FALSE(e1.dense);
  EXPECT_EQ(e1.row_bytes, 1000000 * 24);  // next + key + v
  EXPECT_LE(e1.index_bytes / 1000000.0, 24.0);
  EXPECT_GE(e1.index_bytes / 1000000.0, 16.0);
  // A narrow range is dense, with overflow-safe arithmetic near the edges.
  st.min_key = kMax - 2999999;
  st.max_key = kMax;
  const auto e3 = LongHashedRelation::EstimateSize(st, *layout, o);
  EXPECT_TRUE(e3.dense);
  EXPECT_EQ(e3.index_entries, 3000000);
  st.max_key = kMax;
  st.min_key = kMax - 3000000;  // one past the 3-entries-per-key bound
  EXPECT_FALSE(LongHashedRelation::EstimateSize(st, *layout, o).dense);
  o.allow_dense = false;
  st.min_key = 0;
  st.max_key = 10;
  EXPECT_FALSE(LongHashedRelation::EstimateSize(st, *layout, o).dense);
}

// A small key range is dense however sparse its keys (TPC-H Q11: 391
// supplier keys in 1..10,000): up to dense_max_small_range entries.
TEST(LongRelation, SmallRangesAreDenseWhateverTheirDensity) {
  LongBuildStats st;
  st.input_rows = 391;
  st.distinct_estimate = 391;
  st.min_key = 1;
  st.max_key = 10000;
  auto schema = KV();
  auto layout = RowLayout::Make(*schema, {1}, {});
  ASSERT_OK(layout);
  auto o = Opts();
  auto e = LongHashedRelation::EstimateSize(st, *layout, o);
  EXPECT_TRUE(e.dense);
  EXPECT_EQ(e.index_entries, 10000);
  st.max_key = st.min_key + o.dense_max_small_range - 1;  // the largest small range
  EXPECT_TRUE(LongHashedRelation::EstimateSize(st, *layout, o).dense);
  st.max_key += 1;
  EXPECT_FALSE(LongHashedRelation::EstimateSize(st, *layout, o).dense);
  o.dense_max_small_range = 0;  // off: the density rule alone
  st.max_key = 10000;
  EXPECT_FALSE(LongHashedRelation::EstimateSize(st, *layout, o).dense);
}

TEST_P(LongRelationModes, OverTheLimitIsOutOfMemoryAndHeldReturnsToZero) {
  auto root = MemoryPool::MakeRoot({.name = "root", .limit_bytes = 256 << 10});
  auto pool = root->MakeChild({.name = "task"});
  TaskMemoryOptions to;
  to.mode = GetParam();
  TaskMemoryManager tmm(pool.get(), to);
  auto data_root = MemoryPool::MakeRoot({.name = "data"});
  std::vector<std::optional<int64_t>> keys;
  for (int64_t i = 0; i < 100000; ++i) keys.push_back(i * 7919);
  auto b = MakeKeys(data_root.get(), keys);
  auto rel = LongHashedRelation::Build(*KV(), {b}, Opts(), &tmm);
  ASSERT_RAISES(OutOfMemory, rel);
  const std::string& msg = rel.status().message();
  EXPECT_NE(msg.find("LongHashedRelation build of 100000 rows"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs "), std::string::npos) << msg;
  EXPECT_NE(msg.find("but pool 'root' has 262144 bytes available"), std::string::npos) << msg;
  EXPECT_EQ(pool->held_bytes(), 0);
  EXPECT_EQ(root->held_bytes(), 0);
  EXPECT_EQ(tmm.mapped_bytes(), 0);
  EXPECT_EQ(tmm.stats().pages_allocated, 0);  // failed before any page
}

TEST_P(LongRelationModes, FailureInjectionAtEveryAllocation) {
  auto data_root = MemoryPool::MakeRoot({.name = "data"});
  std::vector<std::optional<int64_t>> keys;
  std::mt19937_64 rng(3);
  for (int64_t i = 0; i < 30000; ++i)
    keys.push_back(i % 10 == 0 ? std::nullopt : std::optional<int64_t>(rng() % 20000));
  auto b = MakeKeys(data_root.get(), keys, true);
  auto batches = testing::Split(b, 4096);
  auto o = Opts();
  o.keep_null_keys = true;
  o.with_ordinals = true;
  o.max_page_bytes = 64 << 10;  // several row pages: several allocations
  o.allow_dense = false;
  int64_t n = 1;
  int without_filter = 0;
  for (;; ++n) {
    auto root = MemoryPool::MakeRoot({.name = "root"});
    TaskMemoryOptions to;
    to.mode = GetParam();
    TaskMemoryManager tmm(root.get(), to);
    if (GetParam() == MemoryMode::kOnHeap) {
      root->InjectFailureAt(n);
    } else {
      tmm.InjectFailureAt(n);
    }
    auto rel = LongHashedRelation::Build(*KV(), batches, o, &tmm);
    if (rel.ok()) {
      EXPECT_GT((*rel)->stats().stored_rows, 0);
      const bool filtered = (*rel)->has_key_filter();
      rel->reset();
      EXPECT_EQ(root->held_bytes(), 0);
      if (!filtered) {  // the failure hit the key filter, a shortcut only: built without it
        ++without_filter;
        continue;
      }
      break;
    }
    ASSERT_TRUE(rel.status().IsOutOfMemory()) << n << ": " << rel.status().ToString();
    EXPECT_NE(rel.status().message().find("injected"), std::string::npos);
    ASSERT_EQ(root->held_bytes(), 0) << n;
    ASSERT_EQ(tmm.mapped_bytes(), 0) << n;
    ASSERT_LT(n, 1000);
  }
  EXPECT_GT(n, 3);  // the index and several row pages were each failed once
  EXPECT_EQ(without_filter, 1);
}

TEST_P(LongRelationModes, CloseReturnsEveryPageAtOnce) {
  Fixture f(GetParam());
  std::vector<std::optional<int64_t>> keys;
  for (int64_t i = 0; i < 50000; ++i) keys.push_back(i * 31);
  auto o = Opts();
  o.max_page_bytes = 128 << 10;
  auto rel = LongHashedRelation::Build(*KV(), {MakeKeys(f.pool.get(), keys)}, o, f.tmm.get());
  ASSERT_OK(rel);
  const int64_t before = f.pool->held_bytes();
  EXPECT_GT((*rel)->used_bytes(), 0);
  EXPECT_GT(f.tmm->stats().live_pages, 2);
  (*rel)->Close();
  EXPECT_EQ(f.tmm->stats().live_pages, 0);
  EXPECT_EQ((*rel)->used_bytes(), 0);
  EXPECT_LT(f.pool->held_bytes(), before);
  EXPECT_EQ(f.tmm->held_bytes(), 0);
  EXPECT_EQ((*rel)->Find(31), nullptr);
  (*rel)->Close();  // idempotent
}

TEST_P(LongRelationModes, ConcurrentReadOnlyProbes) {
  Fixture f(GetParam());
  std::vector<std::optional<int64_t>> keys;
  for (int64_t i = 0; i < 40000; ++i) keys.push_back(i * 1000003 + 7);
  auto rel = LongHashedRelation::Build(*KV(), {MakeKeys(f.pool.get(), keys)}, Opts(), f.tmm.get());
  ASSERT_OK(rel);
  std::vector<std::thread> threads;
  std::atomic<int64_t> found{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int64_t> probe;
      for (int64_t i = t; i < 80000; i += 4) probe.push_back(i * 1000003 + 7);
      std::vector<const uint8_t*> out(probe.size());
      (*rel)->FindBatch(probe.data(), nullptr, static_cast<int64_t>(probe.size()), out.data());
      int64_t n = 0;
      for (auto* r : out) n += r != nullptr;
      found += n;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(found.load(), 40000);
}

// A sparse relation over a key range of at most 2^26 keys tests a bitmap of
// its keys before hashing (TPC-H Q17: ~200 part keys in 1..200,000 probed
// by 6 M lineitem rows). FindBatch answers as Find does for keys present,
// absent inside the range, outside it, at the int64 extremes, and for
// invalid rows; also after a serialization round trip.
TEST_P(LongRelationModes, SparseKeyFilterAnswersAsTheIndex) {
  Fixture f(GetParam());
  std::vector<std::optional<int64_t>> keys;
  for (int64_t i = 0; i < 300; ++i) keys.push_back(1000 + i * 667);  // 1000 .. 200,433
  keys.push_back(1000 + 5 * 667);                                    // a duplicate
  keys.push_back(std::nullopt);
  auto rel = LongHashedRelation::Build(*KV(), {MakeKeys(f.pool.get(), keys)}, Opts(), f.tmm.get());
  ASSERT_OK(rel);
  ASSERT_FALSE((*rel)->dense());
  EXPECT_TRUE((*rel)->has_key_filter());
  std::vector<int64_t> probe = {INT64_MIN, INT64_MAX, -1, 0, 999, 1000, 1001, 200433, 200434, 1 << 30};
  for (int64_t k = 900; k < 201000; k += 37) probe.push_back(k);
  std::vector<uint8_t> valid(probe.size(), 1);
  for (size_t j = 0; j < valid.size(); j += 5) valid[j] = 0;
  auto check = [&](const LongHashedRelation& r) {
    std::vector<const uint8_t*> out(probe.size()), out_valid(probe.size());
    r.FindBatch(probe.data(), nullptr, static_cast<int64_t>(probe.size()), out.data());
    r.FindBatch(probe.data(), valid.data(), static_cast<int64_t>(probe.size()), out_valid.data());
    int64_t found = 0;
    for (size_t j = 0; j < probe.size(); ++j) {
      EXPECT_EQ(out[j], r.Find(probe[j])) << probe[j];
      EXPECT_EQ(out_valid[j], valid[j] ? r.Find(probe[j]) : nullptr) << probe[j];
      found += out[j] != nullptr;
    }
    int64_t expected = 2;  // 1000 and 200433
    for (int64_t k = 900; k < 201000; k += 37) expected += k >= 1000 && (k - 1000) % 667 == 0 && k <= 200433;
    EXPECT_EQ(found, expected);
  };
  check(**rel);
  auto bytes = (*rel)->Serialize(f.pool.get());
  ASSERT_OK(bytes);
  auto back = LongHashedRelation::Deserialize(*KV(), **bytes, f.tmm.get());
  ASSERT_OK(back);
  EXPECT_TRUE((*back)->has_key_filter());
  check(**back);
  // A range past 2^26 keys gets no bitmap.
  auto wide =
      LongHashedRelation::Build(*KV(), {MakeKeys(f.pool.get(), {int64_t{1}, int64_t{1} << 40})}, Opts(), f.tmm.get());
  ASSERT_OK(wide);
  EXPECT_FALSE((*wide)->has_key_filter());
}

INSTANTIATE_TEST_SUITE_P(Modes, LongRelationModes, ::testing::Values(MemoryMode::kOnHeap, MemoryMode::kOffHeap),
                         [](const auto& info) { return info.param == MemoryMode::kOnHeap ? "OnHeap" : "OffHeap"; });

// ---- concurrent (partitioned) build ----

// splitmix64's finalizer: well-spread 64-bit keys.
constexpr uint64_t SplitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

SchemaPtr FixedKV() {
  auto s = std::make_shared<Schema>();
  s->fields = {field("k", int64()), field("v", int64())};
  return s;
}

// Batches of (k = key_of(i), v = i, null every 11th), `rows` rows in
// batches of `batch_rows`.
template <typename KeyOf>
std::vector<RecordBatchPtr> FixedBatches(MemoryPool* pool, int64_t rows, int64_t batch_rows, KeyOf key_of) {
  std::vector<RecordBatchPtr> out;
  for (int64_t b = 0; b < rows; b += batch_rows) {
    std::vector<std::optional<int64_t>> k, v;
    for (int64_t i = b; i < std::min(rows, b + batch_rows); ++i) {
      k.push_back(key_of(i));
      v.push_back(i % 11 == 5 ? std::nullopt : std::optional<int64_t>(i));
    }
    out.push_back(Batch(FixedKV(), {Int64Array(pool, k), Int64Array(pool, v)}));
  }
  return out;
}

// `tasks` tasks on their own threads (real concurrency, as the SQL
// scheduler lends).
BuildParallelism OnThreads(int tasks) {
  BuildParallelism p;
  p.tasks = tasks;
  p.parallel_for = [](int n, const std::function<Status(int)>& body) {
    std::vector<Status> st(static_cast<size_t>(n));
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t) threads.emplace_back([&, t] { st[static_cast<size_t>(t)] = body(t); });
    for (auto& t : threads) t.join();
    for (auto& s : st) {
      if (!s.ok()) return s;
    }
    return Status::OK();
  };
  return p;
}

// v of a key's chain in chain order (-1 for a null v).
std::vector<int64_t> ChainValues(const LongHashedRelation& rel, int64_t key) {
  std::vector<int64_t> out;
  const RowLayout& l = rel.layout();
  for (const uint8_t* r = rel.Find(key); r; r = RowLayout::Next(r)) {
    int64_t v = -1;
    if (l.IsValid(r, 1)) std::memcpy(&v, r + l.fields()[1].slot_offset, 8);
    out.push_back(v);
  }
  return out;
}

// The concurrent build against the serial one: same counts, same chains
// (same order), every row once, ordinals a permutation.
void ExpectSameRelation(const LongHashedRelation& serial, const LongHashedRelation& conc,
                        const std::vector<RecordBatchPtr>& batches) {
  EXPECT_EQ(conc.dense(), serial.dense());
  EXPECT_EQ(conc.stats().num_keys, serial.stats().num_keys);
  EXPECT_EQ(conc.stats().stored_rows, serial.stats().stored_rows);
  EXPECT_EQ(conc.stats().null_key_rows, serial.stats().null_key_rows);
  EXPECT_EQ(conc.keys_unique(), serial.keys_unique());
  EXPECT_EQ(conc.has_key_filter(), serial.has_key_filter());
  std::vector<int64_t> keys;
  for (const auto& b : batches) {
    const ArrayData& k = *b->columns[0];
    for (int64_t i = 0; i < b->num_rows; ++i) {
      if (k.IsValid(i)) keys.push_back(reinterpret_cast<const int64_t*>(k.buffers[1]->data())[k.offset + i]);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  // Every third key (the sanitizer builds run this too).
  for (size_t i = 0; i < keys.size(); i += 3) {
    ASSERT_EQ(ChainValues(conc, keys[i]), ChainValues(serial, keys[i])) << "key " << keys[i];
  }
  for (int64_t absent : {kMin, int64_t{-1}, kMax}) {
    if (!std::binary_search(keys.begin(), keys.end(), absent)) {
      EXPECT_EQ(conc.Find(absent), nullptr);
    }
  }
  std::vector<int64_t> vs, vc;
  std::vector<int64_t> ordinals;
  const RowLayout& l = conc.layout();
  auto value = [&](const uint8_t* r) {
    int64_t v = -1;
    if (l.IsValid(r, 1)) std::memcpy(&v, r + l.fields()[1].slot_offset, 8);
    return v;
  };
  serial.ForEachRow([&](const uint8_t* r) { vs.push_back(value(r)); });
  conc.ForEachRow([&](const uint8_t* r) {
    vc.push_back(value(r));
    if (l.options().with_ordinal) ordinals.push_back(RowLayout::Ordinal(r));
  });
  std::sort(vs.begin(), vs.end());
  std::sort(vc.begin(), vc.end());
  EXPECT_EQ(vc, vs);
  if (l.options().with_ordinal) {
    std::sort(ordinals.begin(), ordinals.end());
    ASSERT_EQ(static_cast<int64_t>(ordinals.size()), conc.stats().stored_rows);
    for (size_t i = 0; i < ordinals.size(); ++i) ASSERT_EQ(ordinals[i], static_cast<int64_t>(i));
  }
}

TEST_P(LongRelationModes, ConcurrentBuildMakesTheSerialChains) {
  Fixture f(GetParam());
  struct Case {
    const char* name;
    std::function<std::optional<int64_t>(int64_t)> key_of;
    bool keep_null = false;
  };
  const std::vector<Case> cases = {
      // dense, two rows per key, some null keys
      {"dense",
       [](int64_t i) -> std::optional<int64_t> {
         if (i % 97 == 13) return std::nullopt;
         return i % 100000;
       }},
      // sparse, unique
      {"sparse", [](int64_t i) -> std::optional<int64_t> { return static_cast<int64_t>(SplitMix64(i)); }},
      // sparse, 30% of keys repeated, null keys kept (outer joins), ordinals
      {"sparse-dup-nulls",
       [](int64_t i) -> std::optional<int64_t> {
         if (i % 101 == 7) return std::nullopt;
         return static_cast<int64_t>(SplitMix64(i % 140000));
       },
       true},
      // sparse over a small range: with a key bitmap
      {"sparse-filter", [](int64_t i) -> std::optional<int64_t> { return (i * 7919) % 3000000; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto batches = FixedBatches(f.pool.get(), 200000, 40000, c.key_of);
    auto o = Opts();
    o.keep_null_keys = c.keep_null;
    o.with_ordinals = c.keep_null;
    auto serial = LongHashedRelation::Build(*FixedKV(), batches, o, f.tmm.get());
    ASSERT_OK(serial);
    for (int tasks : {3}) {
      SCOPED_TRACE(tasks);
      o.parallelism = OnThreads(tasks);
      auto conc = LongHashedRelation::Build(*FixedKV(), batches, o, f.tmm.get());
      ASSERT_OK(conc);
      ExpectSameRelation(**serial, **conc, batches);
      (*conc)->Close();
    }
  }
}

// Rows with a string field (variable width: TPC-H Q9's n_name, Q18's
// c_name on the build side): the concurrent build sizes its regions in
// bytes and gives the serial build's chains, and every row keeps its own
// string.
TEST_P(LongRelationModes, ConcurrentBuildOfVariableWidthRowsMakesTheSerialChains) {
  Fixture f(GetParam());
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("k", int64()), field("v", int64()), field("s", utf8())};
  auto text_of = [](int64_t i) -> std::optional<std::string> {
    if (i % 13 == 4) return std::nullopt;
    return std::string(static_cast<size_t>(i % 29), static_cast<char>('a' + i % 26)) + std::to_string(i);
  };
  for (bool sparse : {false, true}) {
    SCOPED_TRACE(sparse ? "sparse-dup-nulls" : "dense");
    std::vector<RecordBatchPtr> batches;
    for (int64_t b = 0; b < 180000; b += 30000) {
      std::vector<std::optional<int64_t>> k, v;
      std::vector<std::optional<std::string>> t;
      for (int64_t i = b; i < b + 30000; ++i) {
        if (i % 101 == 7) {
          k.push_back(std::nullopt);
        } else {
          k.push_back(sparse ? static_cast<int64_t>(SplitMix64(i % 120000)) : i % 90000);
        }
        v.push_back(i);
        t.push_back(text_of(i));
      }
      batches.push_back(Batch(
          schema, {Int64Array(f.pool.get(), k), Int64Array(f.pool.get(), v), StringArray(f.pool.get(), t, false)}));
    }
    auto o = Opts();
    o.keep_null_keys = sparse;
    o.with_ordinals = sparse;
    auto serial = LongHashedRelation::Build(*schema, batches, o, f.tmm.get());
    ASSERT_OK(serial);
    o.parallelism = OnThreads(3);
    auto conc = LongHashedRelation::Build(*schema, batches, o, f.tmm.get());
    ASSERT_OK(conc);
    ExpectSameRelation(**serial, **conc, batches);
    // Every stored row's (v, s) pair is the input's.
    std::vector<const uint8_t*> rows;
    (*conc)->ForEachRow([&](const uint8_t* r) { rows.push_back(r); });
    ASSERT_EQ(static_cast<int64_t>(rows.size()), (*conc)->stats().stored_rows);
    const RowLayout& l = (*conc)->layout();
    auto vs = GatherField(l, 1, rows.data(), static_cast<int64_t>(rows.size()), f.pool.get());
    auto ts = GatherField(l, 2, rows.data(), static_cast<int64_t>(rows.size()), f.pool.get());
    ASSERT_OK(vs);
    ASSERT_OK(ts);
    const auto* v = reinterpret_cast<const int64_t*>((*vs)->buffers[1]->data()) + (*vs)->offset;
    const auto* offsets = reinterpret_cast<const int32_t*>((*ts)->buffers[1]->data()) + (*ts)->offset;
    const auto* chars = reinterpret_cast<const char*>((*ts)->buffers[2]->data());
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::optional<std::string> want = text_of(v[i]);
      ASSERT_EQ((*ts)->IsValid(static_cast<int64_t>(i)), want.has_value()) << "v " << v[i];
      if (want) {
        ASSERT_EQ(std::string(chars + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i])), *want)
            << "v " << v[i];
      }
    }
    (*conc)->Close();
  }
}

TEST(LongRelation, ConcurrentBuildPastItsEstimateIndexesAgainSerially) {
  // A distinct-key hint far too low: the partitions pass their growth
  // load, and the build indexes every row again on the calling thread,
  // growing the index; the answer is the serial build's.
  Fixture f(MemoryMode::kOffHeap);
  auto batches = FixedBatches(f.pool.get(), 200000, 50000,
                              [](int64_t i) { return std::optional<int64_t>(SplitMix64(i % 160000)); });
  auto o = Opts();
  o.distinct_keys_hint = 12000;
  auto serial = LongHashedRelation::Build(*FixedKV(), batches, o, f.tmm.get());
  ASSERT_OK(serial);
  o.parallelism = OnThreads(2);
  auto conc = LongHashedRelation::Build(*FixedKV(), batches, o, f.tmm.get());
  ASSERT_OK(conc);
  EXPECT_GT((*conc)->stats().grow_count, 0);
  ExpectSameRelation(**serial, **conc, batches);
}

TEST(LongRelation, ConcurrentBuildErrorsComeBack) {
  // An error of the lent parallel_for ends the build with it, nothing kept.
  Fixture f(MemoryMode::kOnHeap);
  auto batches = FixedBatches(f.pool.get(), 200000, 50000, [](int64_t i) { return std::optional<int64_t>(i * 3); });
  auto o = Opts();
  o.parallelism.tasks = 2;
  o.parallelism.parallel_for = [](int, const std::function<Status(int)>&) {
    return Status::Cancelled("statement cancelled");
  };
  const int64_t before = f.pool->held_bytes();
  auto rel = LongHashedRelation::Build(*FixedKV(), batches, o, f.tmm.get());
  ASSERT_FALSE(rel.ok());
  EXPECT_EQ(rel.status().code(), StatusCode::kCancelled) << rel.status().ToString();
  EXPECT_EQ(f.pool->held_bytes(), before);
}

}  // namespace
}  // namespace quiver::join

namespace quiver::join {
namespace {

TEST(LongRelation, LowDistinctHintGrowsTheIndex) {
  for (MemoryMode mode : {MemoryMode::kOnHeap, MemoryMode::kOffHeap}) {
    Fixture f(mode);
    std::vector<std::optional<int64_t>> keys;
    for (int64_t i = 0; i < 20000; ++i) keys.push_back((i % 5000) * 2654435761LL);
    auto o = Opts();
    o.distinct_keys_hint = 10;
    auto rel = LongHashedRelation::Build(*KV(), {MakeKeys(f.pool.get(), keys)}, o, f.tmm.get());
    ASSERT_OK(rel);
    EXPECT_GT((*rel)->stats().grow_count, 3);
    EXPECT_EQ((*rel)->stats().num_keys, 5000);
    for (int64_t i = 0; i < 5000; ++i) {
      int64_t n = 0;
      for (const uint8_t* r = (*rel)->Find(i * 2654435761LL); r; r = RowLayout::Next(r)) ++n;
      ASSERT_EQ(n, 4) << i;
    }
    EXPECT_EQ((*rel)->Find(7), nullptr);
    auto bytes = (*rel)->Serialize(f.pool.get());
    ASSERT_OK(bytes);
    auto back = DeserializeHashedRelation(*KV(), **bytes, f.tmm.get());
    ASSERT_OK(back);
  }
}

}  // namespace
}  // namespace quiver::join
