// quiver/join/hashed_relation.cc — see hashed_relation.h and
// relation_serde.h.
#include "quiver/join/hashed_relation.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "quiver/base/checked_math.h"
#include "quiver/join/generic_hashed_relation.h"
#include "quiver/join/long_hashed_relation.h"
#include "quiver/join/relation_serde.h"

namespace quiver::join {

// --------------------------------------------------------------- RowStore --

void RowStore::Init(MemoryConsumer* consumer, MemoryReservation* reservation, int64_t planned_bytes,
                    int64_t max_page_bytes) {
  consumer_ = consumer;
  reservation_ = reservation;
  remaining_planned_ = planned_bytes;
  max_page_bytes_ = std::max<int64_t>(max_page_bytes, 4096);
}

Result<uint8_t*> RowStore::AppendSlow(int64_t size_bytes) {
  if (!pages_.empty()) pages_.back().used = cursor_ - pages_.back().page.data();
  // Size the page to what is still planned (all of it, usually), at least
  // the row, at most max_page_bytes (unless the row alone is larger).
  int64_t want = std::min(std::max<int64_t>(remaining_planned_, 64 * 1024), max_page_bytes_);
  want = std::max(want, size_bytes);
  QUIVER_ASSIGN_OR_RETURN(MemoryPage page, consumer_->AllocatePage(want, reservation_));
  remaining_planned_ = std::max<int64_t>(0, remaining_planned_ - want);
  Page p;
  p.page = std::move(page);
  cursor_ = p.page.data();
  end_ = cursor_ + p.page.size_bytes();
  pages_.push_back(std::move(p));
  uint8_t* r = cursor_;
  cursor_ += size_bytes;
  return r;
}

int64_t RowStore::used_bytes() const {
  int64_t total = 0;
  for (size_t i = 0; i < pages_.size(); ++i) {
    total += i + 1 == pages_.size() ? cursor_ - pages_[i].page.data() : pages_[i].used;
  }
  return total;
}

int64_t RowStore::charged_bytes() const {
  int64_t total = 0;
  for (const auto& p : pages_) total += p.page.charged_bytes();
  return total;
}

void RowStore::ForEachPage(const std::function<void(const uint8_t*, int64_t)>& fn) const {
  for (size_t i = 0; i < pages_.size(); ++i) {
    const int64_t used = i + 1 == pages_.size() ? cursor_ - pages_[i].page.data() : pages_[i].used;
    if (used > 0) fn(pages_[i].page.data(), used);
  }
}

void RowStore::Clear() {
  pages_.clear();
  cursor_ = end_ = nullptr;
  reservation_ = nullptr;
}

void RowStore::AdoptPage(MemoryPage page, int64_t used_bytes) {
  if (!pages_.empty()) pages_.back().used = cursor_ - pages_.back().page.data();
  Page p;
  p.page = std::move(page);
  cursor_ = p.page.data() + used_bytes;
  end_ = p.page.data() + p.page.size_bytes();
  pages_.push_back(std::move(p));
}

// --------------------------------------------------------- HashedRelation --

void HashedRelation::ForEachRow(const std::function<void(const uint8_t*)>& fn) const {
  if (closed_) return;
  rows_.ForEachPage([&](const uint8_t* begin, int64_t used) {
    int64_t off = 0;
    while (off < used) {
      const uint8_t* row = begin + off;
      fn(row);
      off += layout_.RowSize(row);
    }
  });
}

void HashedRelation::Close() {
  rows_.Clear();
  closed_ = true;
}

bool HashedRelation::StartBuild(const HashedRelationOptions& options, RowLayout layout, int64_t input_rows,
                                int64_t null_key_rows) {
  options_ = options;
  layout_ = std::move(layout);
  key_columns_ = options.key_columns;
  stats_.input_rows = input_rows;
  stats_.null_key_rows = null_key_rows;
  if (options.null_aware && null_key_rows > 0) {
    all_null_keys_ = true;  // NOT IN over a set with a null: nothing matches
    return true;
  }
  return false;
}

Result<MemoryReservation> HashedRelation::ReserveForBuild(const RelationSizeEstimate& est, std::string_view purpose) {
  TaskMemoryManager* tmm = memory_manager();
  stats_.estimated_bytes = est.total_bytes;
  int64_t reserve_bytes = 0;
  if (!CheckedAdd(tmm->PageChargeBytes(est.index_bytes), tmm->PageChargeBytes(est.row_bytes), &reserve_bytes)) {
    reserve_bytes = est.total_bytes;
  }
  return tmm->Reserve(reserve_bytes, purpose);
}

Result<MemoryPage> HashedRelation::AllocateZeroedPage(int64_t bytes, MemoryReservation* reservation) {
  QUIVER_ASSIGN_OR_RETURN(MemoryPage page, AllocatePage(bytes, reservation));
  if (!page.zeroed()) std::memset(page.data(), 0, static_cast<size_t>(bytes));
  return page;
}

void HashedRelation::FinishBuild(MemoryReservation* reservation, int64_t index_entries) {
  rows_.DetachReservation();
  reservation->Release();
  stats_.row_bytes = rows_.used_bytes();
  stats_.index_bytes = index_entries * 8;
  stats_.page_bytes = used_bytes();
}

Result<std::shared_ptr<Buffer>> HashedRelation::SerializeWith(
    serde_internal::Header* h, MemoryPool* pool,
    const std::function<uint64_t(int64_t, const serde_internal::RefMap&)>& entry) const {
  using namespace serde_internal;
  if (closed_) return Status::Invalid("cannot serialize a closed relation");
  h->layout_options = layout_.options();
  h->input_rows = stats_.input_rows;
  h->stored_rows = stats_.stored_rows;
  h->null_key_rows = stats_.null_key_rows;
  h->num_keys = stats_.num_keys;
  h->row_bytes = rows_.used_bytes();
  for (int k : key_columns_) h->key_columns.push_back(k);
  for (const auto& f : layout_.fields()) h->stored_columns.push_back(f.column);
  const int64_t header_bytes = HeaderBytes(*h);
  int64_t total = header_bytes + h->row_bytes;
  int64_t index_bytes;
  if (!CheckedMul<int64_t>(h->index_entries, 8, &index_bytes) || !CheckedAdd(total, index_bytes, &total)) {
    return Status::OutOfMemory("serialized relation size overflows");
  }
  QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, std::max<int64_t>(total, 1)));
  uint8_t* out = buf->mutable_data();
  WriteHeader(*h, out);
  WriteRows(rows_, layout_, out + header_bytes);
  RefMap refs(rows_);
  uint8_t* idx = out + header_bytes + h->row_bytes;
  for (int64_t i = 0; i < h->index_entries; ++i) StoreI64(idx + i * 8, static_cast<int64_t>(entry(i, refs)));
  return buf;
}

