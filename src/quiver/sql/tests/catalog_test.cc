// Tests of quiver/sql/catalog.h and tpch_tables.h through the engine: IPC
// files and directories as tables, dictionary-encoded columns, and TPC-H
// joins checked against values computed from the generator directly.
#include "quiver/sql/catalog.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "quiver/datagen/tpch.h"
#include "quiver/ipc/mapped_file_cache.h"
#include "quiver/ipc/writer.h"
#include "quiver/join/tests/join_test_util.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_tables.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::sql {
namespace {

using join::testing::Batch;
using join::testing::Int64Array;
using join::testing::StringArray;

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("quiver-sql-test-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& path, const RecordBatchPtr& batch, ipc::IpcFormat format) {
    auto sink = ipc::OpenOutputStream(path);
    ASSERT_OK(sink);
    ipc::WriteOptions wo;
    wo.pool = pool_.get();
    ASSERT_OK(ipc::WriteTable(sink->get(), batch->schema, {batch}, format, wo));
  }

  std::vector<std::string> Query(Engine& engine, const std::string& sql) {
    ExecuteOptions o;
    o.pool = pool_.get();
    auto stream = engine.Execute(sql, o);
    EXPECT_OK(stream) << sql;
    std::vector<RecordBatchPtr> batches;
    while (stream.ok()) {
      auto b = (*stream)->Next();
      EXPECT_OK(b);
      if (!b.ok() || !*b) break;
      batches.push_back(*b);
    }
    return join::testing::RenderSorted(batches);
  }

  std::string dir_;
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({"catalog-test"});
};

TEST_F(CatalogTest, FilesStreamsAndDirectoriesAreTables) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("id", int64()), field("name", utf8())};
  auto a = Batch(schema,
                 {Int64Array(pool_.get(), {1, 2, std::nullopt}), StringArray(pool_.get(), {"x", std::nullopt, "z"})});
  auto b = Batch(schema, {Int64Array(pool_.get(), {4}), StringArray(pool_.get(), {"w"})});
  Write(dir_ + "/a.arrow", a, ipc::IpcFormat::kFile);
  Write(dir_ + "/b.arrows", b, ipc::IpcFormat::kStream);
  std::filesystem::create_directories(dir_ + "/parts");
  Write(dir_ + "/parts/1.arrow", a, ipc::IpcFormat::kFile);
  Write(dir_ + "/parts/2.arrows", b, ipc::IpcFormat::kStream);
  auto catalog = std::make_shared<Catalog>();
  ASSERT_OK(catalog->RegisterPath("FileT", dir_ + "/a.arrow", pool_.get()));
  ASSERT_OK(catalog->RegisterPath("stream_t", dir_ + "/b.arrows", pool_.get()));
  ASSERT_OK(catalog->RegisterPath("dir_t", dir_ + "/parts", pool_.get()));
  auto dup = catalog->RegisterPath("filet", dir_ + "/a.arrow", pool_.get());
  EXPECT_TRUE(dup.IsInvalid()) << dup.ToString();
  EXPECT_TRUE(catalog->RegisterPath("bad name", dir_ + "/a.arrow", pool_.get()).IsInvalid());
  EXPECT_FALSE(catalog->RegisterPath("missing", dir_ + "/nope.arrow", pool_.get()).ok());
  auto tables = catalog->ListTables();
  ASSERT_EQ(tables.size(), 3u);
  EXPECT_EQ(tables[0].name, "dir_t");
  EXPECT_EQ(tables[0].num_rows, 4);
  EXPECT_EQ(tables[0].paths.size(), 2u);
  EXPECT_EQ(tables[1].name, "filet");
  EXPECT_EQ(tables[1].num_rows, 3);
  EXPECT_TRUE(tables[1].schema->Equals(*schema));
  auto cols = catalog->ListColumns("FILET");
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[1].table, "filet");
  EXPECT_EQ(cols[1].name, "name");
  EXPECT_EQ(cols[1].ordinal, 1);
  EXPECT_TRUE(cols[1].type->Equals(*utf8()));
  EXPECT_EQ(catalog->ListColumns().size(), 6u);
  EXPECT_TRUE(catalog->ListColumns("nope").empty());
  Engine engine(catalog);
  EXPECT_EQ(Query(engine, "SELECT * FROM dir_t WHERE id > 1"), (std::vector<std::string>{"2|null", "4|w"}));
  EXPECT_EQ(Query(engine, "SELECT f.name, s.id FROM filet f FULL JOIN stream_t s ON s.id = f.id"),
            (std::vector<std::string>{"null|4", "null|null", "x|null", "z|null"}));
  EXPECT_EQ(pool_->held_bytes() > 0, true);  // the test batches
  // A directory whose files disagree on the schema is refused.
  auto other = std::make_shared<Schema>();
  other->fields = {field("id", int64())};
  Write(dir_ + "/parts/3.arrow", Batch(other, {Int64Array(pool_.get(), {9})}), ipc::IpcFormat::kFile);
  auto mixed = catalog->RegisterPath("mixed", dir_ + "/parts", pool_.get());
  EXPECT_TRUE(mixed.IsInvalid()) << mixed.ToString();
  EXPECT_OK(catalog->Unregister("dir_t"));
  EXPECT_TRUE(catalog->Unregister("dir_t").IsKeyError());
}

