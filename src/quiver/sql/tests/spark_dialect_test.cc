// Tests of quiver/sql/spark_dialect.h: the lexical pre-pass (backticks,
// `default` qualifiers; strings, quoted identifiers and comments left alone;
// byte offsets kept), the Spark commands, and both through the engine.
#include "quiver/sql/spark_dialect.h"

#include <gtest/gtest.h>

#include <string>

#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

std::string Rewrite(const std::string& sql) {
  auto r = RewriteSparkSql(sql);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::string();
}

TEST(SparkDialectRewrite, BackticksBecomeDoubleQuotes) {
  EXPECT_EQ(Rewrite("SELECT `a` FROM `t`"), "SELECT \"a\" FROM \"t\"");
  EXPECT_EQ(Rewrite("SELECT `my col`, t.`x` FROM t"), "SELECT \"my col\", t.\"x\" FROM t");
  // `` is one backtick; a " inside is doubled for the PostgreSQL grammar.
  EXPECT_EQ(Rewrite("SELECT `a``b`"), "SELECT \"a`b\"");
  EXPECT_EQ(Rewrite("SELECT `a\"b`"), "SELECT \"a\"\"b\"");
}

TEST(SparkDialectRewrite, StringsIdentifiersAndCommentsUntouched) {
  for (const char* sql : {
           "SELECT 'a`b`c' FROM t",
           "SELECT 'it''s `x`' FROM t",
           "SELECT E'\\' `x`' FROM t",
           "SELECT \"we`ird\" FROM t",
           "SELECT 1 -- `comment` default.t\nFROM t",
           "SELECT 1 /* `a` /* nested `b` */ default.x */ FROM t",
           "SELECT $$ `x` default.t $$, $tag$ `y` $tag$ FROM t",
           "SELECT 'default.t' FROM t",
           "INSERT INTO t VALUES (DEFAULT)",
           "SELECT x.default FROM t x",
           "SELECT 1e5, $1 FROM t",
       }) {
    EXPECT_EQ(Rewrite(sql), sql) << sql;
  }
}

TEST(SparkDialectRewrite, DefaultQualifierBlankedKeepingOffsets) {
  EXPECT_EQ(Rewrite("SELECT * FROM default.region"), "SELECT * FROM         region");
  EXPECT_EQ(Rewrite("SELECT * FROM DEFAULT . region"), "SELECT * FROM           region");
  EXPECT_EQ(Rewrite("FROM spark_catalog.default.region"), "FROM                       region");
  EXPECT_EQ(Rewrite("FROM hive_metastore.default.region"), "FROM                        region");
  EXPECT_EQ(Rewrite("FROM `default`.`region`"), "FROM           \"region\"");
  EXPECT_EQ(Rewrite("SELECT default.region.r_name FROM x"), "SELECT         region.r_name FROM x");
  // Newlines inside a blanked qualifier stay (line numbers of errors).
  EXPECT_EQ(Rewrite("FROM default.\nregion"), "FROM         \nregion");
  // Another catalog: the qualifier stays (quoted) for the binder to refuse.
  EXPECT_EQ(Rewrite("FROM other.default.region"), "FROM other.\"default\".region");
  const std::string sql = "SELECT `a` FROM default.t WHERE x = 'q'";
  EXPECT_EQ(Rewrite(sql).size(), sql.size());
}

// Spark's position(sub, s[, start]) becomes locate (the grammar takes only
// position(sub IN s)); char(n) in an expression becomes chr(n), but not
// as a type (after AS, ::, or a column name). Offsets are kept.
TEST(SparkDialectRewrite, PositionCallsAndCharFunction) {
  EXPECT_EQ(Rewrite("SELECT position('a', s) FROM t"), "SELECT locate  ('a', s) FROM t");
  EXPECT_EQ(Rewrite("SELECT POSITION ('a', s, 3)"), "SELECT locate   ('a', s, 3)");
  EXPECT_EQ(Rewrite("SELECT char(65), 1 + char(66)"), "SELECT chr (65), 1 + chr (66)");
  for (const char* sql : {
           "SELECT position('a' IN s) FROM t",
           "SELECT position('x,y' IN concat(a, ',')) FROM t",
           "SELECT t.position(1, 2), 'position(1, 2)', \"position\"(1, 2)",
           "SELECT CAST(x AS char(3)), x::char(2), CAST(x AS CHAR (1))",
           "CREATE TABLE t (c char(10), d char (2))",
           "SELECT position, char FROM t",
       }) {
    EXPECT_EQ(Rewrite(sql), sql) << sql;
  }
}

