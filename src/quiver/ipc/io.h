// quiver/ipc/io.h — byte sources and sinks that feed the IPC decoder and
// take the encoder's output. I/O stays here, out of the decoders (design
// notes, "Keep I/O out of the decoder").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"

namespace quiver::ipc {

/// Sequential byte source. Not thread-safe.
class InputStream {
 public:
  virtual ~InputStream() = default;
  /// Reads up to out.size() bytes; returns the count, 0 only at end of input.
  /// IOError names the source and errno text.
  virtual Result<int64_t> Read(std::span<uint8_t> out) = 0;
};

/// Sequential byte sink. Not thread-safe.
class OutputStream {
 public:
  virtual ~OutputStream() = default;
  /// Writes all bytes or returns IOError.
  virtual Status Write(std::span<const uint8_t> bytes) = 0;
  virtual Status Flush() { return Status::OK(); }
  /// Bytes written so far.
  virtual int64_t position() const = 0;
};

/// Opens `path` for reading; "-" is standard input. IOError names the path.
Result<std::unique_ptr<InputStream>> OpenInputStream(const std::string& path);

/// Opens (creates / truncates) `path` for writing; "-" is standard output.
/// Bytes reach `path` as they are written, so a writer that fails part way
/// leaves a partial file there; commands that write a file the user names
/// use OpenOutputFile instead.
Result<std::unique_ptr<OutputStream>> OpenOutputStream(const std::string& path);

/// A sink whose bytes become visible at its target only on Commit().
class OutputFile : public OutputStream {
 public:
  /// Flushes and publishes what was written: a temporary file is renamed
  /// over the target (atomic within one file system). Call once, after the
  /// last Write; later Writes fail. IOError naming the target.
  virtual Status Commit() = 0;
};

/// Opens `path` for writing so that a failed command leaves nothing there
/// that reads as valid (issue 10 item 2):
///  - a regular file, or a path that does not exist yet: bytes go to a
///    temporary file beside the target ("<dir>/.<name>.quiver-tmp-XXXXXX",
///    mode 0644 less the umask); Commit() renames it over `path`. Destroying
///    the sink without Commit() (any error path) removes the temporary file:
///    `path` keeps what it held before, or stays absent.
///  - "-" (standard output) and other targets that are not regular files
///    (/dev/null, a pipe, a terminal): written directly; Commit() flushes.
///    Bytes already written cannot be taken back: the IPC writers write the
///    end-of-stream marker (and the file footer) only in Close(), so the
///    output of a failed command ends without them, and the command exits
///    non-zero. (Arrow readers, quiver's included, accept a stream that
///    ends without the marker, so check the exit status of a pipeline.)
/// IOError naming the path when the temporary file cannot be created.
/// Not thread-safe.
Result<std::unique_ptr<OutputFile>> OpenOutputFile(const std::string& path);

/// An in-memory sink; bytes() holds what was written.
class BufferOutputStream : public OutputStream {
 public:
  Status Write(std::span<const uint8_t> bytes) override;
  int64_t position() const override { return static_cast<int64_t>(bytes_.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& mutable_bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

/// Maps a regular file read-only (MAP_PRIVATE). The returned buffer views
/// the mapping and unmaps it when its last reference goes; nothing is
/// charged to any pool (mapped, not held). Empty files give an empty buffer.
/// IOError names the path.
Result<std::shared_ptr<Buffer>> MapFile(const std::string& path);

/// Reads a whole source into one pool buffer (growing geometrically, so
/// memory stays within 2x what was actually read). For stdin and pipes.
Result<std::shared_ptr<Buffer>> ReadAll(InputStream* input, MemoryPool* pool);

/// Reads the whole of `path` ("-" is standard input) into one buffer from
/// `pool` (growing as ReadAll does), for formats parsed as one document
/// (integration JSON). At most `max_size_bytes` (>= 0) are accepted: a
/// longer source is Invalid "'<path>' is larger than N bytes" after reading
/// N + 1 bytes. Errors: IOError naming the path when it cannot be opened or
/// read; OutOfMemory from the pool. Not thread-safe for "-" (standard input
/// is shared).
Result<std::shared_ptr<Buffer>> ReadFile(const std::string& path, MemoryPool* pool, int64_t max_size_bytes);

}  // namespace quiver::ipc
