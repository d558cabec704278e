// quiver/job/main_job.h — the main job end to end (`quiver demo`): TPC-H
// generated at a scale, the result server started in process (127.0.0.1,
// an ephemeral port, a generated self-signed certificate, a random bearer
// token), and four statements fetched through quiver's CloudFetch client
// (LZ4 chunks, small enough that a large result has several):
//   (a) orders JOIN lineitem ON the order key, with a date filter;
//   (b) TPC-H Q3 (3-way join, aggregate, top-N); (c) TPC-H Q5 (6-way join);
//   (d) TPC-H Q18 (IN over a grouped subquery) — sql/tpch_queries.h.
// Each result (first rows, row count) is checked against the same SQL run
// in process by sql::Engine: equal row counts and equal order-independent
// checksums (the wrapping sum of a 64-bit FNV-1a hash of each row's
// formatted values) verify it. Then one memory table, stage by stage: where
// the bytes were held (pool held at the end / peak) and the process RSS /
// high-water mark, so a reader sees where the bytes went.
//
// The job composes the layers below it (datagen, sql, server, fetch, and
// bench/measure.h for /proc); it adds no mechanism of its own.
//
// Thread safety: one run at a time per root pool; a run starts the server
// (its HTTP workers) and the client's download threads, and stops them
// before it returns.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::job {

struct MainJobOptions {
  double scale = 0.1;                                        ///< TPC-H scale factor
  int64_t rows_shown = 5;                                    ///< first rows printed per result
  int64_t chunk_bytes = int64_t{512} << 10;                  ///< target uncompressed IPC bytes per CloudFetch chunk
  join::MemoryMode memory_mode = join::MemoryMode::kOnHeap;  ///< hash relations, server and check side
  int threads = 0;  ///< workers per pipeline of every statement (0 = the machine's hardware threads)
  /// Where the TPC-H files go (kept); empty: a temporary directory
  /// (quiver-demo-<pid> under the system's temp path), removed at the end.
  std::string tpch_dir;
  /// The quiver binary: the headline's fetches then run in a child process
  /// (`quiver bench fetch-client`), so the client's peak RSS is measured
  /// apart from the in-process server. Empty: in-process, pool peaks only.
  std::string client_exe;
};

/// One join, fetched and checked.
struct MainJobQuery {
  std::string label;  ///< "(a) orders JOIN lineitem, ..."
  std::string sql;
  int64_t rows = 0;        ///< through the server and the client
  int64_t chunks = 0;      ///< CloudFetch chunks consumed
  uint64_t checksum = 0;   ///< of the fetched rows
  int64_t local_rows = 0;  ///< in process (sql::Engine)
  uint64_t local_checksum = 0;
  bool verified = false;                ///< rows > 0 and both counts and checksums equal
  std::vector<std::string> first_rows;  ///< up to rows_shown, values joined by " | "
};

/// One row of the memory table. held/peak are text ("-" when not seen).
struct MainJobStage {
  std::string stage, pool, held, peak, detail;
  int64_t rss_bytes = -1, hwm_bytes = -1;  ///< VmRSS / VmHWM once the stage's query was done
};

/// One fetch-all of the headline (query (a) again, every batch kept).
struct MainJobFetchCost {
  std::string policy;             ///< fetch::ChunkPolicyName
  int64_t decoded_bytes = 0;      ///< IPC bytes after decompression
  int64_t client_peak_bytes = 0;  ///< the client's peak RSS increase (child process), else its pool's peak
  bool rss = false;               ///< client_peak_bytes is RSS (true) or the pool's peak (false)
  double seconds = 0;
};

struct MainJobResult {
  std::vector<MainJobQuery> queries;
  std::vector<MainJobStage> stages;
  MainJobFetchCost stream_mmap;  ///< the headline with quiver's policy
  MainJobFetchCost heap;         ///< the same fetch with the heap policy
};

/// "== headline: query (a) decodes to X; the client's peak ... is Y (R x of
/// the decoded size, policy stream-mmap) / the same fetch with the heap
/// policy: peak Z (...), K x quiver's" (the demo's last section). Pure.
std::string FormatMainJobHeadline(const MainJobResult& result);

/// Runs the job, writing its report to `out` as it goes (sections
/// "== TPC-H ...", "== server: ...", one per query with its first rows and
/// "verified" / "MISMATCH", the memory table, and "all results verified in
/// S s" or "VERIFICATION FAILED in S s"). Memory is charged to children of
/// `root`: "generate", "serve" (the server's pools below it), "fetch" (the
/// client), "check" (the in-process run). Errors: Invalid "demo: a result
/// differs from the in-process run" after the report when a query is not
/// verified; otherwise those of the generator, the server, the client and
/// the engine, returned at once.
Result<MainJobResult> RunMainJob(const MainJobOptions& options, const std::shared_ptr<MemoryPool>& root,
                                 std::FILE* out);

/// The memory table as printed by RunMainJob: a header, a rule, one line
/// per stage, columns padded and separated by " | ", trailing spaces cut.
std::string FormatStageTable(const std::vector<MainJobStage>& stages);

}  // namespace quiver::job
