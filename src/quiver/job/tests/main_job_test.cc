// Tests for quiver/job/main_job.h: the main job at a small scale (every
// result matches the in-process engine, the report's sections in order, the
// client runs of (a), only stages that moved in the memory table, every byte
// released), and the report's layouts (memory table, aligned rows, client
// runs, headline).
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

TEST(MainJobTest, SmallScaleMatchesTheInProcessEngine) {
  auto root = MemoryPool::MakeRoot({.name = "quiver"});
  MainJobOptions o;
  o.scale = 0.01;
  o.rows_shown = 2;
  o.window_bytes = 4 << 20;  // (a) at scale 0.01 decodes to ~11 MiB: larger than this window
  std::string report;
  ASSERT_OK_AND_ASSIGN(const MainJobResult r, RunJob(o, root, &report));
  ASSERT_EQ(r.queries.size(), 4u);  // the join, TPC-H Q3, Q5, Q18
  for (const auto& q : r.queries) {
    EXPECT_TRUE(q.verified) << q.label;
    EXPECT_GT(q.rows, 0) << q.label;
    EXPECT_EQ(q.rows, q.local_rows) << q.label;
    EXPECT_EQ(q.checksum, q.local_checksum) << q.label;
    EXPECT_EQ(q.first_rows.size(), std::min<size_t>(2, static_cast<size_t>(q.rows))) << q.label;
  }
  const MainJobQuery& a = r.queries[0];
  EXPECT_GE(a.chunks, 2) << "512 KiB chunks, several per result";
  EXPECT_EQ(a.rows, 60036) << "every line of lineitem at scale 0.01";
  EXPECT_EQ(a.columns.size(), 18u);
  EXPECT_EQ(a.columns[0], "o_orderkey");
  EXPECT_GT(a.decoded_bytes, o.window_bytes) << "(a) is larger than the window";
  EXPECT_EQ(a.first_rows[0].rfind("1          | ", 0), 0u) << a.first_rows[0] << ": aligned under the header";
  EXPECT_EQ(r.queries[1].chunks, 0) << "Q3's 10 rows come back inline";

  // The client runs of (a): streaming, then holding it all under each policy.
  EXPECT_EQ(r.window_bytes, o.window_bytes);
  EXPECT_EQ(r.streaming.mode, "stream");
  EXPECT_EQ(r.streaming.rows, a.rows);
  EXPECT_EQ(r.streaming.decoded_bytes, a.decoded_bytes);
  ASSERT_EQ(r.holding.size(), 3u);
  EXPECT_EQ(r.holding[0].policy, "stream-mmap");
  EXPECT_EQ(r.holding[1].policy, "mmap-after");
  EXPECT_EQ(r.holding[2].policy, "heap");
  for (const auto& h : r.holding) {
    EXPECT_EQ(h.mode, "fetchall");
    EXPECT_EQ(h.rows, a.rows) << h.policy;
    EXPECT_FALSE(h.rss) << "no client executable: in process, the pool's peak";
    // Holding every batch keeps at least the decoded bytes in the client pool;
    // streaming never holds them all at once.
    EXPECT_GE(h.client_peak_bytes, a.decoded_bytes) << h.policy;
    EXPECT_LT(r.streaming.client_peak_bytes, h.client_peak_bytes) << h.policy;
  }

  // Only stages that moved: no inline result has chunk stages, no row is
  // under 1 KiB, and (a)'s chunk stages are there.
  ASSERT_FALSE(r.stages.empty());
  EXPECT_EQ(r.stages[0].stage, "generate");
  bool a_download = false;
  for (const auto& s : r.stages) {
    EXPECT_GE(s.peak_bytes, 1024) << s.stage;
    EXPECT_EQ(s.stage.find("(b) download"), std::string::npos) << "an inline result downloads no chunk";
    EXPECT_EQ(s.stage.find("(b) compress"), std::string::npos);
    a_download = a_download || s.stage == "(a) download";
  }
  EXPECT_TRUE(a_download);
  EXPECT_LT(r.stages.size(), 35u) << "fewer than the 45 rows of every stage of every query";

  EXPECT_EQ(report.rfind("== TPC-H scale 0.01: 8 tables, ", 0), 0u) << report;
  const size_t server = report.find("\n== server: https://127.0.0.1:");
  const size_t one = report.find("\n== 1. A result larger than the client's fetch window, streamed\n");
  const size_t runs = report.find("\n   the client fetching (a), in this process");
  const size_t two = report.find("\n== 2. TPC-H queries");
  const size_t three = report.find("\n== 3. Memory, stage by stage: the stages that moved");
  const size_t headline = report.find("\n== headline: streaming query (a), ");
  ASSERT_NE(server, std::string::npos) << report;
  EXPECT_LT(server, one);
  EXPECT_LT(one, runs);
  EXPECT_LT(runs, two);
  EXPECT_LT(two, three);
  EXPECT_LT(three, headline);
  EXPECT_NE(headline, std::string::npos) << report;
  EXPECT_NE(report.find("     streaming (each batch dropped once read)  "), std::string::npos) << report;
  EXPECT_NE(report.find("     holding every batch, policy heap  "), std::string::npos) << report;
  size_t matches = 0;
  for (size_t at = report.find("   matches the in-process engine ("); at != std::string::npos;
       at = report.find("   matches the in-process engine (", at + 1)) {
    ++matches;
  }
  EXPECT_EQ(matches, 4u) << report;
  EXPECT_NE(report.find("\nall 4 results match the in-process engine ("), std::string::npos);
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
  ASSERT_GE(r.stages.size(), 2u);
  EXPECT_EQ(r.stages[1].stage, "(a) build relation");
  EXPECT_EQ(r.stages[1].detail, "hashed build side (off-heap): mapped pages, charged with Reserve");
}

