// The Parquet page index (formats/parquet/page_index.h, page_filter.h,
// FileReader::OpenRowGroupRange): parquet-testing's files with a page index
// read and checked, pages chosen for filters and counted, every range read
// through the offset indexes equal to the same rows of the whole row group,
// corrupt indexes clean errors naming row group and column, and the
// writer's page index read back.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "quiver/columnar/compare.h"
#include "quiver/columnar/validate.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/formats/parquet/metadata_writer.h"
#include "quiver/formats/parquet/page_filter.h"
#include "quiver/formats/sink.h"
#include "quiver/formats/source.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::parquet {
namespace {

namespace fs = std::filesystem;

// `file` with its footer changed by `edit` (which may append bytes, e.g.
// a replacement index, to `body` and point the footer at them).
template <typename Edit>
std::vector<uint8_t> EditFooter(const std::vector<uint8_t>& file, Edit&& edit) {
  const size_t n = file.size();
  const uint32_t len = static_cast<uint32_t>(file[n - 8]) | (static_cast<uint32_t>(file[n - 7]) << 8) |
                       (static_cast<uint32_t>(file[n - 6]) << 16) | (static_cast<uint32_t>(file[n - 5]) << 24);
  std::vector<uint8_t> body(file.begin(), file.end() - 8 - len);
  auto md = DecodeFileMetaData(std::span<const uint8_t>(file.data() + n - 8 - len, len));
  EXPECT_TRUE(md.ok());
  edit(&*md, &body);
  const std::string footer = EncodeFileMetaData(*md, true);
  body.insert(body.end(), footer.begin(), footer.end());
  const uint32_t f = static_cast<uint32_t>(footer.size());
  for (int i = 0; i < 4; ++i) body.push_back(static_cast<uint8_t>(f >> (8 * i)));
  for (char c : std::string("PAR1")) body.push_back(static_cast<uint8_t>(c));
  return body;
}

// Appends `bytes` to `body` and returns where they start.
int64_t Append(std::vector<uint8_t>* body, const std::string& bytes) {
  const int64_t at = static_cast<int64_t>(body->size());
  body->insert(body->end(), bytes.begin(), bytes.end());
  return at;
}

class ParquetPageIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = ::quiver::testing::SharedDataDir() / "parquet-testing" / "data";
    pool_ = MemoryPool::MakeRoot({"parquet-page-index", int64_t{1} << 30});
  }
  Result<std::unique_ptr<FileReader>> OpenBytes(const std::vector<uint8_t>& bytes, const std::string& name) {
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::CopyOf(pool_.get(), bytes));
    return FileReader::Open(std::make_shared<formats::MemorySource>(data, name), pool_.get());
  }
  Result<std::unique_ptr<FileReader>> Open(const std::string& file) {
    QUIVER_ASSIGN_OR_RETURN(auto source, formats::LocalFileSource::Open((data_ / file).string()));
    return FileReader::Open(source, pool_.get());
  }
  // Every range of `plan` read through the offset indexes (in slices of
  // `slice_rows`) equals the same rows of the row group read whole.
  void ExpectRangesEqualWholeReads(const FileReader& reader, int g, const RowGroupPagePlan& plan, int64_t slice_rows) {
    ASSERT_OK_AND_ASSIGN(auto whole, reader.ReadRowGroup(g, {}, pool_.get()));
    for (const RowRange& r : plan.ranges) {
      ASSERT_OK_AND_ASSIGN(auto slices, reader.OpenRowGroupRange(g, {}, plan, r, pool_.get()));
      EXPECT_EQ(slices->num_rows(), r.num_rows);
      int64_t at = r.first_row;
      while (true) {
        ASSERT_OK_AND_ASSIGN(auto b, slices->Next(slice_rows));
        if (!b) break;
        ASSERT_OK(ValidateBatch(*b, ValidationLevel::kFull));
        for (size_t c = 0; c < b->columns.size(); ++c) {
          EXPECT_TRUE(ArrayRangeEquals(*whole->columns[c], at, *b->columns[c], 0, b->num_rows, {}))
              << "row group " << g << " column " << whole->schema->fields[c]->name << " rows " << at << "+"
              << b->num_rows;
        }
        at += b->num_rows;
      }
      EXPECT_EQ(at, r.end());
    }
  }
  static StatsPredicate Pred(int field, StatsPredicate::Op op, std::vector<StatsValue> values) {
    StatsPredicate p;
    p.field = field;
    p.op = op;
    p.values = std::move(values);
    return p;
  }
  int Field(const FileReader& r, const std::string& name) {
    for (size_t i = 0; i < r.schema()->fields.size(); ++i) {
      if (r.schema()->fields[i]->name == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no field " << name;
    return -1;
  }
  // 10,000 rows in one row group by quiver's writer, PLAIN, pages of
  // 4,000 value bytes: a = row (int64: 20 pages of 500 rows), s = 'v' +
  // row % 13, NULL every 7th row (pages of other sizes).
  std::vector<uint8_t> WriteSorted() {
    const int64_t n = 10000;
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("a", int64(), false), field("s", utf8())};
    std::vector<std::optional<int64_t>> a(n);
    std::vector<std::optional<std::string>> s(n);
    for (int64_t i = 0; i < n; ++i) {
      a[static_cast<size_t>(i)] = i;
      if (i % 7 != 0) s[static_cast<size_t>(i)] = "v" + std::to_string(i % 13);
    }
    auto batch = ::quiver::testing::Batch(
        schema, {::quiver::testing::Int64Array(pool_.get(), a), ::quiver::testing::StringArray(pool_.get(), s)});
    WriterOptions o;
    o.pool = pool_.get();
    o.codec = static_cast<int32_t>(Codec::kUncompressed);
    o.dictionary = false;
    o.data_page_bytes = 4000;
    o.row_group_rows = n;
    formats::MemorySink sink;
    auto w = FileWriter::Make(schema, &sink, o);
    EXPECT_TRUE(w.ok());
    EXPECT_OK((*w)->WriteBatch(batch));
    EXPECT_OK((*w)->Close());
    return sink.bytes();
  }
  fs::path data_;
  std::shared_ptr<MemoryPool> pool_;
};

