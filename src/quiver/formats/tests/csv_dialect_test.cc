// Tests of how the CSV reader reads the shape of a text (issue 36 §2),
// each against what DuckDB's read_csv (v1.5) reads from the same bytes:
// blank lines (a NULL row in a table of one column, skipped otherwise),
// in the serial parse, the parallel byte ranges and the streamed blocks;
// the quote sniffed from fields it wraps whole ('90s is a value, not a
// quote); empty and header-only texts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_ranges.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

using quiver::testing::IsNull;
using quiver::testing::StringAt;
using quiver::testing::ValueAt;

// Column 0 of `batches` as text, NULL as "NULL" (int64 or utf8 columns).
std::vector<std::string> FirstColumn(const std::vector<RecordBatchPtr>& batches) {
  std::vector<std::string> out;
  for (const auto& b : batches) {
    const ArrayData& c = *b->columns[0];
    for (int64_t r = 0; r < b->num_rows; ++r) {
      if (IsNull(c, r)) {
        out.push_back("NULL");
      } else if (c.type->id == TypeId::kInt64) {
        out.push_back(std::to_string(ValueAt<int64_t>(c, r)));
      } else {
        out.push_back(std::string(StringAt(c, r)));
      }
    }
  }
  return out;
}

class CsvDialectTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }
  std::shared_ptr<RandomAccessSource> Source(const std::string& bytes, const std::string& name) {
    auto buf =
        Buffer::CopyOf(pool(), std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    EXPECT_TRUE(buf.ok());
    return std::make_shared<MemorySource>(*buf, name);
  }
  // The rows of `text` read in byte ranges of `range_bytes`, in order.
  Result<std::vector<RecordBatchPtr>> ParseSplit(const std::string& text, int64_t range_bytes,
                                                 const CsvOptions& o = {}) {
    QUIVER_ASSIGN_OR_RETURN(auto layout, InferCsvLayout(text, true, o, "t.csv"));
    CsvRangeScan scan(Source(text, "t.csv"), layout, o, std::nullopt, range_bytes);
    std::vector<RecordBatchPtr> out;
    for (int64_t k = 0; k < scan.num_ranges(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(auto b, scan.ParseRange(k, pool()));
      out.push_back(std::move(b));
    }
    return out;
  }
  // The rows of `text` streamed in blocks of `block_bytes`.
  Result<std::vector<RecordBatchPtr>> ParseStream(const std::string& text, int64_t block_bytes,
                                                  const CsvOptions& o = {}) {
    CsvStreamOptions so;
    so.block_bytes = block_bytes;
    so.sniff_bytes = block_bytes;
    QUIVER_ASSIGN_OR_RETURN(auto t, ReadCsvStream(Source(text, "t.csv"), o, pool(), so));
    return std::move(t.batches);
  }
  // Column 0 read serially, in ranges of 1..64 bytes and streamed in
  // blocks of 64..4096 bytes: every way must give `want`.
  void ExpectEveryWay(const std::string& text, const std::vector<std::string>& want, const CsvOptions& o = {}) {
    ASSERT_OK_AND_ASSIGN(auto serial, ParseCsv(text, o, pool(), "t.csv"));
    EXPECT_EQ(FirstColumn(serial.batches), want) << "serial";
    for (int64_t range : {1, 2, 3, 5, 8, 64}) {
      ASSERT_OK_AND_ASSIGN(auto split, ParseSplit(text, range, o));
      EXPECT_EQ(FirstColumn(split), want) << "ranges of " << range;
    }
    for (int64_t block : {64, 4096}) {
      ASSERT_OK_AND_ASSIGN(auto streamed, ParseStream(text, block, o));
      EXPECT_EQ(FirstColumn(streamed), want) << "blocks of " << block;
    }
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(CsvDialectTest, BlankLineInOneColumnTableIsANullRow) {
  // DuckDB: read_csv of 'v\n1\n\n3\n\n\n5\n\n' is v BIGINT: 1, NULL, 3,
  // NULL, NULL, 5, NULL (the last line end ends the last NULL row).
  const std::string text = "v\n1\n\n3\n\n\n5\n\n";
  ASSERT_OK_AND_ASSIGN(auto t, ParseCsv(text, {}, pool(), "t.csv"));
  EXPECT_EQ(t.schema->ToString(), "v: int64");
  EXPECT_EQ(t.num_rows, 7);
  EXPECT_EQ(t.batches[0]->columns[0]->null_count, 4);
  ExpectEveryWay(text, {"1", "NULL", "3", "NULL", "NULL", "5", "NULL"});
  // CRLF and lone CR line ends: 'v\r\n1\r\n\r\n3\r\n\r\n' is 1, NULL, 3, NULL in DuckDB.
  ExpectEveryWay("v\r\n1\r\n\r\n3\r\n\r\n", {"1", "NULL", "3", "NULL"});
  ExpectEveryWay("v\r1\r\r3\r", {"1", "NULL", "3"});
  // Blank lines before the first row are skipped (DuckDB: '\n\nv\n1\n\n3\n\n' is 1, NULL, 3, NULL).
  ExpectEveryWay("\n\nv\n1\n\n3\n\n", {"1", "NULL", "3", "NULL"});
  // Text values: a blank line is NULL, a line of one space is " ".
  ExpectEveryWay("name\nann\n\n \nbob", {"ann", "NULL", " ", "bob"});
  // Only NULLs after the header: DuckDB reads 'a\n\n\n' as a VARCHAR of two NULLs.
  ASSERT_OK_AND_ASSIGN(auto nulls, ParseCsv("a\n\n\n", {}, pool(), "t.csv"));
  EXPECT_EQ(nulls.schema->ToString(), "a: utf8");
  EXPECT_EQ(FirstColumn(nulls.batches), (std::vector<std::string>{"NULL", "NULL"}));
}

TEST_F(CsvDialectTest, BlankLinesInTablesOfSeveralColumnsAreSkipped) {
  // DuckDB: 'a,b\n1,2\n\n3,4\n' is two rows; ',' (two empty fields) is a row of NULLs.
  ExpectEveryWay("a,b\n1,2\n\n3,4\n\n", {"1", "3"});
  ExpectEveryWay("a,b\n1,2\n,\n3,4\n", {"1", "NULL", "3"});
}

TEST_F(CsvDialectTest, ApostropheAtAFieldStartIsAValueNotAQuote) {
  // DuckDB: id BIGINT, era VARCHAR: 1 '90s, 2 '80s, 3 modern (quote '"').
  const std::string text = "id,era\n1,'90s\n2,'80s\n3,modern\n";
  ASSERT_OK_AND_ASSIGN(auto t, ParseCsv(text, {}, pool(), "t.csv"));
  EXPECT_EQ(t.quote, '"');
  EXPECT_EQ(t.delimiter, ',');
  EXPECT_EQ(t.schema->ToString(), "id: int64\nera: utf8");
  ASSERT_EQ(t.num_rows, 3);
  EXPECT_EQ(StringAt(*t.batches[0]->columns[1], 0), "'90s");
  EXPECT_EQ(StringAt(*t.batches[0]->columns[1], 1), "'80s");
  for (int64_t range : {1, 7, 64}) {
    ASSERT_OK_AND_ASSIGN(auto split, ParseSplit(text, range));
    int64_t rows = 0;
    for (const auto& b : split) rows += b->num_rows;
    EXPECT_EQ(rows, 3) << range;
  }
  // One column: DuckDB reads 'x\n'90s\n'80s'\n' as '90s, '80s' (VARCHAR).
  ASSERT_OK_AND_ASSIGN(auto one, ParseCsv("x\n'90s\n'80s'\n", {}, pool(), "t.csv"));
  EXPECT_EQ(one.quote, '"');
  EXPECT_EQ(FirstColumn(one.batches), (std::vector<std::string>{"'90s", "'80s'"}));
}

TEST_F(CsvDialectTest, QuoteIsTheCandidateThatWrapsWholeFields) {
  // DuckDB: "a,b\n'x',1\n'y',2" reads with quote ': a = x, y.
  ASSERT_OK_AND_ASSIGN(auto single, ParseCsv("a,b\n'x',1\n'y',2\n", {}, pool(), "t.csv"));
  EXPECT_EQ(single.quote, '\'');
  EXPECT_EQ(FirstColumn(single.batches), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(single.schema->ToString(), "a: utf8\nb: int64");
  // DuckDB: a,"b,c" / 1,"2,3" is two columns, a and "b,c" (quote '"'; read
  // with ' it would split into three columns of literal quotes).
  ASSERT_OK_AND_ASSIGN(auto dq, ParseCsv("a,\"b,c\"\n1,\"2,3\"\n", {}, pool(), "t.csv"));
  EXPECT_EQ(dq.quote, '"');
  EXPECT_EQ(dq.schema->ToString(), "a: int64\nb,c: utf8");
  EXPECT_EQ(StringAt(*dq.batches[0]->columns[1], 0), "2,3");
  // Both quotes wrap fields: '"' first (DuckDB: 'x' stays 'x', "y" is y).
  ASSERT_OK_AND_ASSIGN(auto both, ParseCsv("a,b\n'x',\"y\"\n'z',\"w\"\n", {}, pool(), "t.csv"));
  EXPECT_EQ(both.quote, '"');
  EXPECT_EQ(FirstColumn(both.batches), (std::vector<std::string>{"'x'", "'z'"}));
  EXPECT_EQ(StringAt(*both.batches[0]->columns[1], 0), "y");
  // A fixed quote is kept even where it does not fit (the parse names the error).
  CsvOptions o;
  o.quote = '\'';
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "column 2: unexpected character after a closing quote",
                             ParseCsv("id,era\n1,'90s\n2,'80s\n", o, pool(), "t.csv"));
}

TEST_F(CsvDialectTest, OneColumnWhoseValuesHoldCommas) {
  // DuckDB: 'name\nSmith, John\nDoe, Jane\nX\n' is one VARCHAR column of 3 rows
  // (',' splits rows unevenly; a delimiter that splits none is taken).
  ASSERT_OK_AND_ASSIGN(auto t, ParseCsv("name\nSmith, John\nDoe, Jane\nX\n", {}, pool(), "t.csv"));
  EXPECT_EQ(t.schema->ToString(), "name: utf8");
  EXPECT_EQ(FirstColumn(t.batches), (std::vector<std::string>{"Smith, John", "Doe, Jane", "X"}));
  // A plain one-column file still reports ','.
  ASSERT_OK_AND_ASSIGN(auto plain, ParseCsv("v\n1\n2\n", {}, pool(), "t.csv"));
  EXPECT_EQ(plain.delimiter, ',');
}

TEST_F(CsvDialectTest, EmptyTextIsOneTextColumnOfNoRows) {
  // DuckDB: read_csv of a 0-byte file is one VARCHAR column "column0", no rows.
  for (const std::string& text : {std::string(), std::string("\xEF\xBB\xBF")}) {
    ASSERT_OK_AND_ASSIGN(auto t, ParseCsv(text, {}, pool(), "t.csv"));
    EXPECT_EQ(t.schema->ToString(), "column0: utf8");
    EXPECT_EQ(t.num_rows, 0);
    EXPECT_TRUE(t.batches.empty());
    ASSERT_OK_AND_ASSIGN(auto layout, InferCsvLayout(text, true, {}, "t.csv"));
    EXPECT_TRUE(layout.empty_text);
    ASSERT_OK_AND_ASSIGN(auto split, ParseSplit(text, 4));
    ASSERT_EQ(split.size(), 1u);
    EXPECT_EQ(split[0]->num_rows, 0);
    ASSERT_OK_AND_ASSIGN(auto streamed, ParseStream(text, 64));
    EXPECT_TRUE(streamed.empty());
  }
}

TEST_F(CsvDialectTest, BlankLinesOnlyAreNullRowsOfColumn0) {
  // DuckDB v1.5.6, read_csv of blank lines only: one VARCHAR column
  // "column0"; the first blank line is the header (auto or header =>
  // true), every later one a NULL row; with header => false every blank
  // line is a NULL row. A lone "\n" is no row (one with header => false).
  struct Case {
    std::string text;
    int64_t rows_auto;  // header auto and header => true
  };
  const std::vector<Case> cases = {{"\n", 0},       {"\n\n", 1}, {"\n\n\n", 2}, {"\n\n\n\n\n", 4},      {"\r\n", 0},
                                   {"\r\n\r\n", 1}, {"\r\r", 1}, {"\r", 0},     {"\xEF\xBB\xBF\n\n", 1}};
  for (const Case& c : cases) {
    for (HeaderMode mode : {HeaderMode::kAuto, HeaderMode::kPresent, HeaderMode::kAbsent}) {
      CsvOptions o;
      o.header = mode;
      const int64_t rows = mode == HeaderMode::kAbsent ? c.rows_auto + 1 : c.rows_auto;
      SCOPED_TRACE(::testing::PrintToString(c.text) + " header mode " + std::to_string(static_cast<int>(mode)));
      ASSERT_OK_AND_ASSIGN(auto t, ParseCsv(c.text, o, pool(), "t.csv"));
      EXPECT_EQ(t.schema->ToString(), "column0: utf8");
      EXPECT_EQ(t.header, mode != HeaderMode::kAbsent);
      EXPECT_EQ(t.num_rows, rows);
      ExpectEveryWay(c.text, std::vector<std::string>(static_cast<size_t>(rows), "NULL"), o);
      ASSERT_OK_AND_ASSIGN(auto layout, InferCsvLayout(c.text, true, o, "t.csv"));
      EXPECT_FALSE(layout.empty_text);  // a table of several files checks its column against the others'
    }
  }
  // A header line then blank lines: DuckDB reads 'a\n\n\n' and 'a\r\n\r\n\r\n'
  // as a VARCHAR of two NULLs, '1\n\n\n' as a VARCHAR "1" of two NULLs
  // (BIGINT 1, NULL, NULL with header => false), 'a,b\n\n\n' as a, b of no
  // rows; blank lines before a header are skipped ('\n\na\n': a, no rows).
  ExpectEveryWay("a\r\n\r\n\r\n", {"NULL", "NULL"});
  ASSERT_OK_AND_ASSIGN(auto one, ParseCsv("1\n\n\n", {}, pool(), "t.csv"));
  EXPECT_EQ(one.schema->ToString(), "1: utf8");
  EXPECT_EQ(FirstColumn(one.batches), (std::vector<std::string>{"NULL", "NULL"}));
  CsvOptions absent;
  absent.header = HeaderMode::kAbsent;
  ASSERT_OK_AND_ASSIGN(auto data, ParseCsv("1\n\n\n", absent, pool(), "t.csv"));
  EXPECT_EQ(data.schema->ToString(), "column0: int64");
  EXPECT_EQ(FirstColumn(data.batches), (std::vector<std::string>{"1", "NULL", "NULL"}));
  ASSERT_OK_AND_ASSIGN(auto two, ParseCsv("a,b\n\n\n", {}, pool(), "t.csv"));
  EXPECT_EQ(two.schema->ToString(), "a: utf8\nb: utf8");
  EXPECT_EQ(two.num_rows, 0);
  ASSERT_OK_AND_ASSIGN(auto late, ParseCsv("\n\na\n", {}, pool(), "t.csv"));
  EXPECT_EQ(late.schema->ToString(), "a: utf8");
  EXPECT_EQ(late.num_rows, 0);
  // An override of column0 applies (NULLs of any type).
  CsvOptions typed;
  typed.column_types["column0"] = int64();
  ASSERT_OK_AND_ASSIGN(auto ints, ParseCsv("\n\n\n", typed, pool(), "t.csv"));
  EXPECT_EQ(ints.schema->ToString(), "column0: int64");
  EXPECT_EQ(FirstColumn(ints.batches), (std::vector<std::string>{"NULL", "NULL"}));
}

TEST_F(CsvDialectTest, HeaderNamesAreTrimmedOfSpaces) {
  // DuckDB: '" x ",y\n1,2\n' is x, y; 'x ,x' is x, x_1; a tab is kept
  // ('\tx\t,y' is "\tx\t", y); ' \n' is column0 of no rows, '\n \n' too.
  ASSERT_OK_AND_ASSIGN(auto quoted, ParseCsv("\" x \",y\n1,2\n", {}, pool(), "t.csv"));
  EXPECT_EQ(quoted.schema->ToString(), "x: int64\ny: int64");
  ASSERT_OK_AND_ASSIGN(auto dup, ParseCsv("x ,x\n1,2\n", {}, pool(), "t.csv"));
  EXPECT_EQ(dup.schema->ToString(), "x: int64\nx_1: int64");
  ASSERT_OK_AND_ASSIGN(auto tab, ParseCsv("\tx\t,y\n1,2\n", {}, pool(), "t.csv"));
  EXPECT_EQ(tab.schema->fields[0]->name, "\tx\t");
  for (const std::string& text : {std::string(" \n"), std::string("\n \n")}) {
    ASSERT_OK_AND_ASSIGN(auto space, ParseCsv(text, {}, pool(), "t.csv"));
    EXPECT_EQ(space.schema->ToString(), "column0: utf8");
    EXPECT_EQ(space.num_rows, 0);
  }
}

TEST_F(CsvDialectTest, HeaderOnlyIsTextColumnsOfNoRows) {
  // DuckDB: 'a,b,c\n' is a, b, c VARCHAR, no rows; 'a,a' is a, a_1; a
  // single row with a number or an empty value is data ('1,2,3' is
  // column0..2 BIGINT, one row; 'x,' is column0, column1 VARCHAR, one row).
  for (const std::string text : {"a,b,c\n", "a,b,c"}) {
    ASSERT_OK_AND_ASSIGN(auto t, ParseCsv(text, {}, pool(), "t.csv"));
    EXPECT_TRUE(t.header);
    EXPECT_EQ(t.schema->ToString(), "a: utf8\nb: utf8\nc: utf8");
    EXPECT_EQ(t.num_rows, 0);
    ASSERT_OK_AND_ASSIGN(auto split, ParseSplit(text, 2));
    for (const auto& b : split) EXPECT_EQ(b->num_rows, 0);
    ASSERT_OK_AND_ASSIGN(auto streamed, ParseStream(text, 64));
    EXPECT_TRUE(streamed.empty());
  }
  ASSERT_OK_AND_ASSIGN(auto dup, ParseCsv("a,a\n", {}, pool(), "t.csv"));
  EXPECT_EQ(dup.schema->ToString(), "a: utf8\na_1: utf8");
  ASSERT_OK_AND_ASSIGN(auto nums, ParseCsv("1,2,3\n", {}, pool(), "t.csv"));
  EXPECT_FALSE(nums.header);
  EXPECT_EQ(nums.schema->ToString(), "column0: int64\ncolumn1: int64\ncolumn2: int64");
  EXPECT_EQ(FirstColumn(nums.batches), (std::vector<std::string>{"1"}));
  ASSERT_OK_AND_ASSIGN(auto gap, ParseCsv("x,\n", {}, pool(), "t.csv"));
  EXPECT_FALSE(gap.header);
  EXPECT_EQ(gap.schema->ToString(), "column0: utf8\ncolumn1: utf8");
  EXPECT_EQ(FirstColumn(gap.batches), (std::vector<std::string>{"x"}));
}

}  // namespace
}  // namespace quiver::formats::csv
