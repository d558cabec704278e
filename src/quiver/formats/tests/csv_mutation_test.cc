// Bad CSV input (issue 36 §2: never a crash, a hang or memory without
// bound): every byte of a small text with quotes, doubled quotes, quoted
// line ends, CRLF, blank lines and one column's NULLs replaced by each of a
// few bytes that change its shape, or removed; each mutant parsed serially,
// in byte ranges and streamed in small blocks under a capped pool must be
// rows or a clean Invalid, and the three parses must agree: the same rows,
// or all fail.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_ranges.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

std::shared_ptr<RandomAccessSource> InMemory(const std::string& bytes, MemoryPool* pool, const std::string& name) {
  auto buf =
      Buffer::CopyOf(pool, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  EXPECT_TRUE(buf.ok());
  return std::make_shared<MemorySource>(*buf, name);
}

// Rows of each way, or the status code of its failure.
struct Outcome {
  bool ok = false;
  StatusCode code = StatusCode::kOk;
  int64_t rows = 0;
};

Outcome Serial(const std::string& text, MemoryPool* pool) {
  auto t = ParseCsv(text, {}, pool, "m.csv");
  if (!t.ok()) return {false, t.status().code(), 0};
  return {true, StatusCode::kOk, t->num_rows};
}

Outcome Split(const std::string& text, MemoryPool* pool) {
  auto layout = InferCsvLayout(text, true, {}, "m.csv");
  if (!layout.ok()) return {false, layout.status().code(), 0};
  CsvRangeScan scan(InMemory(text, pool, "m.csv"), *layout, {}, std::nullopt, 7);
  Outcome out{true};
  for (int64_t k = 0; k < scan.num_ranges(); ++k) {
    auto b = scan.ParseRange(k, pool);
    if (!b.ok()) return {false, b.status().code(), 0};
    out.rows += (*b)->num_rows;
  }
  return out;
}

Outcome Streamed(const std::string& text, MemoryPool* pool) {
  CsvStreamOptions so;
  so.block_bytes = 64;
  so.sniff_bytes = 1 << 16;  // the whole text: the same layout as the others
  auto t = ReadCsvStream(InMemory(text, pool, "m.csv"), {}, pool, so);
  if (!t.ok()) return {false, t.status().code(), 0};
  return {true, StatusCode::kOk, t->num_rows};
}

TEST(CsvMutationTest, EveryByteChangedOrRemovedIsRowsOrACleanErrorAlikeEveryWay) {
  const std::vector<std::string> texts = {
      "id,text,price\r\n1,\"two\nlines, \"\"quoted\"\"\",1.5\n\n2,'90s,2.5\r\n3,,\n4,\"\",4\n",
      "v\n1\n\n3\r\n\r\nx\n",
  };
  const std::string replacements = std::string("\"',\n\r;x") + '\0';
  int64_t mutants = 0, parsed = 0;
  for (const std::string& base : texts) {
    for (size_t i = 0; i < base.size(); ++i) {
      std::vector<std::string> variants;
      for (char c : replacements) {
        if (c == base[i]) continue;
        std::string m = base;
        m[i] = c;
        variants.push_back(m);
      }
      variants.push_back(base.substr(0, i) + base.substr(i + 1));
      for (const std::string& m : variants) {
        auto pool = MemoryPool::MakeRoot(MemoryPoolOptions{"capped", int64_t{64} << 20});
        const Outcome s = Serial(m, pool.get());
        const Outcome r = Split(m, pool.get());
        const Outcome t = Streamed(m, pool.get());
        ++mutants;
        for (const Outcome& o : {s, r, t}) {
          EXPECT_TRUE(o.ok || o.code == StatusCode::kInvalid) << ::testing::PrintToString(m);
        }
        EXPECT_EQ(s.ok, r.ok) << "serial vs ranges: " << ::testing::PrintToString(m);
        EXPECT_EQ(s.ok, t.ok) << "serial vs streamed: " << ::testing::PrintToString(m);
        if (s.ok && r.ok) EXPECT_EQ(s.rows, r.rows) << "rows, ranges: " << ::testing::PrintToString(m);
        if (s.ok && t.ok) EXPECT_EQ(s.rows, t.rows) << "rows, streamed: " << ::testing::PrintToString(m);
        parsed += s.ok ? 1 : 0;
      }
    }
  }
  EXPECT_GT(mutants, 500);
  EXPECT_GT(parsed, mutants / 4);  // most mutants still parse: the test is not all errors
}

TEST(CsvMutationTest, ARowOfAMillionDelimitersCostsNoMemory) {
  // A one-column table whose second data row is 1,000,000 commas: an error
  // naming the line and the count, with its field positions counted, not
  // stored (24 MB of them before), in every way of parsing.
  // (Sniffed, ';' would read each line whole, as DuckDB does a one-column
  // file whose values hold commas: the delimiter is given.)
  const std::string text = "a\n1\n" + std::string(1000000, ',') + "\n2\n";
  auto pool = MemoryPool::MakeRoot();
  const std::string want = "m.csv: line 3: expected 1 fields, found 1000001";
  CsvOptions o;
  o.delimiter = ',';
  EXPECT_RAISES_WITH_MESSAGE(Invalid, want, ParseCsv(text, o, pool.get(), "m.csv"));  // in the sample
  o.sample_rows = 1;                                                                  // after the sample
  EXPECT_RAISES_WITH_MESSAGE(Invalid, want, ParseCsv(text, o, pool.get(), "m.csv"));
  EXPECT_LT(pool->peak_bytes(), 1 << 20);
  ASSERT_OK_AND_ASSIGN(auto layout, InferCsvLayout(text, true, o, "m.csv"));
  CsvRangeScan scan(InMemory(text, pool.get(), "m.csv"), layout, o, std::nullopt, 4096);
  Status failed;
  for (int64_t k = 0; k < scan.num_ranges() && failed.ok(); ++k) failed = scan.ParseRange(k, pool.get()).status();
  EXPECT_RAISES_WITH_MESSAGE(Invalid, want, failed);
  CsvStreamOptions so;
  so.block_bytes = 4096;
  so.sniff_bytes = 4096;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, want, ReadCsvStream(InMemory(text, pool.get(), "m.csv"), o, pool.get(), so));
}

}  // namespace
}  // namespace quiver::formats::csv
