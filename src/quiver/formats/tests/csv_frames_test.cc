// Tests of the parallel parse of .csv.zst files of several zstd frames
// (issue 36 §2, csv_frames.h): the frames found from their headers equal
// zstd's own ZSTD_findFrameCompressedSize; a text cut into frames at every
// few bytes (rows, quoted line ends, CRLF and the header split between
// frames; with and without content sizes; with pzstd's skippable frames)
// parses on 1 and 4 threads to the rows of the serial parse; damaged input
// (a truncated last frame, a corrupt frame in the middle) is a clean
// Invalid naming the frame, the input byte and the line; a frame header
// claiming a terabyte sizes nothing (the file is read serially, in steps).
#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/csv/csv_frames.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/zstd_frames.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

using quiver::testing::IsNull;
using quiver::testing::StringAt;
using quiver::testing::ValueAt;

// Every row as "v1|v2|..." (NULL as "-"), for int64, double and utf8 columns.
std::vector<std::string> RowTexts(const std::vector<RecordBatchPtr>& batches) {
  std::vector<std::string> out;
  for (const auto& b : batches) {
    for (int64_t r = 0; r < b->num_rows; ++r) {
      std::string row;
      for (const auto& col : b->columns) {
        if (!row.empty()) row += "|";
        if (IsNull(*col, r)) {
          row += "-";
        } else if (col->type->id == TypeId::kInt64) {
          row += std::to_string(ValueAt<int64_t>(*col, r));
        } else if (col->type->id == TypeId::kFloat64) {
          row += std::to_string(ValueAt<double>(*col, r));
        } else {
          row += std::string(StringAt(*col, r));
        }
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

// Rows whose quoted fields hold LF, CRLF, commas and doubled quotes, CRLF
// and LF row ends, blank lines.
std::string QuotedText(int rows) {
  std::string t = "key,note,amount\r\n";
  for (int i = 0; i < rows; ++i) {
    t += std::to_string(i * 7) + ",";
    if (i % 5 == 1) {
      t += "\"a\nb,\"\"c\"\"\r\nd\"";
    } else if (i % 5 == 3) {
      t += "\"\"";
    } else {
      t += "note" + std::to_string(i);
    }
    t += "," + std::to_string(i) + ".25" + (i % 3 == 0 ? "\r\n" : "\n");
    if (i % 11 == 4) t += "\n";
  }
  return t;
}

// `text` compressed as one zstd frame per piece of `piece_bytes` bytes
// (checksums on); `content_size`: the frame headers carry the size;
// `skippable`: each frame preceded by pzstd's skippable frame of its size.
std::string Frames(const std::string& text, size_t piece_bytes, bool content_size, bool skippable) {
  std::string out;
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  for (size_t at = 0; at < text.size(); at += piece_bytes) {
    const size_t n = std::min(piece_bytes, text.size() - at);
    std::string frame(ZSTD_compressBound(n), '\0');
    const size_t z = ZSTD_compress2(cctx.get(), frame.data(), frame.size(), text.data() + at, n);
    EXPECT_FALSE(ZSTD_isError(z));
    frame.resize(z);
    if (skippable) {
      const uint32_t words[3] = {0x184D2A50u, 4u, static_cast<uint32_t>(z)};
      out.append(reinterpret_cast<const char*>(words), sizeof(words));
    }
    out += frame;
  }
  return out;
}

class CsvFramesTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }
  std::shared_ptr<RandomAccessSource> Source(const std::string& bytes) {
    auto buf =
        Buffer::CopyOf(pool(), std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    EXPECT_TRUE(buf.ok());
    return std::make_shared<MemorySource>(*buf, "t.csv.zst");
  }
  // The frame scan of `zst` (whose text is `text`), or nullptr.
  Result<std::unique_ptr<CsvFrameScan>> Open(const std::string& text, const std::string& zst, const CsvOptions& o = {},
                                             int64_t target_range_bytes = 1) {
    QUIVER_ASSIGN_OR_RETURN(auto layout, InferCsvLayout(text, true, o, "t.csv.zst"));
    CsvFrameScanOptions fo;
    fo.target_range_bytes = target_range_bytes;
    return CsvFrameScan::Open(Source(zst), layout, o, std::nullopt, pool(), fo);
  }
  // Every range parsed by `threads` threads, in order; the first error.
  Result<std::vector<RecordBatchPtr>> ParseAll(CsvFrameScan& scan, int threads) {
    std::vector<Result<RecordBatchPtr>> out(static_cast<size_t>(scan.num_ranges()), Status::Invalid("not parsed"));
    std::atomic<int64_t> next{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        while (true) {
          const int64_t k = next.fetch_add(1);
          if (k >= scan.num_ranges()) return;
          out[static_cast<size_t>(k)] = scan.ParseRange(k, pool());
        }
      });
    }
    for (auto& w : workers) w.join();
    std::vector<RecordBatchPtr> batches;
    for (auto& r : out) {
      QUIVER_RETURN_NOT_OK(r.status());
      batches.push_back(*r);
    }
    return batches;
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(CsvFramesTest, FramesFoundFromHeadersEqualZstdsOwn) {
  const std::string text = QuotedText(400);
  for (bool content_size : {true, false}) {
    for (bool skippable : {false, true}) {
      const std::string zst = Frames(text, 1000, content_size, skippable);
      ASSERT_OK_AND_ASSIGN(auto frames, FindZstdFrames(*Source(zst), pool()));
      ASSERT_EQ(frames.size(), (text.size() + 999) / 1000);
      size_t at = 0;
      for (size_t i = 0; i < frames.size(); ++i) {
        if (skippable) at += 12;
        EXPECT_EQ(frames[i].offset, static_cast<int64_t>(at));
        const size_t z = ZSTD_findFrameCompressedSize(zst.data() + at, zst.size() - at);
        ASSERT_FALSE(ZSTD_isError(z));
        EXPECT_EQ(frames[i].compressed_bytes, static_cast<int64_t>(z));
        EXPECT_TRUE(frames[i].damage.empty());
        const int64_t piece = static_cast<int64_t>(std::min<size_t>(1000, text.size() - i * 1000));
        EXPECT_EQ(frames[i].content_bytes, content_size ? piece : -1);
        EXPECT_GE(frames[i].TextBound(0), piece);
        at += z;
      }
      EXPECT_EQ(at, zst.size());
    }
  }
  // Not zstd: no frames.
  ASSERT_OK_AND_ASSIGN(auto none, FindZstdFrames(*Source("a,b\n1,2\n"), pool()));
  EXPECT_TRUE(none.empty());
}

TEST_F(CsvFramesTest, FrameRangesParseAsTheSerialParse) {
  const std::string text = QuotedText(300);
  ASSERT_OK_AND_ASSIGN(auto serial, ParseCsv(text, {}, pool(), "t.csv"));
  EXPECT_EQ(serial.schema->ToString(), "key: int64\nnote: utf8\namount: double");
  const auto want = RowTexts(serial.batches);
  ASSERT_EQ(want.size(), 300u);
  EXPECT_EQ(want[1], "7|a\nb,\"c\"\r\nd|1.250000");
  EXPECT_EQ(want[3], "21||3.250000");
  // Pieces of 3 bytes cut the header over several frames, every CRLF and
  // quoted field somewhere; 1 and 4 threads; ranges of one frame or grouped.
  const std::string short_text = QuotedText(40);
  ASSERT_OK_AND_ASSIGN(auto short_serial, ParseCsv(short_text, {}, pool(), "t.csv"));
  const auto short_want = RowTexts(short_serial.batches);
  for (size_t piece : {3, 7, 16, 61, 500, 4096}) {
    // Pieces of 3 and 7 bytes cut a shorter text (hundreds of frames, not thousands).
    const std::string& t = piece < 16 ? short_text : text;
    for (bool content_size : {true, false}) {
      const std::string zst = Frames(t, piece, content_size, piece == 61);
      for (int64_t target : {int64_t{1}, int64_t{1} << 20}) {
        ASSERT_OK_AND_ASSIGN(auto scan, Open(t, zst, {}, target));
        if (target > 1 || piece == 4096) {
          // 128 KiB a block: one 1 MiB range holds 8 frames.
          if (scan == nullptr) continue;
        }
        ASSERT_NE(scan, nullptr) << piece;
        EXPECT_GT(scan->num_ranges(), 1);
        for (int threads : {1, 4}) {
          ASSERT_OK_AND_ASSIGN(auto batches, ParseAll(*scan, threads));
          EXPECT_EQ(RowTexts(batches), piece < 16 ? short_want : want)
              << "pieces of " << piece << ", " << threads << " threads";
          for (const auto& b : batches) EXPECT_EQ(b->schema->ToString(), serial.schema->ToString());
        }
      }
    }
  }
}

TEST_F(CsvFramesTest, OneFrameOrFramesTooLargeAreNotSplit) {
  const std::string text = QuotedText(300);
  ASSERT_OK_AND_ASSIGN(auto one, Open(text, Frames(text, text.size(), true, false)));
  EXPECT_EQ(one, nullptr);
  // A frame whose bound (128 KiB a block) exceeds max_range_text_bytes.
  ASSERT_OK_AND_ASSIGN(auto layout, InferCsvLayout(text, true, {}, "t.csv.zst"));
  CsvFrameScanOptions fo;
  fo.max_range_text_bytes = 1000;
  ASSERT_OK_AND_ASSIGN(
      auto big, CsvFrameScan::Open(Source(Frames(text, 2000, true, false)), layout, {}, std::nullopt, pool(), fo));
  EXPECT_EQ(big, nullptr);
  // Data rows only in the last frame (the header row spans the others): not split.
  const std::string late = "abcdef,gh\n1,2\n";
  ASSERT_OK_AND_ASSIGN(auto head, Open(late, Frames(late, 5, true, false)));
  EXPECT_EQ(head, nullptr);
}

TEST_F(CsvFramesTest, BadValueInALaterFrameNamesTheFilesLine) {
  std::string text = QuotedText(200);
  // Row 150's key is not a number (after the 5-row sample).
  const size_t at = text.find("\n1050,");
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 1, 4, "x050");
  CsvOptions o;
  o.sample_rows = 5;
  const Status want = ParseCsv(text, o, pool(), "t.csv.zst").status();
  ASSERT_FALSE(want.ok());
  EXPECT_NE(want.message().find("'x050' is not a int64"), std::string::npos) << want.message();
  for (size_t piece : {50, 333}) {
    ASSERT_OK_AND_ASSIGN(auto scan, Open(text, Frames(text, piece, piece == 50, false), o));
    ASSERT_NE(scan, nullptr);
    for (int threads : {1, 4}) {
      auto r = ParseAll(*scan, threads);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().message(), want.message());
    }
  }
}

// Frames of `text` in pieces of 400 bytes, and where each frame starts in
// the file and in the text.
struct FramedText {
  std::string zst;
  std::vector<size_t> file_at;
  std::vector<size_t> text_at;
};
FramedText Framed(const std::string& text) {
  FramedText f;
  for (size_t at = 0; at < text.size(); at += 400) {
    f.file_at.push_back(f.zst.size());
    f.text_at.push_back(at);
    f.zst += Frames(text.substr(at, 400), 400, true, false);
  }
  return f;
}

int64_t LineAt(const std::string& text, size_t pos) {
  return 1 + static_cast<int64_t>(std::count(text.begin(), text.begin() + static_cast<int64_t>(pos), '\n'));
}

// The line an error message names after "ends on line ".
int64_t NamedLine(const std::string& message) {
  const size_t at = message.find("ends on line ");
  return at == std::string::npos ? -1 : std::stoll(message.substr(at + 13));
}

TEST_F(CsvFramesTest, TruncatedLastFrameNamesFrameByteAndLine) {
  const std::string text = QuotedText(120);
  const FramedText f = Framed(text);
  const size_t n = f.file_at.size();
  ASSERT_GE(n, 4u);
  for (size_t cut : {1, 3, 4, 9, 40}) {
    const std::string zst = f.zst.substr(0, f.zst.size() - cut);
    ASSERT_OK_AND_ASSIGN(auto scan, Open(text, zst));
    ASSERT_NE(scan, nullptr);
    for (int threads : {1, 4}) {
      auto r = ParseAll(*scan, threads);
      ASSERT_FALSE(r.ok()) << cut;
      const std::string& m = r.status().message();
      EXPECT_TRUE(r.status().IsInvalid()) << m;
      EXPECT_NE(m.find("t.csv.zst: zstd frame " + std::to_string(n) + " of " + std::to_string(n) + " (at input byte " +
                       std::to_string(f.file_at[n - 1]) + ")"),
                std::string::npos)
          << m;
      const int64_t line = NamedLine(m);
      EXPECT_GE(line, LineAt(text, f.text_at[n - 1])) << m;
      EXPECT_LE(line, LineAt(text, text.size())) << m;
    }
  }
}

TEST_F(CsvFramesTest, CorruptMiddleFrameNamesFrameByteAndLine) {
  const std::string text = QuotedText(120);
  const FramedText f = Framed(text);
  ASSERT_GE(f.file_at.size(), 4u);
  // Every byte of frame 3 after its header flipped in turn: a clean
  // Invalid naming frame 3 (its checksum catches what decodes).
  const size_t begin = f.file_at[2] + 6, end = f.file_at[3];
  int64_t failures = 0;
  for (size_t i = begin; i < end; ++i) {
    std::string zst = f.zst;
    zst[i] = static_cast<char>(zst[i] ^ 0x5A);
    auto scan = Open(text, zst);
    ASSERT_OK(scan.status());
    if (*scan == nullptr) continue;  // the block headers no longer say where frames end: read serially
    auto r = ParseAll(**scan, 2);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    const std::string& m = r.status().message();
    EXPECT_TRUE(r.status().IsInvalid()) << m;
    if (m.find("zstd frame 3 of") == std::string::npos) continue;  // a damaged block header: the frame runs on
    ++failures;
    EXPECT_NE(m.find("(at input byte " + std::to_string(f.file_at[2]) + ")"), std::string::npos) << m;
    const int64_t line = NamedLine(m);
    EXPECT_GE(line, LineAt(text, f.text_at[2])) << m;
    EXPECT_LE(line, LineAt(text, f.text_at[3])) << m;
  }
  EXPECT_GT(failures, static_cast<int64_t>(end - begin) / 2);
}

TEST_F(CsvFramesTest, HeaderClaimingATerabyteSizesNothing) {
  // Hand-made frames of one raw block each: a header of an 8-byte content
  // size and a 2 MiB window; the second claims 2^40 bytes.
  auto raw_frame = [](const std::string& body, uint64_t content_size) {
    std::string f = "\x28\xB5\x2F\xFD";
    f += '\xC0';  // 8-byte content size, no checksum, no dictionary
    f += '\x58';  // window 2^21
    for (int i = 0; i < 8; ++i) f += static_cast<char>((content_size >> (8 * i)) & 0xFF);
    const uint32_t block = (static_cast<uint32_t>(body.size()) << 3) | 1;  // raw, last
    f += static_cast<char>(block & 0xFF);
    f += static_cast<char>((block >> 8) & 0xFF);
    f += static_cast<char>((block >> 16) & 0xFF);
    return f + body;
  };
  const std::string a = "id,name\n1,ann\n2,bo", b = "b\n3,cy\n4,di\n", c = "5,ed\n";
  ASSERT_OK_AND_ASSIGN(auto good,
                       Open(a + b + c, raw_frame(a, a.size()) + raw_frame(b, b.size()) + raw_frame(c, c.size())));
  ASSERT_NE(good, nullptr);
  ASSERT_OK_AND_ASSIGN(auto rows, ParseAll(*good, 2));
  EXPECT_EQ(RowTexts(rows), (std::vector<std::string>{"1|ann", "2|bob", "3|cy", "4|di", "5|ed"}));

  const std::string zst = raw_frame(a, a.size()) + raw_frame(b, uint64_t{1} << 40) + raw_frame(c, c.size());
  ASSERT_OK_AND_ASSIGN(auto frames, FindZstdFrames(*Source(zst), pool()));
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[1].content_bytes, int64_t{1} << 40);
  EXPECT_EQ(frames[1].TextBound(0), 128 << 10);  // the block count bounds it
  // Walked for a split of frames of at most 64 MiB: the walk stops there.
  ASSERT_OK_AND_ASSIGN(auto capped_walk, FindZstdFrames(*Source(zst), pool(), int64_t{64} << 20));
  ASSERT_EQ(capped_walk.size(), 2u);
  EXPECT_TRUE(capped_walk[1].oversized);
  EXPECT_EQ(capped_walk[1].compressed_bytes, static_cast<int64_t>(zst.size()) - capped_walk[1].offset);
  ASSERT_OK_AND_ASSIGN(auto scan, Open(a + b + c, zst));
  EXPECT_EQ(scan, nullptr);  // not split: read serially, in 64 KiB steps
  auto capped = MemoryPool::MakeRoot(MemoryPoolOptions{"capped", int64_t{16} << 20});
  auto r = ReadCsvStream(Source(zst), {}, capped.get());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().message();
  EXPECT_NE(r.status().message().find("t.csv.zst: zstd: "), std::string::npos) << r.status().message();
  EXPECT_LT(capped->peak_bytes(), int64_t{16} << 20);
}

}  // namespace
}  // namespace quiver::formats::csv
