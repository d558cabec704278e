// Tests of quiver/datagen: determinism, batch cutting by bytes, validity,
// TPC-H value ranges and the bytes per row of the reference batches (Spark
// BoundedZstdCompressionCodec measurements, reference seed 000).
#include "quiver/datagen/batch_generator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "quiver/columnar/validate.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::datagen {
namespace {

constexpr GenKind kAllKinds[] = {GenKind::kBigintSeq, GenKind::kBigintRandom, GenKind::kUuid,
                                 GenKind::kText,      GenKind::kLineitem,     GenKind::kOrders};
constexpr int64_t k64MiB = int64_t{64} << 20;

class DatagenTest : public ::testing::Test {
 protected:
  std::vector<RecordBatchPtr> Gen(GenKind kind, int64_t rows, int64_t max_bytes = 0, uint64_t seed = 42) {
    GenOptions o;
    o.kind = kind;
    o.num_rows = rows;
    o.max_bytes_per_batch = max_bytes;
    o.seed = seed;
    o.pool = pool_.get();
    auto r = GenerateBatches(o);
    EXPECT_OK(r);
    return r.ok() ? *r : std::vector<RecordBatchPtr>{};
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

template <typename T>
T At(const ArrayData& a, int64_t i) {
  T v;
  std::memcpy(&v, a.buffers[1]->data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
std::string_view StrAt(const ArrayData& a, int64_t i) {
  const int32_t b = At<int32_t>(a, i), e = At<int32_t>(a, i + 1);
  return {reinterpret_cast<const char*>(a.buffers[2]->data()) + b, static_cast<size_t>(e - b)};
}
int64_t DecAt(const ArrayData& a, int64_t i) {
  int64_t lo, hi;
  std::memcpy(&lo, a.buffers[1]->data() + i * 16, 8);
  std::memcpy(&hi, a.buffers[1]->data() + i * 16 + 8, 8);
  EXPECT_EQ(hi, lo < 0 ? -1 : 0);
  return lo;
}
int32_t DateAt(const ArrayData& a, int64_t i) { return At<int32_t>(a, i); }

bool SameBuffers(const RecordBatch& a, const RecordBatch& b) {
  if (a.num_rows != b.num_rows || a.columns.size() != b.columns.size()) return false;
  for (size_t c = 0; c < a.columns.size(); ++c) {
    const auto& x = *a.columns[c];
    const auto& y = *b.columns[c];
    if (x.buffers.size() != y.buffers.size()) return false;
    for (size_t i = 0; i < x.buffers.size(); ++i) {
      if (!x.buffers[i]->Equals(*y.buffers[i])) return false;
    }
  }
  return true;
}

TEST(ParseGenKindTest, NamesRoundTripAndErrorListsChoices) {
  for (GenKind k : kAllKinds) {
    auto r = ParseGenKind(GenKindName(k));
    ASSERT_OK(r);
    EXPECT_EQ(*r, k);
  }
  auto bad = ParseGenKind("lineitems");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("bigint-seq, bigint-random, uuid, text, lineitem or orders"),
            std::string::npos);
}

TEST_F(DatagenTest, MakeRejectsBadOptions) {
  GenOptions o;
  EXPECT_FALSE(BatchGenerator::Make(o).ok());  // no pool
  o.pool = pool_.get();
  o.num_rows = -1;
  EXPECT_FALSE(BatchGenerator::Make(o).ok());
  o.num_rows = 1;
  o.max_bytes_per_batch = -1;
  EXPECT_FALSE(BatchGenerator::Make(o).ok());
}

TEST_F(DatagenTest, ZeroRowsYieldsNoBatch) {
  for (GenKind k : kAllKinds) EXPECT_TRUE(Gen(k, 0).empty());
}

TEST_F(DatagenTest, EveryKindValidatesWithAllValidBitmaps) {
  for (GenKind k : kAllKinds) {
    SCOPED_TRACE(std::string(GenKindName(k)));
    auto batches = Gen(k, 1003, k == GenKind::kText ? 1 << 20 : 16 << 10);
    ASSERT_FALSE(batches.empty());
    int64_t rows = 0;
    for (const auto& b : batches) {
      ASSERT_OK(ValidateBatch(*b, ValidationLevel::kFull));
      EXPECT_TRUE(b->schema->Equals(*GenSchema(k)));
      for (size_t c = 0; c < b->columns.size(); ++c) {
        const auto& a = *b->columns[c];
        EXPECT_TRUE(b->schema->fields[c]->nullable);
        EXPECT_EQ(a.null_count, 0);
        ASSERT_NE(a.buffers[0], nullptr) << "validity bitmap present";
        for (int64_t i = 0; i < a.length; ++i) ASSERT_TRUE(a.IsValid(i));
      }
      rows += b->num_rows;
    }
    EXPECT_EQ(rows, 1003);
  }
}

TEST_F(DatagenTest, SameSeedSameBuffersDifferentSeedDifferent) {
  for (GenKind k : kAllKinds) {
    SCOPED_TRACE(std::string(GenKindName(k)));
    const int64_t rows = k == GenKind::kText ? 50 : 2000;
    auto a = Gen(k, rows, 0, 7);
    auto b = Gen(k, rows, 0, 7);
    auto c = Gen(k, rows, 0, 8);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_TRUE(SameBuffers(*a[0], *b[0]));
    if (k != GenKind::kBigintSeq) {
      EXPECT_FALSE(SameBuffers(*a[0], *c[0]));
    }
  }
}

TEST_F(DatagenTest, PinnedValuesForSeed42) {
  // Guards cross-machine stability: these values must never change.
  auto seq = Gen(GenKind::kBigintSeq, 3);
  EXPECT_EQ(At<int64_t>(*seq[0]->columns[0], 2), 2);
  auto uuid = Gen(GenKind::kUuid, 2);
  auto rnd = Gen(GenKind::kBigintRandom, 2);
  auto li = Gen(GenKind::kLineitem, 2);
  const std::string u0(StrAt(*uuid[0]->columns[0], 0));
  const int64_t r0 = At<int64_t>(*rnd[0]->columns[0], 0);
  const std::string c0(StrAt(*li[0]->columns[15], 0));
  EXPECT_EQ(u0, "7467544a-5e75-47c2-9149-f0bfb684e5bb");
  EXPECT_EQ(r0, int64_t{4649533772624393494});
  EXPECT_EQ(c0, "regular abov");
}

TEST_F(DatagenTest, RowsDoNotDependOnBatchCutting) {
  for (GenKind k : kAllKinds) {
    SCOPED_TRACE(std::string(GenKindName(k)));
    const int64_t rows = k == GenKind::kText ? 40 : 3000;
    auto whole = Gen(k, rows);
    auto cut = Gen(k, rows, k == GenKind::kText ? 50000 : 9000);
    ASSERT_EQ(whole.size(), 1u);
    ASSERT_GT(cut.size(), 2u);
    int64_t off = 0;
    for (const auto& piece : cut) {
      auto slice = SliceBatch(whole[0], off, piece->num_rows);
      ASSERT_OK(slice);
      for (size_t c = 0; c < piece->columns.size(); ++c) {
        const auto& p = *piece->columns[c];
        const auto& s = *(*slice)->columns[c];
        for (int64_t i = 0; i < p.length; ++i) {
          if (p.type->id == TypeId::kUtf8) {
            ASSERT_EQ(StrAt(p, i), StrAt(*whole[0]->columns[c], s.offset + i));
          } else {
            const int width = FixedBitWidth(*p.type) / 8;
            ASSERT_EQ(std::memcmp(p.buffers[1]->data() + i * width,
                                  whole[0]->columns[c]->buffers[1]->data() + (s.offset + i) * width, width),
                      0);
          }
        }
      }
      off += piece->num_rows;
    }
    EXPECT_EQ(off, rows);
  }
}

TEST_F(DatagenTest, BatchesFillTheByteCap) {
  for (GenKind k : kAllKinds) {
    SCOPED_TRACE(std::string(GenKindName(k)));
    const int64_t cap = k == GenKind::kText ? 200000 : 20000;
    const int64_t rows = k == GenKind::kText ? 100 : 5000;
    auto batches = Gen(k, rows, cap);
    ASSERT_GT(batches.size(), 1u);
    for (size_t i = 0; i < batches.size(); ++i) {
      const int64_t bytes = BatchBufferBytes(*batches[i]);
      EXPECT_LE(bytes, cap);
      if (i + 1 < batches.size()) {
        // One more row would not have fit: the batch is at least cap minus
        // one row's bytes (a generous bound of the largest row).
        const int64_t max_row = k == GenKind::kText ? 8600 : 260;
        EXPECT_GT(bytes, cap - max_row);
      }
    }
  }
}

TEST_F(DatagenTest, FixedWidthCapIsExact) {
  // bigint: 8 bytes a row plus 1 bitmap byte per 8 rows: 64 rows = 520 bytes.
  auto batches = Gen(GenKind::kBigintSeq, 1000, 520);
  ASSERT_EQ(batches.size(), 16u);
  EXPECT_EQ(batches[0]->num_rows, 64);
  EXPECT_EQ(BatchBufferBytes(*batches[0]), 520);
  EXPECT_EQ(batches.back()->num_rows, 1000 - 15 * 64);
  EXPECT_EQ(At<int64_t>(*batches[1]->columns[0], 0), 64);
}

TEST_F(DatagenTest, OversizedRowStillMakesABatch) {
  auto batches = Gen(GenKind::kText, 3, 100);
  ASSERT_EQ(batches.size(), 3u);
  for (const auto& b : batches) EXPECT_EQ(b->num_rows, 1);
}

TEST_F(DatagenTest, BigintSeqAndRandom) {
  auto seq = Gen(GenKind::kBigintSeq, 10000);
  ASSERT_EQ(seq.size(), 1u);
  for (int64_t i = 0; i < 10000; ++i) ASSERT_EQ(At<int64_t>(*seq[0]->columns[0], i), i);
  EXPECT_EQ(BatchBufferBytes(*seq[0]), 80000 + 1250);

  auto rnd = Gen(GenKind::kBigintRandom, 100000);
  std::set<int64_t> distinct;
  int64_t high_bit = 0;
  for (int64_t i = 0; i < 100000; ++i) {
    const int64_t v = At<int64_t>(*rnd[0]->columns[0], i);
    distinct.insert(v);
    high_bit += v < 0;
  }
  EXPECT_EQ(distinct.size(), 100000u);
  EXPECT_NEAR(static_cast<double>(high_bit) / 100000, 0.5, 0.01);
}

TEST_F(DatagenTest, UuidFormat) {
  auto b = Gen(GenKind::kUuid, 5000);
  const auto& a = *b[0]->columns[0];
  std::set<std::string> seen;
  for (int64_t i = 0; i < a.length; ++i) {
    const std::string_view u = StrAt(a, i);
    ASSERT_EQ(u.size(), 36u);
    for (size_t j = 0; j < 36; ++j) {
      if (j == 8 || j == 13 || j == 18 || j == 23) {
        ASSERT_EQ(u[j], '-') << u;
      } else {
        ASSERT_TRUE((u[j] >= '0' && u[j] <= '9') || (u[j] >= 'a' && u[j] <= 'f')) << u;
      }
    }
    ASSERT_EQ(u[14], '4') << u;                                                    // version
    ASSERT_NE(std::string_view("89ab").find(u[19]), std::string_view::npos) << u;  // variant
    seen.emplace(u);
  }
  EXPECT_EQ(seen.size(), 5000u);
  EXPECT_EQ(BatchBufferBytes(*b[0]), 5000 * 36 + 5001 * 4 + 625);
}

TEST_F(DatagenTest, TextRowsAreAbout8KBOfJson) {
  auto b = Gen(GenKind::kText, 200);
  const auto& a = *b[0]->columns[0];
  int64_t total = 0;
  for (int64_t i = 0; i < a.length; ++i) {
    const std::string_view t = StrAt(a, i);
    ASSERT_GE(t.size(), 7600u);
    ASSERT_LE(t.size(), 8470u);
    ASSERT_EQ(t.front(), '{');
    ASSERT_EQ(t.substr(t.size() - 2), "\"}");
    ASSERT_NE(t.find("\"events\":[{"), std::string_view::npos);
    total += static_cast<int64_t>(t.size());
  }
  EXPECT_NEAR(static_cast<double>(total) / a.length, 8035, 150);
}

TEST_F(DatagenTest, LineitemShapeAndTpchRanges) {
  auto b = Gen(GenKind::kLineitem, 20000);
  ASSERT_EQ(b.size(), 1u);
  const RecordBatch& batch = *b[0];
  ASSERT_EQ(batch.columns.size(), 16u);
  size_t buffers = 0;
  for (const auto& c : batch.columns) buffers += c->buffers.size();
  EXPECT_EQ(buffers, 37u);

  const auto col = [&](const char* name) -> const ArrayData& {
    return *batch.columns[static_cast<size_t>(batch.schema->FieldIndex(name))];
  };
  EXPECT_EQ(col("l_quantity").type->ToString(), decimal(128, 15, 2)->ToString());
  int64_t prev_key = 0, prev_line = 0;
  std::set<std::string> instruct, mode;
  for (int64_t i = 0; i < batch.num_rows; ++i) {
    const int64_t key = At<int64_t>(col("l_orderkey"), i);
    const int32_t line = At<int32_t>(col("l_linenumber"), i);
    if (key == prev_key) {
      ASSERT_EQ(line, prev_line + 1);
    } else {
      ASSERT_GT(key, prev_key);
      ASSERT_EQ(line, 1);
    }
    ASSERT_LE(line, 7);
    prev_key = key;
    prev_line = line;
    const int64_t partkey = At<int64_t>(col("l_partkey"), i);
    ASSERT_GE(partkey, 1);
    ASSERT_LE(partkey, 200000);
    const int64_t suppkey = At<int64_t>(col("l_suppkey"), i);
    ASSERT_GE(suppkey, 1);
    ASSERT_LE(suppkey, 10000);
    const int64_t qty = DecAt(col("l_quantity"), i);
    ASSERT_EQ(qty % 100, 0);
    ASSERT_GE(qty, 100);
    ASSERT_LE(qty, 5000);
    const int64_t price = DecAt(col("l_extendedprice"), i);
    ASSERT_EQ(price % (qty / 100), 0);
    ASSERT_GE(price / (qty / 100), 90000);
    ASSERT_LE(price / (qty / 100), 209900);
    const int64_t disc = DecAt(col("l_discount"), i);
    ASSERT_GE(disc, 0);
    ASSERT_LE(disc, 10);
    const int64_t tax = DecAt(col("l_tax"), i);
    ASSERT_GE(tax, 0);
    ASSERT_LE(tax, 8);
    const int32_t ship = DateAt(col("l_shipdate"), i);
    const int32_t commit = DateAt(col("l_commitdate"), i);
    const int32_t receipt = DateAt(col("l_receiptdate"), i);
    ASSERT_GE(ship, 8035 + 1);       // after 1992-01-01
    ASSERT_LE(receipt, 10591 + 30);  // TPC-H receipt dates end in early 1999
    ASSERT_GT(receipt, ship);
    ASSERT_LE(receipt - ship, 30);
    ASSERT_GE(commit, 8035 + 30);
    const std::string_view rf = StrAt(col("l_returnflag"), i);
    const std::string_view ls = StrAt(col("l_linestatus"), i);
    if (receipt <= 9298) {
      ASSERT_TRUE(rf == "R" || rf == "A") << rf;
    } else {
      ASSERT_EQ(rf, "N");
    }
    ASSERT_EQ(ls, ship > 9298 ? "O" : "F");
    instruct.emplace(StrAt(col("l_shipinstruct"), i));
    mode.emplace(StrAt(col("l_shipmode"), i));
    const std::string_view comment = StrAt(col("l_comment"), i);
    ASSERT_GE(comment.size(), 10u);
    ASSERT_LE(comment.size(), 43u);
  }
  EXPECT_EQ(instruct, (std::set<std::string>{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}));
  EXPECT_EQ(mode.size(), 7u);
  // About 4 lines per order on average.
  EXPECT_NEAR(static_cast<double>(batch.num_rows) / (static_cast<double>(prev_key) * 8 / 32), 4.0, 0.2);
}

TEST_F(DatagenTest, OrdersShapeAndConsistencyWithLineitem) {
  auto o = Gen(GenKind::kOrders, 500);
  auto l = Gen(GenKind::kLineitem, 5000);
  const RecordBatch& ob = *o[0];
  const RecordBatch& lb = *l[0];
  ASSERT_EQ(ob.columns.size(), 9u);
  size_t buffers = 0;
  for (const auto& c : ob.columns) buffers += c->buffers.size();
  EXPECT_EQ(buffers, 9u * 2 + 4);
  // Recompute o_totalprice and o_orderstatus from the lines of each order.
  int64_t li = 0;
  for (int64_t i = 0; i < ob.num_rows && li < lb.num_rows; ++i) {
    const int64_t key = At<int64_t>(*ob.columns[0], i);
    const int64_t cust = At<int64_t>(*ob.columns[1], i);
    ASSERT_NE(cust % 3, 0);
    ASSERT_GE(cust, 1);
    ASSERT_LE(cust, 150000);
    int64_t total = 0, lines = 0, f = 0;
    bool complete = false;
    while (li < lb.num_rows && At<int64_t>(*lb.columns[0], li) == key) {
      total += DecAt(*lb.columns[5], li) * (100 + DecAt(*lb.columns[7], li)) * (100 - DecAt(*lb.columns[6], li));
      f += StrAt(*lb.columns[9], li) == "F";
      ++lines;
      ++li;
      complete = li < lb.num_rows;
    }
    if (!complete) break;
    ASSERT_GT(lines, 0) << "orders and lineitem keys agree";
    EXPECT_EQ(DecAt(*ob.columns[3], i), (total + 5000) / 10000);
    const std::string_view status = StrAt(*ob.columns[2], i);
    EXPECT_EQ(status, f == lines ? "F" : f == 0 ? "O" : "P");
    const std::string_view clerk = StrAt(*ob.columns[6], i);
    EXPECT_EQ(clerk.size(), 15u);
    EXPECT_EQ(clerk.substr(0, 6), "Clerk#");
    const std::string_view comment = StrAt(*ob.columns[8], i);
    EXPECT_GE(comment.size(), 19u);
    EXPECT_LE(comment.size(), 78u);
  }
}

// Reference (Spark PR, Arrow Java vectors): lineitem 64 MB limit ->
// 389,390 rows; text 64 MB limit -> 8,348 rows. Our exact buffer bytes must
// give row counts within 15%.
TEST_F(DatagenTest, ReferenceRowCountsAt64MiB) {
  GenOptions o;
  o.kind = GenKind::kLineitem;
  o.num_rows = 1000000;
  o.max_bytes_per_batch = k64MiB;
  o.pool = pool_.get();
  auto gen = BatchGenerator::Make(o);
  ASSERT_OK(gen);
  auto first = (*gen)->Next();
  ASSERT_OK(first);
  const int64_t lineitem_rows = (*first)->num_rows;
  EXPECT_NEAR(static_cast<double>(lineitem_rows), 389390, 389390 * 0.15);
  EXPECT_LE(BatchBufferBytes(**first), k64MiB);
  first = RecordBatchPtr{};

  o.kind = GenKind::kText;
  o.num_rows = 20000;
  auto tgen = BatchGenerator::Make(o);
  ASSERT_OK(tgen);
  auto tfirst = (*tgen)->Next();
  ASSERT_OK(tfirst);
  EXPECT_NEAR(static_cast<double>((*tfirst)->num_rows), 8348, 8348 * 0.15);
  EXPECT_LE(BatchBufferBytes(**tfirst), k64MiB);
  std::printf("64 MiB cap: lineitem %lld rows, text %lld rows\n", static_cast<long long>(lineitem_rows),
              static_cast<long long>((*tfirst)->num_rows));
}

TEST_F(DatagenTest, OutOfMemoryLeavesNothingChargedAndRetries) {
  MemoryPoolOptions po;
  po.limit_bytes = 100000;
  auto small = MemoryPool::MakeRoot(po);
  GenOptions o;
  o.kind = GenKind::kLineitem;
  o.num_rows = 10000;
  o.pool = small.get();
  auto gen = BatchGenerator::Make(o);
  ASSERT_OK(gen);
  auto r = (*gen)->Next();
  ASSERT_RAISES(OutOfMemory, r);
  EXPECT_EQ(small->held_bytes(), 0);
  EXPECT_EQ((*gen)->rows_generated(), 0);
}

}  // namespace
}  // namespace quiver::datagen
