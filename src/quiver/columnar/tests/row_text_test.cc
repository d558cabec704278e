// Tests for quiver/columnar/row_text.h: the exact bytes of each format
// (padded table blocks, pipe table, CSV quoting, JSON lines with unique
// keys), logical nulls in every format, row ranges and the name parser.
#include "quiver/columnar/row_text.h"

#include <gtest/gtest.h>
#include <stdio.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "quiver/testing/array_builders.h"

namespace quiver {
namespace {

using testing::Batch;
using testing::Int32Array;
using testing::PrimitiveArray;
using testing::StringArray;

SchemaPtr SchemaOf(std::vector<FieldPtr> fields) {
  auto s = std::make_shared<Schema>();
  s->fields = std::move(fields);
  return s;
}

class RowTextTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  // What a writer of `format` prints for the header (when `header`) and
  // rows [begin, end) of `batch` (end < 0: every row).
  static std::string Written(RowTextFormat format, const RecordBatch& batch, bool header, int64_t begin = 0,
                             int64_t end = -1) {
    char* data = nullptr;
    size_t size = 0;
    std::FILE* f = open_memstream(&data, &size);
    EXPECT_NE(f, nullptr);
    if (!f) return "";
    RowTextWriter w(format, f);
    EXPECT_EQ(w.format(), format);
    if (header) w.WriteHeader(*batch.schema);
    w.WriteRows(batch, begin, end < 0 ? batch.num_rows : end);
    std::fclose(f);
    std::string out(data, size);
    std::free(data);
    return out;
  }