// A scan validates the columns the statement reads, and only those: a file
// replaced after registration by one whose string offsets are corrupt still
// answers statements over its other columns, and a statement that reads the
// corrupt column gets Invalid naming the file, record batch and column.
TEST_F(CatalogTest, ScansReuseTheFilesMappingUntilTheFileChanges) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("id", int64())};
  const std::string path = dir_ + "/t.arrow";
  Write(path, Batch(schema, {Int64Array(pool_.get(), {1, 2, 3})}), ipc::IpcFormat::kFile);
  auto catalog = std::make_shared<Catalog>();
  ASSERT_OK(catalog->RegisterPath("t", path, pool_.get()));
  auto info = catalog->GetTable("t");
  ASSERT_OK(info);
  ASSERT_NE(info->mapped_files, nullptr);
  EXPECT_EQ(info->mapped_files->mappings_made(), 1);  // counting the rows at registration
  Engine engine(catalog);
  EXPECT_EQ(Query(engine, "SELECT id FROM t WHERE id > 1"), (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(Query(engine, "SELECT sum(id) FROM t"), (std::vector<std::string>{"6"}));
  EXPECT_EQ(info->mapped_files->mappings_made(), 1);  // both scans read the kept mapping
  // A file replaced (another inode, size and time) is mapped again: the
  // scans read its new rows, and keep that mapping in turn.
  Write(path + ".new", Batch(schema, {Int64Array(pool_.get(), {10, 20, 30, 40})}), ipc::IpcFormat::kFile);
  std::filesystem::rename(path + ".new", path);
  EXPECT_EQ(Query(engine, "SELECT sum(id) FROM t"), (std::vector<std::string>{"100"}));
  EXPECT_EQ(Query(engine, "SELECT count(*) FROM t WHERE id > 15"), (std::vector<std::string>{"3"}));
  EXPECT_EQ(info->mapped_files->mappings_made(), 2);
}

TEST_F(CatalogTest, ScansValidateTheColumnsTheyRead) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("id", int64()), field("name", utf8())};
  const std::string path = dir_ + "/t.arrow";
  Write(path, Batch(schema, {Int64Array(pool_.get(), {1, 2, 3}), StringArray(pool_.get(), {"x", "y", "z"})}),
        ipc::IpcFormat::kFile);
  auto catalog = std::make_shared<Catalog>();
  ASSERT_TRUE(catalog->RegisterPath("t", path, pool_.get()).ok());
  {  // the writer refuses corrupt arrays, so patch the file's bytes: offsets 0,1,2,3 -> 0,1,2,1000
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int32_t good[4] = {0, 1, 2, 3};
    const size_t at = bytes.find(std::string(reinterpret_cast<const char*>(good), sizeof good));
    ASSERT_NE(at, std::string::npos);
    const int32_t bad = 1000;  // past the 3 data bytes
    std::memcpy(&bytes[at + 12], &bad, sizeof bad);
    std::ofstream out(path + ".new", std::ios::binary);
    out << bytes;
    out.close();
    std::filesystem::rename(path + ".new", path);
  }
  Engine engine(catalog);
  EXPECT_EQ(Query(engine, "SELECT id FROM t WHERE id > 1"), (std::vector<std::string>{"2", "3"}));
  ExecuteOptions o;
  o.pool = pool_.get();
  auto stream = engine.Execute("SELECT name FROM t", o);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  auto b = (*stream)->Next();
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().IsInvalid()) << b.status().ToString();
  for (const char* part : {"t.arrow", "record batch 0", "name"}) {
    EXPECT_NE(b.status().ToString().find(part), std::string::npos) << part << " in " << b.status().ToString();
  }
}

