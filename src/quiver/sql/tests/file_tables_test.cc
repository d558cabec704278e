// File tables (sql/file_tables.h, binder/bind_file_table.cc; issue 36
// section 3): `FROM 'path'`, read_parquet, read_csv, globs, directories and
// hive partitions, over parquet-testing's files copied into a temporary
// directory. The expected values are DuckDB 1.x's answers to the same
// statements over the same files (its Node API; noted per statement).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "quiver/ipc/writer.h"
#include "quiver/sql/spark_dialect.h"
#include "quiver/sql/tests/sql_test_fixture.h"
#include "quiver/testing/shared_data.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)
using V = std::vector<std::string>;

class FileTablesTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    const fs::path data = ::quiver::testing::SharedDataDir() / "parquet-testing" / "data";
    if (!fs::exists(data / "alltypes_plain.parquet")) GTEST_SKIP() << "no parquet-testing data in " << data;
    dir_ = fs::temp_directory_path() / ("quiver-file-tables-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    // h/year=2020: 8 rows (ids 0..7), h/year=2021: 2 rows (ids 6, 7).
    fs::create_directories(dir_ / "h" / "year=2020");
    fs::create_directories(dir_ / "h" / "year=2021");
    fs::copy_file(data / "alltypes_plain.parquet", dir_ / "h" / "year=2020" / "a.parquet");
    fs::copy_file(data / "alltypes_plain.snappy.parquet", dir_ / "h" / "year=2021" / "b.parquet");
    // p: the same, and a partition whose file is not Parquet at all: only
    // statements that prune it can succeed.
    fs::create_directories(dir_ / "p" / "year=2022");
    fs::copy(dir_ / "h", dir_ / "p", fs::copy_options::recursive);
    std::ofstream(dir_ / "p" / "year=2022" / "c.parquet") << "PAR1 not a parquet file PAR1";
    std::ofstream(dir_ / "x.csv") << "a;b\n1;x\n2;y\n3;\n";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  ExecuteOptions FileOptions() {
    ExecuteOptions o = Options();
    o.file_tables = true;
    return o;
  }
  V Query(const std::string& sql, bool sorted = true) {
    auto r = Run(sql, FileOptions());
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, sorted) : V{};
  }
  Status ErrorOf(const std::string& sql, bool allowed = true) {
    auto r = Run(sql, allowed ? FileOptions() : Options());
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? Status::OK() : r.status();
  }
  size_t NumColumns(const std::string& sql) {
    auto stream = engine_->Execute(sql, FileOptions());
    EXPECT_TRUE(stream.ok()) << sql << ": " << stream.status().ToString();
    return stream.ok() ? (*stream)->schema()->fields.size() : 0;
  }
  std::string P(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

TEST_F(FileTablesTest, QuotedPathGlobAndHivePartitions) {
  // DuckDB: [["2020","8","28"],["2021","2","13"]], year BIGINT
  EXPECT_EQ(
      Query("SELECT year, count(*), sum(id) FROM '" + P("h") + "/*/*.parquet' GROUP BY year ORDER BY year", false),
      (V{"2020|8|28", "2021|2|13"}));
  // DuckDB: [[6,"2021"],[7,"2021"]]; the alias is the file's stem
  EXPECT_EQ(Query("SELECT b.id, year FROM '" + P("h/year=2021/b.parquet") + "' ORDER BY 1", false),
            (V{"6|2021", "7|2021"}));
  EXPECT_EQ(Query("SELECT t.id FROM '" + P("h/year=2021/b.parquet") + "' AS t"), (V{"6", "7"}));
  // a directory is every .parquet file under it
  EXPECT_EQ(Query("SELECT count(*), sum(year) FROM '" + P("h") + "'"), (V{"10|20202"}));
  // joined with itself and with a catalog-free subquery
  EXPECT_EQ(Query("SELECT count(*) FROM '" + P("h/year=2020/a.parquet") + "' a JOIN '" + P("h/year=2021/b.parquet") +
                  "' b ON a.id = b.id"),
            (V{"2"}));
  EXPECT_EQ(NumColumns("SELECT * FROM '" + P("h") + "'"), 12u);  // 11 of the files, year
}

TEST_F(FileTablesTest, ReadParquetAndReadCsvWithNamedParameters) {
  // DuckDB: [["2",6,"BIGINT"]]
  EXPECT_EQ(Query("SELECT count(*), min(id) FROM read_parquet('" + P("h") + "/year=*/*.parquet') WHERE year = 2021"),
            (V{"2|6"}));
  // DuckDB: [["10"]]
  EXPECT_EQ(Query("SELECT count(*) FROM read_parquet(['" + P("h/year=2020/a.parquet") + "', '" +
                  P("h/year=2021/b.parquet") + "'])"),
            (V{"10"}));
  EXPECT_EQ(Query("SELECT count(*) FROM read_parquet('" + P("h") + "/*/*.parquet', hive_partitioning => false) " +
                  "WHERE id > 5"),
            (V{"4"}));
  EXPECT_EQ(NumColumns("SELECT * FROM read_parquet('" + P("h") + "/*/*.parquet', hive_partitioning = false)"), 11u);
  // DuckDB: [["6","2","VARCHAR"]]
  EXPECT_EQ(Query("SELECT sum(a), count(b) FROM read_csv('" + P("x.csv") + "', header => true, delim => ';')"),
            (V{"6|2"}));
  EXPECT_EQ(Query("SELECT a, b FROM read_csv('" + P("x.csv") + "', header = true, sep = ';') ORDER BY a", false),
            (V{"1|x", "2|y", "3|null"}));
  EXPECT_EQ(Query("SELECT count(*) FROM '" + P("x.csv") + "'"), (V{"3"}));
}

// read_csv's column types (issue 36 §2, an override per column): DuckDB's
// list form by position, ARRAY['..'], and by name with struct_pack; DECIMAL
// values exact (rounded half away from zero past the scale), where the
// inferred DOUBLE would not be.
TEST_F(FileTablesTest, ReadCsvColumnTypes) {
  std::ofstream(dir_ / "money.csv") << "id,price,qty\n1,10.005,3\n2,-0.5,\n3,0.1,7\n4,0.2,1\n";
  const std::string f = "read_csv('" + P("money.csv") + "'";
  // DuckDB: [["1","10.01","3"],["2","-0.50",null],["3","0.10","7"],["4","0.20","1"]]
  EXPECT_EQ(Query("SELECT * FROM " + f + ", types => ARRAY['BIGINT', 'DECIMAL(15,2)']) ORDER BY id", false),
            (V{"1|10.01|3", "2|-0.50|null", "3|0.10|7", "4|0.20|1"}));
  // DuckDB (v1.5, the same struct_pack): [["9.81"]] (inferred DOUBLE: 9.805)
  EXPECT_EQ(Query("SELECT sum(price) FROM " + f + ", types => struct_pack(price := 'decimal(15,2)'))"), (V{"9.81"}));
  // DuckDB (dtypes = {'price': 'NUMERIC(6, 3)'}): [["30.915"]]
  EXPECT_EQ(Query("SELECT sum(price * qty) FROM " + f + ", dtypes => struct_pack(price := 'NUMERIC(6, 3)'))"),
            (V{"30.915"}));
  Status st = ErrorOf("SELECT * FROM " + f + ", types => struct_pack(price := 'DECIMAL(3,2)'))");
  EXPECT_NE(st.message().find("line 2, column 2 ('price'): '10.005'"), std::string::npos) << st.ToString();
  st = ErrorOf("SELECT * FROM " + f + ", types => struct_pack(nope := 'int'))");
  EXPECT_NE(st.message().find("names no column 'nope'"), std::string::npos) << st.ToString();
  st = ErrorOf("SELECT * FROM " + f + ", types => ARRAY['int', 'int', 'int', 'int'])");
  EXPECT_NE(st.message().find("4 column types given for 3 columns"), std::string::npos) << st.ToString();
  st = ErrorOf("SELECT * FROM " + f + ", types => ARRAY['decimal(40,2)'])");
  EXPECT_NE(st.message().find("precision 1..38"), std::string::npos) << st.ToString();
  st = ErrorOf("SELECT * FROM " + f + ", types => 'int')");
  EXPECT_NE(st.message().find("takes ARRAY['TYPE', ...]"), std::string::npos) << st.ToString();
}

TEST_F(FileTablesTest, PartitionFiltersSkipOtherPartitionsFiles) {
  const std::string glob = P("p") + "/*/*.parquet";
  EXPECT_EQ(Query("SELECT count(*) FROM '" + glob + "' WHERE year = 2021"), (V{"2"}));
  EXPECT_EQ(Query("SELECT count(*) FROM '" + glob + "' t WHERE t.year IN (2020, 2021) AND id > 5"), (V{"4"}));
  EXPECT_EQ(Query("SELECT count(*) FROM '" + glob + "' WHERE '2020' = year"), (V{"8"}));
  // without a filter on year the broken partition is read: its error names the file
  const Status st = ErrorOf("SELECT count(*) FROM '" + glob + "' WHERE id > 5");
  EXPECT_NE(st.message().find("c.parquet"), std::string::npos) << st.ToString();
  // OR is no pruning filter
  EXPECT_FALSE(ErrorOf("SELECT count(*) FROM '" + glob + "' WHERE year = 2021 OR id = 1").ok());
}

TEST_F(FileTablesTest, ErrorsNameThePathAndFileTablesAreOffByDefault) {
  Status st = ErrorOf("SELECT * FROM '" + P("nope.parquet") + "'");
  EXPECT_EQ(st.sql_state(), "42P01") << st.ToString();
  EXPECT_NE(st.message().find("nope.parquet"), std::string::npos) << st.ToString();
  st = ErrorOf("SELECT * FROM read_parquet('" + P("h") + "/*.csv')");
  EXPECT_EQ(st.sql_state(), "42P01") << st.ToString();
  EXPECT_NE(st.message().find("no file matches"), std::string::npos) << st.ToString();
  st = ErrorOf("SELECT * FROM read_csv('" + P("x.csv") + "', columns => 1)");
  EXPECT_EQ(st.sql_state(), "0A000") << st.ToString();
  st = ErrorOf("SELECT * FROM generate_series(1, 3)");
  EXPECT_EQ(st.sql_state(), "0A000") << st.ToString();
  // the server's default: no file tables
  st = ErrorOf("SELECT * FROM '" + P("h/year=2021/b.parquet") + "'", false);
  EXPECT_EQ(st.sql_state(), "42501") << st.ToString();
  st = ErrorOf("SELECT * FROM read_csv('/etc/passwd')", false);
  EXPECT_EQ(st.sql_state(), "42501") << st.ToString();
}

// Arrow IPC files are path tables too (a README step queried
// `FROM 'x.arrow'` and got "cannot tell the format"): by extension, or by
// the file / stream magic; a directory read as Arrow, mixed formats refused.
TEST_F(FileTablesTest, ArrowIpcFilesArePathTablesByExtensionOrMagic) {
  MemoryPool* p = pool_.get();
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("k", int64(), true), field("s", utf8(), true)};
  auto write = [&](const fs::path& path, std::vector<std::optional<int64_t>> k,
                   std::vector<std::optional<std::string>> s, ipc::IpcFormat format) {
    auto batch = Batch(schema, {join::testing::Int64Array(p, k), join::testing::StringArray(p, s, false)});
    auto sink = ipc::OpenOutputStream(path.string());
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    ipc::WriteOptions wo;
    wo.pool = p;
    ASSERT_TRUE(ipc::WriteTable(sink->get(), schema, {batch}, format, wo).ok());
  };
  fs::create_directories(dir_ / "a");
  write(dir_ / "a" / "one.arrow", {1, 2, std::nullopt}, {"x", "y", "z"}, ipc::IpcFormat::kFile);
  write(dir_ / "a" / "two.arrows", {10, 20}, {"u", std::nullopt}, ipc::IpcFormat::kStream);
  write(dir_ / "noext", {7}, {"n"}, ipc::IpcFormat::kFile);
  write(dir_ / "noext_stream", {8}, {"m"}, ipc::IpcFormat::kStream);
  EXPECT_EQ(Query("SELECT k, s FROM '" + P("a/one.arrow") + "' ORDER BY k", false), (V{"1|x", "2|y", "null|z"}));
  EXPECT_EQ(Query("SELECT sum(k), count(s), count(*) FROM '" + P("a/two.arrows") + "'"), (V{"30|1|2"}));
  // by magic (no extension): the file format and the stream format
  EXPECT_EQ(Query("SELECT k, s FROM '" + P("noext") + "'"), (V{"7|n"}));
  EXPECT_EQ(Query("SELECT k, s FROM '" + P("noext_stream") + "'"), (V{"8|m"}));
  // a glob over both files is one table; joined with a Parquet file
  EXPECT_EQ(Query("SELECT count(*), sum(k) FROM '" + P("a") + "/*.arrow*'"), (V{"5|33"}));
  EXPECT_EQ(Query("SELECT o.k, b.id FROM '" + P("a/one.arrow") + "' o JOIN '" + P("h/year=2021/b.parquet") +
                      "' b ON b.id - 5 = o.k ORDER BY 1",
                  false),
            (V{"1|6", "2|7"}));
  // mixed formats in one table: refused, naming the files
  fs::copy_file(dir_ / "h" / "year=2020" / "a.parquet", dir_ / "a" / "three.parquet");
  const Status st = ErrorOf("SELECT count(*) FROM '" + P("a") + "/*'");
  EXPECT_NE(st.message().find("cannot share a table"), std::string::npos) << st.ToString();
  // a file that is neither: the error names it and the formats tried
  std::ofstream(dir_ / "junk") << "hello";
  const Status junk = ErrorOf("SELECT * FROM '" + P("junk") + "'");
  EXPECT_NE(junk.message().find("cannot tell the format"), std::string::npos) << junk.ToString();
}

