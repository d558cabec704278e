#include "quiver/formats/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "quiver/formats/read_buffer.h"

namespace quiver::formats {

Status RandomAccessSource::CheckRange(int64_t offset, int64_t length) const {
  if (offset < 0 || length < 0 || offset > size() || length > size() - offset) {
    return Status::Invalid(name() + ": byte range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                           ") outside the file of " + std::to_string(size()) + " bytes");
  }
  return Status::OK();
}

Result<std::vector<std::shared_ptr<Buffer>>> RandomAccessSource::ReadRanges(std::span<const ByteRange> ranges,
                                                                            MemoryPool* pool) {
  std::vector<std::shared_ptr<Buffer>> out;
  out.reserve(ranges.size());
  for (const ByteRange& r : ranges) {
    QUIVER_ASSIGN_OR_RETURN(auto b, ReadAt(r.offset, r.length, pool));
    out.push_back(std::move(b));
  }
  return out;
}

Result<std::shared_ptr<LocalFileSource>> LocalFileSource::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Status::IOError(path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IOError(path + ": not a regular file");
  }
  return std::shared_ptr<LocalFileSource>(new LocalFileSource(path, fd, static_cast<int64_t>(st.st_size)));
}

LocalFileSource::~LocalFileSource() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::shared_ptr<Buffer>> LocalFileSource::ReadAt(int64_t offset, int64_t length, MemoryPool* pool) {
  QUIVER_RETURN_NOT_OK(CheckRange(offset, length));
  QUIVER_ASSIGN_OR_RETURN(auto buf, AllocateReadBuffer(pool, length));
  int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd_, buf->mutable_data() + done, static_cast<size_t>(length - done), offset + done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError(path_ + ": read at byte " + std::to_string(offset + done) + ": " + std::strerror(errno));
    }
    if (n == 0) return Status::IOError(path_ + ": file shorter than when opened (truncated while reading?)");
    done += n;
  }
  return buf;
}

Result<std::shared_ptr<Buffer>> MemorySource::ReadAt(int64_t offset, int64_t length, MemoryPool*) {
  QUIVER_RETURN_NOT_OK(CheckRange(offset, length));
  return Buffer::Slice(data_, offset, length);
}

}  // namespace quiver::formats
