// quiver CLI — see interrupt.h.
#include "interrupt.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <utility>

namespace quiver::cli {

namespace {

std::atomic<int> g_signal_fd{-1};
std::atomic<bool> g_installed{false};
struct sigaction g_old_int, g_old_term;

void OnSignal(int signo) {
  const int saved = errno;
  const int fd = g_signal_fd.load();
  if (fd >= 0) {
    const unsigned char b = static_cast<unsigned char>(signo);
    (void)!::write(fd, &b, 1);  // a full pipe already holds a signal
  }
  errno = saved;
}

constexpr unsigned char kStop = 0;

// Waits up to `timeout_ms` (< 0: forever) for a byte; -1 on timeout.
int ReadByte(int fd, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  while (true) {
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return -1;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) return -1;
      continue;
    }
    unsigned char b = 0;
    const ssize_t r = ::read(fd, &b, 1);
    if (r == 1) return b;
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return kStop;  // closed
  }
}

}  // namespace

Result<std::unique_ptr<InterruptGuard>> InterruptGuard::Install(int grace_ms) {
  if (g_installed.exchange(true)) return Status::Invalid("an interrupt guard is installed already");
  std::unique_ptr<InterruptGuard> g(new InterruptGuard());
  g->grace_ms_ = grace_ms;
  if (::pipe2(g->pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_installed = false;
    return Status::IOError(std::string("interrupt: pipe: ") + std::strerror(errno));
  }
  g_signal_fd = g->pipe_[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  // A signal the process was started with ignored (a background command
  // of a script, nohup) stays ignored, as shells and Python leave it.
  for (auto [signo, old] : {std::pair{SIGINT, &g_old_int}, std::pair{SIGTERM, &g_old_term}}) {
    if (::sigaction(signo, nullptr, old) != 0 || old->sa_handler == SIG_IGN) continue;
    if (::sigaction(signo, &sa, nullptr) != 0) {
      return Status::IOError(std::string("interrupt: sigaction: ") + std::strerror(errno));
    }
  }
  g->watcher_ = std::thread([raw = g.get()] { raw->Watch(); });
  return g;
}

InterruptGuard::~InterruptGuard() {
  if (pipe_[1] >= 0) {
    ::sigaction(SIGINT, &g_old_int, nullptr);
    ::sigaction(SIGTERM, &g_old_term, nullptr);
    g_signal_fd = -1;
    const unsigned char b = kStop;
    while (::write(pipe_[1], &b, 1) < 0 && errno == EINTR) {
    }
  }
  if (watcher_.joinable()) watcher_.join();
  for (int& fd : pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  g_installed = false;
}

int InterruptGuard::AddCleanup(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  cleanups_[next_id_] = std::move(fn);
  return next_id_++;
}

void InterruptGuard::RemoveCleanup(int id) {
  std::lock_guard<std::mutex> lock(mu_);
  cleanups_.erase(id);
}

void InterruptGuard::Watch() {
  while (true) {
    int b = ReadByte(pipe_[0], -1);
    if (b == kStop) return;
    if (b < 0) continue;
    if (interrupted()) ExitNow();  // a second signal
    flag_->store(true);
    const int grace = grace_ms_.load();
    if (grace < 0) continue;
    b = ReadByte(pipe_[0], grace);
    if (b == kStop) return;  // the command unwound in time
    ExitNow();               // a second signal, or the grace period is over
  }
}

void InterruptGuard::ExitNow() {
  std::map<int, std::function<void()>> cleanups;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cleanups = cleanups_;
  }
  for (auto& [id, fn] : cleanups) fn();
  static const char kLine[] = "interrupted\n";
  (void)!::write(STDERR_FILENO, kLine, sizeof kLine - 1);
  ::_exit(130);
}

void RemoveOwnTemporaryOutput(const std::string& target) {
  const auto slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash);
  const std::string prefix = "." + (slash == std::string::npos ? target : target.substr(slash + 1)) + ".quiver-tmp-";
  std::error_code ec;
  const auto want = std::filesystem::weakly_canonical(dir, ec);
  if (ec) return;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return;
  while (dirent* ent = ::readdir(d)) {
    char link[4096];
    const std::string fd_path = std::string("/proc/self/fd/") + ent->d_name;
    const ssize_t n = ::readlink(fd_path.c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    const std::filesystem::path open_path(std::string(link, static_cast<size_t>(n)));
    if (open_path.parent_path() != want) continue;
    if (open_path.filename().string().rfind(prefix, 0) != 0) continue;
    ::unlink(open_path.c_str());
  }
  ::closedir(d);
}

}  // namespace quiver::cli
