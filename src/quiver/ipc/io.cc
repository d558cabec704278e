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

namespace {

/// A direct sink (stdout, /dev/null, a pipe) seen as an OutputFile.
class DirectOutputFile : public OutputFile {
 public:
  explicit DirectOutputFile(std::unique_ptr<OutputStream> inner) : inner_(std::move(inner)) {}
  Status Write(std::span<const uint8_t> bytes) override { return inner_->Write(bytes); }
  Status Flush() override { return inner_->Flush(); }
  int64_t position() const override { return inner_->position(); }
  Status Commit() override { return inner_->Flush(); }

 private:
  std::unique_ptr<OutputStream> inner_;
};

/// Writes to a temporary file beside the target; renames it on Commit,
/// removes it otherwise.
class TempOutputFile : public OutputFile {
 public:
  TempOutputFile(int fd, std::string temp_path, std::string target)
      : out_(fd, temp_path, true), temp_path_(std::move(temp_path)), target_(std::move(target)) {}
  ~TempOutputFile() override {
    if (!committed_) ::unlink(temp_path_.c_str());
  }
  Status Write(std::span<const uint8_t> bytes) override {
    if (committed_) return Status::IOError("cannot write '" + target_ + "': already committed");
    return out_.Write(bytes);
  }
  int64_t position() const override { return out_.position(); }
  Status Commit() override {
    if (committed_) return Status::OK();
    if (::rename(temp_path_.c_str(), target_.c_str()) != 0) return ErrnoError("cannot rename the output to", target_);
    committed_ = true;
    return Status::OK();
  }

 private:
  FdOutputStream out_;
  std::string temp_path_;
  std::string target_;
  bool committed_ = false;
};

}  // namespace

Result<std::unique_ptr<OutputFile>> OpenOutputFile(const std::string& path) {
  struct stat st {};
  const bool exists = path != "-" && ::stat(path.c_str(), &st) == 0;
  if (path == "-" || (exists && !S_ISREG(st.st_mode))) {
    QUIVER_ASSIGN_OR_RETURN(auto direct, OpenOutputStream(path));
    return std::unique_ptr<OutputFile>(new DirectOutputFile(std::move(direct)));
  }
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temp = dir + "." + name + ".quiver-tmp-XXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot create a temporary file beside", path);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0644 & ~mask) != 0) {
    Status s = ErrnoError("cannot set the mode of a temporary file beside", path);
    ::close(fd);
    ::unlink(temp.c_str());
    return s;
  }
  return std::unique_ptr<OutputFile>(new TempOutputFile(fd, temp, path));
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

namespace {

/// ReadAll with an optional limit: at most `limit_bytes` + 1 bytes are read
/// (-1: no limit); *over is set when the source held more than the limit.
Result<std::shared_ptr<Buffer>> ReadUpTo(InputStream* input, MemoryPool* pool, int64_t limit_bytes, bool* over) {
  *over = false;
  int64_t capacity = 64 * 1024;
  if (limit_bytes >= 0 && limit_bytes + 1 < capacity) capacity = limit_bytes + 1;
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, Buffer::Allocate(pool, capacity));
  int64_t size = 0;
  while (true) {
    if (size == capacity) {
      if (limit_bytes >= 0 && size > limit_bytes) {
        *over = true;
        break;
      }
      capacity *= 2;
      if (limit_bytes >= 0 && capacity > limit_bytes + 1) capacity = limit_bytes + 1;
      QUIVER_RETURN_NOT_OK(buf->Resize(capacity, false));
    }
    QUIVER_ASSIGN_OR_RETURN(int64_t n, input->Read({buf->mutable_data() + size, static_cast<size_t>(capacity - size)}));
    if (n == 0) break;
    size += n;
  }
  QUIVER_RETURN_NOT_OK(buf->Resize(size, true));
  return buf;
}

}  // namespace

Result<std::shared_ptr<Buffer>> ReadAll(InputStream* input, MemoryPool* pool) {
  bool over = false;
  return ReadUpTo(input, pool, -1, &over);
}

Result<std::shared_ptr<Buffer>> ReadFile(const std::string& path, MemoryPool* pool, int64_t max_size_bytes) {
  if (max_size_bytes < 0) return Status::Invalid("ReadFile: max_size_bytes " + std::to_string(max_size_bytes) + " < 0");
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, OpenInputStream(path));
  bool over = false;
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buf, ReadUpTo(input.get(), pool, max_size_bytes, &over));
  if (over) return Status::Invalid("'" + path + "' is larger than " + std::to_string(max_size_bytes) + " bytes");
  return buf;
}

}  // namespace quiver::ipc
