// quiver/formats/sink.h — where a table file's bytes go: a sequential byte
// sink the format writers call, so that the encoders do no I/O themselves
// (the mirror of source.h). A local file and an in-memory sink here; the
// CLI adapts its atomic output files (ipc/io.h OpenOutputFile) to it.
//
// Thread safety: none (one writer per sink).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"

namespace quiver::formats {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  /// Writes all of `bytes` or fails (IOError naming the target).
  virtual Status Write(std::span<const uint8_t> bytes) = 0;
  /// Bytes written so far (offsets inside the file being written).
  virtual int64_t position() const = 0;
};

/// A local file created (or truncated) at Open, written with write(2) as
/// bytes come, closed by Close() or the destructor. A writer that fails
/// part way leaves a partial file (use an atomic sink for the user's
/// outputs). Errors: IOError naming the path and errno's text.
class LocalFileSink final : public OutputSink {
 public:
  static Result<std::unique_ptr<LocalFileSink>> Open(const std::string& path);
  ~LocalFileSink() override;
  Status Write(std::span<const uint8_t> bytes) override;
  int64_t position() const override { return position_; }
  /// Closes the file (errors of close(2) reported: data may be lost).
  Status Close();

 private:
  LocalFileSink(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
  int64_t position_ = 0;
};

/// Bytes kept in memory (tests): bytes() holds what was written.
class MemorySink final : public OutputSink {
 public:
  Status Write(std::span<const uint8_t> bytes) override {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    return Status::OK();
  }
  int64_t position() const override { return static_cast<int64_t>(bytes_.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace quiver::formats
