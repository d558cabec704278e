// quiver/bench/child_process.cc — see child_process.h.
#include "quiver/bench/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace quiver::bench {

Result<pid_t> SpawnWithStdoutPipe(const std::vector<std::string>& argv, bool silence_stderr, bool search_path,
                                  int* stdout_fd) {
  int fds[2];
  if (pipe(fds) != 0) return Status::IOError("bench: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::IOError("bench: fork failed");
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (silence_stderr) {
      const int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    }
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    if (search_path) {
      execvp(a[0], a.data());
    } else {
      execv(a[0], a.data());
    }
    _exit(127);
  }
  close(fds[1]);
  *stdout_fd = fds[0];
  return pid;
}

Result<pid_t> SpawnWithPipes(const std::vector<std::string>& argv, int* stdin_fd, int* stdout_fd) {
  int in[2], out[2];
  if (pipe(in) != 0) return Status::IOError("bench: pipe failed");
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return Status::IOError("bench: pipe failed");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return Status::IOError("bench: fork failed");
  }
  if (pid == 0) {
    // Killed with its parent: a child the bench paused (SIGSTOP) would
    // otherwise stay stopped for ever when the bench is interrupted.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  *stdin_fd = in[1];
  *stdout_fd = out[0];
  return pid;
}

Result<std::pair<int, std::string>> RunCapture(const std::vector<std::string>& argv) {
  int out_fd = -1;
  QUIVER_ASSIGN_OR_RETURN(const pid_t pid, SpawnWithStdoutPipe(argv, false, true, &out_fd));
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(out_fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(out_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return std::make_pair(rc, out);
}

Result<nlohmann::ordered_json> LastJson(const std::string& out, const std::string& what) {
  size_t end = out.size();
  while (end > 0) {
    size_t start = out.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    const std::string line = out.substr(start, end - start);
    if (!line.empty() && line[0] == '{') {
      auto j = nlohmann::ordered_json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object()) return j;
    }
    if (start == 0) break;
    end = start - 1;
  }
  return Status::Invalid(what + ": no JSON result line in its output: " + out.substr(0, 500));
}

ServerProcess::~ServerProcess() { Stop(); }

void ServerProcess::Stop() {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  pid = -1;
}

std::string ServerProcess::url() const { return "https://127.0.0.1:" + std::to_string(port) + path; }

Status StartServer(const std::vector<std::string>& argv, ServerProcess* s) {
  int out_fd = -1;
  QUIVER_ASSIGN_OR_RETURN(const pid_t pid, SpawnWithStdoutPipe(argv, true, false, &out_fd));
  s->pid = pid;
  std::string out;
  char buf[4096];
  ssize_t n;
  while (out.find("ready\n") == std::string::npos && (n = read(out_fd, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<size_t>(n));
  }
  close(out_fd);
  if (out.find("ready\n") == std::string::npos) {
    return Status::IOError("bench: quiver serve did not start: " + out);
  }
  auto field = [&](const std::string& key) {
    const size_t p = out.find("\n" + key + ": ");
    if (p == std::string::npos) return std::string();
    const size_t b = p + key.size() + 3;
    return out.substr(b, out.find('\n', b) - b);
  };
  s->port = std::atoi(field("port").c_str());
  s->path = field("path");
  s->cert = field("certificate");
  if (s->port <= 0 || s->path.empty() || s->cert.empty()) {
    return Status::IOError("bench: cannot read quiver serve's banner: " + out);
  }
  return Status::OK();
}

int64_t ProcStatusBytesOf(pid_t pid, const char* key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(f, line)) {
    if (line.rfind(k, 0) == 0) return std::strtoll(line.c_str() + k.size(), nullptr, 10) * 1024;
  }
  return -1;
}

double ProcessCpuSecondsOf(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) in parentheses:
  // state is field 3, utime 14, stime 15.
  const size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream rest(text.substr(close_paren + 2));
  std::string field;
  long long utime = -1, stime = -1;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) stime = std::atoll(field.c_str());
  }
  if (utime < 0 || stime < 0) return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace quiver::bench
