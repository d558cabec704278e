// quiver/bench/fetch_bench.h — the benchmark behind `quiver bench fetch`:
// the fetch path's memory and throughput, side by side in one run (issue 8,
// "Benchmark"). A generated lineitem result (scale_gib GiB of Arrow IPC,
// decoded) is served by `quiver serve` (a child process, loopback TLS,
// chunk_bytes LZ4 chunks) and fetched:
//   fetchall  the whole table kept, per policy (heap = the seed's "before",
//             mmap-after = the seed's "after", stream-mmap = quiver's default)
//   repeat    four fetchall back to back in one process, each released first
//   stream    each batch consumed and dropped, at two result sizes
//   curl      `curl --parallel` of the same links to /dev/null, same TLS
//             (the whole result and the half one)
//   node      the real @databricks/sql Node client's fetchAll
// Each quiver measurement runs in a fresh process (`quiver bench
// fetch-client`, which calls RunFetchClient) so that its peak RSS (VmHWM
// minus VmRSS just before the fetch) is its own; the server's memory is in
// another process.
//
// Ratios: peak_to_table = peak RSS increase / decoded table bytes (stream:
// / window); curl_ratio = curl's seconds for the same statement (the whole
// result, or the half one of the half stream cases: curl runs both) /
// quiver's seconds for one fetch of it (quiver's throughput relative to
// curl on the same links: >= 0.9 is the target); node_ratio
// = Node seconds per byte / quiver seconds per byte (>= 3 is the target).
// Every time is end to end: ExecuteStatement, FetchResults paging and the
// downloads (curl's time includes collecting its links through the
// protocol). One unmeasured run of the statement warms the server first.
//
// Thread safety: RunFetchBench sets QUIVER_TOKEN in the process environment
// (its children read it) and starts child processes: one run per process at
// a time. RunFetchClient: one per process at a time (it resets the
// process's RSS high-water mark and the mapping counters).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

// ---- the client side: one measured fetch in this process ----

struct FetchClientOptions {
  std::string server_url;              ///< https://HOST:PORT/PATH of the server
  std::string token;                   ///< bearer token
  std::string ca_cert_path;            ///< PEM of the CA to trust (empty: the system's)
  std::string sql;                     ///< the statement
  std::string policy = "stream-mmap";  ///< chunk policy (fetch::ParseChunkPolicy)
  /// "fetchall" (keep every batch), "repeat" (`repeat` fetchall rounds, each
  /// released before the next) or "stream" (each batch dropped at once).
  std::string mode = "fetchall";
  int64_t window_bytes = int64_t{256} << 20;  ///< download window
  int parallel = 8;                           ///< files downloading at once
  bool verify_lz4_checksums = true;           ///< false: DownloadOptions::verify_lz4_checksums off (TLS only)
  int repeat = 4;                             ///< rounds of mode "repeat"
};

struct FetchClientRun {
  int64_t rows = 0;
  double seconds = 0;            ///< wall time of the round (query to the last batch)
  int64_t held_after_bytes = 0;  ///< the client pool's held bytes once the round's batches are gone
};

struct FetchClientMeasurement {
  std::vector<FetchClientRun> runs;     ///< one per round (at least one)
  double seconds = 0;                   ///< every round together
  int64_t decoded_bytes = 0;            ///< IPC bytes decoded by the last round
  int64_t wire_bytes = 0;               ///< bytes downloaded by the last round
  int64_t rss_baseline_bytes = 0;       ///< VmRSS just before the first round
  int64_t hwm_bytes = 0;                ///< VmHWM after the last round
  int64_t peak_rss_increase_bytes = 0;  ///< hwm_bytes - rss_baseline_bytes
  int64_t pool_peak_bytes = 0;          ///< the client pool's peak
  int64_t held_after_bytes = 0;         ///< the client pool's held bytes at the end
  int64_t mapped_peak_bytes = 0;        ///< fetch::GetMappingStats().peak_mapped_bytes
  int64_t window_peak_bytes = 0;        ///< highest download window use of any round
};

/// Runs `options.sql` through fetch::FetchResult once (or `repeat` times),
/// charging the client to a child "fetch" of `root`. The RSS high-water mark
/// is reset to the current RSS first (/proc/self/clear_refs, when the kernel
/// allows) and the mapping peak too. Errors: those of the query and the
/// download (fetch::FetchResult), Invalid for an unknown policy.
Result<FetchClientMeasurement> RunFetchClient(const FetchClientOptions& options,
                                              const std::shared_ptr<MemoryPool>& root);

