// Differential tests of HashJoin against a naive nested-loop join on random
// inputs (duplicates, nulls, empty sides, keys INT64_MIN, -1, 0,
// INT64_MAX, the dense range 1,000,000..1,001,023), for every join type,
// in both memory modes (which must give identical output); broadcast,
// shuffled and serialized use; output bounds; failure injection.
#include "quiver/join/hash_join.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "quiver/join/long_hashed_relation.h"
#include "quiver/join/tests/join_test_util.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::join {
namespace {

using testing::AllJoinTypes;
using testing::Batch;
using testing::Collector;
using testing::Int32Array;
using testing::Int64Array;
using testing::NaiveJoin;
using testing::RenderSorted;
using testing::StringArray;

constexpr int64_t kMinKey = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxKey = std::numeric_limits<int64_t>::max();

enum class KeyDist { kSpecial, kDense, kSparse, kSmall };

const char* KeyDistName(KeyDist d) {
  switch (d) {
    case KeyDist::kSpecial: return "Special";
    case KeyDist::kDense: return "Dense";
    case KeyDist::kSparse: return "Sparse";
    case KeyDist::kSmall: return "Small";
  }
  return "?";
}

struct Case {
  KeyDist dist;
  int64_t build_rows;
  int64_t probe_rows;
  double null_fraction;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::string(KeyDistName(c.dist)) + "_b" + std::to_string(c.build_rows) + "_p" + std::to_string(c.probe_rows) +
         "_n" + std::to_string(static_cast<int>(c.null_fraction * 100));
}

struct Inputs {
  SchemaPtr build_schema, probe_schema;
  std::vector<RecordBatchPtr> build, probe;
};

// A key pool per distribution; rows draw from it with replacement, so keys
// repeat (duplicates) and some probe keys miss.
std::vector<int64_t> KeyPool(KeyDist d, std::mt19937_64& rng) {
  std::vector<int64_t> pool;
  switch (d) {
    case KeyDist::kSpecial: pool = {kMinKey, kMinKey + 1, -1, 0, 1, kMaxKey - 1, kMaxKey, 42, -42}; break;
    case KeyDist::kDense:
      for (int64_t k = 1000000; k <= 1001023; ++k) pool.push_back(k);
      break;
    case KeyDist::kSparse:
      for (int i = 0; i < 400; ++i) pool.push_back(static_cast<int64_t>(rng()));
      pool.push_back(kMinKey);
      pool.push_back(kMaxKey);
      break;
    case KeyDist::kSmall:
      for (int64_t k = 0; k < 30; ++k) pool.push_back(k);
      break;
  }
  return pool;
}

Inputs MakeInputs(MemoryPool* pool, const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto keys = KeyPool(c.dist, rng);
  auto key = [&]() -> std::optional<int64_t> {
    if (std::uniform_real_distribution<double>(0, 1)(rng) < c.null_fraction) return std::nullopt;
    return keys[rng() % keys.size()];
  };
  Inputs in;
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("bk", int64()), field("bv", int64()), field("bs", utf8())};
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("pv", int32()), field("pk", int64()), field("ps", utf8())};
  in.build_schema = bs;
  in.probe_schema = ps;
  std::vector<std::optional<int64_t>> bk, bv;
  std::vector<std::optional<std::string>> bstr;
  for (int64_t i = 0; i < c.build_rows; ++i) {
    bk.push_back(key());
    bv.push_back(rng() % 5 == 0 ? std::optional<int64_t>() : std::optional<int64_t>(i));
    bstr.push_back(rng() % 6 == 0 ? std::optional<std::string>() : testing::Cat("b", std::to_string(i * 37 % 1000)));
  }
  std::vector<std::optional<int64_t>> pk;
  std::vector<std::optional<int32_t>> pv;
  std::vector<std::optional<std::string>> pstr;
  for (int64_t i = 0; i < c.probe_rows; ++i) {
    pk.push_back(key());
    pv.push_back(static_cast<int32_t>(i));
    pstr.push_back(rng() % 4 == 0 ? std::optional<std::string>()
                                  : testing::Cat("p", std::string(static_cast<size_t>(i % 9), 'x')));
  }
  auto b = Batch(bs, {Int64Array(pool, bk), Int64Array(pool, bv), StringArray(pool, bstr)});
  auto p = Batch(ps, {Int32Array(pool, pv), Int64Array(pool, pk), StringArray(pool, pstr)});
  in.build = testing::Split(b, std::max<int64_t>(1, c.build_rows / 3 + 1));
  in.probe = testing::Split(p, std::max<int64_t>(1, c.probe_rows / 4 + 1));
  return in;
}