TEST(SparkDialectRewrite, UnterminatedBacktickIsASyntaxError) {
  auto r = RewriteSparkSql("SELECT `abc FROM t");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().sql_state(), "42601");
  EXPECT_NE(r.status().message().find("line 1, column 8"), std::string::npos) << r.status().ToString();
}

std::string SparkRewrite(const std::string& sql) {
  auto r = RewriteSparkSql(sql, /*spark=*/true);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::string();
}

// The spark dialect's literals (Spark SQL reference, "Literals"): '...' and
// "..." are strings with backslash escapes, r'...' raw; written as
// PostgreSQL standard strings, padded to their length (offsets kept).
// <=> is IS NOT DISTINCT FROM, == is =.
TEST(SparkDialectRewrite, SparkStringLiteralsAndOperators) {
  EXPECT_EQ(SparkRewrite("SELECT regexp_extract('100-200', '(\\\\d+)-(\\\\d+)', 1)"),
            "SELECT regexp_extract('100-200', '(\\d+)-(\\d+)'  , 1)");
  EXPECT_EQ(SparkRewrite("SELECT \"one\", 'it\\'s', 'a''b', \"say \\\"hi\\\"\""),
            "SELECT 'one', 'it''s', 'a''b', 'say \"hi\"'  ");
  EXPECT_EQ(SparkRewrite("SELECT 'a\\tb\\nc', '\\u00e9\\101', '50\\%_\\_', r'\\d+', R\"it's\""),
            "SELECT 'a\tb\nc'  , '\xc3\xa9"
            "A'       , '50\\%_\\_',  '\\d+',  'it''s'");
  EXPECT_EQ(SparkRewrite("SELECT 1 <=> NULL, a == b FROM t WHERE x <= 1 AND y >= 2"),
            "SELECT 1  IS NOT DISTINCT FROM  NULL, a  = b FROM t WHERE x <= 1 AND y >= 2");
  EXPECT_EQ(SparkRewrite("SELECT E'a\\tb', $$\\d$$"), "SELECT E'a\\tb', $$\\d$$");  // PostgreSQL's own forms
  auto nul = RewriteSparkSql("SELECT 'a\\0b'", true);
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.status().sql_state(), "22021");
  EXPECT_NE(nul.status().message().find("line 1, column 10"), std::string::npos) << nul.status().ToString();
  // The postgres dialect: standard strings, "identifiers".
  for (const char* same : {"SELECT '\\d', \"one\" FROM t", "SELECT a <= b"}) {
    EXPECT_EQ(Rewrite(same), same);
  }
}

// Spark's inline tables: `FROM VALUES ... [AS] t(cols)` gets its
// parentheses (a space before VALUES and one after the list become them),
// bare rows get theirs; other VALUES are the grammar's.
TEST(SparkDialectRewrite, InlineTables) {
  EXPECT_EQ(RewriteInlineTables("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(x, y)"),
            "SELECT * FROM(VALUES (1, 'a'), (2, 'b'))AS t(x, y)");
  EXPECT_EQ(RewriteInlineTables("SELECT sum(col) FROM VALUES 1, 2, 3 AS tab(col)"),
            "SELECT sum(col) FROM(VALUES (1), (2), (3))AS tab(col)");
  EXPECT_EQ(RewriteInlineTables("SELECT * FROM values ('a') tab(col) WHERE col > ''"),
            "SELECT * FROM(values ('a'))tab(col) WHERE col > ''");
  EXPECT_EQ(RewriteInlineTables("SELECT * FROM VALUES (1)"), "SELECT * FROM(VALUES (1))");
  EXPECT_EQ(RewriteInlineTables("SELECT * FROM VALUES 1 + 2, abs(-3) * 2, CASE WHEN true THEN 1 ELSE 2 END AS t(x)"),
            "SELECT * FROM(VALUES (1 + 2), (abs(-3) * 2), (CASE WHEN true THEN 1 ELSE 2 END))AS t(x)");
  EXPECT_EQ(RewriteInlineTables("SELECT * FROM t1 JOIN VALUES (1, 'x') AS v(k, s) ON t1.k = v.k"),
            "SELECT * FROM t1 JOIN(VALUES (1, 'x'))AS v(k, s) ON t1.k = v.k");
  EXPECT_EQ(RewriteInlineTables("SELECT * FROM VALUES 'a', 'b' \"t\""), "SELECT * FROM(VALUES ('a'), ('b'))\"t\"");
  EXPECT_EQ(RewriteInlineTables("VALUES 1, 2"), "VALUES (1), (2)");
  EXPECT_EQ(RewriteInlineTables("SELECT 1 UNION ALL VALUES 2"), "SELECT 1 UNION ALL VALUES (2)");
  for (const char* same : {"INSERT INTO t VALUES (1), (2)", "VALUES (1), (2)", "SELECT * FROM (VALUES (1)) t(x)",
                           "SELECT 'FROM VALUES 1' FROM t", "SELECT values FROM t", "SELECT 1 -- FROM VALUES 1"}) {
    EXPECT_EQ(RewriteInlineTables(same), same);
  }
}

