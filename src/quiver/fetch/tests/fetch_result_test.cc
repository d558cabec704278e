// FetchResult / DownloadEngine / ProtocolClient tests against the
// fault-injecting FakeWarehouse (HTTPS on 127.0.0.1, self-signed certificate
// trusted through ConnectionOptions::ca_cert_path). Every case checks the rows
// (equal to the source batches) or the named error, and that the client pool
// is back to zero once the result and its batches are gone.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/tests/chunk_fixtures.h"
#include "quiver/fetch/tests/fake_warehouse.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::fetch {
namespace {

using testing::FakeConfig;
using testing::FakeFile;
using testing::FakeWarehouse;
using testing::GetFault;
using testing::HostileReply;
using testing::IpcStream;
using testing::Lz4Frame;
using testing::SameRows;
using testing::SeqBatches;

struct Scenario {
  std::shared_ptr<MemoryPool> src_pool = MemoryPool::MakeRoot({});
  std::vector<RecordBatchPtr> expected;
  FakeConfig cfg;
};

std::string SchemaMessage(MemoryPool* pool, const SchemaPtr& schema) {
  std::string s = IpcStream(pool, schema, {});
  return s.substr(0, s.size() - 8);  // drop the end-of-stream marker
}

// `rows` rows of bigint-seq in `chunks` files of batches of `per_batch` rows.
// `pad` extra rows are written at the end of every file but not announced.
Scenario MakeScenario(int64_t rows, int chunks, bool lz4, bool content_size = true, int64_t per_batch = 4000,
                      int64_t pad = 0) {
  Scenario s;
  s.expected = SeqBatches(s.src_pool.get(), 0, rows, per_batch);
  const SchemaPtr schema = s.expected[0]->schema;
  s.cfg.arrow_schema = SchemaMessage(s.src_pool.get(), schema);
  s.cfg.lz4 = lz4;
  for (int i = 0; i < chunks; ++i) {
    const int64_t a = rows * i / chunks, b = rows * (i + 1) / chunks;
    auto batches = SeqBatches(s.src_pool.get(), a, b - a + pad, per_batch);
    FakeFile f;
    const std::string raw = IpcStream(s.src_pool.get(), schema, batches);
    f.wire = lz4 ? Lz4Frame(raw, content_size) : raw;
    f.start_row = a;
    f.row_count = b - a;
    f.bytes_num = static_cast<int64_t>(raw.size());
    s.cfg.files.push_back(std::move(f));
  }
  return s;
}

struct Outcome {
  Status status;
  std::vector<RecordBatchPtr> batches;
  int64_t retries = 0, refreshes = 0, range_resumes = 0, restarts = 0, window_peak = 0, rows_dropped = 0;
  double seconds = 0;
};

FetchOptions Options(MemoryPool* pool, ChunkPolicy policy = ChunkPolicy::kStreamMmap) {
  FetchOptions fo;
  fo.download.pool = pool;
  fo.download.policy = policy;
  fo.download.parallel = 4;
  fo.download.retry_initial_ms = 10;
  fo.download.retry_max_ms = 50;
  fo.download.low_speed_time_s = 1;
  fo.download.low_speed_bytes = 1;
  fo.download.stall_timeout_ms = 700;
  return fo;
}

ConnectionOptions Conn(FakeWarehouse& w) {
  ConnectionOptions c;
  c.server_url = w.url();
  c.token = "secret-test-token";
  c.ca_cert_path = w.ca_cert_path();
  c.poll_initial_ms = 5;
  return c;
}

// Runs the query to the end (or the first error), then destroys the result
// and checks the pool is back to zero once the batches are dropped too.
Outcome RunQuery(FakeWarehouse& w, FetchOptions fo, std::shared_ptr<MemoryPool> pool, bool keep_batches = true) {
  Outcome out;
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto r = FetchResult::Query(Conn(w), "SELECT * FROM t", fo);
    if (!r.ok()) {
      out.status = r.status();
    } else {
      for (;;) {
        auto b = (*r)->Next();
        if (!b.ok()) {
          out.status = b.status();
          break;
        }
        if (!*b) break;
        if (keep_batches) out.batches.push_back(*b);
      }
      if (const DownloadStats* s = (*r)->download_stats()) {
        out.retries = s->retries;
        out.refreshes = s->refreshes;
        out.range_resumes = s->range_resumes;
        out.restarts = s->restarts;
        out.window_peak = s->window_peak_bytes;
      }
      out.rows_dropped = (*r)->rows_dropped();
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!out.status.ok()) {
    out.batches.clear();
    EXPECT_EQ(pool->held_bytes(), 0) << "after error " << out.status.ToString();
  }
  return out;
}

void ExpectRows(const Scenario& s, Outcome& out, const std::shared_ptr<MemoryPool>& pool) {
  ASSERT_OK(out.status);
  Status same = SameRows(s.expected, out.batches);
  EXPECT_OK(same);
  out.batches.clear();
  EXPECT_EQ(pool->held_bytes(), 0);
}

void ExpectError(const Outcome& out, StatusCode code, const std::vector<std::string>& parts) {
  ASSERT_FALSE(out.status.ok()) << "expected an error";
  EXPECT_EQ(out.status.code(), code) << out.status.ToString();
  for (const auto& p : parts)
    EXPECT_NE(out.status.message().find(p), std::string::npos) << "missing '" << p << "' in " << out.status.ToString();
}

class HappyPath : public ::testing::TestWithParam<std::tuple<ChunkPolicy, bool, int>> {};

// Every policy x {LZ4, raw} x {1, 7 chunks}: rows equal the source; the
// operation and the session are closed; nothing stays charged.
TEST_P(HappyPath, RowsEqualSource) {
  auto [policy, lz4, chunks] = GetParam();
  Scenario s = MakeScenario(60000, chunks, lz4);
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get(), policy), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.retries, 0);
  EXPECT_EQ(w->counters().close_operations, 1);
  EXPECT_EQ(w->counters().close_sessions, 1);
  EXPECT_EQ(w->counters().bad_auth, 0);
  EXPECT_EQ(w->attempts(0), 1);
}