/// One JSON object on one line (no newline), what `quiver bench fetch-client`
/// prints and RunFetchBench reads: {"rows" (of the last round), "runs":
/// [{"rows", "seconds", "held_after"}], "seconds", "decoded_bytes",
/// "wire_bytes", "rss_baseline", "hwm", "peak_rss_increase", "pool_peak",
/// "held_after", "mapped_peak", "window_peak"}; bytes as integers.
std::string FetchClientJson(const FetchClientMeasurement& m);

// ---- the driver ----

struct FetchBenchOptions {
  /// The quiver executable, started as `serve` and `bench fetch-client`
  /// (another build's, to measure it with this harness).
  std::string quiver_path;
  double scale_gib = 1.5;                   ///< decoded GiB of the generated result (>= 1 MiB)
  int64_t chunk_bytes = int64_t{20} << 20;  ///< uncompressed bytes per served chunk
  std::string window = "256MiB";            ///< download window of every quiver case (ParseBytes text)
  int parallel = 8;                         ///< parallel downloads of quiver and curl
  bool verify_lz4_checksums = true;         ///< false: every quiver case skips the LZ4 checksums (TLS)
  bool check = false;                       ///< also check each result row's JSON (parses, every field, finite numbers)
  bool no_curl = false;                     ///< skip curl
  bool no_node = false;                     ///< skip the Node client
  std::string curl = "curl";                ///< curl program (PATH lookup by the shell)
  std::string node = "node";                ///< node program (PATH lookup)
  std::string node_script;                  ///< bench/databricks_fetchall.mjs
  double node_max_gib = 0.5;                ///< Node reads at most this many decoded GiB (LIMIT)
  std::string keep_dir;                     ///< work here and keep it (empty: a /tmp directory, removed)
};

/// One result row (a case and policy); an absent value prints as "-" / null.
struct FetchBenchRow {
  std::string kase;                   ///< "fetchall", "repeat", "stream" or "curl"
  std::optional<std::string> policy;  ///< chunk policy, "node", or none (curl)
  std::optional<double> table_mib, peak_mib, peak_to_table, seconds, mb_per_s, curl_s, curl_ratio, node_s, node_ratio;
  std::optional<double> rows_per_s;
  std::string note;
};

struct FetchBenchResult {
  int64_t table_rows = 0;           ///< rows of the generated lineitem
  int64_t table_bytes = 0;          ///< decoded IPC bytes of the whole result
  std::vector<FetchBenchRow> rows;  ///< in run order
  /// Broken expectations (row counts, pool bytes left, the stream peak bound
  /// 1.1 x min(window, result) + 32 MiB + one chunk, curl's or Node's exit
  /// status and rows; with `check` also the JSON rows), each also printed to
  /// `log` as "bench fetch: CHECK FAILED: ..." when found.
  std::vector<std::string> failures;
};

/// Runs the whole benchmark: generates the table (child pool "gen" of
/// `root`), starts the server, runs the quiver cases in child processes,
/// then curl and Node unless skipped; progress lines go to `log`. Errors:
/// Invalid for a bad window or a scale under 1 MiB, IOError when a process
/// cannot start or a quiver client exits non-zero, Invalid when a client
/// prints no JSON line. A curl or Node failure is a `failures` entry (Node
/// exiting 77, not installed, is a note on `log`).
Result<FetchBenchResult> RunFetchBench(const FetchBenchOptions& options, const std::shared_ptr<MemoryPool>& root,
                                       std::FILE* log);

/// One JSON object (one line, no newline) of a row: "case", "policy",
/// "table_mib", "peak_rss_increase_mib", "peak_to_table", "seconds",
/// "mb_per_s", "curl_seconds", "curl_ratio", "node_seconds", "node_ratio",
/// "rows_per_s", and "note" when not empty.
std::string FetchBenchRowJson(const FetchBenchRow& row);

/// The report: with `json` one FetchBenchRowJson line per row; otherwise a
/// title line, a fixed-width table and a legend line. `options` is the run's
/// (window text, chunk bytes, parallel).
std::string FetchBenchReport(const FetchBenchResult& result, const FetchBenchOptions& options, bool json);

}  // namespace quiver::bench
