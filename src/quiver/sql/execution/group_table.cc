// quiver/sql/execution/group_table.cc — see group_table.h.
#include "quiver/sql/execution/group_table.h"

#include <algorithm>

namespace quiver::sql {

Status ByteArena::EnsureFree(size_t len) {
  const int64_t n = static_cast<int64_t>(len);
  if (!pages_.empty() && used_ + n <= capacity_) return Status::OK();
  const int64_t size = std::max<int64_t>(int64_t{256} << 10, n);
  QUIVER_ASSIGN_OR_RETURN(auto page, consumer_->memory_manager()->AllocatePage(size, consumer_));
  capacity_ = page.size_bytes();
  used_ = 0;
  pages_.push_back(std::move(page));
  return Status::OK();
}

Result<uint8_t*> ByteArena::Append(const uint8_t* data, size_t len) {
  QUIVER_ASSIGN_OR_RETURN(uint8_t * dst, Allocate(len));
  if (len) std::memcpy(dst, data, len);
  return dst;
}

Result<uint8_t*> ByteArena::Allocate(size_t len) {
  const int64_t n = static_cast<int64_t>(len);
  if (pages_.empty() || used_ + n > capacity_) {
    const int64_t size = std::max<int64_t>(int64_t{256} << 10, n);  // small tables stay small
    QUIVER_ASSIGN_OR_RETURN(auto page, consumer_->memory_manager()->AllocatePage(size, consumer_));
    capacity_ = page.size_bytes();
    used_ = 0;
    pages_.push_back(std::move(page));
  }
  uint8_t* dst = pages_.back().data() + used_;
  used_ += n;
  return dst;
}

uint64_t HashBytes(const uint8_t* p, size_t len) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (len * 0xC2B2AE3D27D4EB4FULL);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ (w * 0xBF58476D1CE4E5B9ULL)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  if (i < len) std::memcpy(&tail, p + i, len - i);
  h = (h ^ (tail * 0xBF58476D1CE4E5B9ULL)) * 0x94D049BB133111EBULL;
  h ^= h >> 29;
  h *= 0xD6E8FEB86659FD93ULL;
  h ^= h >> 32;
  return h;
}

Status IntGroupMap::Grow(int64_t keys) {
  int64_t cap = capacity_ == 0 ? 1024 : capacity_ * 2;
  while (keys * 2 > cap) cap *= 2;
  QUIVER_ASSIGN_OR_RETURN(
      auto page, consumer_->memory_manager()->AllocatePage(cap * static_cast<int64_t>(sizeof(Entry)), consumer_));
  auto* entries = reinterpret_cast<Entry*>(page.data());
  for (int64_t i = 0; i < cap; ++i) entries[i].group = -1;
  const uint64_t mask = static_cast<uint64_t>(cap - 1);
  for (int64_t i = 0; i < capacity_; ++i) {
    if (entries_[i].group < 0) continue;
    uint64_t s = Mix(entries_[i].key) & mask;
    while (entries[s].group >= 0) s = (s + 1) & mask;
    entries[s] = entries_[i];
  }
  page_ = std::move(page);
  entries_ = entries;
  capacity_ = cap;
  return Status::OK();
}

Status IntGroupMap::Insert(uint64_t key, int64_t group) {
  if ((size_ + 1) * 2 > capacity_) QUIVER_RETURN_NOT_OK(Grow());
  const uint64_t mask = static_cast<uint64_t>(capacity_ - 1);
  uint64_t s = Mix(key) & mask;
  while (entries_[s].group >= 0) {
    if (entries_[s].key == key) return Status::OK();
    s = (s + 1) & mask;
  }
  entries_[s] = Entry{key, group};
  ++size_;
  return Status::OK();
}

GroupTable::GroupTable(join::MemoryConsumer* consumer) : consumer_(consumer), arena_(consumer), keys_(consumer) {}

