// quiver/job/main_job.h — the main job end to end (`quiver demo`): TPC-H
// generated at a scale, the result server started in process (127.0.0.1,
// an ephemeral port, a generated self-signed certificate, a random bearer
// token), and four statements fetched through quiver's CloudFetch client
// (LZ4 chunks, small enough that the large result has many):
//   (a) orders JOIN lineitem ON the order key, every line (a result larger
//       than the client's fetch window at the default scale);
//   (b) TPC-H Q3 (3-way join, aggregate, top-N); (c) TPC-H Q5 (6-way join);
//   (d) TPC-H Q18 (IN over a grouped subquery) — sql/tpch_queries.h.
// The report leads with (a): its rows, then what the client costs, each run
// in its own process (`quiver bench fetch-client`, so the RSS is the
// client's alone): streaming it (each batch dropped once read) and holding
// every batch under each chunk policy, as peak RSS against the decoded size.
// Each result is checked against the same SQL run in this process by
// sql::Engine on the same tables ("matches the in-process engine": equal row
// counts and equal order-independent checksums, the wrapping sum of a 64-bit
// FNV-1a hash of each row's formatted values). Then one memory table with
// the stages that moved (held / peak per pool, the process RSS / high-water
// mark where it changed).
//
// The job composes the layers below it (datagen, sql, server, fetch, and
// bench/measure.h, bench/child_process.h for /proc and the child client); it
// adds no mechanism of its own.
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
  /// The client's download window (bytes reserved for files in flight plus
  /// decoded bytes not yet consumed) and parallel downloads: `quiver
  /// query`'s defaults.
  int64_t window_bytes = int64_t{64} << 20;
  int parallel = 8;
  /// The quiver binary: the client runs of (a) then happen in child
  /// processes (`quiver bench fetch-client`), so the client's peak RSS is
  /// measured apart from the in-process server. Empty: in process, the
  /// client pool's peak only.
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
  std::vector<std::string> columns;     ///< the result's column names
  std::vector<std::string> first_rows;  ///< up to rows_shown, as printed: cells padded to the column widths
  int64_t decoded_bytes = 0;            ///< IPC bytes the client decoded (0 when the result came inline)
  int64_t downloaded_bytes = 0;         ///< LZ4 chunk bytes the client downloaded
};

/// One row of the memory table. held/peak are text ("-" when not seen);
/// peak_bytes is the same peak as a number (-1 when not seen), which decides
/// whether the stage moved (RunMainJob keeps stages with at least 1 KiB).
struct MainJobStage {
  std::string stage, pool, held, peak, detail;
  int64_t rss_bytes = -1, hwm_bytes = -1;  ///< VmRSS / VmHWM once the stage's query was done
  int64_t peak_bytes = -1;
};

/// One client run over query (a): streaming ("stream": each batch dropped
/// once read) or holding every batch ("fetchall"), under one chunk policy.
struct MainJobFetchCost {
  std::string mode;               ///< "stream" or "fetchall"
  std::string policy;             ///< fetch::ChunkPolicyName
  int64_t rows = 0;               ///< rows the run fetched
  int64_t decoded_bytes = 0;      ///< IPC bytes after decompression
  int64_t client_peak_bytes = 0;  ///< the client's peak RSS increase (child process), else its pool's peak
  bool rss = false;               ///< client_peak_bytes is RSS (true) or the pool's peak (false)
  double seconds = 0;             ///< the query to its last batch
};

struct MainJobResult {
  std::vector<MainJobQuery> queries;
  std::vector<MainJobStage> stages;  ///< the stages that moved (a peak of 1 KiB or more), in order
  MainJobFetchCost streaming;        ///< (a) streamed, policy stream-mmap
  /// (a) with every batch held: policies stream-mmap, mmap-after, heap.
  std::vector<MainJobFetchCost> holding;
  int64_t window_bytes = 0;  ///< the client's window in these runs
};

/// The client runs of (a) as the report prints them: a line naming the
/// decoded size against the window, then one line per run (what was held,
/// the peak, its ratio to the decoded size, seconds). Pure.
std::string FormatFetchCosts(const MainJobResult& result);

/// The report's last section: "== headline: streaming a result of X (R x the
/// W window) peaked at P of client RSS (Q x its decoded size); holding all
/// of it costs A (policy) to B (policy)". Pure.
std::string FormatMainJobHeadline(const MainJobResult& result);

/// `first_rows` of a result (cells, one vector per row) with the column
/// names as a header, cells padded to each column's width and separated by
/// " | "; cells longer than `max_cell_chars` are cut with "...", and columns
/// past `max_line_chars` are left out, the header then ending in "| ... (+N
/// columns)". One line per row, header first, no trailing spaces. Pure.
std::vector<std::string> FormatAlignedRows(const std::vector<std::string>& columns,
                                           const std::vector<std::vector<std::string>>& rows,
                                           size_t max_cell_chars = 24, size_t max_line_chars = 110);

/// Runs the job, writing its report to `out` as it goes: "== TPC-H ...",
/// "== server: ...", "== 1. ..." (query (a), its rows, "matches the
/// in-process engine" or "MISMATCH", the client runs), "== 2. ..." (the
/// TPC-H queries likewise), "== 3. memory ..." (the stages that moved), the
/// headline, and "all 4 results match the in-process engine (S s)" or
/// "MISMATCH ...". Memory is charged to children of `root`: "generate",
/// "serve" (the server's pools below it), "fetch" (the client), "check"
/// (the in-process run). Errors: Invalid "demo: a result differs from the
/// in-process run" after the report when a query does not match; otherwise
/// those of the generator, the server, the client (a child client that
/// fails: IOError with its output) and the engine, returned at once.
Result<MainJobResult> RunMainJob(const MainJobOptions& options, const std::shared_ptr<MemoryPool>& root,
                                 std::FILE* out);

/// The memory table as printed by RunMainJob: a header, a rule, one line
/// per stage, columns padded and separated by " | ", trailing spaces cut;
/// the RSS and HWM cells are left blank where they equal the row above's.
std::string FormatStageTable(const std::vector<MainJobStage>& stages);

}  // namespace quiver::job
