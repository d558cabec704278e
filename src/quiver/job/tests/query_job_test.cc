// Tests for quiver/job/query_job.h against an in-process result server: the
// result as CSV text (header and every row), a row limit (cancels the rest,
// not an error), the Arrow IPC file (written whole, no temp file left), the
// report lines, and an interruption (Cancelled).
#include "quiver/job/query_job.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "quiver/bench/generated_stream.h"
#include "quiver/ipc/reader.h"
#include "quiver/server/http_server.h"
#include "quiver/server/statement_executor.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::job {
namespace {

constexpr char kToken[] = "query-job-test-token";

// A bigint-seq table (column of 0..rows-1) served by an in-process server,
// every result as CloudFetch links of small LZ4 chunks.
class QueryJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("quiver-query-job-test-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir_);
    datagen::GenOptions go;
    go.kind = datagen::GenKind::kBigintSeq;
    go.num_rows = kRows;
    go.max_bytes_per_batch = 64 << 10;
    go.pool = pool_.get();
    ASSERT_OK(bench::WriteGeneratedStream(go, dir_ + "/t.arrows", 0).status());
    ASSERT_OK(executor_.AddTable("t", dir_ + "/t.arrows", pool_.get()));
    server::ServerOptions so;
    so.token = kToken;
    so.cert_dir = dir_;
    so.service.pool = pool_.get();
    so.service.executor = &executor_;
    so.service.chunk_bytes = 128 << 10;
    so.service.inline_threshold_bytes = 0;
    ASSERT_OK_AND_ASSIGN(server_, server::ResultServer::Start(so));
  }
  void TearDown() override {
    if (server_) server_->Stop();
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  QueryJobOptions Options(const std::string& sql) const {
    QueryJobOptions o;
    o.server_url = server_->rpc_url();
    o.token = kToken;
    o.ca_cert_path = server_->cert_path();
    o.sql = sql;
    o.window_bytes = 1 << 20;
    o.parallel = 2;
    return o;
  }

  // Runs the job; the rows and the log text in *rows / *log.
  Status RunJob(const QueryJobOptions& o, std::string* rows, std::string* log, QueryJobSummary* summary = nullptr) {
    char *rows_data = nullptr, *log_data = nullptr;
    size_t rows_size = 0, log_size = 0;
    std::FILE* rows_file = open_memstream(&rows_data, &rows_size);
    std::FILE* log_file = open_memstream(&log_data, &log_size);
    Status st = RunQueryJob(o, client_root_, rows_file, log_file, summary);
    std::fclose(rows_file);
    std::fclose(log_file);
    rows->assign(rows_data, rows_size);
    log->assign(log_data, log_size);
    std::free(rows_data);
    std::free(log_data);
    return st;
  }

  static constexpr int64_t kRows = 50000;
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({.name = "server"});
  std::shared_ptr<MemoryPool> client_root_ = MemoryPool::MakeRoot({.name = "quiver"});
  std::string dir_;
  server::TableExecutor executor_;
  std::unique_ptr<server::ResultServer> server_;
};

TEST_F(QueryJobTest, CsvRowsAndReport) {
  QueryJobOptions o = Options("SELECT * FROM t");
  o.format = RowTextFormat::kCsv;
  std::string rows, log;
  QueryJobSummary s;
  ASSERT_OK(RunJob(o, &rows, &log, &s));
  std::string want = "id\n";
  for (int64_t i = 0; i < kRows; ++i) want += std::to_string(i) + "\n";
  EXPECT_EQ(rows, want);
  EXPECT_EQ(s.rows, kRows);
  EXPECT_GE(s.chunks, 2);
  EXPECT_GT(s.downloaded_bytes, 0);
  EXPECT_EQ(s.decoded_bytes > 0, true);
  EXPECT_EQ(s.pool_held_bytes, 0);
  EXPECT_EQ(log.rfind("quiver query: 50000 rows, ", 0), 0u) << log;
  // The report leads with the ratio quiver is measured by, then the window
  // (named in reservations) and the pool (issue 21 item 3).
  EXPECT_NE(log.find("\nmemory: peak RSS increase "), std::string::npos) << log;
  EXPECT_NE(log.find(" decoded = "), std::string::npos) << log;
  EXPECT_NE(log.find("\n  window: limit 1.00 MiB x parallel "), std::string::npos) << log;
  EXPECT_NE(log.find("of reservations (expected decoded bytes of files in flight"), std::string::npos) << log;
  EXPECT_NE(log.find("policy stream-mmap"), std::string::npos) << log;
  EXPECT_EQ(client_root_->held_bytes(), 0);
}

TEST_F(QueryJobTest, LimitCancelsTheRestQuietly) {
  QueryJobOptions o = Options("SELECT * FROM t");
  o.format = RowTextFormat::kJsonl;
  o.limit = 3;
  o.report = false;
  std::string rows, log;
  ASSERT_OK(RunJob(o, &rows, &log));
  EXPECT_EQ(rows, "{\"id\":0}\n{\"id\":1}\n{\"id\":2}\n");
  EXPECT_EQ(log, "");
}

TEST_F(QueryJobTest, IpcFileWrittenWhole) {
  QueryJobOptions o = Options("SELECT * FROM t");
  o.output_path = dir_ + "/out.arrow";
  o.compression = CompressionType::kZstd;
  o.hold = true;
  o.report = false;
  std::string rows, log;
  ASSERT_OK(RunJob(o, &rows, &log));
  EXPECT_EQ(rows, "") << "no text rows with an output file";
  ipc::ReadOptions ro;
  ro.pool = client_root_.get();
  ASSERT_OK_AND_ASSIGN(auto reader, ipc::RecordBatchReader::OpenPath(o.output_path, ro));
  ASSERT_OK_AND_ASSIGN(auto batches, ipc::ReadAllBatches(reader.get()));
  int64_t n = 0;
  for (const auto& b : batches) n += b->num_rows;
  EXPECT_EQ(n, kRows);
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

TEST_F(QueryJobTest, InterruptCancels) {
  std::atomic<bool> interrupt{true};
  QueryJobOptions o = Options("SELECT * FROM t");
  o.format = RowTextFormat::kNone;
  o.interrupt = &interrupt;
  o.report = false;
  std::string rows, log;
  EXPECT_RAISES(Cancelled, RunJob(o, &rows, &log));
  EXPECT_EQ(client_root_->held_bytes(), 0);
}

TEST_F(QueryJobTest, ServerErrorsComeBack) {
  QueryJobOptions o = Options("SELECT * FROM nope");
  std::string rows, log;
  EXPECT_FALSE(RunJob(o, &rows, &log).ok());
  QueryJobOptions bad = Options("SELECT * FROM t");
  bad.token = "wrong";
  EXPECT_FALSE(RunJob(bad, &rows, &log).ok());
}

}  // namespace
}  // namespace quiver::job
