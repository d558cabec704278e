// Nested Parquet data (formats/parquet/nested_assembly.h): lists (3-level
// and the legacy 2-level forms), maps and structs, any depth, assembled
// from repetition and definition levels. Hand-made levels check the
// assembly's arithmetic and that levels which do not nest are clean
// errors; parquet-testing's nested files check whole values (the JSON of
// `quiver cat --format jsonl`, equal to DuckDB's reading:
// tests/formats/parquet_vs_duckdb.mjs compares every file).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "quiver/columnar/validate.h"
#include "quiver/columnar/value_format.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/nested_assembly.h"
#include "quiver/formats/source.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::parquet {
namespace {

namespace fs = std::filesystem;

/// One pool for the test process (a root pool without a limit).
MemoryPool* TestPool() {
  static const std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({"parquet-nested-test"});
  return pool.get();
}

SchemaElement Group(std::string name, int children, std::optional<Repetition> rep,
                    std::optional<ConvertedType> converted = std::nullopt) {
  SchemaElement e;
  e.name = std::move(name);
  e.num_children = children;
  if (rep) e.repetition = static_cast<int32_t>(*rep);
  if (converted) e.converted_type = static_cast<int32_t>(*converted);
  return e;
}

SchemaElement Int32Leaf(std::string name, Repetition rep) {
  SchemaElement e;
  e.name = std::move(name);
  e.type = static_cast<int32_t>(PhysicalType::kInt32);
  e.repetition = static_cast<int32_t>(rep);
  return e;
}

std::shared_ptr<Buffer> Bytes(const std::vector<uint8_t>& v) {
  auto b = *Buffer::Allocate(TestPool(), static_cast<int64_t>(v.size()));
  if (!v.empty()) std::memcpy(b->mutable_data(), v.data(), v.size());
  return b;
}

/// A leaf of int32 values: one slot per entry, NULL where def < max_def.
LeafLevels Leaf(const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def, int max_def,
                const std::vector<int32_t>& values) {
  LeafLevels l;
  l.count = static_cast<int64_t>(rep.size());
  l.rep = Bytes(rep);
  l.def = Bytes(def);
  auto data = std::make_shared<ArrayData>();
  data->type = int32();
  data->length = l.count;
  std::vector<uint8_t> bits((rep.size() + 7) / 8, 0);
  std::vector<uint8_t> vals(rep.size() * 4, 0);
  size_t j = 0;
  for (size_t i = 0; i < rep.size(); ++i) {
    if (def[i] == max_def) {
      bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
      std::memcpy(vals.data() + i * 4, &values[j++], 4);
    } else {
      ++data->null_count;
    }
  }
  data->buffers = {data->null_count ? Bytes(bits) : nullptr, Bytes(vals)};
  l.values = data;
  return l;
}

std::string Json(const ArrayData& a) {
  std::string out;
  for (int64_t i = 0; i < a.length; ++i) {
    if (i) out += ' ';
    FormatValue(a, i, ValueFormat::kJson, &out);
  }
  return out;
}

// optional group a (LIST) { repeated group list { optional int32 element } }
FileMetaData ListOfInt() {
  FileMetaData md;
  md.schema = {Group("schema", 1, std::nullopt), Group("a", 1, Repetition::kOptional, ConvertedType::kList),
               Group("list", 1, Repetition::kRepeated), Int32Leaf("element", Repetition::kOptional)};
  return md;
}

TEST(ParquetNested, ThreeLevelListFromLevels) {
  const FileMetaData md = ListOfInt();
  ASSERT_OK_AND_ASSIGN(auto schema, BuildSchema(md));
  ASSERT_TRUE(IsNestedField(schema, 0));
  // Rows: [1, null, 2], null, [], [3]   (max def 3: list 1, element 2, value 3)
  std::vector<LeafLevels> leaves = {Leaf({0, 1, 1, 0, 0, 0}, {3, 2, 3, 0, 1, 3}, 3, {1, 2, 3})};
  ASSERT_OK_AND_ASSIGN(auto a, AssembleNestedField(schema, 0, leaves, 4, TestPool()));
  ASSERT_OK(ValidateArray(*a, ValidationLevel::kFull, "a"));
  EXPECT_EQ(a->null_count, 1);
  EXPECT_EQ(Json(*a), "[1,null,2] null [] [3]");
}

TEST(ParquetNested, LevelsThatDoNotNestAreErrors) {
  const FileMetaData md = ListOfInt();
  ASSERT_OK_AND_ASSIGN(auto schema, BuildSchema(md));
  // A repetition level 1 where the list has no element (def 1: empty list).
  std::vector<LeafLevels> empty_then_more = {Leaf({0, 1}, {1, 3}, 3, {7})};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "has no element", AssembleNestedField(schema, 0, empty_then_more, 1, TestPool()));
  // Rows that do not add up to the row group's.
  std::vector<LeafLevels> two_rows = {Leaf({0, 0}, {3, 3}, 3, {1, 2})};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "levels disagree", AssembleNestedField(schema, 0, two_rows, 3, TestPool()));
}