TEST_F(CatalogTest, DictionaryColumnsFilterAndJoinAsTheirValues) {
  auto dict_values = StringArray(pool_.get(), {"red", "green", "blue"});
  auto indices = join::testing::Int32Array(pool_.get(), {2, 0, std::nullopt, 1, 2});
  auto d = std::make_shared<ArrayData>(*indices);
  d->type = dictionary(int32(), utf8());
  d->dictionary = dict_values;
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("id", int64()), field("color", d->type)};
  auto batch = Batch(schema, {Int64Array(pool_.get(), {1, 2, 3, 4, 5}), d});
  auto names_schema = std::make_shared<Schema>();
  names_schema->fields = {field("color", utf8()), field("rank", int64())};
  auto names = Batch(names_schema, {StringArray(pool_.get(), {"blue", "red"}), Int64Array(pool_.get(), {1, 2})});
  auto catalog = std::make_shared<Catalog>();
  ASSERT_OK(catalog->RegisterBatches("paint", schema, {batch}));
  ASSERT_OK(catalog->RegisterBatches("names", names_schema, {names}));
  Engine engine(catalog);
  EXPECT_EQ(Query(engine, "SELECT id, color FROM paint WHERE color >= 'green'"),
            (std::vector<std::string>{"2|red", "4|green"}));
  EXPECT_EQ(Query(engine, "SELECT p.id, n.rank FROM paint p JOIN names n ON n.color = p.color"),
            (std::vector<std::string>{"1|1", "2|2", "5|1"}));
}

// Conjuncts over one dictionary-encoded column run once per dictionary
// entry (and for NULL), the rows selected by their indices: every such
// predicate, alone, with a second dictionary column, and beside other
// conjuncts, gives the rows the same predicate gives over the plain
// column; a conjunct that may fail (a cast) stays per row, so a
// dictionary entry no row uses cannot fail the statement.
TEST_F(CatalogTest, DictionaryFiltersRunOnTheDictionaryAndMatchThePlainColumn) {
  std::vector<std::optional<std::string>> words;
  for (int i = 0; i < 40; ++i) words.push_back("c" + std::to_string(i) + (i % 3 == 0 ? "e" : ""));
  auto color_dict = StringArray(pool_.get(), words);
  auto size_dict = Int64Array(pool_.get(), {5, 10, 15, 20});
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("id", int64()), field("color", dictionary(int32(), utf8())), field("plain", utf8()),
                    field("size", dictionary(int32(), int64())), field("plain_size", int64())};
  std::vector<RecordBatchPtr> batches;
  int64_t id = 0;
  for (int b = 0; b < 3; ++b) {  // three batches sharing the dictionaries
    std::vector<std::optional<int64_t>> ids, sizes;
    std::vector<std::optional<int32_t>> color_idx, size_idx;
    std::vector<std::optional<std::string>> plain;
    for (int r = 0; r < 500; ++r, ++id) {
      ids.push_back(id);
      const bool null_color = id % 11 == 0;
      const int c = static_cast<int>((id * 7) % 37);  // entries 37..39 unused
      color_idx.push_back(null_color ? std::nullopt : std::optional<int32_t>(c));
      plain.push_back(null_color ? std::nullopt : words[static_cast<size_t>(c)]);
      const int z = static_cast<int>(id % 4);
      size_idx.push_back(z);
      sizes.push_back(std::vector<int64_t>{5, 10, 15, 20}[static_cast<size_t>(z)]);
    }
    auto color = std::make_shared<ArrayData>(*join::testing::Int32Array(pool_.get(), color_idx));
    color->type = schema->fields[1]->type;
    color->dictionary = color_dict;
    auto size = std::make_shared<ArrayData>(*join::testing::Int32Array(pool_.get(), size_idx));
    size->type = schema->fields[3]->type;
    size->dictionary = size_dict;
    batches.push_back(Batch(schema, {Int64Array(pool_.get(), ids), color, StringArray(pool_.get(), plain), size,
                                     Int64Array(pool_.get(), sizes)}));
  }
  auto catalog = std::make_shared<Catalog>();
  ASSERT_OK(catalog->RegisterBatches("t", schema, batches));
  Engine engine(catalog);
  const std::vector<std::string> predicates = {
      "color LIKE '%e%'",
      "color = 'c7'",
      "color IN ('c1', 'c2', 'c30e')",
      "color IS NULL",
      "coalesce(color, 'none') = 'none'",
      "color NOT LIKE 'c1%' AND id % 3 = 0",
      "color >= 'c3' AND size < 15",
      "length(color) > 2 OR color IS NULL",
      "color || 'x' = 'c5x'",
      "size = 20 AND color LIKE 'c2%' AND id > 100",
  };
  for (const auto& p : predicates) {
    std::string plain = p;
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"color", "plain"}, {"size", "plain_size"}}) {
      for (size_t at = plain.find(from); at != std::string::npos; at = plain.find(from, at + to.size()))
        plain.replace(at, from.size(), to);
    }
    const auto want = Query(engine, "SELECT id, color, size FROM t WHERE " + plain);
    EXPECT_FALSE(want.empty()) << plain;
    EXPECT_EQ(Query(engine, "SELECT id, color, size FROM t WHERE " + p), want) << p;
  }
  // An entry no row uses would fail the cast: the cast stays per row.
  auto codes = std::make_shared<ArrayData>(*join::testing::Int32Array(pool_.get(), {0, 1, 0, 1, std::nullopt}));
  codes->type = dictionary(int32(), utf8());
  codes->dictionary = StringArray(pool_.get(), {"1", "2", "not a number"});
  auto code_schema = std::make_shared<Schema>();
  code_schema->fields = {field("code", codes->type)};
  ASSERT_OK(catalog->RegisterBatches("codes", code_schema, {Batch(code_schema, {codes})}));
  EXPECT_EQ(Query(engine, "SELECT code FROM codes WHERE CAST(code AS BIGINT) > 1"),
            (std::vector<std::string>{"2", "2"}));
}

