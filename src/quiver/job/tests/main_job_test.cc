// Tests for quiver/job/main_job.h: the main job at a small scale (both
// joins verified, the report's sections, the memory table's stages, every
// byte released), and the memory table's layout.
#include "quiver/job/main_job.h"

#include <gtest/gtest.h>
#include <stdio.h>

#include <cstdlib>
#include <string>

#include "quiver/testing/status_assertions.h"

namespace quiver::job {
namespace {

// Runs the job with `options`, returning the report in *report.
Result<MainJobResult> RunJob(const MainJobOptions& options, const std::shared_ptr<MemoryPool>& root,
                             std::string* report) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  if (!f) return Status::IOError("open_memstream failed");
  auto r = RunMainJob(options, root, f);
  std::fclose(f);
  report->assign(data, size);
  std::free(data);
  return r;
}

TEST(MainJobTest, SmallScaleVerifiesTheJoinAndTpchQueries) {
  auto root = MemoryPool::MakeRoot({.name = "quiver"});
  MainJobOptions o;
  o.scale = 0.01;
  o.rows_shown = 2;
  std::string report;
  ASSERT_OK_AND_ASSIGN(const MainJobResult r, RunJob(o, root, &report));
  ASSERT_EQ(r.queries.size(), 4u);  // the join, TPC-H Q3, Q5, Q18
  for (const auto& q : r.queries) {
    EXPECT_TRUE(q.verified) << q.label;
    EXPECT_GT(q.rows, 0) << q.label;
    EXPECT_EQ(q.rows, q.local_rows) << q.label;
    EXPECT_EQ(q.checksum, q.local_checksum) << q.label;
    if (&q == &r.queries[0]) EXPECT_GE(q.chunks, 2) << q.label << ": 512 KiB chunks, several per result";
    EXPECT_EQ(q.first_rows.size(), std::min<size_t>(2, static_cast<size_t>(q.rows))) << q.label;
  }
  // generate, then 11 stages per query (build, probe, scan, aggregate, sort,
  // statement, compress, serve, download, decompress, decode).
  ASSERT_EQ(r.stages.size(), 45u);
  EXPECT_EQ(r.stages[0].stage, "generate");
  EXPECT_EQ(r.stages[1].stage, "(a) build relation");
  EXPECT_EQ(r.stages[15].stage, "(b) aggregate");
  EXPECT_NE(r.stages[15].peak, "-") << "TPC-H Q3's aggregation was seen allocating";
  EXPECT_EQ(r.stages[16].stage, "(b) sort");
  EXPECT_EQ(r.stages[44].stage, "(d) decode");
  EXPECT_NE(r.stages[1].peak, "-") << "the build side was seen allocating";

  EXPECT_EQ(report.rfind("== TPC-H scale 0.01: 8 tables, ", 0), 0u) << report;
  EXPECT_NE(report.find("\n== server: https://127.0.0.1:"), std::string::npos);
  EXPECT_NE(report.find("\n== (a) orders JOIN lineitem"), std::string::npos);
  EXPECT_NE(report.find(": verified\n\n== (b) TPC-H Q3"), std::string::npos);
  EXPECT_NE(report.find("\n== (d) TPC-H Q18"), std::string::npos);
  EXPECT_NE(report.find("\n  stage "), std::string::npos);
  EXPECT_NE(report.find("\nall results verified in "), std::string::npos);
  EXPECT_EQ(report.find("MISMATCH"), std::string::npos);
  EXPECT_EQ(root->held_bytes(), 0) << "everything released once the job returns";
}

TEST(MainJobTest, OffHeapRelationsToo) {
  auto root = MemoryPool::MakeRoot({.name = "quiver"});
  MainJobOptions o;
  o.scale = 0.01;
  o.memory_mode = join::MemoryMode::kOffHeap;
  std::string report;
  ASSERT_OK_AND_ASSIGN(const MainJobResult r, RunJob(o, root, &report));
  for (const auto& q : r.queries) EXPECT_TRUE(q.verified) << q.label;
  EXPECT_EQ(r.stages[1].detail, "hashed build side (off-heap): mapped pages, charged with Reserve");
}

TEST(MainJobTest, StageTableLayout) {
  std::vector<MainJobStage> stages = {
      {"generate", "generate", "0 B", "1.0 KiB", "8 IPC files", 2048, -1},
      {"(a) probe", "serve/exec", "-", "12 B", "", 1 << 20, 1 << 20},
  };
  EXPECT_EQ(FormatStageTable(stages),
            "  stage     | pool       | held | peak    | RSS      | HWM      | detail\n"
            "  ----------+------------+------+---------+----------+----------+-------\n"
            "  generate  | generate   | 0 B  | 1.0 KiB | 2.0 KiB  | -        | 8 IPC files\n"
            "  (a) probe | serve/exec | -    | 12 B    | 1.00 MiB | 1.00 MiB |\n");
}

}  // namespace
}  // namespace quiver::job
