// quiver/join/hashed_relation.h — what the hash join needs from a build
// side: rows stored once in pages, an index from key to the first row of a
// chain, and the bookkeeping for null keys, duplicates and outer joins
// (Spark's HashedRelation; quiver has LongHashedRelation for one int64-like
// key and GenericHashedRelation for everything else).
//
// Life cycle: built once (Build* functions of the subclasses) from record
// batches, with memory from a TaskMemoryManager; then read-only, so any
// number of threads may probe it concurrently (broadcast use); Close()
// returns every page at once (shuffled use: one relation per partition,
// closed when its partition is done). Probing a closed relation finds
// nothing.
//
// Sizes are predicted before building by pure EstimateSize functions and
// reserved from the pool up front: a build that does not fit its pool
// fails at once with OutOfMemory naming the bytes needed and available.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/checked_math.h"
#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/join/key_types.h"
#include "quiver/join/row_format.h"
#include "quiver/join/tagged_index.h"
#include "quiver/join/task_memory_manager.h"

namespace quiver::join {

namespace serde_internal {
struct Header;
class RefMap;
}  // namespace serde_internal

/// How a build may use more than one thread. The join layer has no thread
/// pool of its own: the caller (the SQL engine's scheduler, a benchmark)
/// lends one through `parallel_for`.
struct BuildParallelism {
  /// Runs body(0) .. body(tasks - 1), possibly several at once, and returns
  /// once all have returned, with the first error any returned. `body` is
  /// safe to call concurrently with distinct indices. Null: the build runs
  /// on the calling thread.
  std::function<Status(int tasks, const std::function<Status(int)>& body)> parallel_for;
  /// Tasks to split a build into (the caller's worker count); <= 1: one
  /// thread.
  int tasks = 1;
};

/// What to store and how. Defaults suit an inner join.
struct HashedRelationOptions {
  /// Build key columns (indices into the build schema), at least one.
  std::vector<int> key_columns;
  /// Build columns stored in the rows (what the join outputs from the
  /// build side); nullopt = every column. May be empty (semi/anti joins).
  std::optional<std::vector<int>> payload_columns;
  /// Store rows whose key is null (never matched; returned by ForEachRow),
  /// for joins that output unmatched build rows (right / full outer).
  bool keep_null_keys = false;
  /// Keep only the first row of each key (semi and anti joins).
  bool ignore_duplicate_keys = false;
  /// Null-aware anti join: one null build key makes the relation
  /// all-null (all_null_keys()), and nothing is stored.
  bool null_aware = false;
  /// Give every row an ordinal (0-based, write order), for matched bitmaps
  /// of joins that output unmatched build rows.
  bool with_ordinals = false;
  /// LongHashedRelation: allow the dense mode (an array indexed by key -
  /// min) when the key range has at most dense_entries_per_key entries per
  /// distinct key. 3.0 keeps the dense index at <= 24 bytes per key, the
  /// same bound as the sparse one.
  bool allow_dense = true;
  double dense_entries_per_key = 3.0;
  /// LongHashedRelation: also dense, whatever the density, when the key
  /// range has at most this many entries (default 64 Ki: a 512 KiB array,
  /// which stays in L2). A small relation probed by many keys it lacks
  /// (TPC-H Q11: 391 supplier keys in 1..10,000, probed by 800,000
  /// partsupp rows) then takes one branch-free array read per probe
  /// instead of a linear-probing scan to an empty slot (~19 ns a probe).
  int64_t dense_max_small_range = int64_t{1} << 16;
  /// Sparse indices (TaggedIndex, 8-byte slots): target load factor
  /// (distinct keys / home slots), after a 5% allowance for the
  /// distinct-count estimate's error. 0.5 gives 16 bytes per key (16.8 when
  /// the estimate is exact and below the row count) and probes of ~1.5
  /// slots (hits) / ~2.5 slots (misses); the index grows (x1.5) only if
  /// the real load passes 0.8. Must be in (0, 0.9].
  double load_factor = 0.5;
  /// Known number of distinct non-null keys, used instead of the
  /// statistics pass's estimate to size a sparse index (0 = estimate). A
  /// low hint is safe: the index grows (x1.5 and rehash) when its load
  /// passes max(0.8, load_factor + 0.1).
  int64_t distinct_keys_hint = 0;
  /// Largest row page; rows never straddle pages. Pages are sized to the
  /// predicted row bytes, so a relation usually has one row page.
  int64_t max_page_bytes = int64_t{1} << 30;
  /// Threads for the build's insert pass. LongHashedRelation inserts
  /// concurrently when it has parallelism.tasks > 1 (rows of any width;
  /// variable-width ones cost 8 more bytes a row of the relation's memory
  /// while the build runs), at least kMinParallelBuildRows rows in two or
  /// more batches, and keeps
  /// every row of a key (not ignore_duplicate_keys); other builds ignore
  /// it. A concurrent build stores the same rows, ordinals and keys as a
  /// serial one; only the order of the rows within a duplicate chain may
  /// differ.
  BuildParallelism parallelism;
  static constexpr int64_t kMinParallelBuildRows = int64_t{1} << 17;
};

/// What EstimateSize predicts (bytes).
struct RelationSizeEstimate {
  bool dense = false;
  int64_t index_entries = 0;  ///< slots (sparse) or array entries (dense)
  int64_t index_bytes = 0;
  int64_t row_bytes = 0;
  int64_t total_bytes = 0;
};

// ---- sparse index sizing, shared by both relations ----
//
// A sparse index (TaggedIndex, 8-byte slots) is sized before the build for
// the planned number of distinct keys at options.load_factor, and grows
// (HashedRelation::GrowSparseIndex) when the estimate was low.

/// Allowance for the distinct-count sketch's error (+5%).
inline constexpr double kDistinctEstimateSlack = 1.05;
/// The sparse index grows when its real load passes
/// min(0.95, max(kSparseMaxLoad, load_factor + 0.1)).
inline constexpr double kSparseMaxLoad = 0.8;

/// Distinct non-null keys a sparse index is sized for:
/// options.distinct_keys_hint when > 0, else ceil(distinct_estimate *
/// kDistinctEstimateSlack); clamped to [1, non_null_rows]. Pure.
int64_t PlannedDistinctKeys(int64_t non_null_rows, int64_t distinct_estimate, const HashedRelationOptions& options);

/// Slots (home positions + TaggedIndex::kWindow) of a sparse index for
/// `distinct` keys: max(ceil(distinct / load_factor), 16, distinct + 1)
/// home positions. Pure.
int64_t SparseIndexSlots(int64_t distinct, double load_factor);

/// The byte fields of a size estimate whose index_entries (8-byte slots or
/// dense entries) is set: index_bytes = index_entries x 8; row_bytes =
/// stored_rows x row_fixed_bytes + var_bytes; total_bytes their sum. A
/// part that overflows saturates at INT64_MAX / 4, the total at
/// INT64_MAX / 2 (so that a reservation of it fails cleanly). Pure.
void FillEstimateBytes(int64_t stored_rows, int64_t row_fixed_bytes, int64_t var_bytes, RelationSizeEstimate* e);

/// Rows a relation stores: the rows with a non-null key, plus those with a
/// null key when options.keep_null_keys. Pure.
inline int64_t StoredRows(int64_t input_rows, int64_t null_key_rows, const HashedRelationOptions& options) {
  return input_rows - null_key_rows + (options.keep_null_keys ? null_key_rows : 0);
}

/// Counters of a built relation.
struct RelationStats {
  int64_t input_rows = 0;       ///< build rows seen
  int64_t stored_rows = 0;      ///< rows in pages (ordinals 0..stored_rows-1)
  int64_t null_key_rows = 0;    ///< input rows with a null key
  int64_t num_keys = 0;         ///< distinct non-null keys indexed
  int64_t index_bytes = 0;      ///< bytes of the index (slots or dense array)
  int64_t row_bytes = 0;        ///< bytes of rows written
  int64_t page_bytes = 0;       ///< bytes charged for row pages and the index
  int64_t estimated_bytes = 0;  ///< EstimateSize's total, reserved up front
  int64_t grow_count = 0;       ///< sparse index regrowths (estimate too low)
};

/// Pages of rows, written once, walked in write order.
class RowStore {
 public:
  RowStore() = default;
  RowStore(RowStore&&) = default;
  RowStore& operator=(RowStore&&) = default;

