// quiver/bench/serve_bench.h — the benchmark behind `quiver bench serve`:
// `quiver serve` measured from outside (issue 19's figures), side by side in
// one run for each allocator the server offers (`quiver --allocator A
// serve`, one child process per allocator, same table, same options):
//   small query   the 5-row query ("SELECT * FROM lineitem LIMIT 5": execute
//                 with direct results, rows, close), median and p90 of `runs`
//                 on one session and connection;
//   burst         the server's RSS `settle_seconds` after one large statement
//                 ("SELECT * FROM lineitem", every row fetched through the
//                 CloudFetch client) and after `burst` more run at once (the
//                 server hands freed memory back at its sweep);
//   download      `clients` large statements executed at once, every link
//                 fetched by `curl --parallel` over loopback TLS: MB/s of the
//                 bytes served and the server's CPU seconds per GB served
//                 (/proc/PID/stat while curl runs; bytes from /metrics);
//   idle          `idle_tcp` TCP connections that send nothing (from
//                 127.0.0.2) and `slow_tls` TLS clients that sent one header
//                 byte (from 127.0.0.3), held together: how many the server
//                 holds (/metrics), its RSS per held connection, and the
//                 5-row query's median (from 127.0.0.1) while they are held.
// The measurement of bench/serve_compare.mjs (the Node driver's view),
// brought into the CLI with quiver's own client.
//
// Thread safety: RunServeBench sets QUIVER_TOKEN in the process environment
// (its server children read it) and starts child processes and client
// threads: one run per process at a time.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

struct ServeBenchOptions {
  /// The quiver executable started as `quiver --allocator A serve` (required;
  /// another build's, to compare two builds with the same measurement).
  std::string quiver_path;
  /// Allocators to serve with, in order; empty = every allocator this build
  /// offers (system, jemalloc, mimalloc, mmap: those GetAllocator gives).
  std::vector<std::string> allocators;
  int64_t rows = 1000000;                   ///< lineitem rows (1M ~ 170 MiB of IPC)
  int64_t chunk_bytes = int64_t{20} << 20;  ///< target IPC bytes per chunk (quiver serve --chunk-bytes)
  bool lz4 = true;                          ///< LZ4-framed chunks (false: quiver serve --no-lz4)
  int runs = 30;                            ///< 5-row query runs per median (>= 1)
  int clients = 4;                          ///< download: large statements executed at once (>= 1)
  int parallel = 10;                        ///< curl --parallel-max (like the Databricks drivers)
  std::string curl = "curl";                ///< curl program (looked up in PATH by the shell)
  int idle_tcp = 256;                       ///< idle TCP connections held (>= 0)
  int slow_tls = 64;                        ///< TLS clients held after one header byte (>= 0)
  int burst = 12;                           ///< large statements run at once after the first (>= 1)
  /// Download window of each large statement's client, in bytes.
  int64_t window_bytes = int64_t{32} << 20;
  /// Wait after statements end before reading the server's RSS, in seconds
  /// (quiver serve trims freed memory one sweep, 1 s, after they end).
  double settle_seconds = 2.5;
  /// Record broken expectations (ServeBenchResult::failures): row counts,
  /// idle connections not all held, the 5-row query failing while they are,
  /// nothing served.
  bool check = false;
};

/// One allocator's figures; -1 (or a negative time) where a phase did not run.
struct ServeBenchServerResult {
  std::string allocator;
  double small_ms_median = -1, small_ms_p90 = -1;  ///< the 5-row query, milliseconds
  int64_t rss_start_bytes = -1;                    ///< server RSS after start-up and the small queries
  int64_t rss_after_first_bytes = -1;              ///< settle_seconds after one large statement
  int64_t rss_after_burst_bytes = -1;              ///< settle_seconds after `burst` more at once
  int64_t rss_peak_bytes = -1;                     ///< server VmHWM after the burst
  int64_t files = 0;                               ///< download: links fetched by curl
  int64_t served_bytes = 0;                        ///< download: bytes the server sent (/metrics download_bytes)
  double curl_seconds = -1;                        ///< download: curl's wall time
  double server_cpu_seconds = -1;                  ///< download: server CPU while curl ran
  int64_t idle_requested = 0;                      ///< idle_tcp + slow_tls
  int64_t idle_held = -1;                          ///< connections the server held (its /metrics, less ours)
  int64_t rss_before_idle_bytes = -1, rss_with_idle_bytes = -1;
  double small_ms_median_with_idle = -1;  ///< the 5-row query while they are held, milliseconds
  int small_ok_with_idle = 0;             ///< of those runs, how many returned the 5 rows
};

struct ServeBenchResult {
  ServeBenchOptions options;  ///< what ran (allocators filled in)
  int64_t table_rows = 0;
  int64_t table_ipc_bytes = 0;                  ///< bytes of the lineitem stream file served
  std::vector<ServeBenchServerResult> servers;  ///< one per allocator, in order
  /// Broken expectations (with `check`), each naming the allocator.
  std::vector<std::string> failures;
};

/// Generates lineitem (`rows`, charged to a child "gen" of `root`) into a
/// temporary directory (removed at the end, also on error), then measures
/// one server per allocator as in the file comment; progress lines go to
/// `log`. Errors: Invalid for bad options (an unknown or unavailable
/// allocator, runs/clients/burst < 1, negative idle counts, no quiver_path)
/// before any work; IOError when a server does not start, curl fails, or
/// sockets cannot be opened; the client's errors (fetch::FetchResult,
/// ProtocolClient) with the phase as context.
Result<ServeBenchResult> RunServeBench(const ServeBenchOptions& options, const std::shared_ptr<MemoryPool>& root,
                                       std::FILE* log);

/// The report of `quiver bench serve`: a title line (rows, IPC bytes,
/// chunks, lz4, the counts used), then one row per figure with one column
/// per allocator: the 5-row query median and p90 (ms), RSS after the first
/// large statement and after the burst (MiB) and their difference, the
/// server's peak RSS, download MB/s and CPU s per GB served, idle
/// connections held of requested, RSS per held connection (KiB), the 5-row
/// query median while they are held; "-" where a value is missing. MB =
/// 1e6 bytes, MiB = 2^20. `json_lines`: one JSON object per allocator
/// instead, with the fields of ServeBenchServerResult. Pure.
std::string ServeBenchReport(const ServeBenchResult& result, bool json_lines = false);

}  // namespace quiver::bench