TEST(SparkDialectCommand, Recognised) {
  using K = SparkCommand::Kind;
  EXPECT_EQ(MatchSparkCommand("SHOW SCHEMAS").kind, K::kShowSchemas);
  EXPECT_EQ(MatchSparkCommand("show databases;").kind, K::kShowSchemas);
  EXPECT_EQ(MatchSparkCommand("SHOW NAMESPACES IN spark_catalog LIKE 'd*'").pattern, "d*");
  EXPECT_EQ(MatchSparkCommand("SHOW CATALOGS").kind, K::kShowCatalogs);
  auto tables = MatchSparkCommand("SHOW TABLES FROM `hive_metastore`.default 'r*'");
  EXPECT_EQ(tables.kind, K::kShowTables);
  EXPECT_EQ(tables.catalog, "hive_metastore");
  EXPECT_EQ(tables.schema, "default");
  EXPECT_EQ(tables.pattern, "r*");
  auto d = MatchSparkCommand("DESCRIBE TABLE spark_catalog.default.`Region`");
  EXPECT_EQ(d.kind, K::kDescribe);
  EXPECT_EQ(d.catalog, "spark_catalog");
  EXPECT_EQ(d.table, "Region");
  EXPECT_EQ(d.name_offset, 15);
  EXPECT_EQ(MatchSparkCommand("desc extended t").table, "t");
  EXPECT_EQ(MatchSparkCommand("DESCRIBE table").table, "table");  // a table named "table"
  auto use = MatchSparkCommand("USE hive_metastore.default");
  EXPECT_EQ(use.kind, K::kUse);
  EXPECT_EQ(use.schema, "default");
  EXPECT_EQ(MatchSparkCommand("USE CATALOG spark_catalog").catalog, "spark_catalog");
  for (const char* other : {"SELECT 1", "SHOW search_path", "DESCRIBE a b", "USE", "SHOW TABLES IN",
                            "DESCRIBE SELECT 1", "SHOW TABLES 'a' 'b'", "/* SHOW TABLES */ SELECT 1"}) {
    EXPECT_EQ(MatchSparkCommand(other).kind, K::kNone) << other;
  }
}

TEST(SparkDialectCommand, PatternAndQualifier) {
  EXPECT_TRUE(SparkPatternMatch("", "x"));
  EXPECT_TRUE(SparkPatternMatch("r*", "Region"));
  EXPECT_TRUE(SparkPatternMatch("n*|r*", "region"));
  EXPECT_FALSE(SparkPatternMatch("n*|p*", "region"));
  EXPECT_TRUE(SparkPatternMatch("*ion", "region"));
  EXPECT_TRUE(CheckQualifier("", "").ok());
  EXPECT_TRUE(CheckQualifier("HIVE_METASTORE", "Default").ok());
  EXPECT_EQ(CheckQualifier("", "public").sql_state(), "3F000");
  EXPECT_EQ(CheckQualifier("main", "default").sql_state(), "42704");
}

