// quiver/memory/spill_directory.cc — see spill_directory.h.
#include "quiver/memory/spill_directory.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

namespace quiver {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "quiver-spill-";

// Digits only (at least one, at most 18: no overflow), as a number; -1 otherwise.
int64_t Digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Bytes of the regular files under `dir` (not following symlinks).
int64_t TreeBytes(const std::string& dir) {
  int64_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && !it->is_symlink(e2)) {
      const auto size = it->file_size(e2);
      if (!e2) bytes += static_cast<int64_t>(size);
    }
  }
  return bytes;
}

}  // namespace

std::string DefaultSpillRoot() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

int64_t SpillDirectoryOwner(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  name.remove_prefix(kPrefix.size());
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos) return -1;
  const int64_t pid = Digits(name.substr(0, dash));
  if (Digits(name.substr(dash + 1)) < 0) return -1;
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return -1;
  return pid;
}

Result<std::string> MakeSpillDirectory(const std::string& root) {
  static std::atomic<int64_t> counter{0};
  const std::string base = root.empty() ? DefaultSpillRoot() : root;
  while (true) {
    const std::string dir =
        base + "/" + std::string(kPrefix) + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    if (::mkdir(dir.c_str(), 0700) == 0) return dir;
    // EEXIST: left by an earlier process with the same pid; take the next n.
    if (errno != EEXIST)
      return Status::IOError("spill: cannot create directory '" + dir + "': " + std::strerror(errno));
  }
}

namespace {

// The sweep of both kinds: `owner_of` gives a name's owner pid or -1.
template <typename OwnerOf>
SpillSweepReport SweepDirectories(const std::string& root, bool only_own, OwnerOf owner_of) {
  SpillSweepReport report;
  const std::string base = root.empty() ? DefaultSpillRoot() : root;
  DIR* d = ::opendir(base.c_str());
  if (d == nullptr) return report;
  std::vector<std::string> doomed;
  const pid_t self = ::getpid();
  const uid_t uid = ::geteuid();
  while (dirent* ent = ::readdir(d)) {
    const int64_t owner = owner_of(std::string_view(ent->d_name));
    if (owner < 0) continue;
    const std::string path = base + "/" + ent->d_name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid) continue;
    if (only_own) {
      if (owner == self) doomed.push_back(path);
      continue;
    }
    if (owner == self) continue;
    // Gone only when the kernel says there is no such process (EPERM: it
    // lives, under another user).
    if (::kill(static_cast<pid_t>(owner), 0) == 0 || errno != ESRCH) continue;
    doomed.push_back(path);
  }
  ::closedir(d);
  for (const auto& path : doomed) {
    const int64_t bytes = TreeBytes(path);
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) continue;
    ++report.directories;
    report.bytes += bytes;
  }
  return report;
}

}  // namespace

SpillSweepReport SweepDeadSpillDirectories(const std::string& root, bool only_own) {
  return SweepDirectories(root, only_own, [](std::string_view name) { return SpillDirectoryOwner(name); });
}

int64_t ProcessDirectoryOwner(std::string_view name, std::string_view prefix) {
  if (prefix.empty() || name.substr(0, prefix.size()) != prefix) return -1;
  const int64_t pid = Digits(name.substr(prefix.size()));
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return -1;
  return pid;
}

SpillSweepReport SweepDeadProcessDirectories(const std::string& root, std::string_view prefix) {
  if (prefix.empty()) return {};
  return SweepDirectories(root, false, [prefix](std::string_view name) { return ProcessDirectoryOwner(name, prefix); });
}

}  // namespace quiver
