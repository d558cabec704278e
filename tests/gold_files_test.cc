// Gold files of the Apache Arrow integration corpus (arrow-testing
// data/arrow-ipc-stream/integration/<version>/generated_<case>.*): for each
// case, the .arrow_file and the .stream read by quiver must equal the
// integration JSON (.json.gz) read by quiver's JSON reader — schema with
// metadata, batch count, every batch — and the JSON's batches written by
// quiver's writer (stream and file; uncompressed, LZ4_FRAME, ZSTD) must read
// back identical. One test case per gold case, named <version>_<case>.
//
// Also: the CLI's `quiver integration --mode VALIDATE` agrees (exit 0 on a
// match, exit 1 naming the difference on a mismatch).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cross_test_support.h"
#include "quiver/integration/json_integration.h"

namespace quiver::cross_test {
namespace {

using integration::JsonIntegrationFile;
using integration::ReadJsonIntegrationFile;

struct GoldCase {
  std::string version;  ///< folder, e.g. "cpp-21.0.0"
  std::string name;     ///< case, e.g. "primitive" (file stem without "generated_")
  fs::path stem;        ///< <folder>/generated_<case>
  fs::path json() const { return stem.string() + ".json.gz"; }
  fs::path arrow_file() const { return stem.string() + ".arrow_file"; }
  fs::path stream() const { return stem.string() + ".stream"; }
};

std::ostream& operator<<(std::ostream& os, const GoldCase& c) { return os << c.version << "/" << c.name; }

/// Every generated_<case>.json.gz under every version folder.
std::vector<GoldCase> ListGoldCases() {
  std::vector<GoldCase> out;
  for (const auto& dir : ListDirs(IntegrationDir())) {
    for (const auto& json :
         ListFiles(dir, [](const fs::path& p) { return EndsWith(p.filename().string(), ".json.gz"); })) {
      std::string file = json.filename().string();
      std::string stem = file.substr(0, file.size() - std::string_view(".json.gz").size());
      GoldCase c;
      c.version = dir.filename().string();
      c.name = stem.rfind("generated_", 0) == 0 ? stem.substr(10) : stem;
      c.stem = dir / stem;
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::string GoldCaseName(const ::testing::TestParamInfo<GoldCase>& info) {
  return TestNameOf(info.param.version + "_" + info.param.name);
}

// ---- known divergences of the gold data itself ----------------------------
//
// 1.0.0-*/generated_map_non_canonical: the JSON and the .arrow_file name the
// map's entries struct and its fields "some_entries" / "some_key" /
// "some_value", but the .stream (written by Arrow C++ 1.0.0) carries the
// canonical names "entries" / "key" / "value". These are internal field
// names, not part of the type (Arrow C++ ARROW-14999; issue 10 item 1), so
// the stream equals the JSON as it is, metadata checked; only under
// CompareOptions::check_internal_names (`--check-internal-names`) does it
// differ, in the map field, and then it equals the JSON with canonical map
// names in everything (values included).
bool StreamHasCanonicalMapNames(const GoldCase& c) {
  return c.name == "map_non_canonical" && (c.version == "1.0.0-littleendian" || c.version == "1.0.0-bigendian");
}

DataTypePtr WithCanonicalMapNames(const DataTypePtr& type);

FieldPtr RenamedField(const FieldPtr& f, const std::string& name) {
  auto copy = std::make_shared<Field>(*f);
  copy->name = name;
  copy->type = WithCanonicalMapNames(f->type);
  return copy;
}

/// `type` with every map's entries / key / value fields renamed to the
/// canonical names, recursively (dictionary value types included).
DataTypePtr WithCanonicalMapNames(const DataTypePtr& type) {
  if (!type) return type;
  auto copy = std::make_shared<DataType>(*type);
  if (type->id == TypeId::kMap && type->children.size() == 1 && type->children[0]->type &&
      type->children[0]->type->children.size() == 2) {
    const FieldPtr& entries = type->children[0];
    auto entries_type = std::make_shared<DataType>(*entries->type);
    entries_type->children = {RenamedField(entries->type->children[0], "key"),
                              RenamedField(entries->type->children[1], "value")};
    auto entries_copy = std::make_shared<Field>(*entries);
    entries_copy->name = "entries";
    entries_copy->type = entries_type;
    copy->children = {entries_copy};
  } else {
    for (auto& child : copy->children) child = RenamedField(child, child->name);
  }
  if (copy->value_type) copy->value_type = WithCanonicalMapNames(copy->value_type);
  return copy;
}

/// `array` (and its children and dictionary) retyped to `type`, which must
/// have the same shape; buffers are shared.
ArrayDataPtr Retyped(const ArrayDataPtr& array, const DataTypePtr& type) {
  auto copy = std::make_shared<ArrayData>(*array);
  copy->type = type;
  for (size_t i = 0; i < copy->children.size() && i < type->children.size(); ++i) {
    copy->children[i] = Retyped(array->children[i], type->children[i]->type);
  }
  if (copy->dictionary && type->value_type) copy->dictionary = Retyped(array->dictionary, type->value_type);
  return copy;
}

JsonIntegrationFile WithCanonicalMapNames(const JsonIntegrationFile& in) {
  auto schema = std::make_shared<Schema>(*in.schema);
  for (auto& f : schema->fields) f = RenamedField(f, f->name);
  JsonIntegrationFile out;
  out.schema = schema;
  for (const auto& b : in.batches) {
    auto batch = std::make_shared<RecordBatch>(*b);
    batch->schema = schema;
    for (size_t k = 0; k < batch->columns.size(); ++k) {
      batch->columns[k] = Retyped(b->columns[k], schema->fields[k]->type);
    }
    out.batches.push_back(batch);
  }
  return out;
}

class GoldFileTest : public ::testing::TestWithParam<GoldCase> {
 protected:
  void SetUp() override { pool_ = MemoryPool::MakeRoot({.name = "gold"}); }
  void TearDown() override {
    // Every batch, reader and JSON table of the test is gone by now.
    EXPECT_EQ(pool_->held_bytes(), 0) << "bytes still charged after the test";
  }
  std::shared_ptr<MemoryPool> pool_;
};

/// JSON vs quiver's reading of the .arrow_file (mapped) and of the .stream
/// (mapped, and read sequentially through OpenStream).
TEST_P(GoldFileTest, ArrowFileAndStreamMatchJson) {
  const GoldCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(JsonIntegrationFile expected, ReadJsonIntegrationFile(c.json().string(), pool_.get()));
  CompareOptions co;  // default float tolerance, like the integration runner
  co.check_metadata = true;

  ipc::ReadOptions ro;
  ro.pool = pool_.get();
  ro.validation = ValidationLevel::kFull;

  {
    SCOPED_TRACE(c.arrow_file().filename().string());
    ASSERT_OK_AND_ASSIGN(IpcTable file, ReadIpcPath(c.arrow_file(), pool_.get()));
    EXPECT_EQ(file.format, ipc::IpcFormat::kFile);
    EXPECT_OK(CompareTables(expected.schema, expected.batches, file, co));
  }
  // What the .stream must equal (see StreamHasCanonicalMapNames).
  const bool canonical_map_names = StreamHasCanonicalMapNames(c);
  auto check_stream = [&](const IpcTable& stream) {
    EXPECT_OK(CompareTables(expected.schema, expected.batches, stream, co));
    if (canonical_map_names) {
      CompareOptions strict = co;
      strict.check_internal_names = true;
      Status diff = CompareTables(expected.schema, expected.batches, stream, strict);
      EXPECT_FALSE(diff.ok()) << "the gold .stream now carries the JSON's map names: drop the known divergence";
      EXPECT_NE(diff.message().find("map_other_names"), std::string::npos) << diff.ToString();
      EXPECT_NE(diff.message().find("internal field names differ"), std::string::npos) << diff.ToString();
      const JsonIntegrationFile canonical = WithCanonicalMapNames(expected);
      EXPECT_OK(CompareTables(canonical.schema, canonical.batches, stream, strict));
    }
  };
  {
    SCOPED_TRACE(c.stream().filename().string() + " (mapped)");
    ASSERT_OK_AND_ASSIGN(IpcTable stream, ReadIpcPath(c.stream(), pool_.get()));
    EXPECT_EQ(stream.format, ipc::IpcFormat::kStream);
    check_stream(stream);
  }
  {
    SCOPED_TRACE(c.stream().filename().string() + " (sequential)");
    ASSERT_OK_AND_ASSIGN(IpcTable stream, ReadIpcSequential(c.stream(), ro));
    check_stream(stream);
  }
}

/// The JSON's batches through quiver's writer (stream and file x none, LZ4,
/// ZSTD) and back through its reader: identical, bit for bit in floats.
TEST_P(GoldFileTest, WriterRoundTripsJsonContent) {
  const GoldCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(JsonIntegrationFile expected, ReadJsonIntegrationFile(c.json().string(), pool_.get()));
  const CompareOptions exact = ExactCompare(/*check_metadata=*/true);
  auto write_pool = pool_->MakeChild({.name = "write"});
  auto read_pool = pool_->MakeChild({.name = "read"});
  ipc::ReadOptions ro;
  ro.pool = read_pool.get();
  ro.validation = ValidationLevel::kFull;

  for (ipc::IpcFormat format : {ipc::IpcFormat::kStream, ipc::IpcFormat::kFile}) {
    for (CompressionType codec : {CompressionType::kNone, CompressionType::kLz4Frame, CompressionType::kZstd}) {
      SCOPED_TRACE(std::string(ipc::IpcFormatName(format)) + "/" + std::string(CodecLabel(codec)));
      ASSERT_OK_AND_ASSIGN(auto bytes, WriteIpc(expected.schema, expected.batches, format, codec, write_pool.get()));
      EXPECT_EQ(write_pool->held_bytes(), 0) << "the writer left bytes charged";
      {
        ASSERT_OK_AND_ASSIGN(IpcTable back, ReadIpc(bytes, ro));
        EXPECT_EQ(back.format, format);
        EXPECT_EQ(back.metadata_version, "V5");
        if (!back.batches.empty()) {
          EXPECT_EQ(back.last_codec, codec);
        }
        EXPECT_OK(CompareTables(expected.schema, expected.batches, back, exact));
        for (size_t i = 0; i < back.batches.size(); ++i) {
          EXPECT_OK(ValidateBatch(*back.batches[i], ValidationLevel::kFull));
        }
      }
      EXPECT_EQ(read_pool->held_bytes(), 0) << "batches read back are gone, their bytes are not";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Integration, GoldFileTest, ::testing::ValuesIn(ListGoldCases()), GoldCaseName);

TEST(GoldFileCorpus, HasEveryVersionFolder) {
  // Guards against a silently empty parameter list (a moved shared folder).
  std::vector<std::string> versions;
  for (const auto& d : ListDirs(IntegrationDir())) versions.push_back(d.filename().string());
  for (const char* v : {"0.14.1", "0.17.1", "1.0.0-bigendian", "1.0.0-littleendian", "2.0.0-compression",
                        "4.0.0-shareddict", "cpp-21.0.0"}) {
    EXPECT_NE(std::find(versions.begin(), versions.end(), v), versions.end()) << v;
  }
  EXPECT_GE(ListGoldCases().size(), 72u);  // the corpus subset holds 72 cases
}

// ---- the CLI ---------------------------------------------------------------

struct CliRun {
  int exit_code = -1;
  std::string stderr_text;
};

CliRun RunValidate(const fs::path& arrow, const fs::path& json, const std::string& extra_args = "") {
  const fs::path err = fs::temp_directory_path() / ("quiver_cross_validate_" + std::to_string(::getpid()) + ".stderr");
  const std::string cmd = ShellQuote(QUIVER_BINARY) + " integration --mode VALIDATE --arrow " +
                          ShellQuote(arrow.string()) + " --json " + ShellQuote(json.string()) + extra_args +
                          " >/dev/null 2>" + ShellQuote(err.string());
  CliRun run;
  const int rc = std::system(cmd.c_str());
  run.exit_code = (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  run.stderr_text = ss.str();
  std::error_code ec;
  fs::remove(err, ec);
  return run;
}

TEST(GoldFileCli, ValidatePassesOnMatchingPairs) {
  const fs::path dir = IntegrationDir();
  const std::vector<std::pair<std::string, std::string>> cases = {{"cpp-21.0.0", "primitive"},
                                                                  {"2.0.0-compression", "lz4"},
                                                                  {"1.0.0-bigendian", "dictionary"},
                                                                  {"0.14.1", "datetime"},
                                                                  {"4.0.0-shareddict", "shared_dict"}};
  for (const auto& [version, name] : cases) {
    const fs::path stem = dir / version / ("generated_" + name);
    for (const char* ext : {".stream", ".arrow_file"}) {
      const fs::path arrow = stem.string() + ext;
      CliRun run = RunValidate(arrow, stem.string() + ".json.gz");
      EXPECT_EQ(run.exit_code, 0) << arrow << ": " << run.stderr_text;
    }
  }
}

TEST(GoldFileCli, ValidateFailsOnMismatchingJson) {
  const fs::path dir = IntegrationDir() / "cpp-21.0.0";
  // Same schema, different content: the first differing batch is named.
  CliRun run = RunValidate(dir / "generated_primitive.stream", dir / "generated_primitive_zerolength.json.gz");
  EXPECT_EQ(run.exit_code, 1) << run.stderr_text;
  EXPECT_NE(run.stderr_text.find("differs"), std::string::npos) << run.stderr_text;
  // Different schema.
  run = RunValidate(dir / "generated_primitive.stream", dir / "generated_datetime.json.gz");
  EXPECT_EQ(run.exit_code, 1) << run.stderr_text;
  EXPECT_NE(run.stderr_text.find("schema"), std::string::npos) << run.stderr_text;
  // A file against another case's JSON.
  run = RunValidate(dir / "generated_decimal.arrow_file", dir / "generated_decimal256.json.gz");
  EXPECT_EQ(run.exit_code, 1) << run.stderr_text;
}

// Issue 10 item 1: the 1.0.0 map_non_canonical cases validate as they are
// (the stream's canonical map names are internal field names), and the
// strict option still reports the difference, naming the field.
TEST(GoldFileCli, ValidateIgnoresInternalNamesUnlessStrict) {
  for (const char* version : {"1.0.0-littleendian", "1.0.0-bigendian"}) {
    const fs::path stem = IntegrationDir() / version / "generated_map_non_canonical";
    for (const char* ext : {".stream", ".arrow_file"}) {
      CliRun run = RunValidate(stem.string() + ext, stem.string() + ".json.gz");
      EXPECT_EQ(run.exit_code, 0) << version << ext << ": " << run.stderr_text;
      EXPECT_NE(run.stderr_text.find("matches"), std::string::npos) << run.stderr_text;
    }
    CliRun strict = RunValidate(stem.string() + ".stream", stem.string() + ".json.gz", " --check-internal-names");
    EXPECT_EQ(strict.exit_code, 1) << version << ": " << strict.stderr_text;
    EXPECT_NE(strict.stderr_text.find("'map_other_names': type mismatch"), std::string::npos) << strict.stderr_text;
    EXPECT_NE(strict.stderr_text.find("internal field names differ"), std::string::npos) << strict.stderr_text;
    // The .arrow_file keeps the JSON's own names: equal even when strict.
    strict = RunValidate(stem.string() + ".arrow_file", stem.string() + ".json.gz", " --check-internal-names");
    EXPECT_EQ(strict.exit_code, 0) << version << ": " << strict.stderr_text;
  }
}

}  // namespace
}  // namespace quiver::cross_test
