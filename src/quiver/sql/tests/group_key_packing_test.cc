// GROUP BY keys of several integer columns packed into 64 bits
// (execution/group_key_packing.h): the packing on its own (one word per key
// tuple across batches, NULL apart from every value, a value outside the
// first batch's widened ranges refused, types that do not pack), and SQL
// answers over batches whose ranges differ (the later ones past the first
// batch's fields, so their rows take the byte-encoded path into the same
// table) against counts and sums worked out here, at 1 and 2 threads.
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "quiver/sql/execution/group_key_packing.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql::testing {
namespace {

Vec VecOf(ArrayDataPtr a) {
  Vec v;
  v.array = std::move(a);
  return v;
}

TEST(GroupKeyPacking, OneWordPerKeyTupleAcrossBatches) {
  auto pool = MemoryPool::MakeRoot({"packing-test"});
  GroupKeyPacking packing;
  const std::vector<Vec> first = {VecOf(Int32Array(pool.get(), {1, 2, 1, std::nullopt, 12})),
                                  VecOf(Int64Array(pool.get(), {100, 100, 18000, 100, std::nullopt}))};
  ASSERT_TRUE(GroupKeyPacking::TypesPack(first));
  std::vector<uint64_t> a;
  ASSERT_TRUE(packing.Pack(first, 5, &a));
  // Five distinct tuples, five distinct words (NULL is none of the values).
  EXPECT_EQ(std::set<uint64_t>(a.begin(), a.end()).size(), 5u);
  // A later batch with the same tuples in another order, and values just
  // outside the first batch's ranges (the fields are widened): the same
  // words for the same tuples.
  const std::vector<Vec> later = {VecOf(Int32Array(pool.get(), {12, std::nullopt, 1, 0, 13})),
                                  VecOf(Int64Array(pool.get(), {std::nullopt, 100, 100, 99, 18001}))};
  std::vector<uint64_t> b;
  ASSERT_TRUE(packing.Pack(later, 5, &b));
  EXPECT_EQ(b[0], a[4]);
  EXPECT_EQ(b[1], a[3]);
  EXPECT_EQ(b[2], a[0]);
  EXPECT_EQ(std::set<uint64_t>({a[0], a[1], a[2], a[3], a[4], b[3], b[4]}).size(), 7u);
  // Far outside: refused, and the layout stays (the first batch packs alike).
  const std::vector<Vec> far = {VecOf(Int32Array(pool.get(), {1})),
                                VecOf(Int64Array(pool.get(), {std::numeric_limits<int64_t>::min()}))};
  EXPECT_FALSE(packing.Pack(far, 1, &b));
  const std::vector<Vec> far_up = {VecOf(Int32Array(pool.get(), {std::numeric_limits<int32_t>::max()})),
                                   VecOf(Int64Array(pool.get(), {100}))};
  EXPECT_FALSE(packing.Pack(far_up, 1, &b));
  ASSERT_TRUE(packing.Pack(first, 5, &b));
  EXPECT_EQ(a, b);
}

TEST(GroupKeyPacking, PackEncodedGivesTheWordOfTheTuple) {
  // The hash aggregate's fixed key layout: a validity byte, then the value's
  // 4 (INTEGER) or 8 (BIGINT) bytes, zeros for a NULL.
  auto encode = [](std::optional<int32_t> a, std::optional<int64_t> b) {
    std::vector<uint8_t> key(1 + 4 + 1 + 8, 0);
    if (a) {
      key[0] = 1;
      std::memcpy(key.data() + 1, &*a, 4);
    }
    if (b) {
      key[5] = 1;
      std::memcpy(key.data() + 6, &*b, 8);
    }
    return key;
  };
  auto pool = MemoryPool::MakeRoot({"packing-test"});
  GroupKeyPacking packing;
  uint64_t word = 0;
  const auto k = encode(1, 100);
  EXPECT_FALSE(packing.PackEncoded(k.data(), static_cast<uint32_t>(k.size()), &word));  // no layout yet
  const std::vector<Vec> keys = {VecOf(Int32Array(pool.get(), {1, 2, std::nullopt, 12})),
                                 VecOf(Int64Array(pool.get(), {100, std::nullopt, 18000, 100}))};
  std::vector<uint64_t> packed;
  ASSERT_TRUE(packing.Pack(keys, 4, &packed));
  const std::vector<std::vector<uint8_t>> encoded = {encode(1, 100), encode(2, std::nullopt),
                                                     encode(std::nullopt, 18000), encode(12, 100)};
  for (size_t r = 0; r < encoded.size(); ++r) {
    ASSERT_TRUE(packing.PackEncoded(encoded[r].data(), static_cast<uint32_t>(encoded[r].size()), &word)) << r;
    EXPECT_EQ(word, packed[r]) << r;
  }
  // A tuple outside the fields: no row of this layout holds it.
  const auto far = encode(1, std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(packing.PackEncoded(far.data(), static_cast<uint32_t>(far.size()), &word));
  const auto low = encode(std::numeric_limits<int32_t>::min(), 100);
  EXPECT_FALSE(packing.PackEncoded(low.data(), static_cast<uint32_t>(low.size()), &word));
  // Another length is another layout's key.
  EXPECT_FALSE(packing.PackEncoded(k.data(), static_cast<uint32_t>(k.size() - 4), &word));
}

TEST(GroupKeyPacking, RefusesWideRangesAndOtherTypes) {
  auto pool = MemoryPool::MakeRoot({"packing-test"});
  // Two BIGINT columns spanning all of int64: 128 bits.
  GroupKeyPacking wide;
  const std::vector<Vec> keys = {
      VecOf(Int64Array(pool.get(), {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()})),
      VecOf(Int64Array(pool.get(), {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}))};
  std::vector<uint64_t> out;
  EXPECT_FALSE(wide.Pack(keys, 2, &out));
  // Refused once, refused after (even for narrow values).
  const std::vector<Vec> narrow = {VecOf(Int64Array(pool.get(), {1})), VecOf(Int64Array(pool.get(), {2}))};
  EXPECT_FALSE(wide.Pack(narrow, 1, &out));
  // One column, or a string among them: not this path.
  EXPECT_FALSE(GroupKeyPacking::TypesPack({VecOf(Int64Array(pool.get(), {1}))}));
  EXPECT_FALSE(
      GroupKeyPacking::TypesPack({VecOf(Int64Array(pool.get(), {1})), VecOf(StringArray(pool.get(), {"a"}, false))}));
}

class GroupKeyPackingSqlTest : public SqlTest {};

TEST_F(GroupKeyPackingSqlTest, GroupsEqualTheirCountsAcrossBatchesOfOtherRanges) {
  // wide(a INTEGER, b BIGINT, v BIGINT): batch 1 narrow, batch 2 past its
  // fields (and NULLs), batch 3 the first batch's tuples again.
  using Row = std::tuple<std::optional<int32_t>, std::optional<int64_t>, int64_t>;
  std::vector<std::vector<Row>> batches = {
      {{1, 10, 1}, {2, 10, 2}, {1, 11, 3}, {1, 10, 4}, {std::nullopt, 10, 5}},
      {{1, std::int64_t{1} << 62, 6},
       {-2000000000, 10, 7},
       {1, std::nullopt, 8},
       {std::nullopt, std::nullopt, 9},
       {2, 10, 10}},
      {{1, 10, 11}, {2, 10, 12}, {1, 11, 13}, {std::nullopt, 10, 14}, {1, std::int64_t{1} << 62, 15}}};
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("a", int32()), field("b", int64()), field("v", int64())};
  std::vector<RecordBatchPtr> parts;
  std::map<std::pair<std::optional<int32_t>, std::optional<int64_t>>, std::pair<int64_t, int64_t>> expect;
  for (const auto& rows : batches) {
    std::vector<std::optional<int32_t>> a;
    std::vector<std::optional<int64_t>> b, v;
    for (const auto& [x, y, z] : rows) {
      a.push_back(x);
      b.push_back(y);
      v.push_back(z);
      auto& e = expect[{x, y}];
      ++e.first;
      e.second += z;
    }
    parts.push_back(
        Batch(schema, {Int32Array(pool_.get(), a), Int64Array(pool_.get(), b), Int64Array(pool_.get(), v)}));
  }
  ASSERT_OK(catalog_->RegisterBatches("wide", schema, parts));
  std::vector<std::string> want;
  for (const auto& [k, e] : expect)
    want.push_back((k.first ? std::to_string(*k.first) : "null") + "|" +
                   (k.second ? std::to_string(*k.second) : "null") + "|" + std::to_string(e.first) + "|" +
                   std::to_string(e.second));
  std::sort(want.begin(), want.end());
  for (int threads : {1, 2}) {
    ExecuteOptions o = Options();
    o.threads = threads;
    auto r = Run("SELECT a, b, count(*), sum(v) FROM wide GROUP BY a, b", o);
    ASSERT_OK(r.status());
    EXPECT_EQ(Rows(*r), want) << threads << " threads";
  }
  // The same groups as a GROUP BY of their text (the byte-encoded path).
  auto r = Run("SELECT count(*) FROM (SELECT a::VARCHAR, b::VARCHAR FROM wide GROUP BY 1, 2) q");
  ASSERT_OK(r.status());
  EXPECT_EQ(Rows(*r), std::vector<std::string>{std::to_string(expect.size())});
}

TEST_F(GroupKeyPackingSqlTest, SeveralIntegerKeysOfTheFixtureEqualTheirTextGroups) {
  // t1: id BIGINT, k INTEGER (NULLs), dt DATE (NULLs), in batches of 7.
  const auto packed = Rows(*Run("SELECT k, dt, id % 3, count(*), sum(d) FROM t1 GROUP BY k, dt, id % 3"));
  const auto text =
      Rows(*Run("SELECT k, dt, id % 3, count(*), sum(d) FROM t1 GROUP BY k::VARCHAR, dt::VARCHAR, (id % 3)::VARCHAR, "
                "k, dt, id % 3"));
  ASSERT_GT(packed.size(), 10u);
  EXPECT_EQ(packed, text);
}

}  // namespace
}  // namespace quiver::sql::testing