INSTANTIATE_TEST_SUITE_P(All, HappyPath,
                         ::testing::Combine(::testing::Values(ChunkPolicy::kHeap, ChunkPolicy::kMmapAfter,
                                                              ChunkPolicy::kStreamMmap),
                                            ::testing::Bool(), ::testing::Values(1, 7)));

// Inline Arrow batches (ARROW_BASED_SET), LZ4 and raw, paged, with direct
// results on and off; rows padded beyond a batch's rowCount are dropped.
TEST(FetchResult, InlineArrowBatches) {
  for (bool lz4 : {false, true}) {
    for (bool direct : {false, true}) {
      Scenario s;
      s.expected = SeqBatches(s.src_pool.get(), 0, 9000, 1000);
      const SchemaPtr schema = s.expected[0]->schema;
      s.cfg.arrow_schema = SchemaMessage(s.src_pool.get(), schema);
      s.cfg.lz4 = lz4;
      s.cfg.direct_results = direct;
      for (int64_t a = 0; a < 9000; a += 1000) {
        // Two record batch messages (600 + 407 rows) in one payload: 1000 rows
        // and 7 rows of padding, announced as 1000 (quiver serve sends a
        // chunk's messages in one TSparkArrowBatch).
        auto b = SeqBatches(s.src_pool.get(), a, 1007, 600);
        const std::string stream = IpcStream(s.src_pool.get(), schema, b);
        std::string message = stream.substr(s.cfg.arrow_schema.size(), stream.size() - 8 - s.cfg.arrow_schema.size());
        s.cfg.inline_batches.emplace_back(lz4 ? Lz4Frame(message) : message, 1000);
      }
      auto w = FakeWarehouse::Start(s.cfg);
      auto pool = MemoryPool::MakeRoot({});
      FetchOptions fo = Options(pool.get());
      fo.direct_max_rows = direct ? 100000 : 0;
      Outcome out = RunQuery(*w, fo, pool);
      EXPECT_EQ(out.rows_dropped, 9 * 7);
      ExpectRows(s, out, pool);
      EXPECT_EQ(w->counters().close_operations, 1);
    }
  }
}

TEST(FetchResult, DirectResultsFirstPage) {
  Scenario s = MakeScenario(30000, 5, true);
  s.cfg.direct_results = true;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.direct_max_rows = 100000;
  Outcome out = RunQuery(*w, fo, pool);
  ExpectRows(s, out, pool);
}

TEST(FetchResult, NoArrowSchemaUsesFirstChunk) {
  Scenario s = MakeScenario(10000, 3, true);
  s.cfg.arrow_schema.clear();
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
}