// required group s { optional int32 x; repeated int32 ys }: a struct whose
// leaves must agree on its length; the repeated leaf is a list.
TEST(ParquetNested, StructLeavesMustAgree) {
  FileMetaData md;
  md.schema = {Group("schema", 1, std::nullopt), Group("s", 2, Repetition::kOptional),
               Int32Leaf("x", Repetition::kOptional), Int32Leaf("ys", Repetition::kRepeated)};
  ASSERT_OK_AND_ASSIGN(auto schema, BuildSchema(md));
  ASSERT_EQ(schema.fields[0]->type->ToString(), "struct<x: int32, ys: list<ys: int32 not null> not null>");
  // Rows: {x: 5, ys: [1, 2]}, null, {x: null, ys: []}
  std::vector<LeafLevels> good = {Leaf({0, 0, 0}, {2, 0, 1}, 2, {5}), Leaf({0, 1, 0, 0}, {2, 2, 0, 1}, 2, {1, 2})};
  ASSERT_OK_AND_ASSIGN(auto a, AssembleNestedField(schema, 0, good, 3, TestPool()));
  ASSERT_OK(ValidateArray(*a, ValidationLevel::kFull, "a"));
  EXPECT_EQ(Json(*a), R"({"x":5,"ys":[1,2]} null {"x":null,"ys":[]})");
  // The second leaf has one row more than the first.
  std::vector<LeafLevels> bad = {Leaf({0, 0, 0}, {2, 0, 1}, 2, {5}), Leaf({0, 0, 0, 0}, {2, 2, 0, 1}, 2, {1, 2})};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "levels disagree", AssembleNestedField(schema, 0, bad, 3, TestPool()));
}

// optional group m (MAP) { repeated group key_value { optional int32 key;
// optional int32 value } }: a key the file leaves NULL is an error (an
// Arrow map has none), not an array that fails validation.
TEST(ParquetNested, NullMapKeysAreErrors) {
  FileMetaData md;
  md.schema = {Group("schema", 1, std::nullopt), Group("m", 1, Repetition::kOptional, ConvertedType::kMap),
               Group("key_value", 2, Repetition::kRepeated), Int32Leaf("key", Repetition::kOptional),
               Int32Leaf("value", Repetition::kOptional)};
  ASSERT_OK_AND_ASSIGN(auto schema, BuildSchema(md));
  ASSERT_EQ(schema.fields[0]->type->id, TypeId::kMap);
  // Rows: {1: 10, 2: null}, null, {}
  std::vector<LeafLevels> good = {Leaf({0, 1, 0, 0}, {3, 3, 0, 1}, 3, {1, 2}),
                                  Leaf({0, 1, 0, 0}, {3, 2, 0, 1}, 3, {10})};
  ASSERT_OK_AND_ASSIGN(auto a, AssembleNestedField(schema, 0, good, 3, TestPool()));
  ASSERT_OK(ValidateArray(*a, ValidationLevel::kFull, "m"));
  EXPECT_EQ(Json(*a), R"({"1":10,"2":null} null {})");
  std::vector<LeafLevels> null_key = {Leaf({0, 1, 0, 0}, {3, 2, 0, 1}, 3, {1}),
                                      Leaf({0, 1, 0, 0}, {3, 2, 0, 1}, 3, {10})};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "NULL keys", AssembleNestedField(schema, 0, null_key, 3, TestPool()));
}

class ParquetTestingNested : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = ::quiver::testing::SharedDataDir() / "parquet-testing" / "data";
    if (!fs::exists(data_ / "nested_lists.snappy.parquet")) GTEST_SKIP() << "no parquet-testing data in " << data_;
  }
  /// Every row of column `column` of `file` as JSON, rows separated by
  /// newlines.
  std::string Column(const std::string& file, const std::string& column) {
    auto table = ReadParquetFile((data_ / file).string(), TestPool());
    if (!table.ok()) return "error: " + table.status().ToString();
    const int c = table->schema->FieldIndex(column);
    if (c < 0) return "no column " + column;
    std::string out;
    for (const auto& b : table->batches) {
      for (int64_t i = 0; i < b->num_rows; ++i) {
        FormatValue(*b->columns[c], i, ValueFormat::kJson, &out);
        out += '\n';
      }
    }
    return out;
  }
  fs::path data_;
};

