// quiver/bench/child_process.h — the child processes the benchmarks start
// and measure from outside: `quiver serve` (ServerProcess, read from its
// banner), measured clients whose last stdout line is a JSON object
// (RunCapture + LastJson), and another process's CPU time and resident
// memory from /proc.
//
// Thread safety: the functions may be called from any thread; a
// ServerProcess is used by one thread (its destructor stops the child).
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "quiver/base/result.h"

namespace quiver::bench {

/// Starts argv as a child process whose stdout is a pipe; returns its pid and
/// the pipe's read end in *stdout_fd (the caller closes it and reaps the
/// child). stderr passes through unless `silence_stderr` (then /dev/null).
/// `search_path`: the program is looked up in PATH (execvp) rather than
/// taken as a path (execv). Errors: IOError when pipe or fork fails (a
/// program that cannot be run exits 127).
Result<pid_t> SpawnWithStdoutPipe(const std::vector<std::string>& argv, bool silence_stderr, bool search_path,
                                  int* stdout_fd);

/// Starts argv (looked up in PATH) with its stdin and stdout as pipes and
/// its stderr joined to stdout; returns its pid, the write end of its
/// stdin in *stdin_fd and the read end of its stdout in *stdout_fd (the
/// caller closes both and reaps the child). The child is killed (SIGKILL)
/// when the calling thread's process dies. Errors as SpawnWithStdoutPipe.
Result<pid_t> SpawnWithPipes(const std::vector<std::string>& argv, int* stdin_fd, int* stdout_fd);

/// Runs argv (looked up in PATH) to its end; returns (exit status, or 128 +
/// signal; everything it wrote to stdout). stderr passes through. Errors as
/// SpawnWithStdoutPipe.
Result<std::pair<int, std::string>> RunCapture(const std::vector<std::string>& argv);

/// The last line of `out` that parses as a JSON object. Invalid naming
/// `what` (and the start of `out`) when there is none.
Result<nlohmann::ordered_json> LastJson(const std::string& out, const std::string& what);

/// `quiver serve` as a child process; stopped (SIGTERM, then reaped) on
/// destruction. Move-only.
struct ServerProcess {
  pid_t pid = -1;
  int port = 0;
  std::string path;  ///< the warehouse HTTP path, e.g. /sql/1.0/warehouses/quiver
  std::string cert;  ///< the PEM certificate the server uses (trust it as a CA)

  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess();
  /// https://127.0.0.1:PORT/PATH.
  std::string url() const;
  /// Stops the child now (idempotent).
  void Stop();
};

/// Starts `argv` (a quiver executable's path and `serve` options; stderr
/// silenced) and waits for its "ready" line; fills *server from the banner
/// (port, path, certificate). Errors: IOError when it exits first or the
/// banner lacks a field (with what it printed).
Status StartServer(const std::vector<std::string>& argv, ServerProcess* server);

/// A byte value of /proc/PID/status, e.g. "VmRSS" (the file gives kB; this
/// returns bytes); -1 when the key or the process is gone.
int64_t ProcStatusBytesOf(pid_t pid, const char* key);

/// CPU seconds (user + system, every thread) process `pid` has used, from
/// /proc/PID/stat; -1 when unreadable.
double ProcessCpuSecondsOf(pid_t pid);

}  // namespace quiver::bench