TEST(FetchResult, EmptyPagesWithHasMoreRowsKeepFetching) {
  Scenario s = MakeScenario(20000, 4, true);
  s.cfg.empty_pages_first = 3;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_GE(w->counters().fetch_results, 3 + 2);
}

TEST(FetchResult, PaddedRowsBeyondRowCountAreDropped) {
  Scenario s = MakeScenario(30000, 3, true, true, 4000, /*pad=*/1407);
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  EXPECT_EQ(out.rows_dropped, 3 * 1407);
  ExpectRows(s, out, pool);
}

TEST(FetchResult, Lz4WithoutContentSize) {
  for (ChunkPolicy p : {ChunkPolicy::kHeap, ChunkPolicy::kMmapAfter, ChunkPolicy::kStreamMmap}) {
    Scenario s = MakeScenario(30000, 3, true, /*content_size=*/false);
    auto w = FakeWarehouse::Start(s.cfg);
    auto pool = MemoryPool::MakeRoot({});
    Outcome out = RunQuery(*w, Options(pool.get(), p), pool);
    ExpectRows(s, out, pool);
  }
}

// 64 MiB of zeros from well under 1 MiB of LZ4: under a 16 MiB pool limit the
// fetch fails with OutOfMemory naming the chunk and gives everything back;
// with room for it, stream-mmap peaks at the decoded size (no compressed copy).
TEST(FetchResult, VeryCompressibleUnderMemoryLimit) {
  auto src = MemoryPool::MakeRoot({});
  const int64_t rows = int64_t{8} << 20;
  auto zeros = Buffer::AllocateZeroed(src.get(), rows * 8);
  ASSERT_OK(zeros);
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("z", int64())};
  auto arr = std::make_shared<ArrayData>();
  arr->type = int64();
  arr->length = rows;
  arr->buffers = {nullptr, *zeros};
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  batch->columns = {arr};
  const std::string raw = IpcStream(src.get(), schema, {batch});
  Scenario s;
  s.expected = {batch};
  s.cfg.arrow_schema = SchemaMessage(src.get(), schema);
  FakeFile f;
  f.wire = Lz4Frame(raw, true, true, LZ4F_max4MB);
  ASSERT_LT(f.wire.size(), size_t{1} << 20);
  f.row_count = rows;
  f.bytes_num = static_cast<int64_t>(raw.size());
  s.cfg.files = {f};
  auto w = FakeWarehouse::Start(s.cfg);
  {
    MemoryPoolOptions po;
    po.limit_bytes = int64_t{16} << 20;
    auto pool = MemoryPool::MakeRoot(po);
    Outcome out = RunQuery(*w, Options(pool.get()), pool);
    ExpectError(out, StatusCode::kOutOfMemory, {});
    EXPECT_EQ(pool->held_bytes(), 0);
  }
  {
    MemoryPoolOptions po;
    po.limit_bytes = f.bytes_num + (int64_t{10} << 20);
    auto pool = MemoryPool::MakeRoot(po);
    Outcome out = RunQuery(*w, Options(pool.get()), pool);
    ExpectRows(s, out, pool);
    // The decoded size plus LZ4F's block buffers (2 x 4 MiB, charged too).
    EXPECT_LE(pool->peak_bytes(), f.bytes_num + (int64_t{9} << 20));
  }
}

TEST(FetchResult, BodyCutShortIsResumedWithRange) {
  Scenario s = MakeScenario(40000, 4, true);
  s.cfg.faults[{1, 0}] = GetFault::kCutShort;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.retries, 1);
  EXPECT_EQ(out.range_resumes, 1);
  EXPECT_EQ(w->counters().range_gets, 1);
  EXPECT_EQ(w->attempts(1), 2);
}

TEST(FetchResult, TruncatedBodyWithoutRangeSupportRestarts) {
  Scenario s = MakeScenario(40000, 4, true);
  s.cfg.range_support = false;
  s.cfg.faults[{2, 0}] = GetFault::kCutShort;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.retries, 1);
  EXPECT_EQ(out.range_resumes, 0);
  EXPECT_EQ(out.restarts, 1);
  EXPECT_EQ(w->counters().range_gets, 0);
}

TEST(FetchResult, ResetAfterHeadersIsRetried) {
  Scenario s = MakeScenario(40000, 4, false);
  s.cfg.faults[{0, 0}] = GetFault::kResetAfterHeaders;
  s.cfg.faults[{3, 0}] = GetFault::kResetAfterHeaders;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.retries, 2);
}

