#include "quiver/ipc/io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace quiver::ipc {
namespace {

Status ErrnoError(const std::string& what, const std::string& path) {
  return Status::IOError(what + " '" + path + "': " + std::strerror(errno));
}

class FdInputStream : public InputStream {
 public:
  FdInputStream(int fd, std::string path, bool owned) : fd_(fd), path_(std::move(path)), owned_(owned) {}
  ~FdInputStream() override {
    if (owned_) ::close(fd_);
  }
  Result<int64_t> Read(std::span<uint8_t> out) override {
    while (true) {
      ssize_t n = ::read(fd_, out.data(), out.size());
      if (n >= 0) return static_cast<int64_t>(n);
      if (errno == EINTR) continue;
      return ErrnoError("cannot read", path_);
    }
  }
  int fd() const { return fd_; }

 private:
  int fd_;
  std::string path_;
  bool owned_;
};

class FdOutputStream : public OutputStream {
 public:
  FdOutputStream(int fd, std::string path, bool owned) : fd_(fd), path_(std::move(path)), owned_(owned) {}
  ~FdOutputStream() override {
    if (owned_) ::close(fd_);
  }
  Status Write(std::span<const uint8_t> bytes) override {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("cannot write", path_);
      }
      done += static_cast<size_t>(n);
    }
    position_ += static_cast<int64_t>(bytes.size());
    return Status::OK();
  }
  int64_t position() const override { return position_; }

 private:
  int fd_;
  std::string path_;
  bool owned_;
  int64_t position_ = 0;
};

struct Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr != nullptr) ::munmap(addr, size);
  }
};

}  // namespace

Status BufferOutputStream::Write(std::span<const uint8_t> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return Status::OK();
}

Result<std::unique_ptr<InputStream>> OpenInputStream(const std::string& path) {
  if (path == "-") return std::unique_ptr<InputStream>(new FdInputStream(0, "<stdin>", false));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path);
  return std::unique_ptr<InputStream>(new FdInputStream(fd, path, true));
}

Result<std::unique_ptr<OutputStream>> OpenOutputStream(const std::string& path) {
  if (path == "-") return std::unique_ptr<OutputStream>(new FdOutputStream(1, "<stdout>", false));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", path);
  return std::unique_ptr<OutputStream>(new FdOutputStream(fd, path, true));
}

Result<std::shared_ptr<Buffer>> MapFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = ErrnoError("cannot stat", path);
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IOError("cannot map '" + path + "': not a regular file");
  }
  auto mapping = std::make_shared<Mapping>();
  if (st.st_size > 0) {
    void* addr = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      Status s = ErrnoError("cannot map", path);
      ::close(fd);
      return s;
    }
    mapping->addr = addr;
    mapping->size = static_cast<size_t>(st.st_size);
  }
  ::close(fd);
  static const uint8_t kEmpty[8] = {};
  const uint8_t* data = mapping->addr ? static_cast<const uint8_t*>(mapping->addr) : kEmpty;
  return Buffer::Wrap(data, static_cast<int64_t>(mapping->size), mapping);
}

Result<std::shared_ptr<Buffer>> ReadAll(InputStream* input, MemoryPool* pool) {
  int64_t capacity = 64 * 1024;
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, Buffer::Allocate(pool, capacity));
  int64_t size = 0;
  while (true) {
    if (size == capacity) {
      capacity *= 2;
      QUIVER_RETURN_NOT_OK(buf->Resize(capacity, false));
    }
    QUIVER_ASSIGN_OR_RETURN(int64_t n, input->Read({buf->mutable_data() + size, static_cast<size_t>(capacity - size)}));
    if (n == 0) break;
    size += n;
  }
  QUIVER_RETURN_NOT_OK(buf->Resize(size, true));
  return buf;
}

}  // namespace quiver::ipc
