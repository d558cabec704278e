// quiver/fetch/chunk_store.cc — in-memory chunk store with a budget and spill.
#include "quiver/fetch/chunk_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "quiver/ipc/io.h"
#include "quiver/memory/spill_directory.h"

namespace quiver::fetch {

Result<std::string> NewChunkId() {
  uint8_t raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) return Status::IOError("chunk store: RAND_bytes failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(kChunkIdChars);
  for (uint8_t b : raw) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

Result<std::string> NewGroupedChunkId(std::string_view group) {
  bool hex = group.size() == kChunkGroupChars;
  for (char c : group) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hex) {
    return Status::Invalid("chunk store: a chunk group is " + std::to_string(kChunkGroupChars) +
                           " lower-case hex digits, got '" + std::string(group.substr(0, 64)) + "'");
  }
  QUIVER_ASSIGN_OR_RETURN(std::string id, NewChunkId());
  id.replace(0, kChunkGroupChars, group);
  return id;
}

Result<std::unique_ptr<LocalChunkStore>> LocalChunkStore::Make(LocalChunkStoreOptions options, LinkSigner signer) {
  std::string dir = options.spill_dir;
  bool own = false;
  if (dir.empty()) {
    // The private directory is made at the first spill (MakeSpillDirLocked):
    // a store that never spills, or a server killed before its destructor
    // runs, leaves nothing behind.
    own = true;
  } else {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::IOError("chunk store: spill directory " + dir + " does not exist");
    }
  }
  if (!options.disk_budget) {
    DiskBudgetOptions d;
    d.name = "the chunk store's spill files";
    d.limit_bytes = options.spill_limit_bytes;
    d.limit_name = "spill_limit_bytes";
    QUIVER_ASSIGN_OR_RETURN(options.disk_budget, DiskBudget::MakeRoot(d));
  }
  return std::unique_ptr<LocalChunkStore>(new LocalChunkStore(std::move(options), signer, dir, own));
}

LocalChunkStore::LocalChunkStore(LocalChunkStoreOptions options, LinkSigner signer, std::string spill_dir, bool own_dir)
    : options_(std::move(options)),
      disk_(options_.disk_budget),
      signer_(signer),
      spill_dir_(std::move(spill_dir)),
      own_spill_dir_(own_dir) {}

LocalChunkStore::~LocalChunkStore() {
  std::lock_guard<std::mutex> lock(mu_);
  while (!entries_.empty()) EraseLocked(entries_.begin());
  if (own_spill_dir_ && !spill_dir_.empty()) rmdir(spill_dir_.c_str());
}

Status LocalChunkStore::MakeSpillDirLocked() {
  if (!spill_dir_.empty()) return Status::OK();
  auto dir = MakeSpillDirectory("");
  if (!dir.ok()) return dir.status().WithContext("chunk store");
  spill_dir_ = *dir;
  return Status::OK();
}

std::string LocalChunkStore::spill_dir() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spill_dir_;
}

void LocalChunkStore::EraseLocked(std::map<std::string, Entry>::iterator it) {
  Entry& e = it->second;
  if (e.memory) {
    stats_.memory_bytes -= e.size_bytes;
  } else {
    unlink(e.spill_path.c_str());
    e.disk.Reset();
    stats_.spilled_bytes -= e.size_bytes;
    --stats_.spilled_chunks;
  }
  --stats_.chunks;
  entries_.erase(it);
}