HashJoinOptions JoinOptions(JoinType t, MemoryPool* out_pool) {
  HashJoinOptions o;
  o.type = t;
  o.build_keys = {0};
  o.probe_keys = {1};
  o.output_pool = out_pool;
  return o;
}

Result<std::vector<std::string>> RunJoin(const Inputs& in, const HashJoinOptions& o, MemoryMode mode,
                                         MemoryPool* task_pool) {
  TaskMemoryOptions to;
  to.mode = mode;
  TaskMemoryManager tmm(task_pool, to);
  QUIVER_ASSIGN_OR_RETURN(auto join, HashJoin::Make(in.build_schema, in.probe_schema, o));
  Collector c;
  QUIVER_RETURN_NOT_OK(RunHashJoin(*join, in.build, in.probe, &tmm, c.sink()));
  for (const auto& b : c.batches) {
    EXPECT_LE(b->num_rows, o.max_output_rows);
    EXPECT_TRUE(b->schema->Equals(*join->output_schema()));
  }
  EXPECT_EQ(tmm.held_bytes(), 0);
  return RenderSorted(c.batches);
}

class HashJoinDifferential : public ::testing::TestWithParam<Case> {};

TEST_P(HashJoinDifferential, EveryJoinTypeMatchesTheNaiveJoinInBothModes) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const Case c = GetParam();
  for (uint64_t seed : {1u, 2u}) {
    const Inputs in = MakeInputs(data.get(), c, seed * 1000 + static_cast<uint64_t>(c.dist));
    for (JoinType t : AllJoinTypes()) {
      SCOPED_TRACE(std::string(JoinTypeName(t)) + " seed " + std::to_string(seed));
      auto root = MemoryPool::MakeRoot({.name = "root"});
      auto out = root->MakeChild({.name = "out"});
      auto task = root->MakeChild({.name = "task"});
      HashJoinOptions o = JoinOptions(t, out.get());
      if (seed == 2) {
        o.max_output_rows = 7;  // many small batches, chains split across them
        o.probe_output = std::vector<int>{2, 1};
        o.build_output = std::vector<int>{1};
      }
      const auto want = NaiveJoin(*in.build_schema, in.build, *in.probe_schema, in.probe, o);
      auto on = RunJoin(in, o, MemoryMode::kOnHeap, task.get());
      ASSERT_OK(on);
      auto off = RunJoin(in, o, MemoryMode::kOffHeap, task.get());
      ASSERT_OK(off);
      ASSERT_EQ(*on, want);
      ASSERT_EQ(*off, *on);
      EXPECT_EQ(root->held_bytes(), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Random, HashJoinDifferential,
                         ::testing::Values(Case{KeyDist::kSpecial, 0, 0, 0.0}, Case{KeyDist::kSpecial, 0, 40, 0.2},
                                           Case{KeyDist::kSpecial, 40, 0, 0.2}, Case{KeyDist::kSpecial, 1, 1, 0.0},
                                           Case{KeyDist::kSpecial, 60, 80, 0.1}, Case{KeyDist::kSpecial, 50, 50, 1.0},
                                           Case{KeyDist::kDense, 700, 900, 0.05}, Case{KeyDist::kDense, 2000, 600, 0.0},
                                           Case{KeyDist::kSparse, 300, 500, 0.1},
                                           Case{KeyDist::kSparse, 1500, 1000, 0.0},
                                           Case{KeyDist::kSmall, 200, 300, 0.15}, Case{KeyDist::kSmall, 5, 400, 0.3}),
                         CaseName);

// Null-aware anti join, case by case.
TEST(HashJoin, NullAwareAntiSemantics) {
  auto pool = MemoryPool::MakeRoot({.name = "root"});
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("k", int64())};
  auto ps = bs;
  auto run = [&](std::vector<std::optional<int64_t>> build, std::vector<std::optional<int64_t>> probe) {
    Inputs in{bs, ps, {Batch(bs, {Int64Array(pool.get(), build)})}, {Batch(ps, {Int64Array(pool.get(), probe)})}};
    HashJoinOptions o = JoinOptions(JoinType::kNullAwareAnti, pool.get());
    o.probe_keys = {0};
    auto r = RunJoin(in, o, MemoryMode::kOffHeap, pool.get());
    EXPECT_OK(r);
    return *r;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(run({}, {1, std::nullopt, 2}), (V{"1", "2", "null"}));  // empty build: everything
  EXPECT_EQ(run({1, std::nullopt}, {1, std::nullopt, 2}), V{});     // a null build key: nothing
  EXPECT_EQ(run({1, 3}, {1, std::nullopt, 2}), V{"2"});             // null probe keys dropped
}

TEST(HashJoin, PlanErrorsNameTheColumns) {
  auto pool = MemoryPool::MakeRoot({.name = "root"});
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("a", utf8()), field("b", int64()), field("c", uint64())};
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("x", int64()), field("y", list(field("item", int32())))};
  HashJoinOptions o;
  o.output_pool = pool.get();
  o.build_keys = {0};
  o.probe_keys = {0};
  auto r = HashJoin::Make(bs, ps, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "key columns 'a' (utf8) and 'x' (int64) cannot be compared");
  o.build_keys = {2};
  r = HashJoin::Make(bs, ps, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("above INT64_MAX"), std::string::npos);
  o.build_keys = {1};
  r = HashJoin::Make(bs, ps, o);  // probe column y (a list) cannot be output
  ASSERT_RAISES(NotImplemented, r);
  EXPECT_NE(r.status().message().find("probe column 'y'"), std::string::npos);
  o.probe_output = std::vector<int>{0};
  EXPECT_OK(HashJoin::Make(bs, ps, o));
  o.build_keys = {7};
  EXPECT_TRUE(HashJoin::Make(bs, ps, o).status().IsInvalid());
  o.build_keys = {1, 1};
  o.probe_keys = {0, 0};
  o.type = JoinType::kNullAwareAnti;
  EXPECT_NE(HashJoin::Make(bs, ps, o).status().message().find("exactly one key"), std::string::npos);
}