// Which parquet-testing files carry a page index, and how many pages.
TEST_F(ParquetPageIndexTest, ParquetTestingIndexesReadAndCheck) {
  if (!fs::exists(data_ / "alltypes_tiny_pages.parquet")) GTEST_SKIP() << "no parquet-testing data";
  struct Expect {
    const char* file;
    int64_t chunks_with_offset_index, chunks_with_column_index, pages;
  };
  for (const Expect& e : std::vector<Expect>{
           // timestamp_col (INT96) has an offset index only
           {"alltypes_tiny_pages.parquet", 13, 12, 5794},
           {"alltypes_tiny_pages_plain.parquet", 13, 12, 5713},
           {"data_index_bloom_encoding_stats.parquet", 1, 1, 1},
           {"int32_with_null_pages.parquet", 1, 1, 10},
           {"binary_truncated_min_max.parquet", 6, 6, 6},
           {"fixed_length_byte_array.parquet", 1, 1, 10},
           // null_counts of -1 ("unknown"): read, the counts dropped
           {"datapage_v1-snappy-compressed-checksum.parquet", 2, 2, 4},
           {"alltypes_plain.parquet", 0, 0, 0},
       }) {
    ASSERT_OK_AND_ASSIGN(auto reader, Open(e.file));
    int64_t oi = 0, ci = 0, pages = 0;
    for (int g = 0; g < reader->num_row_groups(); ++g) {
      std::vector<int> leaves;
      for (size_t l = 0; l < reader->parquet_schema().leaves.size(); ++l) leaves.push_back(static_cast<int>(l));
      ASSERT_OK_AND_ASSIGN(auto indexes, ReadPageIndexes(*reader, g, leaves, true, pool_.get()));
      for (const auto& i : indexes) {
        oi += i.offset_index ? 1 : 0;
        ci += i.column_index ? 1 : 0;
        if (i.offset_index) pages += static_cast<int64_t>(i.offset_index->page_locations.size());
      }
    }
    EXPECT_EQ(oi, e.chunks_with_offset_index) << e.file;
    EXPECT_EQ(ci, e.chunks_with_column_index) << e.file;
    EXPECT_EQ(pages, e.pages) << e.file;
  }
}

