// Tests of the CSV reader (issue 36 §2): sniffing, inference, NULLs, quotes,
// embedded newlines, CRLF, errors naming line and column, gzip and zstd.
#include "quiver/formats/csv/csv_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "quiver/columnar/value_format.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_values.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

using quiver::testing::BoolAt;
using quiver::testing::IsNull;
using quiver::testing::StringAt;
using quiver::testing::ValueAt;

class CsvReaderTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }
  Result<CsvTable> Parse(std::string_view text, CsvOptions o = {}) { return ParseCsv(text, o, pool(), "t.csv"); }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(CsvReaderTest, InfersTypesAndHeader) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("id,price,ok,day,at,name\n"
                                     "1,1.5,true,2024-02-29,2024-02-29 12:34:56.5,a\n"
                                     "-7,2,FALSE,1970-01-01,1970-01-01T00:00:01,b c\n"));
  EXPECT_TRUE(t.header);
  EXPECT_EQ(t.delimiter, ',');
  EXPECT_EQ(t.schema->ToString(),
            "id: int64\nprice: double\nok: bool\nday: date32[day]\nat: timestamp[us]\nname: utf8");
  ASSERT_EQ(t.batches.size(), 1u);
  const auto& b = *t.batches[0];
  ASSERT_EQ(b.num_rows, 2);
  EXPECT_EQ(ValueAt<int64_t>(*b.columns[0], 0), 1);
  EXPECT_EQ(ValueAt<int64_t>(*b.columns[0], 1), -7);
  EXPECT_EQ(ValueAt<double>(*b.columns[1], 0), 1.5);
  EXPECT_EQ(ValueAt<double>(*b.columns[1], 1), 2.0);
  EXPECT_TRUE(BoolAt(*b.columns[2], 0));
  EXPECT_FALSE(BoolAt(*b.columns[2], 1));
  EXPECT_EQ(ValueAt<int32_t>(*b.columns[3], 0), 19782);  // 2024-02-29
  EXPECT_EQ(ValueAt<int32_t>(*b.columns[3], 1), 0);
  EXPECT_EQ(ValueAt<int64_t>(*b.columns[4], 0), 19782LL * 86400000000LL + 45296500000LL);
  EXPECT_EQ(ValueAt<int64_t>(*b.columns[4], 1), 1000000);
  EXPECT_EQ(StringAt(*b.columns[5], 1), "b c");
}

TEST_F(CsvReaderTest, NoHeaderWhenFirstRowFitsTypes) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("1;x\n2;y\n"));
  EXPECT_FALSE(t.header);
  EXPECT_EQ(t.delimiter, ';');
  EXPECT_EQ(t.schema->ToString(), "column0: int64\ncolumn1: utf8");
  EXPECT_EQ(t.num_rows, 2);
  EXPECT_EQ(ValueAt<int64_t>(*t.batches[0]->columns[0], 0), 1);
}

TEST_F(CsvReaderTest, SniffsTabAndPipe) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("a\tb\n1\t2\n"));
  EXPECT_EQ(t.delimiter, '\t');
  ASSERT_OK_AND_ASSIGN(auto p, Parse("a|b|c\n1|2|3\n"));
  EXPECT_EQ(p.delimiter, '|');
  EXPECT_EQ(p.schema->num_fields(), 3);
}

TEST_F(CsvReaderTest, NullsQuotesEmbeddedNewlinesCrlf) {
  CsvOptions o;
  o.null_values = {"NA"};
  ASSERT_OK_AND_ASSIGN(auto t, Parse("k,v,s\r\n1,,\"he said \"\"hi\"\"\"\r\n2,NA,\"two\r\nlines\"\r\n,3,\"NA\"\r\n"
                                     "4,5,\r\n",
                                     o));
  EXPECT_EQ(t.schema->ToString(), "k: int64\nv: int64\ns: utf8");
  const auto& b = *t.batches[0];
  ASSERT_EQ(b.num_rows, 4);
  EXPECT_TRUE(IsNull(*b.columns[1], 0));
  EXPECT_TRUE(IsNull(*b.columns[1], 1));
  EXPECT_TRUE(IsNull(*b.columns[0], 2));
  EXPECT_EQ(ValueAt<int64_t>(*b.columns[1], 2), 3);
  EXPECT_EQ(b.columns[1]->null_count, 2);
  EXPECT_EQ(StringAt(*b.columns[2], 0), "he said \"hi\"");
  EXPECT_EQ(StringAt(*b.columns[2], 1), "two\r\nlines");
  EXPECT_EQ(StringAt(*b.columns[2], 2), "NA");  // quoted: not a NULL string
  EXPECT_TRUE(IsNull(*b.columns[2], 3));
}

