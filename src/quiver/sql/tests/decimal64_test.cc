// DECIMAL columns stored in 64 bits (decimal64, precision <= 18; issues 36
// and 37): every kind of kernel over decimal64 inputs, alone and next to
// decimal128 ones (filters, arithmetic, casts, aggregates with and without
// GROUP BY, a sum passing 64 bits, ORDER BY, joins on keys of mixed widths,
// DISTINCT, UNION, CASE, windows, NULLs); results leave the engine as
// decimal128; Parquet INT32 / INT64 DECIMAL read as decimal64 by the SQL
// scans (plain and dictionary pages) and as decimal128 by the plain reader.
// Expected values worked by hand from the tables below.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/formats/sink.h"
#include "quiver/sql/expression/vector.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;
using Opt64 = std::vector<std::optional<int64_t>>;

class Decimal64Test : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    // d: k, a DECIMAL(15,2) and b DECIMAL(9,2), both decimal64.
    //   k  a       b
    //   1  1.50    0.05
    //   2  -2.25   0.10
    //   3  100.00  0.00
    //   4  NULL    0.07
    //   5  3.10    0.10
    //   6  1.50    0.05
    auto d = std::make_shared<Schema>();
    d->fields = {field("k", int64()), field("a", decimal(64, 15, 2)), field("b", decimal(64, 9, 2))};
    ASSERT_OK(catalog_->RegisterBatches(
        "d", d,
        Split(Batch(d, {Int64Array(pool_.get(), {1, 2, 3, 4, 5, 6}),
                        PrimitiveArray<int64_t>(pool_.get(), decimal(64, 15, 2),
                                                Opt64{150, -225, 10000, std::nullopt, 310, 150}),
                        PrimitiveArray<int64_t>(pool_.get(), decimal(64, 9, 2), Opt64{5, 10, 0, 7, 10, 5})}),
              4)));
    // w: k, a DECIMAL(15,2) as decimal128.
    auto w = std::make_shared<Schema>();
    w->fields = {field("k", int64()), field("a", decimal(128, 15, 2))};
    ASSERT_OK(catalog_->RegisterBatches(
        "w", w,
        {Batch(w, {Int64Array(pool_.get(), {10, 20, 30, 40}),
                   PrimitiveArray<__int128>(pool_.get(), decimal(128, 15, 2), {150, 310, 777, std::nullopt})})}));
    // big: 40 rows of 999999999999999999 (DECIMAL(18,0), decimal64), g =
    // row % 2, in one batch: ten values in one 64-bit lane pass 2^63.
    auto big = std::make_shared<Schema>();
    big->fields = {field("g", int64()), field("x", decimal(64, 18, 0))};
    Opt64 g, x;
    for (int i = 0; i < 40; ++i) {
      g.push_back(i % 2);
      x.push_back(999999999999999999LL);
    }
    ASSERT_OK(catalog_->RegisterBatches(
        "big", big,
        {Batch(big, {Int64Array(pool_.get(), g), PrimitiveArray<int64_t>(pool_.get(), decimal(64, 18, 0), x)})}));
  }
  V Q(const std::string& sql, bool sorted = true) {
    auto r = Run(sql);
    if (!r.ok()) return {"error: " + r.status().ToString()};
    return Rows(*r, sorted);
  }
  std::string One(const std::string& sql) {
    auto rows = Q(sql);
    return rows.size() == 1 ? rows[0] : "rows: " + std::to_string(rows.size());
  }
};

TEST_F(Decimal64Test, ResultsLeaveAsDecimal128) {
  EXPECT_EQ(Columns("SELECT a, b, k FROM d"), (V{"a: decimal128(15, 2)", "b: decimal128(9, 2)", "k: int64"}));
  EXPECT_EQ(Columns("SELECT min(a), max(b), sum(a) FROM d"),
            (V{"min: decimal128(15, 2)", "max: decimal128(9, 2)", "sum: decimal128(38, 2)"}));
  EXPECT_EQ(Q("SELECT a FROM d"), (V{"-2.25", "1.50", "1.50", "100.00", "3.10", "null"}));
}