TEST(FetchResult, HostileThriftRepliesAreRefused) {
  for (HostileReply h : {HostileReply::kHugeList, HostileReply::kHugeString, HostileReply::kGarbage}) {
    Scenario s = MakeScenario(1000, 1, true);
    s.cfg.hostile_fetch = h;
    auto w = FakeWarehouse::Start(s.cfg);
    auto pool = MemoryPool::MakeRoot({});
    Outcome out = RunQuery(*w, Options(pool.get()), pool);
    ExpectError(out, StatusCode::kInvalid, {"the reply to FetchResults", "does not parse"});
    EXPECT_LT(out.seconds, 5.0);
    EXPECT_EQ(pool->peak_bytes(), pool->peak_bytes());
  }
}

TEST(FetchResult, LinkLargerThanTheWholeWindowProceedsAlone) {
  Scenario s = MakeScenario(40000, 4, true);
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.download.window_bytes = 1024;
  Outcome out = RunQuery(*w, fo, pool);
  int64_t largest = 0;  // the largest grant: bytesNum + LZ4 input block share
  for (auto& f : s.cfg.files)
    largest = std::max(largest, f.bytes_num + std::min<int64_t>(f.bytes_num, (4 << 20) + (64 << 10)));
  EXPECT_EQ(out.window_peak, largest) << "one file at a time";
  ExpectRows(s, out, pool);
}

// The window is granted in file order and bounds what is held: with a window
// of two files and a consumer that keeps every batch, the pool never holds
// more than the window's worth of undelivered chunks plus delivered ones.
TEST(FetchResult, WindowBoundsBytesInFlight) {
  Scenario s = MakeScenario(80000, 8, true);
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  int64_t one = s.cfg.files[0].bytes_num;
  fo.download.window_bytes = 4 * one + one / 2;  // two grants (bytesNum + LZ4 input share) fit
  fo.download.parallel = 8;
  // Consume and drop every batch: the pool never holds more than the window.
  Outcome out = RunQuery(*w, fo, pool, /*keep_batches=*/false);
  ASSERT_OK(out.status);
  EXPECT_LE(out.window_peak, fo.download.window_bytes);
  // Chunks stay within the window; each active download's LZ4F scratch
  // (64 KiB blocks: ~260 KiB, charged to the pool) comes on top.
  EXPECT_LE(pool->peak_bytes(), fo.download.window_bytes + 8 * 4096 + fo.download.parallel * (300 << 10));
  EXPECT_EQ(pool->held_bytes(), 0);
}

TEST(FetchResult, Http403ThenRefresh) {
  Scenario s = MakeScenario(40000, 4, true);
  s.cfg.faults[{1, 0}] = GetFault::kHttp403;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.refreshes, 1);
  EXPECT_EQ(out.retries, 0) << "a refresh is not charged to the retry budget";
  EXPECT_EQ(w->counters().refresh_fetches, 1);
}

TEST(FetchResult, LinksExpiringDuringALongFetchAreRefreshed) {
  Scenario s = MakeScenario(40000, 6, true);
  s.cfg.link_ttl_ms = 300;
  s.cfg.links_per_page = 6;
  s.cfg.file_delay_ms = 120;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.download.parallel = 1;
  fo.download.refresh_margin_ms = 50;
  Outcome out = RunQuery(*w, fo, pool);
  ExpectRows(s, out, pool);
  EXPECT_GE(out.refreshes, 1);
  EXPECT_EQ(out.retries, 0);
}

TEST(FetchResult, Http500TwiceThenSuccess) {
  Scenario s = MakeScenario(20000, 2, true);
  s.cfg.faults[{0, 0}] = GetFault::kHttp500;
  s.cfg.faults[{0, 1}] = GetFault::kHttp500;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.retries, 2);
  EXPECT_EQ(w->attempts(0), 3);
}

TEST(FetchResult, Http500BeyondTheRetryBudgetNamesTheChunk) {
  Scenario s = MakeScenario(20000, 2, true);
  for (int k = 0; k < 10; ++k) s.cfg.faults[{1, k}] = GetFault::kHttp500;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.download.max_retries = 3;
  Outcome out = RunQuery(*w, fo, pool);
  ExpectError(out, StatusCode::kIOError, {"chunk 1 (rows [10000, 20000))", "after 4 attempts", "HTTP 500"});
  EXPECT_EQ(w->attempts(1), 4);
}