  /// Sets where pages come from and the planned total (for page sizes).
  void Init(MemoryConsumer* consumer, MemoryReservation* reservation, int64_t planned_bytes, int64_t max_page_bytes);
  /// Space for one row of `size_bytes` (multiple of 8), 8-byte aligned.
  /// Errors: OutOfMemory from the page allocation.
  Result<uint8_t*> Append(int64_t size_bytes) {
    if (size_bytes <= end_ - cursor_) {  // no `cursor_ + n` before the first page (null + n is UB)
      uint8_t* p = cursor_;
      cursor_ += size_bytes;
      return p;
    }
    return AppendSlow(size_bytes);
  }
  /// Number of pages and bytes written.
  int64_t num_pages() const { return static_cast<int64_t>(pages_.size()); }
  int64_t used_bytes() const;
  int64_t charged_bytes() const;
  /// Calls fn(page_begin, page_used_bytes) for each page in write order.
  void ForEachPage(const std::function<void(const uint8_t*, int64_t)>& fn) const;
  /// Returns every page. Idempotent.
  void Clear();
  /// Forgets the reservation (it is about to be released).
  void DetachReservation() { reservation_ = nullptr; }
  /// Adopts a page holding `used_bytes` of rows (deserialization).
  void AdoptPage(MemoryPage page, int64_t used_bytes);

