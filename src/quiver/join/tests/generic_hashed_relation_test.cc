// Tests of the generic hashed relation (multi-column, string, float and
// mixed-width integer keys) through the hash join, against the naive join.
#include "quiver/join/generic_hashed_relation.h"

#include <gtest/gtest.h>

#include <random>

#include "quiver/join/hash_join.h"
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

struct GenericInputs {
  SchemaPtr bs, ps;
  std::vector<RecordBatchPtr> build, probe;
};

// Build (a int32, s utf8, v int64) vs probe (s large_utf8, a int64, w int32).
GenericInputs MakeInputs(MemoryPool* pool, int64_t nb, int64_t np, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("a", int32()), field("s", utf8()), field("v", int64())};
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("s", large_utf8()), field("a", int64()), field("w", int32())};
  const std::vector<std::string> words = {"", "x", "apple", "apples", "a longer string than twelve bytes", "\xff\x01"};
  auto a = [&]() -> std::optional<int64_t> {
    if (rng() % 12 == 0) return std::nullopt;
    return static_cast<int64_t>(rng() % 7) - 3;
  };
  auto s = [&]() -> std::optional<std::string> {
    if (rng() % 15 == 0) return std::nullopt;
    return words[rng() % words.size()];
  };
  std::vector<std::optional<int32_t>> ba;
  std::vector<std::optional<std::string>> bstr, pstr;
  std::vector<std::optional<int64_t>> bv, pa;
  std::vector<std::optional<int32_t>> pw;
  for (int64_t i = 0; i < nb; ++i) {
    auto x = a();
    ba.push_back(x ? std::optional<int32_t>(static_cast<int32_t>(*x)) : std::nullopt);
    bstr.push_back(s());
    bv.push_back(i);
  }
  for (int64_t i = 0; i < np; ++i) {
    pstr.push_back(s());
    pa.push_back(a());
    pw.push_back(static_cast<int32_t>(i));
  }
  GenericInputs in{bs, ps, {}, {}};
  in.build = testing::Split(Batch(bs, {Int32Array(pool, ba), StringArray(pool, bstr), Int64Array(pool, bv)}), 37);
  in.probe = testing::Split(Batch(ps, {StringArray(pool, pstr, true), Int64Array(pool, pa), Int32Array(pool, pw)}), 53);
  return in;
}

class GenericJoin : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(GenericJoin, MultiColumnKeysMatchTheNaiveJoinInBothModes) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const auto [nb, np] = GetParam();
  const GenericInputs in = MakeInputs(data.get(), nb, np, static_cast<uint64_t>(nb * 31 + np));
  for (JoinType t : AllJoinTypes()) {
    if (t == JoinType::kNullAwareAnti) continue;  // one key column only
    SCOPED_TRACE(JoinTypeName(t));
    HashJoinOptions o;
    o.type = t;
    o.build_keys = {0, 1};
    o.probe_keys = {1, 0};
    o.max_output_rows = 100;
    auto root = MemoryPool::MakeRoot({.name = "root"});
    o.output_pool = root.get();
    const auto want = NaiveJoin(*in.bs, in.build, *in.ps, in.probe, o);
    std::vector<std::string> got[2];
    for (int m = 0; m < 2; ++m) {
      TaskMemoryOptions to;
      to.mode = m == 0 ? MemoryMode::kOnHeap : MemoryMode::kOffHeap;
      TaskMemoryManager tmm(root.get(), to);
      auto join = HashJoin::Make(in.bs, in.ps, o);
      ASSERT_OK(join);
      Collector c;
      auto rel = (*join)->BuildRelation(in.build, &tmm);
      ASSERT_OK(rel);
      EXPECT_EQ((*rel)->kind(), RelationKind::kGeneric);
      auto probe = (*join)->MakeProbe(*rel);
      ASSERT_OK(probe);
      for (const auto& b : in.probe) ASSERT_OK((*probe)->Probe(*b, c.sink()));
      ASSERT_OK((*probe)->Finish(c.sink()));
      got[m] = RenderSorted(c.batches);
    }
    ASSERT_EQ(got[0], want);
    ASSERT_EQ(got[1], got[0]);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, GenericJoin,
                         ::testing::Values(std::make_pair(0, 0), std::make_pair(0, 30), std::make_pair(30, 0),
                                           std::make_pair(200, 300), std::make_pair(1000, 700)));

TEST(GenericRelation, SerializeRoundTripAndCorruption) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  const GenericInputs in = MakeInputs(root.get(), 300, 0, 4);
  HashedRelationOptions o;
  o.key_columns = {0, 1};
  o.keep_null_keys = true;
  o.with_ordinals = true;
  std::vector<KeyColumnSpec> specs;
  for (int k : o.key_columns) {
    specs.push_back(*ResolveKeyPair(*in.bs->fields[k]->type, "", *in.bs->fields[k]->type, ""));
  }
  TaskMemoryManager tmm(root.get(), {});
  auto rel = GenericHashedRelation::Build(*in.bs, in.build, o, specs, &tmm);
  ASSERT_OK(rel);
  EXPECT_LE(static_cast<double>((*rel)->stats().index_bytes) / std::max<int64_t>(1, (*rel)->stats().num_keys),
            16.0 / 0.75 * 1.06 + 16);
  auto bytes = (*rel)->Serialize(root.get());
  ASSERT_OK(bytes);
  auto back = DeserializeHashedRelation(*in.bs, **bytes, &tmm);
  ASSERT_OK(back);
  auto again = (*back)->Serialize(root.get());
  ASSERT_OK(again);
  EXPECT_TRUE((*again)->Equals(**bytes));
  const Buffer& good = **bytes;
  for (int64_t i = 0; i < good.size(); i += 3) {
    auto copy = Buffer::CopyOf(root.get(), good.span());
    (*copy)->mutable_data()[i] ^= 0x5A;
    auto r = DeserializeHashedRelation(*in.bs, **copy, &tmm);
    if (!r.ok()) {
      EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
    }
  }
}