namespace {

Status WriteWholeFile(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("spill: open " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      close(fd);
      unlink(path.c_str());
      return Status::IOError("spill: write " + path + ": " + err);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    unlink(path.c_str());
    return Status::IOError("spill: close " + path + ": " + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace

Result<std::string> LocalChunkStore::Put(std::shared_ptr<Buffer> bytes, int64_t expiry_ms) {
  if (!bytes) return Status::Invalid("chunk store: null chunk");
  QUIVER_ASSIGN_OR_RETURN(std::string id, NewChunkId());
  const int64_t size = bytes->size();
  std::unique_lock<std::mutex> lock(mu_);
  const bool fits = options_.memory_budget_bytes < 0 || stats_.memory_bytes + size <= options_.memory_budget_bytes;
  Entry e;
  e.size_bytes = size;
  e.expiry_ms = expiry_ms;
  if (fits) {
    e.memory = std::move(bytes);
    stats_.memory_bytes += size;
    stats_.peak_memory_bytes = std::max(stats_.peak_memory_bytes, stats_.memory_bytes);
  } else {
    // The spill bytes are reserved before writing (outside the lock).
    e.disk = DiskReservation(disk_);
    if (Status room = e.disk.Grow(size, "a result chunk"); !room.ok()) {
      return room.WithContext("chunk store: a chunk of " + std::to_string(size) +
                              " bytes fits neither the memory budget (" + std::to_string(stats_.memory_bytes) + " of " +
                              std::to_string(options_.memory_budget_bytes) + " bytes held) nor the spill limit");
    }
    if (Status made = MakeSpillDirLocked(); !made.ok()) {
      return Status::IOError("chunk store: memory budget of " + std::to_string(options_.memory_budget_bytes) +
                             " bytes is full and the spill failed: " + made.message());
    }
    stats_.spilled_bytes += size;
    const std::string path = spill_dir_ + "/" + id + ".arrows";
    lock.unlock();
    Status st = WriteWholeFile(path, bytes->span());
    lock.lock();
    if (!st.ok()) {
      stats_.spilled_bytes -= size;
      return Status::IOError("chunk store: memory budget of " + std::to_string(options_.memory_budget_bytes) +
                             " bytes is full and the spill failed: " + st.message());
    }
    e.spill_path = path;
    ++stats_.spilled_chunks;
    ++stats_.total_spilled_chunks;
  }
  ++stats_.chunks;
  entries_.emplace(id, std::move(e));
  return id;
}

Result<ChunkLink> LocalChunkStore::Link(const std::string& id, int64_t link_expiry_ms) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.find(id) == entries_.end()) return Status::KeyError("chunk store: no chunk " + id);
  }
  ChunkLink link;
  link.expiry_ms = link_expiry_ms;
  link.url = options_.link_base_url + "/files/" + id + "?" + signer_.Query(id, link_expiry_ms);
  return link;
}

Result<std::shared_ptr<Buffer>> LocalChunkStore::Get(const std::string& id) const {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return Status::KeyError("chunk store: no chunk " + id);
    if (it->second.memory) return it->second.memory;
    path = it->second.spill_path;
  }
  auto mapped = ipc::MapFile(path);
  if (!mapped.ok()) return Status::KeyError("chunk store: chunk " + id + " was removed while opening it");
  return mapped;
}

bool LocalChunkStore::SpillServed(const std::string& id) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second.memory || disk_->limit_bytes() == 0) return false;
  const int64_t size = it->second.size_bytes;
  DiskReservation disk(disk_);
  if (!disk.Grow(size, "a served result chunk").ok()) return false;
  if (!MakeSpillDirLocked().ok()) return false;
  std::shared_ptr<Buffer> bytes = it->second.memory;
  stats_.spilled_bytes += size;  // reserved before writing outside the lock
  const std::string path = spill_dir_ + "/" + id + ".arrows";
  lock.unlock();
  const Status st = WriteWholeFile(path, bytes->span());
  lock.lock();
  it = entries_.find(id);
  if (!st.ok() || it == entries_.end() || !it->second.memory) {
    // Failed, or removed (or moved) meanwhile: nothing changes hands.
    stats_.spilled_bytes -= size;
    if (st.ok()) std::remove(path.c_str());
    return false;
  }
  it->second.memory.reset();
  it->second.spill_path = path;
  it->second.disk = std::move(disk);
  stats_.memory_bytes -= size;
  ++stats_.spilled_chunks;
  ++stats_.total_spilled_chunks;
  return true;
}

void LocalChunkStore::Remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it != entries_.end()) EraseLocked(it);
}

int64_t LocalChunkStore::RemoveExpired(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.expiry_ms > 0 && it->second.expiry_ms <= now_ms) {
      EraseLocked(it);
      ++n;
    }
    it = next;
  }
  return n;
}

ChunkStoreStats LocalChunkStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

int64_t LocalChunkStore::CountSpillFiles() const {
  const std::string dir = spill_dir();
  if (dir.empty()) return 0;  // never spilled: no directory yet
  DIR* d = opendir(dir.c_str());
  if (!d) return -1;
  int64_t n = 0;
  while (dirent* ent = readdir(d)) {
    if (std::strcmp(ent->d_name, ".") != 0 && std::strcmp(ent->d_name, "..") != 0) ++n;
  }
  closedir(d);
  return n;
}

}  // namespace quiver::fetch
