// quiver/sql/execution/spill.h — spill files of one statement: operators
// that outgrow the statement's memory (hash aggregate partitions, hash join
// build and probe partitions) write record batches out as compressed Arrow
// IPC streams (the write path: LZ4_FRAME or ZSTD bodies, right-sized
// buffers) and read them back one batch at a time (Spark's
// UnsafeExternalSorter / spill files; DuckDB's temporary directory).
//
// Files live in a directory made for the statement under the spill root
// ("quiver-spill-<pid>-<n>"), created on the first spill; each file is
// removed as soon as its reader is done with it, and the directory with
// whatever is left when the SpillManager goes away — at the statement's
// end, also on cancel and error. The manager counts what was written
// ("spilled N bytes in M files") for the stage table.
//
// Memory: the writer's compression buffers and the reader's decoded
// batches are charged to the pool given (the operator's).
//
// Thread safety: SpillManager is thread-safe; a SpillWriter or a reader
// stream is used by one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/compression/codec.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::sql {

/// One finished spill file.
struct SpillFile {
  std::string path;
  int64_t bytes = 0;  ///< on disk (compressed)
  int64_t rows = 0;
  int64_t batches = 0;
};

class SpillWriter;

class SpillManager {
 public:
  /// `root`: the directory to make the statement's spill directory in
  /// (empty: $TMPDIR or /tmp). `codec`: body compression of the files.
  SpillManager(std::string root, CompressionType codec);
  /// Removes the statement's spill directory and every file left in it.
  ~SpillManager();
  SpillManager(const SpillManager&) = delete;
  SpillManager& operator=(const SpillManager&) = delete;

  /// A new spill file for batches of `schema`; `what` names the operator
  /// in errors ("hash aggregate partition 3"). Buffers from `pool`.
  /// Errors: IOError naming the path (directory or file not creatable).
  Result<std::unique_ptr<SpillWriter>> Create(const SchemaPtr& schema, const std::string& what, MemoryPool* pool);

  /// Reads `file` back batch by batch (decoded into `pool`); the file is
  /// removed when the stream is destroyed, unless `keep` (then it can be
  /// read again; Remove, or the spill directory's removal, deletes it).
  Result<std::unique_ptr<RecordBatchStream>> Open(const SpillFile& file, MemoryPool* pool, bool keep = false);
  /// Deletes a file that was read with `keep` (errors ignored: the spill
  /// directory goes at the statement's end anyway).
  static void Remove(const SpillFile& file);

  int64_t spilled_bytes() const { return bytes_.load(); }
  int64_t spilled_files() const { return files_.load(); }
  /// The statement's spill directory ("" before the first spill).
  std::string directory() const;

 private:
  friend class SpillWriter;
  Result<std::string> NextPath();

  std::string root_;
  CompressionType codec_;
  mutable std::mutex mutex_;
  std::string dir_;
  int64_t next_file_ = 0;
  std::atomic<int64_t> bytes_{0}, files_{0};
};

/// Writes one spill file. Destroying it without Finish removes the file.
class SpillWriter {
 public:
  ~SpillWriter();
  Status Write(const RecordBatch& batch);
  /// Closes the stream and returns the file. Call once.
  Result<SpillFile> Finish();
  int64_t rows() const { return file_.rows; }

 private:
  friend class SpillManager;
  SpillWriter() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  SpillManager* manager_ = nullptr;
  SpillFile file_;
  std::string what_;
  bool finished_ = false;
};

}  // namespace quiver::sql