Status GroupTable::Grow(int64_t groups) {
  int64_t new_capacity = capacity_ == 0 ? 1024 : capacity_ * 2;
  while (groups * 2 > new_capacity) new_capacity *= 2;
  QUIVER_ASSIGN_OR_RETURN(auto page, consumer_->memory_manager()->AllocatePage(new_capacity * 8, consumer_));
  auto* slots = reinterpret_cast<uint64_t*>(page.data());
  std::memset(slots, 0, static_cast<size_t>(new_capacity) * 8);
  const uint64_t mask = static_cast<uint64_t>(new_capacity - 1);
  for (int64_t g = 0; g < indexed_; ++g) {
    const uint64_t h = keys_[g].hash;
    uint64_t s = h & mask;
    while (slots[s]) s = (s + 1) & mask;
    slots[s] = ((h >> 48) << 48) | static_cast<uint64_t>(g + 1);
  }
  slots_page_ = std::move(page);
  slots_ = slots;
  capacity_ = new_capacity;
  return Status::OK();
}

Status GroupTable::IndexPending() {
  if ((keys_.size() + 1) * 2 > capacity_) QUIVER_RETURN_NOT_OK(Grow(keys_.size() + 1));
  const uint64_t mask = static_cast<uint64_t>(capacity_ - 1);
  for (; indexed_ < keys_.size(); ++indexed_) {
    KeyRef& k = keys_[indexed_];
    k.hash = HashBytes(k.data, k.len);
    uint64_t s = k.hash & mask;
    while (slots_[s]) s = (s + 1) & mask;
    slots_[s] = ((k.hash >> 48) << 48) | static_cast<uint64_t>(indexed_ + 1);
  }
  return Status::OK();
}

Result<int64_t> GroupTable::AppendNew(const uint8_t* key, uint32_t len) {
  QUIVER_ASSIGN_OR_RETURN(uint8_t * stored, arena_.Append(key, len));
  const int64_t g = keys_.size();
  QUIVER_RETURN_NOT_OK(keys_.Append(KeyRef{stored, len, 0}));
  return g;
}

int64_t GroupTable::Find(const uint8_t* key, uint32_t len, uint64_t hash) const {
  if (capacity_ == 0) return -1;
  const uint64_t mask = static_cast<uint64_t>(capacity_ - 1);
  const uint64_t tag = hash >> 48;
  for (uint64_t s = hash & mask;; s = (s + 1) & mask) {
    const uint64_t e = slots_[s];
    if (e == 0) return -1;
    if ((e >> 48) != tag) continue;
    const int64_t g = static_cast<int64_t>(e & ((uint64_t{1} << 48) - 1)) - 1;
    const KeyRef& k = keys_[g];
    if (k.len == len && std::memcmp(k.data, key, len) == 0) return g;
  }
}

Status GroupTable::FindOrInsert(const uint8_t* key, uint32_t len, uint64_t hash, int64_t* group, bool* inserted) {
  if (indexed_ < keys_.size()) QUIVER_RETURN_NOT_OK(IndexPending());
  if ((keys_.size() + 1) * 2 > capacity_) QUIVER_RETURN_NOT_OK(Grow(keys_.size() + 1));
  const uint64_t mask = static_cast<uint64_t>(capacity_ - 1);
  const uint64_t tag = hash >> 48;
  uint64_t s = hash & mask;
  while (true) {
    const uint64_t e = slots_[s];
    if (e == 0) break;
    if ((e >> 48) == tag) {
      const int64_t g = static_cast<int64_t>(e & ((uint64_t{1} << 48) - 1)) - 1;
      const KeyRef& k = keys_[g];
      if (k.len == len && std::memcmp(k.data, key, len) == 0) {
        *group = g;
        *inserted = false;
        return Status::OK();
      }
    }
    s = (s + 1) & mask;
  }
  QUIVER_ASSIGN_OR_RETURN(uint8_t * stored, arena_.Append(key, len));
  const int64_t g = keys_.size();
  QUIVER_RETURN_NOT_OK(keys_.Append(KeyRef{stored, len, hash}));
  slots_[s] = (tag << 48) | static_cast<uint64_t>(g + 1);
  indexed_ = keys_.size();
  *group = g;
  *inserted = true;
  return Status::OK();
}

}  // namespace quiver::sql