 private:
  Result<uint8_t*> AppendSlow(int64_t size_bytes);
  struct Page {
    MemoryPage page;
    int64_t used = 0;
  };
  MemoryConsumer* consumer_ = nullptr;
  MemoryReservation* reservation_ = nullptr;
  int64_t remaining_planned_ = 0;
  int64_t max_page_bytes_ = int64_t{1} << 30;
  std::vector<Page> pages_;
  uint8_t* cursor_ = nullptr;
  uint8_t* end_ = nullptr;
};

/// Which relation a serialized byte string holds.
enum class RelationKind : uint8_t { kLong = 1, kGeneric = 2 };

/// The build side of a hash join; see the file comment. Built by the
/// subclasses; read-only afterwards.
class HashedRelation : public MemoryConsumer {
 public:
  ~HashedRelation() override = default;

  virtual RelationKind kind() const = 0;
  /// The layout of the stored rows (payload columns).
  const RowLayout& layout() const { return layout_; }
  const RelationStats& stats() const { return stats_; }
  /// Key column indices in the build schema.
  const std::vector<int>& key_columns() const { return key_columns_; }

  /// True when no key has two rows (the chain walk can stop at the head).
  bool keys_unique() const { return keys_unique_; }
  /// Null-aware relations: true when the build side had a null key (a
  /// NOT IN over it matches nothing).
  bool all_null_keys() const { return all_null_keys_; }
  /// True when the build side had no rows at all.
  bool empty_input() const { return stats_.input_rows == 0; }

  /// For probe rows [begin, begin + n) of the probe key columns (one per
  /// build key column, types resolved with ResolveKeyPair), writes the
  /// first row of the matching chain, or nullptr (no match, or a null
  /// key), to out[0..n). Follow chains with RowLayout::Next. Safe from any
  /// number of threads at once. Any n >= 0; kLookupChunk keys at a time is
  /// the size the implementations stage internally.
  virtual void Lookup(const std::vector<const ArrayData*>& probe_keys, int64_t begin, int64_t n,
                      const uint8_t** out) const = 0;
  static constexpr int64_t kLookupChunk = 1024;
  /// How many keys ahead of the one being probed both relations prefetch
  /// the index entry (a distance that covers a DRAM miss at the probe's
  /// per-key cost; measured in the join bench).
  static constexpr int64_t kPrefetchAhead = 16;

  /// Calls fn(row) for every stored row in write order (ordinal order),
  /// null-key rows included.
  void ForEachRow(const std::function<void(const uint8_t*)>& fn) const;

  /// Serializes the relation to bytes (broadcast: build once, ship, and
  /// Deserialize on other workers). Buffer from `pool`. Errors:
  /// OutOfMemory; Invalid on a closed relation.
  virtual Result<std::shared_ptr<Buffer>> Serialize(MemoryPool* pool) const = 0;

  /// Returns every page (index and rows) to the memory manager at once.
  /// Idempotent; the relation finds nothing afterwards.
  virtual void Close();
  bool closed() const { return closed_; }