TEST(MainJobTest, StageTableLayout) {
  std::vector<MainJobStage> stages = {
      {"generate", "generate", "0 B", "1.0 KiB", "8 IPC files", 2048, -1},
      {"(a) probe", "serve/exec", "-", "12 B", "", 1 << 20, 1 << 20},
      {"(a) decode", "fetch", "0 B", "3 B", "same RSS and HWM as above: left blank", 1 << 20, 1 << 20},
  };
  EXPECT_EQ(
      FormatStageTable(stages),
      "  stage      | pool       | held | peak    | RSS      | HWM      | detail\n"
      "  -----------+------------+------+---------+----------+----------+-------\n"
      "  generate   | generate   | 0 B  | 1.0 KiB | 2.0 KiB  | -        | 8 IPC files\n"
      "  (a) probe  | serve/exec | -    | 12 B    | 1.00 MiB | 1.00 MiB |\n"
      "  (a) decode | fetch      | 0 B  | 3 B     |          |          | same RSS and HWM as above: left blank\n");
}

TEST(MainJobTest, AlignedRows) {
  EXPECT_EQ(FormatAlignedRows({"id", "name"}, {{"1", "Customer#000000001"}, {"22", "x"}}),
            (std::vector<std::string>{"id | name", "1  | Customer#000000001", "22 | x"}));
  // Long cells are cut; columns past the line's width are left out and counted.
  EXPECT_EQ(FormatAlignedRows({"a", "b", "c"}, {{"123456789012", "x", "y"}}, 8, 14),
            (std::vector<std::string>{"a        | b | ... (+1 columns)", "12345... | x"}));
  EXPECT_EQ(FormatAlignedRows({"only"}, {}), (std::vector<std::string>{"only"}));
}

TEST(MainJobTest, FetchCostsAndHeadline) {
  MainJobResult r;
  r.window_bytes = 64 << 20;
  r.streaming = {"stream", "stream-mmap", 10, 128 << 20, 16 << 20, true, 1.5};
  r.holding = {{"fetchall", "stream-mmap", 10, 128 << 20, 160 << 20, true, 2.0},
               {"fetchall", "mmap-after", 10, 128 << 20, 192 << 20, true, 2.5},
               {"fetchall", "heap", 10, 128 << 20, 176 << 20, true, 3.0}};
  EXPECT_EQ(FormatFetchCosts(r),
            "   the client fetching (a), each run in its own process, peak RSS over the process's start (decoded: "
            "128.00 MiB, 2.0x the 64.00 MiB fetch window):\n"
            "     streaming (each batch dropped once read)   16.00 MiB   0.12x the decoded size    1.50 s\n"
            "     holding every batch, policy stream-mmap   160.00 MiB   1.25x the decoded size    2.00 s\n"
            "     holding every batch, policy mmap-after    192.00 MiB   1.50x the decoded size    2.50 s\n"
            "     holding every batch, policy heap          176.00 MiB   1.38x the decoded size    3.00 s\n");
  EXPECT_EQ(FormatMainJobHeadline(r),
            "\n== headline: streaming query (a), 128.00 MiB decoded (2.0x the 64.00 MiB window), the client's peak "
            "was 16.00 MiB of RSS (0.12x the decoded size);\n"
            "   holding all of it costs 1.25x (stream-mmap) to 1.50x (mmap-after)\n");
}

}  // namespace
}  // namespace quiver::job
