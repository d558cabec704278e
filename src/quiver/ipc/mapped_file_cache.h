// quiver/ipc/mapped_file_cache.h — the mappings of files read again and
// again (the Arrow IPC files of a SQL table, scanned by every statement
// that names it), kept between reads while the file is unchanged.
//
// A fresh mapping costs a page fault at the first touch of each of its
// pages, on every read; on the development hosts such a fault costs about
// 15-22 us per 4 KiB page, so a statement scanning three 11 MiB columns of
// a mapped table spent more time faulting than computing (TPC-DS Q61 at
// scale 1: half of its CPU time). A kept mapping is faulted in once.
//
// Thread safety: Get may be called from any thread (a mutex guards the
// entries); the buffers it returns are immutable views.
#pragma once

#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"

namespace quiver::ipc {

/// Mappings of regular files by path (MapFile), each kept for later Get
/// calls of the same path as long as the file keeps its device, inode,
/// size and modification time. Nothing is charged to any pool (the bytes
/// are mapped, not held); the mappings go with the cache (and with the
/// last buffer returned from each).
class MappedFileCache {
 public:
  /// The bytes of the regular file `path`: the kept mapping when the file
  /// is unchanged since it was made, else a new one (kept instead, for the
  /// next call). Errors: IOError naming the path (missing, not a regular
  /// file, cannot be mapped).
  Result<std::shared_ptr<Buffer>> Get(const std::string& path);

  /// The number of mappings made so far (a test's view of the reuse).
  int64_t mappings_made() const;

 private:
  struct Entry {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t size_bytes = 0;
    timespec modified{};
    std::shared_ptr<Buffer> bytes;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  int64_t made_ = 0;
};

}  // namespace quiver::ipc