TEST_F(CsvReaderTest, SingleQuoteSniffedAndOverrides) {
  CsvOptions o;
  o.column_types["code"] = utf8();
  ASSERT_OK_AND_ASSIGN(auto t, Parse("code,label\n007,'a,b'\n8,'c'\n", o));
  EXPECT_EQ(t.quote, '\'');
  EXPECT_EQ(t.schema->ToString(), "code: utf8\nlabel: utf8");
  EXPECT_EQ(StringAt(*t.batches[0]->columns[0], 0), "007");
  EXPECT_EQ(StringAt(*t.batches[0]->columns[1], 0), "a,b");
  o.column_types = {{"nope", int64()}};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "names no column 'nope'", Parse("code,label\n1,x\n", o));
}

TEST_F(CsvReaderTest, DecimalValuesExact) {
  __int128 v = 0;
  EXPECT_TRUE(ParseCsvDecimal("10.005", 15, 2, &v));
  EXPECT_EQ(static_cast<int64_t>(v), 1001);  // half away from zero
  EXPECT_TRUE(ParseCsvDecimal("-10.005", 15, 2, &v));
  EXPECT_EQ(static_cast<int64_t>(v), -1001);
  EXPECT_TRUE(ParseCsvDecimal("-10.0049999", 15, 2, &v));
  EXPECT_EQ(static_cast<int64_t>(v), -1000);
  EXPECT_TRUE(ParseCsvDecimal("+.5", 3, 1, &v));
  EXPECT_EQ(static_cast<int64_t>(v), 5);
  EXPECT_TRUE(ParseCsvDecimal("7.", 3, 2, &v));
  EXPECT_EQ(static_cast<int64_t>(v), 700);
  EXPECT_TRUE(ParseCsvDecimal("9.995", 3, 2, &v) == false);  // rounds to 10.00: 4 digits
  EXPECT_TRUE(ParseCsvDecimal("99999999999999999999999999999999999999", 38, 0, &v));
  EXPECT_FALSE(ParseCsvDecimal("100000000000000000000000000000000000000", 38, 0, &v));
  for (const char* bad : {"", "-", ".", "1.2.3", "1e5", "abc", " 1", "1,5"}) {
    EXPECT_FALSE(ParseCsvDecimal(bad, 15, 2, &v)) << bad;
  }
  CsvOptions o;
  o.column_types["p"] = decimal(128, 15, 2);
  o.column_types_by_position = {utf8()};
  ASSERT_OK_AND_ASSIGN(auto t, Parse("id,p\n007,1.5\n8,\n", o));
  EXPECT_EQ(t.schema->ToString(), "id: utf8\np: decimal128(15, 2)");
  EXPECT_EQ(StringAt(*t.batches[0]->columns[0], 0), "007");
  EXPECT_TRUE(IsNull(*t.batches[0]->columns[1], 1));
  std::string text;
  FormatValue(*t.batches[0]->columns[1], 0, ValueFormat::kText, &text);
  EXPECT_EQ(text, "1.50");
  ASSERT_OK_AND_ASSIGN(auto type, CsvTypeFromName("Decimal( 9 , 3 )"));
  EXPECT_EQ(type->ToString(), "decimal128(9, 3)");
  ASSERT_OK_AND_ASSIGN(type, CsvTypeFromName("numeric"));
  EXPECT_EQ(type->ToString(), "decimal128(18, 3)");
  ASSERT_OK_AND_ASSIGN(type, CsvTypeFromName("decimal(5)"));
  EXPECT_EQ(type->ToString(), "decimal128(5, 0)");
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "precision 1..38", CsvTypeFromName("decimal(0,0)"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "is not one of", CsvTypeFromName("decimal(5,2"));
}