TEST(HashJoin, OutputBatchesAreBoundedByRowsAndBytes) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const Inputs in = MakeInputs(data.get(), Case{KeyDist::kSmall, 300, 300, 0.0}, 9);
  for (int64_t max_bytes : {int64_t{64}, int64_t{1000}, int64_t{5000}}) {
    auto root = MemoryPool::MakeRoot({.name = "root"});
    HashJoinOptions o = JoinOptions(JoinType::kFullOuter, root.get());
    o.max_output_bytes = max_bytes;
    o.max_output_rows = 50;
    TaskMemoryManager tmm(root.get(), {});
    auto join = HashJoin::Make(in.build_schema, in.probe_schema, o);
    ASSERT_OK(join);
    Collector c;
    ASSERT_OK(RunHashJoin(**join, in.build, in.probe, &tmm, c.sink()));
    ASSERT_GT(c.batches.size(), 2u);
    for (const auto& b : c.batches) {
      EXPECT_LE(b->num_rows, 50);
      int64_t bytes = 0;
      for (const auto& col : b->columns) bytes += col->TotalBufferBytes();
      if (b->num_rows > 1) {
        EXPECT_LE(bytes, max_bytes + 16 * static_cast<int64_t>(b->columns.size())) << b->num_rows;
      }
    }
    EXPECT_EQ(RenderSorted(c.batches), NaiveJoin(*in.build_schema, in.build, *in.probe_schema, in.probe, o));
  }
}