// alltypes_tiny_pages (parquet-mr, pages of a few dozen rows whose
// boundaries differ between columns): id in [1000, 1100] keeps the pages
// of id that may hold those ids, every passing row inside them; every range
// read through the offset indexes equals the same rows read whole, for
// every column.
TEST_F(ParquetPageIndexTest, TinyPagesPruneAndReadAlike) {
  if (!fs::exists(data_ / "alltypes_tiny_pages.parquet")) GTEST_SKIP() << "no parquet-testing data";
  for (const char* file : {"alltypes_tiny_pages.parquet", "alltypes_tiny_pages_plain.parquet"}) {
    ASSERT_OK_AND_ASSIGN(auto reader, Open(file));
    std::vector<int> all;
    for (size_t f = 0; f < reader->schema()->fields.size(); ++f) all.push_back(static_cast<int>(f));
    const int id = Field(*reader, "id");
    const StatsPredicate p[] = {Pred(id, StatsPredicate::Op::kGe, {StatsValue::Int(1000)}),
                                Pred(id, StatsPredicate::Op::kLe, {StatsValue::Int(1100)})};
    ASSERT_OK_AND_ASSIGN(auto plan, PlanRowGroupPages(*reader, 0, p, all, pool_.get()));
    ASSERT_TRUE(plan.has_value()) << file;
    // id is not the row number there: its pages of ids 1000..1100 are five
    // runs of rows; of the 13 columns' pages 242 (plain: 239) are read.
    EXPECT_EQ(plan->ranges, (std::vector<RowRange>{{291, 21}, {1212, 21}, {1794, 159}, {2001, 21}, {2064, 69}}))
        << file;
    const bool plain = std::string(file).find("plain") != std::string::npos;
    EXPECT_EQ(plan->pages_selected, plain ? 239 : 242) << file;
    EXPECT_EQ(plan->pages_total, plain ? 5713 : 5794) << file;
    // Every row whose id passes lies in a range.
    ASSERT_OK_AND_ASSIGN(auto whole, reader->ReadRowGroup(0, {id}, pool_.get()));
    const auto* ids =
        reinterpret_cast<const int32_t*>(whole->columns[0]->buffers[1]->data()) + whole->columns[0]->offset;
    int64_t passing = 0;
    for (int64_t row = 0; row < whole->num_rows; ++row) {
      if (ids[row] < 1000 || ids[row] > 1100) continue;
      ++passing;
      bool in = false;
      for (const auto& r : plan->ranges) in = in || (row >= r.first_row && row < r.end());
      EXPECT_TRUE(in) << file << " row " << row;
    }
    EXPECT_EQ(passing, 101) << file;
    ExpectRangesEqualWholeReads(*reader, 0, *plan, 17);
    // Every third page of `bigint_col` as its own range (a hand-made
    // plan): ranges that start and end inside the pages of other columns.
    RowGroupPagePlan pages = *plan;
    const auto& oi =
        *pages.offset_indexes[static_cast<size_t>(FlatLeafOf(reader->parquet_schema(), Field(*reader, "bigint_col")))];
    pages.ranges.clear();
    for (size_t i = 0; i < oi.page_locations.size(); i += 3) {
      pages.ranges.push_back({oi.page_locations[i].first_row_index, PageRows(oi, i, 7300)});
    }
    ExpectRangesEqualWholeReads(*reader, 0, pages, 1000);
  }
}

TEST_F(ParquetPageIndexTest, TheWritersPageIndexDescribesItsPages) {
  const auto bytes = WriteSorted();
  ASSERT_OK_AND_ASSIGN(auto reader, OpenBytes(bytes, "sorted.parquet"));
  ASSERT_EQ(reader->num_row_groups(), 1);
  ASSERT_OK_AND_ASSIGN(auto idx, ReadPageIndexes(*reader, 0, std::vector<int>{0, 1}, true, pool_.get()));
  ASSERT_TRUE(idx[0].offset_index && idx[0].column_index);
  const auto& pages = idx[0].offset_index->page_locations;
  ASSERT_EQ(pages.size(), 20u);
  for (size_t i = 0; i < pages.size(); ++i) {
    EXPECT_EQ(pages[i].first_row_index, static_cast<int64_t>(500 * i));
    // Each location holds a data page header of 500 values.
    int64_t header_bytes = 0;
    ASSERT_OK_AND_ASSIGN(
        auto h,
        DecodePageHeader(std::span<const uint8_t>(bytes).subspan(static_cast<size_t>(pages[i].offset)), &header_bytes));
    EXPECT_EQ(h.type, static_cast<int32_t>(PageType::kDataPage));
    EXPECT_EQ(h.num_values, 500);
    EXPECT_EQ(pages[i].compressed_page_size, header_bytes + h.compressed_page_size);
    int64_t lo = 0, hi = 0;
    ASSERT_EQ(idx[0].column_index->min_values[i].size(), 8u);
    std::memcpy(&lo, idx[0].column_index->min_values[i].data(), 8);
    std::memcpy(&hi, idx[0].column_index->max_values[i].data(), 8);
    EXPECT_EQ(lo, static_cast<int64_t>(500 * i));
    EXPECT_EQ(hi, static_cast<int64_t>(500 * i + 499));
    EXPECT_EQ(idx[0].column_index->null_pages[i], 0);
    EXPECT_EQ((*idx[0].column_index->null_counts)[i], 0);
  }
  // s: its own page boundaries; its NULLs (every 7th row: 1,429) counted
  // page by page.
  ASSERT_TRUE(idx[1].offset_index && idx[1].column_index);
  const auto& spages = idx[1].offset_index->page_locations;
  EXPECT_GT(spages.size(), 1u);
  EXPECT_NE(spages[1].first_row_index, 500);
  int64_t nulls = 0;
  for (int64_t n : *idx[1].column_index->null_counts) nulls += n;
  EXPECT_EQ(nulls, 1429);
  EXPECT_EQ(idx[1].column_index->min_values[0], "v0");
  EXPECT_EQ(idx[1].column_index->max_values[0], "v9");
}