TEST(FetchResult, StalledBodyIsCutByTheLowSpeedTimeout) {
  Scenario s = MakeScenario(40000, 2, true);
  s.cfg.faults[{0, 0}] = GetFault::kStall;
  s.cfg.stall_ms = 20000;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  EXPECT_EQ(out.retries, 1);
  EXPECT_LT(out.seconds, 3.0);
}

// With bytes_num_is_exact (a server known to send the exact uncompressed
// size), a wrong bytesNum is an error naming the chunk.
TEST(FetchResult, WrongBytesNumNamesTheChunkWhenExact) {
  Scenario s = MakeScenario(30000, 3, true);
  const int64_t truth = s.cfg.files[1].bytes_num;
  s.cfg.files[1].bytes_num = truth + 8;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.download.bytes_num_is_exact = true;
  Outcome out = RunQuery(*w, fo, pool);
  ExpectError(out, StatusCode::kInvalid, {"chunk 1 (rows [10000, 20000))", "bytesNum"});
}

// bytesNum is a hint (issue 21): servers send the compressed size (the REST
// API's byte_count, as other drivers read it), 0, a too small or a too large
// value. Every combination with and without the LZ4 content size, one frame
// or several per file, decodes to the source rows, and the pool holds about
// the decoded bytes (mappings sized from the content size, grown with mremap
// without it, tails given back).
enum class Hint { kExact, kCompressed, kZero, kTooSmall, kTooLarge };

class BytesNumHint : public ::testing::TestWithParam<std::tuple<Hint, bool, int>> {};

TEST_P(BytesNumHint, DecodesTheRows) {
  auto [hint, content_size, frames] = GetParam();
  Scenario s = MakeScenario(60000, 3, true);
  int64_t decoded_total = 0;
  for (FakeFile& f : s.cfg.files) {
    // Rebuild the wire as `frames` concatenated frames of the IPC stream.
    std::string raw = IpcStream(s.src_pool.get(), s.expected[0]->schema,
                                SeqBatches(s.src_pool.get(), f.start_row, f.row_count, 4000));
    ASSERT_EQ(static_cast<int64_t>(raw.size()), f.bytes_num);
    decoded_total += f.bytes_num;
    f.wire.clear();
    const size_t piece = raw.size() / static_cast<size_t>(frames) + 1;
    for (size_t at = 0; at < raw.size(); at += piece) f.wire += Lz4Frame(raw.substr(at, piece), content_size);
    switch (hint) {
      case Hint::kExact: break;
      case Hint::kCompressed: f.bytes_num = static_cast<int64_t>(f.wire.size()); break;
      case Hint::kZero: f.bytes_num = 0; break;
      case Hint::kTooSmall: f.bytes_num = f.bytes_num / 5; break;
      case Hint::kTooLarge: f.bytes_num = f.bytes_num * 4; break;
    }
  }
  ASSERT_LT(s.cfg.files[0].wire.size(), static_cast<size_t>(decoded_total / 3)) << "the data compresses";
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectRows(s, out, pool);
  // The decoded chunks, plus growth headroom (a doubling mapping, or a too
  // large hint reserved until the tail is trimmed) and LZ4F's buffers.
  const int64_t factor = hint == Hint::kTooLarge && !content_size ? 5 : 2;
  EXPECT_LE(pool->peak_bytes(), factor * decoded_total + (int64_t{4} << 20));
}

INSTANTIATE_TEST_SUITE_P(All, BytesNumHint,
                         ::testing::Combine(::testing::Values(Hint::kExact, Hint::kCompressed, Hint::kZero,
                                                              Hint::kTooSmall, Hint::kTooLarge),
                                            ::testing::Bool(), ::testing::Values(1, 3)));

// A small window with bytesNum = the compressed size: each chunk's share is
// trued up to its decoded size, so the window still bounds decoded bytes not
// yet consumed (later files wait) instead of counting compressed bytes.
TEST(FetchResult, HintTooSmallTruesUpTheWindow) {
  Scenario s = MakeScenario(80000, 8, true);
  const int64_t one = s.cfg.files[0].bytes_num;
  for (FakeFile& f : s.cfg.files) f.bytes_num = static_cast<int64_t>(f.wire.size());
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.download.window_bytes = 3 * one;
  fo.download.parallel = 8;
  Outcome out = RunQuery(*w, fo, pool, /*keep_batches=*/false);
  ASSERT_OK(out.status);
  EXPECT_GE(out.window_peak, one) << "a decoded chunk is counted at its real size";
  // Before the first chunk is done, the grants are the small hints (parallel
  // of them may start); after it, they are scaled to decoded sizes.
  EXPECT_LE(pool->peak_bytes(), 8 * one + fo.download.parallel * (300 << 10));
  EXPECT_EQ(pool->held_bytes(), 0);
}