// Broadcast: one relation built once, serialized and shipped, probed
// read-only from several threads; matched sets merged for the outer rows.
TEST(HashJoin, BroadcastFromSeveralThreads) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const Inputs in = MakeInputs(data.get(), Case{KeyDist::kSmall, 400, 2000, 0.1}, 21);
  std::vector<RecordBatchPtr> probe;
  for (const auto& b : in.probe) {
    for (auto& piece : testing::Split(b, 97)) probe.push_back(piece);
  }
  for (JoinType t : AllJoinTypes()) {
    for (bool shipped : {false, true}) {
      SCOPED_TRACE(std::string(JoinTypeName(t)) + (shipped ? " shipped" : ""));
      auto root = MemoryPool::MakeRoot({.name = "root"});
      HashJoinOptions o = JoinOptions(t, root.get());
      auto join = HashJoin::Make(in.build_schema, in.probe_schema, o);
      ASSERT_OK(join);
      TaskMemoryManager driver(root.get(), {});
      auto rel = (*join)->BuildRelation(in.build, &driver);
      ASSERT_OK(rel);
      std::shared_ptr<HashedRelation> relation = *rel;
      TaskMemoryOptions wo;
      wo.mode = MemoryMode::kOffHeap;
      TaskMemoryManager worker(root.get(), wo);
      if (shipped) {
        auto bytes = relation->Serialize(root.get());
        ASSERT_OK(bytes);
        relation->Close();
        auto loaded = (*join)->LoadRelation(**bytes, &worker);
        ASSERT_OK(loaded);
        relation = *loaded;
      }
      constexpr int kThreads = 4;
      std::vector<std::unique_ptr<HashJoinProbe>> probes;
      std::vector<Collector> outs(kThreads);
      for (int i = 0; i < kThreads; ++i) {
        auto p = (*join)->MakeProbe(relation);
        ASSERT_OK(p);
        probes.push_back(std::move(*p));
      }
      std::vector<std::thread> threads;
      std::vector<Status> results(kThreads);
      for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
          for (size_t b = i; b < probe.size(); b += kThreads) {
            Status st = probes[i]->Probe(*probe[b], outs[i].sink());
            if (!st.ok()) {
              results[i] = st;
              return;
            }
          }
        });
      }
      for (auto& th : threads) th.join();
      for (const auto& st : results) ASSERT_OK(st);
      for (int i = 1; i < kThreads; ++i) ASSERT_OK(probes[0]->MergeMatched(*probes[i]));
      ASSERT_OK(probes[0]->Finish(outs[0].sink()));
      std::vector<RecordBatchPtr> all;
      for (auto& c : outs) all.insert(all.end(), c.batches.begin(), c.batches.end());
      EXPECT_EQ(RenderSorted(all), NaiveJoin(*in.build_schema, in.build, *in.probe_schema, in.probe, o));
      probes.clear();
      relation->Close();
      all.clear();
      outs.clear();
      EXPECT_EQ(worker.held_bytes(), 0);
      EXPECT_EQ(driver.held_bytes(), 0);
    }
  }
}

// Shuffled: both sides partitioned by key, one relation per partition,
// closed when its partition is done; the union is the whole join.
TEST(HashJoin, ShuffledPartitions) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const Inputs in = MakeInputs(data.get(), Case{KeyDist::kSparse, 800, 1200, 0.1}, 33);
  constexpr int kParts = 4;
  auto partition = [&](const std::vector<RecordBatchPtr>& batches, int key, const SchemaPtr& schema) {
    std::vector<std::vector<RecordBatchPtr>> parts(kParts);
    for (const auto& b : batches) {
      for (int64_t i = 0; i < b->num_rows; ++i) {
        const ArrayData& k = *b->columns[key];
        int p = 0;
        if (k.IsValid(i)) {
          int64_t v;
          std::memcpy(&v, k.buffers[1]->data() + (k.offset + i) * 8, 8);
          p = static_cast<int>(HashInt64(v) >> 62);
        }
        parts[p].push_back(*SliceBatch(b, i, 1));
      }
    }
    (void)schema;
    return parts;
  };
  const auto bparts = partition(in.build, 0, in.build_schema);
  const auto pparts = partition(in.probe, 1, in.probe_schema);
  for (JoinType t : AllJoinTypes()) {
    if (t == JoinType::kNullAwareAnti) continue;  // needs the whole build side for its null rule
    SCOPED_TRACE(JoinTypeName(t));
    auto root = MemoryPool::MakeRoot({.name = "root"});
    HashJoinOptions o = JoinOptions(t, root.get());
    auto join = HashJoin::Make(in.build_schema, in.probe_schema, o);
    ASSERT_OK(join);
    TaskMemoryOptions to;
    to.mode = MemoryMode::kOffHeap;
    TaskMemoryManager tmm(root.get(), to);
    Collector c;
    for (int p = 0; p < kParts; ++p) {
      int64_t peak_before = tmm.held_bytes();
      ASSERT_OK(RunHashJoin(**join, bparts[p], pparts[p], &tmm, c.sink()));
      EXPECT_EQ(tmm.held_bytes(), peak_before);  // the partition's relation was closed
    }
    EXPECT_EQ(RenderSorted(c.batches), NaiveJoin(*in.build_schema, in.build, *in.probe_schema, in.probe, o));
  }
}