 protected:
  HashedRelation(TaskMemoryManager* tmm, std::string name) : MemoryConsumer(tmm, std::move(name)) {}

  // ---- build steps shared by the subclasses ----

  /// Records the build's options, row layout and input counts (stats_).
  /// Returns true when the relation is complete already: a null-aware
  /// build that saw a null key is marked all_null_keys() and stores
  /// nothing.
  bool StartBuild(const HashedRelationOptions& options, RowLayout layout, int64_t input_rows, int64_t null_key_rows);
  /// Reserves the pages `est` predicts from the memory manager: the page
  /// charges of index_bytes and row_bytes (est.total_bytes when their sum
  /// overflows), and records est.total_bytes as stats_.estimated_bytes.
  /// `purpose` names the build in the OutOfMemory error.
  Result<MemoryReservation> ReserveForBuild(const RelationSizeEstimate& est, std::string_view purpose);
  /// A page of `bytes` charged to this relation (and to `reservation`
  /// when not null), zero-filled. Errors: OutOfMemory.
  Result<MemoryPage> AllocateZeroedPage(int64_t bytes, MemoryReservation* reservation = nullptr);
  /// Bookkeeping for a non-null-key row about to be put in front of the
  /// chain `head` (nullptr for a new key): counts a new key in
  /// stats_.num_keys, or marks the keys not unique. Returns false (and
  /// changes nothing) when the row repeats a key and
  /// options_.ignore_duplicate_keys says to drop it.
  bool AdmitKeyRow(const uint8_t* head) {
    if (head != nullptr) {
      if (options_.ignore_duplicate_keys) return false;
      keys_unique_ = false;
    } else {
      ++stats_.num_keys;
    }
    return true;
  }
  /// True when indexing one more key would take the sparse `index` past
  /// its growth load (kSparseMaxLoad above; stats_.num_keys keys now).
  bool SparseIndexNeedsGrowth(const TaggedIndex& index) const {
    return static_cast<double>(stats_.num_keys + 1) >
           std::min(0.95, std::max(kSparseMaxLoad, options_.load_factor + 0.1)) * static_cast<double>(index.capacity());
  }
  /// Grows the sparse index `*index` (living in `*page`, `*entries` slots)
  /// to max(ceil((stats_.num_keys + 1) / load_factor), 1.5 x capacity) home
  /// positions in a new zeroed page charged to this relation, re-homing
  /// every entry by `hash_of_row(row)` (the hash Home() was given for the
  /// row's key); then replaces the three and counts stats_.grow_count. On
  /// error nothing changes. Errors: OutOfMemory "<what> of <n> slots
  /// overflows" when the size overflows, or from the memory manager.
  template <typename HashOfRow>
  [[gnu::noinline]] Status GrowSparseIndex(TaggedIndex* index, MemoryPage* page, int64_t* entries,
                                           std::string_view what, HashOfRow hash_of_row) {
    const int64_t min_homes =
        static_cast<int64_t>(std::ceil(static_cast<double>(stats_.num_keys + 1) / options_.load_factor));
    const int64_t homes = std::max<int64_t>(min_homes, index->capacity() + index->capacity() / 2);
    const int64_t slots = TaggedIndex::SlotsFor(homes);
    int64_t bytes;
    if (!CheckedMul<int64_t>(slots, 8, &bytes)) {
      return Status::OutOfMemory(std::string(what) + " of " + std::to_string(slots) + " slots overflows");
    }
    QUIVER_ASSIGN_OR_RETURN(MemoryPage fresh_page, AllocateZeroedPage(bytes));
    TaggedIndex fresh(reinterpret_cast<uint64_t*>(fresh_page.data()), homes);
    for (int64_t i = 0; i < index->length(); ++i) {
      const uint64_t s = index->slots()[i];
      if (s == 0) continue;
      uint64_t p = fresh.Home(hash_of_row(TaggedIndex::RowOf(s)));
      while (fresh.slots()[p] != 0) p = fresh.Next(p);
      fresh.slots()[p] = s;
    }
    *page = std::move(fresh_page);
    *index = fresh;
    *entries = slots;
    ++stats_.grow_count;
    return Status::OK();
  }
  /// Ends a build: the row store forgets `reservation`, which is released
  /// (returning what the build did not use), and stats_ records the row
  /// bytes, the index bytes (index_entries slots of 8 bytes) and the page
  /// bytes charged.
  void FinishBuild(MemoryReservation* reservation, int64_t index_entries);