TEST_F(ParquetTestingNested, ListsOfListsOfLists) {
  EXPECT_EQ(Column("nested_lists.snappy.parquet", "a"),
            "[[[\"a\",\"b\"],[\"c\"]],[null,[\"d\"]]]\n"
            "[[[\"a\",\"b\"],[\"c\",\"d\"]],[null,[\"e\"]]]\n"
            "[[[\"a\",\"b\"],[\"c\",\"d\"],[\"e\"]],[null,[\"f\"]]]\n");
}

TEST_F(ParquetTestingNested, TwoLevelLegacyList) {
  // old_list_structure.parquet: repeated group array { repeated int32 array }.
  EXPECT_EQ(Column("old_list_structure.parquet", "a"), "[[1,2],[3,4]]\n");
}

TEST_F(ParquetTestingNested, RepeatedGroupsWithoutAnnotation) {
  EXPECT_EQ(Column("repeated_no_annotation.parquet", "phoneNumbers"),
            "null\nnull\n{\"phone\":[]}\n{\"phone\":[{\"number\":5555555555,\"kind\":null}]}\n"
            "{\"phone\":[{\"number\":1111111111,\"kind\":\"home\"}]}\n"
            "{\"phone\":[{\"number\":1111111111,\"kind\":\"home\"},{\"number\":2222222222,\"kind\":null},"
            "{\"number\":3333333333,\"kind\":\"mobile\"}]}\n");
}

TEST_F(ParquetTestingNested, MapsOfMaps) {
  const std::string got = Column("nested_maps.snappy.parquet", "a");
  EXPECT_EQ(got.substr(0, got.find('\n', got.find('\n') + 1)),
            "{\"a\":{\"1\":true,\"2\":false}}\n{\"b\":{\"1\":true}}");
}

TEST_F(ParquetTestingNested, DeepImpalaStruct) {
  const std::string got = Column("nullable.impala.parquet", "nested_struct");
  EXPECT_EQ(got.substr(0, got.find('\n')),
            "{\"A\":1,\"b\":[1],\"C\":{\"d\":[[{\"E\":10,\"F\":\"aaa\"},{\"E\":-10,\"F\":\"bbb\"}],[{\"E\":11,"
            "\"F\":\"c\"}]]},\"g\":{\"foo\":{\"H\":{\"i\":[1.1]}}}}");
}

/// A file read as a remote source reads it (every leaf chunk of the fields
/// asked in one ReadRanges call); counts the ranges asked for.
class RemoteFile final : public formats::RandomAccessSource {
 public:
  explicit RemoteFile(std::shared_ptr<formats::LocalFileSource> file) : file_(std::move(file)) {}
  int64_t size() const override { return file_->size(); }
  const std::string& name() const override { return file_->name(); }
  Result<std::shared_ptr<Buffer>> ReadAt(int64_t offset, int64_t length, MemoryPool* pool) override {
    return file_->ReadAt(offset, length, pool);
  }
  Result<std::vector<std::shared_ptr<Buffer>>> ReadRanges(std::span<const formats::ByteRange> ranges,
                                                          MemoryPool* pool) override {
    ranges_asked += static_cast<int64_t>(ranges.size());
    return RandomAccessSource::ReadRanges(ranges, pool);
  }
  bool remote() const override { return true; }
  int64_t ranges_asked = 0;

 private:
  std::shared_ptr<formats::LocalFileSource> file_;
};

TEST_F(ParquetTestingNested, RemoteReadAsksForEveryLeafOfTheProjection) {
  const std::string path = (data_ / "nullable.impala.parquet").string();
  ASSERT_OK_AND_ASSIGN(auto local, formats::LocalFileSource::Open(path));
  auto remote = std::make_shared<RemoteFile>(local);
  ASSERT_OK_AND_ASSIGN(auto reader, FileReader::Open(remote, TestPool()));
  const int id = reader->schema()->FieldIndex("id");
  const int nested = reader->schema()->FieldIndex("nested_struct");
  ASSERT_GE(nested, 0);
  ASSERT_OK_AND_ASSIGN(auto batch, reader->ReadRowGroup(0, {nested, id}, TestPool()));
  ASSERT_OK(ValidateBatch(*batch, ValidationLevel::kFull));
  // Every leaf chunk of nested_struct (A, b's element, E, F, the map's key
  // and i's element) and id's one, each asked for once, in one call.
  EXPECT_EQ(remote->ranges_asked, reader->parquet_schema().num_leaves[nested] + 1);
  EXPECT_EQ(reader->column_chunks_read(), remote->ranges_asked);
  std::string first;
  FormatValue(*batch->columns[0], 0, ValueFormat::kJson, &first);
  EXPECT_EQ(first, Column("nullable.impala.parquet", "nested_struct").substr(0, first.size()));
  std::string ids;
  FormatValue(*batch->columns[1], 6, ValueFormat::kJson, &ids);
  EXPECT_EQ(ids, "7");
}

}  // namespace
}  // namespace quiver::parquet