TEST(HashJoin, FailureInjectionDuringTheJoin) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const Inputs in = MakeInputs(data.get(), Case{KeyDist::kSmall, 300, 500, 0.1}, 5);
  for (MemoryMode mode : {MemoryMode::kOnHeap, MemoryMode::kOffHeap}) {
    HashJoinOptions probe_o;
    probe_o.type = JoinType::kFullOuter;
    probe_o.build_keys = {0};
    probe_o.probe_keys = {1};
    probe_o.max_output_rows = 64;
    int64_t n = 1;
    for (;; ++n) {
      auto root = MemoryPool::MakeRoot({.name = "root"});
      probe_o.output_pool = root.get();
      auto join = HashJoin::Make(in.build_schema, in.probe_schema, probe_o);
      ASSERT_OK(join);
      TaskMemoryOptions to;
      to.mode = mode;
      TaskMemoryManager tmm(root.get(), to);
      root->InjectFailureAt(n);
      Collector c;
      Status st = RunHashJoin(**join, in.build, in.probe, &tmm, c.sink());
      c.batches.clear();
      ASSERT_EQ(root->held_bytes(), 0) << n;
      if (st.ok()) break;
      ASSERT_TRUE(st.IsOutOfMemory()) << st.ToString();
      ASSERT_LT(n, 5000);
    }
    EXPECT_GT(n, 10);
  }
}

TEST(HashJoin, OtherIntegerWidthsUseTheLongRelation) {
  auto pool = MemoryPool::MakeRoot({.name = "root"});
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("k", int32())};
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("k", int64())};
  auto build = Batch(bs, {Int32Array(pool.get(), {1, 2, std::nullopt, -7, 2})});
  auto probe = Batch(ps, {Int64Array(pool.get(), {2, -7, int64_t{1} << 40, std::nullopt, 1})});
  HashJoinOptions o = JoinOptions(JoinType::kInner, pool.get());
  o.probe_keys = {0};
  auto join = HashJoin::Make(bs, ps, o);
  ASSERT_OK(join);
  TaskMemoryManager tmm(pool.get(), {});
  auto rel = (*join)->BuildRelation({build}, &tmm);
  ASSERT_OK(rel);
  EXPECT_EQ((*rel)->kind(), RelationKind::kLong);
  Inputs in{bs, ps, {build}, {probe}};
  auto r = RunJoin(in, o, MemoryMode::kOnHeap, pool.get());
  ASSERT_OK(r);
  EXPECT_EQ(*r, (std::vector<std::string>{"-7|-7", "1|1", "2|2", "2|2"}));
}

}  // namespace
}  // namespace quiver::join

