// quiver CLI — SIGINT / SIGTERM for the commands that run a statement
// (`quiver sql`, `quiver query`) or serve (`quiver serve`): the signal is
// caught, the work in progress is cancelled, and whatever the command wrote
// for itself (spill directories, the temporary file of -o, generated TPC-H
// data) is removed before it exits 130 with one line, "interrupted", on
// stderr.
//
// How: the handler (async-signal-safe: one write(2)) puts the signal number
// into a self-pipe; a watcher thread reads it and sets the cancel flag that
// the command handed to its statement (sql::ExecuteOptions::cancel,
// job::QueryJobOptions::interrupt). The command's own thread then unwinds
// with Cancelled and its destructors remove what it made. Should it not
// finish within the grace period (it is blocked somewhere that does not
// poll the flag: generating TPC-H data, a full pipe), or at a second
// signal, the watcher runs the registered cleanups itself, writes
// "interrupted" and calls _exit(130).
//
// Thread safety: all methods are thread-safe. One InterruptGuard at a time
// per process.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "quiver/base/result.h"

namespace quiver::cli {

/// The grace period of `quiver sql` and `quiver query`: after the first
/// signal the statement (which polls its cancel flag at every batch) has
/// this long to unwind before the guard removes its files and exits for it.
inline constexpr int kInterruptGraceMs = 5000;

class InterruptGuard {
 public:
  /// Installs handlers of SIGINT and SIGTERM (SA_RESTART; one the process
  /// inherited as ignored stays ignored) and starts the watcher. `grace_ms`: how long the command may take to unwind
  /// after the first signal before the watcher exits for it (< 0: never; then only a second signal does). Errors:
  /// IOError when the pipe or the handlers cannot be set up; Invalid when a guard is installed already.
  static Result<std::unique_ptr<InterruptGuard>> Install(int grace_ms);
  /// Restores the earlier handlers and stops the watcher.
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// Set at the first signal; pass it as the statement's cancel flag.
  const std::shared_ptr<std::atomic<bool>>& flag() const { return flag_; }
  bool interrupted() const { return flag_->load(); }
  /// Changes the grace period (e.g. `quiver serve` once it is ready: a
  /// signal is then its normal stop, -1).
  void set_grace_ms(int grace_ms) { grace_ms_.store(grace_ms); }

  /// Registers `fn` to run on the watcher thread if it must exit for the
  /// command (it must not wait for the command's thread); returns an id
  /// for RemoveCleanup.
  int AddCleanup(std::function<void()> fn);
  void RemoveCleanup(int id);

 private:
  InterruptGuard() = default;
  void Watch();
  [[noreturn]] void ExitNow();

  std::shared_ptr<std::atomic<bool>> flag_ = std::make_shared<std::atomic<bool>>(false);
  std::atomic<int> grace_ms_{-1};
  int pipe_[2] = {-1, -1};
  std::thread watcher_;
  std::mutex mu_;
  std::map<int, std::function<void()>> cleanups_;
  int next_id_ = 0;
};

/// Removes the temporary file that OpenOutputFile made beside `target`
/// ("<dir>/.<name>.quiver-tmp-XXXXXX") and that this process holds open
/// (found through /proc/self/fd; another process's is never touched).
/// For InterruptGuard cleanups; errors are ignored.
void RemoveOwnTemporaryOutput(const std::string& target);

}  // namespace quiver::cli
