// Tests for quiver/job/file_join.h: a join of two IPC files (inner, left,
// off-heap), its output file and report, the key spec errors, and that a
// refused or failed run writes nothing.
#include "quiver/job/file_join.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::job {
namespace {

using quiver::testing::Int64Array;
using quiver::testing::RenderValue;
using quiver::testing::StringArray;

class FileJoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("quiver-file-join-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    // build: id 1..4 with a name; probe: key 0..5 with 3 twice and a null.
    Write("build.arrow", {field("id", int64()), field("name", utf8())},
          {Int64Array(pool_.get(), {1, 2, 3, 4}), StringArray(pool_.get(), {"a", "b", "c", "d"})});
    Write("probe.arrows", {field("key", int64()), field("qty", int64())},
          {Int64Array(pool_.get(), {0, 3, 3, 5, std::nullopt, 1}), Int64Array(pool_.get(), {10, 11, 12, 13, 14, 15})});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, std::vector<FieldPtr> fields, std::vector<ArrayDataPtr> columns) {
    auto schema = std::make_shared<Schema>();
    schema->fields = std::move(fields);
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema;
    batch->num_rows = columns[0]->length;
    batch->columns = std::move(columns);
    ASSERT_OK_AND_ASSIGN(auto sink, ipc::OpenOutputFile(Path(name)));
    ipc::WriteOptions wo;
    wo.pool = pool_.get();
    const auto format = name.ends_with(".arrow") ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream;
    ASSERT_OK_AND_ASSIGN(auto writer, ipc::RecordBatchWriter::Make(sink.get(), schema, format, wo));
    ASSERT_OK(writer->WriteBatch(*batch));
    ASSERT_OK(writer->Close());
    ASSERT_OK(sink->Commit());
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  FileJoinOptions Options(const std::string& out) const {
    FileJoinOptions o;
    o.build_path = Path("build.arrow");
    o.probe_path = Path("probe.arrows");
    o.on = "id=key";
    o.output_path = Path(out);
    return o;
  }

  // The output rows as "v|v|..." sorted.
  std::vector<std::string> Rows(const std::string& name) {
    ipc::ReadOptions ro;
    ro.pool = pool_.get();
    auto reader = ipc::RecordBatchReader::OpenPath(Path(name), ro);
    EXPECT_OK(reader);
    std::vector<std::string> rows;
    if (!reader.ok()) return rows;
    while (true) {
      auto next = (*reader)->Next();
      EXPECT_OK(next);
      if (!next.ok() || !*next) break;
      for (int64_t r = 0; r < (*next)->num_rows; ++r) {
        std::string row;
        for (const auto& c : (*next)->columns) {
          if (!row.empty()) row += '|';
          row += RenderValue(*c, r);
        }
        rows.push_back(row);
      }
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({.name = "test"});
  std::shared_ptr<MemoryPool> root_ = MemoryPool::MakeRoot({.name = "job"});
  std::filesystem::path dir_;
};

TEST_F(FileJoinTest, InnerJoinWritesTheMatchesAndReportsThem) {
  FileJoinOptions o = Options("inner.arrows");
  o.compression = "zstd";
  ASSERT_OK_AND_ASSIGN(const FileJoinResult r, RunFileJoin(o, root_));
  // Output: probe columns, then build columns (the probe is the left input).
  EXPECT_EQ(Rows("inner.arrows"), (std::vector<std::string>{"1|15|1|a", "3|11|3|c", "3|12|3|c"}));
  EXPECT_EQ(r.type, "inner");
  EXPECT_EQ(r.memory_mode, "on-heap");
  EXPECT_EQ(r.build_rows, 4);
  EXPECT_EQ(r.num_keys, 4);
  EXPECT_EQ(r.index_mode, "dense");  // keys 1..4
  EXPECT_EQ(r.probe_rows, 6);
  EXPECT_EQ(r.output_rows, 3);
  EXPECT_GT(r.join_peak_bytes, 0);
  EXPECT_EQ(r.join_held_bytes, 0);
  EXPECT_EQ(root_->held_bytes(), 0);
  const std::string report = FormatFileJoinReport(r);
  EXPECT_EQ(report.rfind("join inner: 4 build rows (4 keys, dense index ", 0), 0u) << report;
  EXPECT_NE(report.find("), 6 probe rows -> 3 rows; build "), std::string::npos) << report;
  EXPECT_NE(report.find("\nmemory (on-heap): relation "), std::string::npos) << report;
  EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 2);
}

TEST_F(FileJoinTest, LeftJoinOffHeapAsAFile) {
  FileJoinOptions o = Options("left.arrow");
  o.type = "left";
  o.memory_mode = "off-heap";
  o.file_format = true;
  ASSERT_OK_AND_ASSIGN(const FileJoinResult r, RunFileJoin(o, root_));
  EXPECT_EQ(Rows("left.arrow"), (std::vector<std::string>{"0|10|null|null", "1|15|1|a", "3|11|3|c", "3|12|3|c",
                                                          "5|13|null|null", "null|14|null|null"}));
  EXPECT_EQ(r.memory_mode, "off-heap");
  EXPECT_EQ(r.output_rows, 6);
  EXPECT_GT(r.peak_mapped_bytes, 0);
}

TEST_F(FileJoinTest, KeySpecErrorsNameTheColumnAndTheFile) {
  Schema build, probe;
  build.fields = {field("id", int64()), field("name", utf8())};
  probe.fields = {field("key", int64())};
  std::vector<int> bk, pk;
  ASSERT_OK(ResolveJoinKeys("name=key, id = key ", build, "b.arrow", probe, "p.arrow", &bk, &pk));
  EXPECT_EQ(bk, (std::vector<int>{1, 0}));
  EXPECT_EQ(pk, (std::vector<int>{0, 0}));
  for (const char* bad : {"", " ", "id", "=key", "id=", " = ", "id=key,", ",id=key", "id=key,,id=key", "id=key=x"}) {
    bk.clear();
    pk.clear();
    EXPECT_TRUE(ResolveJoinKeys(bad, build, "b.arrow", probe, "p.arrow", &bk, &pk).IsInvalid()) << bad;
  }
  ASSERT_RAISES_WITH_MESSAGE(KeyError, "build column 'nope' is not in b.arrow (columns: id, name)",
                             ResolveJoinKeys("nope=key", build, "b.arrow", probe, "p.arrow", &bk, &pk));
  ASSERT_RAISES_WITH_MESSAGE(KeyError, "probe column 'k' is not in p.arrow (columns: key)",
                             ResolveJoinKeys("id=k", build, "b.arrow", probe, "p.arrow", &bk, &pk));
}

TEST_F(FileJoinTest, RefusedOrFailedRunsWriteNothing) {
  FileJoinOptions o = Options("never.arrows");
  o.type = "sideways";
  EXPECT_TRUE(RunFileJoin(o, root_).status().IsInvalid());
  o = Options("never.arrows");
  o.compression = "gzip";
  EXPECT_FALSE(RunFileJoin(o, root_).ok());
  o = Options("never.arrows");
  o.build_path = o.probe_path = "-";
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "--build and --probe cannot both be stdin", RunFileJoin(o, root_));
  o = Options("never.arrows");
  o.build_path = Path("missing.arrow");
  const Status missing = RunFileJoin(o, root_).status();
  EXPECT_NE(missing.message().find("--build " + Path("missing.arrow")), std::string::npos) << missing.ToString();
  o = Options("never.arrows");
  o.memory_limit_bytes = 64;  // the relation cannot fit
  EXPECT_TRUE(RunFileJoin(o, root_).status().IsOutOfMemory());
  EXPECT_FALSE(std::filesystem::exists(Path("never.arrows")));
  EXPECT_EQ(root_->held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::job