namespace quiver::join {
namespace {

TEST(HashJoin, DictionaryColumnsAreDecoded) {
  auto pool = MemoryPool::MakeRoot({.name = "root"});
  auto dict_type = dictionary(int32(), utf8());
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("name", dict_type), field("v", int64())};
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("name", large_utf8())};
  auto idx = std::const_pointer_cast<ArrayData>(testing::Int32Array(pool.get(), {0, 1, std::nullopt, 1, 2}));
  idx->type = dict_type;
  idx->dictionary = testing::StringArray(pool.get(), {"ann", "bob", "cy"});
  auto build = testing::Batch(bs, {idx, testing::Int64Array(pool.get(), {10, 11, 12, 13, 14})});
  auto probe = testing::Batch(ps, {testing::StringArray(pool.get(), {"bob", "cy", "dan", std::nullopt}, true)});
  HashJoinOptions o;
  o.type = JoinType::kLeftOuter;
  o.build_keys = {0};
  o.probe_keys = {0};
  o.output_pool = pool.get();
  auto join = HashJoin::Make(bs, ps, o);
  ASSERT_OK(join);
  EXPECT_EQ((*join)->output_schema()->fields[1]->type->id, TypeId::kUtf8);
  TaskMemoryManager tmm(pool.get(), {});
  testing::Collector c;
  ASSERT_OK(RunHashJoin(**join, {build}, {probe}, &tmm, c.sink()));
  EXPECT_EQ(testing::RenderSorted(c.batches),
            (std::vector<std::string>{"bob|bob|11", "bob|bob|13", "cy|cy|14", "dan|null|null", "null|null|null"}));
}

}  // namespace
}  // namespace quiver::join