TEST_F(ParquetPageIndexTest, PlansChooseThePagesOfTheFilterAndRangesReadAlike) {
  const auto bytes = WriteSorted();
  ASSERT_OK_AND_ASSIGN(auto reader, OpenBytes(bytes, "sorted.parquet"));
  const std::vector<int> both{0, 1};
  // a in [2250, 3300): pages 4..6 of a, rows [2000, 3500).
  const StatsPredicate range[] = {Pred(0, StatsPredicate::Op::kGe, {StatsValue::Int(2250)}),
                                  Pred(0, StatsPredicate::Op::kLt, {StatsValue::Int(3300)})};
  ASSERT_OK_AND_ASSIGN(auto plan, PlanRowGroupPages(*reader, 0, range, both, pool_.get()));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->ranges, (std::vector<RowRange>{{2000, 1500}}));
  const int64_t s_pages = static_cast<int64_t>(plan->offset_indexes[1]->page_locations.size());
  EXPECT_EQ(plan->pages_total, 20 + s_pages);
  ExpectRangesEqualWholeReads(*reader, 0, *plan, 333);
  // IN over three pages far apart: three ranges.
  const StatsPredicate in[] = {
      Pred(0, StatsPredicate::Op::kIn, {StatsValue::Int(10), StatsValue::Int(7777), StatsValue::Int(9999)})};
  ASSERT_OK_AND_ASSIGN(plan, PlanRowGroupPages(*reader, 0, in, both, pool_.get()));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->ranges, (std::vector<RowRange>{{0, 500}, {7500, 500}, {9500, 500}}));
  ExpectRangesEqualWholeReads(*reader, 0, *plan, 1000);
  // Ranges that start and end inside pages of both columns (a plan made
  // by hand: the reader trims any range).
  RowGroupPagePlan odd = *plan;
  odd.ranges = {{1, 1}, {499, 2}, {1234, 4321}, {9998, 2}};
  ExpectRangesEqualWholeReads(*reader, 0, odd, 777);
  // A filter every page may match: no plan (read the row group whole).
  const StatsPredicate all[] = {Pred(0, StatsPredicate::Op::kGe, {StatsValue::Int(0)})};
  ASSERT_OK_AND_ASSIGN(plan, PlanRowGroupPages(*reader, 0, all, both, pool_.get()));
  EXPECT_FALSE(plan.has_value());
  // None may match: a plan without ranges.
  const StatsPredicate none[] = {Pred(0, StatsPredicate::Op::kGt, {StatsValue::Int(10000)})};
  ASSERT_OK_AND_ASSIGN(plan, PlanRowGroupPages(*reader, 0, none, both, pool_.get()));
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->ranges.empty());
  EXPECT_EQ(plan->pages_selected, 0);
}

