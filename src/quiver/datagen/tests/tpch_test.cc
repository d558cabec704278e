// Tests of quiver/datagen/tpch.h: row counts per scale, key integrity
// between the tables, value domains, determinism and batch independence.
#include "quiver/datagen/tpch.h"

#include <gtest/gtest.h>

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "quiver/columnar/validate.h"
#include "quiver/columnar/value_format.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::datagen {
namespace {

class TpchTest : public ::testing::Test {
 protected:
  std::vector<RecordBatchPtr> Gen(TpchTable t, double scale, int64_t batch_rows = 1000, uint64_t seed = 42) {
    TpchOptions o;
    o.table = t;
    o.scale = scale;
    o.seed = seed;
    o.batch_rows = batch_rows;
    o.pool = pool_.get();
    auto g = TpchGenerator::Make(o);
    EXPECT_OK(g);
    std::vector<RecordBatchPtr> out;
    while (true) {
      auto b = (*g)->Next();
      EXPECT_OK(b);
      if (!b.ok() || !*b) break;
      EXPECT_OK(ValidateBatch(**b, ValidationLevel::kFull));
      EXPECT_TRUE((*b)->schema->Equals(*TpchSchema(t)));
      out.push_back(*b);
    }
    return out;
  }
  static int64_t Rows(const std::vector<RecordBatchPtr>& bs) {
    int64_t n = 0;
    for (const auto& b : bs) n += b->num_rows;
    return n;
  }
  // Values of an int64 column over all batches.
  static std::vector<int64_t> Ints(const std::vector<RecordBatchPtr>& bs, const std::string& name) {
    std::vector<int64_t> v;
    for (const auto& b : bs) {
      const int c = b->schema->FieldIndex(name);
      const ArrayData& a = *b->columns[static_cast<size_t>(c)];
      for (int64_t i = 0; i < b->num_rows; ++i) {
        if (a.type->id == TypeId::kInt64)
          v.push_back(a.GetValues<int64_t>(1)[a.offset + i]);
        else
          v.push_back(a.GetValues<int32_t>(1)[a.offset + i]);  // int32, date32
      }
    }
    return v;
  }
  static std::vector<std::string> Texts(const std::vector<RecordBatchPtr>& bs, const std::string& name) {
    std::vector<std::string> v;
    for (const auto& b : bs) {
      const int c = b->schema->FieldIndex(name);
      for (int64_t i = 0; i < b->num_rows; ++i)
        v.push_back(FormatValueToString(*b->columns[static_cast<size_t>(c)], i, ValueFormat::kText));
    }
    return v;
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({"tpch-test"});
};

TEST_F(TpchTest, RowCountsPerScale) {
  struct Expect {
    TpchTable t;
    int64_t sf1;
  };
  const Expect kExpect[] = {{TpchTable::kRegion, 5},        {TpchTable::kNation, 25},   {TpchTable::kSupplier, 10000},
                            {TpchTable::kCustomer, 150000}, {TpchTable::kPart, 200000}, {TpchTable::kPartSupp, 800000},
                            {TpchTable::kOrders, 1500000}};
  for (const auto& e : kExpect) {
    EXPECT_EQ(TpchRowCount(e.t, 1.0), e.sf1) << TpchTableName(e.t);
    const int64_t fixed = e.t == TpchTable::kRegion || e.t == TpchTable::kNation;
    EXPECT_EQ(TpchRowCount(e.t, 0.01), fixed ? e.sf1 : e.sf1 / 100) << TpchTableName(e.t);
    EXPECT_EQ(Rows(Gen(e.t, 0.01)), TpchRowCount(e.t, 0.01)) << TpchTableName(e.t);
  }
  // lineitem: 1..7 lines per order, about 4 on average.
  const int64_t lines = TpchRowCount(TpchTable::kLineitem, 0.01);
  EXPECT_GT(lines, 15000 * 3.8);
  EXPECT_LT(lines, 15000 * 4.2);
  EXPECT_EQ(Rows(Gen(TpchTable::kLineitem, 0.01)), lines);
  EXPECT_EQ(TpchRowCount(TpchTable::kOrders, 0.001), 1500);
  EXPECT_EQ(TpchRowCount(TpchTable::kSupplier, 0.001), 10);
}

TEST_F(TpchTest, KeyIntegrity) {
  const double sf = 0.005;
  auto region = Gen(TpchTable::kRegion, sf);
  auto nation = Gen(TpchTable::kNation, sf);
  auto supplier = Gen(TpchTable::kSupplier, sf);
  auto customer = Gen(TpchTable::kCustomer, sf);
  auto part = Gen(TpchTable::kPart, sf);
  auto partsupp = Gen(TpchTable::kPartSupp, sf);
  auto orders = Gen(TpchTable::kOrders, sf);
  auto lineitem = Gen(TpchTable::kLineitem, sf);
  auto set_of = [](const std::vector<int64_t>& v) { return std::unordered_set<int64_t>(v.begin(), v.end()); };
  const auto regions = set_of(Ints(region, "r_regionkey"));
  const auto nations = set_of(Ints(nation, "n_nationkey"));
  const auto suppliers = set_of(Ints(supplier, "s_suppkey"));
  const auto customers = set_of(Ints(customer, "c_custkey"));
  const auto parts = set_of(Ints(part, "p_partkey"));
  const auto order_keys = Ints(orders, "o_orderkey");
  const auto orders_set = set_of(order_keys);
  EXPECT_EQ(orders_set.size(), order_keys.size());          // unique
  for (int64_t k : order_keys) EXPECT_LT((k - 1) % 32, 8);  // sparse keys
  for (int64_t r : Ints(nation, "n_regionkey")) EXPECT_TRUE(regions.count(r));
  for (int64_t n : Ints(supplier, "s_nationkey")) EXPECT_TRUE(nations.count(n));
  for (int64_t n : Ints(customer, "c_nationkey")) EXPECT_TRUE(nations.count(n));
  for (int64_t c : Ints(orders, "o_custkey")) {
    EXPECT_TRUE(customers.count(c));
    EXPECT_NE(c % 3, 0);
  }
  std::set<std::pair<int64_t, int64_t>> ps;
  const auto ps_part = Ints(partsupp, "ps_partkey"), ps_supp = Ints(partsupp, "ps_suppkey");
  for (size_t i = 0; i < ps_part.size(); ++i) {
    EXPECT_TRUE(parts.count(ps_part[i]));
    EXPECT_TRUE(suppliers.count(ps_supp[i]));
    ps.insert({ps_part[i], ps_supp[i]});
  }
  EXPECT_EQ(ps.size(), ps_part.size());  // (partkey, suppkey) unique
  const auto l_order = Ints(lineitem, "l_orderkey"), l_part = Ints(lineitem, "l_partkey"),
             l_supp = Ints(lineitem, "l_suppkey"), l_line = Ints(lineitem, "l_linenumber");
  const auto l_ship = Ints(lineitem, "l_shipdate"), l_receipt = Ints(lineitem, "l_receiptdate");
  std::unordered_map<int64_t, int64_t> lines_per_order;
  for (size_t i = 0; i < l_order.size(); ++i) {
    EXPECT_TRUE(orders_set.count(l_order[i]));
    EXPECT_TRUE(ps.count({l_part[i], l_supp[i]}));
    EXPECT_EQ(l_line[i], ++lines_per_order[l_order[i]]);
    EXPECT_GE(l_ship[i], 8035 + 1);       // after 1992-01-01
    EXPECT_LE(l_receipt[i], 10591 + 30);  // shipdate <= 1998-12-31 - 30
    EXPECT_GT(l_receipt[i], l_ship[i]);
  }
  EXPECT_EQ(lines_per_order.size(), order_keys.size());  // every order has lines
  for (const auto& [k, n] : lines_per_order) {
    EXPECT_GE(n, 1);
    EXPECT_LE(n, 7);
  }
  for (int64_t d : Ints(orders, "o_orderdate")) {
    EXPECT_GE(d, 8035);
    EXPECT_LE(d, 10591 - 151);
  }
  for (const auto& s : Texts(orders, "o_orderstatus")) EXPECT_TRUE(s == "F" || s == "O" || s == "P");
  for (const auto& s : Texts(lineitem, "l_returnflag")) EXPECT_TRUE(s == "R" || s == "A" || s == "N");
  const auto disc = Texts(lineitem, "l_discount");
  for (const auto& s : disc) EXPECT_TRUE(s >= "0.00" && s <= "0.10") << s;
  EXPECT_EQ(Texts(region, "r_name")[4], "MIDDLE EAST");
}

TEST_F(TpchTest, DeterministicAndIndependentOfBatchSize) {
  for (TpchTable t : {TpchTable::kCustomer, TpchTable::kOrders, TpchTable::kLineitem}) {
    auto a = Gen(t, 0.002, 100);
    auto b = Gen(t, 0.002, 777);
    auto c = Gen(t, 0.002, 100, 43);
    ASSERT_EQ(Rows(a), Rows(b));
    const SchemaPtr schema = TpchSchema(t);
    const auto& f = schema->fields;
    bool any_diff = false;
    for (const auto& fld : f) {
      EXPECT_EQ(Texts(a, fld->name), Texts(b, fld->name)) << TpchTableName(t) << "." << fld->name;
      if (Rows(a) == Rows(c) && Texts(a, fld->name) != Texts(c, fld->name)) any_diff = true;
    }
    EXPECT_TRUE(any_diff || Rows(a) != Rows(c)) << "another seed gives other values";
  }
  EXPECT_FALSE(TpchGenerator::Make({TpchTable::kOrders, 0, 42, 10, pool_.get()}).ok());
  EXPECT_FALSE(TpchGenerator::Make({TpchTable::kOrders, 1, 42, 0, pool_.get()}).ok());
  EXPECT_FALSE(TpchGenerator::Make({TpchTable::kOrders, 1, 42, 10, nullptr}).ok());
  EXPECT_OK(ParseTpchTable("partsupp"));
  EXPECT_FALSE(ParseTpchTable("nope").ok());
}

}  // namespace
}  // namespace quiver::datagen