TEST(SparkDialectTypeName, AsDescribePrintsIt) {
  EXPECT_EQ(SparkTypeName(*int64()), "bigint");
  EXPECT_EQ(SparkTypeName(*int32()), "int");
  EXPECT_EQ(SparkTypeName(*uint32()), "bigint");
  EXPECT_EQ(SparkTypeName(*float64()), "double");
  EXPECT_EQ(SparkTypeName(*boolean()), "boolean");
  EXPECT_EQ(SparkTypeName(*large_utf8()), "string");
  EXPECT_EQ(SparkTypeName(*binary()), "binary");
  EXPECT_EQ(SparkTypeName(*decimal(128, 15, 2)), "decimal(15,2)");
  EXPECT_EQ(SparkTypeName(*date32()), "date");
  EXPECT_EQ(SparkTypeName(*timestamp(TimeUnit::kMicro, "UTC")), "timestamp");
  EXPECT_EQ(SparkTypeName(*null()), "void");
  EXPECT_EQ(SparkTypeName(*list(field("item", int32()))), "array<int>");
  EXPECT_EQ(SparkTypeName(*struct_({field("a", int16()), field("b", utf8())})), "struct<a:smallint,b:string>");
  EXPECT_EQ(
      SparkTypeName(*map(field("entries", struct_({field("key", utf8(), false), field("value", int64())}), false))),
      "map<string,bigint>");
  EXPECT_EQ(SparkTypeName(*time64(TimeUnit::kMicro)), "string");  // served as text
  EXPECT_EQ(SparkTypeName(*dictionary(int32(), utf8())), "string");
}

// ---- through the engine -----------------------------------------------------------

class SparkSqlTest : public SqlTest {};

// The result columns are Spark's, with the names and types Databricks
// returns (its SHOW TABLES keeps `database`, SHOW SCHEMAS `databaseName`),
// also when no row matches.
TEST_F(SparkSqlTest, CommandColumnsAreSparks) {
  const std::vector<std::string> tables = {"database: utf8 not null", "tableName: utf8 not null",
                                           "isTemporary: bool not null"};
  EXPECT_EQ(Columns("SHOW TABLES"), tables);
  EXPECT_EQ(Columns("SHOW TABLES IN default LIKE 'none'"), tables);
  for (const char* sql : {"SHOW SCHEMAS", "SHOW DATABASES", "SHOW NAMESPACES IN spark_catalog"}) {
    EXPECT_EQ(Columns(sql), (std::vector<std::string>{"databaseName: utf8 not null"})) << sql;
  }
  EXPECT_EQ(Columns("SHOW CATALOGS"), (std::vector<std::string>{"catalog: utf8 not null"}));
  EXPECT_EQ(Columns("DESCRIBE t2"),
            (std::vector<std::string>{"col_name: utf8 not null", "data_type: utf8 not null", "comment: utf8"}));
  EXPECT_EQ(Columns("DESC TABLE EXTENDED t2"), Columns("DESCRIBE t2"));
}

// DESCRIBE's comment is the field's "comment" metadata, as Spark keeps it.
TEST_F(SparkSqlTest, DescribeCommentFromFieldMetadata) {
  auto schema = std::make_shared<Schema>();
  auto id = std::make_shared<Field>(*field("id", int64()));
  id->metadata = {{"comment", "the key"}};
  schema->fields = {id, field("price", decimal(128, 15, 2))};
  auto batch = Batch(schema, {Int64Array(pool_.get(), {1, 2}), Decimals(pool_.get(), {1.5, 2.25})});
  ASSERT_OK(catalog_->RegisterBatches("commented", schema, {batch}));
  auto desc = Run("DESCRIBE commented");
  ASSERT_OK(desc);
  EXPECT_EQ(Rows(*desc, false), (std::vector<std::string>{"id|bigint|the key", "price|decimal(15,2)|null"}));
}

TEST_F(SparkSqlTest, QualifiedAndQuotedNames) {
  const auto expected = Rows(*Run("SELECT k, v FROM t2"));
  for (const char* sql : {"SELECT `k`, `v` FROM `t2`", "SELECT k, v FROM default.t2",
                          "SELECT t2.k, default.t2.v FROM spark_catalog.default.t2",
                          "SELECT x.k, x.v FROM hive_metastore.default.t2 AS x", "SELECT k, v FROM \"default\".t2",
                          "SELECT `x`.`k`, x.v FROM `spark_catalog`.`default`.`t2` x"}) {
    auto out = Run(sql);
    ASSERT_OK(out) << sql;
    EXPECT_EQ(Rows(*out), expected) << sql;
  }
  auto bad_schema = Run("SELECT k FROM other.t2");
  ASSERT_RAISES(KeyError, bad_schema);
  EXPECT_EQ(bad_schema.status().sql_state(), "3F000");
  auto bad_catalog = Run("SELECT k FROM main.default.t2");
  ASSERT_RAISES(KeyError, bad_catalog);
  EXPECT_EQ(bad_catalog.status().sql_state(), "42704");
  // Positions after a blanked qualifier are those of the text as sent.
  auto missing = Run("SELECT nope FROM default.t2");
  ASSERT_RAISES(KeyError, missing);
  EXPECT_NE(missing.status().message().find("column 8"), std::string::npos) << missing.status().ToString();
}