TEST_F(ParquetPageIndexTest, CorruptIndexesAreErrorsNamingRowGroupAndColumn) {
  const auto bytes = WriteSorted();
  ASSERT_OK_AND_ASSIGN(auto good, OpenBytes(bytes, "good.parquet"));
  ASSERT_OK_AND_ASSIGN(auto idx, ReadPageIndexes(*good, 0, std::vector<int>{0}, true, pool_.get()));
  const OffsetIndex oi = *idx[0].offset_index;
  const ColumnIndex ci = *idx[0].column_index;
  auto expect_error = [&](const std::vector<uint8_t>& file, const std::string& message) {
    ASSERT_OK_AND_ASSIGN(auto reader, OpenBytes(file, "bad.parquet"));
    const StatsPredicate p[] = {Pred(0, StatsPredicate::Op::kLt, {StatsValue::Int(100)})};
    auto plan = PlanRowGroupPages(*reader, 0, p, std::vector<int>{0, 1}, pool_.get());
    ASSERT_FALSE(plan.ok()) << message;
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalid);
    EXPECT_NE(plan.status().message().find("bad.parquet: row group 0, column 'a'"), std::string::npos)
        << plan.status().ToString();
    EXPECT_NE(plan.status().message().find(message), std::string::npos) << plan.status().ToString();
  };
  auto with_offset_index = [&](const OffsetIndex& bad) {
    return EditFooter(bytes, [&](FileMetaData* md, std::vector<uint8_t>* body) {
      const std::string enc = EncodeOffsetIndex(bad);
      auto& cc = md->row_groups[0].columns[0];
      cc.offset_index_offset = Append(body, enc);
      cc.offset_index_length = static_cast<int32_t>(enc.size());
    });
  };
  OffsetIndex bad = oi;
  bad.page_locations[2].first_row_index = 500;
  expect_error(with_offset_index(bad), "offset index: page 2 starts at row 500, not after page 1's row 500");
  bad = oi;
  bad.page_locations[0].first_row_index = 3;
  expect_error(with_offset_index(bad), "offset index: page 0 starts at row 3, not 0");
  bad = oi;
  bad.page_locations[19].first_row_index = 10000;
  expect_error(with_offset_index(bad), "page 19 starts at row 10000 of a row group of 10000 rows");
  bad = oi;
  bad.page_locations[5].offset += 1;
  expect_error(with_offset_index(bad), "offset index: page 6 at byte");
  bad = oi;
  bad.page_locations[19].compressed_page_size += 1000000;
  expect_error(with_offset_index(bad), "is outside the column chunk");
  bad = oi;
  bad.page_locations[3].compressed_page_size = 0;
  expect_error(with_offset_index(bad), "offset index: page 3: size 0 bytes");
  bad = oi;
  bad.page_locations.clear();
  expect_error(with_offset_index(bad), "offset index: no pages for 10000 rows");
  // The index's own location outside the file.
  expect_error(EditFooter(bytes,
                          [&](FileMetaData* md, std::vector<uint8_t>*) {
                            md->row_groups[0].columns[0].offset_index_offset = int64_t{1} << 40;
                          }),
               "offset index at byte 1099511627776 of");
  // Bytes that do not decode.
  expect_error(EditFooter(bytes,
                          [&](FileMetaData* md, std::vector<uint8_t>* body) {
                            auto& cc = md->row_groups[0].columns[0];
                            cc.offset_index_offset = Append(body, std::string(40, '\xff'));
                            cc.offset_index_length = 40;
                          }),
               "offset index");
  // A ColumnIndex whose lists do not match the pages.
  ColumnIndex short_ci = ci;
  short_ci.min_values.pop_back();
  expect_error(EditFooter(bytes,
                          [&](FileMetaData* md, std::vector<uint8_t>* body) {
                            const std::string enc = EncodeColumnIndex(short_ci);
                            auto& cc = md->row_groups[0].columns[0];
                            cc.column_index_offset = Append(body, enc);
                            cc.column_index_length = static_cast<int32_t>(enc.size());
                          }),
               "column index: 19 min_values for 20 pages of the offset index");
  // Every byte of both indexes of 'a' flipped, one at a time: an answer or
  // a clean error, and a plan's ranges read without a crash.
  const auto& cc = good->metadata().row_groups[0].columns[0];
  std::vector<std::pair<int64_t, int32_t>> regions = {{*cc.offset_index_offset, *cc.offset_index_length},
                                                      {*cc.column_index_offset, *cc.column_index_length}};
  int errors = 0;
  for (const auto& [at, length] : regions) {
    for (int32_t i = 0; i < length; ++i) {
      std::vector<uint8_t> flipped = bytes;
      flipped[static_cast<size_t>(at + i)] ^= 0x5a;
      ASSERT_OK_AND_ASSIGN(auto reader, OpenBytes(flipped, "flipped.parquet"));
      const StatsPredicate p[] = {Pred(0, StatsPredicate::Op::kLt, {StatsValue::Int(1000)})};
      auto plan = PlanRowGroupPages(*reader, 0, p, std::vector<int>{0, 1}, pool_.get());
      if (!plan.ok()) {
        ++errors;
        EXPECT_NE(plan.status().message().find("row group 0, column 'a'"), std::string::npos);
        continue;
      }
      if (!*plan) continue;
      for (const RowRange& r : (*plan)->ranges) {
        auto slices = reader->OpenRowGroupRange(0, {}, **plan, r, pool_.get());
        while (slices.ok()) {
          auto b = (*slices)->Next(4096);
          if (!b.ok() || !*b) break;
          EXPECT_OK(ValidateBatch(**b, ValidationLevel::kFull));
        }
      }
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace quiver::parquet