TEST(GenericRelation, FloatKeysNormalizeZeroAndNaN) {
  auto pool = MemoryPool::MakeRoot({.name = "root"});
  auto s = std::make_shared<Schema>();
  s->fields = {field("f", float64())};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto build = Batch(s, {testing::PrimitiveArray<double>(pool.get(), float64(), {0.0, nan, 1.5})});
  auto probe = Batch(s, {testing::PrimitiveArray<double>(pool.get(), float64(), {-0.0, -nan, 1.5, 2.0, std::nullopt})});
  HashJoinOptions o;
  o.type = JoinType::kLeftSemi;
  o.build_keys = {0};
  o.probe_keys = {0};
  o.output_pool = pool.get();
  auto join = HashJoin::Make(s, s, o);
  ASSERT_OK(join);
  TaskMemoryManager tmm(pool.get(), {});
  Collector c;
  ASSERT_OK(RunHashJoin(**join, {build}, {probe}, &tmm, c.sink()));
  int64_t rows = 0;
  for (const auto& b : c.batches) rows += b->num_rows;
  EXPECT_EQ(rows, 3);  // -0.0, NaN, 1.5
}

TEST(GenericRelation, FailureInjectionAndLimit) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  const GenericInputs in = MakeInputs(data.get(), 5000, 0, 8);
  HashedRelationOptions o;
  o.key_columns = {0, 1};
  o.max_page_bytes = 16 << 10;
  std::vector<KeyColumnSpec> specs = {KeyColumnSpec{}, KeyColumnSpec{KeyClass::kVarBytes, 4}};
  for (MemoryMode mode : {MemoryMode::kOnHeap, MemoryMode::kOffHeap}) {
    int64_t n = 1;
    for (;; ++n) {
      auto root = MemoryPool::MakeRoot({.name = "root"});
      TaskMemoryOptions to;
      to.mode = mode;
      TaskMemoryManager tmm(root.get(), to);
      if (mode == MemoryMode::kOnHeap) {
        root->InjectFailureAt(n);
      } else {
        tmm.InjectFailureAt(n);
      }
      auto rel = GenericHashedRelation::Build(*in.bs, in.build, o, specs, &tmm);
      if (rel.ok()) break;
      ASSERT_TRUE(rel.status().IsOutOfMemory());
      ASSERT_EQ(root->held_bytes(), 0);
      ASSERT_LT(n, 500);
    }
    EXPECT_GT(n, 2);
    auto root = MemoryPool::MakeRoot({.name = "root", .limit_bytes = 10000});
    TaskMemoryOptions to;
    to.mode = mode;
    TaskMemoryManager tmm(root.get(), to);
    auto rel = GenericHashedRelation::Build(*in.bs, in.build, o, specs, &tmm);
    ASSERT_RAISES(OutOfMemory, rel);
    EXPECT_NE(rel.status().message().find("bytes available"), std::string::npos);
    EXPECT_EQ(root->held_bytes(), 0);
  }
}

}  // namespace
}  // namespace quiver::join

namespace quiver::join {
namespace {

TEST(GenericRelation, LowDistinctHintGrowsTheIndex) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  const GenericInputs in = MakeInputs(root.get(), 3000, 0, 12);
  HashedRelationOptions o;
  o.key_columns = {0, 1};
  o.distinct_keys_hint = 2;
  std::vector<KeyColumnSpec> specs = {KeyColumnSpec{}, KeyColumnSpec{KeyClass::kVarBytes, 4}};
  TaskMemoryManager tmm(root.get(), {});
  auto rel = GenericHashedRelation::Build(*in.bs, in.build, o, specs, &tmm);
  ASSERT_OK(rel);
  EXPECT_GT((*rel)->stats().grow_count, 0);
  // Every build key finds a chain holding its row count.
  int64_t rows = 0;
  std::vector<const uint8_t*> heads(HashedRelation::kLookupChunk);
  for (const auto& b : in.build) {
    std::vector<const ArrayData*> keys = {b->columns[0].get(), b->columns[1].get()};
    (*rel)->Lookup(keys, 0, b->num_rows, heads.data());
    for (int64_t i = 0; i < b->num_rows; ++i) {
      const bool null_key = !b->columns[0]->IsValid(i) || !b->columns[1]->IsValid(i);
      ASSERT_EQ(heads[i] == nullptr, null_key) << i;
      rows += !null_key;
    }
  }
  EXPECT_EQ(rows, (*rel)->stats().stored_rows);
}

}  // namespace
}  // namespace quiver::join