void HashedRelation::AdoptHeader(const serde_internal::Header& h, RowLayout layout, std::vector<int> key_columns) {
  layout_ = std::move(layout);
  key_columns_ = std::move(key_columns);
  options_.key_columns = key_columns_;
  stats_.input_rows = h.input_rows;
  stats_.stored_rows = h.stored_rows;
  stats_.null_key_rows = h.null_key_rows;
  stats_.num_keys = h.num_keys;
  keys_unique_ = h.flags & serde_internal::kFlagUnique;
  all_null_keys_ = h.flags & serde_internal::kFlagAllNull;
}

Result<MemoryReservation> HashedRelation::LoadRowsPage(const serde_internal::Header& h, int64_t index_bytes,
                                                       const uint8_t* rows, std::string_view purpose,
                                                       uint8_t** row_base) {
  TaskMemoryManager* tmm = memory_manager();
  int64_t reserve_bytes = 0;
  if (!CheckedAdd(tmm->PageChargeBytes(index_bytes), tmm->PageChargeBytes(h.row_bytes), &reserve_bytes)) {
    return Status::OutOfMemory("deserialized relation size overflows");
  }
  QUIVER_ASSIGN_OR_RETURN(MemoryReservation reservation, tmm->Reserve(reserve_bytes, purpose));
  *row_base = nullptr;
  if (h.row_bytes > 0) {
    QUIVER_ASSIGN_OR_RETURN(MemoryPage page, AllocatePage(h.row_bytes, &reservation));
    if (!TaggedIndex::Fits(page.data(), h.row_bytes)) {
      return Status::NotImplemented("row address above 2^48 cannot be indexed");
    }
    *row_base = page.data();
    serde_internal::LoadRows(rows, h.row_bytes, layout_, *row_base);
    rows_.AdoptPage(std::move(page), h.row_bytes);
  }
  return reservation;
}

