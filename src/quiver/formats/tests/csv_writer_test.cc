// Tests of the CSV writer (issue 36: tables written back): the exact text
// (quoting, NULL against the empty string, the header), the round trip
// through quiver's CSV reader for every inferred type, gzip and zstd
// output, fields longer than the text buffer, and misuse.
#include "quiver/formats/csv/csv_writer.h"

#include <gtest/gtest.h>

#include <string>

#include "quiver/columnar/value_format.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

class CsvWriterTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  Result<CsvTable> Parse(std::string_view text) { return ParseCsv(text, {}, pool(), "in.csv"); }

  // Writes every batch of `t` and returns the sink's bytes.
  Result<std::string> Write(const CsvTable& t, CsvWriteOptions o = {}) {
    o.pool = pool();
    MemorySink sink;
    QUIVER_ASSIGN_OR_RETURN(auto w, CsvWriter::Make(t.schema, &sink, o));
    for (const auto& b : t.batches) QUIVER_RETURN_NOT_OK(w->WriteBatch(*b));
    QUIVER_RETURN_NOT_OK(w->Close());
    EXPECT_EQ(w->stats().file_bytes, static_cast<int64_t>(sink.bytes().size()));
    last_stats_ = w->stats();
    return std::string(sink.bytes().begin(), sink.bytes().end());
  }

  // Every cell of `t` as text ("<null>" for NULL), row-major, with types.
  static std::string Cells(const CsvTable& t) {
    std::string out = t.schema->ToString() + "\n";
    for (const auto& b : t.batches) {
      for (int64_t r = 0; r < b->num_rows; ++r) {
        for (const auto& c : b->columns) {
          if (IsLogicalNull(*c, r)) {
            out += "<null>";
          } else {
            out += "[";
            FormatValue(*c, r, ValueFormat::kText, &out);
            out += "]";
          }
          out += "|";
        }
        out += "\n";
      }
    }
    return out;
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
  CsvWriteStats last_stats_;
};

TEST_F(CsvWriterTest, QuotesOnlyWhatNeedsIt) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("name,n\n"
                                     "plain,1\n"
                                     "\"a,b\",2\n"
                                     "\"say \"\"hi\"\"\",3\n"
                                     "\"two\nlines\",4\n"
                                     "\"\",5\n"
                                     ",6\n"));
  ASSERT_OK_AND_ASSIGN(std::string text, Write(t));
  EXPECT_EQ(text,
            "name,n\n"
            "plain,1\n"
            "\"a,b\",2\n"
            "\"say \"\"hi\"\"\",3\n"
            "\"two\nlines\",4\n"
            "\"\",5\n"  // the empty string stays quoted...
            ",6\n");    // ...and NULL stays an empty field
  EXPECT_EQ(last_stats_.num_rows, 6);
  EXPECT_EQ(last_stats_.text_bytes, static_cast<int64_t>(text.size()));
}

TEST_F(CsvWriterTest, RoundTripsEveryInferredType) {
  const std::string in =
      "id,price,ok,day,at,name,amount\n"
      "1,1.5,true,2024-02-29,2024-02-29 12:34:56.5,\"a, \"\"quoted\"\" b\",12.25\n"
      "-7,,false,1970-01-01,1970-01-01 00:00:01,,-0.50\n"
      ",2e-3,,,,\"\",\n";
  ASSERT_OK_AND_ASSIGN(auto t, Parse(in));
  ASSERT_OK_AND_ASSIGN(std::string text, Write(t));
  ASSERT_OK_AND_ASSIGN(auto back, Parse(text));
  EXPECT_EQ(Cells(back), Cells(t));
  // The NULL and the empty string of `name` (rows 2 and 3) stay apart.
  const ArrayData& name = *back.batches[0]->columns[5];
  EXPECT_TRUE(IsLogicalNull(name, 1));
  EXPECT_FALSE(IsLogicalNull(name, 2));
}

TEST_F(CsvWriterTest, SemicolonsAndNoHeader) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("a,b\nx;y,1\n"));
  CsvWriteOptions o;
  o.delimiter = ';';
  o.header = false;
  ASSERT_OK_AND_ASSIGN(std::string text, Write(t, o));
  EXPECT_EQ(text, "\"x;y\";1\n");
}

TEST_F(CsvWriterTest, GzipAndZstdDecompressToTheSameText) {
  std::string in = "k,v\n";
  for (int i = 0; i < 20000; ++i) in += std::to_string(i) + ",value number " + std::to_string(i % 97) + "\n";
  ASSERT_OK_AND_ASSIGN(auto t, Parse(in));
  ASSERT_OK_AND_ASSIGN(std::string plain, Write(t));
  EXPECT_EQ(plain, in);
  for (CsvCompression c : {CsvCompression::kGzip, CsvCompression::kZstd}) {
    CsvWriteOptions o;
    o.compression = c;
    o.buffer_bytes = 4096;  // many flushes through the codec
    ASSERT_OK_AND_ASSIGN(std::string packed, Write(t, o));
    EXPECT_LT(packed.size(), plain.size() / 3);
    EXPECT_EQ(last_stats_.text_bytes, static_cast<int64_t>(plain.size()));
    ASSERT_OK_AND_ASSIGN(
        auto text, DecompressCsv({reinterpret_cast<const uint8_t*>(packed.data()), packed.size()}, c, pool(), "out"));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(text->data()), static_cast<size_t>(text->size())), plain);
  }
}

TEST_F(CsvWriterTest, FieldsLongerThanTheBuffer) {
  const std::string big(10000, 'x');
  const std::string quoted = "\"" + std::string(5000, 'q') + "\"\"" + std::string(5000, 'q') + "\"";
  ASSERT_OK_AND_ASSIGN(auto t, Parse("s\n" + big + "\n" + quoted + "\nz\n"));
  CsvWriteOptions o;
  o.buffer_bytes = 4096;
  ASSERT_OK_AND_ASSIGN(std::string text, Write(t, o));
  EXPECT_EQ(text, "s\n" + big + "\n" + quoted + "\nz\n");
  EXPECT_LE(pool()->peak_bytes(), int64_t{1} << 20);
}

TEST_F(CsvWriterTest, EmptyResultIsTheHeaderOnly) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("a,b\n1,2\n"));
  t.batches.clear();
  ASSERT_OK_AND_ASSIGN(std::string text, Write(t));
  EXPECT_EQ(text, "a,b\n");
}

TEST_F(CsvWriterTest, Misuse) {
  ASSERT_OK_AND_ASSIGN(auto t, Parse("a,b\n1,2\n"));
  MemorySink sink;
  CsvWriteOptions o;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "no memory pool", CsvWriter::Make(t.schema, &sink, o));
  o.pool = pool();
  o.delimiter = '"';
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "delimiter", CsvWriter::Make(t.schema, &sink, o));
  o.delimiter = ',';
  o.buffer_bytes = 10;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "buffer_bytes", CsvWriter::Make(t.schema, &sink, o));
  o.buffer_bytes = 4096;
  ASSERT_OK_AND_ASSIGN(auto other, Parse("x\n1\n"));
  ASSERT_OK_AND_ASSIGN(auto w, CsvWriter::Make(t.schema, &sink, o));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "columns", w->WriteBatch(*other.batches[0]));
  ASSERT_OK(w->Close());
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "after Close", w->WriteBatch(*t.batches[0]));
}

}  // namespace
}  // namespace quiver::formats::csv
