// HashJoinOptions::residual (inner joins): the pairs it drops never reach
// the output, the pairs it keeps come out as without it, whether the output
// is fixed-width (gathered chunk by chunk) or variable-width (bounded in
// bytes), with output batches cut inside duplicate chains; the residual sees
// only the columns it names.
#include <gtest/gtest.h>

#include "quiver/columnar/take.h"
#include "quiver/join/hash_join.h"
#include "quiver/join/tests/join_test_util.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::join {
namespace {

using testing::Batch;
using testing::Collector;
using testing::Int32Array;
using testing::Int64Array;
using testing::RenderSorted;
using testing::StringArray;

// Rows of `pairs` where the int32 column `a` is below the int64 column `b`
// (both not NULL).
std::vector<int64_t> Below(const RecordBatch& pairs, int a, int b) {
  const ArrayData& x = *pairs.columns[static_cast<size_t>(a)];
  const ArrayData& y = *pairs.columns[static_cast<size_t>(b)];
  std::vector<int64_t> keep;
  for (int64_t r = 0; r < pairs.num_rows; ++r)
    if (x.IsValid(r) && y.IsValid(r) && x.GetValues<int32_t>(1)[x.offset + r] < y.GetValues<int64_t>(1)[y.offset + r])
      keep.push_back(r);
  return keep;
}

TEST(HashJoinResidual, KeepsThePairsItPassesAndGathersOnlyThose) {
  auto data = MemoryPool::MakeRoot({.name = "data"});
  // probe (pv int32, pk int64, ps utf8), build (bk int64, bv int64, bs utf8):
  // keys 0..9 repeat (duplicate chains), some NULL values.
  auto ps = std::make_shared<Schema>();
  ps->fields = {field("pv", int32()), field("pk", int64()), field("ps", utf8())};
  auto bs = std::make_shared<Schema>();
  bs->fields = {field("bk", int64()), field("bv", int64()), field("bs", utf8())};
  std::vector<std::optional<int32_t>> pv;
  std::vector<std::optional<int64_t>> pk, bk, bv;
  std::vector<std::optional<std::string>> pstr, bstr;
  for (int i = 0; i < 400; ++i) {
    pv.push_back(i % 13 == 0 ? std::nullopt : std::optional<int32_t>(i % 50));
    pk.push_back(i % 10);
    pstr.push_back("p" + std::to_string(i));
  }
  for (int i = 0; i < 120; ++i) {
    bk.push_back(i % 10);
    bv.push_back(i % 11 == 0 ? std::nullopt : std::optional<int64_t>(i / 2));
    bstr.push_back(i % 7 == 0 ? std::nullopt : std::optional<std::string>("build-" + std::to_string(i)));
  }
  auto probe = testing::Split(
      Batch(ps, {Int32Array(data.get(), pv), Int64Array(data.get(), pk), StringArray(data.get(), pstr)}), 90);
  auto build = testing::Split(
      Batch(bs, {Int64Array(data.get(), bk), Int64Array(data.get(), bv), StringArray(data.get(), bstr)}), 50);
  for (bool fixed : {true, false}) {
    for (int64_t max_rows : {int64_t{7}, int64_t{1000}, int64_t{64} * 1024}) {
      auto root = MemoryPool::MakeRoot({.name = "root"});
      HashJoinOptions o;
      o.build_keys = {0};
      o.probe_keys = {1};
      o.output_pool = root.get();
      o.max_output_rows = max_rows;
      if (fixed) {
        o.probe_output = std::vector<int>{0, 1};
        o.build_output = std::vector<int>{0, 1};
      }
      const int bv_at = fixed ? 3 : 4;  // bv's output column
      // Without the residual, then filtered: the expected rows.
      TaskMemoryManager tmm(root.get(), {});
      auto plain = HashJoin::Make(bs, ps, o);
      ASSERT_OK(plain);
      Collector all;
      ASSERT_OK(RunHashJoin(**plain, build, probe, &tmm, all.sink()));
      std::vector<RecordBatchPtr> expected;
      int64_t all_rows = 0;
      for (const auto& b : all.batches) {
        all_rows += b->num_rows;
        const std::vector<int64_t> keep = Below(*b, 0, bv_at);
        auto taken = std::make_shared<RecordBatch>();
        taken->schema = b->schema;
        taken->num_rows = static_cast<int64_t>(keep.size());
        for (const auto& c : b->columns) {
          auto t = Take(*c, keep, root.get(), "column");
          ASSERT_OK(t);
          taken->columns.push_back(*t);
        }
        expected.push_back(taken);
      }
      int64_t calls = 0, seen = 0;
      o.residual_columns = {0, bv_at};
      o.residual = [&](const RecordBatch& pairs) -> Result<std::vector<int64_t>> {
        ++calls;
        seen += pairs.num_rows;
        for (size_t c = 0; c < pairs.columns.size(); ++c) {
          const bool named = static_cast<int>(c) == 0 || static_cast<int>(c) == bv_at;
          EXPECT_EQ(pairs.columns[c]->type->id == TypeId::kNull, !named) << c;
          EXPECT_EQ(pairs.columns[c]->length, pairs.num_rows);
        }
        return Below(pairs, 0, bv_at);
      };
      auto filtered = HashJoin::Make(bs, ps, o);
      ASSERT_OK(filtered);
      Collector got;
      ASSERT_OK(RunHashJoin(**filtered, build, probe, &tmm, got.sink()));
      for (const auto& b : got.batches) {
        EXPECT_GT(b->num_rows, 0);
        EXPECT_LE(b->num_rows, max_rows);
      }
      const auto want = RenderSorted(expected);
      EXPECT_EQ(RenderSorted(got.batches), want) << (fixed ? "fixed" : "var") << " max_rows " << max_rows;
      EXPECT_GT(want.size(), 100u);
      EXPECT_LT(static_cast<int64_t>(want.size()), all_rows);
      EXPECT_EQ(seen, all_rows) << "every pair is checked once";
      EXPECT_GT(calls, 0);
    }
  }
}

TEST(HashJoinResidual, OnlyInnerJoinsTakeOne) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  auto s = std::make_shared<Schema>();
  s->fields = {field("k", int64()), field("v", int64())};
  HashJoinOptions o;
  o.type = JoinType::kLeftOuter;
  o.build_keys = {0};
  o.probe_keys = {0};
  o.output_pool = root.get();
  o.residual_columns = {1};
  o.residual = [](const RecordBatch&) -> Result<std::vector<int64_t>> { return std::vector<int64_t>{}; };
  auto left = HashJoin::Make(s, s, o);
  ASSERT_FALSE(left.ok());
  EXPECT_NE(left.status().message().find("inner joins"), std::string::npos) << left.status().ToString();
  o.type = JoinType::kInner;
  o.residual_columns = {4};
  auto out_of_range = HashJoin::Make(s, s, o);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("residual"), std::string::npos);
}

// A residual that errors stops the join with its error.
TEST(HashJoinResidual, ItsErrorStopsTheJoin) {
  auto root = MemoryPool::MakeRoot({.name = "root"});
  auto s = std::make_shared<Schema>();
  s->fields = {field("k", int64()), field("v", int64())};
  auto b = Batch(s, {Int64Array(root.get(), {1, 2, 3}), Int64Array(root.get(), {4, 5, 6})});
  HashJoinOptions o;
  o.build_keys = {0};
  o.probe_keys = {0};
  o.output_pool = root.get();
  o.residual_columns = {1};
  o.residual = [](const RecordBatch&) -> Result<std::vector<int64_t>> { return Status::Invalid("division by zero"); };
  auto join = HashJoin::Make(s, s, o);
  ASSERT_OK(join);
  TaskMemoryManager tmm(root.get(), {});
  Collector c;
  Status st = RunHashJoin(**join, {b}, {b}, &tmm, c.sink());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("division by zero"), std::string::npos);
}

}  // namespace
}  // namespace quiver::join