Result<uint64_t*> HashedRelation::LoadIndex(const serde_internal::Header& h, int64_t index_bytes, const uint8_t* idx,
                                            uint64_t ref_mask, uint8_t* row_base, MemoryReservation* reservation,
                                            MemoryPage* index_page) {
  uint64_t* dst = nullptr;
  if (h.index_entries > 0) {
    QUIVER_ASSIGN_OR_RETURN(*index_page, AllocatePage(index_bytes, reservation));
    dst = reinterpret_cast<uint64_t*>(index_page->data());
    for (int64_t i = 0; i < h.index_entries; ++i) {
      const uint64_t e = static_cast<uint64_t>(serde_internal::LoadI64(idx + i * 8));
      const uint64_t ref = e & ref_mask;
      const uint64_t ptr = ref == 0 ? 0 : reinterpret_cast<uint64_t>(row_base + (ref - 1));
      dst[i] = e == 0 ? 0 : ((e & ~ref_mask) | ptr);
    }
  }
  stats_.row_bytes = h.row_bytes;
  stats_.index_bytes = index_bytes;
  stats_.page_bytes = used_bytes();
  return dst;
}

Status CheckRelationOptions(const Schema& build_schema, const HashedRelationOptions& options) {
  if (options.key_columns.empty()) return Status::Invalid("a hashed relation needs a key column");
  for (int k : options.key_columns) {
    if (k < 0 || k >= build_schema.num_fields()) {
      return Status::Invalid("key column index " + std::to_string(k) + " is out of range (the build schema has " +
                             std::to_string(build_schema.num_fields()) + " fields)");
    }
  }
  if (!(options.load_factor > 0 && options.load_factor <= 0.9)) {
    return Status::Invalid("load_factor must be in (0, 0.9], got " + std::to_string(options.load_factor));
  }
  if (options.max_page_bytes <= 0) return Status::Invalid("max_page_bytes must be positive");
  return Status::OK();
}