namespace quiver::join {
namespace {

using testing::Batch;
using testing::Collector;
using testing::Int64Array;
using testing::NaiveJoin;
using testing::RenderSorted;

// The pull API (Start / NextOutput) against the naive join, for every join
// type, with variable-width output (Emit's byte bound) and fixed-width
// output (PushPair), with an output bound small enough that duplicate
// chains are cut in the middle.
TEST(HashJoin, PullProbeMatchesTheNaiveJoinForEveryType) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const Inputs in = MakeInputs(data.get(), Case{KeyDist::kSmall, 200, 300, 0.1}, 17);
  for (JoinType t : AllJoinTypes()) {
    for (bool fixed : {false, true}) {
      auto root = MemoryPool::MakeRoot({.name = "root"});
      HashJoinOptions o = JoinOptions(t, root.get());
      o.max_output_rows = 7;
      if (fixed) {
        o.build_output = std::vector<int>{0, 1};
        o.probe_output = std::vector<int>{0, 1};
      }
      TaskMemoryManager tmm(root.get(), {});
      auto join = HashJoin::Make(in.build_schema, in.probe_schema, o);
      ASSERT_OK(join);
      auto relation = (*join)->BuildRelation(in.build, &tmm);
      ASSERT_OK(relation);
      auto probe = (*join)->MakeProbe(*relation);
      ASSERT_OK(probe);
      Collector c;
      for (const auto& b : in.probe) {
        ASSERT_OK((*probe)->Start(b));
        EXPECT_FALSE((*probe)->Start(b).ok()) << "Start before the previous batch was drained";
        for (;;) {
          auto out = (*probe)->NextOutput();
          ASSERT_OK(out);
          if (*out == nullptr) break;
          ASSERT_GT((*out)->num_rows, 0);
          ASSERT_LE((*out)->num_rows, 7);
          c.batches.push_back(*out);
        }
        auto again = (*probe)->NextOutput();
        ASSERT_OK(again);
        EXPECT_EQ(*again, nullptr) << "the end stays the end";
      }
      ASSERT_OK((*probe)->Finish(c.sink()));
      EXPECT_EQ(RenderSorted(c.batches), NaiveJoin(*in.build_schema, in.build, *in.probe_schema, in.probe, o))
          << JoinTypeName(t) << (fixed ? " fixed" : " var");
      c.batches.clear();
      probe->reset();
      (*relation)->Close();
    }
  }
}

// A key with 3 values (as l_returnflag): every probe row matches a third of
// the build side, so one probe batch makes millions of output rows. Each
// NextOutput returns at most max_output_rows of them and the output pool
// never holds more than a couple of batches; the totals equal Probe's; a
// probe dropped in the middle of a batch (a cancelled statement) returns
// everything.
TEST(HashJoin, ThreeValueKeyPullsBoundedOutput) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  constexpr int64_t kBuild = 3000, kProbe = 3000, kMaxRows = 4096;
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("bk", int64()), field("bv", int64())};
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("pk", int64()), field("pv", int64())};
  std::vector<std::optional<int64_t>> bk, bv, pk, pv;
  for (int64_t i = 0; i < kBuild; ++i) {
    bk.push_back(i % 3);
    bv.push_back(i);
  }
  for (int64_t i = 0; i < kProbe; ++i) {
    pk.push_back(i % 3);
    pv.push_back(i);
  }
  auto build = Batch(bs, {Int64Array(data.get(), bk), Int64Array(data.get(), bv)});
  auto probe_batch = Batch(ps, {Int64Array(data.get(), pk), Int64Array(data.get(), pv)});
  constexpr int64_t kExpectedRows = kProbe * (kBuild / 3);  // 3,000,000

  auto root = MemoryPool::MakeRoot({.name = "root"});
  auto out_pool = root->MakeChild({.name = "output"});
  HashJoinOptions o;
  o.build_keys = {0};
  o.probe_keys = {0};
  o.max_output_rows = kMaxRows;
  o.output_pool = out_pool.get();
  auto join = HashJoin::Make(bs, ps, o);
  ASSERT_OK(join);
  TaskMemoryManager tmm(root.get(), {});
  auto relation = (*join)->BuildRelation({build}, &tmm);
  ASSERT_OK(relation);

  // Pulled: bounded per call; the sum of the values checks every pair.
  int64_t pulled_rows = 0, pulled_sum = 0, calls = 0;
  {
    auto probe = (*join)->MakeProbe(*relation);
    ASSERT_OK(probe);
    const int64_t base = out_pool->held_bytes();
    out_pool->ResetPeak();
    ASSERT_OK((*probe)->Start(probe_batch));
    for (;;) {
      auto out = (*probe)->NextOutput();
      ASSERT_OK(out);
      if (*out == nullptr) break;
      ++calls;
      ASSERT_LE((*out)->num_rows, kMaxRows);
      pulled_rows += (*out)->num_rows;
      for (int c = 0; c < 4; ++c) {
        const auto* v = (*out)->columns[c]->GetValues<int64_t>(1) + (*out)->columns[c]->offset;
        for (int64_t r = 0; r < (*out)->num_rows; ++r) pulled_sum += v[r];
      }
    }
    // One output batch is 4096 rows x 4 int64 columns = 128 KiB; the whole
    // probe batch's output would be 96 MB.
    EXPECT_LT(out_pool->peak_bytes() - base, int64_t{1} << 20) << "output of one probe batch was buffered";
  }
  EXPECT_EQ(pulled_rows, kExpectedRows);
  EXPECT_GE(calls, kExpectedRows / kMaxRows);

  // Pushed (Probe with a sink): the same totals.
  int64_t pushed_rows = 0, pushed_sum = 0;
  {
    auto probe = (*join)->MakeProbe(*relation);
    ASSERT_OK(probe);
    ASSERT_OK((*probe)->Probe(*probe_batch, [&](RecordBatchPtr b) {
      EXPECT_LE(b->num_rows, kMaxRows);
      pushed_rows += b->num_rows;
      for (int c = 0; c < 4; ++c) {
        const auto* v = b->columns[c]->GetValues<int64_t>(1) + b->columns[c]->offset;
        for (int64_t r = 0; r < b->num_rows; ++r) pushed_sum += v[r];
      }
      return Status::OK();
    }));
  }
  EXPECT_EQ(pushed_rows, pulled_rows);
  EXPECT_EQ(pushed_sum, pulled_sum);

  // Dropped after three batches: nothing stays charged to the output pool.
  const int64_t before = out_pool->held_bytes();
  {
    auto probe = (*join)->MakeProbe(*relation);
    ASSERT_OK(probe);
    ASSERT_OK((*probe)->Start(probe_batch));
    for (int i = 0; i < 3; ++i) {
      auto out = (*probe)->NextOutput();
      ASSERT_OK(out);
      ASSERT_NE(*out, nullptr);
    }
  }
  EXPECT_EQ(out_pool->held_bytes(), before);
  (*relation)->Close();
}

}  // namespace
}  // namespace quiver::join
