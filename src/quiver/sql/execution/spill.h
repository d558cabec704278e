// quiver/sql/execution/spill.h — spill files of one statement: operators
// that outgrow the statement's memory (hash aggregate partitions, hash join
// build and probe partitions) write record batches out as compressed Arrow
// IPC streams (the write path: LZ4_FRAME or ZSTD bodies, right-sized
// buffers) and read them back one batch at a time (Spark's
// UnsafeExternalSorter / spill files; DuckDB's temporary directory).
//
// Files live in a directory made for the statement under the spill root
// ("quiver-spill-<pid>-<n>", memory/spill_directory.h), created on the
// first spill; each file is removed as soon as its reader is done with it,
// and the directory with whatever is left when the SpillManager goes away
// or RemoveAll is called (the statement's stream does at its first error
// or cancel). The manager counts what was written ("spilled N bytes in M
// files") for the stage table.
//
// Disk: every byte a spill file holds is charged to the manager's
// DiskBudget (memory/disk_budget.h) before it is written — an upper bound
// of the batch's encoded size, trimmed to the bytes the file grew by
// after the write — and given back when the file is removed. A write the
// budget refuses fails with IOError 53100 naming the limit, and the
// partial file goes.
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
#include <unordered_map>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/compression/codec.h"
#include "quiver/memory/disk_budget.h"
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

class SpillManager : public std::enable_shared_from_this<SpillManager> {
 public:
  /// `root`: the directory to make the statement's spill directory in
  /// (empty: $TMPDIR or /tmp). `codec`: body compression of the files.
  /// `budget`: where the files' bytes are charged (null: nowhere).
  SpillManager(std::string root, CompressionType codec, std::shared_ptr<DiskBudget> budget = nullptr);
  /// Removes the statement's spill directory and every file left in it.
  ~SpillManager();
  SpillManager(const SpillManager&) = delete;
  SpillManager& operator=(const SpillManager&) = delete;

  /// A new spill file for batches of `schema`; `what` names the operator
  /// in errors ("hash aggregate partition 3"). Buffers from `pool`.
  /// Errors: IOError naming the path (directory or file not creatable).
  Result<std::unique_ptr<SpillWriter>> Create(const SchemaPtr& schema, const std::string& what, MemoryPool* pool);

  /// Reads `file` back batch by batch (decoded into `pool`); the file is
  /// removed (and its bytes given back) when the stream is destroyed,
  /// unless `keep` (then it can be
  /// read again; Remove, or the spill directory's removal, deletes it).
  Result<std::unique_ptr<RecordBatchStream>> Open(const SpillFile& file, MemoryPool* pool, bool keep = false);
  /// Deletes a file that was read with `keep` and gives its bytes back to
  /// the budget (errors ignored: the spill directory goes at the
  /// statement's end anyway).
  void Remove(const SpillFile& file);
  /// Removes the spill directory and every file in it now, giving their
  /// bytes back (a cancelled or failed statement: its operators are gone).
  /// Later spills make a new directory. Idempotent.
  void RemoveAll();

  int64_t spilled_bytes() const { return bytes_.load(); }
  int64_t spilled_files() const { return files_.load(); }
  /// Bytes charged to the budget now (the live files and the writes in
  /// progress).
  int64_t charged_bytes() const;
  /// The statement's spill directory ("" before the first spill).
  std::string directory() const;

 private:
  friend class SpillWriter;
  friend class SpillReader;
  Result<std::string> NextPath();
  // A finished file's charge moves to the manager (path -> bytes).
  void Adopt(const std::string& path, DiskReservation charge);
  // Gives back the charge of a removed file.
  void Forget(const std::string& path);

  std::string root_;
  CompressionType codec_;
  std::shared_ptr<DiskBudget> budget_;
  mutable std::mutex mutex_;
  std::string dir_;
  int64_t next_file_ = 0;
  std::unordered_map<std::string, DiskReservation> charges_;  // guarded by mutex_
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
  template <typename Fn>
  Status Charged(int64_t bound, Fn&& write);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  SpillManager* manager_ = nullptr;
  SpillFile file_;
  std::string what_;
  DiskReservation charge_;  // the file's bytes (and the write in progress)
  bool finished_ = false;
};

}  // namespace quiver::sql