TEST_F(SparkSqlTest, Commands) {
  auto schemas = Run("SHOW SCHEMAS");
  ASSERT_OK(schemas);
  EXPECT_EQ(Rows(*schemas), (std::vector<std::string>{"default"}));
  auto tables = Run("SHOW TABLES IN default LIKE 't1|t3'");
  ASSERT_OK(tables);
  EXPECT_EQ(Rows(*tables), (std::vector<std::string>{"default|t1|false", "default|t3|false"}));
  auto desc = Run("DESCRIBE TABLE default.`t2`");
  ASSERT_OK(desc);
  EXPECT_EQ(Rows(*desc, false), (std::vector<std::string>{"k|bigint|null", "s|string|null", "v|int|null"}));
  auto use = Run("USE default");
  ASSERT_OK(use);
  EXPECT_TRUE(Rows(*use).empty());
  auto use_other = Run("USE SCHEMA sales");
  ASSERT_RAISES(KeyError, use_other);
  EXPECT_EQ(use_other.status().sql_state(), "3F000");
  auto show_other = Run("SHOW TABLES FROM sales");
  EXPECT_EQ(show_other.status().sql_state(), "3F000");
  auto constant = Run("SELECT 1, CAST(1 AS DOUBLE)");
  ASSERT_OK(constant);
  EXPECT_EQ(Rows(*constant), (std::vector<std::string>{"1|1"}));
}

// Spark SQL reference, "Inline Table", and Spark's function examples,
// which read their rows from one (`FROM VALUES ... AS tab(col)`); Spark's
// column names col1, col2, ...
TEST_F(SparkSqlTest, InlineTablesAsSparkReadsThem) {
  ExecuteOptions o = Options();
  o.dialect = SqlDialect::kSpark;
  auto rows = [&](const std::string& sql) {
    auto r = Run(sql, o);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r, false) : std::vector<std::string>{};
  };
  EXPECT_EQ(rows("SELECT * FROM VALUES ('one', 1)"), (std::vector<std::string>{"one|1"}));
  EXPECT_EQ(rows("SELECT * FROM VALUES ('one', 1), ('two', 2), ('three', null) AS data(a, b)"),
            (std::vector<std::string>{"one|1", "two|2", "three|null"}));
  EXPECT_EQ(rows("SELECT count_if(col % 2 = 0) FROM VALUES (NULL), (0), (1), (2), (3) AS tab(col)"),
            (std::vector<std::string>{"2"}));
  EXPECT_EQ(rows("SELECT sum(col) FROM VALUES 1, 2, 3 AS tab(col)"), (std::vector<std::string>{"6"}));
  EXPECT_EQ(rows("VALUES 1, 2"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(rows("SELECT col2, col1 FROM VALUES (1, 'a')"), (std::vector<std::string>{"a|1"}));
  EXPECT_EQ(rows("SELECT a.k, v.s FROM VALUES 1, 2 AS a(k) JOIN VALUES (2, 'x') AS v(k, s) ON a.k = v.k"),
            (std::vector<std::string>{"2|x"}));
  EXPECT_EQ(rows("SELECT * FROM VALUES (\"one\", 1), (\"two\", 2) AS data(a, b)"),
            (std::vector<std::string>{"one|1", "two|2"}));
  // Spark's escapes: the documented regexp examples (Spark's string
  // functions page), the raw form, <=> (Spark's null-safe equality page).
  EXPECT_EQ(rows("SELECT regexp_extract('100-200', '(\\\\d+)-(\\\\d+)', 1), regexp_replace('100-200', '(\\\\d+)', "
                 "'num'), length('\\\\d'), regexp_extract('100-200', r'(\\d+)', 1), 'it\\'s'"),
            (std::vector<std::string>{"100|num-num|2|100|it's"}));
  EXPECT_EQ(rows("SELECT 2 <=> 2, 1 <=> '1', true <=> NULL, NULL <=> NULL, 2 == 2"),
            (std::vector<std::string>{"true|true|false|true|true"}));
  // Positions after the rewrite are those of the text as sent.
  auto missing = Run("SELECT nope FROM VALUES (1) AS t(x)", o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("column 8"), std::string::npos) << missing.status().ToString();
}

}  // namespace
}  // namespace quiver::sql