TEST_F(CatalogTest, TpchJoinsMatchTheGenerator) {
  auto catalog = std::make_shared<Catalog>();
  TpchFilesOptions to;
  to.scale = 0.002;
  to.batch_rows = 1000;
  to.pool = pool_.get();
  auto files = RegisterTpchTables(catalog.get(), dir_, to);
  ASSERT_OK(files);
  ASSERT_EQ(files->size(), 8u);
  EXPECT_EQ(catalog->ListTables().size(), 8u);
  // Reference: order dates and customers straight from the generator.
  std::unordered_map<int64_t, int32_t> order_date;
  std::unordered_map<int64_t, int64_t> order_cust;
  {
    datagen::TpchOptions go{datagen::TpchTable::kOrders, 0.002, 42, 500, pool_.get()};
    auto g = datagen::TpchGenerator::Make(go);
    ASSERT_OK(g);
    while (true) {
      auto b = (*g)->Next();
      ASSERT_OK(b);
      if (!*b) break;
      for (int64_t i = 0; i < (*b)->num_rows; ++i) {
        const int64_t k = (*b)->columns[0]->GetValues<int64_t>(1)[i];
        order_date[k] = (*b)->columns[4]->GetValues<int32_t>(1)[i];
        order_cust[k] = (*b)->columns[1]->GetValues<int64_t>(1)[i];
      }
    }
  }
  int64_t expected = 0;
  std::unordered_set<int64_t> customers_with_orders;
  {
    datagen::TpchOptions go{datagen::TpchTable::kLineitem, 0.002, 42, 500, pool_.get()};
    auto g = datagen::TpchGenerator::Make(go);
    ASSERT_OK(g);
    while (true) {
      auto b = (*g)->Next();
      ASSERT_OK(b);
      if (!*b) break;
      for (int64_t i = 0; i < (*b)->num_rows; ++i) {
        const int64_t k = (*b)->columns[0]->GetValues<int64_t>(1)[i];
        const int32_t d = order_date.at(k);
        if (d >= 9131 && d < 9221) ++expected;  // [1995-01-01, 1995-04-01)
      }
    }
  }
  for (const auto& [k, c] : order_cust) customers_with_orders.insert(c);
  Engine engine(catalog);
  auto rows = Query(engine,
                    "SELECT o.o_orderkey, l.l_linenumber FROM orders o JOIN lineitem l ON l.l_orderkey = o.o_orderkey "
                    "WHERE o.o_orderdate >= DATE '1995-01-01' AND o.o_orderdate < DATE '1995-04-01'");
  EXPECT_EQ(static_cast<int64_t>(rows.size()), expected);
  EXPECT_GT(expected, 0);
  auto three =
      Query(engine,
            "SELECT c.c_name, o.o_orderkey, l.l_quantity FROM customer c JOIN orders o ON o.o_custkey = c.c_custkey "
            "JOIN lineitem l ON l.l_orderkey = o.o_orderkey "
            "WHERE o.o_orderdate >= DATE '1995-01-01' AND o.o_orderdate < DATE '1995-04-01'");
  EXPECT_EQ(static_cast<int64_t>(three.size()), expected);
  // Key integrity through SQL: no lineitem without its order; customers without orders.
  EXPECT_TRUE(Query(engine,
                    "SELECT l_orderkey FROM lineitem l WHERE NOT EXISTS "
                    "(SELECT 1 FROM orders o WHERE o.o_orderkey = l.l_orderkey)")
                  .empty());
  auto lonely = Query(engine,
                      "SELECT c_custkey FROM customer c WHERE NOT EXISTS "
                      "(SELECT 1 FROM orders o WHERE o.o_custkey = c.c_custkey)");
  EXPECT_EQ(static_cast<int64_t>(lonely.size()), datagen::TpchRowCount(datagen::TpchTable::kCustomer, 0.002) -
                                                     static_cast<int64_t>(customers_with_orders.size()));
  auto partsupp = Query(engine,
                        "SELECT l.l_orderkey FROM lineitem l LEFT JOIN partsupp ps ON ps.ps_partkey = l.l_partkey "
                        "AND ps.ps_suppkey = l.l_suppkey WHERE ps.ps_partkey IS NULL");
  EXPECT_TRUE(partsupp.empty());
}

}  // namespace
}  // namespace quiver::sql