TEST_F(CsvReaderTest, BatchesSplitRows) {
  CsvOptions o;
  o.batch_rows = 2;
  ASSERT_OK_AND_ASSIGN(auto t, Parse("x\n1\n2\n3\n4\n5\n", o));
  ASSERT_EQ(t.batches.size(), 3u);
  EXPECT_EQ(t.batches[2]->num_rows, 1);
  EXPECT_EQ(ValueAt<int64_t>(*t.batches[2]->columns[0], 0), 5);
  EXPECT_EQ(t.num_rows, 5);
}

TEST_F(CsvReaderTest, ErrorsNameLineAndColumn) {
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "t.csv: line 3: expected 2 fields, found 3", Parse("a,b\n1,2\n3,4,5\n"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "line 2, column 2: quoted field not closed", Parse("a,b\n1,\"x\ny\n"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "line 2, column 1: unexpected character after a closing quote",
                             Parse("a,b\n\"x\"y,2\n"));
  CsvOptions o;
  o.sample_rows = 1;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "line 3, column 2 ('b'): 'oops' is not a int64", Parse("a,b\nx,1\ny,oops\n", o));
  o.column_types = {{"a", date32()}};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "line 2, column 1 ('a'): '2024-13-01' is not a date32",
                             Parse("a,b\n2024-13-01,1\n", o));
}

TEST_F(CsvReaderTest, EmptyAndValueForms) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse(""));
  EXPECT_EQ(t.schema->ToString(), "column0: utf8");  // DuckDB's read_csv of an empty file
  EXPECT_TRUE(t.batches.empty());
  int64_t i = 0;
  EXPECT_FALSE(ParseCsvInt64("99999999999999999999", &i));
  EXPECT_TRUE(ParseCsvInt64("+42", &i));
  EXPECT_EQ(i, 42);
  double d = 0;
  EXPECT_FALSE(ParseCsvDouble("nan", &d));
  EXPECT_TRUE(ParseCsvDouble("-1e3", &d));
  EXPECT_EQ(d, -1000.0);
  int32_t days = 0;
  EXPECT_FALSE(ParseCsvDate("2023-02-29", &days));
  EXPECT_TRUE(ParseCsvDate("1969-12-31", &days));
  EXPECT_EQ(days, -1);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("quiver_csv_" + std::to_string(::getpid()) + "_" + name)).string();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

TEST_F(CsvReaderTest, ReadsGzipAndZstdFiles) {
  const std::string text = "n,s\n1,one\n2,two\n3,three\n";
  // gzip: two concatenated members.
  std::string gz;
  for (const std::string& part : {std::string("n,s\n1,one\n"), std::string("2,two\n3,three\n")}) {
    z_stream z{};
    ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(256, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(part.data()));
    z.avail_in = static_cast<uInt>(part.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    gz += out;
  }
  std::string zst(ZSTD_compressBound(text.size()), '\0');
  zst.resize(ZSTD_compress(zst.data(), zst.size(), text.data(), text.size(), 3));
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"a.csv.gz", gz}, {"a.csv.zst", zst}}) {
    const std::string path = TempPath(name);
    WriteFile(path, bytes);
    auto t = ReadCsvFile(path, {}, pool());
    std::filesystem::remove(path);
    ASSERT_OK(t.status());
    EXPECT_EQ(t->num_rows, 3) << name;
    EXPECT_EQ(StringAt(*t->batches[0]->columns[1], 2), "three") << name;
    EXPECT_EQ(ValueAt<int64_t>(*t->batches[0]->columns[0], 1), 2) << name;
    // Truncated input is an error naming the file.
    const std::string cut = TempPath("cut_" + name);
    WriteFile(cut, bytes.substr(0, bytes.size() - 6));
    EXPECT_RAISES_WITH_MESSAGE(Invalid, cut, ReadCsvFile(cut, {}, pool()));
    std::filesystem::remove(cut);
  }
  // The decompressed size is capped.
  EXPECT_RAISES_WITH_MESSAGE(
      Invalid, "exceeds 8 bytes",
      DecompressCsv(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(zst.data()), zst.size()),
                    CsvCompression::kZstd, pool(), "x.zst", 8));
  EXPECT_TRUE(IsCsvPath("x.csv.zst"));
  EXPECT_FALSE(IsCsvPath("x.arrow"));
  EXPECT_RAISES(IOError, ReadCsvFile(TempPath("missing.csv"), {}, pool()));
}

}  // namespace
}  // namespace quiver::formats::csv
