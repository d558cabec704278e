#include "quiver/formats/sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace quiver::formats {

Result<std::unique_ptr<LocalFileSink>> LocalFileSink::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(path + ": " + std::strerror(errno));
  return std::unique_ptr<LocalFileSink>(new LocalFileSink(path, fd));
}

LocalFileSink::~LocalFileSink() {
  if (fd_ >= 0) ::close(fd_);
}

Status LocalFileSink::Write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) return Status::IOError(path_ + ": write after close");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(path_ + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  position_ += static_cast<int64_t>(bytes.size());
  return Status::OK();
}

Status LocalFileSink::Close() {
  if (fd_ < 0) return Status::OK();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return Status::IOError(path_ + ": close: " + std::strerror(errno));
  return Status::OK();
}

}  // namespace quiver::formats