TEST_F(Decimal64Test, Filters) {
  EXPECT_EQ(Q("SELECT k FROM d WHERE a > 1.5"), (V{"3", "5"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a = 1.50"), (V{"1", "6"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a <= 1.505"), (V{"1", "2", "6"}));    // a finer-scaled constant
  EXPECT_EQ(Q("SELECT k FROM d WHERE a > 1"), (V{"1", "3", "5", "6"}));    // an integer constant
  EXPECT_EQ(Q("SELECT k FROM d WHERE a < 1e1"), (V{"1", "2", "5", "6"}));  // a DOUBLE constant
  EXPECT_EQ(Q("SELECT k FROM d WHERE a BETWEEN -3 AND 2"), (V{"1", "2", "6"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a IS NULL"), (V{"4"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a IN (1.50, 3.10)"), (V{"1", "5", "6"}));
  // Column against column: two decimal64 widths of one scale, then a
  // scale apart (b * 100 is DECIMAL(.., 2)).
  EXPECT_EQ(Q("SELECT k FROM d WHERE b > a"), (V{"2"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a < b * 100"), (V{"1", "2", "5", "6"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a > 99999999999999999"), V{});  // beyond 64 bits at scale 2
  EXPECT_EQ(Q("SELECT a > 2, a = b FROM d WHERE k <= 3", false), (V{"false|false", "false|false", "true|false"}));
}

TEST_F(Decimal64Test, ArithmeticAndCasts) {
  EXPECT_EQ(Q("SELECT k, a + b, a - 1, a * b, a * 2, -a, abs(a) FROM d WHERE k IN (1, 2)"),
            (V{"1|1.55|0.50|0.0750|3.00|-1.50|1.50", "2|-2.15|-3.25|-0.2250|-4.50|2.25|2.25"}));
  EXPECT_EQ(One("SELECT a / 2 FROM d WHERE k = 5"), "1.550000000000");
  EXPECT_EQ(One("SELECT a % 1 FROM d WHERE k = 5"), "0.10");
  EXPECT_EQ(One("SELECT round(a, 1) FROM d WHERE k = 2"), "-2.3");
  EXPECT_EQ(One("SELECT CAST(a AS DOUBLE) FROM d WHERE k = 5"), "3.1");
  EXPECT_EQ(One("SELECT CAST(a AS DECIMAL(20,3)) FROM d WHERE k = 2"), "-2.250");
  EXPECT_EQ(One("SELECT CAST(a AS VARCHAR) FROM d WHERE k = 3"), "100.00");
  EXPECT_EQ(One("SELECT CAST(b AS DECIMAL(3,2)) FROM d WHERE k = 4"), "0.07");
  EXPECT_EQ(One("SELECT a + 0.001 FROM d WHERE k = 1"), "1.501");
  // With a decimal128 operand (a join on k's order).
  EXPECT_EQ(Q("SELECT d.a + w.a, d.a * w.a FROM d JOIN w ON d.k * 10 = w.k"),
            (V{"0.85|-6.9750", "107.77|777.0000", "3.00|2.2500", "null|null"}));
}

TEST_F(Decimal64Test, Aggregates) {
  EXPECT_EQ(One("SELECT sum(a), min(a), max(a), count(a), count(DISTINCT a), sum(b), avg(b) FROM d"),
            "103.85|-2.25|100.00|5|4|0.37|0.06166666666666667");
  EXPECT_EQ(One("SELECT avg(a) FROM d"), "20.77");
  EXPECT_EQ(Q("SELECT k % 2, sum(a), min(a), max(a), count(DISTINCT b), avg(a) FROM d GROUP BY k % 2"),
            (V{"0|-0.75|-2.25|1.50|3|-0.375", "1|104.60|1.50|100.00|3|34.86666666666667"}));
  // A DECIMAL64 GROUP BY key (NULL its own group), and a filter before it.
  EXPECT_EQ(Q("SELECT a, count(*), sum(b) FROM d GROUP BY a"),
            (V{"-2.25|1|0.10", "1.50|2|0.10", "100.00|1|0.00", "3.10|1|0.10", "null|1|0.07"}));
  EXPECT_EQ(Q("SELECT b, sum(a) FROM d WHERE k > 1 GROUP BY b"),
            (V{"0.00|100.00", "0.05|1.50", "0.07|null", "0.10|0.85"}));
  EXPECT_EQ(One("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY a) FROM d"), "1.50");
  EXPECT_EQ(One("SELECT approx_count_distinct(a) FROM d"), "4");
}

TEST_F(Decimal64Test, SumPastSixtyFourBits) {
  // 40 * 999999999999999999 = 39999999999999999960 > 2^64: the 64-bit
  // lanes overflow and the exact 128-bit loop takes over.
  EXPECT_EQ(One("SELECT sum(x) FROM big"), "39999999999999999960");
  EXPECT_EQ(Q("SELECT g, sum(x), avg(x), max(x) FROM big GROUP BY g"),
            (V{"0|19999999999999999980|1e+18|999999999999999999", "1|19999999999999999980|1e+18|999999999999999999"}));
  EXPECT_EQ(One("SELECT sum(x) FROM big WHERE g = 1"), "19999999999999999980");
  EXPECT_EQ(One("SELECT sum(x + x) FROM big"), "79999999999999999920");
}

TEST_F(Decimal64Test, OrderByDistinctAndSetOperations) {
  EXPECT_EQ(Q("SELECT a FROM d ORDER BY a", false), (V{"-2.25", "1.50", "1.50", "3.10", "100.00", "null"}));
  EXPECT_EQ(Q("SELECT k, a FROM d ORDER BY a DESC NULLS LAST, k LIMIT 3", false), (V{"3|100.00", "5|3.10", "1|1.50"}));
  EXPECT_EQ(Q("SELECT a, b FROM d ORDER BY b, a DESC", false),
            (V{"100.00|0.00", "1.50|0.05", "1.50|0.05", "null|0.07", "3.10|0.10", "-2.25|0.10"}));
  EXPECT_EQ(Q("SELECT DISTINCT a FROM d"), (V{"-2.25", "1.50", "100.00", "3.10", "null"}));
  EXPECT_EQ(Q("SELECT a FROM d UNION SELECT a FROM w"), (V{"-2.25", "1.50", "100.00", "3.10", "7.77", "null"}));
  EXPECT_EQ(Columns("SELECT a FROM d UNION ALL SELECT a FROM w"), (V{"a: decimal128(15, 2)"}));
  EXPECT_EQ(Q("SELECT b FROM d UNION ALL SELECT a FROM w"),
            (V{"0.00", "0.05", "0.05", "0.07", "0.10", "0.10", "1.50", "3.10", "7.77", "null"}));
  EXPECT_EQ(Q("SELECT a FROM d INTERSECT SELECT a FROM w"), (V{"1.50", "3.10", "null"}));
  EXPECT_EQ(Q("SELECT a FROM d EXCEPT SELECT a FROM w"), (V{"-2.25", "100.00"}));
}

TEST_F(Decimal64Test, JoinsOnKeysOfMixedWidths) {
  // decimal64 = decimal128
  EXPECT_EQ(Q("SELECT d.k, w.k FROM d JOIN w ON d.a = w.a"), (V{"1|10", "5|20", "6|10"}));
  // decimal64 = decimal64 of another precision
  EXPECT_EQ(Q("SELECT x.k, y.k FROM d x JOIN d y ON x.b * 30 = y.a"), (V{"1|1", "1|6", "6|1", "6|6"}));
  // decimal64 = decimal64
  EXPECT_EQ(Q("SELECT x.k, y.k FROM d x JOIN d y ON x.a = y.a WHERE x.k < y.k"), (V{"1|6"}));
  EXPECT_EQ(Q("SELECT w.k, d.k FROM w LEFT JOIN d ON w.a = d.a"), (V{"10|1", "10|6", "20|5", "30|null", "40|null"}));
  EXPECT_EQ(Q("SELECT k FROM d WHERE a IN (SELECT a FROM w)"), (V{"1", "5", "6"}));
  EXPECT_EQ(Q("SELECT k FROM w WHERE a NOT IN (SELECT a FROM d WHERE a IS NOT NULL)"), (V{"30"}));
}

TEST_F(Decimal64Test, ConditionalsAndWindows) {
  // CASE of one decimal64 type stays it; of two becomes decimal128.
  EXPECT_EQ(Q("SELECT k, CASE WHEN k > 3 THEN a END, CASE WHEN k > 3 THEN a ELSE b END FROM d WHERE k >= 3"),
            (V{"3|null|0.00", "4|null|null", "5|3.10|3.10", "6|1.50|1.50"}));
  EXPECT_EQ(Q("SELECT COALESCE(a, b), COALESCE(a, 0), NULLIF(a, 1.5), greatest(a, b), least(a, b * 10) FROM d "
              "WHERE k IN (1, 4)"),
            (V{"0.07|0.00|null|0.07|0.70", "1.50|1.50|null|1.50|0.50"}));
  EXPECT_EQ(Q("SELECT k, sum(a) OVER (ORDER BY k), min(a) OVER (ORDER BY k ROWS 1 PRECEDING), lag(a) OVER "
              "(ORDER BY k) FROM d"),
            (V{"1|1.50|1.50|null", "2|-0.75|-2.25|1.50", "3|99.25|-2.25|-2.25", "4|99.25|100.00|100.00",
               "5|102.35|3.10|null", "6|103.85|1.50|3.10"}));
  EXPECT_EQ(Q("SELECT k, rank() OVER (ORDER BY a) FROM d WHERE a IS NOT NULL"), (V{"1|2", "2|1", "3|5", "5|4", "6|2"}));
}

TEST_F(Decimal64Test, CreateTableAsStoresDecimal128) {
  auto e = Engine::WithWritableCatalog(catalog_, pool_);
  auto s = e.Execute("CREATE TABLE c AS SELECT a, b FROM d", Options());
  ASSERT_OK(s);
  while (true) {
    auto b = (*s)->Next();
    ASSERT_OK(b);
    if (!*b) break;
  }
  auto t = catalog_->GetTable("c");
  ASSERT_OK(t);
  EXPECT_EQ(t->schema->fields[0]->type->ToString(), "decimal128(15, 2)");
  EXPECT_EQ(Q("SELECT sum(a), max(b) FROM c"), (V{"103.85|0.10"}));
}

TEST(Decimal64Vector, StorageConversions) {
  auto pool = MemoryPool::MakeRoot({"decimal64-test"});
  EXPECT_EQ(ClassOf(*decimal(64, 18, 2)), TypeClass::kDecimal);
  EXPECT_EQ(CanonicalType(decimal(64, 18, 2))->ToString(), "decimal64(18, 2)");
  // decimal32 widens to decimal64: kernels see two storages
  EXPECT_EQ(CanonicalType(decimal(32, 9, 2))->ToString(), "decimal64(9, 2)");
  EXPECT_EQ(OutputType(decimal(64, 18, 2))->ToString(), "decimal128(18, 2)");
  EXPECT_EQ(OutputType(decimal(128, 18, 2))->ToString(), "decimal128(18, 2)");
  auto a = PrimitiveArray<int64_t>(pool.get(), decimal(64, 15, 2), Opt64{7, std::nullopt, -3, 5});
  auto sliced = SliceArray(a, 1, 3);
  ASSERT_OK(sliced);
  auto wide = WidenForOutput(*sliced, pool.get());
  ASSERT_OK(wide);
  EXPECT_EQ((*wide)->type->ToString(), "decimal128(15, 2)");
  EXPECT_EQ(Cell(**wide, 0), "null");
  EXPECT_EQ(Cell(**wide, 1), "-0.03");
  EXPECT_EQ(Cell(**wide, 2), "0.05");
  Vec v;
  v.array = *wide;
  EXPECT_EQ(static_cast<int64_t>(v.ExactAt(1)), -3);
  // decimal128 back to decimal64 (a table's type over a wider file), and a
  // value that does not fit.
  auto narrow = ConformDecimalStorage(*wide, decimal(64, 15, 2), pool.get());
  ASSERT_OK(narrow);
  EXPECT_EQ((*narrow)->type->ToString(), "decimal64(15, 2)");
  EXPECT_EQ(Cell(**narrow, 0), "null");
  EXPECT_EQ(Cell(**narrow, 1), "-0.03");
  auto huge = PrimitiveArray<__int128>(pool.get(), decimal(128, 30, 2), {static_cast<__int128>(1) << 80});
  EXPECT_FALSE(ConformDecimalStorage(huge, decimal(64, 18, 2), pool.get()).ok());
}

// Parquet written by quiver's writer: DECIMAL(15,2) as INT64, DECIMAL(7,2)
// as INT32, with NULLs, in dictionary and plain pages.
class Decimal64ParquetTest : public Decimal64Test {
 protected:
  void SetUp() override {
    Decimal64Test::SetUp();
    dir_ = fs::temp_directory_path() / ("quiver-decimal64-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("k", int64()), field("p", decimal(128, 15, 2)), field("q", decimal(128, 7, 2))};
    // 3000 rows: p = (k % 7) * 1.25 (few values: dictionary pages), q =
    // k * 0.01 - 10 (all distinct), every 10th q NULL; row groups of 1000.
    std::vector<std::optional<int64_t>> k;
    std::vector<std::optional<__int128>> p, q;
    for (int64_t i = 0; i < 3000; ++i) {
      k.push_back(i);
      p.push_back((i % 7) * 125);
      q.push_back(i % 10 == 0 ? std::nullopt : std::optional<__int128>(i - 1000));
    }
    auto batch =
        Batch(schema, {Int64Array(pool_.get(), k), PrimitiveArray<__int128>(pool_.get(), schema->fields[1]->type, p),
                       PrimitiveArray<__int128>(pool_.get(), schema->fields[2]->type, q)});
    for (const char* codec : {"plain", "dict"}) {
      auto sink = formats::LocalFileSink::Open((dir_ / (std::string(codec) + ".parquet")).string());
      ASSERT_OK(sink);
      parquet::WriterOptions o;
      o.pool = pool_.get();
      o.dictionary = std::string(codec) == "dict";
      o.row_group_rows = 1000;
      auto w = parquet::FileWriter::Make(schema, sink->get(), o);
      ASSERT_OK(w);
      ASSERT_OK((*w)->WriteBatch(batch));
      ASSERT_OK((*w)->Close());
      ASSERT_OK((*sink)->Close());
    }
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  V F(const std::string& sql) {
    ExecuteOptions o = Options();
    o.file_tables = true;
    o.max_batch_rows = 1024;
    auto r = Run(sql, o);
    if (!r.ok()) return {"error: " + r.status().ToString()};
    return Rows(*r);
  }
  std::string P(const char* name) const { return "'" + (dir_ / name).string() + "'"; }
  fs::path dir_;
};

TEST_F(Decimal64ParquetTest, ReaderGivesDecimal64OnlyWhenAsked) {
  auto source = formats::LocalFileSource::Open((dir_ / "plain.parquet").string());
  ASSERT_OK(source);
  auto plain = parquet::FileReader::Open(*source, pool_.get());
  ASSERT_OK(plain);
  EXPECT_EQ((*plain)->schema()->fields[1]->type->ToString(), "decimal128(15, 2)");
  EXPECT_EQ((*plain)->schema()->fields[2]->type->ToString(), "decimal128(7, 2)");
  auto narrow = parquet::FileReader::Open(*source, pool_.get(), parquet::ArrowTypeOptions{.decimal64 = true});
  ASSERT_OK(narrow);
  EXPECT_EQ((*narrow)->schema()->fields[1]->type->ToString(), "decimal64(15, 2)");
  EXPECT_EQ((*narrow)->schema()->fields[2]->type->ToString(), "decimal64(7, 2)");
  auto batch = (*narrow)->ReadRowGroup(1, {}, pool_.get());
  ASSERT_OK(batch);
  EXPECT_EQ(Cell(*(*batch)->columns[1], 5), "5.00");  // row 1005: 1005 % 7 = 4
  EXPECT_EQ(Cell(*(*batch)->columns[2], 5), "0.05");
  EXPECT_EQ(Cell(*(*batch)->columns[2], 0), "null");
}

TEST_F(Decimal64ParquetTest, SqlOverParquetDecimals) {
  for (const char* file : {"plain.parquet", "dict.parquet"}) {
    SCOPED_TRACE(file);
    const std::string t = P(file);
    // sum p: each full week of 7 rows sums 21 * 1.25 = 26.25; 3000 = 428 * 7 + 4
    // (rests 0..3: 6 * 1.25 = 7.50): 428 * 26.25 + 7.50 = 11242.50.
    // sum q: (sum of i - 1000 over i in 0..2999) minus the NULL rows
    // (i = 0, 10, .., 2990: sum (i - 1000) = 300 * 1495 - 300000 = 148500)
    // = 1498500 - 148500 = 1350000 hundredths.
    EXPECT_EQ(F("SELECT sum(p), sum(q), count(q), min(q), max(q) FROM " + t),
              (V{"11242.50|13500.00|2700|-9.99|19.99"}));
    EXPECT_EQ(F("SELECT p, count(*) FROM " + t + " WHERE q > 19.9 GROUP BY p"),
              (V{"0.00|1", "1.25|1", "2.50|2", "3.75|2", "5.00|1", "6.25|1", "7.50|1"}));
    // k % 7 = 6 below 1000: 142 rows, 14 of them (k = 20 + 70 j) NULL q.
    EXPECT_EQ(F("SELECT count(*) FROM " + t + " WHERE p = 7.50 AND q < 0"), (V{"128"}));
    // 1.25 * 10.99 + 2.50 * 10.98 (row 0's q is NULL)
    EXPECT_EQ(F("SELECT sum(p * (1 - q)) FROM " + t + " WHERE k < 3"), (V{"41.1875"}));
  }
}

}  // namespace
}  // namespace quiver::sql
