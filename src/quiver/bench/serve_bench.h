// quiver/bench/serve_bench.h — the benchmark behind `quiver bench serve`:
// loopback TLS download throughput of the CloudFetch chunk files that
// quiver's result server writes, fetched by curl (`curl --parallel`), side
// by side with a plain memory copy of the same bytes; the server's CPU per
// GB served; the server's pool and store metrics after C clients fetched
// the whole result at once.
//
// The RPCs go through the service in process (Thrift binary messages, as
// over HTTPS); the downloads are real HTTPS GETs over loopback.
//
// Thread safety: one run at a time per root pool; a run starts a server
// (its HTTP workers), one thread per client and a curl child process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::bench {

struct ServeBenchOptions {
  int64_t rows = 1000000;                   ///< lineitem rows (1M ~ 170 MiB of IPC)
  int clients = 4;                          ///< concurrent clients fetching the whole result
  int64_t chunk_bytes = int64_t{20} << 20;  ///< target IPC bytes per chunk
  int parallel = 10;                        ///< curl --parallel-max
  bool lz4 = true;                          ///< LZ4-framed chunks (false: raw IPC)
  std::string curl = "curl";                ///< the curl program (looked up in PATH by the shell)
};

struct ServeBenchResult {
  ServeBenchOptions options;      ///< what ran
  int64_t files = 0;              ///< chunk files of all clients' results
  int64_t ipc_bytes = 0;          ///< IPC bytes of the chunks (the links' bytesNum), all clients
  int64_t served_bytes = 0;       ///< bytes of the chunk files as served (compressed when lz4)
  double execute_seconds = 0;     ///< wall time of the clients' execute + link collection
  double curl_seconds = 0;        ///< wall time of curl fetching every file to /dev/null
  double copy_seconds = 0;        ///< wall time of a memcpy of the same bytes (the floor)
  double server_cpu_seconds = 0;  ///< this process's CPU time while curl ran (the server's)
  std::string metrics_text;       ///< ResultServer::MetricsText() once curl is done
};

/// Generates lineitem (`rows`) into a temporary directory (/tmp, removed at
/// the end, also on error), serves it with a ResultServer (memory charged to
/// children "gen" and "serve" of `root`; chunk store budget 8 GiB), lets
/// `clients` clients execute "SELECT * FROM lineitem" at once and collect
/// every link, copies the files' bytes once in memory, then runs curl over
/// all links. Errors: IOError when the directory cannot be made or curl
/// fails (naming its command line), the client's error with context
/// "bench serve: client", and those of the generator and the server.
Result<ServeBenchResult> RunServeBench(const ServeBenchOptions& options, const std::shared_ptr<MemoryPool>& root);

/// The report of `quiver bench serve`: five lines (rows, clients, files,
/// lz4; bytes and execute time; curl MB/s; memory copy MB/s and the
/// curl/copy ratio; server CPU per GB served), then metrics_text. MB = 1e6
/// bytes.
std::string ServeBenchReport(const ServeBenchResult& result);

}  // namespace quiver::bench
