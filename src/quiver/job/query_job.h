// quiver/job/query_job.h — the client side of `quiver query`: one SQL
// statement on a Databricks SQL-protocol server (quiver serve, or a
// warehouse), its result fetched with quiver's CloudFetch client
// (quiver/fetch/fetch_result.h) and written as text rows
// (quiver/columnar/row_text.h) or as an Arrow IPC file written atomically
// (temp file + rename); an optional progress line, a summary and a memory
// report at the end.
//
// Thread safety: one run at a time per root pool; the run starts a watcher
// thread (progress, interruption) and the client's download threads, and
// joins them before it returns. `interrupt` may be set from any thread or a
// signal handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/columnar/row_text.h"
#include "quiver/compression/codec.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/formats/csv/csv_writer.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::job {

struct QueryJobOptions {
  std::string server_url;    ///< https://HOST:PORT/PATH (the warehouse HTTP path)
  std::string token;         ///< bearer token; never printed
  std::string ca_cert_path;  ///< PEM of a CA to trust (empty: the system's)
  bool insecure = false;     ///< do NOT verify TLS certificates and host names
  /// OpenSession's configuration (fetch::ConnectionOptions::session_configuration).
  std::map<std::string, std::string> session_configuration;
  std::string sql;  ///< the statement
  /// Text rows on `rows_out` when output_path is empty or "-".
  RowTextFormat format = RowTextFormat::kTable;
  /// An Arrow IPC file to write the result to (OUTPUT.tmp-<pid>, renamed
  /// to OUTPUT once complete; removed on failure).
  std::string output_path;
  CompressionType compression = CompressionType::kNone;  ///< IPC body codec of output_path
  /// Write output_path as Parquet with these options (their pool is the
  /// job's "write" pool, set by the job) instead of Arrow IPC.
  bool output_parquet = false;
  parquet::WriterOptions parquet;
  /// Write output_path as CSV text (formats/csv/csv_writer.h; compressed by
  /// the path's extension, .gz / .zst) instead of Arrow IPC.
  bool output_csv = false;
  int64_t window_bytes = int64_t{64} << 20;                     ///< download window (> 0; see DownloadOptions)
  int parallel = 8;                                             ///< files downloading at once (>= 1)
  fetch::ChunkPolicy policy = fetch::ChunkPolicy::kStreamMmap;  ///< chunk memory
  int retries = 4;                                              ///< retries per chunk (>= 0)
  /// Check the LZ4 frames' checksums of every chunk (default). false skips
  /// them for chunks received over TLS (DownloadOptions::verify_lz4_checksums).
  bool verify_lz4_checksums = true;
  /// Stop after this many rows (< 0: all): no chunk past the limit is
  /// requested or downloaded (DownloadOptions::row_limit), and the operation
  /// is cancelled on the server once the rows are written.
  int64_t limit = -1;
  bool hold = false;      ///< keep every batch until the end (measures fetch-all memory)
  bool progress = false;  ///< redraw "\r<done>/<known> chunks, MB/s, rows" on `log` every 100 ms
  bool report = true;     ///< the summary and memory lines on `log` at the end
  /// Polled every 100 ms: once true the operation is cancelled on the server
  /// and the run ends with Cancelled. Borrowed; may be null.
  const std::atomic<bool>* interrupt = nullptr;
};

/// What the run fetched and held (filled as far as the run got).
struct QueryJobSummary {
  int64_t rows = 0;              ///< rows written (after the limit)
  int64_t chunks = 0;            ///< chunks consumed
  int64_t downloaded_bytes = 0;  ///< wire bytes
  int64_t decoded_bytes = 0;     ///< IPC bytes after decompression
  int64_t retries = 0, refreshes = 0;
  double seconds = 0;             ///< wall time of the run
  int64_t window_peak_bytes = 0;  ///< highest download window use
  int64_t pool_held_bytes = 0;    ///< the client pool ("fetch") at the end
  int64_t pool_peak_bytes = 0;
  int64_t mapped_peak_bytes = 0;  ///< fetch::GetMappingStats()
  int64_t heap_fallbacks = 0;
  int64_t lz4_checksums_skipped = 0;     ///< chunks whose LZ4 checksums were not checked
  int64_t peak_rss_increase_bytes = -1;  ///< VmHWM at the end - VmRSS at the start; -1 unknown
};

/// Runs the statement and writes the result: text rows (WriteHeader, then
/// each batch) on `rows_out`, or the IPC file. Progress and the report go to
/// `log`: "quiver query: N rows, C chunks, ... s[ (R MB/s)]" (followed by
/// "; LZ4 checksums skipped on K chunks (TLS)" when K > 0) and the memory
/// report of FormatQueryMemoryReport (both also after a failure once the
/// statement ran). Memory is charged to children "fetch" and "write" of
/// `root`. `summary` (may be null) receives the numbers of the report.
/// Errors: those of the query and the download (fetch::FetchResult), of
/// writing the file (IOError naming it, "cannot rename ..."), Cancelled when
/// `interrupt` was set; reaching `limit` is not an error.
/// The memory report, three lines: "memory: peak RSS increase X for Y
/// decoded = R x (...)" (the headline: the process's peak RSS above its RSS
/// at the start, against the decompressed bytes of the result), then the
/// window (its limit x parallel, and its peak, in reservations: expected
/// decoded bytes of files in flight and decoded bytes not yet consumed), then
/// the client pool, chunk mappings and policy. Pure.
std::string FormatQueryMemoryReport(const QueryJobSummary& summary, const QueryJobOptions& options);

Status RunQueryJob(const QueryJobOptions& options, const std::shared_ptr<MemoryPool>& root, std::FILE* rows_out,
                   std::FILE* log, QueryJobSummary* summary = nullptr);

}  // namespace quiver::job
