// quiver/memory/spill_directory.h — the directories a quiver process spills
// into, and the sweep that removes those of dead processes (and other
// per-process directories: generated TPC-H data).
//
// Every spill directory a process makes is named
// "<root>/quiver-spill-<pid>-<n>" (pid: the owner's process id; n: a
// process-wide counter), mode 0700. A process killed before it could remove
// its directories (SIGKILL, a crash, a power cut) leaves them behind; the
// next server or `quiver sql` on the same root removes them at start-up
// (SweepDeadSpillDirectories): a directory is removed only when its whole
// name matches that pattern, it is a real directory (not a symlink) owned by
// this user, and its owner process is gone (kill(pid, 0) fails with ESRCH).
// Anything else under the root is never touched.
//
// Thread safety: all functions are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver {

/// $TMPDIR, or /tmp when it is unset or empty.
std::string DefaultSpillRoot();

/// The owner pid of a spill directory name ("quiver-spill-<pid>-<n>", the
/// last path component only; digits only, no sign, pid > 0 and within
/// pid_t), or -1 when `name` does not match the pattern exactly. Pure.
int64_t SpillDirectoryOwner(std::string_view name);

/// Makes "<root>/quiver-spill-<getpid()>-<n>" (mode 0700; `root` empty:
/// DefaultSpillRoot()) and returns its path. The root must exist. Errors:
/// IOError naming the path.
Result<std::string> MakeSpillDirectory(const std::string& root);

struct SpillSweepReport {
  int64_t directories = 0;  ///< removed
  int64_t bytes = 0;        ///< of the regular files in them
};

/// Removes the spill directories under `root` (empty: DefaultSpillRoot())
/// whose owner process is gone (see above). With `only_own`, removes this
/// process's own instead (whatever their state: the last resort of an
/// interrupted process). A root that does not exist is an empty sweep;
/// errors removing one directory skip it. Never follows symlinks.
SpillSweepReport SweepDeadSpillDirectories(const std::string& root, bool only_own = false);

/// The owner pid of a per-process directory named exactly "<prefix><pid>"
/// (digits only, no sign, pid > 0 and within pid_t; e.g. the generated
/// TPC-H directories "quiver-serve-tpch-<pid>"), or -1. Pure.
int64_t ProcessDirectoryOwner(std::string_view name, std::string_view prefix);

/// Removes the directories under `root` (empty: DefaultSpillRoot()) named
/// "<prefix><pid>" whose owner process is gone, under the same rules as
/// SweepDeadSpillDirectories (a real directory of this user, kill(pid, 0)
/// fails with ESRCH; never this process's own; never follows symlinks).
/// `prefix` must not be empty.
SpillSweepReport SweepDeadProcessDirectories(const std::string& root, std::string_view prefix);

}  // namespace quiver
