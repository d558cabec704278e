// Tests of the streamed and the parallel CSV parse (issue 36 §2): the rows
// of a text read in tiny blocks (plain, gzip, zstd) and split into tiny
// byte ranges parsed on several threads equal ParseCsv's, with quoted
// fields holding line ends and delimiters across every split point, CRLF,
// blank lines, a header and a last line without a line end; an error on
// line N is reported as line N in both modes; the text held while
// streaming stays within the block size.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_ranges.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/formats/csv/csv_tokenizer.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

using quiver::testing::IsNull;
using quiver::testing::StringAt;
using quiver::testing::ValueAt;

// One text line per row: "id|text|price" (NULLs as "-").
std::vector<std::string> RowsOf(const std::vector<RecordBatchPtr>& batches) {
  std::vector<std::string> out;
  for (const auto& b : batches) {
    for (int64_t r = 0; r < b->num_rows; ++r) {
      const auto& id = *b->columns[0];
      const auto& text = *b->columns[1];
      const auto& price = *b->columns[2];
      out.push_back((IsNull(id, r) ? "-" : std::to_string(ValueAt<int64_t>(id, r))) + "|" +
                    (IsNull(text, r) ? "-" : std::string(StringAt(text, r))) + "|" +
                    (IsNull(price, r) ? "-" : std::to_string(ValueAt<double>(price, r))));
    }
  }
  return out;
}

// A text whose quoted fields hold LF, CRLF, delimiters and doubled quotes,
// with blank lines, CRLF row ends, and no line end after the last row.
std::string TrickyText(int rows) {
  std::string t = "id,text,price\r\n";
  for (int i = 0; i < rows; ++i) {
    t += std::to_string(i) + ",";
    switch (i % 6) {
      case 0: t += "plain" + std::to_string(i); break;
      case 1: t += "\"two\nlines, and a comma\""; break;
      case 2: t += "\"say \"\"hi\"\"\n\n\"\"there\"\"\""; break;
      case 3: t += "\"crlf\r\ninside\r\n\""; break;
      case 4: t += "\"\""; break;
      default: t += "\"\n,\n\""; break;
    }
    t += "," + std::to_string(i) + ".5";
    t += i % 4 == 0 ? "\r\n" : "\n";
    if (i % 7 == 3) t += "\n\r\n";  // blank lines
  }
  while (t.back() == '\n' || t.back() == '\r') t.pop_back();  // the last row ends without a line end
  return t;
}

class CsvRangesTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }
  std::shared_ptr<RandomAccessSource> Source(const std::string& bytes, const std::string& name) {
    auto buf =
        Buffer::CopyOf(pool(), std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    EXPECT_TRUE(buf.ok());
    return std::make_shared<MemorySource>(*buf, name);
  }
  // Every range of a split of `text`, parsed by `threads` threads.
  Result<std::vector<RecordBatchPtr>> ParseSplit(const std::string& text, int64_t range_bytes, int threads,
                                                 const CsvOptions& o = {}) {
    QUIVER_ASSIGN_OR_RETURN(auto layout, InferCsvLayout(text, true, o, "t.csv"));
    CsvRangeScan scan(Source(text, "t.csv"), layout, o, std::nullopt, range_bytes);
    std::vector<Result<RecordBatchPtr>> out(static_cast<size_t>(scan.num_ranges()), Status::Invalid("not parsed"));
    std::atomic<int64_t> next{0};
    std::vector<std::thread> pool_threads;
    for (int t = 0; t < threads; ++t) {
      pool_threads.emplace_back([&] {
        while (true) {
          const int64_t k = next.fetch_add(1);
          if (k >= scan.num_ranges()) return;
          out[static_cast<size_t>(k)] = scan.ParseRange(k, pool());
        }
      });
    }
    for (auto& t : pool_threads) t.join();
    std::vector<RecordBatchPtr> batches;
    for (auto& r : out) {
      QUIVER_RETURN_NOT_OK(r.status());
      EXPECT_EQ((*r)->schema->num_fields(), 3);
      batches.push_back(*r);
    }
    return batches;
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(CsvRangesTest, SplitParseEqualsSerialAtEverySplitPoint) {
  const std::string text = TrickyText(60);
  ASSERT_OK_AND_ASSIGN(auto serial, ParseCsv(text, {}, pool(), "t.csv"));
  EXPECT_EQ(serial.schema->ToString(), "id: int64\ntext: utf8\nprice: double");
  const auto want = RowsOf(serial.batches);
  ASSERT_EQ(want.size(), 60u);
  EXPECT_EQ(want[1], "1|two\nlines, and a comma|1.500000");
  EXPECT_EQ(want[2], "2|say \"hi\"\n\n\"there\"|2.500000");
  EXPECT_EQ(want[3], "3|crlf\r\ninside\r\n|3.500000");
  EXPECT_EQ(want[4], "4||4.500000");
  EXPECT_EQ(want[59], "59|\n,\n|59.500000");
  // Every range size from 1 byte (a boundary after every LF) up.
  for (int64_t range : {1, 2, 3, 5, 7, 11, 16, 31, 64, 100, 333, 4096}) {
    for (int threads : {1, 4}) {
      ASSERT_OK_AND_ASSIGN(auto batches, ParseSplit(text, range, threads));
      EXPECT_EQ(RowsOf(batches), want) << "range " << range << ", " << threads << " threads";
    }
  }
}

TEST_F(CsvRangesTest, ErrorsNameTheFilesLineInParallel) {
  CsvOptions o;
  o.sample_rows = 3;
  std::string text = TrickyText(40);
  // Line of row 30: count the line ends before it.
  const size_t at = text.find("\n30,");
  ASSERT_NE(at, std::string::npos);
  const int64_t line = 2 + CsvLineEndsIn(std::string_view(text).substr(0, at));
  std::string bad = text;
  bad.replace(at + 1, 2, "3x");  // id "3x" is not an int64
  const std::string want = "t.csv: line " + std::to_string(line) + ", column 1 ('id'): '3x' is not a int64";
  EXPECT_RAISES_WITH_MESSAGE(Invalid, want, ParseCsv(bad, o, pool(), "t.csv"));
  for (int64_t range : {1, 16, 64, 1000}) {
    EXPECT_RAISES_WITH_MESSAGE(Invalid, want, ParseSplit(bad, range, 4, o)) << range;
  }
  // A row with too few fields.
  std::string short_row = text;
  short_row.replace(at + 1, 3, "30\n");
  const std::string fields = "t.csv: line " + std::to_string(line) + ": expected 3 fields, found 1";
  EXPECT_RAISES_WITH_MESSAGE(Invalid, fields, ParseCsv(short_row, o, pool(), "t.csv"));
  for (int64_t range : {1, 16, 64, 1000}) {
    EXPECT_RAISES_WITH_MESSAGE(Invalid, fields, ParseSplit(short_row, range, 4, o)) << range;
  }
}

std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

TEST_F(CsvRangesTest, StreamsPlainGzipAndZstdInTinyBlocks) {
  const std::string text = TrickyText(60);
  ASSERT_OK_AND_ASSIGN(auto serial, ParseCsv(text, {}, pool(), "t.csv"));
  const auto want = RowsOf(serial.batches);
  for (const auto& [name, bytes] :
       {std::pair<std::string, std::string>{"t.csv", text}, {"t.csv.gz", Gzip(text)}, {"t.csv.zst", Zstd(text)}}) {
    for (int64_t block : {64, 100, 1000}) {
      CsvStreamOptions so;
      so.block_bytes = block;
      so.sniff_bytes = 200;
      ASSERT_OK_AND_ASSIGN(auto t, ReadCsvStream(Source(bytes, name), {}, pool(), so));
      EXPECT_EQ(t.schema->ToString(), serial.schema->ToString()) << name;
      EXPECT_EQ(RowsOf(t.batches), want) << name << " block " << block;
      EXPECT_GT(t.batches.size(), 1u) << name;
    }
  }
  // Errors name the line when streaming too.
  CsvOptions o;
  o.sample_rows = 3;
  std::string bad = text;
  const size_t at = bad.find("\n30,");
  bad.replace(at + 1, 2, "3x");
  const int64_t line = 2 + CsvLineEndsIn(std::string_view(text).substr(0, at));
  CsvStreamOptions so;
  so.block_bytes = 64;
  so.sniff_bytes = 64;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "t.csv.zst: line " + std::to_string(line) + ", column 1",
                             ReadCsvStream(Source(Zstd(bad), "t.csv.zst"), o, pool(), so));
  // A truncated compressed stream and an unclosed quote.
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "t.csv.gz: gzip",
                             ReadCsvStream(Source(Gzip(text).substr(0, 100), "t.csv.gz"), {}, pool(), so));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "quoted field not closed",
                             ReadCsvStream(Source("a,b\n1,\"x\n2,y\n", "u.csv"), {}, pool(), so));
}