std::vector<int> PayloadColumns(const Schema& build_schema, const HashedRelationOptions& options) {
  if (options.payload_columns) return *options.payload_columns;
  std::vector<int> all(build_schema.fields.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return all;
}

Result<std::shared_ptr<HashedRelation>> BuildHashedRelation(const Schema& build_schema,
                                                            const std::vector<RecordBatchPtr>& batches,
                                                            const HashedRelationOptions& options,
                                                            const std::vector<KeyColumnSpec>& specs,
                                                            TaskMemoryManager* tmm) {
  QUIVER_RETURN_NOT_OK(CheckRelationOptions(build_schema, options));
  if (specs.size() != options.key_columns.size()) {
    return Status::Invalid("expected one key spec per key column");
  }
  if (options.key_columns.size() == 1 && specs[0].key_class == KeyClass::kInt64 &&
      LoadsAsInt64(*build_schema.fields[options.key_columns[0]]->type)) {
    QUIVER_ASSIGN_OR_RETURN(auto r, LongHashedRelation::Build(build_schema, batches, options, tmm));
    return std::shared_ptr<HashedRelation>(std::move(r));
  }
  QUIVER_ASSIGN_OR_RETURN(auto r, GenericHashedRelation::Build(build_schema, batches, options, specs, tmm));
  return std::shared_ptr<HashedRelation>(std::move(r));
}

Result<std::shared_ptr<HashedRelation>> DeserializeHashedRelation(const Schema& build_schema, const Buffer& bytes,
                                                                  TaskMemoryManager* tmm) {
  serde_internal::Header h;
  int64_t consumed = 0;
  QUIVER_RETURN_NOT_OK(serde_internal::ReadHeader(bytes.data(), bytes.size(), &h, &consumed));
  if (h.kind == RelationKind::kLong) {
    QUIVER_ASSIGN_OR_RETURN(auto r, LongHashedRelation::Deserialize(build_schema, bytes, tmm));
    return std::shared_ptr<HashedRelation>(std::move(r));
  }
  QUIVER_ASSIGN_OR_RETURN(auto r, GenericHashedRelation::Deserialize(build_schema, bytes, tmm));
  return std::shared_ptr<HashedRelation>(std::move(r));
}

// ------------------------------------------------------------------ serde --

namespace serde_internal {

int64_t HeaderBytes(const Header& h) {
  const int64_t ints = static_cast<int64_t>(h.key_columns.size() + h.stored_columns.size());
  return 8 + 8 + 8 + 8 * 8 + RoundUpTo8(ints * 4);
}

void WriteHeader(const Header& h, uint8_t* out) {
  std::memset(out, 0, static_cast<size_t>(HeaderBytes(h)));
  std::memcpy(out, kMagic, 8);
  out[8] = static_cast<uint8_t>(h.kind);
  out[9] = h.flags;
  const uint16_t lo = (h.layout_options.with_ordinal ? 1 : 0) | (h.layout_options.with_validity ? 2 : 0) |
                      (h.layout_options.with_key_bytes ? 4 : 0) | (h.layout_options.with_int64_key ? 8 : 0);
  std::memcpy(out + 10, &lo, 2);
  const uint32_t nk = static_cast<uint32_t>(h.key_columns.size());
  const uint32_t ns = static_cast<uint32_t>(h.stored_columns.size());
  std::memcpy(out + 12, &nk, 4);
  std::memcpy(out + 16, &ns, 4);
  const int64_t vals[8] = {h.input_rows, h.stored_rows, h.null_key_rows, h.num_keys,
                           h.min_key,    h.max_key,     h.index_entries, h.row_bytes};
  std::memcpy(out + 24, vals, sizeof vals);
  uint8_t* p = out + 24 + sizeof vals;
  for (int32_t c : h.key_columns) {
    std::memcpy(p, &c, 4);
    p += 4;
  }
  for (int32_t c : h.stored_columns) {
    std::memcpy(p, &c, 4);
    p += 4;
  }
}

Status ReadHeader(const uint8_t* data, int64_t size, Header* h, int64_t* consumed) {
  constexpr int64_t kFixed = 24 + 64;
  if (size < kFixed) {
    return Status::Invalid("serialized relation: " + std::to_string(size) + " bytes is shorter than the " +
                           std::to_string(kFixed) + "-byte header");
  }
  if (std::memcmp(data, kMagic, 8) != 0) return Status::Invalid("serialized relation: bad magic");
  if (data[8] != static_cast<uint8_t>(RelationKind::kLong) && data[8] != static_cast<uint8_t>(RelationKind::kGeneric)) {
    return Status::Invalid("serialized relation: unknown kind " + std::to_string(data[8]));
  }
  h->kind = static_cast<RelationKind>(data[8]);
  h->flags = data[9];
  if (h->flags & ~(kFlagDense | kFlagUnique | kFlagAllNull)) {
    return Status::Invalid("serialized relation: unknown flags " + std::to_string(h->flags));
  }
  uint16_t lo;
  std::memcpy(&lo, data + 10, 2);
  if (lo & ~15) return Status::Invalid("serialized relation: unknown layout options " + std::to_string(lo));
  h->layout_options.with_ordinal = lo & 1;
  h->layout_options.with_validity = lo & 2;
  h->layout_options.with_key_bytes = lo & 4;
  h->layout_options.with_int64_key = lo & 8;
  uint32_t nk, ns;
  std::memcpy(&nk, data + 12, 4);
  std::memcpy(&ns, data + 16, 4);
  int64_t vals[8];
  std::memcpy(vals, data + 24, sizeof vals);
  h->input_rows = vals[0];
  h->stored_rows = vals[1];
  h->null_key_rows = vals[2];
  h->num_keys = vals[3];
  h->min_key = vals[4];
  h->max_key = vals[5];
  h->index_entries = vals[6];
  h->row_bytes = vals[7];
  for (int i : {0, 1, 2, 3, 6, 7}) {
    if (vals[i] < 0) return Status::Invalid("serialized relation: negative count in the header");
  }
  if (nk == 0 || nk > 4096 || ns > 1u << 20) {
    return Status::Invalid("serialized relation: " + std::to_string(nk) + " key columns and " + std::to_string(ns) +
                           " stored columns are out of range");
  }
  const int64_t ints_bytes = RoundUpTo8((int64_t{nk} + ns) * 4);
  if (size - kFixed < ints_bytes) return Status::Invalid("serialized relation: truncated header");
  const uint8_t* p = data + kFixed;
  h->key_columns.resize(nk);
  h->stored_columns.resize(ns);
  for (auto& c : h->key_columns) {
    std::memcpy(&c, p, 4);
    p += 4;
  }
  for (auto& c : h->stored_columns) {
    std::memcpy(&c, p, 4);
    p += 4;
  }
  *consumed = kFixed + ints_bytes;
  return Status::OK();
}

RefMap::RefMap(const RowStore& store) {
  int64_t region = 0;
  store.ForEachPage([&](const uint8_t* begin, int64_t used) {
    spans_.push_back({reinterpret_cast<uintptr_t>(begin), reinterpret_cast<uintptr_t>(begin) + used, region});
    region += used;
  });
  std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
}

uint64_t RefMap::RefOf(const uint8_t* row) const {
  if (row == nullptr) return 0;
  const auto a = reinterpret_cast<uintptr_t>(row);
  if (spans_.size() == 1) return static_cast<uint64_t>(a - spans_[0].begin + spans_[0].region_offset) + 1;
  auto it = std::upper_bound(spans_.begin(), spans_.end(), a, [](uintptr_t v, const Span& s) { return v < s.begin; });
  --it;
  return static_cast<uint64_t>(a - it->begin + it->region_offset) + 1;
}

void WriteRows(const RowStore& store, const RowLayout& layout, uint8_t* out) {
  RefMap refs(store);
  int64_t region = 0;
  store.ForEachPage([&](const uint8_t* begin, int64_t used) {
    std::memcpy(out + region, begin, static_cast<size_t>(used));
    int64_t off = 0;
    while (off < used) {
      const uint8_t* row = begin + off;
      const uint64_t ref = refs.RefOf(RowLayout::Next(row));
      std::memcpy(out + region + off, &ref, 8);
      off += layout.RowSize(row);
    }
    region += used;
  });
}

Status ValidateRows(const RowLayout& layout, const uint8_t* data, int64_t size, int64_t expected_rows,
                    std::vector<uint64_t>* row_starts) {
  row_starts->assign(static_cast<size_t>((size / 8 + 63) / 64 + 1), 0);
  int64_t off = 0, index = 0;
  const int64_t fixed = layout.fixed_bytes();
  std::vector<int32_t> var_slots;
  if (layout.key_slot_offset() >= 0) var_slots.push_back(layout.key_slot_offset());
  for (int f : layout.var_fields()) var_slots.push_back(layout.fields()[f].slot_offset);
  while (off < size) {
    auto bad = [&](const std::string& what) {
      return Status::Invalid("serialized relation: row " + std::to_string(index) + " at offset " + std::to_string(off) +
                             ": " + what);
    };
    if (size - off < fixed) return bad("truncated (needs " + std::to_string(fixed) + " bytes)");
    const uint8_t* row = data + off;
    const uint64_t next = static_cast<uint64_t>(LoadI64(row));
    if (next != 0 && (next - 1 >= static_cast<uint64_t>(off) || !IsRowStart(*row_starts, next, size))) {
      return bad("next ref " + std::to_string(next) + " does not name an earlier row");
    }
    if (layout.options().with_ordinal && LoadI64(row + 8) != index) {
      return bad("ordinal " + std::to_string(LoadI64(row + 8)) + " is not " + std::to_string(index));
    }
    int64_t end = fixed;
    for (int32_t slot : var_slots) {
      uint32_t o, n;
      std::memcpy(&o, row + slot, 4);
      std::memcpy(&n, row + slot + 4, 4);
      if (o < fixed || int64_t{o} + n > size - off) {
        return bad("variable-width value [" + std::to_string(o) + ", +" + std::to_string(n) + ") is outside the row");
      }
      end = std::max<int64_t>(end, int64_t{o} + n);
    }
    end = RoundUpTo8(end);
    if (end > size - off) return bad("row of " + std::to_string(end) + " bytes runs past the region");
    const uint64_t bit = static_cast<uint64_t>(off) >> 3;
    (*row_starts)[bit >> 6] |= uint64_t{1} << (bit & 63);
    off += end;
    ++index;
  }
  if (index != expected_rows) {
    return Status::Invalid("serialized relation: " + std::to_string(index) + " rows in the region, header says " +
                           std::to_string(expected_rows));
  }
  return Status::OK();
}

void LoadRows(const uint8_t* data, int64_t size, const RowLayout& layout, uint8_t* page) {
  std::memcpy(page, data, static_cast<size_t>(size));
  int64_t off = 0;
  while (off < size) {
    uint8_t* row = page + off;
    const uint64_t ref = static_cast<uint64_t>(LoadI64(row));
    RowLayout::SetNext(row, ref == 0 ? nullptr : page + (ref - 1));
    off += layout.RowSize(row);
  }
}

Status ValidateRowRegion(const Header& h, const RowLayout& layout, const uint8_t* rows,
                         std::vector<uint64_t>* row_starts) {
  if (h.row_bytes >= static_cast<int64_t>(TaggedIndex::kPointerMask)) {
    return Status::Invalid("serialized relation: row region too large");
  }
  QUIVER_RETURN_NOT_OK(ValidateRows(layout, rows, h.row_bytes, h.stored_rows, row_starts));
  if (h.flags & kFlagUnique) {
    for (int64_t o = 0; o < h.row_bytes;) {
      if (LoadI64(rows + o) != 0) return Status::Invalid("serialized relation: a unique relation has a chain");
      o += layout.RowSize(rows + o);
    }
  }
  return Status::OK();
}

}  // namespace serde_internal
int64_t PlannedDistinctKeys(int64_t non_null_rows, int64_t distinct_estimate, const HashedRelationOptions& options) {
  const double est = options.distinct_keys_hint > 0
                         ? static_cast<double>(options.distinct_keys_hint)
                         : std::ceil(static_cast<double>(distinct_estimate) * kDistinctEstimateSlack);
  return std::max<int64_t>(1, std::min<int64_t>(non_null_rows, static_cast<int64_t>(est)));
}

void FillEstimateBytes(int64_t stored_rows, int64_t row_fixed_bytes, int64_t var_bytes, RelationSizeEstimate* e) {
  constexpr int64_t kSaturatedPart = std::numeric_limits<int64_t>::max() / 4;
  if (!CheckedMul<int64_t>(e->index_entries, 8, &e->index_bytes)) e->index_bytes = kSaturatedPart;
  if (!CheckedMul<int64_t>(stored_rows, row_fixed_bytes, &e->row_bytes) ||
      !CheckedAdd<int64_t>(e->row_bytes, var_bytes, &e->row_bytes)) {
    e->row_bytes = kSaturatedPart;
  }
  if (!CheckedAdd(e->row_bytes, e->index_bytes, &e->total_bytes)) {
    e->total_bytes = std::numeric_limits<int64_t>::max() / 2;
  }
}

int64_t SparseIndexSlots(int64_t distinct, double load_factor) {
  int64_t homes = static_cast<int64_t>(std::ceil(static_cast<double>(distinct) / load_factor));
  homes = std::max<int64_t>({homes, 16, distinct + 1});
  return TaggedIndex::SlotsFor(homes);
}

}  // namespace quiver::join