// A row limit (quiver query --limit N): only the chunks covering the first N
// rows are requested and downloaded, whatever the window and parallelism.
TEST(FetchResult, RowLimitDownloadsOnlyTheChunksItNeeds) {
  for (int64_t limit : {int64_t{0}, int64_t{3}, int64_t{10000}, int64_t{10001}}) {
    Scenario s = MakeScenario(80000, 8, true);
    s.cfg.links_per_page = 8;  // every link in the first page: the limit, not paging, must stop them
    auto w = FakeWarehouse::Start(s.cfg);
    auto pool = MemoryPool::MakeRoot({});
    FetchOptions fo = Options(pool.get());
    fo.download.parallel = 8;
    fo.download.row_limit = limit;
    Outcome out = RunQuery(*w, fo, pool);
    ASSERT_OK(out.status) << limit;
    const int64_t chunks = (limit + 9999) / 10000;
    int64_t rows = 0;
    for (auto& b : out.batches) rows += b->num_rows;
    EXPECT_EQ(rows, chunks * 10000) << limit;
    EXPECT_EQ(w->counters().gets.load(), chunks) << limit;
    out.batches.clear();
    EXPECT_EQ(pool->held_bytes(), 0);
  }
}

TEST(FetchResult, WrongRowCountNamesTheChunk) {
  Scenario s = MakeScenario(30000, 3, false);
  s.cfg.files[2].row_count += 25;  // the last file: offsets stay contiguous
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectError(out, StatusCode::kInvalid,
              {"chunk 2 (rows [20000, 30025))", "fewer rows than rowCount: expected 10025, actual 10000"});
}

TEST(FetchResult, GapAndOverlapInOffsets) {
  for (int64_t delta : {int64_t{5}, int64_t{-5}}) {
    Scenario s = MakeScenario(30000, 3, true);
    s.cfg.files[2].start_row += delta;
    auto w = FakeWarehouse::Start(s.cfg);
    auto pool = MemoryPool::MakeRoot({});
    Outcome out = RunQuery(*w, Options(pool.get()), pool);
    ExpectError(out, StatusCode::kInvalid,
                {"chunk 2", "startRowOffset " + std::to_string(20000 + delta) + ", expected 20000",
                 delta > 0 ? "a gap of 5 rows" : "an overlap of 5 rows"});
  }
  Scenario s = MakeScenario(30000, 3, true);
  s.cfg.files[0].start_row = 7;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectError(out, StatusCode::kInvalid, {"chunk 0", "expected 0"});
}

// A body that never ends is cut once it decodes to more than the bytesNum
// hint allows (LZ4's largest ratio over it), with no runaway allocation.
TEST(FetchResult, EndlessBodyIsRefused) {
  for (bool lz4 : {false, true}) {
    Scenario s = MakeScenario(20000, 2, lz4);
    s.cfg.faults[{1, 0}] = GetFault::kEndless;
    auto w = FakeWarehouse::Start(s.cfg);
    auto pool = MemoryPool::MakeRoot({});
    Outcome out = RunQuery(*w, Options(pool.get()), pool);
    ExpectError(out, StatusCode::kInvalid, {"chunk 1 (rows [10000, 20000))", "limit"});
    // bytesNum is a hint: the body is cut at LZ4's largest ratio over it.
    EXPECT_LT(pool->peak_bytes(), 2 * 256 * s.cfg.files[1].bytes_num + (int64_t{8} << 20));
    EXPECT_LT(out.seconds, 5.0);
  }
}

TEST(FetchResult, CorruptLz4ChecksumNamesTheChunk) {
  Scenario s = MakeScenario(30000, 3, true);
  s.cfg.files[1].wire.back() ^= 0x5a;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectError(out, StatusCode::kInvalid, {"chunk 1 (rows [10000, 20000))", "corrupt LZ4 data"});
  // Opted out over TLS (DownloadOptions::verify_lz4_checksums): the frame's
  // checksum is not computed; the data itself is intact, so all rows arrive.
  FetchOptions fo = Options(pool.get());
  fo.download.verify_lz4_checksums = false;
  Outcome skipped = RunQuery(*w, fo, pool);
  ASSERT_OK(skipped.status);
  int64_t rows = 0;
  for (const auto& b : skipped.batches) rows += b->num_rows;
  EXPECT_EQ(rows, 30000);
}

