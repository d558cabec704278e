// quiver/formats/source.h — where a table file's bytes come from: a
// random-access byte source (ReadAt) that the format readers call, so that
// the decoders themselves do no I/O and the same reader serves local files,
// memory and object stores (s3_files.h).
//
// Thread safety: ReadAt and size() may be called from several threads at
// once (implementations must allow it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::formats {

/// `length` bytes at byte `offset` of a source.
struct ByteRange {
  int64_t offset = 0;
  int64_t length = 0;
};

class RandomAccessSource {
 public:
  virtual ~RandomAccessSource() = default;
  /// Total size in bytes.
  virtual int64_t size() const = 0;
  /// What to call it in errors (a path, "memory").
  virtual const std::string& name() const = 0;
  /// `length` bytes at `offset`, in a buffer from `pool` (or a view of
  /// memory the source owns). Errors: Invalid when [offset, offset +
  /// length) is not inside [0, size()) (naming the range); IOError from the
  /// read; OutOfMemory from `pool`.
  virtual Result<std::shared_ptr<Buffer>> ReadAt(int64_t offset, int64_t length, MemoryPool* pool) = 0;
  /// Every range of `ranges` (one buffer each, in the same order), as
  /// ReadAt would return them. The default reads them one after the other;
  /// a remote source merges near ranges and sends several requests at once
  /// (s3_files.h). Errors: as ReadAt (the first failure).
  virtual Result<std::vector<std::shared_ptr<Buffer>>> ReadRanges(std::span<const ByteRange> ranges, MemoryPool* pool);
  /// True for sources where each read is a request over the network (a
  /// reader then asks for all the ranges it needs at once, ReadRanges);
  /// false for local files and memory, read one range at a time.
  virtual bool remote() const { return false; }

 protected:
  /// Invalid unless 0 <= offset, 0 <= length and offset + length <= size().
  Status CheckRange(int64_t offset, int64_t length) const;
};

/// A local regular file read with pread(2) (no mapping: a file truncated
/// under the reader is an IOError, never a SIGBUS). The size is taken at
/// open. Errors of Open: IOError naming the path (missing, unreadable, not
/// a regular file).
class LocalFileSource final : public RandomAccessSource {
 public:
  static Result<std::shared_ptr<LocalFileSource>> Open(const std::string& path);
  ~LocalFileSource() override;
  int64_t size() const override { return size_bytes_; }
  const std::string& name() const override { return path_; }
  Result<std::shared_ptr<Buffer>> ReadAt(int64_t offset, int64_t length, MemoryPool* pool) override;

 private:
  LocalFileSource(std::string path, int fd, int64_t size_bytes)
      : path_(std::move(path)), fd_(fd), size_bytes_(size_bytes) {}
  std::string path_;
  int fd_ = -1;
  int64_t size_bytes_ = 0;
};

/// Bytes already in memory (tests, the fuzz target): ReadAt returns views
/// that keep `data` alive.
class MemorySource final : public RandomAccessSource {
 public:
  explicit MemorySource(std::shared_ptr<Buffer> data, std::string name = "memory")
      : data_(std::move(data)), name_(std::move(name)) {}
  int64_t size() const override { return data_->size(); }
  const std::string& name() const override { return name_; }
  Result<std::shared_ptr<Buffer>> ReadAt(int64_t offset, int64_t length, MemoryPool* pool) override;

 private:
  std::shared_ptr<Buffer> data_;
  std::string name_;
};

}  // namespace quiver::formats