  // id: 1, null, 3; name: "a", "b,c" (quoted in CSV), null.
  RecordBatchPtr Sample() {
    return Batch(SchemaOf({field("id", int32()), field("name", utf8())}),
                 {Int32Array(pool(), {1, std::nullopt, 3}), StringArray(pool(), {"a", "b,c", std::nullopt})});
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(RowTextTest, PaddedTable) {
  EXPECT_EQ(Written(RowTextFormat::kTable, *Sample(), /*header=*/true),
            "id   | name\n"
            "-----+-----\n"
            "1    | a   \n"
            "null | b,c \n"
            "3    | null\n");
}

TEST_F(RowTextTest, PaddedTableCutsLongValuesAndStartsABlockEvery1000Rows) {
  std::vector<std::optional<std::string>> words(1001, std::string("w"));
  words[0] = std::string(70, 'x');
  auto b = Batch(SchemaOf({field("s", utf8())}), {StringArray(pool(), words)});
  const std::string out = Written(RowTextFormat::kTable, *b, false);
  const std::string cut = std::string(57, 'x') + "...";
  EXPECT_EQ(out.substr(0, 2 * 61 + 61), "s" + std::string(59, ' ') + "\n" + std::string(60, '-') + "\n" + cut + "\n");
  // The second block (row 1000) has its own header and widths.
  EXPECT_NE(out.find("\ns\n-\nw\n"), std::string::npos);
  EXPECT_EQ(out.size(), 3 * 61 + 999 * 61 + 6);
}

TEST_F(RowTextTest, PipeTable) {
  EXPECT_EQ(Written(RowTextFormat::kPipe, *Sample(), true),
            "id | name\n"
            "1 | a\n"
            "NULL | b,c\n"
            "3 | NULL\n");
}

TEST_F(RowTextTest, Csv) {
  auto b = Batch(SchemaOf({field("id", int32()), field("a,\"b\"", utf8())}),
                 {Int32Array(pool(), {1, std::nullopt}), StringArray(pool(), {"say \"hi\"\nbye", ""})});
  EXPECT_EQ(Written(RowTextFormat::kCsv, *b, true),
            "id,\"a,\"\"b\"\"\"\n"
            "1,\"say \"\"hi\"\"\nbye\"\n"
            ",\n");
}

TEST_F(RowTextTest, JsonLinesWithUniqueKeys) {
  auto s = SchemaOf({field("k", int32()), field("v", utf8()), field("k", int32()), field("k_2", int32())});
  auto b = Batch(s, {Int32Array(pool(), {1, 2}), StringArray(pool(), {"x\ty", std::nullopt}),
                     Int32Array(pool(), {3, std::nullopt}), Int32Array(pool(), {4, 5})});
  EXPECT_EQ(Written(RowTextFormat::kJsonl, *b, /*header=*/true),  // no header line
            "{\"k\":1,\"v\":\"x\\ty\",\"k_3\":3,\"k_2\":4}\n"
            "{\"k\":2,\"v\":null,\"k_3\":null,\"k_2\":5}\n");
}

TEST_F(RowTextTest, NoneWritesNothing) { EXPECT_EQ(Written(RowTextFormat::kNone, *Sample(), true), ""); }

TEST_F(RowTextTest, RowRange) {
  EXPECT_EQ(Written(RowTextFormat::kCsv, *Sample(), false, 1, 3), ",\"b,c\"\n3,\n");
  EXPECT_EQ(Written(RowTextFormat::kJsonl, *Sample(), false, 2, 2), "");
}

TEST_F(RowTextTest, DictionaryNullValueIsNullInEveryFormat) {
  // Index 1 is valid but points at a null dictionary value; index 2 is null.
  auto idx = PrimitiveArray<int16_t>(pool(), int16(), {0, 1, std::nullopt});
  auto d = std::make_shared<ArrayData>(*idx);
  d->type = dictionary(int16(), utf8());
  d->dictionary = StringArray(pool(), {"a", std::nullopt});
  auto b = Batch(SchemaOf({field("d", d->type)}), {d});
  EXPECT_EQ(Written(RowTextFormat::kCsv, *b, false), "a\n\n\n");
  EXPECT_EQ(Written(RowTextFormat::kPipe, *b, false), "a\nNULL\nNULL\n");
  EXPECT_EQ(Written(RowTextFormat::kJsonl, *b, false), "{\"d\":\"a\"}\n{\"d\":null}\n{\"d\":null}\n");
  EXPECT_EQ(Written(RowTextFormat::kTable, *b, false), "d   \n----\na   \nnull\nnull\n");
}

TEST(RowTextFunctionsTest, CsvField) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("q\"q"), "\"q\"\"q\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
}

TEST(RowTextFunctionsTest, UniqueJsonKeys) {
  auto s = SchemaOf(
      {field("k", int32()), field("v", int32()), field("k", int32()), field("v", int32()), field("k", int32())});
  EXPECT_EQ(UniqueJsonKeys(*s), (std::vector<std::string>{"k", "v", "k_2", "v_2", "k_3"}));
  // "k_2" taken by a real field: the repeated "k" moves on to "k_3".
  auto t = SchemaOf({field("k", int32()), field("k_2", int32()), field("k", int32())});
  EXPECT_EQ(UniqueJsonKeys(*t), (std::vector<std::string>{"k", "k_2", "k_3"}));
}

TEST(RowTextFunctionsTest, ParseRowTextFormat) {
  ASSERT_OK_AND_ASSIGN(RowTextFormat f, ParseRowTextFormat("table"));
  EXPECT_EQ(f, RowTextFormat::kTable);
  ASSERT_OK_AND_ASSIGN(f, ParseRowTextFormat("pipe"));
  EXPECT_EQ(f, RowTextFormat::kPipe);
  ASSERT_OK_AND_ASSIGN(f, ParseRowTextFormat("csv"));
  EXPECT_EQ(f, RowTextFormat::kCsv);
  ASSERT_OK_AND_ASSIGN(f, ParseRowTextFormat("jsonl"));
  EXPECT_EQ(f, RowTextFormat::kJsonl);
  ASSERT_OK_AND_ASSIGN(f, ParseRowTextFormat("none"));
  EXPECT_EQ(f, RowTextFormat::kNone);
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "unknown row text format 'json'", ParseRowTextFormat("json"));
}

}  // namespace
}  // namespace quiver