TEST(FetchResult, ChunkWithAnotherSchemaIsRefused) {
  Scenario s = MakeScenario(20000, 2, true);
  auto other = std::make_shared<Schema>();
  other->fields = {field("other", int32())};
  auto src = MemoryPool::MakeRoot({});
  s.cfg.arrow_schema = SchemaMessage(src.get(), other);
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectError(out, StatusCode::kInvalid, {"chunk 0", "schema differs"});
}

TEST(FetchResult, CancellationMidway) {
  Scenario s = MakeScenario(60000, 6, true);
  s.cfg.file_delay_ms = 150;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  FetchOptions fo = Options(pool.get());
  fo.download.parallel = 1;
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto r = FetchResult::Query(Conn(*w), "SELECT 1", fo);
    ASSERT_OK(r);
    auto b = (*r)->Next();
    ASSERT_TRUE(b.ok() && *b);
    (*r)->Cancel();
    Status st;
    for (;;) {
      auto n = (*r)->Next();
      if (!n.ok()) {
        st = n.status();
        break;
      }
      ASSERT_TRUE(*n) << "the result must not end normally after Cancel";
    }
    EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
    EXPECT_LT((*r)->rows_delivered(), 60000);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);
  EXPECT_EQ(w->counters().cancels, 1);
  EXPECT_EQ(pool->held_bytes(), 0);
}

TEST(ProtocolClient, StatementErrorCarriesServerMessage) {
  Scenario s = MakeScenario(1000, 1, true);
  s.cfg.fail_statement_message = "Table or view not found: nope";
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ExpectError(out, StatusCode::kIOError, {"Table or view not found: nope", "sqlState 42P01"});
}

// A failed statement is closed by the client: the server keeps a failed
// operation (and any chunks it wrote) until CloseOperation.
TEST(ProtocolClient, AFailedStatementIsClosed) {
  Scenario s = MakeScenario(1000, 1, true);
  s.cfg.fail_statement_message = "Table or view not found: nope";
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ASSERT_FALSE(out.status.ok());
  EXPECT_EQ(w->counters().close_operations, 1);
}

// Behind a balancer, the server asked for the metadata may not yet have seen
// the statement end (STILL_EXECUTING, no resultFormat): asked again, not read
// as "result format -1" (seen in CI: the objstore test through HAProxy).
TEST(ProtocolClient, StillExecutingMetadataIsAskedAgain) {
  Scenario s = MakeScenario(5000, 3, true);
  s.cfg.still_executing_metadata = 2;
  auto w = FakeWarehouse::Start(s.cfg);
  auto pool = MemoryPool::MakeRoot({});
  Outcome out = RunQuery(*w, Options(pool.get()), pool);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  int64_t rows = 0;
  for (const auto& b : out.batches) rows += b->num_rows;
  EXPECT_EQ(rows, 5000);
  EXPECT_EQ(w->counters().metadata_calls, 3);
  EXPECT_EQ(w->counters().close_operations, 1);
}

TEST(ProtocolClient, BadTokenIsHttp401WithoutTheToken) {
  Scenario s = MakeScenario(1000, 1, true);
  auto w = FakeWarehouse::Start(s.cfg);
  ConnectionOptions c = Conn(*w);
  c.token = "wrong-token-value";
  auto r = ProtocolClient::Connect(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("HTTP 401"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().message().find("wrong-token-value"), std::string::npos);
}

TEST(ProtocolClient, TlsVerificationIsOnByDefault) {
  Scenario s = MakeScenario(1000, 1, true);
  auto w = FakeWarehouse::Start(s.cfg);
  ConnectionOptions c = Conn(*w);
  c.ca_cert_path.clear();
  auto r = ProtocolClient::Connect(c);
  ASSERT_RAISES(IOError, r);
  c.insecure = true;
  auto ok = ProtocolClient::Connect(c);
  EXPECT_OK(ok);
  ConnectionOptions h = Conn(*w);
  h.server_url = "http://127.0.0.1:1/x";
  auto refused = ProtocolClient::Connect(h);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("https://"), std::string::npos);
}

}  // namespace
}  // namespace quiver::fetch