  // ---- serialization steps shared by the subclasses (relation_serde.h) ----

  /// Serializes the relation: fills the fields of `*h` common to both
  /// kinds (layout options, counts, row bytes, key and stored columns; the
  /// caller sets kind, flags, min/max key and index_entries), then writes
  /// header, rows and h->index_entries index entries, entry i being
  /// entry(i, refs) (refs maps row pointers to serialized refs). Buffer
  /// from `pool`. Errors: Invalid on a closed relation; OutOfMemory when
  /// the size overflows or the allocation fails.
  Result<std::shared_ptr<Buffer>> SerializeWith(
      serde_internal::Header* h, MemoryPool* pool,
      const std::function<uint64_t(int64_t, const serde_internal::RefMap&)>& entry) const;
  /// Deserialization, after validation: takes the layout, the key columns
  /// (also as options_.key_columns), the counts and the unique / all-null
  /// flags of a validated header.
  void AdoptHeader(const serde_internal::Header& h, RowLayout layout, std::vector<int> key_columns);
  /// Deserialization: reserves the page charges of `index_bytes` and
  /// h.row_bytes (OutOfMemory "deserialized relation size overflows" when
  /// their sum overflows; `purpose` names the reservation), then copies
  /// the validated rows region `rows` into one page (LoadRows) adopted by
  /// the row store; `*row_base` receives that page (nullptr when there
  /// are no rows). Errors: OutOfMemory; NotImplemented for a page above
  /// 2^48. The reservation is returned for LoadIndex.
  Result<MemoryReservation> LoadRowsPage(const serde_internal::Header& h, int64_t index_bytes, const uint8_t* rows,
                                         std::string_view purpose, uint8_t** row_base);
  /// Deserialization: when h.index_entries > 0, allocates `*index_page`
  /// (index_bytes, from `reservation`) and fills it from the serialized
  /// entries at `idx`, turning each ref (entry & ref_mask, offset + 1)
  /// into a pointer into `row_base` and keeping the bits outside
  /// ref_mask (tags); empty entries stay 0. Records row, index and page
  /// bytes in stats_. Returns the index slots (nullptr when there are
  /// none). Errors: OutOfMemory.
  Result<uint64_t*> LoadIndex(const serde_internal::Header& h, int64_t index_bytes, const uint8_t* idx,
                              uint64_t ref_mask, uint8_t* row_base, MemoryReservation* reservation,
                              MemoryPage* index_page);

  HashedRelationOptions options_;
  RowLayout layout_;
  RelationStats stats_;
  std::vector<int> key_columns_;
  RowStore rows_;
  bool keys_unique_ = true;
  bool all_null_keys_ = false;
  bool closed_ = false;
};

/// Build options for a join over these schemas: resolves payload columns
/// and checks key indices. Invalid naming the bad index.
Status CheckRelationOptions(const Schema& build_schema, const HashedRelationOptions& options);

/// The payload column list (options.payload_columns or every column).
std::vector<int> PayloadColumns(const Schema& build_schema, const HashedRelationOptions& options);

/// Builds the relation that fits the key types: LongHashedRelation for one
/// key column whose type loads as int64 (and whose probe pair resolved to
/// KeyClass::kInt64), GenericHashedRelation otherwise. `specs` are the
/// resolved key pairs (one per key column).
Result<std::shared_ptr<HashedRelation>> BuildHashedRelation(const Schema& build_schema,
                                                            const std::vector<RecordBatchPtr>& batches,
                                                            const HashedRelationOptions& options,
                                                            const std::vector<KeyColumnSpec>& specs,
                                                            TaskMemoryManager* tmm);

/// Reads a relation written by Serialize (either kind). `build_schema` is
/// the schema the relation was built from (the row layout is checked
/// against it). Every length, offset and pointer in `bytes` is checked:
/// malformed input gives Invalid, never a crash or a hang. Memory from
/// `tmm`, reserved up front.
Result<std::shared_ptr<HashedRelation>> DeserializeHashedRelation(const Schema& build_schema, const Buffer& bytes,
                                                                  TaskMemoryManager* tmm);

}  // namespace quiver::join