TEST(RewriteFromStrings, OnlyFromItemsBecomeIdentifiers) {
  EXPECT_EQ(RewriteFromStrings("SELECT * FROM 'a.parquet'"), "SELECT * FROM \"a.parquet\"");
  EXPECT_EQ(RewriteFromStrings("select 'x' from 'a.csv' t join 'b.csv' u on t.k = 'k', 'c' where 'x' = 'y'"),
            "select 'x' from \"a.csv\" t join \"b.csv\" u on t.k = 'k', \"c\" where 'x' = 'y'");
  EXPECT_EQ(RewriteFromStrings("SELECT a IS DISTINCT FROM 'b' FROM t"), "SELECT a IS DISTINCT FROM 'b' FROM t");
  EXPECT_EQ(RewriteFromStrings("SELECT trim(both 'x' FROM 'xax'), f(a, 'b') FROM t"),
            "SELECT trim(both 'x' FROM 'xax'), f(a, 'b') FROM t");
  EXPECT_EQ(RewriteFromStrings("SELECT * FROM (SELECT 1 FROM 'it''s \"q\".csv') s -- FROM 'c'"),
            "SELECT * FROM (SELECT 1 FROM \"it's \"\"q\"\".csv\") s -- FROM 'c'");
  EXPECT_EQ(RewriteFromStrings("SELECT * FROM 'open"), "SELECT * FROM 'open");
  EXPECT_EQ(RewriteFromStrings("SELECT * FROM read_parquet(['a', 'b']) WHERE x[1] = 2"),
            "SELECT * FROM read_parquet(ARRAY['a', 'b']) WHERE x[1] = 2");
}

}  // namespace
}  // namespace quiver::sql
