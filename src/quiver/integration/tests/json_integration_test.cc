// Tests for quiver/integration/json_integration.h: every arrow-testing gold JSON
// parses and round-trips (read -> write -> read -> CompareBatches), hand
// written documents decode to the expected values, malformed input gives a
// clean Invalid.
#include "quiver/integration/json_integration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "quiver/columnar/compare.h"
#include "quiver/columnar/validate.h"
#include "quiver/columnar/value_format.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::integration {
namespace {

namespace fs = std::filesystem;

const std::string kIntegrationDir =
    (::quiver::testing::SharedDataDir() / "arrow-testing/data/arrow-ipc-stream/integration").string();

std::vector<std::string> GoldJsonFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(kIntegrationDir, ec)) return files;
  for (const auto& dir : fs::directory_iterator(kIntegrationDir, ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
      const std::string name = f.path().filename().string();
      if (name.size() > 8 && name.compare(name.size() - 8, 8, ".json.gz") == 0) {
        files.push_back(fs::relative(f.path(), kIntegrationDir).string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

class GoldJsonTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_P(GoldJsonTest, ParsesAndRoundTrips) {
  const std::string path = std::string(kIntegrationDir) + "/" + GetParam();
  auto read = ReadJsonIntegrationFile(path, pool_.get());
  ASSERT_OK(read);
  const JsonIntegrationFile& file = *read;
  ASSERT_NE(file.schema, nullptr);
  for (const auto& b : file.batches) {
    ASSERT_OK(ValidateBatch(*b, ValidationLevel::kFull));
    // Every value formats (exercises every type in the gold files).
    std::string text;
    for (const auto& col : b->columns) {
      for (int64_t i = 0; i < col->length; ++i) {
        FormatValue(*col, i, ValueFormat::kText, &text);
        FormatValue(*col, i, ValueFormat::kJson, &text);
      }
    }
  }

  auto written = WriteJsonIntegration(*file.schema, file.batches);
  ASSERT_OK(written);
  auto again = ReadJsonIntegration(*written, pool_.get());
  ASSERT_OK(again);
  CompareOptions opts;
  opts.check_metadata = true;
  ASSERT_OK(CompareSchemas(*file.schema, *again->schema, opts));
  ASSERT_EQ(file.batches.size(), again->batches.size());
  for (size_t k = 0; k < file.batches.size(); ++k) {
    Status st = CompareBatches(*file.batches[k], *again->batches[k], opts);
    ASSERT_OK(st) << "batch " << k;
  }
  // Dictionary ids survive.
  for (size_t k = 0; k < file.schema->fields.size(); ++k) {
    EXPECT_EQ(file.schema->fields[k]->dictionary_id, again->schema->fields[k]->dictionary_id);
  }
}

INSTANTIATE_TEST_SUITE_P(Gold, GoldJsonTest, ::testing::ValuesIn(GoldJsonFiles()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldJsonTest);

TEST(GoldJsonListing, FindsTheGoldFiles) { EXPECT_GE(GoldJsonFiles().size(), 40u) << kIntegrationDir; }

class JsonIntegrationTest : public ::testing::Test {
 protected:
  Result<JsonIntegrationFile> Read(const std::string& text) { return ReadJsonIntegration(text, pool_.get()); }
  std::string Value(const JsonIntegrationFile& f, int col, int64_t row, int batch = 0) {
    return FormatValueToString(*f.batches[batch]->columns[col], row, ValueFormat::kText);
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

// A document with one column of `type_json` and column body `column_json`.
std::string Doc(const std::string& type_json, const std::string& column_json, int64_t count,
                const std::string& extra_field = "", const std::string& dictionaries = "") {
  return R"({"schema":{"fields":[{"name":"c","nullable":true,"type":)" + type_json + R"(,"children":[])" + extra_field +
         R"(}]},"batches":[{"count":)" + std::to_string(count) + R"(,"columns":[{"name":"c","count":)" +
         std::to_string(count) + column_json + "}]}]" + dictionaries + "}";
}

TEST_F(JsonIntegrationTest, PrimitiveValues) {
  auto f = Read(Doc(R"({"name":"int","bitWidth":64,"isSigned":true})",
                    R"(,"VALIDITY":[1,0,1],"DATA":["-9223372036854775808","0","42"])", 3));
  ASSERT_OK(f);
  EXPECT_EQ(Value(*f, 0, 0), "-9223372036854775808");
  EXPECT_EQ(Value(*f, 0, 1), "null");
  EXPECT_EQ(Value(*f, 0, 2), "42");
  EXPECT_EQ(f->batches[0]->columns[0]->null_count, 1);
}

TEST_F(JsonIntegrationTest, DecimalsAndHalfFloats) {
  auto f = Read(Doc(R"({"name":"decimal","precision":10,"scale":2,"bitWidth":256})",
                    R"(,"VALIDITY":[1,1],"DATA":["-12345","5"])", 2));
  ASSERT_OK(f);
  EXPECT_EQ(Value(*f, 0, 0), "-123.45");
  EXPECT_EQ(Value(*f, 0, 1), "0.05");
  auto h = Read(Doc(R"({"name":"floatingpoint","precision":"HALF"})", R"(,"VALIDITY":[1,1],"DATA":[15360, 49152])", 2));
  ASSERT_OK(h);
  EXPECT_EQ(Value(*h, 0, 0), "1");
  EXPECT_EQ(Value(*h, 0, 1), "-2");
  auto big = Read(Doc(R"({"name":"decimal","precision":3,"scale":0,"bitWidth":32})",
                      R"(,"VALIDITY":[1],"DATA":["2147483648"])", 1));
  EXPECT_TRUE(big.status().IsInvalid()) << big.status().ToString();
  auto min32 = Read(Doc(R"({"name":"decimal","precision":3,"scale":0,"bitWidth":32})",
                        R"(,"VALIDITY":[1],"DATA":["-2147483648"])", 1));
  EXPECT_OK(min32);
}

TEST_F(JsonIntegrationTest, BinaryViewsBuildRealViews) {
  auto f = Read(Doc(R"({"name":"binaryview"})",
                    R"(,"VALIDITY":[1,1,0],"VIEWS":[{"SIZE":2,"INLINED":"F34D"},)"
                    R"({"SIZE":13,"PREFIX_HEX":"00010203","BUFFER_INDEX":0,"OFFSET":1},{"SIZE":0,"INLINED":""}],)"
                    R"("VARIADIC_DATA_BUFFERS":["FF000102030405060708090A0B0C"])",
                    3));
  ASSERT_OK(f);
  EXPECT_EQ(Value(*f, 0, 0), "F34D");
  EXPECT_EQ(Value(*f, 0, 1), "000102030405060708090A0B0C");
  EXPECT_EQ(Value(*f, 0, 2), "null");
  const ArrayData& a = *f->batches[0]->columns[0];
  ASSERT_EQ(a.buffers.size(), 3u);
  EXPECT_EQ(a.buffers[1]->size(), 48);
}

TEST_F(JsonIntegrationTest, NestedDictionariesResolved) {
  // list<utf8 dict id 0> dict-encoded with id 1.
  const std::string schema =
      R"({"schema":{"fields":[{"name":"ld","nullable":true,"type":{"name":"list"},"children":[)"
      R"({"name":"s","nullable":true,"type":{"name":"utf8"},"children":[],)"
      R"("dictionary":{"id":0,"indexType":{"name":"int","isSigned":true,"bitWidth":8},"isOrdered":false}}],)"
      R"("dictionary":{"id":1,"indexType":{"name":"int","isSigned":false,"bitWidth":16},"isOrdered":false}}]},)";
  const std::string dicts =
      R"("dictionaries":[{"id":1,"data":{"count":2,"columns":[{"name":"D1","count":2,"VALIDITY":[1,1],)"
      R"("OFFSET":[0,2,3],"children":[{"name":"s","count":3,"VALIDITY":[1,1,1],"DATA":[1,0,1]}]}]}},)"
      R"({"id":0,"data":{"count":2,"columns":[{"name":"D0","count":2,"VALIDITY":[1,1],"OFFSET":[0,1,3],"DATA":["a","bc"]}]}}],)";
  const std::string batches =
      R"("batches":[{"count":3,"columns":[{"name":"ld","count":3,"VALIDITY":[1,0,1],"DATA":[1,0,0]}]}]})";
  auto f = Read(schema + dicts + batches);
  ASSERT_OK(f);
  EXPECT_EQ(Value(*f, 0, 0), "[bc]");  // index 1 -> dict1[1] = [s=1] -> "bc"
  EXPECT_EQ(Value(*f, 0, 1), "null");
  EXPECT_EQ(Value(*f, 0, 2), "[bc, a]");
  EXPECT_EQ(f->schema->fields[0]->dictionary_id, 1);
  EXPECT_EQ(f->schema->fields[0]->type->id, TypeId::kDictionary);
  EXPECT_EQ(f->schema->fields[0]->type->index_type->id, TypeId::kUInt16);

  auto text = WriteJsonIntegration(*f->schema, f->batches);
  ASSERT_OK(text);
  EXPECT_NE(text->find("\"dictionaries\""), std::string::npos);
  auto again = Read(*text);
  ASSERT_OK(again) << "\n" << *text;
  EXPECT_OK(CompareBatches(*f->batches[0], *again->batches[0], {}));
}

TEST_F(JsonIntegrationTest, WriterHandlesSlices) {
  const std::string doc =
      R"({"schema":{"fields":[{"name":"l","nullable":true,"type":{"name":"list"},"children":[)"
      R"({"name":"item","nullable":true,"type":{"name":"utf8"},"children":[]}]}]},)"
      R"("batches":[{"count":4,"columns":[{"name":"l","count":4,"VALIDITY":[1,1,0,1],"OFFSET":[0,2,3,3,5],)"
      R"("children":[{"name":"item","count":5,"VALIDITY":[1,1,1,0,1],"OFFSET":[0,1,2,3,3,4],)"
      R"("DATA":["a","b","c","","e"]}]}]}]})";
  auto g = Read(doc);
  ASSERT_OK(g);
  auto sliced = SliceBatch(g->batches[0], 1, 3);
  ASSERT_OK(sliced);
  auto text = WriteJsonIntegration(*g->schema, {*sliced});
  ASSERT_OK(text);
  auto again = Read(*text);
  ASSERT_OK(again) << "\n" << *text;
  EXPECT_OK(CompareBatches(**sliced, *again->batches[0], {}));
  EXPECT_EQ(Value(*again, 0, 0), "[c]");
  EXPECT_EQ(Value(*again, 0, 2), "[null, e]");
}

TEST_F(JsonIntegrationTest, MalformedInputIsInvalid) {
  const std::string int32_type = R"({"name":"int","bitWidth":32,"isSigned":true})";
  const std::vector<std::string> bad = {
      "",
      "{",
      "[]",
      "{}",
      R"({"schema":[]})",
      R"({"schema":{"fields":[{"name":"c"}]}})",
      R"({"schema":{"fields":[]},"batches":[{"count":-1,"columns":[]}]})",
      R"({"schema":{"fields":[]},"batches":[{"count":1,"columns":[{"name":"x","count":1}]}]})",
      Doc(int32_type, R"(,"VALIDITY":[1,1],"DATA":[1])", 2),             // DATA short
      Doc(int32_type, R"(,"VALIDITY":[1],"DATA":[1,2])", 2),             // VALIDITY short
      Doc(int32_type, R"(,"VALIDITY":[1,2],"DATA":[1,2])", 2),           // validity not 0/1
      Doc(int32_type, R"(,"VALIDITY":[1,1],"DATA":[1,"x"])", 2),         // not an int
      Doc(int32_type, R"(,"VALIDITY":[1,1],"DATA":[1,4294967296])", 2),  // out of range
      Doc(R"({"name":"int","bitWidth":8,"isSigned":true})", R"(,"VALIDITY":[1],"DATA":[300])", 1),
      Doc(R"({"name":"int","bitWidth":12,"isSigned":true})", R"(,"VALIDITY":[1],"DATA":[3])", 1),
      Doc(R"({"name":"binary"})", R"(,"VALIDITY":[1],"OFFSET":[0,1],"DATA":["ABC"])", 1),
      Doc(R"({"name":"binary"})", R"(,"VALIDITY":[1],"OFFSET":[0,2],"DATA":["AB"])", 1),
      Doc(R"({"name":"binary"})", R"(,"VALIDITY":[1],"OFFSET":[0,1],"DATA":["ZZ"])", 1),
      Doc(R"({"name":"utf8"})", R"(,"VALIDITY":[1],"OFFSET":[0],"DATA":["a"])", 1),
      Doc(R"({"name":"fixedsizebinary","byteWidth":2})", R"(,"VALIDITY":[1],"DATA":["AB"])", 1),
      Doc(R"({"name":"utf8view"})",
          R"(,"VALIDITY":[1],"VIEWS":[{"SIZE":20,"PREFIX_HEX":"00000000","BUFFER_INDEX":3,"OFFSET":0}],"VARIADIC_DATA_BUFFERS":[])",
          1),
      Doc(R"({"name":"utf8view"})", R"(,"VALIDITY":[1],"VIEWS":[{"SIZE":3,"INLINED":"ab"}],"VARIADIC_DATA_BUFFERS":[])",
          1),
      Doc(R"({"name":"decimal","precision":3,"scale":0,"bitWidth":100})", R"(,"VALIDITY":[1],"DATA":["1"])", 1),
      Doc(R"({"name":"decimal","precision":3,"scale":0})", R"(,"VALIDITY":[1],"DATA":["1.5"])", 1),
      Doc(R"({"name":"timestamp","unit":"FORTNIGHT"})", R"(,"VALIDITY":[1],"DATA":["1"])", 1),
      Doc(R"({"name":"interval","unit":"DAY_TIME"})", R"(,"VALIDITY":[1],"DATA":[{"days":1}])", 1),
      Doc(R"({"name":"list"})", R"(,"VALIDITY":[1],"OFFSET":[0,1])", 1),  // list needs a child
      // Offsets past the child: caught by full validation.
      R"({"schema":{"fields":[{"name":"l","nullable":true,"type":{"name":"list"},"children":[)"
      R"({"name":"item","nullable":true,"type":{"name":"int","bitWidth":8,"isSigned":true},"children":[]}]}]},)"
      R"("batches":[{"count":1,"columns":[{"name":"l","count":1,"VALIDITY":[1],"OFFSET":[0,5],)"
      R"("children":[{"name":"item","count":1,"VALIDITY":[1],"DATA":[1]}]}]}]})",
      // Dictionary id without a dictionary.
      Doc(R"({"name":"utf8"})", R"(,"VALIDITY":[1],"DATA":[0])", 1,
          R"(,"dictionary":{"id":7,"indexType":{"name":"int","isSigned":true,"bitWidth":8},"isOrdered":false})"),
      // Index out of the dictionary's range.
      Doc(R"({"name":"utf8"})", R"(,"VALIDITY":[1],"DATA":[3])", 1,
          R"(,"dictionary":{"id":0,"indexType":{"name":"int","isSigned":true,"bitWidth":8},"isOrdered":false})",
          R"(,"dictionaries":[{"id":0,"data":{"count":1,"columns":[{"name":"d","count":1,"VALIDITY":[1],"OFFSET":[0,1],"DATA":["x"]}]}}])"),
      // Union type id not declared.
      R"({"schema":{"fields":[{"name":"u","nullable":true,"type":{"name":"union","mode":"SPARSE","typeIds":[1]},)"
      R"("children":[{"name":"i","nullable":true,"type":{"name":"int","bitWidth":8,"isSigned":true},"children":[]}]}]},)"
      R"("batches":[{"count":1,"columns":[{"name":"u","count":1,"TYPE_ID":[2],)"
      R"("children":[{"name":"i","count":1,"VALIDITY":[1],"DATA":[1]}]}]}]})",
  };
  for (size_t k = 0; k < bad.size(); ++k) {
    auto r = Read(bad[k]);
    EXPECT_FALSE(r.ok()) << "case " << k << " parsed: " << bad[k];
    if (!r.ok()) {
      EXPECT_TRUE(r.status().IsInvalid()) << "case " << k << ": " << r.status().ToString();
    }
  }
  auto unknown = Read(Doc(R"({"name":"quaternion"})", R"(,"VALIDITY":[1],"DATA":[1])", 1));
  EXPECT_TRUE(unknown.status().IsNotImplemented()) << unknown.status().ToString();
}

// Issue 10 item 5: OFFSET entries are input; their difference is computed
// checked. [-1, INT64_MAX] used to overflow in "o1 - o0" (undefined
// behaviour; UBSan aborts here in the debug-asan and fuzz builds).
TEST_F(JsonIntegrationTest, HostileOffsetsAreACleanError) {
  for (const char* offsets : {R"("OFFSET":[-1,"9223372036854775807"])", R"("OFFSET":["9223372036854775807",-2])",
                              R"("OFFSET":["-9223372036854775808",1])"}) {
    SCOPED_TRACE(offsets);
    for (const char* type : {R"({"name":"utf8"})", R"({"name":"largeutf8"})"}) {
      auto f = Read(Doc(type, std::string(R"(,"VALIDITY":[1],)") + offsets + R"(,"DATA":["a"])", 1));
      ASSERT_RAISES(Invalid, f);
      EXPECT_NE(f.status().message().find("DATA[0] has 1 bytes, OFFSET says"), std::string::npos)
          << f.status().ToString();
    }
  }
}

TEST_F(JsonIntegrationTest, DeepNestingIsRejectedWithoutCrashing) {
  // A deeply nested value where an integer is expected.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = Read(Doc(R"({"name":"int","bitWidth":32,"isSigned":true})", R"(,"VALIDITY":[1],"DATA":[)" + deep + "]", 1));
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  // Fields nested beyond kJsonIntegrationMaxDepth.
  std::string field = R"({"name":"leaf","nullable":true,"type":{"name":"null"},"children":[]})";
  for (int k = 0; k < kJsonIntegrationMaxDepth + 5; ++k) {
    field = R"({"name":"s","nullable":true,"type":{"name":"struct"},"children":[)" + field + "]}";
  }
  auto d = Read(R"({"schema":{"fields":[)" + field + R"(]},"batches":[]})");
  EXPECT_TRUE(d.status().IsInvalid()) << d.status().ToString();
}

TEST_F(JsonIntegrationTest, ErrorsNameTheLocation) {
  auto r = Read(Doc(R"({"name":"int","bitWidth":32,"isSigned":true})", R"(,"VALIDITY":[1,1],"DATA":[1])", 2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("batches[0].columns[0](c)"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("DATA"), std::string::npos) << r.status().ToString();
}

TEST_F(JsonIntegrationTest, TruncatedGoldDocumentsFailCleanly) {
  const auto files = GoldJsonFiles();
  if (files.empty()) GTEST_SKIP() << "no gold files";
  // Take a small gold document, write it back as text, then cut it at many
  // places and flip characters: every result is an error or a valid file.
  auto f = ReadJsonIntegrationFile(std::string(kIntegrationDir) + "/cpp-21.0.0/generated_union.json.gz", pool_.get());
  ASSERT_OK(f);
  auto text = WriteJsonIntegration(*f->schema, f->batches);
  ASSERT_OK(text);
  const std::string& doc = *text;
  for (size_t cut = 0; cut < doc.size(); cut += std::max<size_t>(1, doc.size() / 300)) {
    auto r = Read(doc.substr(0, cut));
    EXPECT_FALSE(r.ok());
  }
  const char replacements[] = {'0', '9', '-', '"', '[', '}', 'x'};
  for (size_t pos = 0; pos < doc.size(); pos += std::max<size_t>(1, doc.size() / 500)) {
    for (char c : replacements) {
      std::string mutated = doc;
      mutated[pos] = c;
      auto r = Read(mutated);
      if (r.ok()) {
        for (const auto& b : r->batches) {
          EXPECT_OK(ValidateBatch(*b, ValidationLevel::kFull));
        }
      }
    }
  }
}

TEST_F(JsonIntegrationTest, MissingFileIsIOErrorNamingPath) {
  auto r = ReadJsonIntegrationFile("/nonexistent/dir/x.json.gz", pool_.get());
  ASSERT_TRUE(r.status().IsIOError()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("/nonexistent/dir/x.json.gz"), std::string::npos);
}

TEST_F(JsonIntegrationTest, BuffersComeFromThePool) {
  auto pool = MemoryPool::MakeRoot();
  {
    auto f = ReadJsonIntegration(
        Doc(R"({"name":"utf8"})", R"(,"VALIDITY":[1,0],"OFFSET":[0,3,3],"DATA":["abc",""])", 2), pool.get());
    ASSERT_OK(f);
    EXPECT_GT(pool->held_bytes(), 0);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::integration