TEST_F(CsvRangesTest, StreamedTextStaysWithinItsBlock) {
  // 4 MiB of rows read in 64 KiB blocks: the pool's peak is the block,
  // the compressed read block and one batch's buffers, never the text.
  std::string text = "k,v,s\n";
  for (int i = 0; text.size() < (size_t{4} << 20); ++i) {
    text += std::to_string(i) + "," + std::to_string(i % 1000) + ".25,name" + std::to_string(i % 97) + "\n";
  }
  for (const std::string name : {"big.csv", "big.csv.zst"}) {
    auto src = Source(name == "big.csv" ? text : Zstd(text), name);
    auto reading = MemoryPool::MakeRoot();
    ASSERT_OK_AND_ASSIGN(auto stream, OpenCsvByteStream(src, reading.get(), 64 << 10));
    CsvStreamOptions so;
    so.block_bytes = 64 << 10;
    so.sniff_bytes = 64 << 10;
    ASSERT_OK_AND_ASSIGN(auto reader, CsvStreamReader::Open(std::move(stream), {}, reading.get(), so));
    int64_t rows = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(auto b, reader->Next());
      if (!b) break;
      rows += b->num_rows;
    }
    EXPECT_GT(rows, 100000) << name;
    EXPECT_EQ(reader->peak_text_bytes(), 64 << 10) << name;
    EXPECT_LT(reading->peak_bytes(), 512 << 10) << name;
  }
}

TEST_F(CsvRangesTest, UnquotedFieldsOfEveryLengthAroundTheVectorWidth) {
  // The tokenizer scans unquoted fields 16 bytes at a time: delimiters and
  // line ends at every offset of a 16-byte block, and at the text's end.
  std::string text = "a,b\n";
  std::vector<std::string> want;
  for (int len = 0; len < 40; ++len) {
    const std::string a(static_cast<size_t>(len), 'x');
    const std::string b(static_cast<size_t>(39 - len), 'y');
    text += a + "," + b + (len % 3 == 0 ? "\r\n" : len % 3 == 1 ? "\n" : "\r");
    want.push_back(a + "|" + b);
  }
  text += std::string(20, 'z') + "," + std::string(17, 'w');  // no final line end
  want.push_back(std::string(20, 'z') + "|" + std::string(17, 'w'));
  CsvOptions o;
  o.header = HeaderMode::kPresent;
  ASSERT_OK_AND_ASSIGN(auto t, ParseCsv(text, o, pool(), "t.csv"));
  std::vector<std::string> got;
  for (const auto& b : t.batches) {
    for (int64_t r = 0; r < b->num_rows; ++r) {
      got.push_back((IsNull(*b->columns[0], r) ? "" : std::string(StringAt(*b->columns[0], r))) + "|" +
                    (IsNull(*b->columns[1], r) ? "" : std::string(StringAt(*b->columns[1], r))));
    }
  }
  EXPECT_EQ(got, want);
}

TEST_F(CsvRangesTest, LineEndsCountLfCrlfAndLoneCr) {
  EXPECT_EQ(CsvLineEndsIn("a\nb\r\nc\rd"), 3);
  EXPECT_EQ(CsvLineEndsIn(""), 0);
  EXPECT_EQ(CsvLineEndsIn("x\r"), 1);
}

}  // namespace
}  // namespace quiver::formats::csv
