// quiver/ipc/mapped_file_cache.cc — see mapped_file_cache.h.
#include "quiver/ipc/mapped_file_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "quiver/ipc/io.h"

namespace quiver::ipc {

Result<std::shared_ptr<Buffer>> MappedFileCache::Get(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::IOError("cannot stat '" + path + "': " + std::strerror(errno));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(path);
    if (it != entries_.end()) {
      const Entry& e = it->second;
      if (e.device == static_cast<uint64_t>(st.st_dev) && e.inode == static_cast<uint64_t>(st.st_ino) &&
          e.size_bytes == static_cast<int64_t>(st.st_size) && e.modified.tv_sec == st.st_mtim.tv_sec &&
          e.modified.tv_nsec == st.st_mtim.tv_nsec) {
        return e.bytes;
      }
    }
  }
  // Mapped outside the lock (other paths go on meanwhile). The stat above
  // was taken before the mapping: a file changed in between is mapped
  // again by the next call, whose stat differs.
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> bytes, MapFile(path));
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = entries_[path];
  e.device = static_cast<uint64_t>(st.st_dev);
  e.inode = static_cast<uint64_t>(st.st_ino);
  e.size_bytes = static_cast<int64_t>(st.st_size);
  e.modified = st.st_mtim;
  e.bytes = bytes;
  ++made_;
  return bytes;
}

int64_t MappedFileCache::mappings_made() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return made_;
}

}  // namespace quiver::ipc
